"""Check yourself: one exercise (a problem drawn from a seed, checked when answered) and a
teacher's sheet of them. The problems, answers and checks are the core's exercises package; this
module declares their parameters, so pages, URLs and the course table follow one spec."""

from __future__ import annotations

from collections.abc import Iterable

from .. import exercises as core
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


RECORDS = (
    Widget("exercise", exercise, EXERCISE, views.EXERCISE),
    Widget("exercise_sheet", exercise_sheet, SHEET, views.SHEET),
)
