"""Check yourself: exercises generated from a seed, answered by the core, checked in Python.

exercise({"kind": ..., "seed": ...}) is a widget like the others: JSON-able parameters in, a
JSON-able state out (prompt, hint, worked solution, its final answer as a student would type it,
the unit and tolerance). With "answer" it adds "feedback": {correct, message}. A bad kind or seed
raises ParamError naming the field; a bad answer never raises: it gets a message.
"""

from __future__ import annotations

import random

from ..errors import ParamError
from ..params import Param, spec, validated
from .check import check_choice, check_quantity, check_vector
from .kinds import CHOICE, KINDS, SHEET_KINDS, VECTOR, Problem

__all__ = ["KINDS", "SHEET_KINDS", "exercise", "feedback", "problem", "sheet"]
MAX_SEED = 2**53  # a seed a page's URL and JavaScript's numbers carry exactly
MAX_ANSWER = 200
MAX_SHEET = 40  # problems on one sheet

KIND = Param("kind", "ring_time", "choice", choices=tuple((k, k) for k in KINDS))
SEED = Param("seed", 0, "int", lo=0, hi=MAX_SEED)
EXERCISE = spec(KIND, SEED, Param("answer", None, "data"))  # any answer gets feedback
KINDS_OF_SHEET = Param("kinds", list(SHEET_KINDS), "data")
SHEET = spec(KINDS_OF_SHEET, Param("seed", 0, "int", lo=0, hi=MAX_SEED - MAX_SHEET))


def problem(kind, seed) -> Problem:
    """The problem `kind` draws from `seed`."""
    KIND.check(kind)
    return KINDS[kind](random.Random(SEED.check(seed)))


def feedback(p: Problem, answer) -> dict:
    """The verdict on a typed answer: {correct, message}; never an exception."""
    if not isinstance(answer, str):
        return {"correct": False, "message": "Type an answer as text."}
    if len(answer) > MAX_ANSWER:
        return {"correct": False, "message": "That answer is too long: a number and a unit."}
    if p.dimension == VECTOR:
        out = check_vector(answer, p.answer, p.tolerance)
    elif p.dimension == CHOICE:
        out = check_choice(answer, p.answer, p.choices)
    else:
        out = check_quantity(answer, p.answer, p.dimension, p.unit, p.tolerance)
    return out


def exercise(params=None) -> dict:
    """The widget: {"kind", "seed"[, "answer"]} -> the problem's state [and the feedback]."""
    given = validated(params, EXERCISE)
    kind, seed = given["kind"], given["seed"]
    p = problem(kind, seed)
    state = {
        "kind": "exercise",
        "exercise": kind,
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
    return f"within {p.tolerance:.0%}" + (
        f"; in {p.unit} unless you write a unit" if p.unit else ""
    )


def sheet(params=None) -> dict:
    """A teacher's problem set: {"kinds": [...], "seed": N} -> the problems and, apart, the key.

    Problem i uses seed + i, so one seed names the whole sheet and each problem on it can be
    opened alone (its kind and seed are listed).
    """
    given = validated(params, SHEET)
    kinds, seed = given["kinds"], given["seed"]
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",") if k.strip()]
    if not isinstance(kinds, list) or not kinds or len(kinds) > MAX_SHEET:
        raise ParamError("kinds", f"must be a list of 1 to {MAX_SHEET} exercise kinds")
    bad = [k for k in kinds if not isinstance(k, str) or k not in KINDS]
    if bad:
        raise ParamError(
            "kinds", f"unknown kind {str(bad[0])[:40]!r}: choose from {', '.join(KINDS)}"
        )
    problems, key = [], []
    for i, kind in enumerate(kinds):
        p = problem(kind, seed + i)
        head = {"number": i + 1, "kind": kind, "seed": seed + i}
        problems.append({**head, "prompt": p.prompt, "unit": p.unit, "tolerance": p.tolerance})
        key.append({**head, "solution_steps": p.steps, "solution_answer": p.answer_text()})
    return {
        "kind": "sheet",
        "params": {"kinds": list(kinds), "seed": seed},
        "problems": problems,
        "answers": key,
    }
