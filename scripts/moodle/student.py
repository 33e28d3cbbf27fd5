"""A student's attempt at the SCORM activity in a real Moodle, in Chromium: log in, open the
activity, wait for Python to start inside the package, answer every exercise right (the answer
computed by the core for the problem the page shows), exit; then the teacher's gradebook, saved as
a screenshot. Prints what the LMS's API held and what the gradebook shows.

Usage: python scripts/moodle/student.py MOODLE_URL SETUP_JSON OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

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


def answer_all(frame) -> list[dict]:
    kinds = frame.evaluate(
        "() => [...document.querySelectorAll('[data-widget^=\"exercise-\"]')]"
        ".map(e => e.dataset.widget.slice('exercise-'.length))"
    )
    return [chromium.answer_as_the_core(frame, kind, TIMEOUT_MS) for kind in kinds]


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
        page.goto(f"{url}/mod/scorm/view.php?id={made['cmid']}")
        ready(page)
        frame = sco(page)
        frame.wait_for_selector("html[data-python=ready]", state="attached", timeout=TIMEOUT_MS)
        answers = answer_all(frame)
        api = {
            k: page.evaluate("k => String(window.API.LMSGetValue(k))", k)
            for k in ("cmi.core.score.raw", "cmi.core.lesson_status")
        }
        page.screenshot(path=str(shots / "student.png"))
        served = {  # file -> (Content-Type, nosniff, the type sitebuild/moodle_types.py gives it)
            name: (typ, sniff, moodle_type(name, ctx.request.get(u).body()[:8192]))
            for name, (u, typ, sniff) in seen.items()
        }
        with page.expect_navigation(timeout=TIMEOUT_MS):  # LMSFinish, then back to the course
            page.get_by_text("Exit activity").first.click()
        ready(page)
        page.context.clear_cookies()
        log_in(page, url, "admin", "Admin-pass-1")
        page.goto(f"{url}/grade/report/grader/index.php?id={made['course']}")
        ready(page)
        page.screenshot(path=str(shots / "gradebook.png"), full_page=True)
        row = " ".join(page.locator("tr", has_text="Sam Student").first.inner_text().split())
        browser.close()
    types = {name: typ for name, (typ, _, _) in served.items()}
    unlike = {n: (t, ours) for n, (t, _, ours) in served.items() if t.split(";")[0] != ours}
    print(
        json.dumps(
            {
                "answers": answers,
                "api": api,
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
