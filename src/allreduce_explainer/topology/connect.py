"""From one server's graphs to every channel's ring and tree across servers: src/graph/connect.cc,
rings.cc and trees.cc, and the order in which init.cc runs them.

init.cc:1173-1216 searches the ring graph, then the tree graph with as many channels as the ring
(BALANCED_TREE, which becomes TREE on Hopper and newer when that is all it finds), then NVLS;
init.cc:1459 keeps min(ring, tree) channels. ncclTopoPreset (connect.cc:20-93) gives each rank
its place in each channel's ring and chain inside the server; ncclTopoPostset
(connect.cc:380-536) joins the servers: each ring enters a server at its first GPU and leaves at
its last (connect.cc:95-113), each tree's chain hangs from a double binary tree of the servers
(trees.cc:68-112, connect.cc:138-176), the second half of the channels taking the mirrored tree.
Then the channels are doubled (connect.cc:459-460), doubled again on Hopper+ across servers when a
channel is faster than 45 GB/s (connect.cc:480-483), and each ring is read from rank 0
(rings.cc:29-74), as NCCL prints it.

Every server is the same file here, its ranks numbered server by server.
"""

from __future__ import annotations

from dataclasses import dataclass

from .search import SPLIT_TREE, TREE, Graph
from .system import MAXCHANNELS


def btree(nranks: int, rank: int) -> tuple[int, int, int, int]:
    """ncclGetBtree (trees.cc:31-66): parent, children and which child of its parent it is."""
    bit = 1
    while bit < nranks:
        if bit & rank:
            break
        bit <<= 1
    if rank == 0:
        return -1, -1, (bit >> 1 if nranks > 1 else -1), 0
    up = (rank ^ bit) | (bit << 1)
    if up >= nranks:
        up = rank ^ bit
    child_type = 0 if rank < up else 1
    low = bit >> 1
    down0 = -1 if low == 0 else rank - low
    down1 = -1 if low == 0 else rank + low
    while down1 >= nranks:
        down1 = -1 if low == 0 else rank + low
        low >>= 1
    return up, down0, down1, child_type


def dtree(nranks: int, rank: int) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """ncclGetDtree (trees.cc:68-112): the btree, and a mirrored (even) or shifted (odd) one."""
    t0 = btree(nranks, rank)
    if nranks % 2 == 1:
        u, d0, d1, ct = btree(nranks, (rank - 1 + nranks) % nranks)
        shift = [-1 if x == -1 else (x + 1) % nranks for x in (u, d0, d1)]
        return t0, (*shift, ct)
    u, d0, d1, ct = btree(nranks, nranks - 1 - rank)
    mirror = [-1 if x == -1 else nranks - 1 - x for x in (u, d0, d1)]
    return t0, (*mirror, ct)


@dataclass
class Channel:
    """One channel as every rank holds it: ring next per rank, tree (up, downs) per rank."""

    next: dict[int, int]
    up: dict[int, int]
    down: dict[int, list[int]]

    def copy(self) -> Channel:
        return Channel(dict(self.next), dict(self.up), {r: list(d) for r, d in self.down.items()})

    def ring(self) -> list[int]:
        """ncclBuildRings (rings.cc:29-74): the ring from rank 0."""
        out, cur = [], 0
        for _ in self.next:
            out.append(cur)
            cur = self.next[cur]
        return out

    def tree(self) -> dict:
        """The shape nccl-debug gives a channel's tree (logs/debug.py tree_of)."""
        return {
            "roots": sorted(r for r, u in self.up.items() if u < 0),
            "parent": {str(r): self.up[r] for r in sorted(self.up)},
            "children": {str(r): [d for d in self.down[r] if d >= 0] for r in sorted(self.down)},
        }


