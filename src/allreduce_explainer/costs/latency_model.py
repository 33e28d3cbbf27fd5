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
from ..schedules import tree
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
    given, holds ring - tree on the grid already. On one class of link (every GPU its own
    server, or one server: the page's whiteboard model) it is exact, piece by piece."""
    if tree_fn is cost.tree_time_fast and (topo.nodes == 1 or topo.gpus_per_node == 1):
        return _first_crossing_one_link(topo, sizes[0], sizes[-1])
    found = crossings(lambda s: ring_time(topo, s) - tree_fn(topo, s), sizes, d)
    return found[0] if found else None


def _first_crossing_one_link(topo: Topology, lo: float, hi: float) -> float | None:
    """The first size in [lo, hi] at which the gap ring - tree stops being positive, exactly.

    The tree sends k = tree_chunks(S) chunks of S/(2k) bytes, so on one class of link its time
    is E_k (α + S/(2kB)), E_k the messages of its busiest queues over all steps, linear in k
    from the steady state on (cost.tree_time_fast); the ring's is affine in S. So the gap is
    affine on each piece of sizes with one k, and jumps where k grows (one chunk more): the
    walk tests each piece's two ends, where a grid of sizes can step over a crossing (the
    tree's curve is a saw; 8 sizes an octave missed the first crossing at 3.0 MB on 32 GPUs,
    0.5 µs, 400 GB/s). In the steady state the ends' gaps are closed forms in k (_steady)."""
    if topo.gpus == 1:
        return None
    link = topo.intra if topo.nodes == 1 else topo.inter
    n, alpha, beta = topo.gpus, link.latency_us * 1e-6, 1 / (link.GBps * 1e9)
    piece, k0 = 2 * tree.COST_CHUNK_BYTES, tree.steady_chunks(topo.gpus)
    # E_k up to the steady state, from the tree's own time at each piece's last size (chunks of
    # exactly COST_CHUNK_BYTES); beyond it, linear in k
    known = [0.0] + [
        cost.tree_time_fast(topo, piece * k) / link.seconds(tree.COST_CHUNK_BYTES)
        for k in range(1, k0 + 2)
    ]
    step = known[k0 + 1] - known[k0]

    def gap(size: float, k: int) -> float:  # ring_time - tree_time_fast, as plain arithmetic
        e = known[k] if k <= k0 + 1 else known[k0] + (k - k0) * step
        return 2 * (n - 1) * (alpha + size * beta / n) - e * (alpha + size * beta / (2 * k))

    def settled(x: float | None) -> float | None:
        """x moved by rounding's width onto the model's own side: ring_time - tree_time_fast
        <= 0 at x and > 0 just below (the plain arithmetic rounds apart by an ulp or two)."""
        if x is None:
            return None
        real = lambda s: ring_time(topo, s) - cost.tree_time_fast(topo, s)  # noqa: E731
        lo, hi = x * (1 - 1e-12), x * (1 + 1e-12)
        if not real(lo) > 0 >= real(hi):
            return x
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if real(mid) > 0 else (lo, mid)
        return hi

    k, a = max(1, math.ceil(lo / piece)), lo
    positive = gap(a, k) > 0
    while a < hi:
        if k > k0 + 2:
            return settled(_steady(gap, k, lo, hi, piece, positive))
        b = min(piece * k, hi)
        found = _in_piece(gap, k, a, b, positive)
        if found is not None:
            return settled(found)
        positive, a, k = gap(b, k) > 0, b, k + 1
    return None


def _in_piece(gap, k: int, a: float, b: float, positive: bool) -> float | None:
    """Where the gap, affine on the piece (a, b] of k chunks, stops being positive, if it does:
    at a (one chunk more made the tree the slower, the gap positive just below) or inside."""
    g0, g1 = gap(a, k), gap(b, k)
    if positive and g0 <= 0:
        return a
    if g0 > 0 >= g1:
        return a + g0 / (g0 - g1) * (b - a)
    return None


def _steady(gap, k: int, lo: float, hi: float, piece: int, positive: bool) -> float | None:
    """The walk from piece k on, where the tree is in its steady state. A piece's gap is affine,
    and at its ends a function of k alone: last(j) = u + v·j at its last size, first(j) =
    p + q·j + r/j at its first. Between the roots of last and of q·j² + p·j + r neither end
    changes sign, so past the first two pieces of such a stretch nothing changes; the walk
    tests only the pieces around each root (and rounding's neighbours), as it tests any."""
    top = math.ceil(hi / piece)

    def last(j: int) -> float:
        return gap(min(piece * j, hi), j)

    def first(j: int) -> float:
        return gap(max(piece * (j - 1), lo), j)

    v = last(k + 1) - last(k)
    u = last(k) - v * k
    f0, f1, f2 = first(k), first(k + 1), first(k + 2)
    r = (f0 - 2 * f1 + f2) / (1 / k - 2 / (k + 1) + 1 / (k + 2))
    q = (f1 - f0) - r * (1 / (k + 1) - 1 / k)
    p = f0 - q * k - r / k
    roots = ([-u / v] if v else []) + _roots(q, p, r)
    starts = {k} | {math.floor(x) for x in roots if k - 1 <= x <= top + 1}
    tested = sorted({m for j in starts for m in range(j - 1, j + 4) if k <= m <= top})
    for m in tested:
        a, b = max(piece * (m - 1), lo), min(piece * m, hi)
        found = _in_piece(gap, m, a, b, positive)
        if found is not None:
            return found
        positive = gap(b, m) > 0
    return None


def _roots(a: float, b: float, c: float) -> list[float]:
    """The real roots of a·x² + b·x + c."""
    if a == 0:
        return [] if b == 0 else [-c / b]
    disc = b * b - 4 * a * c
    if disc < 0:
        return []
    root = math.sqrt(disc)
    return [(-b - root) / (2 * a), (-b + root) / (2 * a)]


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


def pick_starts(system: System, sizes: list[int], picks) -> list[tuple[int, str, str]]:
    """Where NCCL's pick changes along `sizes` (whole bytes, ascending; `picks` its picks there,
    best_by_algorithm's): each run's (first size, algorithm, protocol), the first size refined to
    the whole byte by a bisection between the grid's sizes either side of the change, so that
    "Tree LL128 from 175 kB" is where NCCL starts to pick it (as `nccl --bytes` says), not the
    first of a chart's sizes that shows it."""

    def pick(n: int) -> tuple[str, str]:
        return best_by_algorithm(system, [n]).pick[0][:2]

    out: list[tuple[int, str, str]] = []
    for i, (size, (a, q, *_)) in enumerate(zip(sizes, picks, strict=True)):
        if out and out[-1][1:] == (a, q):
            continue
        lo, hi = (sizes[i - 1], size) if out else (size - 1, size)
        while hi - lo > 1:  # pick(lo) is the run before, pick(hi) this one
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if pick(mid) == (a, q) else (mid, hi)
        out.append((hi, a, q))
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
