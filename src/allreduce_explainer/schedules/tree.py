"""Double binary tree all-reduce over all n GPUs, pipelined (NCCL's tree, after Sanders et al.).

Which tree: NCCL's own (src/graph/trees.cc, ncclGetDtree). Tree A is NCCL's in-order binary tree
with root 0 (a rank's parent and children come from its lowest set bit); tree B is its mirror
(r -> n-1-r) when n is even, or tree A shifted by one rank when n is odd. Nearly every GPU is an
inner node in one tree and a leaf in the other, so the two trees share the links evenly. Each tree
carries half of the vector.

Layout over servers: the trees span all n GPUs in rank order, servers contiguous, so the lower
levels join neighbours inside a server and the upper levels cross servers. NCCL itself chains the
GPUs inside a server and builds the trees across servers only; the pages say so.

Pipelining: each half is cut into k chunks. In the reduce phase a GPU at height h (leaves are 0)
sends chunk j up at step h + j, so a chunk climbs one level per step and a new chunk follows
behind it; then in the broadcast phase a GPU at depth d sends chunk j to its children at step
d + j. The phases run one after the other so that a reader sees the sum climb, then come back down.
Steps: (H + k - 1) + (D + k - 1), which grows with log2(n). The simulator defaults to k = 2, the
fewest chunks that still show the pipeline; the cost model cuts the message into NCCL's 512 KiB
pipeline slots (NCCL_BUFFSIZE 4 MiB over NCCL_STEPS = 8), so large messages pipeline deeply and
the bandwidth term approaches 2S/B, as in NCCL's model (tuning.cc: tree bandwidth halved).
"""

from __future__ import annotations

from functools import lru_cache

from .schedule import Step, make_step, split
from .topology import Topology

SIMULATE_CHUNKS = 2
NCCL_BUFFSIZE = 4 << 20  # bytes of one channel's buffer (NCCL_BUFFSIZE's default)
NCCL_STEPS = 8  # the slots it is cut into
COST_CHUNK_BYTES = NCCL_BUFFSIZE // NCCL_STEPS  # 512 KiB


def btree_parents(n: int) -> list[int]:
    """Parent of every rank in NCCL's binary tree rooted at 0 (-1 for the root)."""
    parents = [-1] * n
    for rank in range(1, n):
        bit = 1
        while bit < n and not bit & rank:
            bit <<= 1
        up = (rank ^ bit) | (bit << 1)
        parents[rank] = up if up < n else rank ^ bit
    return parents


def dtree_parents(n: int) -> tuple[list[int], list[int]]:
    """Parents in NCCL's two trees: the btree, and its mirror (n even) or shift by one (n odd)."""
    a = btree_parents(n)
    if n % 2:
        b = [-1 if a[(r - 1) % n] < 0 else (a[(r - 1) % n] + 1) % n for r in range(n)]
    else:
        b = [-1 if a[n - 1 - r] < 0 else n - 1 - a[n - 1 - r] for r in range(n)]
    return a, b


def heights_depths(parents: list[int]) -> tuple[list[int], list[int]]:
    """Height (0 for a leaf) and depth (0 for the root) of every node: one pass down from the
    roots in breadth-first order, one back up."""
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    order = []
    for v, p in enumerate(parents):
        if p >= 0:
            children[p].append(v)
        else:
            order.append(v)
    depth = [0] * n
    for v in order:  # grows as it goes: every node after its parent
        for c in children[v]:
            depth[c] = depth[v] + 1
            order.append(c)
    height = [0] * n
    for v in reversed(order):
        p = parents[v]
        if p >= 0:
            height[p] = max(height[p], height[v] + 1)
    return height, depth


@lru_cache(maxsize=2)
def shape(n: int) -> tuple[tuple[list[int], list[int], list[int]], ...]:
    """Each tree's parents, heights and depths: what phases, last_offsets and the cost model's
    queues are made from, kept for the last two n (each asks in turn)."""
    return tuple((parents, *heights_depths(parents)) for parents in dtree_parents(n))


def phases(n: int) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int, int]]]:
    """Edges of both trees with the step at which they carry chunk 0, per phase.

    Each entry is (tree, src, dst, offset): in the reduce phase src sends chunk j to its parent dst
    at step offset + j; in the broadcast phase src sends chunk j to its child dst at offset + j.
    """
    up, down = [], []
    for t, (parents, height, depth) in enumerate(shape(n)):
        for v, p in enumerate(parents):
            if p >= 0:
                up.append((t, v, p, height[v]))
                down.append((t, p, v, depth[p]))
    return up, down


@lru_cache(maxsize=64)
def last_offsets(n: int) -> tuple[int, int]:
    """The last offset of each phase, from the heights and depths alone (phases' edges are not
    listed): the greatest height of a GPU with a parent, the greatest depth of one with a child."""
    up = down = 0
    for parents, height, depth in shape(n):
        up = max(up, max((h for h, p in zip(height, parents, strict=True) if p >= 0), default=0))
        down = max(down, max((depth[p] for p in parents if p >= 0), default=0))
    return up, down


@lru_cache(maxsize=4096)
def steps(n: int, chunks: int = 1) -> int:
    """Steps of the pipelined double binary tree: both phases, each (last offset + chunks)."""
    if n == 1:
        return 0
    return sum(last + chunks for last in last_offsets(n))


@lru_cache(maxsize=64)
def steady_chunks(n: int) -> int:
    """From this many chunks on, every edge is busy at the deepest offset (the steady state):
    one more chunk adds one more steady step and nothing else (cost.tree_time_fast)."""
    return max(last_offsets(n)) + 1


def schedule(topo: Topology, length: int, chunks: int = SIMULATE_CHUNKS) -> list[Step]:
    pieces = [split(a, b, chunks) for a, b in split(0, length, 2)]
    steps: list[Step] = []
    for name, edges, reduce in (
        ("reduce up the trees", phases(topo.gpus)[0], True),
        ("broadcast down the trees", phases(topo.gpus)[1], False),
    ):
        count = max((off for *_, off in edges), default=-chunks) + chunks
        cols: list[tuple[list, list, list, list]] = [([], [], [], []) for _ in range(count)]
        for t, src, dst, off in edges:
            for j, (a, b) in enumerate(pieces[t]):
                for col, x in zip(cols[off + j], (src, dst, a, b), strict=True):
                    col.append(x)
        steps += [make_step(name, reduce, *c) for c in cols]
    return steps
