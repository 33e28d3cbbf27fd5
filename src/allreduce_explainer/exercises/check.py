"""The verdict on a typed answer: right within the problem's tolerance, or wrong with a reason.

When a wrong answer is one a known misconception gives (the problem's `mistakes`: algbw where
busbw was asked, a finished sum for a stale cell), the message names the misconception, before
any other reading of the number. When it becomes right under a likely slip (GB for GiB, bits for
bytes, ms for s, a number without its unit in another unit), the message says which slip: that is
the hint a student needs, and it does not give the answer away.
"""

from __future__ import annotations

from .units import (
    BYTES,
    COUNT,
    DIMENSION_NAMES,
    RATE,
    SWAP_PREFIX,
    TIME,
    AnswerError,
    Quantity,
    Unit,
    parse,
    parse_vector,
    unit,
)

# Units a bare number, or one with the wrong prefix, may have been meant in.
_SLIPS = {
    TIME: ("s", "ms", "us", "ns"),
    BYTES: ("B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"),
    RATE: ("B/s", "MB/s", "GB/s", "TB/s", "Gb/s", "Mb/s", "GiB/s", "MiB/s"),
}


def close(got: float, want: float, tolerance: float) -> bool:
    """Within `tolerance` relative to the answer (exact for a zero answer)."""
    if want == 0:
        return got == 0
    return abs(got - want) <= tolerance * abs(want) * (1 + 1e-12)


def verdict(correct: bool, message: str) -> dict:
    return {"correct": correct, "message": message}


def not_an_answer(message: str) -> dict:
    """The verdict on text that is no answer (an empty box, a decimal comma, a word where a
    number goes): a message, and `counts` false, so a graded page spends nothing on it (the
    SCORM package counts only the first answer to each problem)."""
    return {"correct": False, "message": message, "counts": False}


Mistakes = tuple[tuple[float | str, str], ...]  # (a wrong answer, the message that names it)


def check_quantity(
    text,
    want: float,
    dimension: str,
    asked: str,
    tolerance: float,
    mistakes: Mistakes = (),
    factor_hints: bool = True,
    otherwise: str = "Not correct. Try the hint, or check each step again.",
) -> dict:
    """A number with a unit against `want` (base units), asked in the unit `asked`.

    `mistakes` are checked before the unit slips: a server's 8 cards summed is 8 times one card,
    as a number in bits would be, and the kind knows which misconception its problem invites.
    `factor_hints` allows "twice" and "half"; `otherwise` is the message when nothing names
    the slip (a prediction has no hint to try)."""
    try:
        q = _parse(text)
    except AnswerError as e:
        return not_an_answer(str(e))
    try:
        q = _of_dimension(q, dimension, asked)
    except AnswerError as e:  # an answer, in a unit of another kind: a wrong one
        return verdict(False, str(e))
    asked_unit = _asked(asked)
    got = q.base(asked_unit)
    if close(got, want, tolerance):
        return verdict(True, "Correct.")
    for wrong, message in mistakes:  # the kind's own misconceptions before any generic reading
        if not close(wrong, want, tolerance) and close(got, wrong, tolerance):
            return verdict(False, message)
    slip = _slip(q, asked_unit, want, dimension, tolerance)
    if slip:  # the number is right, only its unit is not
        return verdict(False, slip)
    if close(abs(got), abs(want), tolerance):
        return verdict(False, "Check the sign.")
    for factor, what in ((2, "twice"), (0.5, "half")) if factor_hints else ():
        if close(got, want * factor, tolerance):
            return verdict(False, f"Not quite: your answer is {what} the right one.")
    return verdict(False, otherwise)


def read_quantity(text, dimension: str, asked: str) -> float:
    """`text` as a quantity of `dimension` in base units, a bare number read in `asked`: what a
    prediction is judged on (a range, not one answer). AnswerError, with the sentence the
    exercises show, when it is not one."""
    return _read(text, dimension, asked).base(_asked(asked))


def _asked(asked: str) -> Unit:
    return unit(asked) or Unit("", COUNT, 1.0)


