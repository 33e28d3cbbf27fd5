"""The alpha-beta cost model in closed form, one function per algorithm.

Each function gives what the message-by-message simulation gives (time, steps, bytes), but from a
formula in S (bytes), n GPUs, g per server, N = n / g servers and the two link classes, so that a
page can evaluate it thousands of times; tests check every formula against the simulation. A
message of b bytes costs alpha + b / B; a step lasts as long as its busiest queue (simulate.py).
Bandwidths follow nccl-tests (doc/PERFORMANCE.md): algbw = S / t, busbw = algbw * 2(n-1)/n.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import chain

from ..collectives import ALLREDUCE, COLLECTIVES
from ..records import BYTES, COUNT, RATE, TIME, Quantity, Record
from ..schedules import tree
from ..schedules.topology import Link, Topology
from ..sources import WHITEBOARD

# What cost's answer holds (records.py): the whiteboard model's time, its bandwidths and bytes.
RECORD = Record(
    "cost",
    (
        Quantity("time_s", TIME, "time", WHITEBOARD),
        Quantity("algbw_GBps", RATE, "algbw"),
        Quantity("busbw_GBps", RATE, "busbw"),
        Quantity("bytes_sent_per_gpu_max", BYTES, "sent per GPU, most"),
    ),
)

ALGORITHMS = ("naive", "ring", "multi-ring", "tree", "hierarchical")


def cost(algorithm: str, topo: Topology, nbytes: float, chunks: int | None = None) -> dict:
    """Closed-form time, steps and bytes of one all-reduce of `nbytes` per GPU."""
    n = topo.gpus
    if n == 1:
        out = _result(0.0, 0, 0, 0.0, 0.0, 0.0, "nothing to send: one GPU")
    elif algorithm == "tree":
        out = _tree(topo, nbytes, chunks)
    else:
        out = {
            "naive": _naive,
            "ring": _ring,
            "multi-ring": _multi_ring,
            "hierarchical": _hierarchical,
        }[algorithm](topo, nbytes)
    algbw = nbytes / out["time_s"] / 1e9 if out["time_s"] > 0 else None
    out["algorithm"] = algorithm
    out["gpus"], out["gpus_per_node"], out["bytes"] = n, topo.gpus_per_node, nbytes
    out["algbw_GBps"] = algbw
    out["busbw_GBps"] = None if algbw is None else algbw * ALLREDUCE.busbw_factor(n)
    return out


def _result(time_s, steps, network_steps, per_gpu, inter_node, per_nic, formula) -> dict:
    return {
        "time_s": time_s,
        "steps": steps,
        "network_steps": network_steps,
        "bytes_sent_per_gpu_max": per_gpu,
        "bytes_inter_node": inter_node,
        "bytes_per_nic_max": per_nic,
        "formula": formula,
    }


def _step(link: Link, nbytes: float, messages: int = 1) -> float:
    """Time of `messages` back-to-back messages of nbytes on one queue."""
    return messages * link.seconds(nbytes)


def _naive(topo: Topology, s: float) -> dict:
    n, g = topo.gpus, topo.gpus_per_node
    t = 2 * ((g - 1) * _step(topo.intra, s) + (n - g) * _step(topo.inter, s))
    return _result(
        t,
        2 * (n - 1),
        2 * (n - g),
        (n - 1) * s,
        2 * (n - g) * s,
        (n - g) * s,
        "2[(g-1)(a_intra + S/B_intra) + (n-g)(a_inter + S/B_inter)]",
    )


def ring_seconds(topo: Topology, s: float) -> float:
    """cost("ring", ...)'s time alone, for the curves that evaluate it thousands of times."""
    return 2 * (topo.gpus - 1) * _ring_step(topo, s / topo.gpus)


def _ring_step(topo: Topology, c: float) -> float:
    """One ring step: a chunk of c bytes on each GPU's link, the slowest class setting it."""
    if topo.nodes == 1:
        return _step(topo.intra, c)
    if topo.gpus_per_node == 1:
        return _step(topo.inter, c)
    return max(_step(topo.intra, c), _step(topo.inter, c))


def _ring(topo: Topology, s: float) -> dict:
    n, nodes = topo.gpus, topo.nodes
    c = s / n
    step = _ring_step(topo, c)
    if nodes == 1:
        formula = "2(n-1)(a_intra + S/(n B_intra))"
    elif topo.gpus_per_node == 1:
        formula = "2(n-1)(a_inter + S/(n B_inter))"
    else:
        formula = "2(n-1) max(a_intra + S/(n B_intra), a_inter + S/(n B_inter))"
    per_gpu = 2 * (n - 1) * c
    crossing = per_gpu if nodes > 1 else 0.0
    return _result(
        2 * (n - 1) * step,
        2 * (n - 1),
        2 * (n - 1) if nodes > 1 else 0,
        per_gpu,
        nodes * crossing,
        crossing,
        formula,
    )


