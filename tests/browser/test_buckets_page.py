"""Stage 7 in Chromium: the DDP timeline and sweep render, and recompute live."""

import re

from allreduce_explainer.widgets import buckets
from helpers import computed_not_typed, enter, open_page, open_widget, refused

CHART = "document.querySelector('[data-widget=ddp_buckets] [data-role=chart]:not([data-figure])')"
SWEEP = "document.querySelector('[data-widget=ddp_buckets] [data-figure=sweep][data-role=chart]')"


def test_timeline_and_sweep_draw_without_python(page, server):
    open_page(page, server, "ddp-buckets")
    w = page.locator("[data-widget=ddp_buckets]")
    page.wait_for_function(f"() => {CHART}.data && {SWEEP}.data")
    # the backward lane's two traces (odd and even buckets): four corners per bucket, no gaps
    boxes = "d => d.slice(0, 2).reduce((n, t) => n + t.x.length / 4, 0)"
    assert page.evaluate(f"() => ({boxes})({CHART}.data)") == int(
        w.locator("[data-readout=buckets]").inner_text()
    )
    assert "exposed" in w.locator("[data-role=chart-summary]").first.inner_text()
    assert w.locator("[data-readout=best]").inner_text().endswith("MiB")
    page.watch.assert_clean()


def test_changing_model_and_cap_recomputes(page, server):
    w = open_widget(page, server, "ddp-buckets", "ddp_buckets")
    w.locator("[data-param=model]").select_option("resnet50")
    w.locator("[data-readout=model]", has_text="ResNet-50").wait_for()
    assert "25,557,032" in w.locator("[data-readout=model]").inner_text()
    assert w.locator("[data-param=batch]").input_value() == "64"
    buckets = w.locator("[data-readout=buckets]").inner_text()
    enter(w, "bucket_cap_mb", "1")
    page.wait_for_function(f"() => {SWEEP}.data[3].x[0] === 1")
    assert w.locator("[data-readout=buckets]").inner_text() != buckets
    page.watch.assert_clean()


def test_two_servers_expose_more_with_tiny_buckets(page, server):
    w = open_widget(page, server, "ddp-buckets", "ddp_buckets")
    enter(w, "gpus", "16")
    w.locator("[data-readout=algorithm]", has_text="NVLSTree").wait_for()
    first = page.evaluate(f"() => {SWEEP}.data[0].y[0]")
    best = page.evaluate(f"() => {SWEEP}.data[1].y[0]")
    assert first > best
    page.watch.assert_clean()


def test_bad_cap_is_shown_next_to_its_control(page, server):
    w = open_widget(page, server, "ddp-buckets", "ddp_buckets")
    assert "greater than 0" in refused(w, "bucket_cap_mb", "0")
    page.watch.assert_clean()


def test_stage7_numbers_are_computed_not_typed(page, server):
    typed = ("124,439,808", "25,557,032", "475 MiB")
    shown = ("124,439,808", "25,557,032", "109,482,240", "475 MiB")
    computed_not_typed(page, server, "ddp-buckets", typed, shown)
    # one unit for the page's times: milliseconds, never "0.011 s" beside "2.1 ms"
    prose = page.locator("article > p").all_inner_texts()
    assert [p for p in prose if re.search(r"\d s\b", p)] == []
    readouts = page.locator("[data-widget=ddp_buckets] [data-readout]").all_inner_texts()
    assert [r for r in readouts if re.search(r"\d s$", r)] == []
    assert "ms" in page.locator("[data-readout=backward]").inner_text()


def test_first_bucket_choice_follows_the_cap(page, server):
    w = open_widget(page, server, "ddp-buckets", "ddp_buckets")
    assert w.locator("[data-readout=first]").inner_text() == "1 MiB"
    w.locator("[data-param=first_bucket]").select_option("cap")
    w.locator("[data-readout=first]", has_text="25 MiB").wait_for()
    enter(w, "bucket_cap_mb", "5")
    w.locator("[data-readout=first]", has_text="5 MiB").wait_for()
    page.watch.assert_clean()


def test_llama_405b_draws_its_lanes_in_few_paths_and_folds_its_884_rows(page, server):
    """At 884 buckets: five traces (two fill-only ones for each box lane, the exposed line),
    drawn as a few dozen SVG paths rather than one per box, and the table shows the 20 rows
    Python sent with a "show all" toggle that asks Python for every one (the last row is bucket
    884, as Python formats it) and folds them again, the focus staying on the toggle."""

    w = open_widget(page, server, "ddp-buckets", "ddp_buckets")
    w.locator("[data-param=model]").select_option("llama3-405b")
    w.locator("[data-readout=buckets]", has_text="884").wait_for()
    page.wait_for_function(f"() => {CHART}.data.length === 5")
    assert page.evaluate(f"() => {CHART}.querySelectorAll('path').length") < 100
    details = w.locator("details.chart-data").first
    details.locator("summary").click()
    rows = details.locator("tbody tr")
    assert rows.count() == 20
    toggle = details.locator("[data-action=show-all]")
    assert toggle.inner_text() == "Show all 884 rows"
    toggle.click()
    details.locator("[data-action=show-all][aria-expanded=true]").wait_for()
    last = buckets.ddp_buckets({"model": "llama3-405b", "rows": "all"})["table"]["rows"][-1]
    assert rows.count() == 884
    assert rows.last.locator("td").all_inner_texts() == [str(x) for x in last]
    assert toggle.evaluate("b => b === document.activeElement")
    toggle.click()
    details.locator("[data-action=show-all][aria-expanded=false]").wait_for()
    assert rows.count() == 20 and toggle.evaluate("b => b === document.activeElement")
    page.watch.assert_clean()


def test_the_card_is_asked_in_gbit_and_python_converts_it(page, server):
    """Issue 46: page 7 asks the card as page 8 does, 400 Gb/s (the 50 GB/s it showed
    before); typing 100 gives what Python computes for a 100 Gb/s card."""
    w = open_widget(page, server, "ddp-buckets", "ddp_buckets")
    label = w.locator("label[for$=-nic_gbps]").inner_text()
    assert "Gb/s" in label and "GB/s" not in label
    assert w.locator("[data-param=nic_gbps]").input_value() == "400"
    want = buckets.ddp_buckets({"nic_gbps": 100})["readouts"]
    assert want["allreduce"] != buckets.ddp_buckets()["readouts"]["allreduce"]
    enter(w, "nic_gbps", "100")
    w.locator("[data-readout=allreduce]", has_text=want["allreduce"]).wait_for()
    assert w.locator("[data-readout=exposed]").inner_text() == want["exposed"]
    page.watch.assert_clean()
