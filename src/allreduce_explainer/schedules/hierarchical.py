"""Hierarchical all-reduce (Horovod's NCCLHierarchicalAllreduce, PR #411).

1. Reduce-scatter inside each server (a ring of its g GPUs, schedule.ring): local GPU p ends
   owning the server's sum of chunk p.
2. All-reduce of each such shard across the N servers: one ring per local rank p, through the N
   GPUs with local rank p, each over its own network card, all g rings at once.
3. All-gather inside each server.
Each GPU sends 2(g-1)/g S over NVLink and 2(N-1)/N S/g over the network; the servers exchange
2(N-1) S in total, against 2N(n-1)/n S for a flat ring.
"""

from __future__ import annotations

from . import schedule as sch
from .topology import Topology

IN_SERVER = ("reduce-scatter in each server", "all-gather in each server")
ACROSS = ("reduce-scatter across servers", "all-gather across servers")


def schedule(topo: Topology, length: int, bounds: bool = True) -> list[sch.Step]:
    g, nodes = topo.gpus_per_node, topo.nodes
    local = [
        sch.ring([k * g + p for p in range(g)], 0, length, IN_SERVER, bounds) for k in range(nodes)
    ]
    shards = sch.split(0, length, g)
    cross = [
        sch.ring([k * g + p for k in range(nodes)], *shards[p], ACROSS, bounds) for p in range(g)
    ]
    return (
        sch.merge(*(r[0] for r in local))
        + sch.merge(*(c[0] for c in cross))
        + sch.merge(*(c[1] for c in cross))
        + sch.merge(*(r[1] for r in local))
    )
