"""What every page's exercise kinds share: the `Problem` a kind returns, `@titled` (the title a
reader sees), the tolerances, and the helpers that word and round the figures. Each kind asks the
core (api.py, costs/, simulation/, logs/parse.py, training/, catalog/measured.py) for the answer
and for every figure of the worked solution, so the page's widgets and the exercises cannot
disagree, and may name the wrong answers a known misconception gives (`Problem.mistakes`), so
that feedback names the misconception.

Only randrange and choice are used on the generator: both are the same in CPython and Pyodide
for the same seed, so a seed in a URL names the same problem everywhere.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict, Unpack

from ... import api, fmt, records
from ...training import calculator, ddp
from ..units import COUNT, unit

TOLERANCE = 0.01  # relative: a student rounding to three significant figures is well inside
RATIO_TOLERANCE = 0.02  # a ratio of two rounded times
EXACT = 0.0
VECTOR, CHOICE = "vector", "choice"
MIB = ddp.MIB


@dataclass
class Problem:
    """One generated problem; `answer` is in base units (s, B, B/s) or a count, list or word."""

    prompt: str
    hint: str
    steps: list[str]
    answer: float | list | str
    dimension: str
    unit: str  # the unit the question asks for ("" for a count)
    tolerance: float
    given: dict  # the drawn numbers, for a reader (and a test) to recompute the answer
    choices: tuple[str, ...] = field(default_factory=tuple)
    # Wrong answers a known misconception gives, each with the message that names it; checked
    # before the unit slips and the generic messages. A kind draws only cases where each of its
    # misconceptions gives a wrong answer: one that gives the right one would pass unnoticed.
    mistakes: tuple[tuple[float | str, str], ...] = ()
    # "Your answer is twice (half) the right one": off where the answer is a cell's value or an
    # index, for which a factor of two is a coincidence, not a slip.
    factor_hints: bool = True

    def answer_text(self) -> str:
        """The final answer as a student would type it (and as the checker accepts it)."""
        if self.dimension == VECTOR:
            return "[" + ", ".join(int_text(v) for v in self.answer) + "]"
        if self.dimension == CHOICE:
            return self.answer
        if self.tolerance == EXACT:
            return int_text(self.answer) + (f" {self.unit}" if self.unit else "")
        return show(self.answer, self.unit)


class About(TypedDict):
    """What a problem says around its answer: the fields every kind writes for itself."""

    prompt: str
    hint: str
    steps: list[str]
    given: dict
    mistakes: NotRequired[tuple[tuple[float | str, str], ...]]
    factor_hints: NotRequired[bool]


# The answer's form sets the rest of a Problem, so that a kind names only what differs: the unit
# a quantity is asked in gives its dimension, and a form its tolerance.


def quantity(answer: float, unit_text: str, **about: Unpack[About]) -> Problem:
    """A time, an amount of data or a rate, asked in `unit_text`, right within TOLERANCE."""
    dimension = unit(unit_text).dimension
    return Problem(answer=answer, dimension=dimension, unit=unit_text, tolerance=TOLERANCE, **about)


def count(answer: float, tolerance: float = EXACT, **about: Unpack[About]) -> Problem:
    """A plain number: exact (a cell, an index, a number of steps) unless a tolerance is given
    (a ratio of rounded times, a bound)."""
    return Problem(answer=answer, dimension=COUNT, unit="", tolerance=tolerance, **about)


def vector(answer: list, **about: Unpack[About]) -> Problem:
    """A vector of whole numbers, typed as [1, 2], right to the last digit."""
    return Problem(answer=answer, dimension=VECTOR, unit="", tolerance=EXACT, **about)


def choice(
    answer: str,
    choices: tuple[str, ...],
    why: dict[str, str] | None = None,
    **about: Unpack[About],
) -> Problem:
    """One word of `choices`. `why`, if given, holds each word's message for a student who types
    it when it is wrong: every word but `answer` becomes a mistake with its message."""
    if why is not None:
        about["mistakes"] = tuple((w, message) for w, message in why.items() if w != answer)
    return Problem(
        answer=answer, dimension=CHOICE, unit="", tolerance=EXACT, choices=choices, **about
    )


def named(
    answer: float | str, tolerance: float, *mistakes: tuple[float | str, str]
) -> tuple[tuple[float | str, str], ...]:
    """The misconceptions that give a wrong answer no earlier one gives: where two wrong methods
    land on the same number (within `tolerance`), the first, the likelier, names it, so each
    listed message is the one a student who typed its value gets; one that lands on the right
    answer is dropped (it would pass unnoticed, and a kind draws around it where it matters)."""
    out: list[tuple[float | str, str]] = []
    for value, message in mistakes:
        if not any(_near(value, v, tolerance) for v in [answer, *(w for w, _ in out)]):
            out.append((value, message))
    return tuple(out)


def _near(a: float | str, b: float | str, tolerance: float) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= tolerance * max(abs(a), abs(b)) * (1 + 1e-9)


def titled(title: str) -> Callable[[Callable], Callable]:
    """Give a kind the title a reader sees above its problem and on the teacher's sheet."""

    def mark(kind: Callable) -> Callable:
        kind.title = title
        return kind

    return mark


