"""Page 10 in Chromium with a NCCL_DEBUG=INFO log pasted: the topology read, the
findings with their evidence, channel 0's ring drawn on the servers (and its tree on request),
each table row naming NCCL's choice, bands on the busbw chart, the topology applied to
the calculator; no serious axe violation and no sideways scroll at 360 px."""

from __future__ import annotations

from pathlib import Path

from helpers import axe_violations, open_page

SLUG = "your-cluster"
P5 = Path(__file__).parents[1] / "data" / "nccl-debug" / "aws-p5-2x8xh100-efa-nccl-2.22.3.log"


def _paste(page, server, **ctx):
    open_page(page, server, SLUG, live=True)
    w = page.locator("[data-widget=cluster]")
    box = w.locator("[data-param=log]")
    box.fill(P5.read_text())
    box.press("Tab")
    w.locator("[data-readout=log_debug]", has_text="NCCL 2.22.3").wait_for()
    return w


def test_a_debug_log_is_read_drawn_and_applied(page, server):
    w = _paste(page, server)
    debug = w.locator("[data-readout=log_debug]").inner_text()
    assert "16 ranks on 2 server(s) of 8" in debug and "NVLS on" in debug
    found = w.locator("[data-readout=log_findings]").inner_text()
    assert "evidence:" in found and "CollNet is off" in found
    svg = w.locator("[data-role=debug-diagram]")
    svg.locator(".arrow").first.wait_for()
    assert svg.locator(".node").count() == 16 and svg.locator(".arrow").count() == 16
    assert "GPU 0 → GPU 7" in svg.get_attribute("aria-label")
    # the tree of channel 0: 15 links, parent to child
    w.locator("[data-param=debug_view]").select_option("tree")
    page.wait_for_function(
        "() => document.querySelector('[data-role=debug-diagram]').getAttribute('aria-label')"
        '.includes("tree")'
    )
    assert svg.locator(".arrow").count() == 15
    # each row of the table names NCCL's choice; bands behind the busbw chart
    rows = page.evaluate(
        "() => [...document.querySelectorAll('.cluster table')].map(t => t.textContent)"
    )
    assert any("NVLSTree/Simple" in t for t in rows)
    shapes = page.evaluate(
        "() => document.querySelector('[data-widget=cluster] [data-figure=busbw]').layout.shapes"
    )
    assert shapes and any(s["label"]["text"] == "NVLSTree/Simple" for s in shapes)
    # the topology fills the calculator
    w.locator("[data-action=use-topology]").click()
    w.locator("[data-readout=cluster]", has_text="16 × H100").wait_for()
    page.watch.assert_clean()


def test_the_debug_view_is_accessible_and_fits_360px(browser, server):
    from axe_playwright_python.sync_playwright import Axe  # only when a page is checked

    axe = Axe()
    for scheme, width in (("light", 1280), ("dark", 360)):
        ctx = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": 900})
        page = ctx.new_page()
        _paste(page, server)
        page.locator("[data-role=debug-diagram] .arrow").first.wait_for()
        assert axe_violations(axe, page) == []
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        ctx.close()