def channels(ring: Graph, tree: Graph, ngpus: int, nodes: int, cc_min: int) -> list[Channel]:
    """ncclTopoPreset and ncclTopoPostset (connect.cc:20-93, 360-520) for `nodes` copies of one
    server whose graphs are `ring` and `tree`; both hold min(ring, tree) channels."""
    n = min(ring.n_channels, tree.n_channels)
    nranks = ngpus * nodes

    def rank(node: int, r: int) -> int:
        return node * ngpus + r

    base: list[Channel] = []
    for c in range(n):
        r_intra = ring.intra[c * ngpus : (c + 1) * ngpus]
        t_intra = tree.intra[c * ngpus : (c + 1) * ngpus]
        ch = Channel({}, {}, {})
        for node in range(nodes):
            # ring inside the server, then to the next server's first GPU (connect.cc:95-113)
            for i, r in enumerate(r_intra):
                if i < ngpus - 1:
                    ch.next[rank(node, r)] = rank(node, r_intra[i + 1])
            ch.next[rank(node, r_intra[-1])] = rank((node + 1) % nodes, r_intra[0])
            for i, r in enumerate(t_intra):
                ch.up[rank(node, r)] = -1 if i == 0 else rank(node, t_intra[i - 1])
                ch.down[rank(node, r)] = [-1 if i == ngpus - 1 else rank(node, t_intra[i + 1])]
        base.append(ch)
    # alternate rings on odd servers when the ring crossed NICs (connect.cc:401-413)
    if ring.cross_nic == 2 and n % 2 == 0 and nodes > 1:
        for c in range(0, n, 2):
            _swap_odd_nodes(base[c], base[c + 1], ngpus, nodes, ring, c)
    out0 = [ch.copy() for ch in base]
    out1 = [ch.copy() for ch in base]
    if nodes > 1:
        for c in range(n):
            t_intra = tree.intra[c * ngpus : (c + 1) * ngpus]
            parent_i = 0
            child0_i = 0 if tree.pattern == TREE else 1
            child1_i = 1 if tree.pattern == SPLIT_TREE else 0
            ttp = [rank(node, t_intra[parent_i]) for node in range(nodes)]
            ttc = [
                [rank(node, t_intra[child0_i]) for node in range(nodes)],
                [rank(node, t_intra[child1_i]) for node in range(nodes)],
            ]
            for node in range(nodes):
                for ch, (u, d0, d1, ct) in zip((out0[c], out1[c]), dtree(nodes, node), strict=True):
                    _connect_tree(ch, ttp, ttc, node, u, d0, d1, ct)
    chans = (out0 + out1)[:MAXCHANNELS]
    if cc_min >= 90 and nodes > 1 and ring.bw_intra > 45.0 and len(chans) < 16:
        chans = chans + [ch.copy() for ch in chans]  # copyChannels (connect.cc:480-483)
    assert all(len(ch.next) == nranks for ch in chans)
    return chans


def _connect_tree(ch: Channel, ttp, ttc, node: int, u: int, d0: int, d1: int, ct: int) -> None:
    """connectTrees for one server (connect.cc:138-176): its parent GPU points up to the child
    GPU of the server above; its child GPUs point down to the parent GPUs of the servers below."""
    if u != -1:
        ch.up[ttp[node]] = ttc[ct][u]
    for child, d in ((0, d0), (1, d1)):
        if d == -1:
            continue
        downs = ch.down[ttc[child][node]]
        slot = next((i for i, x in enumerate(downs) if x < 0), len(downs))
        if slot == len(downs):
            downs.append(ttp[d])
        else:
            downs[slot] = ttp[d]


def _swap_odd_nodes(a: Channel, b: Channel, ngpus: int, nodes: int, ring: Graph, c: int) -> None:
    """connect.cc:401-413: on odd servers channels c and c+1 trade their rings, so a ring that
    leaves by one rail enters the next server by the same rail."""
    first = [ring.intra[k * ngpus] for k in (c, c + 1)]
    last = [ring.intra[k * ngpus + ngpus - 1] for k in (c, c + 1)]
    intra = [ring.intra[k * ngpus : (k + 1) * ngpus] for k in (c, c + 1)]
    for ch, own, other in ((a, 0, 1), (b, 1, 0)):
        for node in range(nodes):
            base = node * ngpus
            src = other if node % 2 == 1 else own
            r_intra = intra[src]
            for i in range(ngpus - 1):
                ch.next[base + r_intra[i]] = base + r_intra[i + 1]
        for node in range(nodes):
            src = other if node % 2 == 1 else own
            nxt = (node + 1) % nodes
            nsrc = other if nxt % 2 == 1 else own
            ch.next[node * ngpus + last[src]] = nxt * ngpus + first[nsrc]
