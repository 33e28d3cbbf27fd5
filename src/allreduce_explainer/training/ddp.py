"""PyTorch DDP's gradient buckets in steady state, and how they overlap the backward pass.

Bucketing (torch/csrc/distributed/c10d/reducer.cpp, `compute_bucket_assignment_by_size`, called by
`Reducer::rebuild_buckets` after the first iteration with the tensors in the order their gradients
became ready): walk the tensors in that order, add each to the open bucket, and close the bucket as
soon as its size reaches the current limit. There is no special case: a tensor larger than the
limit joins the open bucket, with whatever smaller tensors it holds, and closes it; a zero-size
tensor adds nothing; a limit of 0 closes every bucket after one tensor. The limits are
[first, cap, cap, ...]. `bucket_cap_mb=25` means int(25 × 2^20) bytes. The first limit is
`dist._DEFAULT_FIRST_BUCKET_BYTES` (1 MiB) when `bucket_cap_mb` is left unset; when it is given,
PyTorch 2.4 and later (pull request 121640) use the cap for the first bucket too, while 2.3 and
earlier always used 1 MiB (torch/nn/parallel/distributed.py).

Ready order: the backward pass runs the layers in reverse, so gradients become ready in reverse
model order, except inside a normalisation layer, where autograd makes the weight's gradient
ready before the bias's (observed with DDP and gloo, PyTorch 2.x).

Timeline: a layer's gradients are ready when its backward finishes. A bucket's all-reduce starts
when its last gradient is ready and the previous bucket's all-reduce has finished (one
communication stream), and takes the time NCCL's cost model predicts for that many bytes on the
cluster (`nccl.choose`, timed by the performance layer). What remains after the backward pass
ends is exposed: the
step waits for it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate

from .. import nccl
from ..catalog.models import Model
from ..costs import cost
from ..records import BINARY, COUNT, TIME, Quantity, Record
from ..schedules.topology import Topology
from ..sources import FITTED, WHITEBOARD

MIB = 1 << 20
DEFAULT_CAP_MB = 25.0  # torch.nn.parallel.DistributedDataParallel(bucket_cap_mb=25)
DEFAULT_FIRST_MB = 1.0  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
SWEEP_LOW_MB = 0.1  # the smallest cap a sweep tries
# Samples per GPU per step (an assumption, typical of data-parallel training of each model).
DEFAULT_BATCH = {
    "gpt2": 8,
    "gpt2-xl": 4,
    "bert-base": 16,
    "resnet50": 64,
    "mistral-7b": 1,
    "llama3-8b": 1,
    "llama3-70b": 1,
    "llama3-405b": 1,
}


def _timed_by(r) -> object:
    """The buckets' all-reduces are timed by NCCL's choice's fitted time, or the whiteboard."""
    return FITTED if r.get("timing") == "nccl" else WHITEBOARD


# What api.ddp's answer holds (records.py): the CLI's view, the page's readouts and the notebook
# read its labels and formats; a time names its source.
RECORD = Record(
    "ddp",
    (
        Quantity("gradient_bytes", BINARY, "gradient"),
        Quantity("first_bucket_bytes", BINARY, "first bucket's cap"),
        Quantity("bucket_cap_bytes", BINARY, "cap of the others"),
        Quantity("backward_s", TIME, "backward pass"),
        Quantity("allreduce_total_s", TIME, "all-reduces, in all", _timed_by),
        Quantity("comm_end_s", TIME, "communication ends", _timed_by),
        Quantity("exposed_s", TIME, "exposed after the backward pass", _timed_by),
        Quantity("best_exposed_s", TIME, "exposed at the best cap", _timed_by),
        Quantity("params", COUNT, "parameters"),
        Quantity("batch", COUNT, "samples per GPU"),
    ),
)
# best_bucket_mb's label: a cap printed with every digit it holds (the shortest decimal that
# gives its buckets), not to a kind's significant figures, so not one of the record's fields
BEST_CAP = "best bucket cap"


