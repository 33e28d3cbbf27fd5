"""A student's attempt at the SCORM activity in a real Moodle, in Chromium, as the scoring rule
must take it: log in, open the activity, wait for Python to start inside the package; Check on an
empty box and on a decimal comma (each must get a message and spend nothing), a wrong first
answer then the right one (the first counts), half the rest right (the answer computed by the
core for the problem the page shows); exit, come back (the attempt resumes with its answers and
score), answer the rest and exit; then the teacher's gradebook, saved as a screenshot. Prints
what the LMS's API held at each point, each expectation with whether it held, and the gradebook.

Usage: python scripts/moodle/student.py MOODLE_URL SETUP_JSON OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from allreduce_explainer.exercises import problem
from allreduce_explainer.exercises.learners import learner_seed
from sitebuild import browser as chromium
from sitebuild.moodle_types import moodle_type

NOSNIFF = "x-content-type-options"
TIMEOUT_MS = 180_000  # php -S serves the package's files one PHP process each: a slow first start


# Moodle's own test of a page that has finished drawing itself: its JavaScript's pending list
# empty and the document complete (lib/behat/behat_base.php, PAGE_READY_JS). A load event comes
# before the page's modules have run, and after a click on "Log in" the old page's load state is
# already reached: waiting for that alone races the redirect and the new page's redraw.
PAGE_READY_JS = (
    '() => typeof M !== "undefined" && M.util && M.util.pending_js'
    ' && !M.util.pending_js.length && document.readyState === "complete"'
)


def ready(page) -> None:
    """Wait until the page Moodle is showing has drawn itself."""
    page.wait_for_function(PAGE_READY_JS, timeout=TIMEOUT_MS)


def log_in(page, url: str, user: str, password: str) -> None:
    page.goto(f"{url}/login/index.php")
    ready(page)
    page.fill("#username", user)
    page.fill("#password", password)
    with page.expect_navigation(timeout=TIMEOUT_MS):
        page.click("#loginbtn")
    page.wait_for_url(lambda u: "/login/" not in u, timeout=TIMEOUT_MS)  # not refused
    ready(page)


def sco(page):
    """The package's page: the frame Moodle's player loads from its content area."""
    page.wait_for_function(
        "() => document.querySelector('#scorm_object') !== null", timeout=TIMEOUT_MS
    )
    for _ in range(600):
        for f in page.frames:
            if "/mod_scorm/content/" in f.url and f.url.endswith(".html"):
                return f
        page.wait_for_timeout(100)
    raise SystemExit("the SCORM player shows no package page")


def kinds_on(frame) -> list[str]:
    return frame.evaluate(
        "() => [...document.querySelectorAll('[data-widget^=\"exercise-\"]')]"
        ".map(e => e.dataset.widget.slice('exercise-'.length))"
    )


def lms(page) -> dict:
    """What Moodle's SCORM 1.2 API holds now."""
    keys = ("cmi.core.score.raw", "cmi.core.lesson_status", "cmi.interactions._count")
    return {k: page.evaluate("k => String(window.API.LMSGetValue(k))", k) for k in keys}


def feedback(frame, kind: str) -> str:
    return frame.locator(f"[data-widget=exercise-{kind}] [data-role=feedback]").inner_text()


def spend_nothing(page, frame, kind: str) -> list[dict]:
    """Check on an empty box, then the right answer written with a decimal comma: the page's
    message for each, and the LMS after it (no interaction, no score)."""
    seed = frame.evaluate(
        "s => AE.widgets.find(w => w.el.matches(s)).state.seed", f"[data-widget=exercise-{kind}]"
    )
    right = problem(kind, seed).answer_text()
    comma = right.replace(".", ",", 1) if "." in right else "0,975 s"
    out = []
    for text in ("", comma):
        correct = chromium.check_answer(frame, kind, text, TIMEOUT_MS)
        said = {"typed": text, "correct": correct, "message": feedback(frame, kind)}
        out.append(said | lms(page))
    return out


def wrong_then_right(page, frame, kind: str) -> list[dict]:
    wrong = chromium.check_answer(frame, kind, "12345", TIMEOUT_MS)
    first = {"typed": "12345", "correct": wrong} | lms(page)
    return [first, chromium.answer_as_the_core(frame, kind, TIMEOUT_MS) | lms(page)]


def open_activity(page, url: str, cmid: int):
    page.goto(f"{url}/mod/scorm/view.php?id={cmid}")
    ready(page)
    frame = sco(page)
    frame.wait_for_selector("html[data-python=ready]", state="attached", timeout=TIMEOUT_MS)
    # Python is ready before scorm.js has drawn the learner's own problems: wait for them, or the
    # core would answer the page's default problem that the learner's is about to replace
    student = page.evaluate("String(window.API.LMSGetValue('cmi.core.student_id'))")
    want = {f"exercise-{k}": learner_seed(student, f"exercise-{k}") for k in kinds_on(frame)}
    frame.wait_for_function(
        "want => Object.keys(want).every(n => { const w = AE.widgets.find(x => x.name === n);"
        " return w && !w.busy && w.state.seed === want[n]; })",
        arg=want,
        timeout=TIMEOUT_MS,
    )
    return frame


