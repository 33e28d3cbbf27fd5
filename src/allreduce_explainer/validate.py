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
