"""The stepper runs the reader's ring order, in Chromium: stage 10 reads the p5
log's channel 0 ring, its link opens stage 2's stepper on that ring (the readout names it, the
diagram's GPUs go round in it, each step's arrows are its hops), the all-gather on the same ring
ends in the exact match; no serious axe violation and no sideways scroll at 360 px."""

from __future__ import annotations

from pathlib import Path

from helpers import PY_READY, axe_violations, open_page, step_to_end

P5 = Path(__file__).parents[1] / "data" / "nccl-debug" / "aws-p5-2x8xh100-efa-nccl-2.22.3.log"
RING = [0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14, 15, 8]  # the log's `Channel 00/16 :` line
ARROW = " → ".join(map(str, [*RING, RING[0]]))


def _link(page, server) -> str:
    open_page(page, server, "your-cluster", live=True)
    w = page.locator("[data-widget=cluster]")
    box = w.locator("[data-param=log]")
    box.fill(P5.read_text())
    box.press("Tab")
    link = w.locator("[data-role=debug-step-link]")
    link.wait_for()
    assert "page 2" in link.inner_text()
    return link


def _drawn_order(page, name: str) -> list[int]:
    return page.evaluate(
        f"() => [...document.querySelectorAll('[data-widget={name}] svg.diagram .node')]"
        ".map(g => Number(g.dataset.gpu))"
    )


def test_stage_10_s_link_runs_the_log_s_ring_on_stage_2(page, server):
    _link(page, server).click()
    page.wait_for_url("**/ring-reduce-scatter/**")
    page.wait_for_selector(PY_READY, state="attached")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    w.locator("[data-readout=ring]", has_text=ARROW).wait_for()
    assert "given order" in w.locator("[data-readout=ring]").inner_text()
    assert w.locator("tbody tr[data-gpu]").count() == 16
    assert _drawn_order(page, "ring_reduce_scatter") == RING
    w.locator("[data-action=next]").click()
    label = page.evaluate(
        "() => [...document.querySelectorAll('[data-widget=ring_reduce_scatter] "
        "svg.diagram .arrow')].length"
    )
    assert label == 16  # one chunk per GPU: every hop of the ring carries one
    step_to_end(w)
    assert "GPU 7 owns chunk 1" in w.inner_text()  # position 1 of the ring owns chunk 1
    page.watch.assert_clean()


def test_the_all_gather_on_that_ring_ends_in_the_exact_match(page, server):
    order = ",".join(map(str, RING))
    page.goto(
        f"{server}/ring-all-gather/?ring_all_gather.gpus=16&ring_all_gather.length=16"
        f"&ring_all_gather.order={order}"
    )
    page.wait_for_selector(PY_READY, state="attached")
    w = page.locator("[data-widget=ring_all_gather]")
    w.locator("[data-readout=ring]", has_text=ARROW).wait_for()
    assert _drawn_order(page, "ring_all_gather") == RING
    step_to_end(w)
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    page.watch.assert_clean()


def test_a_bad_order_in_a_link_names_the_field(page, server):
    page.goto(f"{server}/ring-reduce-scatter/?ring_reduce_scatter.order=0,1,1,3")
    page.wait_for_selector(PY_READY, state="attached")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    w.locator("[data-error-for]", has_text="order").first.wait_for()


def test_the_link_and_the_custom_ring_are_accessible_and_fit_360px(browser, server):
    from axe_playwright_python.sync_playwright import Axe  # only when a page is checked

    axe = Axe()
    for scheme, width in (("light", 1280), ("dark", 360)):
        ctx = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": 900})
        page = ctx.new_page()
        _link(page, server).click()
        page.wait_for_url("**/ring-reduce-scatter/**")
        page.wait_for_selector(PY_READY, state="attached")
        w = page.locator("[data-widget=ring_reduce_scatter]")
        w.locator("[data-readout=ring]", has_text=ARROW).wait_for()
        assert axe_violations(axe, page) == []
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        ctx.close()
