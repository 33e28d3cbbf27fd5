"""Page 4 in Chromium: the chart and panels render before Python, and recompute through it."""

from __future__ import annotations

import re

from helpers import enter, open_page, open_widget

SLUG = "what-each-gpu-sends"


def test_page_reads_before_python_with_counted_and_formula_series(page, server):
    open_page(page, server, SLUG)
    text = page.locator("main").inner_text()
    assert "1.969" in text and "27.6 GB" in text  # quoted from facts(), not typed
    page.wait_for_function("() => document.querySelector('[data-widget=sends] .chart').data")
    names = page.evaluate(
        "() => document.querySelector('[data-widget=sends] .chart').data.map(t => t.name)"
    )
    keys = {"ring", "ring, counted", "counted (simulation)", "formula (whiteboard model)"}
    assert keys <= set(names)
    w = page.locator("[data-widget=busbw]")
    assert w.locator("[data-readout=busbw]").inner_text() == "370 GB/s"
    assert page.locator("[data-widget=busbw_curve]").count() == 0  # page 5's now
    box = page.locator("aside[data-role=practice]")
    assert "all_reduce_perf -b 8 -e 8G -f 2 -g 8" in box.inner_text()
    assert box.locator("p").first.inner_text() == "Measure it"
    deeper = page.locator("details[data-role=deeper] summary", has_text="passes the link")
    assert deeper.count() == 1
    page.watch.assert_clean()


def test_adding_a_gpu_moves_the_marker_and_the_readout(page, server):
    w = open_widget(page, server, SLUG, "sends")
    marker = "() => document.querySelector('[data-widget=sends] .chart').data.at(-1).x[0]"
    assert page.evaluate(marker) == 64
    assert "63 × S" in w.locator("[data-readout=root]").inner_text()
    w.locator("[data-param-step='gpus:1']").click()
    page.wait_for_function(f"() => ({marker})() === 65")
    assert "64 × S" in w.locator("[data-readout=root]").inner_text()
    assert "counted up to 64" in w.locator("[data-readout=ring_counted]").inner_text()
    page.watch.assert_clean()


def test_busbw_changes_with_gpus_while_algbw_stays(page, server):
    w = open_widget(page, server, SLUG, "busbw")
    algbw = w.locator("[data-readout=algbw]").inner_text()
    enter(w, "gpus", "2")
    w.locator("[data-readout=busbw]", has_text=algbw).wait_for()  # factor 1
    assert w.locator("[data-readout=algbw]").inner_text() == algbw
    w.locator("[data-param=collective]").select_option("allgather")
    w.locator("[data-readout=factor]", has_text="(n−1)/n").wait_for()
    page.watch.assert_clean()


def test_pasted_line_is_read_checked_and_bad_lines_are_refused(page, server):
    w = open_widget(page, server, SLUG, "nccl_line")
    box = w.locator("[data-param=line]")
    box.fill(
        "[0]   33554432   8388608   float   sum   195.40  171.72  300.51  N/A"
        "   195.40  171.73  300.52  N/A"
    )
    enter(w, "gpus", "8")  # blur the text box: its change event fires
    w.locator("[data-readout=col_root]", has_text="no root column").wait_for()
    # the line's answer may come before the GPU count's: wait for the count's too
    w.locator("[data-readout=oop_check]", has_text=re.compile(r"^agrees")).wait_for()
    assert w.locator("[data-readout=oop_wrong]").inner_text().startswith("N/A")
    enter(w, "gpus", "4")
    w.locator("[data-readout=oop_check]", has_text="busbw does not").wait_for()
    box.fill("hello world")
    box.press("Tab")
    err = w.locator("[data-error-for=line]")
    err.wait_for(state="visible")
    assert re.search(r"cannot read it", err.inner_text())
    page.watch.assert_clean()
