"""Stage 5 in Chromium: the crossover moves the right way with latency; the tree stepper reaches
the exact match, before Python and after a live change."""

from __future__ import annotations

import pytest

from helpers import expect_counter, open_page, step_to_end

SLUG = "latency-ring-vs-tree"


def _crossover(w) -> int:
    return int(w.locator("[data-readout=crossover_exact]").inner_text().split()[0].replace(",", ""))


def test_tree_stepper_reaches_exact_match_without_python(page, server):
    open_page(page, server, SLUG)
    w = page.locator("[data-widget=tree_allreduce]")
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 0 of 8"
    assert "exact match" not in w.locator("[data-role=verdict]").inner_text().lower()
    w.locator("[data-action=next]").click()
    narration = w.locator("[data-role=narration]").inner_text()
    assert "Tree A" in narration and "parent GPU" in narration
    step_to_end(w)
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    assert w.locator("tr.marks td").evaluate_all("els => els.every(e => e.textContent === '✓')")
    page.watch.assert_clean()


def test_changing_the_latency_moves_the_crossover_the_right_way(page, server):
    open_page(page, server, SLUG, live=True)
    w = page.locator("[data-widget=latency]")
    base = _crossover(w)
    lat = w.locator("[data-param=latency_us]")
    lat.fill("2")
    lat.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-widget=latency] [data-param=latency_us]').value"
        " === '2' && !document.querySelector('[data-widget=latency]').hasAttribute('aria-busy')"
    )
    w.locator("[data-readout=crossover_exact]").filter(has_not_text=f"{base:,}").wait_for()
    lower = _crossover(w)
    assert lower < base
    lat.fill("40")
    lat.press("Enter")
    w.locator("[data-readout=crossover_exact]").filter(has_not_text=f"{lower:,}").wait_for()
    assert _crossover(w) > base
    marker = page.evaluate(
        "() => document.querySelector('[data-widget=latency] .chart').data"
        ".find(t => t.name.startsWith('crossover')).x[0]"
    )
    assert marker == pytest.approx(_crossover(w), rel=1e-6)
    lat.fill("0")
    lat.press("Enter")
    w.locator("[data-readout=crossover]", has_text="none").wait_for()
    page.watch.assert_clean()


def test_tree_stepper_recomputes_and_still_matches(page, server):
    open_page(page, server, SLUG, live=True)
    w = page.locator("[data-widget=tree_allreduce]")
    w.locator("[data-param=gpus]").fill("5")
    w.locator("[data-param=gpus]").press("Enter")
    expect_counter(w, "Step 0 of 8")
    w.locator("[data-param=chunks]").fill("1")
    w.locator("[data-param=chunks]").press("Enter")
    expect_counter(w, "Step 0 of 6")
    assert w.locator("tbody tr[data-gpu]").count() == 5
    step_to_end(w)
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    w.locator("[data-param=chunks]").fill("9")
    w.locator("[data-param=chunks]").press("Enter")
    w.locator("[data-error-for=chunks]").wait_for(state="visible")
    page.watch.assert_clean()


def test_steps_chart_marks_the_chosen_count(page, server):
    open_page(page, server, SLUG, live=True)
    w = page.locator("[data-widget=steps]")
    assert w.locator("[data-readout=tree]").inner_text() == "20"
    w.locator("[data-param=gpus]").fill("4096")
    w.locator("[data-param=gpus]").press("Enter")
    w.locator("[data-readout=tree]", has_text="24").wait_for()
    assert w.locator("[data-readout=ring]").inner_text() == "8,190"
    page.watch.assert_clean()