def limits(cap_mb: float | None = None, first_mb: float | None = None) -> tuple[int, int]:
    """(first bucket, later buckets) in bytes, with PyTorch's defaults.

    Without a cap: 25 MiB and a first bucket of 1 MiB; with an explicit cap, the first bucket
    uses the cap too (PyTorch 2.4 and later), unless first_mb sets it (1 for 2.3 and earlier).
    """
    cap = DEFAULT_CAP_MB if cap_mb is None else cap_mb
    if first_mb is None:
        first_mb = DEFAULT_FIRST_MB if cap_mb is None else cap
    return int(first_mb * MIB), int(cap * MIB)


def assign(sizes: Sequence[int], bucket_limits: Sequence[int]) -> list[list[int]]:
    """compute_bucket_assignment_by_size for one dtype on one device: positions in `sizes` order.

    Limits after the last repeat the last one.
    """
    return [list(range(i, j)) for i, j in _spans([0, *accumulate(sizes)], bucket_limits)]


def _spans(total: list[int], bucket_limits: Sequence[int]) -> list[tuple[int, int]]:
    """The buckets as ranges [i, j) of positions, from the running totals of the sizes (total[k]:
    the first k sizes). PyTorch adds one tensor at a time and closes the bucket once it holds at
    least the limit; the first j > i whose total reaches it is found by bisection (sizes are
    >= 0, so the totals never decrease): a sweep over caps assigns thousands of tensors each."""
    n, out = len(total) - 1, []
    i, which = 0, 0
    while i < n:
        j = min(bisect_left(total, total[i] + bucket_limits[which], i + 1), n)  # none: the rest
        out.append((i, j))
        i, which = j, min(which + 1, len(bucket_limits) - 1)
    return out


def ready_order(model: Model) -> list[int]:
    """Tensor indices (model order) in the order their gradients become ready: reverse model
    order, with a normalisation's weight before its bias. The normalisations are the pairs
    X.weight, X.bias in a layer this model counts as free of FLOPs (norms; BERT's embedding
    LayerNorm)."""
    tensors = model.tensors()
    flops = [layer.flops for layer in model.layers]
    order = list(range(len(tensors) - 1, -1, -1))
    k = 0
    while k + 1 < len(order):
        (bias, _, layer), (weight, _, _) = tensors[order[k]], tensors[order[k + 1]]
        base = bias.removesuffix(".bias")
        if bias.endswith(".bias") and weight == base + ".weight" and flops[layer] == 0:
            order[k], order[k + 1] = order[k + 1], order[k]
            k += 1
        k += 1
    return order


def buckets(
    param_bytes: Sequence[int],
    cap_mb: float | None = None,
    first_mb: float | None = None,
    order: Sequence[int] | None = None,
) -> list[list[int]]:
    """Steady-state buckets, in all-reduce order, of parameter indices in model order.

    `order` is the ready order (indices in model order); by default reverse model order, so the
    first bucket holds the last parameters.
    """
    if order is None:
        order = range(len(param_bytes) - 1, -1, -1)
    return _ordered(param_bytes, list(order), limits(cap_mb, first_mb))


def _ordered(
    param_bytes: Sequence[int], order: Sequence[int], bucket_limits: Sequence[int]
) -> list[list[int]]:
    """buckets() at these limits in bytes, the tensors taken in `order`."""
    ready = [param_bytes[i] for i in order]
    return [[order[j] for j in b] for b in assign(ready, bucket_limits)]


def backward_times(layer_flops: Sequence[float], flops_per_s: float) -> list[float]:
    """Backward time of each layer: about twice its forward FLOPs, at the achieved rate."""
    return [2.0 * f / flops_per_s for f in layer_flops]


def readiness(
    layer_backward_s: Sequence[float],
    tensor_layer: Sequence[int],
    tensor_bytes: Sequence[int],
    bucket_list: Sequence[Sequence[int]],
) -> dict:
    """When each layer's backward ends, and each bucket's (bytes, tensors, ready time): all the
    timeline needs from the model, whatever the network (so a sweep over clusters reuses it).

    Layers are in forward order; the backward runs them last to first from time 0.
    """
    done = [0.0] * len(layer_backward_s)
    t = 0.0
    for i in range(len(layer_backward_s) - 1, -1, -1):
        t += layer_backward_s[i]
        done[i] = t
    size, layer_done = tensor_bytes.__getitem__, [done[k] for k in tensor_layer].__getitem__
    ready = tuple((sum(map(size, b)), len(b), max(map(layer_done, b))) for b in bucket_list)
    return {"backward_s": t, "layer_done_s": done, "buckets": ready}


