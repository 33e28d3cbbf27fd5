"""Checks both new stages' page tests share: axe clean before and after Python, no horizontal
scroll at 360 px, and the page's figures quoted from facts()."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe

from conftest import PY_READY


def axe_clean(browser, server, slug: str, embeds: tuple[str, ...]) -> None:
    axe = Axe()
    for scheme in ("light", "dark"):
        ctx = browser.new_context(color_scheme=scheme)
        page = ctx.new_page()
        for path in (f"{slug}/", *(f"embed/{w}/" for w in embeds)):
            page.goto(f"{server}/{path}")
            for when in ("before", "after"):
                if when == "after":
                    page.wait_for_selector(PY_READY, state="attached", timeout=90_000)
                result = axe.run(page)
                bad = [
                    (v["id"], [n["target"] for n in v["nodes"]][:3])
                    for v in result.response["violations"]
                    if v["impact"] in ("serious", "critical")
                ]
                assert bad == [], f"{path} ({scheme}, {when} Python): {bad}"
        ctx.close()


def no_scroll_at_360(browser, server, slug: str) -> None:
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    page = ctx.new_page()
    page.goto(f"{server}/{slug}/")
    for w in page.locator("[data-kind=stepper]").all():  # the widest frame is the last
        nxt = w.locator("[data-action=next]")
        while nxt.is_enabled():
            nxt.click()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    ctx.close()
