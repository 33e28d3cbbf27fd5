"""The oracle of the cross-door test: a printed figure read back as a quantity in SI units, with
the half-step of its last printed digit, written here and not borrowed from the product's `fmt`.

"0.076 s" is 0.076 s give or take 0.0005 s; "475 MiB" is 475 * 2**20 bytes give or take half a
MiB; "4.2 %" is 0.042 give or take 0.0005. Two doors agree on a figure when their readings lie
within the sum of their half-steps (each printed what it printed by rounding the same value), and
a door agrees with a value at full precision (a --json key) when that value lies within its
half-step.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# unit -> (its factor to the SI unit, the quantity's name): one table, the site's spellings
UNITS = {
    "s": (1.0, "time"),
    "ms": (1e-3, "time"),
    "µs": (1e-6, "time"),
    "us": (1e-6, "time"),
    "ns": (1e-9, "time"),
    "B": (1.0, "bytes"),
    "bytes": (1.0, "bytes"),
    "byte": (1.0, "bytes"),
    "kB": (1e3, "bytes"),
    "MB": (1e6, "bytes"),
    "GB": (1e9, "bytes"),
    "TB": (1e12, "bytes"),
    "KiB": (2.0**10, "bytes"),
    "MiB": (2.0**20, "bytes"),
    "GiB": (2.0**30, "bytes"),
    "TiB": (2.0**40, "bytes"),
    "GB/s": (1e9, "rate"),
    "MB/s": (1e6, "rate"),
    "TB/s": (1e12, "rate"),
    "Gb/s": (1e9 / 8, "rate"),
    "tokens": (1.0, "tokens"),
    "%": (1e-2, "share"),
    "×": (1.0, "ratio"),
    "x": (1.0, "ratio"),
    "": (1.0, "count"),
}
_UNIT = "|".join(sorted((re.escape(u) for u in UNITS if u), key=len, reverse=True))
# a number as the site prints it: a sign (or the minus sign), thousands commas, a decimal part
NUMBER = r"[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?"
FIGURE = re.compile(rf"(?P<number>{NUMBER})(?:\s?(?P<unit>{_UNIT})(?![\w/]))?")


@dataclass(frozen=True)
class Reading:
    """A printed figure: its value and the half-step of its last digit, both in SI units."""

    text: str
    value: float
    half: float
    quantity: str

    def holds(self, exact: float, *, rel: float = 1e-9, up: bool = False) -> bool:
        """Whether a value at full precision prints as this figure (half-step, and a hair more
        for the binary float of a value on the step's edge). A threshold is rounded `up` (the
        least printed value that suffices): then the value lies within one step below it."""
        slack = self.half * 1e-6 + rel * abs(exact)
        if up:
            return self.value - 2 * self.half - slack < exact <= self.value + slack
        return abs(exact - self.value) <= self.half + slack

    def agrees(self, other: Reading) -> bool:
        """Whether two printed figures can be one value rounded by two doors."""
        return self.quantity == other.quantity and abs(self.value - other.value) <= (
            self.half + other.half
        ) * (1 + 1e-6) + 1e-12 * abs(self.value)


def read_all(text: str) -> list[Reading]:
    """Every figure of a text, in order."""
    out = []
    for m in FIGURE.finditer(text):
        digits = m["number"].replace(",", "").replace("−", "-")
        unit = m["unit"] or ""
        factor, quantity = UNITS[unit]
        value = float(digits) * factor
        out.append(Reading(m.group(0), value, 0.5 * step(digits) * factor, quantity))
    return out


def step(digits: str) -> float:
    """The value of one unit of a number's last significant digit ("0.076": 0.001, "5.2e-09":
    1e-10). A whole number's trailing zeros are not taken as significant: the site prints to
    significant figures, so "1,050 GiB" may be 1,045 to 1,055 and "1,647,000" 1,646,500 to
    1,647,500 (a count printed in full loses nothing but a wrong multiple of ten)."""
    mantissa, _, exponent = digits.partition("e")
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if not places and mantissa.strip("-0"):
        places = -(len(mantissa) - len(mantissa.rstrip("0")))
    return 10.0 ** (int(exponent or 0) - places)


def read(text: str, quantity: str | None = None, index: int = 0) -> Reading:
    """The `index`-th figure of a text (of the given quantity if one is named); a clear failure
    naming the text when it has none."""
    found = [r for r in read_all(text) if quantity is None or r.quantity == quantity]
    if len(found) <= index:
        raise AssertionError(f"no {quantity or 'figure'} #{index} in {text!r}")
    return found[index]


def bumped(text: str, index: int = 0) -> str:
    """The text with its `index`-th figure off by one unit of its last printed digit: the plant
    the tests use to prove a disagreement is seen (9 becomes 10, never a carry lost)."""
    m = list(FIGURE.finditer(text))[index]
    digits = m["number"].replace(",", "").replace("−", "-")
    mantissa, _, exponent = digits.partition("e")
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    new = f"{float(mantissa) + 10.0**-places:.{places}f}" + (f"e{exponent}" if exponent else "")
    return text[: m.start("number")] + new + text[m.end("number") :]


def isclose(a: float, b: float) -> bool:
    """Two full-precision values of one computation by two doors."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)
