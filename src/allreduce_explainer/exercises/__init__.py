"""Check yourself: exercises generated from a seed, answered by the core, checked in Python.

exercise({"kind": ..., "seed": ...}) is a widget like the others: JSON-able parameters in, a
JSON-able state out (the kind's title, prompt, hint, worked solution, its final answer as a
student would type it, the unit and tolerance). With "answer" it adds "feedback":
{correct, message}. A bad kind or seed raises ParamError naming the field; a bad answer never
raises: it gets a message.

sheet() also puts the pages' check-yourself questions on a teacher's sheet: the build passes
them in as `bank` (the core does not read the pages), and `questions` turns them on.
"""

from __future__ import annotations

import random

from .. import fmt
from ..errors import ParamError
from ..params import Param, spec, validated
from .check import check_choice, check_quantity, check_vector, not_an_answer
from .kinds import KINDS, SHEET_KINDS, TITLES
from .kinds.common import CHOICE, VECTOR, Problem

__all__ = ["KINDS", "SHEET_KINDS", "TITLES", "exercise", "feedback", "problem", "sheet"]
MAX_SEED = 2**53  # a seed a page's URL and JavaScript's numbers carry exactly
MAX_ANSWER = 200
MAX_SHEET = 40  # problems on one sheet
MAX_BANK_PAGES = 40
MAX_PAGE_QUESTIONS = 20
MAX_QUESTION_TEXT = 2000  # characters of one question or answer

KIND = Param("kind", "ring_time", "choice", choices=tuple((k, k) for k in KINDS))
SEED = Param("seed", 0, "int", lo=0, hi=MAX_SEED)
EXERCISE = spec(KIND, SEED, Param("answer", None, "data"))  # any answer gets feedback
KINDS_OF_SHEET = Param("kinds", list(SHEET_KINDS), "data")
QUESTIONS = Param("questions", False, "bool")  # the chosen pages' check-yourself questions too
# [{"stage": "Stage 5 · ...", "kinds": [...], "questions": [{"q": ..., "a": ...}]}, ...]: one
# entry per page with exercises, in page order, as the build reads them from the front matter
BANK = Param("bank", [], "data")
SHEET = spec(
    KINDS_OF_SHEET, Param("seed", 0, "int", lo=0, hi=MAX_SEED - MAX_SHEET), QUESTIONS, BANK
)


def problem(kind, seed) -> Problem:
    """The problem `kind` draws from `seed`."""
    KIND.check(kind)
    return KINDS[kind](random.Random(SEED.check(seed)))


def feedback(p: Problem, answer) -> dict:
    """The verdict on a typed answer: {correct, message}, and `counts` false when the text is
    no answer (empty, unreadable: nothing a graded page should count); never an exception."""
    if not isinstance(answer, str):
        return not_an_answer("Type an answer as text.")
    if len(answer) > MAX_ANSWER:
        return not_an_answer("That answer is too long: a number and a unit.")
    if p.dimension == VECTOR:
        return check_vector(answer, p.answer, p.tolerance)
    if p.dimension == CHOICE:
        return check_choice(answer, p.answer, p.choices, p.mistakes)
    return check_quantity(
        answer, p.answer, p.dimension, p.unit, p.tolerance, p.mistakes, p.factor_hints
    )


def exercise(params=None) -> dict:
    """The widget: {"kind", "seed"[, "answer"]} -> the problem's state [and the feedback]."""
    given = validated(params, EXERCISE)
    kind, seed = given["kind"], given["seed"]
    p = problem(kind, seed)
    state = {
        "kind": "exercise",
        "exercise": kind,
        "title": TITLES[kind],
        "seed": seed,
        "params": {"kind": kind, "seed": seed},
        "prompt": p.prompt,
        "hint": p.hint,
        "solution_steps": p.steps,
        "solution_answer": p.answer_text(),
        "unit": p.unit,
        "dimension": p.dimension,
        "tolerance": p.tolerance,
        "tolerance_text": _tolerance_text(p),
        "choices": list(p.choices),
        "given": p.given,
    }
    if given["answer"] is not None:
        state["params"]["answer"] = given["answer"]
        state["feedback"] = feedback(p, given["answer"])
    return state


