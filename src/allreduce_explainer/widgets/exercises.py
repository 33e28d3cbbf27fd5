"""Check yourself: one exercise (a problem drawn from a seed, checked when answered) and a
teacher's sheet of them. The problems, answers and checks are the core's exercises package; this
module declares their parameters, so pages, URLs and the course table follow one spec. The sheet's
question banks can be made here too, in the browser, with links under the address the sheet was
opened at (`bank_file`, which the worker's bridge calls)."""

from __future__ import annotations

import base64
from collections.abc import Iterable

from .. import exercises as core
from ..errors import ParamError
from ..exercises import export
from ..exercises.learners import learner_seed
from ..params import Param, spec, validated
from . import Widget, views

EXERCISE = spec(core.KIND, core.SEED, Param("answer", None, "text", optional=True))
SHEET = spec(
    core.KINDS_OF_SHEET,
    Param("seed", 0, "int", "Seed (it names the sheet)", lo=0, hi=core.MAX_SEED - core.MAX_SHEET),
    core.QUESTIONS,
    core.BANK,
)


def exercise(params=None) -> dict:
    """The problem `kind` draws from `seed`, with feedback on `answer` when one is given."""
    p = validated(params, EXERCISE)
    given = {k: v for k, v in p.items() if v is not None}
    return core.exercise(given) | {"params": p}


def exercise_sheet(params=None) -> dict:
    """A problem set from chosen kinds and one seed, with its answer key apart; with
    `questions`, the check-yourself questions of the pages in `bank` that have a chosen kind."""
    return core.sheet(validated(params, SHEET))


BANK_FILE = spec(
    Param("format", "moodle", "choice", choices=tuple((f, f) for f in export.FORMATS)),
    Param("site", "", "data"),
    Param("places", {}, "data"),
)
MIME = {
    "moodle": "application/xml",
    "qti": "application/zip",
    "gift": "text/plain",
    "csv": "text/csv",
}
PLACE_KEYS = {"page", "slug", "objective"}


def bank_file(params=None) -> dict:
    """The course's question bank in one format, as the build writes it to site/banks/ when it
    knows the site's address: every kind in `places` (site/banks/places.json: kind -> its page,
    slug and objective), export.BANK_COUNT problems each from export.BANK_SEED, with links under
    `site`, the absolute address the teacher's sheet was opened at. The file's bytes come back
    in base64, for the page to offer as a download."""
    given = validated(params, BANK_FILE)
    site = export.site_address(given["site"])
    if not site:
        raise ParamError("site", "must be the site's absolute address, such as https://your.host/")
    places = _places(given["places"])
    qs = export.questions(list(places), export.BANK_SEED, export.BANK_COUNT, places, site)
    fmt = given["format"]
    return {
        "kind": "file",
        "file": export.BANK_FILES[fmt][0],
        "mime": MIME[fmt],
        "questions": len(qs),
        "base64": base64.b64encode(export.export(fmt, qs)).decode("ascii"),
    }


def _places(places) -> dict[str, export.Place]:
    """site/banks/places.json, checked: known kinds, each with its page, slug and objective."""
    shape = "must map exercise kinds to {page, slug, objective} (site/banks/places.json)"
    if not isinstance(places, dict) or not places or len(places) > len(core.KINDS):
        raise ParamError("places", shape)
    for kind, place in places.items():
        ok = (
            kind in core.KINDS
            and isinstance(place, dict)
            and set(place) == PLACE_KEYS
            and all(isinstance(v, str) and len(v) <= core.MAX_QUESTION_TEXT for v in place.values())
        )
        if not ok:
            raise ParamError("places", shape)
    return {kind: export.Place(**place) for kind, place in places.items()}


def question_bank(pages: Iterable) -> list[dict]:
    """The sheet's `bank` from the course's pages (sitebuild's Page records: number, title,
    exercises, questions): one entry per page with exercises, in page order."""
    return [
        {
            "stage": f"Stage {p.number} · {p.title}",
            "kinds": list(p.exercises),
            "questions": [{"q": q.q, "a": q.a} for q in p.questions],
        }
        for p in pages
        if p.exercises
    ]


def sheet_kinds(pages: Iterable) -> list[str]:
    """The sheet's default kinds from the course's pages: the first kind of every page with
    exercises, in page order (one problem a page)."""
    return [p.exercises[0] for p in pages if p.exercises]


MAX_STUDENT_ID = 255  # SCORM 1.2's CMIIdentifier
MAX_NAMES = 50  # exercises on one page, and plenty to spare
LEARNER = spec(Param("student", "", "text"), Param("names", [], "data"))


def learner_seeds(params=None) -> dict:
    """Inside a course platform's package: each of a page's exercises (`names`, their instance
    names) drawn for the learner `student` (SCORM's cmi.core.student_id), as {"seeds": {name:
    seed}}; client/js/scorm.js shows each exercise at its seed."""
    given = validated(params, LEARNER)
    student, names = given["student"], given["names"]
    if len(student) > MAX_STUDENT_ID:
        raise ParamError("student", f"must be at most {MAX_STUDENT_ID} characters")
    ok = isinstance(names, list) and len(names) <= MAX_NAMES
    if not ok or not all(isinstance(n, str) and 0 < len(n) <= 100 for n in names):
        raise ParamError("names", f"must be a list of at most {MAX_NAMES} exercise names")
    return {"kind": "seeds", "seeds": {n: learner_seed(student, n) for n in names}}


RECORDS = (
    Widget("exercise", exercise, EXERCISE, views.EXERCISE),
    Widget("exercise_sheet", exercise_sheet, SHEET, views.SHEET, in_snapshot=False),
)
