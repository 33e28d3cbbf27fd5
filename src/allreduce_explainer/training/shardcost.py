"""Memory, communication and time per GPU of DDP, ZeRO-1, ZeRO-2, ZeRO-3 (FSDP) and HSDP.

Memory: the model states each strategy keeps per GPU (memory.py: mixed-precision Adam's
2 + 2 + 12 bytes per parameter, split as the ZeRO paper and PyTorch FSDP split them).

Communication per step (bytes each GPU sends; a ring collective over m GPUs of an S-byte buffer
sends 2(m-1)/m·S per GPU for an all-reduce and (m-1)/m·S for a reduce-scatter or an all-gather):
- DDP: all-reduce of the 2Ψ-byte gradient.
- ZeRO-1 and ZeRO-2: reduce-scatter of the gradient, all-gather of the updated parameters: the same
  bytes as DDP (ZeRO section 7.2.1).
- ZeRO-3 / FSDP FULL_SHARD: the parameters are all-gathered before the forward and again before
  the backward, then the gradient is reduce-scattered (ShardingStrategy docstring): 1.5 times
  DDP (ZeRO section 7.2.2).
- HSDP: the same three inside each server, plus an all-reduce across servers of each GPU's
  gradient shard (2Ψ/g bytes) among the N GPUs that hold the same shard.

Time: each collective is timed by a function (collective, S, group) -> seconds, with collective
one of "allreduce", "reducescatter", "allgather" (nccl-tests' names), S the full buffer in bytes
(the all-reduce's, the reduce-scatter's input, the all-gather's output) and the group a Topology
(its GPUs, GPUs per server and links; HSDP's cross-server group has one GPU per server). The
default is the ring of cost.py (a reduce-scatter or an all-gather is one half of its all-reduce);
NCCL's model plugs in as a function of the same shape, built for the cluster's GPU. Collectives
are summed for `comm_s` (no overlap); `step_s` adds the compute, `step_s_overlapped` takes the
larger of the two (perfect overlap): the two ends of the range.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..catalog import hardware
from ..catalog.models import Model
from ..costs import cost
from ..schedules.topology import Topology
from . import calculator, memory
from .calculator import Cluster
from .memory import STRATEGIES

LABELS = {
    "ddp": "DDP",
    "zero1": "ZeRO-1",
    "zero2": "ZeRO-2",
    "zero3": "ZeRO-3 / FSDP",
    "hsdp": "HSDP",
}
# Which collectives each strategy runs per step, on which group: "all" GPUs, the GPUs of one
# "server", or one GPU per server "across" them; the bytes are per-GPU buffer sizes, in units of
# the 2Ψ-byte gradient (hsdp's cross-server all-reduce moves one server shard: 1/g of it).
PHASES = {
    "ddp": (("allreduce", "all", "gradients"),),
    "zero1": (("reducescatter", "all", "gradients"), ("allgather", "all", "parameters")),
    "zero2": (("reducescatter", "all", "gradients"), ("allgather", "all", "parameters")),
    "zero3": (
        ("allgather", "all", "parameters, forward"),
        ("allgather", "all", "parameters, backward"),
        ("reducescatter", "all", "gradients"),
    ),
    "hsdp": (
        ("allgather", "server", "parameters, forward"),
        ("allgather", "server", "parameters, backward"),
        ("reducescatter", "server", "gradients"),
        ("allreduce", "across", "gradient shard"),
    ),
}

CommTime = Callable[[str, float, Topology], float]


def sent_factor(collective: str, m: int) -> float:
    """Bytes each GPU sends per byte of the buffer, in a ring collective over m GPUs."""
    return (2 if collective == "allreduce" else 1) * (m - 1) / m


def ring_time(collective: str, nbytes: float, group: Topology) -> float:
    """cost.py's ring: an all-reduce, or half of one (its reduce-scatter or all-gather)."""
    if group.gpus == 1 or nbytes <= 0:
        return 0.0
    t = cost.cost("ring", group, nbytes)["time_s"]
    return t if collective == "allreduce" else t / 2


@dataclass(frozen=True)
class Groups:
    """The three groups a strategy talks over, as topologies the time function understands."""

    all: Topology
    server: Topology
    across: Topology

    @classmethod
    def of(cls, c: Cluster) -> Groups:
        g, nodes = c.gpus_per_node, c.servers
        intra = c.intra_rate("ring")
        lat = (c.intra_latency_us, c.inter_latency_us)
        return cls(
            c.topology("ring"),
            Topology.make(g, g, intra, c.nic_GBps, *lat, max_gpus=calculator.MAX_GPUS),
            Topology.make(nodes, 1, intra, c.nic_GBps, *lat, max_gpus=calculator.MAX_GPUS),
        )


def communication(strategy: str, params: int, groups: Groups, comm_time: CommTime) -> dict:
    """Each collective of one step with its buffer, bytes sent per GPU and time."""
    grad = float(memory.BYTES_PER_PARAM["grads"] * params)
    rows = []
    for collective, where, what in PHASES[strategy]:
        group = getattr(groups, where)
        size = grad / groups.server.gpus if where == "across" else grad
        rows.append(
            {
                "collective": collective,
                "group": where,
                "gpus": group.gpus,
                "what": what,
                "bytes": size,
                "bytes_sent_per_gpu": sent_factor(collective, group.gpus) * size,
                "time_s": comm_time(collective, size, group),
            }
        )
        # a ring over several servers sends a boundary GPU's whole share through its card
        crosses = group.nodes > 1 and group.gpus > 1
        rows[-1]["bytes_per_nic_max"] = rows[-1]["bytes_sent_per_gpu"] if crosses else 0.0
    return {
        "collectives": rows,
        "comm_bytes_per_gpu": sum(r["bytes_sent_per_gpu"] for r in rows),
        "comm_bytes_per_nic_max": sum(r["bytes_per_nic_max"] for r in rows),
        "comm_s": sum(r["time_s"] for r in rows),
    }


