"""The site in Chromium: pages load clean, steppers reach their end, controls recompute live."""

from __future__ import annotations

import pytest

from helpers import (
    PY_READY,
    computed_not_typed,
    enter,
    expect_counter,
    open_page,
    open_widget,
    refused,
    skip_prediction,
    step_to_end,
)
from screenshots import pages


def test_every_page_loads_clean_and_python_gets_ready(page, server, site):
    for path in pages(site):
        page.goto(f"{server}/{path}")
        if page.locator("html[data-python]").count():
            page.wait_for_selector("html:not([data-python=loading])", state="attached")
            assert page.locator("html").get_attribute("data-python") == "ready", path
        page.watch.assert_clean()


def test_python_starts_from_the_snapshot_and_fetches_the_stdlib_only_when_asked(page, server):
    """The 4 MB standard library and the core's zip stay on the server until Python imports a
    module that the snapshot does not hold; then each is fetched once and the import works."""
    asked = []
    page.on("request", lambda r: asked.append(r.url.rsplit("/", 1)[-1]))
    open_page(page, server, "your-cluster", live=True)
    assert any(a.startswith("snapshot-") for a in asked), asked
    assert not any(a.startswith(("stdlib-", "core-")) for a in asked), asked
    python = page.workers[0]
    hsv = python.evaluate(
        "() => self.pyodide.runPython('import colorsys; colorsys.rgb_to_hsv(0.2, 0.4, 0.4)').toJs()"
    )
    assert hsv == [0.5, 0.5, 0.4]
    assert sum(a.startswith("stdlib-") for a in asked) == 1, asked
    # so is the core's zip, for a module of the core no page imports
    ok = python.evaluate(
        "() => self.pyodide.runPython('from allreduce_explainer import selfcheck; "
        "selfcheck.__name__')"
    )
    assert ok == "allreduce_explainer.selfcheck"
    assert sum(a.startswith("core-") for a in asked) == 1, asked
    page.watch.assert_clean()


def test_stage2_stepper_reaches_owned_chunks_without_python(page, server):
    open_page(page, server, "ring-reduce-scatter")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 0 of 3"
    assert w.locator("[data-action=prev]").is_disabled()
    step_to_end(w)
    assert w.locator("[data-action=next]").is_disabled()
    assert "owns the complete sum" in w.locator("[data-role=narration]").inner_text()
    # every GPU row holds complete cells (its own chunk)
    for i in range(4):
        assert w.locator(f"tr[data-gpu='{i}'] td.complete").count() >= 1
    page.watch.assert_clean()


def test_stage3_stepper_reaches_exact_match(page, server):
    open_page(page, server, "ring-all-gather")
    w = page.locator("[data-widget=ring_all_gather]")
    assert "exact match" not in w.locator("[data-role=verdict]").inner_text().lower()
    step_to_end(w)
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    page.watch.assert_clean()


def test_keyboard_steps_with_arrows_and_space(page, server):
    open_page(page, server, "ring-reduce-scatter")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    skip_prediction(w)
    w.locator("[data-role=grid]").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 2 of 3"
    page.keyboard.press("ArrowLeft")
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 1 of 3"


@pytest.mark.parametrize(
    ("slug", "name"),
    [("ring-reduce-scatter", "ring_reduce_scatter"), ("ring-all-gather", "ring_all_gather")],
)
def test_seven_gpus_ten_numbers_recompute_and_match(page, server, slug, name):
    open_page(page, server, slug, live=True)
    w = page.locator(f"[data-widget={name}]")
    enter(w, "gpus", "7")
    expect_counter(w, "Step 0 of 6")
    enter(w, "length", "10")
    # the GPU change alone already gives 7 column groups: wait for the length's (10 over 7)
    page.wait_for_function(
        f"() => [...document.querySelectorAll('[data-widget={name}] thead th[colspan]')]"
        ".map(e => e.getAttribute('colspan')).join() === '2,2,2,1,1,1,1'"
    )
    assert w.locator("tbody tr[data-gpu]").count() == 7
    spans = [
        int(x)
        for x in w.locator("thead th[colspan]").evaluate_all(
            "els => els.map(e => e.getAttribute('colspan'))"
        )
    ]
    assert spans == [2, 2, 2, 1, 1, 1, 1]  # 10 over 7: leftovers to the first chunks
    step_to_end(w)
    if name == "ring_all_gather":
        assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
        assert w.locator("tr.marks td").evaluate_all("els => els.every(e => e.textContent === '✓')")
    page.watch.assert_clean()


def test_bad_value_is_shown_next_to_its_control_and_recovers(page, server):
    w = open_widget(page, server, "ring-reduce-scatter", "ring_reduce_scatter")
    assert "between 2 and 16" in refused(w, "gpus", "40")
    assert w.locator("tbody tr[data-gpu]").count() == 4  # the last good state stays
    enter(w, "gpus", "5")
    expect_counter(w, "Step 0 of 4")
    assert w.locator("[data-error-for=gpus]").inner_text() == ""
    page.watch.assert_clean()


def test_editing_a_cell_recomputes(page, server):
    open_page(page, server, "ring-all-gather", live=True)
    page.goto(f"{server}/ring-reduce-scatter/")
    page.wait_for_selector(PY_READY, state="attached")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    cell = w.locator("tr[data-gpu='0'] td input").first
    cell.fill("1000")
    cell.press("Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('tr.extra td')]"
        ".some(td => Number(td.textContent.replace('−', '-')) > 900)"
    )
    page.watch.assert_clean()


def test_stage1_numbers_are_computed_not_typed(page, server):
    typed, shown = ("0.44", "31.8", "0.55"), ("0.44 s", "31.8 s", "0.55 s")
    computed_not_typed(page, server, "why-allreduce", typed, shown, where="main")


def test_stage1_chart_changes_when_gpus_are_added(page, server):
    w = open_widget(page, server, "why-allreduce", "scaling")
    marker = "() => document.querySelector('[data-widget=scaling] .chart').data[2].x[0]"
    assert page.evaluate(marker) == 64
    before = w.locator("[data-readout=naive]").inner_text()
    w.locator("[data-param-step='gpus:8']").click()
    page.wait_for_function(f"() => ({marker})() === 72")
    assert w.locator("[data-readout=naive]").inner_text() != before
    page.watch.assert_clean()


def test_every_control_has_a_visible_label(page, server, site):
    for path in pages(site):
        page.goto(f"{server}/{path}")
        for control in page.locator("[data-param]").all():
            if not control.is_visible():
                continue  # a hidden store (stage 8's opened file) is no control for the reader
            cid = control.get_attribute("id")
            label = page.locator(f"label[for='{cid}']")
            assert label.count() == 1 and label.is_visible(), cid


def test_quick_successive_changes_all_count(page, server):
    """A change made while the previous one is still computing keeps the previous one."""
    w = open_widget(page, server, "ring-reduce-scatter", "ring_reduce_scatter")
    enter(w, "gpus", "7")
    enter(w, "length", "10")
    w.locator("[data-param=dtype]").select_option("bf16")
    page.wait_for_function(
        "() => document.querySelectorAll("
        "'[data-widget=ring_reduce_scatter] thead th[colspan]').length === 7"
    )
    page.wait_for_function(
        "() => !document.querySelector("
        "'[data-widget=ring_reduce_scatter]').hasAttribute('aria-busy')"
    )
    assert w.locator("tbody tr[data-gpu]").count() == 7
    assert w.locator("tr[data-gpu='0'] td.cell").count() == 10
    assert w.locator("[data-param=dtype]").input_value() == "bf16"
    page.watch.assert_clean()
