"""This site's teaching model of latency against size (every GPU its own server, α per message),
and the per-message latencies other pages default to.

The defaults are NCCL's own per-hop figures for its Simple ring (nccl/constants.py, from
src/graph/tuning.cc): 3.4 µs over NVLink, 14 µs over the network. NCCL's full time model, with
its protocols, tree corrections and choice, is the `nccl` package; the latency page draws both.

The crossover is found on a fine grid of sizes and refined by bisection, so the number a page
prints is where the two curves meet; NCCL's estimates for its ring and tree (its best protocol
each) cross where `nccl_crossovers` says, found exactly from the pieces on which they are affine.
"""

from __future__ import annotations

import math

from ..nccl import (
    HW_LATENCY_US,
    PROTOCOLS,
    System,
    best_by_algorithm,
    size_breakpoints,
    tables,
    terms,
)
from ..schedules.topology import Topology
from . import cost

NCCL_NVLINK_HOP_US = HW_LATENCY_US["NVLink"]["Ring"][PROTOCOLS.index("Simple")]  # 3.4
NCCL_NETWORK_HOP_US = HW_LATENCY_US["Network"]["Ring"][PROTOCOLS.index("Simple")]  # 14.0

SIZES = [8 * 2 ** (i / 8) for i in range(8 * 30 + 1)]  # 8 B .. 8 GiB, 8 points per octave


def whole(sizes) -> list[int]:
    """The sizes as whole bytes, at least 1, as NCCL's model takes them."""
    return [max(1, round(x)) for x in sizes]


def flat(gpus: int, GBps: float, latency_us: float) -> Topology:
    """n GPUs on one kind of link: every GPU its own server (so every message crosses it)."""
    return Topology.make(gpus, 1, GBps, GBps, latency_us, latency_us)


def ring_time(topo: Topology, s: float) -> float:
    return cost.ring_seconds(topo, s)


def crossover(topo: Topology, tree_fn=cost.tree_time_fast, sizes=SIZES, d=None) -> float | None:
    """The smallest size at which the ring stops being slower than the tree, or None; `d`, if
    given, holds ring - tree on the grid already."""
    found = crossings(lambda s: ring_time(topo, s) - tree_fn(topo, s), sizes, d)
    return found[0] if found else None


def crossings(gap, sizes=SIZES, d=None) -> list[float]:
    """Every size at which gap(size) = ring - tree stops being positive, smallest first.

    Found on the grid (where the gap changes from > 0 to <= 0; `d` is the gap on the grid, if
    already computed), then refined by bisection between the two grid points around it.
    """
    d = [gap(s) for s in sizes] if d is None else d
    out = []
    for i in range(1, len(sizes)):
        if d[i - 1] > 0 >= d[i]:
            lo, hi = sizes[i - 1], sizes[i]
            for _ in range(40):
                mid = math.sqrt(lo * hi)
                lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
            out.append(hi)
    return out


def nccl_crossovers(system: System, sizes=SIZES) -> list[float]:
    """Every size in whole bytes, within `sizes`' span, at which NCCL's ring (best protocol)
    becomes no slower than its tree: more than one where the tree's size correction
    (tuning.cc:623-641) steps across the ring. Exact, not a grid's: between two of
    nccl.size_breakpoints every protocol's time is affine in the size, so each algorithm's best
    is affine between the sizes where two protocols' lines meet, and the gap ring - tree changes
    sign only at those sizes or between two of them, where a bisection on whole bytes finds it.
    (A grid of 8 sizes an octave missed the first of two crossings on 32 GPUs, 2 a server.)"""
    lo, hi = whole([sizes[0]])[0], whole([sizes[-1]])[0]
    points = sorted(_kinks(system, lo, hi))
    best = best_by_algorithm(system, points).time_us
    d = [r - t for r, t in zip(best["Ring"], best["Tree"], strict=True)]

    def gap(n: int) -> float:
        at = best_by_algorithm(system, [n]).time_us
        return at["Ring"][0] - at["Tree"][0]

    out = []
    for i in range(1, len(points)):
        if d[i - 1] > 0 >= d[i]:
            a, b = points[i - 1], points[i]  # gap(a) > 0 >= gap(b), whole bytes
            while b - a > 1:
                mid = (a + b) // 2
                a, b = (mid, b) if gap(mid) > 0 else (a, mid)
            out.append(float(b))
    return out


def _kinks(system: System, lo: int, hi: int) -> set[int]:
    """Sizes between which the ring's and the tree's best times are both affine: the ends, the
    size breakpoints, and round each size where two of their protocols' lines meet."""
    pairs = [(a, p) for (a, p) in tables(system, "AllReduce") if a in ("Ring", "Tree")]
    edges = [lo, *(b for b in size_breakpoints(system) if lo < b <= hi), hi + 1]
    out = {lo, hi}
    for x, y in zip(edges, edges[1:]):  # a piece [x, y): every pair's terms are fixed
        lines = []
        for a, p in pairs:
            lat, bw = terms(system, "AllReduce", a, p, tables(system, "AllReduce")[a, p], x)
            lines.append((lat, 1 / (1000 * bw)))
        out |= {x, y - 1}
        for i, (a0, s0) in enumerate(lines):
            for a1, s1 in lines[i + 1 :]:
                if s0 != s1:
                    n = (a1 - a0) / (s0 - s1)
                    if x < n < y - 1:
                        out |= {math.floor(n), math.ceil(n)}
    return out
