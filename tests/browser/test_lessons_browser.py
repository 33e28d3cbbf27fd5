"""Every page a lesson, in Chromium: "Deeper" boxes closed on screen and open in print, answers
that open, glossary links that land on their entry, the glossary page clean under axe, and
screenshots of a page's opening, a closed and an open "Deeper" box and the glossary at 1280 and
360 px (saved in test-artifacts/lessons/ for a person to look at)."""

from __future__ import annotations

import pytest

from helpers import axe_each, open_page

DEEPER = "details[data-role=deeper]"


def deeper_text_visible(page, index: int = 0) -> bool:
    """Is the first paragraph inside the box drawn? (A closed box's content is skipped, though
    it may still have a size, so its visibility is asked.)"""
    return page.evaluate(
        """([sel, i]) => {
            const p = document.querySelectorAll(sel)[i].querySelector(':scope > :not(summary)');
            const r = p.getBoundingClientRect();
            return p.checkVisibility() && r.width > 0 && r.height > 0;
        }""",
        [DEEPER, index],
    )


def test_deeper_boxes_are_closed_on_screen_open_on_click_and_in_print(page, server):
    open_page(page, server, "why-allreduce")
    boxes = page.locator(DEEPER)
    assert boxes.count() >= 1
    assert not deeper_text_visible(page)
    page.emulate_media(media="print")
    for i in range(boxes.count()):
        assert deeper_text_visible(page, i), f"box {i} not shown in print"
    page.emulate_media(media="screen")
    assert not deeper_text_visible(page)
    boxes.first.locator("summary").click()
    assert deeper_text_visible(page)
    page.watch.assert_clean()


def test_print_handler_opens_closed_boxes_and_closes_them_after(page, server):
    open_page(page, server, "your-cluster")
    page.locator(DEEPER).first.locator("summary").click()  # one opened by the reader
    opened = "() => [...document.querySelectorAll('details[data-role=deeper]')].map(d => d.open)"
    before = page.evaluate(opened)
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    assert all(page.evaluate(opened))
    page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
    assert page.evaluate(opened) == before
    page.watch.assert_clean()


def test_answers_open_and_glossary_links_land_on_their_entry(page, server):
    open_page(page, server, "ring-reduce-scatter")
    check = page.locator("[data-role=check-yourself]")
    answer = check.locator("details").first
    assert not answer.locator("p").is_visible()
    answer.locator("summary").click()
    assert answer.locator("p").is_visible()
    link = page.locator("article a.glossary-term").first
    href = link.get_attribute("href")
    link.click()
    page.wait_for_url(f"**/glossary/#{href.split('#')[1]}")
    entry = page.locator(f"#{href.split('#')[1]}")
    assert entry.is_visible()
    assert entry.evaluate("e => e.matches(':target')")
    page.watch.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_on_the_glossary_and_a_lesson(browser, server, scheme):
    def prepare(page, path: str) -> None:
        if path == "ring-all-gather/":  # the open "Deeper" box and an open answer are checked too
            page.locator(f"{DEEPER} summary").first.click()
            page.locator("[data-role=check-yourself] summary").first.click()

    paths = ("glossary/", "ring-all-gather/", "quick-reference/", "use-in-your-course/")
    axe_each(browser, server, scheme, paths, prepare)


def test_no_horizontal_scroll_at_360px_on_the_glossary_and_the_lesson_boxes(browser, server):
    ctx = browser.new_context(viewport={"width": 360, "height": 740})
    page = ctx.new_page()
    for path in ("glossary/", "across-servers/", "", "quick-reference/", "use-in-your-course/"):
        page.goto(f"{server}/{path}")
        if path == "across-servers/":
            page.locator(f"{DEEPER} summary").first.click()
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 360, f"{path}: {width}px wide"
    ctx.close()


def test_screenshots_of_the_lesson_parts(browser, server, artifacts):
    out = artifacts / "lessons"
    out.mkdir(exist_ok=True)
    for width in (1280, 360):
        for scheme in ("light", "dark"):
            ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
            page = ctx.new_page()
            tag = f"{width}-{scheme}"
            page.goto(f"{server}/ring-reduce-scatter/")
            page.screenshot(path=str(out / f"opening-{tag}.png"))
            box = page.locator(DEEPER).first
            box.scroll_into_view_if_needed()
            box.screenshot(path=str(out / f"deeper-closed-{tag}.png"))
            box.locator("summary").click()
            box.screenshot(path=str(out / f"deeper-open-{tag}.png"))
            end = page.locator("[data-role=takeaways]")
            end.scroll_into_view_if_needed()
            page.locator("[data-role=check-yourself] summary").first.click()
            page.screenshot(path=str(out / f"closing-{tag}.png"))
            page.goto(f"{server}/glossary/")
            page.screenshot(path=str(out / f"glossary-{tag}.png"))
            page.goto(f"{server}/")
            page.screenshot(path=str(out / f"home-{tag}.png"), full_page=True)
            for slug in ("quick-reference", "use-in-your-course"):
                page.goto(f"{server}/{slug}/")
                page.screenshot(path=str(out / f"{slug}-{tag}.png"), full_page=True)
            ctx.close()
    assert len(list(out.glob("*.png"))) == 32