def comm_end(ready: dict, allreduce_s: Callable[[int], float]) -> tuple[float, float]:
    """(when the last all-reduce ends, the time spent all-reducing): schedule() without its
    rows, for sweeps that need only the exposed time. Each distinct size is timed once, before
    the loop: a sweep runs this loop over tens of thousands of buckets of a few sizes, and a
    lookup there costs a fraction of a call (most of a sweep's time in the browser)."""
    took = {n: allreduce_s(n) for n in {b[0] for b in ready["buckets"]}}
    free = busy = 0.0
    for nbytes, _, at in ready["buckets"]:
        start = at if at > free else free
        free = start + took[nbytes]
        busy += free - start  # as schedule() sums its rows
    return free, busy


def schedule(ready: dict, allreduce_s: Callable[[int], float]) -> dict:
    """Each bucket's all-reduce starts when it is ready and the previous one has ended."""
    rows, free = [], 0.0
    for nbytes, tensors, at in ready["buckets"]:
        start = max(at, free)
        free = start + allreduce_s(nbytes)
        rows.append(
            {"bytes": nbytes, "tensors": tensors, "ready_s": at, "start_s": start, "end_s": free}
        )
    return {
        "backward_s": ready["backward_s"],
        "layer_done_s": ready["layer_done_s"],
        "buckets": rows,
        "allreduce_total_s": sum(r["end_s"] - r["start_s"] for r in rows),
        "comm_end_s": free,
        "exposed_s": max(0.0, free - ready["backward_s"]),
    }


def timeline(
    layer_backward_s: Sequence[float],
    tensor_layer: Sequence[int],
    tensor_bytes: Sequence[int],
    bucket_list: Sequence[Sequence[int]],
    allreduce_s: Callable[[int], float],
) -> dict:
    """When each bucket is ready, starts and ends its all-reduce, and the exposed time."""
    ready = readiness(layer_backward_s, tensor_layer, tensor_bytes, bucket_list)
    return schedule(ready, allreduce_s)


def sweep_caps(total_bytes: int, points: int = 41, low_mb: float = SWEEP_LOW_MB) -> list[float]:
    """Bucket caps in MiB, log-spaced from low_mb to the whole model (the last bucket is all)."""
    high = max(total_bytes / MIB, low_mb)
    step = math.log(high / low_mb) / (points - 1) if high > low_mb else 0.0
    return [low_mb * math.exp(step * k) for k in range(points)]


@lru_cache(maxsize=16)  # one per cluster, kept: a reader going back to a cluster finds its times
def nccl_time(system: nccl.System) -> Callable[[int], float]:
    """Seconds for an all-reduce of b bytes per GPU: NCCL's pick (nccl.choose) and its
    performance layer's time. An empty bucket (zero-size tensors only) costs nothing."""
    memo: dict[int, float] = {0: 0.0}  # a model's buckets repeat the same few sizes

    def seconds(b: int) -> float:
        if b not in memo:
            memo[b] = nccl.choose("AllReduce", b, system).time_us * 1e-6
        return memo[b]

    return seconds


def lockstep_time(topo: Topology) -> Callable[[int], float]:
    """The teaching model of pages 3-6: a lock-step ring (one ring per card across servers),
    alpha-beta, for comparison with NCCL's."""
    name = "ring" if topo.nodes == 1 or topo.gpus_per_node == 1 else "multi-ring"
    memo: dict[int, float] = {0: 0.0}

    def seconds(b: int) -> float:
        if b not in memo:
            memo[b] = cost.cost(name, topo, float(b))["time_s"]
        return memo[b]

    return seconds


@lru_cache(maxsize=32)  # a model's figures, the same on every change of the network
def _inputs(model: Model, batch: int, flops_per_s: float, grad_bytes: int):
    tensors = model.tensors()
    sizes = tuple(e * grad_bytes for _, e, _ in tensors)
    back = tuple(backward_times([layer.flops * batch for layer in model.layers], flops_per_s))
    return sizes, tuple(i for *_, i in tensors), back, tuple(ready_order(model))


