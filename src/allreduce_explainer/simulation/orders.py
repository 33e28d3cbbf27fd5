"""The order of the additions, element by element: the ring, NCCL's trees, NVLS, a serial sum.

Floating-point addition is not associative, so two correct all-reduces of the same vectors can
differ in the last bits: what decides an element's bits is the order in which its n
contributions are added and the precision of the partial sums. This module takes each method's
order from NCCL 2.30.7's kernels (tag v2.30.7-1; file:line below are of that tag):

- Ring (src/device/all_reduce.h:14-83, runRing). The buffer is cut into channels
  (src/enqueue.cc:583-713: the call's traffic, x 4 for LL (:461), spread over its channels in
  cells of 32 KiB of traffic, a Lo / Mid / Hi part per channel), each channel into loops of
  nranks chunks of chunkCount elements (all_reduce.h:23, 34; the last loop's chunks shrink to
  alignUp(divUp(rem, nranks), 16 / sizeof(T)), line 38). The GPU at ring position p first sends
  chunk p - 1 (line 43), so chunk c starts at position c + 1, each next position adds its own
  value (lines 50-56) and position c adds the last one and keeps the sum (lines 60-64), which
  the all-gather then copies round the ring (lines 67-81). The element's order therefore
  depends on its offset, the GPU count, the channel count, the size and the channel's ring.
- Tree (all_reduce.h:86-118, runTreeUpDown). A GPU adds what its children send to its own
  value: reduceCopy starts from srcs[0], the GPU's own input, and adds the receive peers in the
  order of tree.down (src/device/common_kernel.h:89-139, src/device/prims_simple.h:121, 223);
  the root keeps the sum and the broadcast copies it down. Inside a server the GPUs form a
  chain (src/graph/connect.cc:53-62: up is the GPU before, down[0] the GPU after); across
  servers the servers' first GPUs form ncclGetDtree's two trees (src/graph/trees.cc:32-112),
  whose children attach where the search's pattern says (connect.cc:55-64, 149-166); channels
  [k, 2k) use the second tree (connect.cc:151, 460). On one server the tree is the chain alone.
- NVLS. The switch reduces with multimem.ld_reduce ... .acc::f32 (stage 9): partial sums in
  FP32, one rounding to the element type at the end. In which order the switch adds the n
  inputs is not documented; it is modelled as FP32 additions in rank order, then one rounding.
  (For FP32 data that is the serial sum.)
- Serial: every GPU adds the n contributions itself, in GPU order, in the element type.
- Exact: the sum of the exact rationals, rounded once (dtypes.round_exact), the reference for
  every error in ulps.

Each GPU's buffer is computed along its own path (the ring's messages and the all-gather's
copies, the tree's partial sums and its broadcast, each GPU's own serial sum), so whether the
GPUs hold the same bits is a check on the result, not an assumption.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..dtypes import FP32, DType
from ..records import BYTES, COUNT, TIME, ULP, YES, Quantity, Record
from ..sources import FITTED
from .gradients import draw as gradient

# src/enqueue.cc:585 (MinTrafficPerChannel) and :91-94 (an all-reduce's traffic per byte is 2)
MIN_TRAFFIC_PER_CHANNEL = 32 << 10
ALLREDUCE_TRAFFIC_PER_BYTE = 2
LL_TRAFFIC_FACTOR = 4  # enqueue.cc:461 and 658: LL's lines carry half data, and flags
NCCL_STEPS = 8  # src/include/device.h:26
ALLREDUCE_CHUNKSTEPS = NCCL_STEPS // 2  # src/include/collectives.h:20
# comm->buffSizes (src/init.cc:810-813, 824): LL's lines x threads x 16 B, LL128's elements per
# thread x threads x 8 B, Simple's 4 MiB (device.h:97-98, 114-115)
BUFF_BYTES = {"LL": 8 * 512 * NCCL_STEPS * 16, "LL128": 120 * 640 * NCCL_STEPS * 8,
              "Simple": 1 << 22}  # fmt: skip
LL128_LINE_ELEMS, LL128_DATA_ELEMS = 16, 15  # device.h:110-112: 128-byte lines, one flag word
# ncclProtoGrainSize (device.h:328-333): LL128's is WARP_SIZE x SHMEM_ELEMS_PER_THREAD /
# LINEELEMS x DATAELEMS x 8 = 32 x 8 / 16 x 15 x 8 bytes
GRAIN_BYTES = {"Simple": 512, "LL": 16, "LL128": 32 * 8 // LL128_LINE_ELEMS * LL128_DATA_ELEMS * 8}
# Per-thread bytes before NCCL adds a channel (src/include/comm.h:49-51; the ring's LL threshold
# is x nranks, src/graph/tuning.cc:589-594) and threads per channel (tuning.cc:244-256).
THREAD_THRESHOLD = {"Simple": 64, "LL": 8, "LL128": 8}
MAX_THREADS = {"Simple": 512, "LL": 512, "LL128": 640}
TREE_PATTERNS = ("TREE", "BALANCED_TREE", "SPLIT_TREE")  # src/include/graph.h:160-169


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


def split(
    count: int, itemsize: int, channels: int, protocol: str, comm_channels: int | None = None
) -> list[tuple[int, int, int]]:
    """(channel, first element, elements) of each part of one call alone in its plan
    (scheduleCollTasksToPlan, src/enqueue.cc:583-713). The call's traffic (x 4 for LL, :461) is
    shared over its `channels` (:597-618); which channel is the last and how many there are to
    overflow into are comm->nChannels' (`comm_channels`, :589-590, 666, 675)."""
    comm = channels if comm_channels is None else comm_channels
    per_byte = ALLREDUCE_TRAFFIC_PER_BYTE * (LL_TRAFFIC_FACTOR if protocol == "LL" else 1)
    traffic = max(MIN_TRAFFIC_PER_CHANNEL, count * itemsize * per_byte)  # :461, 597
    per_channel = _div_up(traffic // min(channels, comm), 16) * 16  # :599, 618
    cell = _div_up(_div_up(MIN_TRAFFIC_PER_CHANNEL, per_byte), 16) * 16  # :659
    per_cell = cell // itemsize
    cells = _div_up(count * itemsize, cell)
    cell_traffic = cell * per_byte
    cells_per_channel = min(cells, _div_up(per_channel, cell_traffic))
    lo = cells if comm == 1 else min(cells, _div_up(per_channel, cell_traffic))  # :666-671
    mid = (cells - lo) // cells_per_channel
    hi = (cells - lo) % cells_per_channel
    if comm < (1 if lo else 0) + mid + (1 if hi else 0):  # :675-680, overflowed the channels
        mid = comm - 2
        cells_per_channel = (cells - lo) // (mid + 1)
        hi = cells_per_channel + (cells - lo) % (mid + 1)
    if hi == 0 and mid:  # :681-684
        hi, mid = cells_per_channel, mid - 1
    counts = (
        [lo * per_cell] + [cells_per_channel * per_cell] * mid + ([hi * per_cell] if hi else [])
    )
    counts[-1] -= cells * per_cell - count  # :700: the last part gives back the padding
    parts, offset = [], 0
    for ch, n in enumerate(counts):
        if n > 0:
            parts.append((ch, offset, n))
        offset += n
    return parts


def chunk_bytes(algorithm: str, protocol: str, nbytes: int, nranks: int, nodes: int) -> int:
    """calcCollChunking's chunkSize for one part of `nbytes` on one channel
    (src/enqueue.cc:2221-2227, 2286-2294, 2321): a step of the protocol's buffer
    (buffSize / NCCL_STEPS), ALLREDUCE_CHUNKSTEPS of them for the ring in Simple and one
    otherwise; LL halves it, LL128 keeps 15 of 16 words; the tree in LL128 halves it further
    for small parts; then a whole number of grains."""
    steps = ALLREDUCE_CHUNKSTEPS if (algorithm, protocol) == ("Ring", "Simple") else 1
    size = BUFF_BYTES[protocol] // NCCL_STEPS * steps
    if protocol == "LL":
        size //= 2
    elif protocol == "LL128":
        size = size // LL128_LINE_ELEMS * LL128_DATA_ELEMS
    if (algorithm, protocol) == ("Tree", "LL128"):
        ppn = nranks / nodes
        nsteps = 1 + (nodes.bit_length() - 1) + 0.1 * ppn  # log2i: floor (utils.h:56)
        while nbytes // size < nsteps * 64 / ppn and size > 131072:
            size //= 2
        while nbytes // size < nsteps * 16 / ppn and size > 32768:
            size //= 2
    grain = GRAIN_BYTES[protocol]
    return size // grain * grain


@dataclass(frozen=True)
class Plan:
    """What NCCL does with one call: its algorithm and protocol, and the buffer's channels."""

    algorithm: str
    protocol: str
    channels: int
    parts: tuple[Part, ...]


def make_plan(
    count: int,
    itemsize: int,
    nranks: int,
    algorithm: str,
    protocol: str,
    comm_channels: int,
    nodes: int = 1,
) -> Plan:
    """The call's channels, their parts and each part's chunk (calcCollChunking with
    nChannels = 1 on the part's bytes, src/enqueue.cc:715-738)."""
    nc = kernel_channels(count * itemsize, nranks, algorithm, protocol, comm_channels)
    parts = tuple(
        Part(ch, at, n, chunk_bytes(algorithm, protocol, n * itemsize, nranks, nodes) // itemsize)
        for ch, at, n in split(count, itemsize, nc, protocol, comm_channels)
    )
    return Plan(algorithm, protocol, nc, parts)


def part_of(offset: int, parts: Sequence[Part]) -> Part:
    """The channel's part that holds the element at `offset`."""
    return next(p for p in parts if p.offset <= offset < p.offset + p.count)


def ring_first(offset: int, parts: Sequence[Part], nranks: int, itemsize: int) -> tuple[int, int]:
    """(channel, ring position that starts the element's chunk) for the element at `offset`:
    runRing's loop (all_reduce.h:34-46) run backwards from the offset."""
    part = part_of(offset, parts)
    local = offset - part.offset
    loop = nranks * part.chunk
    start = local // loop * loop
    chunk = part.chunk
    if part.count - start < loop:  # the last loop's chunks shrink (all_reduce.h:38)
        chunk = _align_up(_div_up(part.count - start, nranks), max(1, 16 // itemsize))
    c = (local - start) // chunk
    return part.channel, (c + 1) % nranks


def fold(values, dtype: DType) -> float:
    """Left to right, each addition rounded to the type: a chain of GPUs adding in turn."""
    add = dtype.adder()
    acc = values[0]
    for v in values[1:]:
        acc = add(acc, v)
    return acc


def btree(nranks: int, rank: int) -> tuple[int, int, int]:
    """(up, down0, down1) of `rank` in ncclGetBtree (trees.cc:32-66), -1 for none."""
    bit = 1
    while bit < nranks and not bit & rank:
        bit <<= 1
    if rank == 0:
        return -1, -1, (bit >> 1 if nranks > 1 else -1)
    up = (rank ^ bit) | (bit << 1)
    if up >= nranks:
        up = rank ^ bit
    low = bit >> 1
    d0 = -1 if low == 0 else rank - low
    d1 = -1 if low == 0 else rank + low
    while d1 >= nranks:  # trees.cc:59-62, as written (it tests before halving)
        d1 = -1 if low == 0 else rank + low
        low >>= 1
    return up, d0, d1


def dtree(nranks: int, rank: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(up, down0, down1) of `rank` in ncclGetDtree's two trees (trees.cc:84-112): the btree,
    and the btree mirrored (even nranks) or shifted by one rank (odd)."""
    if nranks % 2:
        up, d0, d1 = btree(nranks, (rank - 1) % nranks)

        def back(x: int) -> int:
            return -1 if x == -1 else (x + 1) % nranks
    else:
        up, d0, d1 = btree(nranks, nranks - 1 - rank)

        def back(x: int) -> int:
            return -1 if x == -1 else nranks - 1 - x

    return btree(nranks, rank), (back(up), back(d0), back(d1))


def tree_children(
    nranks: int, gpus_per_node: int = 1, pattern: str = "TREE"
) -> tuple[list[list[int]], list[list[int]]]:
    """tree.down of every rank in NCCL's two trees, in NCCL's slot order. Inside a server the
    GPUs chain in local rank order (connect.cc:53-62; NVIDIA/nccl-tests#213's 1 x 8 log prints
    it so on all 16 channels), its first GPU the server's head. A server's children attach to
    its GPU child0Index (0 for TREE, else 1) and child1Index (1 for SPLIT_TREE, else 0)
    (connect.cc:55-57), after the chain's own child, d0 before d1 (connect.cc:155-160;
    setTreeDown takes the first free slot, :120-130). One GPU per server searches TREE
    (search.cc:1133)."""
    g = gpus_per_node
    nodes = nranks // g
    if g == 1:
        pattern = "TREE"
    c0 = 0 if pattern == "TREE" else 1
    c1 = 1 if pattern == "SPLIT_TREE" else 0
    trees: tuple[list[list[int]], list[list[int]]] = ([], [])
    for t in (0, 1):
        down = [[r + 1] if r % g < g - 1 else [] for r in range(nranks)]
        for node in range(nodes):
            _, d0, d1 = dtree(nodes, node)[t]
            for at, child in ((c0, d0), (c1, d1)):
                if child != -1:
                    down[node * g + at].append(child * g)
        trees[t].extend(down)
    return trees


def tree_roots(nranks: int, gpus_per_node: int = 1) -> tuple[int, int]:
    """The GPUs that end each tree's sum: the head of the server with no parent."""
    nodes = nranks // gpus_per_node

    def root(t: int) -> int:
        return next(v for v in range(nodes) if dtree(nodes, v)[t][0] == -1) * gpus_per_node

    return root(0), root(1)


def nvls_sum(values, dtype: DType) -> float:
    """FP32 partial sums in rank order (the switch's order is undocumented), one rounding."""
    return dtype.round(fold([FP32.round(v) for v in values], FP32))


def exact_sum(values, dtype: DType) -> float:
    return dtype.round_exact(sum(map(Fraction, values), Fraction(0)))


def rank_order(nranks: int) -> tuple[int, ...]:
    return tuple(range(nranks))


def from_rank_zero(ring: Sequence[int]) -> list[int]:
    """A ring as NCCL indexes it: a rank's ring index is its distance from rank 0 along the ring
    (ring->index, src/init.cc:797-802 in v2.30.7-1), and NCCL prints every ring from rank 0
    (src/graph/rings.cc:40-48), so the same cycle written from another start is the same ring."""
    at = list(ring).index(0)
    return [*ring[at:], *ring[:at]]


def ring(
    inputs: list[list],
    dtype: DType,
    plan: Plan,
    offset: int = 0,
    rings: Sequence[Sequence[int]] | None = None,
) -> dict:
    """Every GPU's buffer after NCCL's ring, message by message: the reduce-scatter's partial
    sums round the channel's ring, then the all-gather's copies; and the rank that starts each
    element's chunk. `rings[c]` is channel c's ring (ranks in ring order, as NCCL_DEBUG=INFO's
    "Channel c/..." lines print them, from any start: from_rank_zero; channels past the list
    reuse it cyclically); rank order by default. The inputs sit at `offset` elements into the
    plan's buffer (a gradient inside a bucket)."""
    n, length = len(inputs), len(inputs[0])
    rings = [from_rank_zero(r) for r in rings] if rings else [rank_order(n)]
    add = dtype.adder()
    buffers = [list(row) for row in inputs]
    first = []
    for j in range(length):
        channel, f = ring_first(offset + j, plan.parts, n, dtype.itemsize)
        at = rings[channel % len(rings)]
        first.append(at[f])
        prev = at[f]
        for k in range(1, n):  # reduce-scatter: each GPU adds its own value to what it received
            r = at[(f + k) % n]
            buffers[r][j] = add(buffers[prev][j], buffers[r][j])
            prev = r
        for k in range(n - 1):  # all-gather: each GPU copies what it received
            r = at[(f + k) % n]
            buffers[r][j] = buffers[prev][j]
            prev = r
    return {"buffers": buffers, "first": first}


def tree(
    inputs: list[list],
    dtype: DType,
    plan: Plan,
    tree_channels: int,
    offset: int = 0,
    gpus_per_node: int = 1,
    pattern: str = "TREE",
    chains: Sequence[Sequence[int]] | None = None,
) -> dict:
    """Every GPU's buffer after NCCL's double binary tree: each GPU's partial sum (its own
    value, then each child's, in tree.down's order), then the broadcast's copies from the
    root down; and which tree each element took (channels [k, 2k) the second, k =
    `tree_channels`, the search's channel count before connect.cc:460 doubles it).

    `chains[c]`: on one server, channel c's chain as a log's Trees lines link it, from its head
    down (channels past the list reuse it cyclically); rank order by default. Inside a server
    NCCL chains the GPUs in its tree search's order for the channel (treeIntra: up the GPU
    before, down[0] the GPU after, src/graph/connect.cc:53-62), which is not always rank order."""
    n, length = len(inputs), len(inputs[0])
    if chains:
        links = [_chain(c) for c in chains]
    else:
        downs, roots = tree_children(n, gpus_per_node, pattern), tree_roots(n, gpus_per_node)
        links = [(downs[t], roots[t]) for t in (0, 1)]
    walks = [_preorder(down, root) for down, root in links]
    add = dtype.adder()
    buffers = [list(row) for row in inputs]
    which = []
    k = max(1, tree_channels)
    for j in range(length):
        channel = part_of(offset + j, plan.parts).channel
        t = (channel // k) % 2
        which.append(t)
        pick = channel % len(links) if chains else t
        down, walk = links[pick][0], walks[pick]
        for v in reversed(walk):  # up: children before their parent
            for c in down[v]:
                buffers[v][j] = add(buffers[v][j], buffers[c][j])
        for v in walk:  # down: the broadcast copies the parent's result
            for c in down[v]:
                buffers[c][j] = buffers[v][j]
    return {"buffers": buffers, "tree": which}


def _chain(chain: Sequence[int]) -> tuple[list[list[int]], int]:
    """(tree.down of every rank, the head) of one server's chain, head first."""
    down: list[list[int]] = [[] for _ in chain]
    for up, child in zip(chain, chain[1:]):
        down[up].append(child)
    return down, chain[0]


def _preorder(down: list[list[int]], root: int) -> list[int]:
    """The tree's GPUs, every parent before its children."""
    out, todo = [], [root]
    while todo:
        v = todo.pop()
        out.append(v)
        todo.extend(reversed(down[v]))
    return out


def tree_sum(values, down: list[list[int]], root: int, dtype: DType) -> float:
    """The root's value: the tree's up phase on one element."""
    add = dtype.adder()
    acc = list(values)
    for v in reversed(_preorder(down, root)):
        for c in down[v]:
            acc[v] = add(acc[v], acc[c])
    return acc[root]


def serial(inputs: list[list], dtype: DType, orders: Sequence[Sequence[int]] | None = None) -> dict:
    """Every GPU adds all n contributions itself, GPU r in the order `orders[r]` (GPU order
    0, 1, ..., n - 1 by default). GPUs with the same order run the same additions, so each
    distinct order is summed once."""
    n = len(inputs)
    orders = [tuple(o) for o in orders] if orders else [rank_order(n)] * n
    sums = {o: [fold([col[r] for r in o], dtype) for col in zip(*inputs, strict=True)]
            for o in set(orders)}  # fmt: skip
    return {"buffers": [list(sums[o]) for o in orders]}


def nvls(inputs: list[list], dtype: DType) -> dict:
    """The switch's sum of each element (multimem.ld_reduce), stored to every GPU's buffer
    (multimem.st)."""
    out = [nvls_sum(col, dtype) for col in zip(*inputs, strict=True)]
    return {"buffers": [list(out) for _ in inputs]}


def exact(inputs: list[list], dtype: DType) -> list[float]:
    return [exact_sum(col, dtype) for col in zip(*inputs, strict=True)]


def same_bits(a: list, b: list) -> bool:
    """Equal element by element, telling -0.0 from 0.0 and NaN from any number."""
    return len(a) == len(b) and all(bits(x) == bits(y) for x, y in zip(a, b))


def bits(x: float) -> tuple:
    """A key equal for equal bits: -0.0 apart from 0.0, every NaN alike."""
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


# What api.orders' answer holds (records.py): the bucket, each method's figures (`summary`'s)
# and NCCL's pick, timed by the fitted time.
RECORD = Record("orders", (
    Quantity("gpus", COUNT, "GPUs"), Quantity("length", COUNT, "elements"),
    Quantity("bytes", BYTES, "bucket"), Quantity("offset", COUNT, "the gradient's first element"),
))  # fmt: skip
METHOD = Record("orders' method", (
    Quantity("ranks_agree", YES, "same on every GPU"), Quantity("max_ulp", ULP, "worst"),
    Quantity("mean_ulp", ULP, "mean"),
))  # fmt: skip
PICK = Record("orders' NCCL pick", (Quantity("time_us", TIME, "time", FITTED, scale=1e-6),))

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
