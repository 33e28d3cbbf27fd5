"""A stage's SCORM 1.2 package in a real SCORM run-time (the npm scorm-again library's
Scorm12API): a host page provides window.API, preloaded as a course platform would (the learner's
id, a resumed attempt's status, score and suspend data), and loads the package's page in an
iframe. Each learner gets the problems the core draws for their id; the first answer checked to
each problem counts, 100 × right first answers / problems; a resumed attempt keeps its score;
every answer and prediction is an interaction; the times and identifiers are in SCORM 1.2's
formats (its run-time environment's data types, RTE 3.4). Without an API the page does what it
does on the site."""

from __future__ import annotations

import json
import re

import pytest

from allreduce_explainer.exercises import problem
from allreduce_explainer.exercises.learners import learner_seed
from helpers import PY_READY, TIMEOUT_MS, Watch, course_platform, stages
from sitebuild import serve
from sitebuild.browser import check_answer

STAGE = stages()[0]
KINDS = list(STAGE.exercises)
NAMES = [f"exercise-{k}" for k in KINDS]
# SCORM 1.2 run-time data types (RTE 3.4.2): CMITimespan HHHH:MM:SS.SS (hours 2 to 4 digits),
# CMITime HH:MM:SS.SS, CMIIdentifier (no white space, at most 255), the vocabularies of
# cmi.interactions.n.type and .result, CMIString255 for .student_response
TIMESPAN = re.compile(r"^\d{2,4}:[0-5]\d:[0-5]\d(\.\d{1,2})?$")
TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,2})?$")
IDENTIFIER = re.compile(r"^[\x21-\x7e]{1,255}$")
TYPES = {"true-false", "choice", "fill-in", "matching", "performance", "sequencing", "likert"}
TYPES |= {"numeric"}
RESULTS = {"correct", "wrong", "unanticipated", "neutral"}
MAX_SUSPEND = 4096  # cmi.suspend_data: CMIString4096

HOST_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>A course platform</title>
<script src="scorm12.min.js"></script><script src="host.js"></script></head>
<body><h1>Course</h1><iframe id="sco" title="the package" width="1200" height="800"></iframe></body>
</html>
"""
# launch(slug, preload): a new run-time, preloaded with what the platform holds, then the SCO.
# Every LMSSetValue is kept with the error code scorm-again gave it.
HOST_JS = """window.launch = function (slug, preload) {
  window.API = new Scorm12API({ autocommit: false, logLevel: 5 });
  window.API.loadFromJSON(preload, "");
  window.calls = [];
  window.sets = [];
  ["LMSInitialize", "LMSCommit", "LMSFinish"].forEach(function (name) {
    var f = window.API[name].bind(window.API);
    window.API[name] = function (a) { window.calls.push(name); return f(a); };
  });
  var setValue = window.API.LMSSetValue.bind(window.API);
  window.API.LMSSetValue = function (k, v) {
    var r = setValue(k, v);
    window.sets.push([k, v, String(window.API.LMSGetLastError())]);
    return r;
  };
  document.getElementById("sco").src = "pkg/" + slug + "/index.html";
};
"""


@pytest.fixture(scope="module")
def lms(site, tmp_path_factory):
    """A course platform's origin: the host page, scorm-again, and the package unzipped."""
    root = tmp_path_factory.mktemp("lms")
    course_platform(root, site / "scorm" / f"{STAGE.slug}.zip", HOST_HTML, HOST_JS)
    url, httpd = serve.in_background(root)
    yield url
    httpd.shutdown()


