"""The exact check of an all-reduce's result: every GPU against the target, element by element.

For integers the sum is exact, so every GPU must hold it. For floats the order of additions
changes the rounding, so the check also measures, in units in the last place (ulps) of the type,
how far the result is from the exactly rounded sum (the target) and from the sum taken in GPU
order; and whether all GPUs hold identical bits.
"""

from __future__ import annotations

from fractions import Fraction

from .. import dtypes


def check(r: dict) -> dict:
    """Element by element, every GPU against the target; for floats, ulps from two references."""
    dt = dtypes.get(r["dtype"])
    n, inputs, target = r["gpus"], r["inputs"], r["target"]
    add = dt.adder()
    in_order = [_fold(add, col) for col in zip(*inputs, strict=True)]
    matches = [[x == t for x, t in zip(res, target, strict=True)] for res in r["results"]]
    ulps = [_ulps(x, t, dt) for x, t in zip(r["results"][0], target, strict=True)]
    ulps_in_order = [_ulps(x, t, dt) for x, t in zip(r["results"][0], in_order, strict=True)]
    all_match = all(all(row) for row in matches)
    if all_match:
        verdict = (
            f"Exact match: all {n} GPUs hold the target sum in every one of the "
            f"{r['length']} elements."
        )
    elif r["identical_on_all_gpus"]:
        verdict = (
            f"Identical bits on all {n} GPUs; the ring's sum is at most {max(ulps):g} ulp "
            f"from the exactly rounded sum, and at most {max(ulps_in_order):g} ulp from "
            f"the sum taken in GPU order."
        )
    else:
        verdict = "Mismatch: the GPUs disagree."
    return {
        "matches": matches,
        "all_match": all_match,
        "identical": r["identical_on_all_gpus"],
        "in_order": in_order,
        "ulps": ulps,
        "ulps_in_order": ulps_in_order,
        "verdict": verdict,
    }


def _fold(add, values):
    acc = values[0]
    for v in values[1:]:
        acc = add(acc, v)
    return acc


def _ulps(x, ref, dt: dtypes.DType) -> float:
    if x == ref:
        return 0
    return float(abs(Fraction(x) - Fraction(ref)) / Fraction(dt.ulp(ref)))