def int_text(v) -> str:
    return f"{int(v):,}" if float(v).is_integer() else repr(v)


def plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def article(text: str) -> str:
    """`text` after "a" or "an" as it is read aloud: an 8-GPU job, an 11 GB gradient, a 16 MB
    message, a 110 GB one (a number reads from its leading group of digits: 18,000 is eighteen
    thousand, 1,800 one thousand ...)."""
    m = re.match(r"\d[\d,]*", text)
    if m:
        digits = m.group().rstrip(",")
        lead = digits.split(",")[0] if "," in digits else digits[: len(digits) % 3 or 3]
        vowel = lead.startswith("8") or lead in ("11", "18")
    else:
        vowel = text[:1].lower() in ("a", "e", "i", "o", "u")
    return ("an " if vowel else "a ") + text


capital = records.heading  # a sentence's first letter capitalised, as a page's label


def show(value: float, unit_text: str, digits: int = 3) -> str:
    """A value in base units, written in `unit_text` to `digits` significant figures."""
    scale = unit(unit_text).scale if unit_text else 1.0
    text = fmt.sig(value / scale, digits)
    return f"{text} {unit_text}" if unit_text else text


def time_unit(t: float) -> str:
    """The unit a solution writes a time in: the records' rule, as every door's (records.py)."""
    return records.time_unit([t])


def gpus_text(n: int, g: int) -> str:
    servers = n // g
    if servers == 1:
        return f"{n} GPUs in one server"
    return f"{n} GPUs in {servers} servers of {g}"


LINKS = (
    f"Inside a server each GPU reaches the others over NVLink at {api.H100_NVLINK_GBps:g} GB/s "
    f"per direction; between servers each GPU has its own 400 Gb/s network card "
    f"({api.NIC_400G_GBps:g} GB/s). Ignore latency."
)


def small_ring(rng: random.Random, lo: int = 3, hi: int = 7) -> tuple[int, list, list]:
    n = rng.randrange(lo, hi)
    values = [[rng.randrange(0, 10) for _ in range(n)] for _ in range(n)]
    trace = api.simulate(algorithm="ring", gpus=n, values=values, trace=True)["trace"]
    return n, values, trace


def table(values: list) -> str:
    return "; ".join(f"GPU {i}: {v}" for i, v in enumerate(values))


def follow(trace: list, chunk: int, first: int, last: int) -> list[str]:
    """The narration of chunk `chunk`'s moves in steps first..last (from 1)."""
    out = []
    for t in range(first, last + 1):
        for m in trace[t - 1]["messages"]:
            if m["start"] == chunk:
                verb = "adds it to its own" if trace[t - 1]["op"] == "add" else "copies it"
                now = trace[t - 1]["buffers"][m["dst"]][chunk]
                out.append(
                    f"Step {t}: GPU {m['src']} sends chunk {chunk} ({m['values'][0]}) to GPU "
                    f"{m['dst']}, which {verb}: {now}."
                )
    return out


def draw_model(rng: random.Random) -> tuple[str, int]:
    key = rng.choice(calculator.PRESET_MODELS)
    return key, api.model_name(key).params


GPUS_PER_SERVER = 8
