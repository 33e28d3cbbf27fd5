"""The classroom in Chromium: an exercise's hooks, the teacher's sheet in print, the
projector mode with the keyboard alone, and figure downloads; axe on these pages."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlparse

import pytest

from allreduce_explainer import exercises
from helpers import PY_READY, axe_each, expect_counter, open_page, stages

KIND = "ring_time"  # stage 1's last exercise: a time with a unit
NAME = f"exercise-{KIND}"
EX = f"[data-widget={NAME}]"


def url_params(page) -> dict:
    return parse_qs(urlparse(page.url).query)


def feedback(w):
    fb = w.locator("[data-role=feedback][data-correct]")
    fb.wait_for()
    return fb.get_attribute("data-correct"), fb.inner_text()


def stage_one_exercises(page, server, query: str) -> list:
    """Stage 1 opened with `query`, once Python has started: each exercise's kind and widget."""
    page.goto(f"{server}/why-allreduce/?{query}")
    page.wait_for_selector(PY_READY, state="attached")
    return [(k, page.locator(f"[data-widget=exercise-{k}]")) for k in stages()[0].exercises]


def answer(page, w, text: str):
    """Type an answer, check it, and wait for Python's verdict on exactly that answer."""
    w.locator("[data-role=answer]").fill(text)
    w.locator("[data-action=check]").click()
    page.wait_for_function(
        "([sel, a]) => { const w = AE.widgets.find(x => x.el.matches(sel));"
        " return !w.busy && w.state.feedback && w.state.params.answer === a; }",
        arg=[EX, text],
        timeout=30_000,
    )
    return feedback(w)


def test_every_stage_ends_with_its_exercises(site):
    for s in (p for p in stages() if p.exercises):
        placed = [
            p
            for p in site.glob("*/index.html")
            if all(f'data-widget="exercise-{k}"' in p.read_text() for k in s.exercises)
        ]
        assert placed == [site / s.slug / "index.html"], (s.slug, placed)
        html = placed[0].read_text()
        assert html.index("Check yourself") < html.index(f'data-exercise="{s.exercises[0]}"')
        for k in s.exercises:
            assert (site / "embed" / f"exercise-{k}" / "index.html").exists()


def test_exercise_hooks_asked_wrong_right_solution_new_problem(page, server, artifacts):
    open_page(page, server, "why-allreduce")
    w = page.locator(EX)
    w.scroll_into_view_if_needed()
    expected = exercises.exercise({"kind": KIND, "seed": 0})
    # asked: the default problem is pre-rendered, before Python
    assert w.get_attribute("data-exercise") == KIND
    assert w.locator("[data-role=prompt]").inner_text() == expected["prompt"]
    assert w.locator("[data-role=feedback]").get_attribute("data-correct") is None
    w.screenshot(path=str(artifacts / "exercise-asked-1280.png"))
    page.wait_for_selector(PY_READY, state="attached")
    # wrong: a time off by half, then a size where a time is asked
    assert answer(page, w, "0.3 s")[0] == "false"
    w.screenshot(path=str(artifacts / "exercise-wrong-1280.png"))
    correct, message = answer(page, w, "14 GB")
    assert correct == "false" and "time" in message
    # right: the solution as written, and in other units
    assert answer(page, w, expected["solution_answer"])[0] == "true"
    w.screenshot(path=str(artifacts / "exercise-right-1280.png"))
    ms = float(expected["solution_answer"].split()[0]) * 1000
    assert answer(page, w, f"{ms:g} ms")[0] == "true"
    # solution: the steps and the final answer, computed by the core
    assert w.locator("[data-role=solution]").is_hidden()
    w.locator("[data-action=solution]").click()
    assert w.locator("[data-role=solution-answer]").inner_text() == expected["solution_answer"]
    steps = w.locator("[data-role=solution-steps] li").all_inner_texts()
    assert steps == expected["solution_steps"]
    w.locator("[data-action=hint]").click()
    assert w.locator("[data-role=hint]").inner_text() == expected["hint"]
    w.screenshot(path=str(artifacts / "exercise-solution-1280.png"))
    # new problem: another seed, in the URL, the panels closed and the answer cleared
    w.locator("[data-action=new-problem]").click()
    page.wait_for_function(f"() => new URLSearchParams(location.search).has('{NAME}.seed')")
    seed = int(url_params(page)[f"{NAME}.seed"][0])
    fresh = exercises.exercise({"kind": KIND, "seed": seed})
    w.locator("[data-role=prompt]", has_text=fresh["prompt"][:40]).wait_for()
    assert w.locator("[data-role=prompt]").inner_text() == fresh["prompt"]
    assert w.locator("[data-role=solution]").is_hidden()
    assert w.locator("[data-role=answer]").input_value() == ""
    assert w.locator("[data-role=feedback]").get_attribute("data-correct") is None
    # the link names that problem: a reload shows it again
    page.reload()
    page.wait_for_selector(PY_READY, state="attached")
    w.locator("[data-role=prompt]", has_text=fresh["prompt"][:40]).wait_for()
    page.watch.assert_clean()


