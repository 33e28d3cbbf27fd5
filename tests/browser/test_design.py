"""The site's look at work in Chromium: the course nav follows an in-place "next", the − / +
buttons step a count through Python, and the prose keeps a measure of about 70 characters."""

from __future__ import annotations

from helpers import expect_counter, expect_url, open_page, stages


def current_stage(page) -> str:
    return page.locator(".course-nav a[aria-current=page]").get_attribute("href")


def test_the_course_nav_marks_the_page_swapped_in(page, server):
    slugs = [p.slug for p in stages()]
    open_page(page, server, slugs[1], live=True)
    assert current_stage(page) == f"../{slugs[1]}/index.html"
    page.evaluate("() => { window.notReloaded = true; }")
    page.locator("a[rel=next]").click()
    page.wait_for_function(f"() => location.pathname.includes('/{slugs[2]}/')")
    assert page.evaluate("() => window.notReloaded === true")  # swapped in place, not loaded
    assert current_stage(page) == f"../{slugs[2]}/index.html"
    assert page.locator(".course-nav [aria-current]").count() == 1
    page.watch.assert_clean()


def test_plus_and_minus_step_the_gpu_count_through_python(page, server):
    open_page(page, server, "ring-reduce-scatter", live=True)
    w = page.locator("[data-widget=ring_reduce_scatter]")
    box = w.locator("[data-param=gpus]")
    lo = int(box.get_attribute("min"))
    w.get_by_role("button", name="Increase GPUs by 1").click()
    expect_counter(w, "Step 0 of 4")  # 5 GPUs: n - 1 = 4 steps of the reduce-scatter
    expect_url(page, "ring_reduce_scatter.gpus=5")
    assert box.input_value() == "5"
    assert w.locator("[data-role=grid] tbody th.gpu").count() == 5
    for n in range(4, lo - 1, -1):
        w.get_by_role("button", name="Decrease GPUs by 1").click()
        expect_counter(w, f"Step 0 of {n - 1}")
    # at the least, − is disabled; a count typed below it is refused by Python, next to the box
    assert w.get_by_role("button", name="Decrease GPUs by 1").is_disabled()
    box.fill(str(lo - 1))
    box.press("Enter")
    error = w.locator("[data-error-for=gpus]")
    error.wait_for(state="visible")
    assert str(lo) in error.inner_text()
    assert box.get_attribute("aria-invalid") == "true"
    page.watch.assert_clean()


def test_prose_keeps_a_measure_of_about_70_characters(page, server):
    """Characters per full line of the stage's paragraphs, counted as the browser lays them out."""
    open_page(page, server, "ring-reduce-scatter")
    # a character below the line's top by half a line begins the next; the last line is left out
    per_line = page.evaluate("""() => {
        const out = [];
        for (const p of document.querySelectorAll("article > p")) {
            const half = parseFloat(getComputedStyle(p).lineHeight) / 2;
            const counts = [];
            let top = -Infinity;
            const walk = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
            for (let t = walk.nextNode(); t; t = walk.nextNode()) {
                for (let i = 0; i < t.length; i++) {
                    const r = document.createRange();
                    r.setStart(t, i);
                    r.setEnd(t, i + 1);
                    const box = r.getBoundingClientRect();
                    if (box.height === 0) continue;
                    if (box.top > top + half) {  // a new line
                        top = box.top;
                        counts.push(0);
                    }
                    counts[counts.length - 1] += 1;
                }
            }
            out.push(...counts.slice(0, -1));
        }
        return out;
    }""")
    assert len(per_line) >= 20
    mean = sum(per_line) / len(per_line)
    assert 60 <= mean <= 80, per_line
    widget = page.locator("figure.widget").first.bounding_box()["width"]
    prose = page.locator("article > p").first.bounding_box()["width"]
    assert widget > prose * 1.3  # the figures are wider than the prose


def test_deeper_boxes_and_asides_sit_in_the_text_column(browser, server):
    """At 1280 px, on every stage, each "Deeper" box (and each practice or model aside) has the
    left and right edges of the page's paragraphs."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    seen = 0
    for stage in stages():
        open_page(page, server, stage.slug)
        p = page.locator("article > p").first.bounding_box()
        boxes = page.locator(
            "article > :is(details[data-role=deeper], aside[data-role=practice],"
            " aside[data-role=model])"
        )
        for box in boxes.all():
            b = box.bounding_box()
            edges = (round(b["x"]), round(b["x"] + b["width"]))
            assert edges == (round(p["x"]), round(p["x"] + p["width"])), (stage.slug, edges, p)
            seen += 1
    assert seen >= 10  # the check ran: Deeper boxes are on most stages
    ctx.close()