def run(
    model: Model,
    allreduce_s: Callable[[int], float],
    batch: int,
    flops_per_s: float,
    grad_bytes: int,
    cap_mb: float | None = None,
    first_mb: float | None = None,
) -> dict:
    """One steady-state backward pass of `model` under DDP: buckets and timeline, each bucket's
    all-reduce timed by `allreduce_s` (nccl_time or lockstep_time)."""
    bucket_limits = limits(cap_mb, first_mb)
    bucket_list, ready = _bucketed(model, batch, flops_per_s, grad_bytes, bucket_limits)
    out = schedule(ready, allreduce_s)
    out["layer_done_s"] = list(ready["layer_done_s"])
    out["bucket_indices"] = [list(b) for b in bucket_list]
    out["limits_bytes"] = list(bucket_limits)
    out["gradient_bytes"] = ready["gradient_bytes"]
    return out


@lru_cache(maxsize=32)
def _bucketed(
    model: Model, batch: int, flops_per_s: float, grad_bytes: int, bucket_limits: tuple[int, int]
) -> tuple[tuple[tuple[int, ...], ...], dict]:
    """A run's buckets and their readiness(), which no network changes: a change of the GPU
    count (the page's usual change) only schedules them again. Keyed on the limits in bytes,
    so an unset cap and an explicit 25 MiB with a 1 MiB first bucket share one entry; held
    as tuples, so that no caller's result can change what is kept."""
    sizes, layer_of, back, order = _inputs(model, batch, flops_per_s, grad_bytes)
    bucket_list = _ordered(sizes, order, bucket_limits)
    ready = readiness(back, layer_of, sizes, bucket_list)
    ready["layer_done_s"] = tuple(ready["layer_done_s"])
    ready["gradient_bytes"] = sum(sizes)
    return tuple(tuple(b) for b in bucket_list), ready


def sweep(
    model: Model,
    allreduce_s: Callable[[int], float],
    batch: int,
    flops_per_s: float,
    grad_bytes: int,
    points: int = 41,
    first_mb: float | None = None,
) -> list[dict]:
    """Exposed communication against an explicit bucket cap: the first bucket uses the cap
    (PyTorch 2.4 and later) unless first_mb fixes it (1 MiB: PyTorch 2.3 and earlier)."""
    backward_s, caps = _swept_buckets(model, batch, flops_per_s, grad_bytes, points, first_mb)
    rows, timed = [], {}
    for cap, buckets in caps:
        # timeline()'s figures, without its rows; once per bucketing (equal ones share a tuple)
        if id(buckets) not in timed:
            timed[id(buckets)] = comm_end({"buckets": buckets}, allreduce_s)
        end, busy = timed[id(buckets)]
        rows.append(
            {
                "bucket_mb": cap,
                "buckets": len(buckets),
                "exposed_s": max(0.0, end - backward_s),
                "allreduce_total_s": busy,
            }
        )
    return rows


@lru_cache(maxsize=16)
def _swept_buckets(
    model: Model,
    batch: int,
    flops_per_s: float,
    grad_bytes: int,
    points: int,
    first_mb: float | None,
) -> tuple[float, tuple]:
    """The backward pass's length and, per cap, (cap, readiness()'s "buckets"): all of a sweep
    but the network's times, so a change of the cluster or the GPU count (the page's usual
    change) reuses them; the caps' bucketing is most of a sweep's time."""
    sizes, layer_of, back, order = _inputs(model, batch, flops_per_s, grad_bytes)
    # readiness() of each cap's buckets without listing their tensors: in ready order a bucket
    # is a range [i, j), its bytes a difference of running totals, its ready time a slice's max
    base = readiness(back, layer_of, sizes, ())
    total = [0, *accumulate(sizes[i] for i in order)]
    ready_at = [base["layer_done_s"][layer_of[i]] for i in order]
    caps, seen = [], {}
    for cap in sweep_caps(sum(sizes), points):
        spans = _spans(total, limits(cap, first_mb))
        buckets = tuple((total[j] - total[i], j - i, max(ready_at[i:j])) for i, j in spans)
        # caps that make the same buckets share one tuple, timed once by sweep(): below the
        # smallest tensors every cap gives a bucket per tensor (Llama 3 405B: 20 bucketings for
        # 41 caps, a fifth of the buckets)
        caps.append((cap, seen.setdefault(buckets, buckets)))
    return base["backward_s"], tuple(caps)