def overlap(strategy: str, model: Model, groups: Groups, flops: float, comm: CommTime) -> dict:
    """Tokens per GPU at which every block's collectives hide behind its compute (FSDP prefetch).

    FSDP all-gathers the next block's parameters while the current block computes. A block of
    P_b parameters costs f_b FLOPs per token forward (2·P_b plus attention's scores) and twice that
    backward; its all-gather moves (m-1)/m·2P_b bytes per GPU, and in the backward its
    reduce-scatter as much again (HSDP adds the all-reduce of its shard across servers). Compute
    covers them when T·f_b/F ≥ t_ag and 2·T·f_b/F ≥ t_ag + t_rs (+ t_ar), F = peak × MFU. With
    f_b = 2·P_b, BF16 and a ring of per-GPU rate B this is T ≥ (m-1)/m · F/B: the critical batch
    argument of Austin et al., "How to Scale Your Model" (2025), chapter "How to Parallelize a
    Transformer for Training", FSDP section. The embedding has no compute to hide behind and is
    left out; the hardest block sets the figure.
    """
    where = "server" if strategy == "hsdp" else "all"
    group = getattr(groups, where)
    worst = None
    for name, p_b, f_b in _blocks(model):
        size = float(memory.BYTES_PER_PARAM["grads"] * p_b)
        t_ag = comm("allgather", size, group)
        t_back = t_ag + comm("reducescatter", size, group)
        if strategy == "hsdp":
            t_back += comm("allreduce", size / groups.server.gpus, groups.across)
        tokens = max(t_ag * flops / f_b, t_back * flops / (2 * f_b))
        if worst is None or tokens > worst["critical_tokens_per_gpu"]:
            worst = {
                "block": name,
                "block_params": p_b,
                "block_flops_per_token": f_b,
                "allgather_s": t_ag,
                "backward_comm_s": t_back,
                "critical_tokens_per_gpu": tokens,
            }
    worst["critical_tokens_formula"] = _formula_tokens(strategy, groups, flops)
    return worst


def _formula_tokens(strategy: str, groups: Groups, flops: float) -> float:
    """The same threshold in closed form (bandwidth only, f_b = 2·P_b, BF16)."""
    if strategy != "hsdp":
        t = groups.all
        rate = t.intra.GBps if t.nodes == 1 else min(t.intra.GBps, t.inter.GBps)
        return (t.gpus - 1) / t.gpus * flops / (rate * 1e9)
    g, nodes = groups.server.gpus, groups.across.gpus
    forward = (g - 1) / g * flops / (groups.server.intra.GBps * 1e9)
    across = (nodes - 1) / (nodes * g) * flops / (groups.across.inter.GBps * 1e9)
    return max(forward, forward + across)


def _blocks(model: Model) -> list[tuple[str, int, float]]:
    """(name, params, forward FLOPs per token) per transformer block, FSDP's usual wrap unit."""
    blocks: dict[str, list] = {}
    for layer in model.layers:
        parts = layer.name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "layers" else layer.name
        b = blocks.setdefault(key, [0, 0.0])
        b[0] += layer.params
        b[1] += layer.flops / model.tokens
    return [(k, p, f) for k, (p, f) in blocks.items() if p and f]


def strategies(
    model: Model,
    c: Cluster,
    tokens_per_gpu: float = calculator.DEFAULT_TOKENS,
    mfu: float = calculator.DEFAULT_MFU,
    comm_time: CommTime = ring_time,
) -> dict:
    """Every strategy's memory, bytes and times on this cluster, and FSDP's overlap."""
    p, n, g = model.params, c.gpus, c.gpus_per_node
    groups = Groups.of(c)
    have = c.gpu.memory_gb * hardware.GIB
    compute = calculator.compute_s(p, tokens_per_gpu, c.gpu.peak_bf16_tflops, mfu)
    flops = c.gpu.peak_bf16_tflops * 1e12 * mfu
    out = {}
    for s in STRATEGIES:
        mem = memory.per_gpu(s, p, n, g)
        comm = communication(s, p, groups, comm_time)
        out[s] = {
            "label": LABELS[s],
            "memory_bytes_per_gpu": mem,
            "memory_formula": memory.FORMULAS[s],
            "comm_bytes_per_gpu": comm["comm_bytes_per_gpu"],
            "comm_bytes_per_nic_max": comm["comm_bytes_per_nic_max"],
            "comm_s": comm["comm_s"],
            "step_s": compute + comm["comm_s"],
            "step_s_overlapped": max(compute, comm["comm_s"]),
            "fits": mem["total"] <= have,
            "collectives": comm["collectives"],
        }
    return {
        "strategies": out,
        "gpu_memory_bytes": have,
        "compute_s": compute,
        "overlap": {s: overlap(s, model, groups, flops, comm_time) for s in ("zero3", "hsdp")},
    }