def _read(text, dimension: str, asked: str) -> Quantity:
    """The typed quantity, or AnswerError saying why it is not one of `dimension`."""
    return _of_dimension(_parse(text), dimension, asked)


def _parse(text) -> Quantity:
    try:
        return parse(text)
    except AnswerError as e:
        raise AnswerError(f"I could not read that: {e}.") from None


def _of_dimension(q: Quantity, dimension: str, asked: str) -> Quantity:
    if q.unit is None or q.unit.dimension == dimension:
        return q
    if dimension == COUNT:
        raise AnswerError(f"The answer is a plain number, not {q.unit.text}.")
    if q.unit.dimension == COUNT:
        raise AnswerError(f"The answer is {DIMENSION_NAMES[dimension]}: give it in {asked}.")
    raise AnswerError(
        f"{q.unit.text} measures {DIMENSION_NAMES[q.unit.dimension]}; the answer is "
        f"{DIMENSION_NAMES[dimension]}, in {asked}."
    )


def _slip(q: Quantity, asked: Unit, want: float, dimension: str, tolerance: float) -> str | None:
    """The message for an answer that is right in another unit than the one written."""
    written = q.unit or asked
    if dimension in (BYTES, RATE) and written.prefix in SWAP_PREFIX and not written.bits:
        other = SWAP_PREFIX[written.prefix]
        swapped = unit(other + "B" + ("/s" if dimension == RATE else ""))
        if close(q.number * swapped.scale, want, tolerance):
            return (
                f"Your number is right in {swapped.text}, but you wrote {written.text}: "
                f"{'1 ' + other}B is {_power(other)} bytes. Convert, or change the unit."
            )
    if dimension in (BYTES, RATE):
        if close(q.number * written.scale * 8, want, tolerance) and written.bits:
            return (
                f"{written.text} counts bits; a byte is 8 bits. Your number is right in bytes: "
                "write B, not b."
            )
        if close(q.number * written.scale / 8, want, tolerance) and not written.bits:
            return (
                "Your number is right in bits, not bytes (a byte is 8 bits): write b, "
                "or divide by 8."
            )
    if dimension in _SLIPS:
        for name in _SLIPS[dimension]:
            u = unit(name)
            if u.scale != written.scale and close(q.number * u.scale, want, tolerance):
                if q.unit is None:
                    return f"Your number is right in {name}, but the question asks in {asked.text}."
                return f"Your number is right in {name}, not in {written.text}: check the unit."
    return None


def _power(prefix: str) -> str:
    return {"k": "10^3", "M": "10^6", "G": "10^9", "T": "10^12", "P": "10^15"}.get(
        prefix, f"2^{10 * ('KMGTP'.index(prefix[0]) + 1)}"
    )


def check_vector(text, want: list, tolerance: float = 0.0) -> dict:
    try:
        got = parse_vector(text)
    except AnswerError as e:
        return not_an_answer(f"I could not read that: {e}.")
    if len(got) != len(want):
        return verdict(False, f"Give {len(want)} numbers, one per element; you gave {len(got)}.")
    wrong = [i for i, (g, w) in enumerate(zip(got, want)) if not close(g, w, tolerance)]
    if not wrong:
        return verdict(True, "Correct.")
    which = ", ".join(str(i) for i in wrong)
    return verdict(False, f"Not correct: check element{'s' if len(wrong) > 1 else ''} {which}.")


def check_choice(text, want: str, choices: tuple[str, ...], mistakes: Mistakes = ()) -> dict:
    """One word of `choices`, a unique prefix accepted; a wrong word named in `mistakes` gets
    its message."""
    if not isinstance(text, str) or not text.strip():
        return not_an_answer(f"Type one of: {', '.join(choices)}.")
    t = text.strip().lower()
    hits = [c for c in choices if c.startswith(t) or t.startswith(c)]
    if len(hits) != 1:
        return not_an_answer(f"I could not read that: type one of {', '.join(choices)}.")
    if hits[0] == want:
        return verdict(True, "Correct.")
    named = [message for wrong, message in mistakes if wrong == hits[0] and wrong != want]
    return verdict(False, named[0] if named else "Not correct. Try the hint, then check again.")
