"""Readouts with a hierarchy, in Chromium: the headline is the first readout a reader sees and
keeps its figure large and its parenthesis apart as Python recomputes it; the calculator's
references are folded; an old link's algorithm (now under "more models") still opens. The oracle
is the widget's function called here on the same parameters."""

from __future__ import annotations

from allreduce_explainer.widgets import cluster, why
from helpers import open_page


def test_a_headline_is_rewritten_whole_with_its_note_apart(page, server):
    open_page(page, server, "why-allreduce", live=True)
    w = page.locator("[data-widget=naive]")
    headline = w.locator(".readouts.headline")
    # first on screen: above the step bar and every other readout
    assert headline.bounding_box()["y"] < w.locator(".stepper-bar").bounding_box()["y"]
    assert headline.bounding_box()["y"] < w.locator("[data-readout=root_sent]").bounding_box()["y"]
    gpus = w.locator("[data-param=gpus]")
    gpus.fill("7")
    gpus.press("Enter")
    want = why.naive({"gpus": 7})["readouts"]["root_received"]  # "144 bytes (6 gradients ...)"
    got = headline.locator("[data-readout=root_received]")
    got.filter(has_text=want).wait_for()
    assert got.inner_text() == want
    figure, note = want.split(" (", 1)
    assert got.locator(".readout-note").inner_text() == f"({note}"
    assert got.evaluate("d => d.firstChild.textContent") == figure + " "
    page.watch.assert_clean()


def test_an_old_link_to_a_model_under_more_models_opens_on_it(page, server):
    """A link made when every model was at the top of the menu (?cluster.algorithm=hierarchical)
    opens on the hierarchical closed form; the answer leads, the references stay folded."""
    page.goto(f"{server}/your-cluster/?cluster.algorithm=hierarchical")
    page.wait_for_selector("html[data-python=ready]", state="attached")
    w = page.locator("[data-widget=cluster]")
    w.locator("[data-readout=algorithm]", has_text="hierarchical").wait_for()
    assert w.locator("[data-param=algorithm]").input_value() == "hierarchical"
    want = cluster.cluster({"algorithm": "hierarchical"})["readouts"]
    for key in ("allreduce", "share_no_overlap", "share_with_overlap"):
        assert w.locator(f".readouts.headline [data-readout={key}]").inner_text() == want[key]
    references = w.locator("details.readouts-folded")
    assert references.evaluate("d => !d.open")
    assert not w.locator("[data-readout=ideal]").is_visible()
    references.locator("summary").click()
    assert w.locator("[data-readout=ideal]").inner_text() == want["ideal"]
    page.watch.assert_clean()
