"""A student's typed answer read as a number with a unit: "0.55 s", "550 ms", "13.04 GiB",
"400 Gb/s", "2^20", "1,048,576", "1.2e6", "64 KiB".

Every quantity is brought to a base unit per dimension: seconds, bytes, bytes per second, or a
plain count. Decimal prefixes are powers of 1000 (GB = 1e9 B, as link rates and nccl-tests count),
binary ones powers of 1024 (GiB = 2^30 B); a lower-case b is a bit (Gb/s is a line rate). Bad text
raises AnswerError with a sentence for the student, never anything else.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

TIME, BYTES, RATE, COUNT = "time", "bytes", "rate", "count"
DIMENSION_NAMES = {TIME: "a time", BYTES: "an amount of data", RATE: "a rate", COUNT: "a number"}

_TIME_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "ms": 1e-3,
    "msec": 1e-3,
    "millisecond": 1e-3,
    "milliseconds": 1e-3,
    "us": 1e-6,
    "usec": 1e-6,
    "microsecond": 1e-6,
    "microseconds": 1e-6,
    "ns": 1e-9,
    "nanosecond": 1e-9,
    "nanoseconds": 1e-9,
    "min": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
}
_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
_BYTE_WORDS = {"byte": 1.0, "bytes": 1.0, "bit": 0.125, "bits": 0.125}
# The counterpart of each prefix in the other system, for "you meant GiB" hints.
SWAP_PREFIX = {"k": "Ki", "K": "Ki", "M": "Mi", "G": "Gi", "T": "Ti", "P": "Pi"}
SWAP_PREFIX.update({v: k for k, v in SWAP_PREFIX.items() if k != "k"})


class AnswerError(ValueError):
    """Text that is not a readable answer; the message is for the student."""


@dataclass(frozen=True)
class Unit:
    text: str  # as the student wrote it, tidied ("GB/s")
    dimension: str
    scale: float  # base units per one of this unit
    prefix: str = ""  # k, M, Gi ... for data units
    bits: bool = False


@dataclass(frozen=True)
class Quantity:
    number: float  # as typed, in `unit` (or in the asked unit when unit is None)
    unit: Unit | None

    def base(self, asked: Unit) -> float:
        """The value in base units; a bare number is taken in the asked unit."""
        return self.number * (self.unit or asked).scale


def _data_unit(text: str) -> Unit | None:
    """B, kB, MiB, Gb, GiB, bytes, bits ... (no rate)."""
    if text in _BYTE_WORDS:
        return Unit(text, BYTES, _BYTE_WORDS[text], "", text.startswith("bit"))
    m = re.fullmatch(r"([kKMGTP]i?)?([bB])", text)
    if not m:
        return None
    prefix, letter = m.group(1) or "", m.group(2)
    scale = _BINARY[prefix] if prefix.endswith("i") else _DECIMAL[prefix]
    if prefix == "k" or prefix == "K":
        prefix = "k"
    bits = letter == "b"
    return Unit(text, BYTES, scale / 8 if bits else scale, prefix, bits)


_COUNT_WORDS = re.compile(
    r"^(x|times|gpus?|steps?|buckets?|messages?|chunks?|rounds?|parameters?|params?|elements?)$"
)


def unit(text: str) -> Unit | None:
    """The unit named by `text`; None for no unit; AnswerError if unknown."""
    text = tidy(text)
    if not text:
        return None
    if _COUNT_WORDS.match(text.lower()):
        return Unit(text, COUNT, 1.0)
    if text in _TIME_UNITS or text.lower() in _TIME_UNITS:
        return Unit(text, TIME, _TIME_UNITS.get(text, _TIME_UNITS.get(text.lower(), 1.0)))
    rate = re.fullmatch(r"(.+?)(?:/s|/sec|ps| per second)", text)
    if rate:
        data = _data_unit(rate.group(1))
        if data:
            return Unit(text, RATE, data.scale, data.prefix, data.bits)
    data = _data_unit(text)
    if data:
        return data
    raise AnswerError(
        f"I do not know the unit “{text}”: write s, ms, µs, B, kB, MB, GB, KiB, MiB, GiB, "
        "GB/s or Gb/s"
    )


_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_POWER = re.compile(rf"^({_NUMBER})\s*(?:\^|\*\*)\s*([+-]?\d+)")
_SCI = re.compile(rf"^({_NUMBER})\s*[x*]\s*10\s*(?:\^|\*\*)\s*([+-]?\d+)")
_PLAIN = re.compile(rf"^{_NUMBER}")
# thousands grouped by commas; a leading 0 ("0,975") is a decimal comma, never a group
_GROUPED = re.compile(r"^[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")


def tidy(text: str) -> str:
    """Unicode a student may paste, made plain: − × µ μ, thin and no-break spaces."""
    for a, b in (("−", "-"), ("×", "x"), ("·", "*"), ("µ", "u"), ("μ", "u")):
        text = text.replace(a, b)
    for space in ("\u2009", "\u202f", "\u00a0", "_"):
        text = text.replace(space, "")
    text = text.strip()
    for lead in ("about ", "approx ", "~", "≈", "="):  # "≈ 0.55 s" is an answer too
        if text.lower().startswith(lead):
            text = text[len(lead) :].strip()
    return text[:-1].rstrip() if text.endswith(".") and not text[-2:-1].isdigit() else text


def number_prefix(text: str) -> tuple[float, str]:
    """The number at the start of `text` and what follows it."""
    for pattern, power in ((_SCI, True), (_POWER, False)):
        m = pattern.match(text)
        if m:
            base, exp = float(m.group(1)), int(m.group(2))
            if abs(exp) > 300:
                raise AnswerError("that exponent is far too large for an answer here")
            try:
                value = base * 10.0**exp if power else base**exp
            except OverflowError:
                raise AnswerError("that number is far too large for an answer here") from None
            if math.isinf(value):
                raise AnswerError("that number is far too large for an answer here")
            return value, text[m.end() :]
    m = _GROUPED.match(text)
    if m:
        return float(m.group(0).replace(",", "")), text[m.end() :]
    m = _PLAIN.match(text)
    if not m:
        raise AnswerError("start with a number, such as 0.55 s, 14 GB or 1.2e6")
    rest = text[m.end() :]
    comma = re.match(r",(\d+)", rest)
    if comma:
        raise AnswerError(
            f"write decimals with a point, {m.group(0)}.{comma.group(1)}, not "
            f"{m.group(0)},{comma.group(1)} (thousands as 1,048,576)"
        )
    return float(m.group(0)), rest


def parse(text) -> Quantity:
    """A typed answer as a Quantity; AnswerError (with a message for the student) otherwise."""
    if not isinstance(text, str):
        raise AnswerError("type an answer as text, such as 0.55 s")
    t = tidy(text)
    if not t:
        raise AnswerError("type an answer first")
    if len(t) > 100:
        raise AnswerError("that answer is too long: a number and a unit are enough")
    value, rest = number_prefix(t)
    if value != value or value in (float("inf"), float("-inf")):
        raise AnswerError("that number is too large")
    return Quantity(value, unit(rest.strip()))


def parse_vector(text) -> list[float]:
    """A list of numbers: "[16, 20]", "16 20" or "16; 20"."""
    if not isinstance(text, str):
        raise AnswerError("type the numbers as text, such as [16, 20]")
    t = tidy(text).strip("[]() ")
    parts = [p for p in re.split(r"[,;\s]+", t) if p]
    if not parts:
        raise AnswerError("type the numbers, separated by commas, such as [16, 20]")
    out = []
    for p in parts:
        value, rest = number_prefix(p)
        if rest:
            raise AnswerError(f"“{p}” is not a number")
        out.append(value)
    return out
