"""Check yourself: exercises generated from a seed, answered by the core, checked in Python.

exercise({"kind": ..., "seed": ...}) is a widget like the others: JSON-able parameters in, a
JSON-able state out (prompt, hint, worked solution, its final answer as a student would type it,
the unit and tolerance). With "answer" it adds "feedback": {correct, message}. A bad kind or seed
raises ParamError naming the field; a bad answer never raises: it gets a message.
"""

from __future__ import annotations

import random

from ..errors import ParamError
from ..validate import count
from .check import check_choice, check_quantity, check_vector
from .kinds import CHOICE, KINDS, SHEET_KINDS, VECTOR, Problem

__all__ = ["KINDS", "SHEET_KINDS", "exercise", "feedback", "problem", "sheet"]
MAX_SEED = 2**53  # a seed a page's URL and JavaScript's numbers carry exactly
MAX_ANSWER = 200
MAX_SHEET = 40  # problems on one sheet


def problem(kind, seed) -> Problem:
    """The problem `kind` draws from `seed`."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise ParamError("kind", f"must be one of {', '.join(KINDS)}")
    s = count("seed", seed, 0, MAX_SEED)
    return KINDS[kind](random.Random(s))


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
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParamError("_", "parameters must be an object")
    unknown = sorted(set(params) - {"kind", "seed", "answer"})
    if unknown:
        raise ParamError(str(unknown[0])[:40], "is not a parameter of this widget")
    kind, seed = params.get("kind", "ring_time"), params.get("seed", 0)
    p = problem(kind, seed)
    state = {
        "kind": "exercise",
        "exercise": kind,
        "seed": int(seed),
        "params": {"kind": kind, "seed": int(seed)},
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
    if params.get("answer") is not None:
        state["params"]["answer"] = params["answer"]
        state["feedback"] = feedback(p, params["answer"])
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
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParamError("_", "parameters must be an object")
    unknown = sorted(set(params) - {"kinds", "seed"})
    if unknown:
        raise ParamError(str(unknown[0])[:40], "is not a parameter of this widget")
    kinds = params.get("kinds", list(SHEET_KINDS))
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",") if k.strip()]
    if not isinstance(kinds, list) or not kinds or len(kinds) > MAX_SHEET:
        raise ParamError("kinds", f"must be a list of 1 to {MAX_SHEET} exercise kinds")
    bad = [k for k in kinds if not isinstance(k, str) or k not in KINDS]
    if bad:
        raise ParamError(
            "kinds", f"unknown kind {str(bad[0])[:40]!r}: choose from {', '.join(KINDS)}"
        )
    seed = count("seed", params.get("seed", 0), 0, MAX_SEED - MAX_SHEET)
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