class Attempt:
    """One session of a learner's attempt: the host page, the SCO's frame, what was set."""

    def __init__(self, browser, lms: str, preload: dict):
        self.ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.ctx.new_page()
        self.watch = Watch(self.page, lms)
        self.missing: list[str] = []
        self.page.on("response", lambda r: r.status >= 400 and self.missing.append(r.url))
        self.page.goto(f"{lms}/host.html")
        self.page.evaluate("([s, p]) => window.launch(s, p)", [STAGE.slug, preload])
        self.page.wait_for_function("() => window.calls.indexOf('LMSInitialize') >= 0")
        self.page.frame_locator("#sco").locator(PY_READY).wait_for(state="attached")
        self.frame = self.page.query_selector("#sco").content_frame()

    def cmi(self, key: str) -> str:
        return self.page.evaluate("k => String(window.API.LMSGetValue(k))", key)

    def sets(self) -> list[list[str]]:
        return self.page.evaluate("window.sets")

    def seeds(self, student: str) -> dict[str, int]:
        """Wait until every exercise shows the learner's problem; its seeds by name."""
        want = {n: learner_seed(student, n) for n in NAMES}
        self.frame.wait_for_function(
            "want => Object.keys(want).every(n => { const w = AE.widgets.find(x => x.name === n);"
            " return w && !w.busy && w.state.seed === want[n]; })",
            arg=want,
            timeout=TIMEOUT_MS,
        )
        return want

    def answer(self, kind: str, right: bool) -> str:
        """Type the state's own answer (or a wrong one) and wait for Python's verdict."""
        sel = f"[data-widget=exercise-{kind}]"
        text = self.frame.evaluate(
            "s => AE.widgets.find(w => w.el.matches(s)).state.solution_answer", sel
        )
        text = text if right else "12345"
        assert check_answer(self.frame, kind, text, TIMEOUT_MS) == right
        return text

    def leave(self) -> dict:
        """The learner leaves: what the platform keeps for the next session."""
        self.frame.evaluate("window.dispatchEvent(new Event('pagehide'))")
        assert self.page.evaluate("window.calls").count("LMSFinish") == 1
        written = {k: v for k, v, _ in self.sets()}  # exit and session_time are write-only
        kept = {
            "status": self.cmi("cmi.core.lesson_status"),
            "raw": self.cmi("cmi.core.score.raw"),
            "suspend": self.cmi("cmi.suspend_data"),
            "exit": written["cmi.core.exit"],
            "session_time": written["cmi.core.session_time"],
        }
        assert all(code == "0" for _, _, code in self.sets()), self.sets()
        assert self.missing == [], self.missing  # the package holds every file its page asks for
        self.watch.assert_clean()
        self.ctx.close()
        return kept


def preload(student: str, kept: dict | None = None) -> dict:
    """What the platform hands the run-time: the learner, and a resumed attempt's state."""
    core = {"student_id": student, "student_name": "Learner, A"}
    if kept is None:
        return {"core": core}
    core |= {"entry": "resume", "lesson_status": kept["status"], "score": {"raw": kept["raw"]}}
    return {"core": core, "suspend_data": kept["suspend"]}


def score(right: int) -> str:
    return str(round(100 * right / len(KINDS)))


def test_first_answer_counts_and_every_answer_is_an_interaction(browser, lms):
    student = "learner-a"
    a = Attempt(browser, lms, preload(student))
    assert a.cmi("cmi.core.lesson_status") == "incomplete"
    seeds = a.seeds(student)
    for kind, name in zip(KINDS, NAMES):  # the core's problem for that learner's seed
        shown = a.frame.locator(f"[data-widget={name}] [data-role=prompt]").inner_text()
        assert problem(kind, seeds[name]).prompt.split("\n")[0] in shown
    # graded work: the rule is stated, no worked solution, no other problem to draw
    rule = a.frame.locator("[data-role=scorm-rule]").inner_text()
    assert "first" in rule and str(len(KINDS)) in rule
    assert a.frame.locator("[data-role=solution]").count() == 0
    assert a.frame.locator("[data-action=solution]").first.is_hidden()
    assert a.frame.locator("[data-action=new-problem]").first.is_hidden()
    assert a.frame.locator("[data-role=exercises-intro]").is_hidden()  # "New problem draws..."

    typed = [a.answer(KINDS[0], right=False), a.answer(KINDS[0], right=True)]
    assert a.cmi("cmi.core.score.raw") == "0"  # wrong, then right: the first answer counts
    for kind in KINDS[1:]:
        typed.append(a.answer(kind, right=True))
    assert a.cmi("cmi.core.score.raw") == score(len(KINDS) - 1)
    assert a.cmi("cmi.core.lesson_status") == "completed"

    predictions = [
        {"widget": "ring_reduce_scatter", "id": "gpu2 step2", "answer": 17, "correct": False},
        {"widget": "latency", "id": "crossover", "answer": "tree", "correct": True},
        {"widget": "buckets", "id": "best-cap", "answer": None, "correct": None},
    ]
    for d in predictions:
        a.frame.evaluate(
            "d => document.body.dispatchEvent(new CustomEvent('ae:predicted',"
            " { bubbles: true, detail: d }))",
            d,
        )
    assert a.cmi("cmi.core.score.raw") == score(len(KINDS) - 1)  # predictions do not count

    sets = dict((k, v) for k, v, _ in a.sets())
    n = len(typed) + len(predictions)
    fields = ("id", "type", "student_response", "result", "time")
    entries = [{f: sets[f"cmi.interactions.{i}.{f}"] for f in fields} for i in range(n)]
    assert f"cmi.interactions.{n}.id" not in sets
    for e in entries:
        assert IDENTIFIER.match(e["id"]) and TIME.match(e["time"]), e
        assert e["type"] in TYPES and e["result"] in RESULTS, e
        assert len(e["student_response"]) <= 255
    answers = entries[: len(typed)]
    assert [e["student_response"] for e in answers] == typed
    assert [e["result"] for e in answers] == ["wrong"] + ["correct"] * len(KINDS)
    assert answers[0]["id"] == f"{NAMES[0]}.{seeds[NAMES[0]]}"
    got = [(e["type"], e["student_response"], e["result"]) for e in entries[len(typed) :]]
    assert got == [
        ("numeric", "17", "wrong"),
        ("choice", "tree", "correct"),
        ("choice", "", "neutral"),
    ]

    kept = a.leave()
    assert TIMESPAN.match(kept["session_time"]), kept["session_time"]
    assert kept["exit"] == "suspend"
    assert len(kept["suspend"]) < MAX_SUSPEND
    saved = json.loads(kept["suspend"])["p"]  # every problem with its seed and first verdict
    assert {k: v[:2] for k, v in saved.items()} == {
        name: [seeds[name], int(name != NAMES[0])] for name in NAMES
    }


