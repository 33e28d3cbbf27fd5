"""The order of the additions, element by element: the ring, NCCL's trees, NVLS, a serial sum.

Floating-point addition is not associative, so two correct all-reduces of the same vectors can
differ in the last bits: what decides an element's bits is the order in which its n
contributions are added and the precision of the partial sums. This module takes each method's
order from NCCL 2.30.7's kernels (tag v2.30.7-1; file:line below are of that tag):

- Ring (src/device/all_reduce.h:14-83, runRing). The buffer is cut into channels
  (src/enqueue.cc:656-713: cells of 32 KiB of traffic, a Lo / Mid / Hi part per channel), each
  channel into loops of nranks chunks of chunkCount elements (all_reduce.h:23, 34; the last loop's
  chunks shrink to alignUp(divUp(rem, nranks), 16 / sizeof(T)), line 38). The GPU at ring
  position p first sends chunk p - 1 (line 43), so chunk c starts at position c + 1, each next
  position adds its own value (lines 50-56) and position c adds the last one and keeps the sum
  (lines 60-64), which the all-gather then copies to every GPU (lines 67-81). The element's
  order therefore depends on its offset, the GPU count, the channel count and the size.
- Tree (all_reduce.h:86-118, runTreeUpDown). A node adds what its children send to its own
  value: reduceCopy starts from srcs[0], the node's own input, and adds the receive peers in
  the order of tree.down (src/device/common_kernel.h:89-139, src/device/prims_simple.h:121,
  223); the root keeps the sum and the broadcast copies it down. The trees are ncclGetDtree's
  (src/graph/trees.cc:32-112), ported literally here: channels [k, 2k) use the second tree
  (src/graph/connect.cc:151-165), where k is the trees' channel count.
  Modelled with one GPU per tree node, as the site's tree everywhere (schedules/tree.py):
  NCCL chains the GPUs inside a server and builds the trees across servers.
- NVLS. The switch reduces with multimem.ld_reduce ... .acc::f32 (stage 9): partial sums in
  FP32, one rounding to the element type at the end. In which order the switch adds the n
  inputs is not documented; it is modelled as FP32 additions in rank order, then one rounding.
  (For FP32 data that is the serial sum.)
- Serial: the contributions added in GPU order, 0 to n-1, in the element type.
- Exact: the sum of the exact rationals, rounded once (dtypes.round_exact), the reference for
  every error in ulps.

Every method ends with one value per element copied to every GPU (the ring's all-gather, the
tree's broadcast, NVLS's multimem store), so the GPUs agree bit for bit within a method; the
results keep one buffer per GPU so the check is made, not assumed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

from ..dtypes import FP32, DType
from .gradients import draw as gradient

# src/enqueue.cc:585 (MinTrafficPerChannel) and :91-94 (an all-reduce's traffic per byte is 2)
MIN_TRAFFIC_PER_CHANNEL = 32 << 10
ALLREDUCE_TRAFFIC_PER_BYTE = 2
NCCL_STEPS = 8  # src/include/device.h:26
# Bytes of one ring chunk per protocol (src/enqueue.cc:2236-2241, calcCollChunking): a step is
# buffSize / NCCL_STEPS (src/init.cc:810-813); Simple's all-reduce ring takes
# ALLREDUCE_CHUNKSTEPS = NCCL_STEPS / 2 steps (src/include/collectives.h:20); LL halves the step
# (its lines carry half data), LL128 keeps 15 of each 16 words.
_LL_BUFF = 8 * 512 * NCCL_STEPS * 16  # NCCL_LL_LINES_PER_THREAD x NCCL_LL_MAX_NTHREADS x 16 B
_LL128_BUFF = 120 * 640 * NCCL_STEPS * 8  # ELEMS_PER_THREAD x MAX_NTHREADS x 8 B
CHUNK_BYTES = {
    "Simple": (1 << 22) // NCCL_STEPS * (NCCL_STEPS // 2),
    "LL": _LL_BUFF // NCCL_STEPS // 2,
    "LL128": _LL128_BUFF // NCCL_STEPS // 16 * 15,
}
# ncclProtoGrainSize (src/include/device.h:328-333): LL128's is 32 x 8 / 16 x 15 x 8 bytes
GRAIN_BYTES = {"Simple": 512, "LL": 16, "LL128": 3840}
# Per-thread bytes before NCCL adds a channel (src/include/comm.h:49-51; the ring's LL threshold
# is x nranks, src/graph/tuning.cc:589-594) and threads per channel (tuning.cc:244-256).
THREAD_THRESHOLD = {"Simple": 64, "LL": 8, "LL128": 8}
MAX_THREADS = {"Simple": 512, "LL": 512, "LL128": 640}


@dataclass(frozen=True)
class Part:
    """One channel's share of the buffer (ncclCollCbdPart, src/include/device.h:337-361)."""

    channel: int
    offset: int  # first element
    count: int  # elements
    chunk: int  # chunkCount: elements per chunk


