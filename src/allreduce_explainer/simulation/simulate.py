"""Run a schedule on real vectors, message by message, and time it with the alpha-beta model.

The result is a trace (DESIGN.md: the interface between simulation and view): for every step the
messages with their values and each GPU's buffer afterwards, plus cumulative bytes per GPU per link
class and a summary. In summary mode (`full=False`) only the results, counts and bytes are kept, so
n = 1024 stays cheap.

Timing rule: a message costs alpha + bytes / B on its link class. Each GPU has one queue per
direction per link class, so messages leaving (or entering) one GPU over the same class in the same
step go one after another, while NVLink and the network card, and sending and receiving, work at
once. A step lasts as long as its busiest queue.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from fractions import Fraction
from functools import lru_cache
from itertools import repeat

from ..dtypes import INT, DType
from ..records import TIME, Quantity, Record
from ..schedules import hierarchical, multiring, naive, ring, tree
from ..schedules.schedule import Step, owned, split
from ..schedules.topology import INTER, INTRA, Topology
from ..sources import WHITEBOARD

# What simulate's answer holds (records.py): its time is the whiteboard model's, step by step.
RECORD = Record("simulate", (Quantity("time_s", TIME, "time", WHITEBOARD),))

ALGORITHMS = {
    "naive": naive.schedule,
    "ring": ring.schedule,
    "multi-ring": multiring.schedule,
    "tree": tree.schedule,
    "hierarchical": hierarchical.schedule,
}
CLASSES = (INTRA, INTER)
# Schedules that can leave out the bounds of steps whose transfers all have one size
# (schedule.ring's bounds=False; count() reads only the size of such steps), where every chunk
# has the same size: a vector of n·g elements (count_bytes).
BOUNDLESS = frozenset({"ring", "multi-ring", "hierarchical"})


def run(
    algorithm: str,
    topo: Topology,
    inputs: list[list],
    dtype: DType,
    full: bool = True,
    steps: list[Step] | None = None,
    **opts,
) -> dict:
    """Simulate `algorithm` on `inputs` (one list per GPU) and return the trace or summary.

    `steps` runs a given schedule instead (a reduce-scatter or an all-gather on its own, as
    sharded data parallel does); `algorithm` then only names it. The ring's result also has
    its `chunks` and their `owners` (ring_chunks).
    """
    n, length = topo.gpus, len(inputs[0])
    ring_run = steps is None and algorithm == "ring"
    if steps is None:
        steps = ALGORITHMS[algorithm](topo, length, **opts)
    bufs = [list(v) for v in inputs]
    counts = [[1] * length for _ in range(n)] if full else None
    add, size = dtype.adder(), dtype.itemsize
    alpha = (topo.intra.latency_us * 1e-6, topo.inter.latency_us * 1e-6)
    per_byte = (1 / (topo.intra.GBps * 1e9), 1 / (topo.inter.GBps * 1e9))
    routes: dict[tuple[int, int], _Route] = {}
    time_s = 0.0
    trace = []
    for step in steps:
        key = (id(step.src), id(step.dst))
        route = routes.get(key) or routes.setdefault(key, _Route(step, bufs, topo.gpus_per_node))
        elems = list(map(operator.sub, step.stop, step.start))
        route.sent = list(map(operator.add, route.sent, elems))
        step_time = route.time(elems, size, alpha, per_byte)
        # One-element chunks (n GPUs, about n elements) are indexed, not sliced: no allocation.
        where = (
            step.start if elems.count(1) == len(elems) else list(map(slice, step.start, step.stop))
        )
        payloads = list(map(list.__getitem__, route.src_rows, where))
        _deliver(step.reduce, route.dst_rows, where, payloads, add)
        if counts is not None:
            _deliver(
                step.reduce,
                [counts[d] for d in step.dst],
                where,
                list(map(list.__getitem__, [counts[s] for s in step.src], where)),
                operator.add,
            )
        if full and where is step.start:
            payloads = [[v] for v in payloads]
        time_s += step_time
        if full:
            sent = _bytes_sent(routes.values(), n, size)
            trace.append(_step_record(step, payloads, route.cls, bufs, counts, sent, step_time))
    result = summarize(algorithm, topo, inputs, bufs, dtype)
    result.update(_totals(routes, steps, n, size, time_s))
    if ring_run:
        result.update(ring_chunks(length, opts.get("order") or list(range(n))))
    if full:
        result["trace"] = trace
    return result


def ring_chunks(length: int, order: list[int]) -> dict:
    """The ring's chunks and who ends the reduce-scatter owning each, as schedule.ring cuts and
    runs them, so a view reads them instead of working them out again: `chunks`, chunk c's
    elements [start, stop) by chunk (sizes differ by at most one; with fewer elements than GPUs
    the last are empty); `owners`, by GPU, the chunk whose complete sum it holds after the
    reduce-scatter (NCCL's: GPU r owns chunk r in rank order), which the all-gather sends on."""
    by_position = owned(order)
    owners = [0] * len(order)
    for gpu, chunk in zip(order, by_position, strict=True):
        owners[gpu] = chunk
    return {"chunks": [[a, b] for a, b in split(0, length, len(order))], "owners": owners}


def count(algorithm: str, topo: Topology, length: int, itemsize: int, **opts) -> dict:
    """Steps, messages, bytes and time of `algorithm` on a vector of `length` elements.

    The same schedule and timing rule as run(), without moving values: what a page needs to count
    bytes on 512 GPUs, where the values would cost seconds.
    """
    steps = ALGORITHMS[algorithm](topo, length, **opts)
    alpha = (topo.intra.latency_us * 1e-6, topo.inter.latency_us * 1e-6)
    per_byte = (1 / (topo.intra.GBps * 1e9), 1 / (topo.inter.GBps * 1e9))
    routes: dict[tuple[int, int], _Route] = {}
    time_s = 0.0
    uniform: dict[tuple[int, int], int] = {}  # (route, size) -> steps whose transfers are all size
    for step in steps:
        key = (id(step.src), id(step.dst))
        route = routes.get(key) or routes.setdefault(key, _Route(step, None, topo.gpus_per_node))
        if step.size is not None:  # known size: no per-message work at all
            uniform[key, step.size] = uniform.get((key, step.size), 0) + 1
            continue
        elems = list(map(operator.sub, step.stop, step.start))
        route.sent = list(map(operator.add, route.sent, elems))
        time_s += route.time(elems, itemsize, alpha, per_byte)
    for (key, size), times in uniform.items():
        route = routes[key]
        route.sent = [x + size * times for x in route.sent]
        time_s += times * route.time([size], itemsize, alpha, per_byte)
    return _totals(routes, steps, topo.gpus, itemsize, time_s)


def _totals(routes: dict, steps: list[Step], n: int, size: int, time_s: float) -> dict:
    sent = _bytes_sent(routes.values(), n, size)
    crossing = {key for key, route in routes.items() if route.crosses}
    return {
        "steps": len(steps),
        "messages": sum(len(step) for step in steps),
        "network_steps": sum((id(st.src), id(st.dst)) in crossing for st in steps),
        "bytes_sent_per_gpu": [a + b for a, b in sent],
        "bytes_sent_per_gpu_by_link": [{INTRA: a, INTER: b} for a, b in sent],
        "bytes_inter_node": sum(b for _, b in sent),
        "bytes_per_nic_max": max(b for _, b in sent),
        "time_s": time_s,
    }


class _Route:
    """What a step's pattern of senders and receivers implies, worked out once per pattern.

    A ring sends from the same GPUs to the same GPUs at every step (only the chunks rotate), so
    the link classes, the queues and the buffer rows are computed once and reused.
    """

    def __init__(self, step: Step, bufs: list[list], g: int):
        self.cls = [int(s // g != d // g) for s, d in zip(step.src, step.dst)]
        self.crosses = any(self.cls)
        self.by_class = [[i for i, c in enumerate(self.cls) if c == k] for k in (0, 1)]
        sends = [2 * s + c for s, c in zip(step.src, self.cls)]
        recvs = [2 * d + c for d, c in zip(step.dst, self.cls)]
        self.sends = sends
        self.queues = (sends, recvs)
        # the most messages any one queue of each class holds in this pattern
        depth = [0, 0]
        for keys in self.queues:
            for key, m in Counter(keys).items():
                depth[key % 2] = max(depth[key % 2], m)
        self.depth = depth
        if bufs is not None:  # count() moves no values
            self.src_rows = [bufs[s] for s in step.src]
            self.dst_rows = [bufs[d] for d in step.dst]
        self.sent = [0] * len(step.src)  # elements sent so far, per position

    def time(self, elems: list[int], size: int, alpha, per_byte) -> float:
        """The step's duration: its busiest queue (GPU, link class, direction)."""
        if elems and elems.count(elems[0]) == len(elems):  # one size: deepest queue x one cost
            return max(
                m * (alpha[k] + elems[0] * size * per_byte[k])
                for k, m in enumerate(self.depth)
                if m
            )
        if self.depth[0] <= 1 and self.depth[1] <= 1:  # one message per queue: the largest
            return max(
                (
                    alpha[k] + max(map(elems.__getitem__, idx)) * size * per_byte[k]
                    for k, idx in enumerate(self.by_class)
                    if idx
                ),
                default=0.0,
            )
        costs = [alpha[c] + e * size * per_byte[c] for c, e in zip(self.cls, elems)]
        busiest = 0.0
        for keys in self.queues:
            queue: dict[int, float] = {}
            for k, c in zip(keys, costs):
                queue[k] = queue.get(k, 0.0) + c
            busiest = max(busiest, *queue.values())
        return busiest


def _deliver(reduce: bool, rows: list[list], where: list, payloads: list, add) -> None:
    """Add the payloads into, or copy them over, the receivers' buffers at `where`.

    `where` holds slices with lists as payloads, or indices with single values. Everything runs
    in C-level maps: a ring of 1024 GPUs delivers two million messages.
    """
    if reduce:
        current = map(list.__getitem__, rows, where)
        if where and isinstance(where[0], slice):
            payloads = map(list, map(map, repeat(add), current, payloads))
        else:
            payloads = map(add, current, payloads)
    list(map(list.__setitem__, rows, where, payloads))


def _bytes_sent(routes, n: int, size: int) -> list[list[int]]:
    """Bytes sent so far by every GPU, as [intra, inter]."""
    sent = [0] * (2 * n)
    for route in routes:
        for k, e in zip(route.sends, route.sent):
            sent[k] += e * size
    return [sent[2 * i : 2 * i + 2] for i in range(n)]


def _step_record(step: Step, payloads, cls, bufs, counts, sent, step_time: float) -> dict:
    return {
        "phase": step.phase,
        "op": "add" if step.reduce else "copy",
        "messages": [
            {"src": s, "dst": d, "start": a, "stop": b, "link": CLASSES[c], "values": v}
            for s, d, a, b, c, v in zip(step.src, step.dst, step.start, step.stop, cls, payloads)
        ],
        "buffers": [list(b) for b in bufs],
        "contributors": [list(c) for c in counts],
        "time_s": step_time,
        "bytes_sent": sent,
    }


def summarize(algorithm: str, topo: Topology, inputs, results, dtype: DType) -> dict:
    """Compare every GPU's result with the exact sum, rounded once to the element type."""
    length = len(inputs[0])
    columns = list(zip(*inputs, strict=True)) if inputs else []
    if dtype.is_float:
        target = [dtype.round_exact(sum(map(Fraction, col), Fraction(0))) for col in columns]
    else:
        target = [sum(col) for col in columns]
    identical = all(_same_bits(r, results[0]) for r in results)
    matches = all(_same_bits(r, target) for r in results)
    return {
        "algorithm": algorithm,
        "gpus": topo.gpus,
        "gpus_per_node": topo.gpus_per_node,
        "dtype": dtype.name,
        "length": length,
        "inputs": inputs,
        "target": target,
        "results": results,
        "matches_target": matches,
        "identical_on_all_gpus": identical,
        "max_ulp_error": _max_ulp(results, target, dtype),
    }


def _same_bits(a: list, b: list) -> bool:
    """Equal element by element, telling -0.0 from 0.0 (the bits must match, not just the value)."""
    if a != b:
        return False
    if not any(isinstance(x, float) for x in a[:1]):
        return True
    return all(math.copysign(1, x) == math.copysign(1, y) for x, y in zip(a, b) if x == 0)


def _max_ulp(results, target, dtype: DType):
    """Largest distance from the target over all GPUs and elements, in units in the last place."""
    worst = 0
    if all(r == target for r in results):
        return worst
    if dtype.is_float and not all(map(math.isfinite, (x for r in results for x in r))):
        return None
    for r in results:
        for x, t in zip(r, target, strict=True):
            if x != t:
                err = abs(Fraction(x) - Fraction(t)) / Fraction(dtype.ulp(t))
                worst = max(worst, float(err) if dtype.is_float else int(err))
    return worst


def count_bytes(method: str, servers: int, g: int, nbytes: float) -> dict:
    """Bytes over the network of one all-reduce of `nbytes` per GPU on `servers` servers of g,
    counted from the messages (method: ring, multi-ring, hierarchical, ...).

    The schedule runs on a vector of n·g int32 elements, so that every chunk of every method has
    the same size; the counts then scale exactly to `nbytes`. (Whether every GPU ends with the
    exact sum is shown by the stepper and checked for every method in the tests.)
    """
    raw = _network_counts(method, servers, g)
    scale = nbytes / (servers * g * g * INT.itemsize)
    return {**raw, **{k: raw[k] * scale for k in ("total", "per_server", "per_card")}}


@lru_cache(maxsize=64)
def _network_counts(method: str, servers: int, g: int) -> dict:
    """The unscaled counts; they depend on the layout only, so a page counts each layout once."""
    n = servers * g
    lean = {"bounds": False} if method in BOUNDLESS else {}  # n·g elements: uniform chunks
    r = count(method, Topology.make(n, g), n * g, INT.itemsize, **lean)
    inter = [b["inter"] for b in r["bytes_sent_per_gpu_by_link"]]
    per_server = [sum(inter[k * g : (k + 1) * g]) for k in range(servers)]
    return {
        "total": sum(inter),
        "per_server": max(per_server),
        "per_card": max(inter),
        "cards_used_per_server": max(
            sum(1 for b in inter[k * g : (k + 1) * g] if b) for k in range(servers)
        ),
        "network_steps": r["network_steps"],
        "steps": r["steps"],
        "messages": r["messages"],
    }
