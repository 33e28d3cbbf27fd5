"""Reader experience on every page: shareable URLs, embeds, themes, accessibility, phones, print."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from axe_playwright_python.sync_playwright import Axe

from helpers import PY_READY, axe_violations, expect_counter, expect_url, open_page, skip_prediction
from screenshots import pages


def live_pages(site) -> list[str]:
    return [
        p for p in pages(site) if "data-python" in (site / p.strip("/") / "index.html").read_text()
    ]


def test_url_state_round_trips_through_reload_and_back(page, server):
    open_page(page, server, "ring-reduce-scatter", live=True)
    w = page.locator("[data-widget=ring_reduce_scatter]")
    skip_prediction(w)
    w.locator("[data-param=gpus]").fill("7")
    w.locator("[data-param=gpus]").press("Enter")
    expect_counter(w, "Step 0 of 6")
    w.locator("[data-param=dtype]").select_option("fp32")
    page.wait_for_function(
        "() => !document.querySelector("
        "'[data-widget=ring_reduce_scatter]').hasAttribute('aria-busy')"
    )
    w.locator("[data-action=next]").click()
    w.locator("[data-action=next]").click()
    expect_url(page, "ring_reduce_scatter.gpus=7", "ring_reduce_scatter.step=2")
    shown = w.locator("[data-role=grid]").inner_text()
    page.reload()
    page.wait_for_selector(PY_READY, state="attached")
    expect_counter(w, "Step 2 of 6")
    assert w.locator("[data-param=dtype]").input_value() == "fp32"
    assert w.locator("[data-role=grid]").inner_text() == shown
    # back walks through parameter changes (dtype, then GPU count), not through every step
    page.go_back()
    expect_counter(w, "Step 0 of 6")
    assert w.locator("[data-param=dtype]").input_value() == "int"
    page.go_back()
    expect_counter(w, "Step 0 of 3")
    page.watch.assert_clean()


def test_crafted_link_opens_that_state(page, server):
    page.goto(
        f"{server}/ring-all-gather/?ring_all_gather.gpus=5&ring_all_gather.length=11"
        "&ring_all_gather.step=4"
    )
    w = page.locator("[data-widget=ring_all_gather]")
    expect_counter(w, "Step 4 of 4")
    assert w.locator("tbody tr[data-gpu]").count() == 5
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    # a step alone needs no Python: it is applied at once
    page.goto(f"{server}/ring-reduce-scatter/?ring_reduce_scatter.step=2")
    expect_counter(page.locator("[data-widget=ring_reduce_scatter]"), "Step 2 of 3")
    page.watch.assert_clean()


def test_hostile_url_values_are_data(page, server):
    payload = "<img src=x onerror=window.__pwned=1>"
    page.goto(
        f"{server}/ring-reduce-scatter/?ring_reduce_scatter.gpus={payload}"
        f"&ring_reduce_scatter.dtype=%3Cscript%3Ewindow.__pwned%3D1%3C/script%3E"
    )
    page.wait_for_selector(PY_READY, state="attached")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    # both values are refused; the message stands next to the first control the spec checks
    w.locator("[data-error-for=gpus]").wait_for(state="visible")
    assert "must be a number" in w.locator("[data-error-for=gpus]").inner_text()
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0
    assert w.locator("tbody tr[data-gpu]").count() == 4  # the default state stays


def test_copy_link_and_embed_code(page, server):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_page(page, server, "why-allreduce", live=True)
    w = page.locator("[data-widget=scaling]")
    w.locator("[data-param-step='gpus:8']").click()
    w.locator("[data-readout=naive]", has_text="36.3").wait_for()
    w.locator("[data-action=copy-link]").click()
    link = page.evaluate("() => navigator.clipboard.readText()")
    assert link.endswith("/why-allreduce/?scaling.gpus=72#w-scaling")
    w.locator("[data-action=copy-embed]").click()
    code = page.evaluate("() => navigator.clipboard.readText()")
    assert code.startswith('<iframe src="http://127.0.0.1')
    assert "/embed/scaling/?scaling.gpus=72" in code
    assert 'allow="clipboard-write"' in code and 'title="' in code and 'height="' in code


def test_copy_falls_back_to_selected_text_without_clipboard(page, server):
    open_page(page, server, "ring-reduce-scatter")
    page.evaluate("() => Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    w.locator("[data-action=copy-link]").click()
    box = w.locator(".widget-tools textarea")
    assert box.is_visible() and "ring-reduce-scatter" in box.input_value()
    assert page.evaluate("() => document.activeElement.tagName") == "TEXTAREA"


@pytest.fixture(scope="module")
def course_site(tmp_path_factory, server):
    """A course page on another site (localhost, not 127.0.0.1) that embeds two widgets."""
    root = tmp_path_factory.mktemp("course")
    embed = f"{server}/embed/ring_reduce_scatter/?ring_reduce_scatter.gpus=5"
    (root / "course.html").write_text(f"""<!doctype html><title>Course</title>
<script>window.heights = [];
addEventListener("message", e => {{ if (e.data && e.data.type === "allreduce-explainer:height")
  window.heights.push(e.data.height); }});</script>