def test_malformed_input_is_said_next_to_the_field(page, server):
    open_page(page, server, "why-allreduce", live=True)
    w = page.locator(EX)
    correct, message = answer(page, w, "fast, I think")
    assert correct == "false" and "could not read" in message
    # next to the field: the field describes itself by the message
    described = w.locator("[data-role=answer]").get_attribute("aria-describedby").split()
    assert w.locator("[data-role=feedback]").get_attribute("id") in described
    box, fb = (w.locator(s).bounding_box() for s in ("[data-role=answer]", "[data-role=feedback]"))
    assert 0 <= fb["y"] - (box["y"] + box["height"]) < 80
    page.watch.assert_clean()


def test_a_bare_seed_names_every_exercise_on_the_page(page, server):
    for kind, w in stage_one_exercises(page, server, "seed=7"):
        prompt = exercises.exercise({"kind": kind, "seed": 7})["prompt"]
        w.locator("[data-role=prompt]", has_text=prompt[:40]).wait_for()
        assert w.locator("[data-role=seed]").inner_text() == "7"
    page.watch.assert_clean()


def test_embedded_exercise_takes_its_seed(page, server):
    page.goto(f"{server}/embed/{NAME}/?{NAME}.seed=12")
    page.wait_for_selector(PY_READY, state="attached")
    prompt = exercises.exercise({"kind": KIND, "seed": 12})["prompt"]
    page.locator("[data-role=prompt]", has_text=prompt[:40]).wait_for()
    page.watch.assert_clean()


def test_an_exercise_shows_its_title_and_the_new_problem_keeps_it(page, server):
    open_page(page, server, "why-allreduce", live=True)
    w = page.locator(EX)
    assert w.locator("[data-role=title]").inner_text() == exercises.TITLES[KIND]
    assert KIND not in w.locator(".exercise-title").inner_text()  # no code name shown
    page.watch.assert_clean()


def test_solution_0_hides_every_worked_solution_and_the_sheets_key(page, server):
    for kind, w in stage_one_exercises(page, server, "solution=0"):
        assert w.locator("[data-action=solution]").is_hidden()
        assert w.locator("[data-role=solution]").count() == 0
        w.locator("[data-action=hint]").click()  # the hint stays
        assert (
            w.locator("[data-role=hint]").inner_text()
            == exercises.exercise({"kind": kind, "seed": 0})["hint"]
        )
    page.goto(f"{server}/teachers-sheet/?solution=0")
    page.wait_for_selector(PY_READY, state="attached")
    w = page.locator("[data-widget=exercise_sheet]")
    assert w.locator("[data-role=problems] > li").count() >= 1
    assert w.locator("[data-role=key]").count() == 0
    assert "solution=0" in w.locator("[data-role=sheet-link]").get_attribute("href")
    page.watch.assert_clean()


def test_checking_while_python_loads_says_so(page, server):
    page.route("**/worker.js*", lambda route: None)  # the worker never arrives
    open_page(page, server, "why-allreduce")
    w = page.locator(EX)
    w.locator("[data-role=answer]").fill("1 s")
    w.locator("[data-action=check]").click()
    assert "still loading" in w.locator("[data-role=exercise-status]").inner_text()


