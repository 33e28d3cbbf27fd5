"""Checks for JSON-able parameters that raise a ParamError naming the field."""

from __future__ import annotations

import math

from .errors import ParamError


def number(field: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(field, "must be a number")
    if not math.isfinite(value):
        raise ParamError(field, "must be a finite number")
    return value


def count(field: str, value, lo: int, hi: int) -> int:
    v = number(field, value)
    if v != int(v):
        raise ParamError(field, "must be a whole number")
    if not lo <= v <= hi:
        raise ParamError(field, f"must be between {lo} and {hi}")
    return int(v)


def positive(field: str, value) -> float:
    v = number(field, value)
    if v <= 0:
        raise ParamError(field, "must be greater than 0")
    return float(v)


def nonnegative(field: str, value) -> float:
    v = number(field, value)
    if v < 0:
        raise ParamError(field, "must be 0 or more")
    return float(v)


def permutation(field: str, value, n: int | None = None) -> list[int]:
    """A ring's order of GPUs: each of 0..n-1 once, as a list of ranks or as text "0,7,6,..."
    (how NCCL_DEBUG=INFO prints a channel's ring, with commas or spaces, and how a link carries
    it). n None: the length is the order's own (at least 2)."""
    if isinstance(value, str):
        parts = value.replace(",", " ").split()
        items: list = []
        for k, text in enumerate(parts):
            try:
                items.append(int(text))
            except ValueError:
                raise ParamError(
                    field, f"entry {k + 1} ({text[:20]!r}) is not a GPU number"
                ) from None
        value = items
    if not isinstance(value, (list, tuple)):
        raise ParamError(field, "must be a list of GPU numbers, such as 0,3,1,2")
    m = len(value)
    if n is not None and m != n:
        raise ParamError(field, f"lists {m} GPUs; the ring has {n}")
    if m < 2:
        raise ParamError(field, "must list at least 2 GPUs")
    for k, v in enumerate(value):
        whole = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not whole or v != int(v):
            raise ParamError(field, f"entry {k + 1} ({str(v)[:20]}) is not a whole GPU number")
    ranks = [int(v) for v in value]
    seen: set[int] = set()
    for r in ranks:
        if not 0 <= r < m:
            raise ParamError(field, f"GPU {r} is not one of 0 to {m - 1}")
        if r in seen:
            raise ParamError(field, f"GPU {r} comes twice; each GPU must come once")
        seen.add(r)
    return ranks