<iframe id="live" src="{embed}" width="100%" height="300" title="ring"></iframe>
<iframe id="boxed" sandbox="allow-scripts" src="{server}/embed/scaling/" width="100%"
  height="300" title="sandboxed"></iframe>""")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://localhost:{httpd.server_address[1]}/course.html"
    httpd.shutdown()


def test_embed_works_in_a_cross_site_iframe_and_reports_height(page, course_site):
    page.goto(course_site)
    entries = page.evaluate("() => history.length")
    frame = page.frame_locator("#live")
    frame.locator(PY_READY).wait_for(state="attached")
    w = frame.locator("[data-widget=ring_reduce_scatter]")
    expect_counter(w, "Step 0 of 4")
    assert frame.locator(".site-header").count() == 0  # no site navigation in an embed
    w.locator("[data-action=next]").click()
    expect_counter(w, "Step 1 of 4")
    w.locator("[data-param=gpus]").fill("6")
    w.locator("[data-param=gpus]").press("Enter")
    expect_counter(w, "Step 0 of 5")
    heights = page.evaluate("() => window.heights")
    assert heights and max(heights) > 300
    assert page.evaluate("() => history.length") == entries  # the course page's history as it was


def test_sandboxed_embed_keeps_its_state_and_says_why(page, course_site):
    page.goto(course_site)
    frame = page.frame_locator("#boxed")
    frame.locator("html[data-python=failed]").wait_for(state="attached")
    assert "precomputed" in frame.locator("[data-role=python-status]").inner_text()
    assert frame.locator("[data-readout=ring]").inner_text() == "0.55 s"


def test_opened_from_disk_reads_steps_and_says_why(page, site):
    page.goto((site / "ring-reduce-scatter" / "index.html").as_uri())
    w = page.locator("[data-widget=ring_reduce_scatter]")
    w.locator("[data-action=next]").click()
    expect_counter(w, "Step 1 of 3")
    assert page.locator("html").get_attribute("data-python") == "failed"
    assert "from a file" in page.locator("[data-role=python-status]").inner_text()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation(browser, server, site, scheme):
    axe = Axe()
    ctx = browser.new_context(color_scheme=scheme)
    page = ctx.new_page()
    for path in pages(site) + [f"embed/{w}/" for w in ("scaling", "ring_all_gather")]:
        page.goto(f"{server}/{path}")
        states = ["before"]
        if page.locator("html[data-python]").count():
            states.append("after")
        for when in states:
            if when == "after":
                page.wait_for_selector(PY_READY, state="attached")
            bad = axe_violations(axe, page)
            assert bad == [], f"{path} ({scheme}, {when} Python): {bad}"
    ctx.close()


def test_theme_toggle_is_remembered_and_charts_follow(page, server):
    open_page(page, server, "why-allreduce")
    page.locator("[data-action=theme]").click()
    theme = page.locator("html").get_attribute("data-theme")
    colour = "() => document.querySelector('[data-widget=scaling] .main-svg text').style.fill"
    first = page.evaluate(colour)
    page.locator("[data-action=theme]").click()
    assert page.evaluate(colour) != first
    page.locator("[data-action=theme]").click()
    page.reload()
    assert page.locator("html").get_attribute("data-theme") == theme


def test_no_horizontal_scroll_at_360px_and_big_touch_targets(browser, server, site):
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    page = ctx.new_page()
    for path in pages(site):
        page.goto(f"{server}/{path}")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 360, path
        small = page.evaluate("""() => [...document.querySelectorAll(
            'button, select, input, summary, .pager a')].filter(e => e.offsetParent)
            .map(e => e.getBoundingClientRect()).filter(r => r.height < 44 || r.width < 44)
            .length""")
        assert small == 0, path
    ctx.close()


def test_keyboard_only_run_of_the_stage2_stepper(page, server):
    open_page(page, server, "ring-reduce-scatter")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    # Tab to the prediction's Skip (below the stepper): Enter, and the focus is on Next
    for _ in range(200):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.dataset.action") == "predict-skip":
            break
    else:
        pytest.fail("Skip is not reachable by Tab")
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.dataset.action") == "next"
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # a visible focus
    for _ in range(3):
        page.keyboard.press("Enter")
    expect_counter(w, "Step 3 of 3")
    assert "owns the complete sum" in w.locator("[data-role=narration]").inner_text()


def test_print_shows_state_without_controls(page, server):
    open_page(page, server, "ring-all-gather")
    w = page.locator("[data-widget=ring_all_gather]")
    skip_prediction(w)
    w.locator("[data-action=next]").click()
    page.emulate_media(media="print")
    for sel in (".controls", ".stepper-bar", ".widget-tools", ".site-header nav", "[data-action]"):
        assert all(not e.is_visible() for e in page.locator(sel).all()), sel
    assert w.locator("[data-role=grid] table").is_visible()
    assert w.locator("[data-role=narration]").inner_text().startswith("Step 1")


def test_reduced_motion_play_jumps_without_animation(browser, server):
    ctx = browser.new_context(reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{server}/ring-reduce-scatter/")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    skip_prediction(w)
    w.locator("[data-action=play]").click()
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 3 of 3"
    ctx.close()


def test_every_live_page_has_a_chart_alternative(page, server, site):
    for path in live_pages(site):
        page.goto(f"{server}/{path}")
        for chart in page.locator("[data-role=chart]").all():
            assert chart.get_attribute("aria-label")
        assert (
            page.locator("[data-role=chart]").count()
            == page.locator("[data-role=chart-table]").count()
        )