def _multi_ring(topo: Topology, s: float) -> dict:
    n, g, nodes = topo.gpus, topo.gpus_per_node, topo.nodes
    c = s / (g * n)
    if nodes == 1:  # g rings over the same NVLink neighbours: g messages per queue per step
        step, formula = _step(topo.intra, c, g), "2(n-1) g (a_intra + S/(g n B_intra))"
    elif g == 1:
        step, formula = _step(topo.inter, c), "2(n-1)(a_inter + S/(n B_inter))"
    else:  # each GPU: g-1 messages over NVLink and one through its card, at once
        step = max(_step(topo.intra, c, g - 1), _step(topo.inter, c))
        formula = "2(n-1) max((g-1)(a_intra + S/(g n B_intra)), a_inter + S/(g n B_inter))"
    per_nic = 2 * (n - 1) * c if nodes > 1 else 0.0
    return _result(
        2 * (n - 1) * step,
        2 * (n - 1),
        2 * (n - 1) if nodes > 1 else 0,
        2 * (n - 1) * s / n,
        nodes * g * per_nic,
        per_nic,
        formula,
    )


def _hierarchical(topo: Topology, s: float) -> dict:
    g, nodes = topo.gpus_per_node, topo.nodes
    inside = 2 * (g - 1) * _step(topo.intra, s / g)
    across = 2 * (nodes - 1) * _step(topo.inter, s / (g * nodes))
    per_nic = 2 * (nodes - 1) * s / (g * nodes)
    return _result(
        inside + across,
        2 * (g - 1) + 2 * (nodes - 1),
        2 * (nodes - 1),
        2 * (g - 1) * s / g + per_nic,
        2 * (nodes - 1) * s,
        per_nic,
        "2(g-1)(a_intra + S/(g B_intra)) + 2(N-1)(a_inter + S/(g N B_inter))",
    )


def tree_chunks(nbytes: float) -> int:
    """Pipeline chunks per tree: NCCL's 512 KiB slots over each half of the message."""
    return max(1, math.ceil(nbytes / 2 / tree.COST_CHUNK_BYTES))


def tree_time_fast(topo: Topology, nbytes: float) -> float:
    """cost("tree", ...)'s time for NCCL's 512 KiB chunks, without walking a long pipeline.

    Walking the pipeline step by step takes a tenth of a second per size at thousands of GPUs.
    From k0 = tree.steady_chunks(n) chunks on, the steps of filling and draining the pipeline are
    the same for every k and only the steady steps (one per extra chunk) add up, so at a fixed
    chunk size c the time is linear in k: T(k) = T(k0) + (k - k0)(T(k0 + 1) - T(k0)).
    """
    if topo.gpus == 1:
        return 0.0
    k, k0 = tree_chunks(nbytes), tree.steady_chunks(topo.gpus)
    c = nbytes / (2 * k)  # bytes per chunk per tree
    if k <= k0 + 1:
        return _tree_seconds(topo, c, k)
    t0 = _tree_seconds(topo, c, k0)
    t1 = _tree_seconds(topo, c, k0 + 1)
    return t0 + (k - k0) * (t1 - t0)


def _tree_seconds(topo: Topology, c: float, k: int) -> float:
    """The double tree's time with k chunks of c bytes per tree: each step as long as its
    busiest queue, from the step profile."""
    profile = _tree_profile(topo.gpus, topo.gpus_per_node, k)[0]
    cost = (_step(topo.intra, c), _step(topo.inter, c))
    return sum(times * max(m * cost[cls] for cls, m in enumerate(ms)) for ms, times in profile)


def _tree(topo: Topology, s: float, chunks: int | None) -> dict:
    k = chunks or tree_chunks(s)
    c = s / (2 * k)
    profile, most_sends, inter_sends, most_inter = _tree_profile(topo.gpus, topo.gpus_per_node, k)
    return _result(
        _tree_seconds(topo, c, k),
        sum(times for _, times in profile),
        sum(x for ms, x in profile if ms[1]),
        most_sends * s / 2,
        inter_sends * s / 2,
        most_inter * s / 2,
        "sum over steps of max over link classes of q(a + S/(2kB)); q = busiest queue's messages",
    )


