"""A reader's path through the stages keeps one Python: "next" swaps the page in place, and the
page swapped in is the page the site built, live at once."""

from __future__ import annotations

from bs4 import BeautifulSoup

from helpers import PY_READY, expect_counter, expect_url, open_page, stages


def built(site, slug: str) -> BeautifulSoup:
    return BeautifulSoup((site / slug / "index.html").read_text(), "html.parser")


def slug_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 2)[-2] if url.endswith("index.html") else url.split("/")[-2]


def test_following_next_through_every_stage_keeps_one_python(page, server, site):
    workers = []
    page.on("worker", lambda w: workers.append(w))
    slugs = [p.slug for p in stages()]
    open_page(page, server, slugs[0], live=True)
    seen = [slugs[0]]
    while page.locator("a[rel=next]").count():
        page.locator("a[rel=next]").click()
        slug = slug_of(page.url)
        seen.append(slug)
        want = built(site, slug)
        assert page.title() == want.title.get_text(), slug
        assert page.locator("main h1").inner_text() == want.select_one("main h1").get_text(), slug
        names = [w["data-widget"] for w in want.select("[data-widget]")]
        assert page.evaluate("() => AE.widgets.map(w => w.name)") == names, slug
        assert page.locator("html").get_attribute("data-python") == "ready", slug
        assert "Live" in page.locator("[data-role=python-status]").inner_text(), slug
        assert page.evaluate("() => document.activeElement.matches('main h1')"), slug
    assert seen == slugs
    assert len(workers) == 1  # the worker the first page started, all the way
    page.watch.assert_clean()


def test_a_page_swapped_in_recomputes_keeps_its_url_state_and_goes_back(page, server):
    open_page(page, server, "why-allreduce", live=True)
    page.locator("a[rel=next]").click()
    assert page.url.endswith("/ring-reduce-scatter/index.html")
    w = page.locator("[data-widget=ring_reduce_scatter]")
    w.locator("[data-param=gpus]").fill("6")
    w.locator("[data-param=gpus]").press("Enter")
    expect_counter(w, "Step 0 of 5")  # Python, at once: it never stopped
    w.locator("[data-action=next]").click()
    expect_url(page, "ring_reduce_scatter.gpus=6", "ring_reduce_scatter.step=1")
    page.go_back()  # the widget's own entry: the same page, the GPU count before
    expect_counter(w, "Step 0 of 3")
    page.go_back()  # the page before
    page.wait_for_function("() => location.pathname.includes('/why-allreduce/')")
    page.locator("[data-widget=scaling]").wait_for()
    assert page.evaluate("() => AE.widgets.some(w => w.name === 'scaling')")
    page.go_forward()
    page.locator("[data-widget=ring_reduce_scatter]").wait_for()
    page.reload()  # what the URL says is what a fresh load shows
    page.wait_for_selector(PY_READY, state="attached")
    expect_counter(page.locator("[data-widget=ring_reduce_scatter]"), "Step 0 of 3")
    page.watch.assert_clean()


def test_a_playing_stepper_left_behind_does_not_write_the_new_pages_url(page, server):
    open_page(page, server, "ring-reduce-scatter", live=True)
    page.locator("[data-widget=ring_reduce_scatter] [data-action=play]").click()
    page.locator("a[rel=next]").click()
    page.wait_for_timeout(2500)  # several of the old stepper's ticks
    assert "ring_reduce_scatter" not in page.url, page.url
    page.watch.assert_clean()


def test_a_page_without_python_is_an_ordinary_navigation(page, server):
    open_page(page, server, "why-allreduce", live=True)
    page.locator("summary", has_text="Contents").click()
    with page.expect_navigation():
        page.locator("a", has_text="Glossary").first.click()
    assert page.url.endswith("/glossary/index.html")
    assert page.locator("html").get_attribute("data-python") is None
    page.watch.assert_clean()


def test_plotly_is_fetched_only_by_a_page_with_charts(page, server):
    asked = []
    page.on("request", lambda r: asked.append(r.url.rsplit("/", 1)[-1]))
    open_page(page, server, "ring-reduce-scatter", live=True)
    page.locator("[data-widget=ring_reduce_scatter] [data-action=next]").click()
    assert "plotly-basic.min.js" not in asked
    page.locator("a[rel=prev]").click()  # stage 1, swapped in: its charts load Plotly and draw
    page.locator("[data-widget=scaling] [data-role=chart] .main-svg").first.wait_for()
    assert asked.count("plotly-basic.min.js") == 1
    page.watch.assert_clean()
