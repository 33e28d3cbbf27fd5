"""How far to trust the layer for a system at a size: its class's leave-one-cluster-out error.

A band is earned by runs of the same kind of system, not borrowed from others: the layer that
follows Hopper within 3 % can be 35 % off a Blackwell pair of servers it was never fitted on.
So the validation is kept per class (GPU generation x one server or across servers x launch
mode) and per size band, each cluster of runs predicted by a fit without it. A class's band at a
size is its own held-out errors there: the figure about nine rows in ten come within (the
ceil(0.9 n)-th smallest |error| of its n rows), beside their median. It is stated only where at
least two clusters of the class predicted that way earned it; a class with one cluster there is
"not checked", its figure shown as what that one cluster did, not as a bound on the next.
No class borrows another's figure: a Hopper server is not told "up to 173 %" because one
Blackwell pair's warm-up row was that far off.

The size bands are where the published sweeps change character: 64 KiB-1 MiB, where launch
and latency set the time; 1-4 MiB, where NCCL switches between LL, LL128 and Simple and the
result depends on the NCCL version (two A100 servers measured 55 % apart there); 4-64 MiB, the
ramp; 64 MiB-1 GiB, its end; and from 1 GiB, the asymptote. Below 64 KiB nothing is validated.

Chosen with the validation's result in view (bench/PERFORMANCE.md says so too): the size bands'
edges, the two clusters a band needs, nine in ten as the figure and its neighbouring size bands
(one either side: 132 of 150 rows covered; none, 112; two, 134 with a wider median), the fit's
size range (64 KiB up, not 1 MiB) and leaving the A100 runs across servers out of both fit and
validation. A band chosen after seeing the errors it summarises is a description of those
runs; how often it covers a cluster it never saw is measured apart (bench/PERFORMANCE.md, "On
runs the fit has not seen": each class's band recomputed without the cluster it is held
against).
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
NEIGHBOURS = 1  # size bands either side whose rows a band's figure also takes (figure)
MIN_CLUSTERS = 2  # clusters of a class a band needs: one cluster predicted by the others
SHARE = 0.9  # the share of a class's held-out rows its band's figure holds
UNCHECKED = "not checked against published runs for this kind of system"


def system_class(generation: str, nodes: int, gpus_per_thread: int) -> str:
    """The class a system's band comes from: 'Hopper, across servers, one process per GPU'."""
    scope = "one server" if nodes == 1 else "across servers"
    launch = "one process per GPU" if gpus_per_thread == 1 else "one process for several GPUs"
    return f"{generation}, {scope}, {launch}"


def nine_in_ten(errors: list[float]) -> float:
    """The |error| at least SHARE of these rows come within: the ceil(SHARE x n)-th smallest
    (with four rows or fewer, the worst)."""
    es = sorted(abs(e) for e in errors)
    return es[math.ceil(SHARE * len(es) - 1e-9) - 1]


def window(i: int) -> range:
    """The indices of BANDS whose rows the figure of band i takes: i and NEIGHBOURS either side."""
    return range(max(0, i - NEIGHBOURS), min(len(BANDS), i + NEIGHBOURS + 1))


def figure(own: list[float], near: list[float]) -> float:
    """A band's figure: nine in ten of the class's rows at its size band and its neighbours
    (`near`, own included), never less than nine in ten of its own rows."""
    return max(nine_in_ten(own), nine_in_ten(near))


def band(klass: str, nbytes: int) -> dict:
    """The leave-one-cluster-out error of this class at this size: {"class", "validated" (two
    clusters or more), "from_bytes", "to_bytes" (None: no upper end or below every band),
    "nine_in_ten" (`figure`), "median" and "worst" (relative; the class's own held-out rows',
    None where the class has none at this size, shown though not validated), "rows", "runs",
    "clusters" (what earned it; "systems", the older name of clusters)}."""
    from .fitted import VALIDATION  # written by bench/performance.py, which imports BANDS

    lo, hi = next(((lo, hi) for lo, hi in BANDS if lo <= nbytes < hi), (None, None))
    got = next((v for v in VALIDATION if v[:3] == (klass, lo, hi)), None)
    median, within, worst, rows, runs, clusters = got[3:] if got else (None,) * 3 + (0,) * 3
    return {
        "class": klass,
        "validated": clusters >= MIN_CLUSTERS,
        "from_bytes": lo,
        "to_bytes": None if hi in (None, math.inf) else hi,
        "nine_in_ten": within,
        "median": median,
        "worst": worst,
        "rows": rows,
        "runs": runs,
        "clusters": clusters,
        "systems": clusters,
    }


def words(klass: str, nbytes: int) -> str:
    """The band in a reader's words, for a figure of this class at this size."""
    return sentence(band(klass, nbytes))


def _clusters(n: int) -> str:
    return "one cluster" if n == 1 else f"{n} clusters"


def sentence(b: dict) -> str:
    """A band (band's dict) in a reader's words: a validated one as its class's figure; one
    cluster's figure as UNCHECKED, what that cluster did beside it; no rows, UNCHECKED alone."""
    if not b["rows"]:
        return UNCHECKED
    did = (
        f"{b['rows']} rows from {_clusters(b['clusters'])} of this kind ({b['class']}), each "
        f"predicted without its own cluster"
    )
    if not b["validated"]:
        return (
            f"{UNCHECKED}: {did}, came within {fmt.percent(b['nine_in_ten'])} (median "
            f"{fmt.percent(b['median'])}); one cluster cannot say how far the next will be"
        )
    return (
        f"nine in ten published rows of this kind of system at this size and the sizes either "
        f"side come within about {fmt.percent(b['nine_in_ten'])} of it (median "
        f"{fmt.percent(b['median'])}; {did})"
    )


def short(b: dict) -> str:
    """A band in a table's cell, short enough for an 80-column row: '≤21 %, median 7 %',
    'unchecked: ≤9 %' (one cluster's figure) or 'unchecked'."""
    if not b["rows"]:
        return "unchecked"
    figure = f"≤{fmt.percent(b['nine_in_ten'])}"
    if not b["validated"]:
        return f"unchecked: {figure}"
    return f"{figure}, median {fmt.percent(b['median'])}"


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
