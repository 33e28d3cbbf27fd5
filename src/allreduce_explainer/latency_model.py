"""Latency against size: NCCL's own latency figures, and where the ring overtakes the tree.

NCCL 2.30 src/graph/tuning.cc gives a base latency per algorithm and protocol (baseLat) and a
per-hop latency by link class (hwLat: NVLink, PCI, network). A per-message latency elsewhere in
this package defaults to the Simple protocol's ring hops: 3.4 µs over NVLink, 14 µs over the
network (NCCL_NVLINK_HOP_US, NCCL_NETWORK_HOP_US below).

The crossover is found on a fine grid of sizes and refined by bisection, so the number a page
prints is where the two curves meet.
"""

from __future__ import annotations

import math

from . import cost
from .topology import Topology

NCCL_VERSION = "2.30"
NCCL_BASE_US = {"ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4},
                "tree": {"LL": 6.8, "LL128": 14.0, "Simple": 8.4}}  # fmt: skip
NCCL_HOP_US = {
    "ring": {"nvlink": {"LL": 0.6, "LL128": 1.9, "Simple": 3.4},
             "pci": {"LL": 1.0, "LL128": 2.5, "Simple": 5.7},
             "network": {"LL": 2.7, "LL128": 4.0, "Simple": 14.0}},
    "tree": {"nvlink": {"LL": 0.6, "LL128": 1.25, "Simple": 4.0},
             "pci": {"LL": 1.0, "LL128": 1.9, "Simple": 4.0},
             "network": {"LL": 5.0, "LL128": 8.5, "Simple": 14.0}},
}  # fmt: skip
NCCL_NVLINK_HOP_US = NCCL_HOP_US["ring"]["nvlink"]["Simple"]  # 3.4
NCCL_NETWORK_HOP_US = NCCL_HOP_US["ring"]["network"]["Simple"]  # 14.0, the tree's too

SIZES = [8 * 2 ** (i / 8) for i in range(8 * 30 + 1)]  # 8 B .. 8 GiB, 8 points per octave


def nccl_latency_us(algorithm: str, gpus: int, per_node: int, protocol: str = "Simple") -> float:
    """NCCL's modelled latency of one all-reduce (base included), NVLink inside a server."""
    nodes = gpus // per_node
    base = NCCL_BASE_US[algorithm][protocol]
    intra = NCCL_HOP_US[algorithm]["nvlink"][protocol]
    inter = NCCL_HOP_US[algorithm]["network"][protocol]
    if algorithm == "ring":
        steps, n_inter = 2 * (gpus - 1), 2 * (nodes - 1)
        return base + (steps - n_inter) * intra + n_inter * inter
    return base + 2 * ((per_node - 1) * intra + math.log2(nodes) * inter)


def flat(gpus: int, GBps: float, latency_us: float) -> Topology:
    """n GPUs on one kind of link: every GPU its own server (so every message crosses it)."""
    return Topology.make(gpus, 1, GBps, GBps, latency_us, latency_us)


def ring_time(topo: Topology, s: float) -> float:
    return cost.cost("ring", topo, s)["time_s"]


def nccl_tree_time(topo: Topology, s: float) -> float:
    """The tree as NCCL's own model charges it (tuning.cc): latency once per hop, 2 log2 n hops
    (both phases), and a bandwidth term of 2S/B (tree algorithm bandwidth = half the bus
    bandwidth); base latency left out, as for the page's curves. Flat network: one link class.
    """
    link = topo.inter
    return 2 * math.log2(topo.gpus) * link.latency_us * 1e-6 + 2 * s / (link.GBps * 1e9)


def crossover(topo: Topology, tree_fn=cost.tree_time_fast, sizes=SIZES) -> float | None:
    """The smallest size at which the ring stops being slower than the tree, or None.

    Found on the grid (first point where ring - tree changes from > 0 to <= 0), then refined by
    bisection between the two grid points around it.
    """

    def gap(s: float) -> float:
        return ring_time(topo, s) - tree_fn(topo, s)

    d = [gap(s) for s in sizes]
    for i in range(1, len(sizes)):
        if d[i - 1] > 0 >= d[i]:
            lo, hi = sizes[i - 1], sizes[i]
            for _ in range(40):
                mid = math.sqrt(lo * hi)
                lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
            return hi
    return None
