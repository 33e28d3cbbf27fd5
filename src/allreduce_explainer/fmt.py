"""Numbers as a reader sees them: a few significant digits, no trailing zeros."""

from __future__ import annotations

import math


def sig(x: float, digits: int = 2) -> str:
    """x rounded to `digits` significant digits, without trailing zeros (0.44, 0.055, 1,200)."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    rounded = float(f"{x:.{digits}g}")
    if abs(rounded) >= 1e15 or abs(rounded) < 1e-6:
        return f"{rounded:.{digits - 1}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def sig_up(x: float, digits: int = 2) -> str:
    """x rounded up to `digits` significant digits (sig's form): a threshold printed so that
    the value it names is past it (a 1,424-token threshold reads 1,430, not 1,420)."""
    if x <= 0 or not math.isfinite(x):
        return sig(x, digits)
    unit = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return sig(math.ceil(round(x / unit, 9)) * unit, digits + 1)


def percent(share: float, decimals: int = 0) -> str:
    """A share as the pages write a percentage, with a space before the sign: 0.82 -> "82 %"."""
    return f"{100 * share:.{decimals}f} %"


def seconds(x: float) -> str:
    """A duration with its unit: 31.8 s, 0.44 s, 55 ms, 12 µs (one decimal from 1 s up)."""
    if x >= 100:
        return f"{x:,.0f} s"
    if x >= 1:
        return f"{x:.1f} s"
    if x >= 0.01 or x == 0:
        return f"{sig(x)} s"
    if x >= 1e-5:
        return f"{sig(x * 1e3)} ms"
    return f"{sig(x * 1e6)} µs"


def nbytes(x: float) -> str:
    """A byte count in decimal units, as nccl-tests and link rates count them (GB = 1e9 B)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(x) >= scale:
            return f"{sig(x / scale, 3)} {unit}"
    return f"{x:g} B"


def binary_bytes(x: float) -> str:
    """A byte count in binary units, as buffers, buckets and nccl-tests' sizes are set
    (1 MiB = 2^20 B): 4 MiB, 512 KiB, 8 GiB, 1.5 MiB."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(x) >= scale:
            return f"{sig(x / scale, 3)} {unit}"
    return f"{x:g} B"


def in_words(items: list[str]) -> str:
    """ "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