def leave(page) -> None:
    with page.expect_navigation(timeout=TIMEOUT_MS):  # LMSFinish, then back to the course
        page.get_by_text("Exit activity").first.click()
    ready(page)


def expectations(first: list[dict], order: list[dict], kept: dict, back: dict, end: dict) -> dict:
    """Each rule of the scoring as it must hold, and whether it did."""
    k = end["problems"]
    return {
        "empty box and decimal comma: a message, no interaction, no score": all(
            not r["correct"] and r["cmi.interactions._count"] in ("0", "") and r["message"]
            for r in first
        ),
        "wrong then right: the first answer counts (score 0 after both)": (
            not order[0]["correct"]
            and order[1]["correct"]
            and order[1]["cmi.core.score.raw"] in ("0", "")
        ),
        "resume: the same problems, the typed answers and the score kept": (
            back["seeds"] == kept["seeds"]
            and back["answers"] == kept["answers"]
            and back["lms"]["cmi.core.score.raw"] == kept["lms"]["cmi.core.score.raw"]
        ),
        f"score 100 x {k - 1}/{k} at the end": (
            abs(float(end["lms"]["cmi.core.score.raw"]) - 100 * (k - 1) / k) < 0.01
        ),
    }


def typed(frame, kinds: list[str]) -> tuple[dict, dict]:
    """Each exercise's seed and what its box holds."""
    seeds, answers = {}, {}
    for kind in kinds:
        sel = f"[data-widget=exercise-{kind}]"
        seeds[kind] = frame.evaluate("s => AE.widgets.find(w => w.el.matches(s)).state.seed", sel)
        answers[kind] = frame.locator(f"{sel} [data-role=answer]").input_value()
    return seeds, answers


def main(url: str, made_path: str, out: str) -> None:
    made = json.loads(Path(made_path).read_text())
    shots = Path(out)
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = chromium.launch(p)
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        seen: dict[str, tuple[str, str, str]] = {}  # package file -> (URL, its type, nosniff)

        def note(r) -> None:
            name = r.url.split("?")[0].rsplit("/", 1)[-1]
            if "/mod_scorm/content/" in r.url and r.ok:
                typ, sniff = r.headers.get("content-type", ""), r.headers.get(NOSNIFF, "")
                seen.setdefault(name, (r.url, typ, sniff))

        ctx.on("response", note)
        page = ctx.new_page()
        log_in(page, url, "student", "Student-pass-1")
        frame = open_activity(page, url, made["cmid"])
        kinds = kinds_on(frame)
        half = 1 + (len(kinds) - 1) // 2
        first = spend_nothing(page, frame, kinds[0])
        order = wrong_then_right(page, frame, kinds[0])
        answers = [chromium.answer_as_the_core(frame, k, TIMEOUT_MS) for k in kinds[1:half]]
        seeds, boxes = typed(frame, kinds)
        kept = {"seeds": seeds, "answers": boxes, "lms": lms(page)}
        page.screenshot(path=str(shots / "student-before-leaving.png"))
        leave(page)
        frame = open_activity(page, url, made["cmid"])  # the attempt resumes
        seeds, boxes = typed(frame, kinds)
        back = {"seeds": seeds, "answers": boxes, "lms": lms(page)}
        answers += [chromium.answer_as_the_core(frame, k, TIMEOUT_MS) for k in kinds[half:]]
        end = {"problems": len(kinds), "lms": lms(page)}
        page.screenshot(path=str(shots / "student.png"))
        served = {  # file -> (Content-Type, nosniff, the type sitebuild/moodle_types.py gives it)
            name: (typ, sniff, moodle_type(name, ctx.request.get(u).body()[:8192]))
            for name, (u, typ, sniff) in seen.items()
        }
        leave(page)
        page.context.clear_cookies()
        log_in(page, url, "admin", "Admin-pass-1")
        page.goto(f"{url}/grade/report/grader/index.php?id={made['course']}")
        ready(page)
        skip = page.get_by_role("button", name="Skip tour")  # Moodle's first-visit user tour
        if skip.count():
            skip.first.click()
        page.screenshot(path=str(shots / "gradebook.png"), full_page=True)
        row = " ".join(page.locator("tr", has_text="Sam Student").first.inner_text().split())
        browser.close()
    types = {name: typ for name, (typ, _, _) in served.items()}
    unlike = {n: (t, ours) for n, (t, _, ours) in served.items() if t.split(";")[0] != ours}
    print(
        json.dumps(
            {
                "expectations": expectations(first, order, kept, back, end),
                "empty_and_comma": first,
                "wrong_then_right": order,
                "left_half_way": kept,
                "came_back": back,
                "answers": answers,
                "at_the_end": end,
                "gradebook_row": row,
                "served": types,
                "nosniff": sorted({s for _, s, _ in served.values()}),
                "types_unlike_moodle_types_py": unlike,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.split("\n\n")[-1])
    main(*sys.argv[1:])
