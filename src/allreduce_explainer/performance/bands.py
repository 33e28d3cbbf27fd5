"""How far to trust the layer at a size: the validation's error for that size band.

The bands are where the published sweeps change character: 1-4 MiB, where NCCL switches between
LL, LL128 and Simple and the result depends on the NCCL version (two A100 servers measured 55 %
apart there); 4-64 MiB, the ramp; 64 MiB-1 GiB, its end; and from 1 GiB, the asymptote. Below
1 MiB the launch and synchronisation costs that no bandwidth model holds set the time, and the
layer is not validated there.
"""

from __future__ import annotations

import math

from .. import fmt

MiB, GiB = 1 << 20, 1 << 30
BANDS = (
    (MiB, 4 * MiB),
    (4 * MiB, 64 * MiB),
    (64 * MiB, 256 * MiB),
    (256 * MiB, GiB),
    (GiB, math.inf),
)


def band(nbytes: int) -> dict | None:
    """The leave-one-system-out error of the band holding nbytes: {"from_bytes", "to_bytes"
    (None: no upper end), "median", "worst" (relative), "rows", "systems"}; None below 1 MiB."""
    from .fitted import VALIDATION  # written by bench/performance.py, which imports BANDS

    for lo, hi, median, worst, rows, systems in VALIDATION:
        if lo <= nbytes < hi:
            return {
                "from_bytes": lo,
                "to_bytes": None if hi == math.inf else hi,
                "median": median,
                "worst": worst,
                "rows": rows,
                "systems": systems,
            }
    return None


def words(nbytes: int) -> str | None:
    """The band in a reader's words, for a figure at this size; None below 1 MiB."""
    b = band(nbytes)
    if b is None:
        return None
    return (
        f"published runs of this size come within about {fmt.percent(b['median'])} of it "
        f"(at worst {fmt.percent(b['worst'])})"
    )


def range_text(lo: int, hi: float) -> str:
    """'1-4 MiB', '1 GiB and up'."""

    def size(n: float) -> str:
        return f"{int(n) >> 30} GiB" if n >= GiB else f"{int(n) >> 20} MiB"

    if hi == math.inf:
        return f"{size(lo)} and up"
    if hi >= GiB > lo:
        return f"{size(lo)}–{size(hi)}"
    return f"{int(lo) >> 20}–{size(hi)}"