def _key(row: dict) -> tuple[float, float]:
    """The least exposed time; among equals, the least total all-reduce time (fewest launches)."""
    return round(row["exposed_s"], 12), row["allreduce_total_s"]


@lru_cache(maxsize=32)  # no network changes them: a change of GPUs only times them again
def bucketings(
    model: Model, batch: int, flops_per_s: float, grad_bytes: int, first_mb: float | None
) -> tuple[float, tuple[tuple[int, int | None, tuple], ...]]:
    """The backward pass's length and every distinct bucketing any cap gives, in order of the cap:
    (lowest limit in bytes, the limit from which the next one starts or None, readiness()'s
    "buckets"). The buckets, and so the exposed time, change only where a limit in bytes passes
    the size of a bucket that closed on it: a bucket [i, j) under limit L holds the same tensors
    for every limit up to total[j] - total[i], so the next bucketing starts one byte above the
    least such size over the buckets the cap closes (the first bucket too when it follows the
    cap; never the last, which ends with the model). Walking these breakpoints from a limit of
    0 bytes visits every cap a reader can enter, which a grid of caps cannot (the exposed time
    is a jagged step function of the cap: a 41-point sweep missed its least value)."""
    sizes, layer_of, back, order = _inputs(model, batch, flops_per_s, grad_bytes)
    base = readiness(back, layer_of, sizes, ())
    total = [0, *accumulate(sizes[i] for i in order)]
    ready_at = [base["layer_done_s"][layer_of[i]] for i in order]
    n, fixed = len(total) - 1, None if first_mb is None else int(first_mb * MIB)
    out, limit = [], 0
    while True:
        spans = _spans(total, (limit if fixed is None else fixed, limit))
        buckets = tuple((total[j] - total[i], j - i, max(ready_at[i:j])) for i, j in spans)
        closing = [
            total[j] - total[i] + 1
            for k, (i, j) in enumerate(spans)
            if j < n and (k > 0 or fixed is None)
        ]
        nxt = min(closing) if closing else None
        out.append((limit, nxt, buckets))
        if nxt is None:
            return base["backward_s"], tuple(out)
        limit = nxt


@lru_cache(maxsize=16)
def optimum(
    model: Model,
    allreduce_s: Callable[[int], float],
    batch: int,
    flops_per_s: float,
    grad_bytes: int,
    first_mb: float | None = None,
) -> dict:
    """The cap that leaves the least exposed time of all caps (bucketings() walks every one),
    as the shortest decimal in MiB that gives its buckets: what a page prints is what a reader
    who types it gets. `low_mb` and `high_mb` bound the caps that give the same buckets."""
    backward_s, every = bucketings(model, batch, flops_per_s, grad_bytes, first_mb)
    rows = []
    for low, high, buckets in every:
        end, busy = comm_end({"buckets": buckets}, allreduce_s)
        exposed = max(0.0, end - backward_s)
        rows.append({"low": low, "high": high, "buckets": len(buckets), "exposed_s": exposed,
                     "allreduce_total_s": busy})  # fmt: skip
    best = min(rows, key=_key)
    return {
        "bucket_mb": shortest_cap(best["low"], best["high"]),
        "low_mb": best["low"] / MIB,
        "high_mb": None if best["high"] is None else best["high"] / MIB,
        "buckets": best["buckets"],
        "exposed_s": best["exposed_s"],
        "allreduce_total_s": best["allreduce_total_s"],
    }


def shortest_cap(low: int, high: int | None) -> float:
    """The decimal cap in MiB with the fewest significant digits whose limit in bytes,
    int(cap × 2^20) as PyTorch computes it, lies in [low, high) (high None: no end). Found on
    exact fractions, and checked as PyTorch computes it on the float."""
    lo = Fraction(max(low, 1), MIB)  # a limit of 0 bytes only from a cap below 2^-20 MiB
    top = math.inf if high is None else Fraction(high, MIB)
    for e in range(math.floor(math.log10(lo if high is None else top)), -12, -1):
        unit = Fraction(10) ** e
        c = math.ceil(lo / unit) * unit
        while c < top and int(float(c) * MIB) < low:  # the float a hair below the fraction
            c += unit
        if c < top and (high is None or int(float(c) * MIB) < high):
            return float(c)
    return low / MIB
