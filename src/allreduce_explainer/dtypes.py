"""Element types: exact int32, and IEEE single, half and bfloat16 emulated in pure Python.

Float values are held as Python floats that are exactly representable in the target type.
An addition is done in double precision and rounded once to the type: for p-bit types with
53 >= 2p + 2 (p = 24 for fp32, 11 for fp16, 8 for bf16) that double rounding is innocuous
(Figueroa, "When is double rounding innocuous?", 1995), so every addition is correctly rounded
to nearest even.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from fractions import Fraction

from .errors import ParamError

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class DType:
    name: str
    itemsize: int  # bytes per element, as NCCL sends them
    mantissa_bits: int  # significand precision p (0 for int)
    min_exp: int  # frexp exponent of the smallest normal number
    max_value: float

    @property
    def is_float(self) -> bool:
        return self.mantissa_bits > 0

    def round(self, x: float) -> float:
        """Round a double to this type, nearest even, with subnormals and overflow to inf."""
        if not self.is_float:
            return x
        if x == 0 or math.isinf(x) or math.isnan(x):
            return x
        m, e = math.frexp(x)
        if abs(x) > 2 * self.max_value:
            return math.copysign(math.inf, x)
        bits = self.mantissa_bits - max(0, self.min_exp - e)
        if bits < 0:
            return math.copysign(0.0, x)
        y = math.ldexp(round(math.ldexp(m, bits)), e - bits)
        return math.copysign(math.inf, x) if abs(y) > self.max_value else y

    def round_exact(self, q: Fraction) -> float:
        """Round an exact rational once to this type (the reference for error in ulps)."""
        if not self.is_float:
            return int(q)
        if q == 0:
            return 0.0
        e = math.frexp(float(q))[1]
        bits = self.mantissa_bits - max(0, self.min_exp - e)
        scaled = q * Fraction(2) ** (bits - e)
        if abs(scaled) >= 2**bits:  # float(q) rounded up past a power of two
            e += 1
            bits = self.mantissa_bits - max(0, self.min_exp - e)
            scaled = q * Fraction(2) ** (bits - e)
        y = math.ldexp(round(scaled), e - bits)
        return math.copysign(math.inf, y) if abs(y) > self.max_value else y

    def ulp(self, x: float) -> float:
        """Unit in the last place of a value of this type (1 for int)."""
        if not self.is_float:
            return 1
        e = max(math.frexp(x)[1] if x else self.min_exp, self.min_exp)
        return math.ldexp(1.0, e - self.mantissa_bits)

    def adder(self):
        """The addition of this type as a fast two-argument function."""
        if not self.is_float:
            return operator.add
        rnd = self.round
        return lambda a, b: rnd(a + b)


INT = DType("int", 4, 0, 0, INT32_MAX)
FP32 = DType("fp32", 4, 24, -125, math.ldexp(2 - 2**-23, 127))
BF16 = DType("bf16", 2, 8, -125, math.ldexp(2 - 2**-7, 127))
DTYPES = {d.name: d for d in (INT, FP32, BF16)}
FP16 = DType("fp16", 2, 11, -13, 65504.0)  # IEEE half: normals from 2**-14, max 65504
# the floating-point types an all-reduce of gradients uses (the order lab's choices)
FLOATS = {d.name: d for d in (FP32, BF16, FP16)}


def get(name: str) -> DType:
    try:
        return DTYPES[name]
    except (KeyError, TypeError):
        raise ParamError("dtype", f"must be one of {', '.join(DTYPES)}") from None
