"""Predict first, in Chromium: stage 2's ring stepper, stage 5's ring-against-tree chart,
stage 7's bucket sweep (and the prose under it that gives the answer), and the main widgets of
stages 3, 6, 8 and 9 keep their answer out of reach until the reader predicts or skips; the
verdicts are Python's (the same judge the core tests hold against numpy and brute force);
`predict=0` shows everything at once; an answer is remembered for the page in the session; the
`ae:predicted` event carries {widget, id, answer, correct}; axe passes light and dark."""

from __future__ import annotations

import numpy as np

from allreduce_explainer.widgets import REGISTRY, buckets, innetwork, latency, ring, servers, shards
from helpers import PY_READY, axe_violations, expect_counter, step_to_end

RING, LATENCY, BUCKETS = "ring-reduce-scatter", "latency-ring-vs-tree", "ddp-buckets"
LISTEN = """() => { window.predicted = [];
  document.addEventListener("ae:predicted", e => window.predicted.push(e.detail)); }"""
HIDDEN = "w => w.querySelectorAll('.predict-hidden').length"


def _open(page, server, slug: str, query: str = "", live: bool = False):
    page.goto(f"{server}/{slug}/{query}")
    page.evaluate(LISTEN)
    if live:
        page.wait_for_selector(PY_READY, state="attached")


def _ring_answer() -> int:
    """GPU 2's first cell of the chunk it receives in step 2, summed here along the ring."""
    s = ring.ring_reduce_scatter()
    x = np.array(s["inputs"])
    chunk = (2 - 1 - 2) % 4  # GPU g receives chunk (g - 1 - s) mod n in step s
    return int(x[[2, 1, 0], 2 * chunk].sum())


def _predict(w, answer: str):
    w.locator("[data-role=predict-answer]").fill(answer)
    w.locator("[data-action=predict]").click()


def test_ring_stepper_waits_for_the_prediction_then_shows_pythons_verdict(page, server):
    _open(page, server, RING)
    w = page.locator("[data-widget=ring_reduce_scatter]")
    form = w.locator("[data-role=predict]")
    assert form.is_visible()
    question = w.locator("[data-role=predict-question]").inner_text()
    assert question == ring.ring_reduce_scatter()["prediction"]["question"]
    w.locator("[data-action=next]").click()
    expect_counter(w, "Step 1 of 3")
    assert w.locator("[data-action=next]").is_disabled()  # step 2 waits for the prediction
    w.press("End")
    expect_counter(w, "Step 1 of 3")
    _predict(w, "8")  # GPU 2's own number: a misconception, checked once Python is ready
    verdict = w.locator("[data-role=predict-verdict][data-correct=false]")
    verdict.wait_for()
    assert verdict.inner_text() == ring.predict_reduce_scatter(None, "8")["message"]
    assert page.evaluate("window.predicted") == [
        {"widget": "ring_reduce_scatter", "id": "ring-after-step-2", "answer": "8",
         "correct": False}
    ]  # fmt: skip
    step_to_end(w)
    assert w.locator("[data-role=predict-row]").is_hidden()
    page.watch.assert_clean()


def test_a_right_answer_and_an_unreadable_one(page, server):
    _open(page, server, RING, live=True)
    w = page.locator("[data-widget=ring_reduce_scatter]")
    _predict(w, "ten")  # not yet a prediction: Python says why, the steps stay locked
    verdict = w.locator("[data-role=predict-verdict]")
    verdict.filter(has_text="could not read").wait_for()
    assert w.locator("[data-role=predict-answer]").get_attribute("aria-invalid") == "true"
    assert page.evaluate("window.predicted") == []
    want = str(_ring_answer())
    _predict(w, want)
    w.locator("[data-role=predict-verdict][data-correct=true]").wait_for()
    assert verdict.inner_text() == ring.predict_reduce_scatter(None, want)["message"]
    assert page.evaluate("window.predicted")[0]["correct"] is True
    page.watch.assert_clean()


def test_latency_chart_is_blurred_until_skip_and_skip_fires_the_event(page, server):
    _open(page, server, LATENCY)
    w = page.locator("[data-widget=latency]")
    chart = w.locator("[data-role=chart]:not([data-figure])")
    assert "predict-hidden" in chart.get_attribute("class")
    assert chart.evaluate("e => e.inert") is True
    assert w.locator("[data-readout=crossover_nccl]").evaluate("e => e.inert") is True
    assert w.locator("[data-readout=nccl_pick_8gib]").evaluate("e => e.inert") is False
    assert w.locator("[data-param=gpus]").is_editable()  # everything else usable
    w.locator("[data-action=predict-skip]").click()
    assert w.evaluate(HIDDEN) == 0
    assert page.evaluate("window.predicted") == [
        {"widget": "latency", "id": "latency-crossover", "answer": None, "correct": None}
    ]
    page.watch.assert_clean()


def test_latency_verdict_is_pythons(page, server):
    _open(page, server, LATENCY, live=True)
    w = page.locator("[data-widget=latency]")
    _predict(w, "1 MB")
    w.locator("[data-role=predict-verdict][data-correct=false]").wait_for()
    text = w.locator("[data-role=predict-verdict]").inner_text()
    assert text == latency.predict_latency(None, "1 MB")["message"]
    assert w.evaluate(HIDDEN) == 0
    page.watch.assert_clean()


