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
(its GPUs, GPUs per server and links; HSDP's cross-server group has one GPU per server). Two
come with the module: `nccl_time`, NCCL's own cost model (the collective NCCL would pick for
that size and group), which page 8 and the CLI use, and `ring_time`, the single ring of cost.py
(a reduce-scatter or an all-gather is one half of its all-reduce), the teaching model and the
default of `strategies` when no time function is given. Collectives are summed for `comm_s`
(no overlap); `step_s` adds the compute, `step_s_overlapped` takes the larger of the two
(perfect overlap): the two ends of the range.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from .. import nccl
from ..catalog import hardware
from ..catalog.models import Model
from ..collectives import COLLECTIVES
from ..costs import cost
from ..records import BYTES, TIME, Quantity, Record
from ..schedules.topology import Topology
from ..sources import FITTED, WHITEBOARD
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
# what the tokens a strategy's overlap needs are called, after its label, on the page and the CLI
HIDES = "the collectives hide behind compute from"


def hides(strategy: str) -> str:
    """The label of the tokens per GPU from which a strategy's collectives overlap compute."""
    return f"{LABELS[strategy]}: {HIDES}"


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


def _timed_by(r) -> object:
    """The collectives are timed by NCCL's choice's fitted time, or a flat ring's whiteboard."""
    return FITTED if r.get("comm_model") == "nccl" else WHITEBOARD


# What api.shard's answer holds (records.py); a strategy's row's fields are its columns.
RECORD = Record(
    "shard",
    (
        Quantity("compute_s", TIME, "compute per step"),
        Quantity("comm_s", TIME, "communication", _timed_by),
        Quantity("step_s", TIME, "step, no overlap"),
        Quantity("comm_bytes_per_gpu", BYTES, "sent per GPU"),
    ),
)


def sent_factor(collective: str, m: int) -> float:
    """Bytes each GPU sends per byte of the buffer, in a ring collective over m GPUs."""
    return (2 if collective == "allreduce" else 1) * (m - 1) / m


def ring_time(collective: str, nbytes: float, group: Topology) -> float:
    """cost.py's ring: an all-reduce, or half of one (its reduce-scatter or all-gather)."""
    if group.gpus == 1 or nbytes <= 0:
        return 0.0
    t = cost.cost("ring", group, nbytes)["time_s"]
    return t if collective == "allreduce" else t / 2


@lru_cache(maxsize=4096)
def _nccl_us(collective: str, nbytes: int, gpu: str, gpus: int, per: int, nic_Gbps: float):
    system = nccl.System(gpu, gpus, per, per, nic_Gbps)
    return nccl.choose(collective, nbytes, system).time_us


def nccl_time(gpu: str, nic_Gbps: float) -> CommTime:
    """A time function from NCCL's model: the collective NCCL would pick for this size and group,
    one network card per GPU (HSDP's cross-server group: one GPU, one card a server)."""

    def time_s(collective: str, nbytes: float, group: Topology) -> float:
        if group.gpus == 1 or nbytes <= 0:
            return 0.0
        per = group.gpus // group.nodes
        name, size = COLLECTIVES[collective].nccl_name, max(1, round(nbytes))
        return _nccl_us(name, size, gpu, group.gpus, per, nic_Gbps) * 1e-6

    return time_s


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
    P_b parameters costs 2·P_b FLOPs per token forward and twice that backward, and its BF16
    buffer is S = 2·P_b bytes. The forward hides its all-gather when T·2P_b/F ≥ t_ag; the
    backward hides the all-gather and the reduce-scatter (HSDP: and the all-reduce of its shard
    across servers) when T·4P_b/F ≥ t_back, F = peak × MFU. So T ≥ F·t/S with t = max(t_ag,
    t_back/2), the time one collective of the block takes. Write B = (m-1)/m · S/t, the per-GPU
    bus bandwidth the collectives reach in the timing model (m the sharding group: n GPUs, or
    the g of a server for HSDP); then T ≥ (m-1)/m · F/B, the critical batch argument of Austin
    et al., "How to Scale Your Model" (2025), FSDP section. The figure is that formula, so the
    page can print F and B and a reader gets the same tokens by hand. Attention's scores add
    compute and are left out (the formula's 2 FLOPs per parameter): the figure errs on the side
    of waiting. The embedding has no compute to hide behind; the hardest block sets the figure.
    """
    where = "server" if strategy == "hsdp" else "all"
    group = getattr(groups, where)
    m = group.gpus
    worst = None
    for name, p_b in _blocks(model):
        size = float(memory.BYTES_PER_PARAM["grads"] * p_b)
        t_ag = comm("allgather", size, group)
        t_back = t_ag + comm("reducescatter", size, group)
        if strategy == "hsdp":
            t_back += comm("allreduce", size / groups.server.gpus, groups.across)
        t = max(t_ag, t_back / 2)
        bus = (m - 1) / m * size / t if t > 0 else None
        tokens = (m - 1) / m * flops / bus if bus else 0.0
        if worst is None or tokens > worst["critical_tokens_per_gpu"]:
            worst = {
                "block": name,
                "block_params": p_b,
                "group_gpus": m,
                "flops_per_s": flops,
                "bus_GBps": bus / 1e9 if bus else None,
                "allgather_s": t_ag,
                "backward_comm_s": t_back,
                "critical_tokens_per_gpu": tokens,
            }
    return worst


def _blocks(model: Model) -> list[tuple[str, int]]:
    """(name, params) per transformer block, FSDP's usual wrap unit; layers without compute
    (the embedding, a lookup) are left out, as they have nothing to hide a collective behind."""
    blocks: dict[str, list] = {}
    for layer in model.layers:
        parts = layer.name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "layers" else layer.name
        b = blocks.setdefault(key, [0, 0.0])
        b[0] += layer.params
        b[1] += layer.flops
    return [(k, p) for k, (p, f) in blocks.items() if p and f]


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