def _tolerance_text(p: Problem) -> str:
    if p.dimension == CHOICE:
        return "one word"
    if p.tolerance == 0:
        return "exact"
    return f"within {fmt.percent(p.tolerance)}" + (
        f"; in {p.unit} unless you write a unit" if p.unit else ""
    )


def sheet(params=None) -> dict:
    """A teacher's problem set: {"kinds": [...], "seed": N} -> the problems and, apart, the key.

    Problem i uses seed + i, so one seed names the whole sheet and each problem on it can be
    opened alone (its kind and seed are listed). With "questions": true, the check-yourself
    questions of every page in `bank` that has a chosen kind follow the problems, their answers
    in the key.
    """
    given = validated(params, SHEET)
    kinds, seed = _sheet_kinds(given["kinds"]), given["seed"]
    bank = _bank(given["bank"])
    problems, key = [], []
    for i, kind in enumerate(kinds):
        p = problem(kind, seed + i)
        head = {"number": i + 1, "kind": kind, "title": TITLES[kind], "seed": seed + i}
        problems.append({**head, "prompt": p.prompt, "unit": p.unit, "tolerance": p.tolerance})
        key.append({**head, "solution_steps": p.steps, "solution_answer": p.answer_text()})
    chosen = [page for page in bank if set(page["kinds"]) & set(kinds)]
    asked = [
        {"stage": page["stage"], "q": q["q"], "a": q["a"]}
        for page in (chosen if given["questions"] else [])
        for q in page["questions"]
    ]
    first = len(problems) + 1
    return {
        "kind": "sheet",
        "params": {**given, "kinds": list(kinds)},
        "problems": problems,
        "answers": key,
        "questions": [
            {"number": first + j, "stage": q["stage"], "q": q["q"]} for j, q in enumerate(asked)
        ],
        "question_answers": [{"number": first + j, **q} for j, q in enumerate(asked)],
        "titles": dict(TITLES),
    }


def _sheet_kinds(kinds) -> list[str]:
    """The kinds asked for, as a list or a comma-separated text, each a known kind."""
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",") if k.strip()]
    if not isinstance(kinds, list) or not kinds or len(kinds) > MAX_SHEET:
        raise ParamError("kinds", f"must be a list of 1 to {MAX_SHEET} exercise kinds")
    bad = [k for k in kinds if not isinstance(k, str) or k not in KINDS]
    if bad:
        raise ParamError(
            "kinds", f"unknown kind {str(bad[0])[:40]!r}: choose from {', '.join(KINDS)}"
        )
    return kinds


def _text(value) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_QUESTION_TEXT


def _bank(bank) -> list[dict]:
    """The build's question bank, checked: a list of pages, each with a stage label, its kinds
    and its questions (text only: the sheet shows them as they are)."""
    shape = f"must be a list of up to {MAX_BANK_PAGES} pages: {{stage, kinds, questions}}"
    if not isinstance(bank, list) or len(bank) > MAX_BANK_PAGES:
        raise ParamError("bank", shape)
    for page in bank:
        ok = (
            isinstance(page, dict)
            and set(page) == {"stage", "kinds", "questions"}
            and _text(page["stage"])
            and isinstance(page["kinds"], list)
            and all(isinstance(k, str) for k in page["kinds"])
            and isinstance(page["questions"], list)
            and len(page["questions"]) <= MAX_PAGE_QUESTIONS
            and all(
                isinstance(q, dict) and set(q) == {"q", "a"} and _text(q["q"]) and _text(q["a"])
                for q in page["questions"]
            )
        )
        if not ok:
            raise ParamError("bank", shape)
    return bank