def test_a_resumed_attempt_keeps_its_problems_and_its_score(browser, lms):
    student = "learner-b"
    assert learner_seed(student, NAMES[0]) != learner_seed("learner-a", NAMES[0])
    a = Attempt(browser, lms, preload(student))
    seeds = a.seeds(student)
    a.answer(KINDS[0], right=False)
    last = a.answer(KINDS[1], right=True)
    kept = a.leave()
    assert (kept["status"], kept["raw"]) == ("incomplete", score(1))

    b = Attempt(browser, lms, preload(student, kept))
    assert b.seeds(student) == seeds  # the same problems again
    field = b.frame.locator(f"[data-widget={NAMES[1]}] [data-role=answer]")
    assert field.input_value() == last
    assert b.cmi("cmi.core.score.raw") == score(1)
    b.answer(KINDS[0], right=True)  # its first answer, last session, was wrong
    assert b.cmi("cmi.core.score.raw") == score(1)
    for kind in KINDS[2:]:
        b.answer(kind, right=True)
    assert b.cmi("cmi.core.lesson_status") == "completed"
    assert b.cmi("cmi.core.score.raw") == score(len(KINDS) - 1)
    kept = b.leave()

    c = Attempt(browser, lms, preload(student, kept))  # completed: one more answer lowers nothing
    c.seeds(student)
    c.answer(KINDS[1], right=False)
    assert c.cmi("cmi.core.lesson_status") == "completed"
    assert c.cmi("cmi.core.score.raw") == score(len(KINDS) - 1)
    c.leave()


def test_an_empty_box_or_a_decimal_comma_gets_a_message_and_spends_nothing(browser, lms):
    """Python reads no answer in them (`counts` false): no interaction, no score, no first
    answer spent; the right answer after them is the first and counts."""
    student = "learner-c"
    a = Attempt(browser, lms, preload(student))
    a.seeds(student)
    kind = next(k for k in KINDS if problem(k, 0).dimension == "time")
    sel = f"[data-widget=exercise-{kind}]"
    right = a.frame.evaluate(
        "s => AE.widgets.find(w => w.el.matches(s)).state.solution_answer", sel
    )
    comma = right.replace(".", ",", 1) if "." in right else "0,975 s"
    for text in ("", comma):
        assert check_answer(a.frame, kind, text, TIMEOUT_MS) is False
        message = a.frame.locator(f"{sel} [data-role=feedback]").inner_text()
        assert ("type an answer" in message) if not text else ("with a point" in message)
        assert "right in" not in message  # not a unit slip: no number was read
    assert not any(k.startswith("cmi.interactions.") for k, _, _ in a.sets())
    assert a.cmi("cmi.core.score.raw") == "0"
    assert a.answer(kind, right=True)
    assert a.cmi("cmi.core.score.raw") == score(1)  # the first answer, right
    responses = [v for k, v, _ in a.sets() if k.endswith(".student_response")]
    assert responses == [right]
    saved = json.loads(a.leave()["suspend"])["p"]
    assert saved[f"exercise-{kind}"][1] == 1


def test_without_an_api_the_page_is_the_site(page, server):
    page.goto(f"{server}/{STAGE.slug}/")
    page.wait_for_selector(PY_READY, state="attached")
    assert page.evaluate("AE.scorm.api") is None
    assert page.locator("[data-role=scorm-rule]").count() == 0
    assert page.locator("[data-action=solution]").first.is_visible()
    sel = f"[data-widget={NAMES[0]}]"
    text = page.evaluate("s => AE.widgets.find(w => w.el.matches(s)).state.solution_answer", sel)
    page.locator(f"{sel} [data-role=answer]").fill(text)
    page.locator(f"{sel} [data-action=check]").click()  # and answering works as ever
    page.locator(f"{sel} [data-role=feedback][data-correct=true]").wait_for()
    page.watch.assert_clean()
