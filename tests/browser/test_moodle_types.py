"""A stage's SCORM package served as Moodle serves it: every file under the type Moodle's own table
gives it (sitebuild/moodle_types.py: .js is application/x-javascript, a .wasm comes as
application/octet-stream, a .mjs as document/unknown), with X-Content-Type-Options: nosniff (which
Moodle 4.1.10 did not send; a stricter host does, and it makes a browser refuse more), under a
scorm-again host page in Chromium. Python starts, each exercise answered right (the answer
computed here by the core for the problem the page shows) raises the score, and the stage is
completed."""

from __future__ import annotations

import http.server
import urllib.request
import xml.etree.ElementTree as ET
from urllib.parse import urlsplit

import pytest

from allreduce_explainer.exercises.learners import learner_seed
from helpers import PY_READY, TIMEOUT_MS, Watch, course_platform, stages
from sitebuild import serve
from sitebuild.browser import answer_as_the_core
from sitebuild.moodle_types import BINARY, JAVASCRIPT, moodle_type

STAGE = stages()[0]
KINDS = list(STAGE.exercises)
STARTED = "html:is([data-python=ready], [data-python=failed])"

HOST_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>Moodle's types</title>
<script src="scorm12.min.js"></script><script src="host.js"></script></head>
<body><iframe id="sco" title="the package" width="1200" height="800"></iframe></body>
</html>
"""
HOST_JS = """window.API = new Scorm12API({ autocommit: true, logLevel: 5 });
document.addEventListener("DOMContentLoaded", function () {
  document.getElementById("sco").src = "pkg/" + location.hash.slice(1);
});
"""


class MoodleTypes(http.server.SimpleHTTPRequestHandler):
    """Files with Moodle's types and nosniff, unencoded, as Moodle's pluginfile.php sends them."""

    def guess_type(self, path) -> str:
        with open(path, "rb") as f:
            return moodle_type(str(path), f.read(8192))

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:
        pass


@pytest.fixture(scope="module")
def moodle(site, tmp_path_factory):
    """An origin serving the host page, scorm-again and the stage's package unzipped."""
    root = tmp_path_factory.mktemp("moodle")
    course_platform(root, site / "scorm" / f"{STAGE.slug}.zip", HOST_HTML, HOST_JS)
    url, httpd = serve.in_background(root, MoodleTypes)
    yield url, root / "pkg"
    httpd.shutdown()


def launch(pkg) -> str:
    """The SCO's page, as the LMS finds it: the manifest's resource with an href."""
    tree = ET.parse(pkg / "imsmanifest.xml")
    return next(r.get("href") for r in tree.iter() if r.tag.endswith("resource") and r.get("href"))


def content_type(url: str) -> str:
    with urllib.request.urlopen(url) as r:
        r.read()
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        return r.headers["Content-Type"]


def test_the_server_sends_moodles_types(moodle):
    """The premise: scripts come as application/x-javascript, the WebAssembly not as wasm."""
    url, pkg = moodle
    wasm = next(pkg.rglob("pyodide.asm.wasm")).relative_to(pkg).as_posix()
    assert content_type(f"{url}/pkg/{wasm}") == BINARY
    scripts = [p.relative_to(pkg).as_posix() for p in pkg.rglob("*js") if p.is_file()]
    assert scripts
    for name in scripts:
        assert content_type(f"{url}/pkg/{name}") == "application/x-javascript"


def test_every_script_of_the_package_has_a_javascript_type(moodle):
    """A .mjs (not a JavaScript type in Moodle) would not run as a module: the package has none."""
    _, pkg = moodle
    scripts = [p.name for p in pkg.rglob("*js") if p.is_file()]
    assert "worker.js" in scripts
    unknown = [name for name in scripts if moodle_type(name) not in JAVASCRIPT]
    assert unknown == []


def test_python_starts_and_the_score_reaches_the_lms(browser, moodle):
    url, pkg = moodle
    href = launch(pkg)
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    watch = Watch(page, url)
    page.goto(f"{url}/host.html#{href}")
    page.frame_locator("#sco").locator(STARTED).wait_for(state="attached", timeout=TIMEOUT_MS)
    # the page keeps its widgets' state in its address (urlstate.js): match the path alone
    inner = next(f for f in page.frames if urlsplit(f.url).path.endswith(f"pkg/{href}"))
    status = inner.locator('[data-role="python-status"]').first.inner_text()
    assert inner.locator(PY_READY).count() == 1, status
    # Python is ready before scorm.js has drawn the learner's own problems: wait for them, or
    # the core would answer the page's default problem that the learner's is about to replace
    student = page.evaluate("() => String(window.API.LMSGetValue('cmi.core.student_id'))")
    want = {f"exercise-{k}": learner_seed(student, f"exercise-{k}") for k in KINDS}
    inner.wait_for_function(
        "want => Object.keys(want).every(n => { const w = AE.widgets.find(x => x.name === n);"
        " return w && !w.busy && w.state.seed === want[n]; })",
        arg=want,
        timeout=TIMEOUT_MS,
    )
    for kind in KINDS:
        assert answer_as_the_core(inner, kind, TIMEOUT_MS)["correct"], kind
    get = "k => String(window.API.LMSGetValue(k))"
    assert page.evaluate(get, "cmi.core.score.raw") == "100"
    assert page.evaluate(get, "cmi.core.lesson_status") == "completed"
    watch.assert_clean()
    ctx.close()