def test_buckets_sweep_waits_and_the_answer_is_kept_for_the_session(page, server):
    _open(page, server, BUCKETS, live=True)
    w = page.locator("[data-widget=ddp_buckets]")
    assert w.locator("[data-readout=best]").evaluate("e => e.inert") is True
    assert w.locator("[data-role=chart][data-figure=sweep]").evaluate("e => e.inert") is True
    _predict(w, "25")
    w.locator("[data-role=predict-verdict][data-correct=false]").wait_for()
    text = w.locator("[data-role=predict-verdict]").inner_text()
    assert text == buckets.predict_buckets(None, "25")["message"]
    assert w.evaluate(HIDDEN) == 0
    assert page.locator("[data-hidden-until=buckets-best-cap]").evaluate("e => e.inert") is False
    page.reload()
    w.locator("[data-readout=best]").wait_for()
    assert w.locator("[data-role=predict]").is_hidden() and w.evaluate(HIDDEN) == 0
    page.watch.assert_clean()


def test_predict_0_and_projector_mode_show_everything_at_once(page, server):
    for slug, name, query in ((RING, "ring_reduce_scatter", "?predict=0"),
                              (BUCKETS, "ddp_buckets", "?predict=0"),
                              (LATENCY, "latency", "?present=1&widget=latency")):  # fmt: skip
        _open(page, server, slug, query)
        w = page.locator(f"[data-widget={name}]")
        assert w.locator("[data-role=predict]").is_hidden()
        assert w.evaluate(HIDDEN) == 0
    page.goto(f"{server}/{RING}/?predict=0")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    for _ in range(3):  # no skip: every step is in reach
        w.locator("[data-action=next]").click()
    expect_counter(w, "Step 3 of 3")
    page.watch.assert_clean()


def test_axe_with_the_predictions_open_and_answered(browser, server):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    for scheme in ("light", "dark"):
        ctx = browser.new_context(color_scheme=scheme)
        page = ctx.new_page()
        for slug in (RING, LATENCY, BUCKETS, *(n[0] for n in NEW)):
            page.goto(f"{server}/{slug}/")
            page.wait_for_selector(PY_READY, state="attached")
            assert axe_violations(axe, page) == [], (slug, scheme, "open")
            w = page.locator("[data-role=predict]").first
            w.locator("[data-role=predict-answer]").fill("1")
            w.locator("[data-action=predict]").click()
            w.locator("[data-role=predict-verdict][data-correct]").wait_for()
            assert axe_violations(axe, page) == [], (slug, scheme, "answered")
        ctx.close()


def test_buckets_prose_below_is_blurred_until_the_reader_commits(page, server):
    """Page 7's paragraph that names the best cap and the default's loss waits with the sweep."""
    _open(page, server, BUCKETS, live=True)
    prose = page.locator("[data-hidden-until=buckets-best-cap]")
    assert "predict-hidden" in prose.get_attribute("class") and prose.evaluate("e => e.inert")
    w = page.locator("[data-widget=ddp_buckets]")
    _predict(w, "above")
    w.locator("[data-role=predict-verdict][data-correct]").wait_for()
    text = w.locator("[data-role=predict-verdict]").inner_text()
    assert text == buckets.predict_buckets(None, "above")["message"]
    assert prose.evaluate("e => e.inert") is False
    assert "predict-hidden" not in (prose.get_attribute("class") or "")
    page.watch.assert_clean()


# the four pages that gained a prediction: (page, widget, what it hides, an answer, its judge)
NEW = [
    ("ring-all-gather", "ring_all_gather", "[data-readout=sent]", "32", ring.predict_all_gather),
    ("across-servers", "servers_compare", "[data-readout=ring_time]", "8",
     servers.predict_compare),
    ("sharded-data-parallel", "shard_memory", "[data-readout=ratio]", "1",
     shards.predict_memory),
    ("in-network-reduction", "innetwork_bandwidth", "[data-readout=nvls_link]", "15 GB",
     innetwork.predict_bandwidth),
]  # fmt: skip


def test_the_new_predictions_hide_their_answer_and_show_pythons_verdict(page, server):
    for slug, name, hidden, answer, judge in NEW:
        _open(page, server, slug, live=True)
        w = page.locator(f"[data-widget={name}]")
        assert w.locator("[data-role=predict]").is_visible(), slug
        question = w.locator("[data-role=predict-question]").inner_text()
        assert question == REGISTRY[name].function()["prediction"]["question"]
        assert w.locator(hidden).evaluate("e => e.inert") is True, slug
        if name == "ring_all_gather":  # the stepper stays at its start
            assert w.locator("[data-action=next]").is_disabled()
        _predict(w, answer)
        w.locator("[data-role=predict-verdict][data-correct]").wait_for()
        verdict = w.locator("[data-role=predict-verdict]")
        want = judge(None, answer)
        assert verdict.inner_text() == want["message"], slug
        assert verdict.get_attribute("data-correct") == str(want["correct"]).lower()
        assert w.evaluate(HIDDEN) == 0 and w.locator(hidden).evaluate("e => e.inert") is False
        ids = [e["id"] for e in page.evaluate("window.predicted")]
        assert ids == [REGISTRY[name].function()["prediction"]["id"]]
    page.watch.assert_clean()
