"""Debian's Chromium under Playwright, launched the same way by the browser tests, the screenshot
script and the benchmarks (Playwright cannot download its own browser here); and a student
answering a page's exercises in it, the same way in the browser tests and in a real Moodle."""

from __future__ import annotations

import shutil
from pathlib import Path

from allreduce_explainer.exercises import problem

TEST_ENTRY = Path(__file__).resolve().parent.parent / "client" / "js" / "testing.js"

# no sandbox (containers), no GPU, and no traffic of Chromium's own, which tests would count
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
MISSING = (
    "Chromium is missing: run `make test` (it installs Debian's chromium) "
    "or `apt-get install chromium`"
)


def chromium_path() -> str | None:
    return shutil.which("chromium")


def launch(playwright, test_entry: bool = False):
    """A headless Chromium from a started `sync_playwright()`; SystemExit if there is none. With
    `test_entry`, every page it opens runs client/js/testing.js before its own scripts: the levers
    and timings (AE.bench) bench/ and the tests read, which the site never ships."""
    path = chromium_path()
    if path is None:
        raise SystemExit(MISSING)
    browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
    return WithTestEntry(browser) if test_entry else browser


class WithTestEntry:
    """A browser whose every new context (and page) has the test entry added as an init script."""

    def __init__(self, browser):
        self._browser = browser

    def new_context(self, **kwargs):
        ctx = self._browser.new_context(**kwargs)
        ctx.add_init_script(path=str(TEST_ENTRY))
        return ctx

    def new_page(self, **kwargs):
        return self.new_context(**kwargs).new_page()

    def __getattr__(self, name):
        return getattr(self._browser, name)


# Python's verdict is on screen for exactly the answer typed (not an earlier one still computing)
VERDICT = (
    "([s, a]) => { const w = AE.widgets.find(x => x.el.matches(s));"
    " return !w.busy && w.state.feedback && w.state.params.answer === a; }"
)


def check_answer(frame, kind: str, text: str, timeout_ms: int) -> bool:
    """Type `text` into exercise `kind`'s box in a page or frame, check it as a reader does and
    wait for Python's verdict on it: whether it was right."""
    sel = f"[data-widget=exercise-{kind}]"
    frame.locator(f"{sel} [data-role=answer]").fill(text)
    frame.locator(f"{sel} [data-action=check]").click()
    frame.wait_for_function(VERDICT, arg=[sel, text], timeout=timeout_ms)
    return frame.locator(f"{sel} [data-role=feedback]").get_attribute("data-correct") == "true"


def answer_as_the_core(frame, kind: str, timeout_ms: int) -> dict:
    """Answer the problem exercise `kind` shows with the core's own answer to its seed, as a
    student who works it out right would (the browser tests' course platforms and a real
    Moodle's, scripts/moodle/student.py): the seed, the answer typed and whether it was right."""
    sel = f"[data-widget=exercise-{kind}]"
    seed = frame.evaluate("s => AE.widgets.find(w => w.el.matches(s)).state.seed", sel)
    text = problem(kind, seed).answer_text()
    right = check_answer(frame, kind, text, timeout_ms)
    return {"kind": kind, "seed": seed, "answer": text, "correct": right}
