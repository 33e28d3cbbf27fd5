"""What the labs (labs/source/, nbgrader assignments) ask of the exercises: a problem of a kind
fixed by what it draws, the verdict on a lab's answer by the exercises' own checker, and the
answer a kind's named misconception gives, as a student would write it.

A lab names its problem by kind and by the numbers it needs drawn (`problem("speedup",
gpus=64)`), not by a seed: the first seed that draws them and names a misconception, so a kind
that draws differently tomorrow still gives the lab its 64 GPUs, and every graded answer has a
wrong one the checker names. A lab's answer is a number in the unit its problem asks (or the
word, or the vector), or the text a student would type; `check` hands it to `feedback`, which the
pages' exercises use, misconception messages and all.
"""

from __future__ import annotations

from ..errors import ParamError
from . import feedback
from . import problem as drawn
from .kinds.common import CHOICE, VECTOR, Problem
from .units import unit

SEEDS = 1000  # seeds a lab's problem is looked for in


def problem(kind: str, **given) -> Problem:
    """The first seed's problem of `kind` that draws `given` (each a key of its `given`) and
    names a misconception the checker marks wrong (a kind may list one that lands on the right
    answer on some seed); ParamError naming the kind if none of SEEDS does."""
    for seed in range(SEEDS):
        p = drawn(kind, seed)
        if not (p.mistakes and all(p.given.get(k) == v for k, v in given.items())):
            continue
        if not check(p, misconception(p))["correct"]:
            return p
    raise ParamError("kind", f"{kind} draws no problem with {given} and a misconception")


def typed(p: Problem, answer) -> str:
    """`answer` as a student types it: text as it is, a number with the unit `p` asks in."""
    if isinstance(answer, str):
        return answer
    if p.dimension == VECTOR:
        return str(list(answer))
    return f"{answer!r} {p.unit}".strip()


def check(p: Problem, answer) -> dict:
    """The exercises' verdict on `answer`: {correct, message}, the message naming the
    misconception a known wrong answer shows."""
    return feedback(p, typed(p, answer))


def say(verdict: dict) -> None:
    """A verdict as a lab prints it: right or not, and the checker's (or the widget's) words."""
    print(("✓ " if verdict["correct"] else "✗ ") + verdict["message"])


def misconception(p: Problem) -> float | str:
    """The answer `p`'s first named misconception gives, in the form a lab's answer takes: the
    word, or the number in the unit `p` asks."""
    wrong = p.mistakes[0][0]
    if p.dimension == CHOICE or not p.unit:
        return wrong
    return wrong / unit(p.unit).scale
