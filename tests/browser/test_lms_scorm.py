"""A stage's SCORM 1.2 package in a real SCORM run-time (the npm scorm-again library's
Scorm12API): a host page provides window.API and loads the package's page in an iframe, as a
course platform does. A right answer raises cmi.core.score.raw; once every exercise of the page
has an answer, cmi.core.lesson_status is "completed". Without an API the page does what it does
on the site."""

from __future__ import annotations

import shutil
import zipfile

import pytest

from helpers import PY_READY, ROOT, TIMEOUT_MS, Watch, stages
from sitebuild import serve

SCORM_AGAIN = ROOT / "node_modules" / "scorm-again" / "dist" / "scorm12.min.js"
STAGE = stages()[0]
KINDS = list(STAGE.exercises)

HOST_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>A course platform</title>
<script src="scorm12.min.js"></script><script src="host.js"></script></head>
<body><h1>Course</h1><iframe id="sco" title="the package" width="1200" height="800"></iframe></body>
</html>
"""
HOST_JS = """window.API = new Scorm12API({ autocommit: false, logLevel: 5 });
window.calls = [];
["LMSInitialize", "LMSCommit", "LMSFinish"].forEach(function (name) {
  var f = window.API[name].bind(window.API);
  window.API[name] = function (a) { window.calls.push(name); return f(a); };
});
document.addEventListener("DOMContentLoaded", function () {
  document.getElementById("sco").src = "pkg/" + location.hash.slice(1) + "/index.html";
});
"""


@pytest.fixture(scope="module")
def lms(site, tmp_path_factory):
    """A course platform's origin: the host page, scorm-again, and the package unzipped."""
    root = tmp_path_factory.mktemp("lms")
    with zipfile.ZipFile(site / "scorm" / f"{STAGE.slug}.zip") as z:
        z.extractall(root / "pkg")
    shutil.copyfile(SCORM_AGAIN, root / "scorm12.min.js")
    (root / "host.html").write_text(HOST_HTML)
    (root / "host.js").write_text(HOST_JS)
    url, httpd = serve.in_background(root)
    yield url
    httpd.shutdown()


def cmi(page, key: str) -> str:
    return page.evaluate("k => String(window.API.LMSGetValue(k))", key)


def answer(frame, kind: str, right: bool) -> None:
    """Type the state's own answer (or a wrong one) and wait for Python's verdict."""
    sel = f"[data-widget=exercise-{kind}]"
    text = frame.evaluate("s => AE.widgets.find(w => w.el.matches(s)).state.solution_answer", sel)
    text = text if right else "12345"
    frame.locator(f"{sel} [data-role=answer]").fill(text)
    frame.locator(f"{sel} [data-action=check]").click()
    frame.wait_for_function(
        "([s, a]) => { const w = AE.widgets.find(x => x.el.matches(s));"
        " return !w.busy && w.state.feedback && w.state.params.answer === a; }",
        arg=[sel, text],
        timeout=TIMEOUT_MS,
    )
    verdict = frame.locator(f"{sel} [data-role=feedback]").get_attribute("data-correct")
    assert verdict == str(right).lower()


def test_package_reports_score_and_completion(browser, lms):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    watch = Watch(page, lms)
    page.goto(f"{lms}/host.html#{STAGE.slug}")
    page.wait_for_function("() => window.calls.indexOf('LMSInitialize') >= 0")
    frame = page.frame_locator("#sco")
    frame.locator(PY_READY).wait_for(state="attached")
    inner = next(f for f in page.frames if f.url.endswith(f"{STAGE.slug}/index.html"))
    assert cmi(page, "cmi.core.lesson_status") == "incomplete"

    answer(inner, KINDS[0], right=False)
    assert cmi(page, "cmi.core.score.raw") == "0"
    assert cmi(page, "cmi.core.lesson_status") == "incomplete"

    answer(inner, KINDS[0], right=True)
    first = int(cmi(page, "cmi.core.score.raw"))
    assert first == round(100 / len(KINDS))
    for kind in KINDS[1:]:
        answer(inner, kind, right=True)
    assert cmi(page, "cmi.core.score.raw") == "100"
    assert cmi(page, "cmi.core.lesson_status") == "completed"
    assert "LMSCommit" in page.evaluate("window.calls")
    inner.evaluate("window.dispatchEvent(new Event('pagehide'))")
    assert page.evaluate("window.calls").count("LMSFinish") == 1
    watch.assert_clean()
    ctx.close()


def test_without_an_api_the_page_is_the_site(page, server):
    page.goto(f"{server}/{STAGE.slug}/")
    page.wait_for_selector(PY_READY, state="attached")
    assert page.evaluate("AE.scorm.api") is None
    answer(page, KINDS[0], right=True)  # and answering works as ever
    page.watch.assert_clean()
