"""The emulated float types against ml_dtypes and numpy, the independent oracles."""

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from allreduce_explainer.dtypes import BF16, FP32

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def bf16(x: float) -> float:
    return float(np.float32(x).astype(ml_dtypes.bfloat16))


@given(st.floats(allow_nan=False, width=32))
def test_bf16_round_matches_ml_dtypes_on_float32(x):
    # float32 -> bfloat16 in ml_dtypes is a single, correctly rounded conversion
    assert BF16.round(x) == bf16(x) or (math.isinf(BF16.round(x)) and math.isinf(bf16(x)))


@given(st.floats(allow_nan=False, width=16), st.floats(allow_nan=False, width=16))
def test_bf16_add_matches_ml_dtypes(a, b):
    a, b = BF16.round(a), BF16.round(b)
    expected = float(ml_dtypes.bfloat16(a) + ml_dtypes.bfloat16(b))
    got = BF16.adder()(a, b)
    assert got == expected or (math.isnan(got) and math.isnan(expected))


@given(st.floats(allow_nan=False, width=32), st.floats(allow_nan=False, width=32))
def test_fp32_add_matches_numpy(a, b):
    with np.errstate(over="ignore", invalid="ignore"):  # inf + -inf is nan, as it should be
        expected = float(np.float32(a) + np.float32(b))
    assert FP32.adder()(a, b) == expected or (math.isnan(expected))


@given(finite)
def test_fp32_round_matches_numpy(x):
    with np.errstate(over="ignore"):
        expected = float(np.float64(x).astype(np.float32))
    assert FP32.round(x) == expected


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=16), min_size=1))
def test_round_exact_is_nearest(values):
    q = sum(map(Fraction, values), Fraction(0))
    for dt in (FP32, BF16):
        y = dt.round_exact(q)
        if math.isinf(y):
            continue
        # no value of the type is nearer: the neighbours are one ulp away on each side
        err = abs(Fraction(y) - q)
        assert err <= Fraction(dt.ulp(y)) / 2