def test_the_sheet_builds_links_and_prints_the_key_on_its_own_page(page, server, artifacts):
    open_page(page, server, "teachers-sheet", live=True)
    w = page.locator("[data-widget=exercise_sheet]")
    w.locator("[data-role=kind-choice][value=ring_time]").check()
    w.locator("[data-param=seed]").fill("5")
    w.locator("[data-param=seed]").press("Enter")
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('exercise_sheet.seed') === '5'",
        timeout=30_000,
    )
    kinds = json.loads(url_params(page)["exercise_sheet.kinds"][0])
    sheet = exercises.sheet({"kinds": kinds, "seed": 5})
    assert sheet["params"]["kinds"][-1] == "ring_time"
    label = w.locator("label", has=page.locator("[data-role=kind-choice][value=ring_time]"))
    assert label.inner_text().strip() == exercises.TITLES["ring_time"]  # a title, not a code name
    assert w.locator("[data-role=problems] > li").count() == len(sheet["problems"])
    last = sheet["answers"][-1]
    assert w.locator("[data-role=answers] > li strong").last.inner_text() == last["solution_answer"]
    link = w.locator("[data-role=sheet-link]").get_attribute("href")
    assert "exercise_sheet.seed=5" in link
    # print: controls gone, the key begins a new page
    page.emulate_media(media="print")
    assert w.locator(".sheet-controls").is_hidden()
    assert page.locator(".site-header nav").is_hidden()
    brk = page.evaluate("() => getComputedStyle(document.querySelector('.sheet-key')).breakBefore")
    assert brk == "page"
    page.screenshot(path=str(artifacts / "sheet-print-1280.png"), full_page=True)
    page.pdf(path=str(artifacts / "sheet.pdf"))
    pdf = (artifacts / "sheet.pdf").read_bytes()
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) >= 2
    page.watch.assert_clean()


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_quick_reference_prints_on_one_page(page, server, artifacts, paper):
    open_page(page, server, "quick-reference")
    page.emulate_media(media="print")
    assert page.locator(".site-header nav").is_hidden()
    # the facts are in, each as its page computes it: no template left unfilled
    text = page.locator("article").inner_text()
    assert "{{" not in text and "GB/s" in text and "GiB" in text
    out = artifacts / f"quick-reference-{paper}.pdf"
    page.pdf(path=str(out), format=paper)
    assert len(re.findall(rb"/Type\s*/Page[^s]", out.read_bytes())) == 1
    page.watch.assert_clean()


def test_projector_mode_with_the_keyboard_alone(page, server, artifacts):
    page.goto(f"{server}/ring-reduce-scatter/?present=1")
    w = page.locator(".presented")
    assert w.get_attribute("data-widget") == "ring_reduce_scatter"  # the page's first widget
    assert page.locator("h1").is_hidden() and page.locator(".site-header").is_hidden()
    box = w.bounding_box()
    assert box["width"] >= 1200 and box["height"] >= 880
    size = page.evaluate(
        "() => { const css = s => getComputedStyle(document.querySelector(s));"
        " return parseFloat(css('.presented .narration p').fontSize)"
        " * (parseFloat(css('.presented').zoom) || 1); }"
    )
    assert size >= 26  # the body's 17 px, larger and zoomed for a hall
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect_counter(w, "Step 2 of")
    page.keyboard.press("ArrowLeft")
    expect_counter(w, "Step 1 of")
    page.screenshot(path=str(artifacts / "present-1280.png"))
    # the widget named in the URL, on another page; Escape leaves
    page.goto(f"{server}/ring-all-gather/?present=1&widget=ring_all_gather")
    assert page.locator(".presented").get_attribute("data-widget") == "ring_all_gather"
    page.keyboard.press("Escape")
    page.wait_for_url(re.compile(r"ring-all-gather/(#.*)?$"))
    assert page.locator("h1").is_visible()
    page.watch.assert_clean()


def test_both_downloads_produce_files(page, server, tmp_path):
    open_page(page, server, "why-allreduce")
    page.wait_for_function(
        "() => document.querySelector('[data-widget=scaling] [data-role=chart]').data"
    )
    w = page.locator("[data-widget=scaling]")
    for fmt, magic in (("svg", b"<svg"), ("png", b"\x89PNG")):
        with page.expect_download() as d:
            w.locator(f"[data-action=download-{fmt}]").click()
        path = tmp_path / d.value.suggested_filename
        d.value.save_as(path)
        assert path.suffix == f".{fmt}"
        data = path.read_bytes()
        assert data[:200].find(magic) >= 0
        if fmt == "svg":
            assert b"All-reduce time against GPU count" in data  # the chart's title
    assert (
        page.locator("[data-role=chart]").count()
        == page.locator("[data-action=download-png]").count()
    )
    page.watch.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_on_the_classroom(browser, server, scheme):
    def prepare(page, path: str) -> None:
        page.wait_for_selector(PY_READY, state="attached")
        if path == "why-allreduce/":  # with a verdict and the solution open
            w = page.locator(EX)
            w.locator("[data-role=answer]").fill("nonsense")
            w.locator("[data-action=check]").click()
            w.locator("[data-role=feedback][data-correct]").wait_for()
            w.locator("[data-action=solution]").click()

    paths = (
        "why-allreduce/",
        "teachers-sheet/",
        f"embed/{NAME}/",
        "ring-reduce-scatter/?present=1",
    )
    axe_each(browser, server, scheme, paths, prepare)
