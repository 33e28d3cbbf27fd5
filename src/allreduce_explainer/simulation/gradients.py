"""The per-GPU gradient vectors: drawn from a seed, or given and checked.

Integers are small by default so that a page can show them; float gradients are drawn from a
normal distribution with a spread typical of gradients (0.01 here, an assumption for display) and
rounded to the element type, so they use every bit of the type's significand.
"""

from __future__ import annotations

import math
import random

from ..dtypes import INT32_MAX, DType
from ..errors import ParamError

INT_RANGE = 9  # integers drawn from -9 .. 9: one digit each, sums stay readable
FLOAT_SCALE = 0.01


def draw(gpus: int, length: int, dtype: DType, seed: int) -> list[list]:
    """Random gradients, reproducible from the seed."""
    rng = random.Random(seed)
    if dtype.is_float:
        return [
            [dtype.round(rng.gauss(0.0, FLOAT_SCALE)) for _ in range(length)] for _ in range(gpus)
        ]
    values = range(-INT_RANGE, INT_RANGE + 1)
    return [rng.choices(values, k=length) for _ in range(gpus)]


def check(values, gpus: int, dtype: DType, max_length: int, field: str = "values") -> list[list]:
    """Validate explicit gradients: one list per GPU, all the same length, numbers of the type.

    Floats are rounded to the type. Integers must be int32, and so must every partial sum in any
    order: the sum of absolute values of each element must fit, or the result would wrap.
    """
    if not isinstance(values, list) or len(values) != gpus:
        raise ParamError(field, f"must be a list of {gpus} lists, one per GPU")
    if not all(isinstance(v, list) for v in values):
        raise ParamError(field, "each GPU's gradient must be a list of numbers")
    length = len(values[0])
    if not 1 <= length <= max_length:
        raise ParamError(field, f"each gradient must have 1 to {max_length} elements")
    if any(len(v) != length for v in values):
        raise ParamError(field, "every GPU's gradient must have the same length")
    out = []
    for i, vec in enumerate(values):
        row = []
        for x in vec:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise ParamError(field, f"GPU {i}: every element must be a finite number")
            if dtype.is_float:
                row.append(dtype.round(float(x)))
            elif x != int(x):
                raise ParamError(field, f"GPU {i}: {x} is not a whole number (dtype int)")
            else:
                row.append(int(x))
        out.append(row)
    if not dtype.is_float:
        for j, col in enumerate(zip(*out, strict=True)):
            if sum(map(abs, col)) > INT32_MAX:
                raise ParamError(field, f"element {j}: the sum could overflow int32")
    elif any(math.isinf(x) for row in out for x in row):
        raise ParamError(field, f"a value is too large for {dtype.name}")
    return out
