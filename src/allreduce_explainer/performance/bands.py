"""How far to trust the layer for a system at a size: its class's leave-one-cluster-out error.

A band is earned by runs of the same kind of system, not borrowed from others: the layer that
follows Hopper within 3 % can be 35 % off a Blackwell pair of servers it was never fitted on.
So the validation is kept per class (GPU generation x one server or across servers x launch
mode) and per size band, each cluster of runs predicted by a fit without it; a class with fewer
than two clusters in a size band has no band there: nothing says how far its next run will be.

A stated band gives two figures. Its median is its class's own. Its worst is wider: the worst
held-out error at that size over every class, the class's own among them. The worst of a class's
two or three clusters rarely bounds its next one (it covered 73 % of held-out rows); the worst
any kind of system has shown at that size covers 94 % (bench/PERFORMANCE.md measures both).

The size bands are where the published sweeps change character: 64 KiB-1 MiB, where launch
and latency set the time; 1-4 MiB, where NCCL switches between LL, LL128 and Simple and the
result depends on the NCCL version (two A100 servers measured 55 % apart there); 4-64 MiB, the
ramp; 64 MiB-1 GiB, its end; and from 1 GiB, the asymptote. Below 64 KiB nothing is validated.
"""

from __future__ import annotations

import math

from .. import fmt

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
BANDS = (
    (64 * KiB, MiB),
    (MiB, 4 * MiB),
    (4 * MiB, 64 * MiB),
    (64 * MiB, 256 * MiB),
    (256 * MiB, GiB),
    (GiB, math.inf),
)
MIN_CLUSTERS = 2  # clusters of a class a band needs: one cluster predicted by the others
UNCHECKED = "not checked against published runs for this kind of system"


def system_class(generation: str, nodes: int, gpus_per_thread: int) -> str:
    """The class a system's band comes from: 'Hopper, across servers, one process per GPU'."""
    scope = "one server" if nodes == 1 else "across servers"
    launch = "one process per GPU" if gpus_per_thread == 1 else "one process for several GPUs"
    return f"{generation}, {scope}, {launch}"


def stated_worst(validation, lo: int, hi: float) -> float:
    """The worst a band states at this size band: the largest worst |error| of every class's
    row of validation (fitted.VALIDATION's shape: class, from, to, median, worst, ...) there,
    its own class's included, so never below the class's own worst."""
    return max(v[4] for v in validation if v[1:3] == (lo, hi))


def band(klass: str, nbytes: int) -> dict:
    """The leave-one-cluster-out error of this class at this size: {"class", "validated",
    "from_bytes", "to_bytes" (None: no upper end or below every band), "median" (the class's
    own), "worst" (stated_worst: at least "class_worst", the class's own), relative and None
    unless validated, "rows", "runs", "clusters" (what earned it; "systems", the older name of
    clusters)}."""
    from .fitted import VALIDATION  # written by bench/performance.py, which imports BANDS

    lo, hi = next(((lo, hi) for lo, hi in BANDS if lo <= nbytes < hi), (None, None))
    got = next((v for v in VALIDATION if v[:3] == (klass, lo, hi)), None)
    median, worst, rows, runs, clusters = got[3:] if got else (None, None, 0, 0, 0)
    validated = clusters >= MIN_CLUSTERS
    return {
        "class": klass,
        "validated": validated,
        "from_bytes": lo,
        "to_bytes": None if hi in (None, math.inf) else hi,
        "median": median if validated else None,
        "worst": stated_worst(VALIDATION, lo, hi) if validated else None,
        "class_worst": worst if validated else None,
        "rows": rows,
        "runs": runs,
        "clusters": clusters,
        "systems": clusters,
    }


def words(klass: str, nbytes: int) -> str:
    """The band in a reader's words, for a figure of this class at this size."""
    return sentence(band(klass, nbytes))


def sentence(b: dict) -> str:
    """A band (band's dict) in a reader's words: its percentages only where its class earned
    them, else UNCHECKED."""
    if not b["validated"]:
        return UNCHECKED
    return (
        f"published runs of this kind of system ({b['class']}) at this size come within about "
        f"{fmt.percent(b['median'])} of it; allow up to {fmt.percent(b['worst'])}, the worst of "
        f"any kind of system at this size"
    )


def short(b: dict) -> str:
    """A band in a table's cell: '±3 % (≤9 %)', or 'unchecked'."""
    if not b["validated"]:
        return "unchecked"
    return f"±{fmt.percent(b['median'])} (≤{fmt.percent(b['worst'])})"


def range_text(lo: int, hi: float) -> str:
    """'1-4 MiB', '1 GiB and up', '64 KiB-1 MiB'."""

    def size(n: float) -> str:
        for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
            if n >= 1 << shift:
                return f"{int(n) >> shift} {unit}"
        return f"{int(n)} B"

    if hi == math.inf:
        return f"{size(lo)} and up"
    low, high = size(lo), size(hi)
    if low.split()[1] == high.split()[1]:
        return f"{low.split()[0]}–{high}"
    return f"{low}–{high}"