@lru_cache(maxsize=256)
def _tree_profile(n: int, g: int, k: int):
    """How many steps have each busiest-queue pattern (messages per class), and who sends what.

    In each phase, edge e with offset o carries chunk j at step o + j, so it is active at steps
    o .. o + k - 1; from the last offset to step k - 1 every edge is active (the steady state),
    and only the steps of filling and draining the pipeline differ. At step t the live offsets
    are a window a..b, and the busiest queue of each class in it comes from _tree_queues.
    """
    phase_reach, *sends = _tree_queues(n, g)
    profile: dict[tuple[int, int], int] = {}
    for last, reach in phase_reach:
        steady = range(last, k)
        explicit = chain(range(last), range(k, last + k)) if steady else range(last + k)
        for t in chain(explicit, [last] if steady else []):
            a, b = max(0, t - k + 1), min(t, last)  # offsets active at step t
            ms = tuple(_busiest(r, a, b) for r in reach)
            profile[ms] = profile.get(ms, 0) + (len(steady) if steady and t == last else 1)
    return (tuple(profile.items()), *sends)


@lru_cache(maxsize=64)
def _tree_queues(n: int, g: int):
    """Per phase of the double tree: its last offset and, per link class, `_reach` of its queues
    (2·src sends, 2·dst + 1 receives); and the most messages a GPU sends, the messages sent
    across servers and the most a GPU sends across. Worked out once per layout: every chunk
    count k reuses it (small: the site's snapshot holds the default servers' layouts)."""
    sends, inter_sends = [0] * n, [0] * n
    queues: tuple[tuple[dict, dict], ...] = (({}, {}), ({}, {}))  # per phase and class
    for parents, height, depth in tree.shape(n):
        for v, p in enumerate(parents):  # the edge v -> p (reduce), p -> v (broadcast)
            if p < 0:
                continue
            cls = int(v // g != p // g)
            up, down = queues[0][cls], queues[1][cls]
            h, d = height[v], depth[p]
            up.setdefault(2 * v, []).append(h)
            up.setdefault(2 * p + 1, []).append(h)
            down.setdefault(2 * p, []).append(d)
            down.setdefault(2 * v + 1, []).append(d)
            sends[v] += 1
            sends[p] += 1
            inter_sends[v] += cls
            inter_sends[p] += cls
    phases = []
    for last, by_class in zip(tree.last_offsets(n), queues, strict=True):
        patterns = (set(map(tuple, map(sorted, q.values()))) for q in by_class)
        phases.append((last, tuple(_reach(p, last) for p in patterns)))
    return tuple(phases), max(sends), sum(inter_sends), max(inter_sends)


def _reach(patterns: set[tuple[int, ...]], last: int) -> list[list[int]]:
    """reach[m][a]: the least b such that one queue holds m messages of offsets within a..b
    (last + 1 if none does), from the queues' distinct patterns (sorted offsets of their
    messages). A queue holds at most four messages per phase (two trees, two children), so this
    table is small, and the busiest queue of any window is read from it."""
    none = last + 1
    deepest = max(map(len, patterns), default=0)
    reach = [[none] * (last + 2) for _ in range(deepest + 1)]
    for offsets in patterns:
        for m in range(1, len(offsets) + 1):
            row = reach[m]
            for i in range(len(offsets) - m + 1):
                a, b = offsets[i], offsets[i + m - 1]
                if b < row[a]:
                    row[a] = b
    for row in reach:  # a window starting at a may start its m messages later
        for a in range(last, -1, -1):
            row[a] = min(row[a], row[a + 1])
    return reach


def _busiest(reach: list[list[int]], a: int, b: int) -> int:
    """The most messages one queue holds from offsets a..b (reach grows with m)."""
    m = 0
    while m + 1 < len(reach) and reach[m + 1][a] <= b:
        m += 1
    return m


# What busbw's answer holds: nccl-tests' two bandwidths from a measured time (no model's: it
# names no source), and the size and time they come from.
BANDWIDTHS = Record("busbw", (
    Quantity("algbw_GBps", RATE, "algbw"), Quantity("busbw_GBps", RATE, "busbw"),
    Quantity("factor", COUNT, "factor"), Quantity("bytes", BYTES, "size"),
    Quantity("time_us", TIME, "measured time", scale=1e-6),
))  # fmt: skip


def bandwidths(nbytes: float, time_s: float, gpus: int, collective: str = "allreduce") -> dict:
    """nccl-tests' algorithm and bus bandwidth (GB/s = 1e9 B/s) for one measured time."""
    factor = COLLECTIVES[collective].busbw_factor(gpus)
    algbw = nbytes / time_s / 1e9
    return {"algbw_GBps": algbw, "busbw_GBps": algbw * factor, "factor": factor}