def _div_up(a: int, b: int) -> int:
    return -(-a // b)


def _align_up(a: int, b: int) -> int:
    return _div_up(a, b) * b


def kernel_channels(
    nbytes: int, nranks: int, algorithm: str, protocol: str, comm_channels: int
) -> int:
    """The channels one call runs on (src/enqueue.cc:2070-2096): comm->nChannels, one fewer
    while the message is smaller than channels x threads x the per-thread threshold."""
    threshold = THREAD_THRESHOLD[protocol] * (
        nranks if (algorithm, protocol) == ("Ring", "LL") else 1
    )
    nc, nt = comm_channels, MAX_THREADS[protocol]
    while nbytes < nc * nt * threshold and nc >= 2:
        nc -= 1
    return nc


def split(count: int, itemsize: int, channels: int, protocol: str) -> list[Part]:
    """The buffer of one call alone in its plan, cut into channels (src/enqueue.cc:656-713),
    each with its chunk size (calcCollChunking with nChannels = 1, src/enqueue.cc:726-738)."""
    per_byte = ALLREDUCE_TRAFFIC_PER_BYTE * (4 if protocol == "LL" else 1)
    cell = _div_up(_div_up(MIN_TRAFFIC_PER_CHANNEL, per_byte), 16) * 16
    per_cell = cell // itemsize
    cells = _div_up(count * itemsize, cell)
    traffic = max(MIN_TRAFFIC_PER_CHANNEL, count * itemsize * ALLREDUCE_TRAFFIC_PER_BYTE)
    per_channel = _div_up(traffic // channels, 16) * 16  # enqueue.cc:618
    cell_traffic = cell * per_byte
    cells_per_channel = min(cells, _div_up(per_channel, cell_traffic))
    lo = cells if channels == 1 else min(cells, _div_up(per_channel, cell_traffic))
    mid = (cells - lo) // cells_per_channel
    hi = (cells - lo) % cells_per_channel
    used = (1 if lo else 0) + mid + (1 if hi else 0)
    if channels < used:  # overflowed the channels: spread the rest over the others
        mid = channels - 2
        cells_per_channel = (cells - lo) // (mid + 1)
        hi = cells_per_channel + (cells - lo) % (mid + 1)
    if hi == 0 and mid:
        hi, mid = cells_per_channel, mid - 1
    counts = (
        [lo * per_cell] + [cells_per_channel * per_cell] * mid + ([hi * per_cell] if hi else [])
    )
    counts[-1] -= cells * per_cell - count  # enqueue.cc:700: the last part gives back the padding
    chunk_bytes = CHUNK_BYTES[protocol] // GRAIN_BYTES[protocol] * GRAIN_BYTES[protocol]
    parts, offset = [], 0
    for ch, n in enumerate(counts):
        if n > 0:
            parts.append(Part(ch, offset, n, chunk_bytes // itemsize))
        offset += n
    return parts


def ring_first(offset: int, parts: list[Part], nranks: int, itemsize: int) -> tuple[int, int]:
    """(channel, ring position that starts the element's chunk) for the element at `offset`:
    runRing's loop (all_reduce.h:34-46) run backwards from the offset."""
    part = next(p for p in parts if p.offset <= offset < p.offset + p.count)
    local = offset - part.offset
    loop = nranks * part.chunk
    start = local // loop * loop
    chunk = part.chunk
    if part.count - start < loop:  # the last loop's chunks shrink (all_reduce.h:38)
        chunk = _align_up(_div_up(part.count - start, nranks), max(1, 16 // itemsize))
    c = (local - start) // chunk
    return part.channel, (c + 1) % nranks


def ring_sequence(nranks: int, first: int) -> list[int]:
    """The ranks in the order the ring adds them, from the one that sends the chunk first."""
    return [(first + k) % nranks for k in range(nranks)]


def fold(values, dtype: DType) -> float:
    """Left to right, each addition rounded to the type: a chain of GPUs adding in turn."""
    add = dtype.adder()
    acc = values[0]
    for v in values[1:]:
        acc = add(acc, v)
    return acc


def tree_children(nranks: int) -> tuple[list[list[int]], list[list[int]]]:
    """tree.down of every rank in NCCL's two trees (trees.cc:32-112), in NCCL's order: d0 then
    d1 when present (connect.cc:120-136, setTreeDown fills the first free slot)."""

    def btree_down(rank: int) -> list[int]:
        bit = 1
        while bit < nranks and not bit & rank:
            bit <<= 1
        if rank == 0:
            return [bit >> 1] if nranks > 1 else []
        low = bit >> 1
        d0 = -1 if low == 0 else rank - low
        d1 = -1 if low == 0 else rank + low
        while d1 >= nranks:  # trees.cc:59-62, as written (it tests before halving)
            d1 = -1 if low == 0 else rank + low
            low >>= 1
        return [d for d in (d0, d1) if d != -1]

    a = [btree_down(r) for r in range(nranks)]
    if nranks % 2:  # shift by one rank
        b = [[(d + 1) % nranks for d in btree_down((r - 1) % nranks)] for r in range(nranks)]
    else:  # mirror
        b = [[nranks - 1 - d for d in btree_down(nranks - 1 - r)] for r in range(nranks)]
    return a, b


def tree_sum(values, down: list[list[int]], root: int, dtype: DType) -> float:
    """The root's value: every node's own input, then each child's partial sum, in tree.down's
    order (reduceCopy's srcs: own first), each addition rounded to the type."""
    add = dtype.adder()

    def up(v: int) -> float:
        acc = values[v]
        for c in down[v]:
            acc = add(acc, up(c))
        return acc

    return up(root)


def tree_roots(nranks: int) -> tuple[int, int]:
    """The two trees' roots: rank 0, and rank n-1 (mirror) or 1 (shift)."""
    return 0, (1 if nranks % 2 else nranks - 1)


def nvls_sum(values, dtype: DType) -> float:
    """FP32 partial sums in rank order (the switch's order is undocumented), one rounding."""
    return dtype.round(fold([FP32.round(v) for v in values], FP32))


def exact_sum(values, dtype: DType) -> float:
    return dtype.round_exact(sum(map(Fraction, values), Fraction(0)))


@dataclass(frozen=True)
class Plan:
    """What NCCL does with one call: its algorithm and protocol, and the buffer's channels."""

    algorithm: str
    protocol: str
    channels: int
    parts: tuple[Part, ...]


def make_plan(
    count: int, itemsize: int, nranks: int, algorithm: str, protocol: str, comm_channels: int
) -> Plan:
    nc = kernel_channels(count * itemsize, nranks, algorithm, protocol, comm_channels)
    return Plan(algorithm, protocol, nc, tuple(split(count, itemsize, nc, protocol)))


def ring(inputs: list[list], dtype: DType, plan: Plan, offset: int = 0) -> dict:
    """Every GPU's buffer after NCCL's ring, and the rank that starts each element's chunk;
    the inputs sit at `offset` elements into the plan's buffer (a gradient inside a bucket)."""
    n, length = len(inputs), len(inputs[0])
    parts = list(plan.parts)
    out, first = [], []
    for j in range(length):
        _, f = ring_first(offset + j, parts, n, dtype.itemsize)
        first.append(f)
        out.append(fold([inputs[r][j] for r in ring_sequence(n, f)], dtype))
    return {"buffers": [list(out) for _ in range(n)], "first": first}


def tree(inputs: list[list], dtype: DType, plan: Plan, tree_channels: int, offset: int = 0) -> dict:
    """Every GPU's buffer after NCCL's double binary tree; which tree each element took."""
    n, length = len(inputs), len(inputs[0])
    downs, roots = tree_children(n), tree_roots(n)
    parts = list(plan.parts)
    out, which = [], []
    k = max(1, tree_channels)
    for j in range(length):
        at = offset + j
        ch = next(p.channel for p in parts if p.offset <= at < p.offset + p.count)
        t = (ch // k) % 2
        which.append(t)
        out.append(tree_sum([row[j] for row in inputs], downs[t], roots[t], dtype))
    return {"buffers": [list(out) for _ in range(n)], "tree": which}


def serial(inputs: list[list], dtype: DType) -> dict:
    """Every GPU adds all n contributions itself, in GPU order."""
    out = [fold(list(col), dtype) for col in zip(*inputs, strict=True)]
    return {"buffers": [list(out) for _ in inputs]}


def nvls(inputs: list[list], dtype: DType) -> dict:
    out = [nvls_sum(col, dtype) for col in zip(*inputs, strict=True)]
    return {"buffers": [list(out) for _ in inputs]}


def exact(inputs: list[list], dtype: DType) -> list[float]:
    return [exact_sum(col, dtype) for col in zip(*inputs, strict=True)]


def same_bits(a: list, b: list) -> bool:
    """Equal element by element, telling -0.0 from 0.0 and NaN from any number."""
    return len(a) == len(b) and all(_bits(x) == _bits(y) for x, y in zip(a, b))


def _bits(x: float) -> tuple:
    return ("nan",) if math.isnan(x) else (x, math.copysign(1.0, x))


def ulps(x: float, ref: float, dtype: DType) -> float | None:
    """|x - ref| in units in the last place of ref (None if either is not finite and they
    differ)."""
    if x == ref:
        return 0.0
    if not (math.isfinite(x) and math.isfinite(ref)):
        return None
    return float(abs(Fraction(x) - Fraction(ref)) / Fraction(dtype.ulp(ref)))


def summary(buffers: list[list], target: list[float], dtype: DType) -> dict:
    """A method's contract figures: rank 0's result, whether all GPUs agree, ulps from exact."""
    result = buffers[0]
    errs = [ulps(x, t, dtype) for x, t in zip(result, target, strict=True)]
    finite = [e for e in errs if e is not None]
    return {
        "result": result,
        "ranks_agree": all(same_bits(b, result) for b in buffers),
        "max_ulp": max(finite) if len(finite) == len(errs) else None,
        "mean_ulp": sum(finite) / len(errs) if len(finite) == len(errs) else None,
        "ulps": errs,
    }


KINDS = ("random", "wide", "probe")
PROBE = (1e8, 1.0, -1e8, 1.0)  # the cancellation probe: 1e8, 1, -1e8, 1 on four GPUs
PROBE_FP16 = (1e4, 1.0, -1e4, 1.0)  # 1e8 is past FP16's largest number (65504)


def probe_for(dtype: DType) -> tuple[float, ...]:
    return PROBE_FP16 if dtype.max_value < 1e8 else PROBE


def draw(kind: str, gpus: int, length: int, dtype: DType, seed: int) -> list[list[float]]:
    """Values of one kind, reproducible from the seed, rounded to the type. random: a gradient's
    spread (gradients.draw); wide: magnitudes over 2**-20 to 2**20 (2**-10 to 2**5 in FP16, whose
    range is short); probe: GPU i holds probe[(i + j) mod 4] in element j, so element 0 on four
    GPUs is exactly 1e8, 1, -1e8, 1 and the other elements rotate it."""
    if kind == "random":
        return gradient(gpus, length, dtype, seed)
    if kind == "probe":
        p = probe_for(dtype)
        return [[dtype.round(p[(i + j) % 4]) for j in range(length)] for i in range(gpus)]
    rng = random.Random(seed)
    lo, hi = (-10, 5) if dtype.max_value < 1e8 else (-20, 20)
    return [
        [
            dtype.round(rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** rng.randint(lo, hi))
            for _ in range(length)
        ]
        for _ in range(gpus)
    ]
