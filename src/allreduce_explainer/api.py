"""The library's front door: plain parameters in, validated, JSON-able results out.

Each function is declared by a spec beside it, whose shared parameters narrow vocabulary.py's,
and a typed signature that `@takes(SPEC)` checks against the spec when this module
loads (names, order, types, defaults: mypy and help() see the real parameters; make test runs
mypy on this module). Callers pass keywords (the leading parameters also by position, in the
spec's order); the body gets them validated (`p = dict(locals())`).
A parameter the call cannot apply, given the others, is refused naming it (`_refuse_given`,
`_refuse_unused`), never ignored. The CLI builds each subcommand's flags from the same spec, so a
ParamError names the flag that set the field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from . import dtypes, nccl, sources, vocabulary
from .catalog import hardware, models
from .collectives import COLLECTIVES
from .costs import cost as cost_model
from .costs.latency_model import NCCL_NETWORK_HOP_US, NCCL_NVLINK_HOP_US
from .errors import ParamError
from .logs import explain
from .nccl import NCCL_VERSION, comm_channels, tree_pattern
from .nccl import NIC_GBPS as NCCL_NIC_GBPS
from .params import DTYPE, POSITIVE, REQUIRED, VALUES, Param, spec, takes
from .records import TIME, Answer, Quantity, Record
from .schedules import tree
from .schedules.topology import H100_NVLINK_GBps, NIC_400G_GBps, Topology
from .simulation import gradients
from .simulation import innetwork as innetwork_engine
from .simulation import orders as orders_engine
from .simulation import shard as shard_engine
from .simulation import simulate as sim
from .topology import logcheck as topology_logcheck
from .topology import run as topology_engine
from .training import calculator, memory, shardcost
from .training import ddp as ddp_engine
from .validate import count, permutation
from .vocabulary import (
    GPU,
    GPUS,
    GPUS_PER_NODE,
    INTER_BW,
    INTER_LATENCY,
    INTRA_BW,
    INTRA_LATENCY,
    MFU,
    MODEL,
    NIC_GBPS,
    TOKENS_PER_GPU,
)  # fmt: skip

DEFAULT_GPU = vocabulary.DEFAULT_GPU  # the pages' default GPU
ALGORITHMS = tuple(sim.ALGORITHMS)
MAX_SIM_GPUS = 1024  # summary mode
MAX_TRACE_GPUS = 64  # full traces keep every buffer after every step
MAX_TRACE_LENGTH = 1024
MAX_LENGTH = 1 << 16
MAX_ELEMENTS = 1 << 22  # gpus x length held in memory
MAX_COST_GPUS = GPUS.hi


def _choices(values) -> tuple[tuple[object, str], ...]:
    return tuple((v, str(v)) for v in values)


ALGORITHM = Param(
    "algorithm", REQUIRED, "choice", "the schedule", choices=_choices(ALGORITHMS), flag="algorithm"
)


def _links(intra_latency: float = 0.0, inter_latency: float = 0.0) -> tuple[Param, ...]:
    """The teaching model's two links: rates in GB/s per direction, latencies per message (the
    vocabulary's, with these latencies as defaults); the card's flag takes Gb/s."""
    return (
        INTRA_BW,
        INTER_BW,
        INTRA_LATENCY.narrow(default=intra_latency),
        INTER_LATENCY.narrow(default=inter_latency),
    )


def topology(
    gpus,
    gpus_per_node=None,
    intra_bw=H100_NVLINK_GBps,
    inter_bw=NIC_400G_GBps,
    intra_latency=0.0,
    inter_latency=0.0,
    max_gpus=MAX_COST_GPUS,
) -> Topology:
    return Topology.make(
        gpus, gpus_per_node, intra_bw, inter_bw, intra_latency, inter_latency, max_gpus=max_gpus
    )


SIMULATE = spec(
    ALGORITHM,
    GPUS.narrow(default=4, hi=MAX_SIM_GPUS),
    GPUS_PER_NODE,
    Param("length", None, "int", "elements per gradient (default 2N; taken from --values if "
          "given)", 1, MAX_LENGTH, optional=True, metavar="L"),
    DTYPE,
    Param("seed", 0, "int", "seed of the random gradients", 0, 2**63),
    VALUES,
    Param("trace", False, "bool", "include every step's messages and buffers"),
    Param("chunks", None, "int", "tree only: pipeline chunks per tree (default 2)", 1, 64,
          optional=True),
    *_links(),
    Param("order", None, "data", "ring only: the ring's order of GPUs, as NCCL_DEBUG=INFO prints "
          "a channel's (0,3,1,2; default 0,1,...,N-1)", optional=True, metavar="R,R,..."),
)  # fmt: skip


@takes(SIMULATE)
def simulate(
    algorithm: str,
    gpus: int = 4,
    gpus_per_node: int | None = None,
    length: int | None = None,
    dtype: str = "int",
    seed: int = 0,
    values: object = None,
    trace: bool = False,
    chunks: int | None = None,
    intra_bw: float = H100_NVLINK_GBps,
    inter_bw: float = NIC_400G_GBps,
    intra_latency: float = 0.0,
    inter_latency: float = 0.0,
    order: object = None,
) -> dict:
    """Run one all-reduce on real vectors; the trace of every step when `trace` is true. `order`
    runs the ring in that order of GPUs (a channel's ring from NCCL_DEBUG=INFO). The ring's
    result also has `chunks` (chunk c's elements [start, stop), by chunk) and `owners` (by GPU,
    the chunk whose complete sum it holds after the reduce-scatter)."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    trace, length = p["trace"], p["length"]
    topo = topology(
        p["gpus"], p["gpus_per_node"], *_link_values(p),
        max_gpus=MAX_TRACE_GPUS if trace else MAX_SIM_GPUS,
    )  # fmt: skip
    _refuse_unused(p, SIMULATE, topo)
    dt = dtypes.get(p["dtype"])
    max_length = MAX_TRACE_LENGTH if trace else min(MAX_LENGTH, MAX_ELEMENTS // topo.gpus)
    if p["values"] is None and length is None:
        length = 2 * topo.gpus
    if length is not None and length > max_length:
        raise ParamError("length", f"must be between 1 and {max_length}")
    if p["values"] is None:
        inputs = gradients.draw(topo.gpus, length, dt, p["seed"])
    else:
        _refuse_given(p, SIMULATE, ("seed",), "draws random gradients, and values are given")
        inputs = gradients.check(p["values"], topo.gpus, dt, max_length)
        if length is not None and length != len(inputs[0]):
            raise ParamError("length", "does not match the length of the given values")
    opts = {}
    if p["chunks"] is not None:
        if p["algorithm"] != "tree":
            raise ParamError("chunks", "only the tree is pipelined in chunks")
        opts["chunks"] = p["chunks"]
    elif p["algorithm"] == "tree":  # no more chunks than elements in half the vector
        opts["chunks"] = max(1, min(tree.SIMULATE_CHUNKS, len(inputs[0]) // 2))
    if p["order"] is not None:
        if p["algorithm"] != "ring":
            raise ParamError("order", "only the ring runs in a given order")
        opts["order"] = permutation("order", p["order"], topo.gpus)
    return Answer(sim.run(p["algorithm"], topo, inputs, dt, full=trace, **opts), sim.RECORD)


def _link_values(p: dict) -> tuple[float, float, float, float]:
    return p["intra_bw"], p["inter_bw"], p["intra_latency"], p["inter_latency"]


INTER = ("inter_latency", "inter_bw")  # the link parameters between servers


def _refuse_given(p: dict, s: dict[str, Param], names, why: str) -> None:
    """Refuses the first of `names` set away from its default, naming it, with why this call
    cannot apply it: a parameter that would change nothing is an error, never ignored."""
    for name in names:
        if p[name] != s[name].default:
            raise ParamError(name, why)


def _refuse_unused(p: dict, s: dict[str, Param], topo: Topology, names=INTER) -> None:
    _refuse_between_servers(p, s, names, topo.gpus, topo.nodes, topo.gpus_per_node)


def _refuse_between_servers(p: dict, s: dict, names, gpus: int, servers: int, per: int) -> None:
    """Refuses a link parameter set away from its default that this call cannot apply, naming
    it, rather than ignore it: with every GPU in one server no message crosses the network, so
    a latency or a rate between servers changes nothing (notebook 05 passed a 5 µs latency with
    no servers given, and printed the opposite of page 5's lesson)."""
    if servers > 1:
        return
    for name in names:
        if p[name] != s[name].default:
            raise ParamError(
                name,
                f"applies between servers, and all {gpus} GPUs are in one server "
                f"(GPUs per server {'unset' if p['gpus_per_node'] is None else per}"
                "): give the GPUs per server (1: every GPU its own server) to use it",
            )


ESTIMATE = spec(
    ALGORITHM,
    GPUS,
    Param("bytes", REQUIRED, "float", "gradient size in bytes per GPU (14e9 = a 7B model in "
          "BF16)", POSITIVE, metavar="S"),
    GPUS_PER_NODE,
    Param("chunks", None, "int", "tree only: pipeline chunks per tree (default: 512 KiB each, "
          "as NCCL)", 1, 1 << 20, optional=True),
    *_links(),
)  # fmt: skip


@takes(ESTIMATE)
def estimate(
    algorithm: str,
    gpus: int,
    bytes: float,
    gpus_per_node: int | None = None,
    chunks: int | None = None,
    intra_bw: float = H100_NVLINK_GBps,
    inter_bw: float = NIC_400G_GBps,
    intra_latency: float = 0.0,
    inter_latency: float = 0.0,
) -> dict:
    """Closed-form time, steps and bytes of one all-reduce of `bytes` per GPU."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    topo = topology(p["gpus"], p["gpus_per_node"], *_link_values(p))
    _refuse_unused(p, ESTIMATE, topo)
    if p["chunks"] is not None and p["algorithm"] != "tree":
        raise ParamError("chunks", "only the tree is pipelined in chunks")
    out = cost_model.cost(p["algorithm"], topo, float(p["bytes"]), p["chunks"])
    return Answer(out, cost_model.RECORD)


BUSBW = spec(
    GPUS,
    Param("bytes", REQUIRED, "float", "size as nccl-tests counts it (the total for "
          "reduce-scatter, all-gather)", POSITIVE, metavar="S"),
    Param("time_us", REQUIRED, "float", "measured time", POSITIVE, unit="µs", metavar="T"),
    Param("collective", "allreduce", "choice", "the collective nccl-tests ran",
          choices=_choices(COLLECTIVES)),
)  # fmt: skip


@takes(BUSBW)
def busbw(gpus: int, bytes: float, time_us: float, collective: str = "allreduce") -> dict:
    """nccl-tests' algbw and busbw for one measured time (S as nccl-tests counts it)."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    out = cost_model.bandwidths(
        float(p["bytes"]), float(p["time_us"]) * 1e-6, p["gpus"], p["collective"]
    )
    return Answer(out | p, cost_model.BANDWIDTHS)


# ---- DDP buckets -----------------------------------------------------------------------------

MAX_TENSORS = 100_000
MAX_TENSOR_BYTES = 1 << 50
MAX_BUCKET_MB = 1 << 30  # 1 PiB: far beyond any model, still a finite number of bytes
MAX_BATCH = 1 << 20


DDP_TIMINGS = ("nccl", "lock-step")


def _bucket_mb(name: str, label: str, metavar: str = "") -> Param:
    """A cap in MiB as PyTorch takes it: 0 is allowed (every tensor closes its bucket)."""
    return Param(name, None, "float", label, 0, MAX_BUCKET_MB, unit="MiB", optional=True,
                 metavar=metavar)  # fmt: skip


BUCKET_CAP_MB = _bucket_mb(
    "bucket_cap_mb", "bucket cap in MiB (2^20 bytes), as DDP's bucket_cap_mb; unset: PyTorch's "
    "default of 25 with a first bucket of 1", "X",
)  # fmt: skip
FIRST_BUCKET_MB = _bucket_mb(
    "first_bucket_mb", "cap of the first bucket in MiB: 1 without --bucket-cap-mb, else the cap",
    "Y",
)  # fmt: skip


def param_sizes(values) -> list[int]:
    """Parameter sizes in bytes, in model order: whole numbers, 0 allowed (as PyTorch does)."""
    if isinstance(values, str):
        parts = [p.strip() for p in values.split(",") if p.strip()]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ParamError("param_bytes", "must be numbers separated by commas") from None
    if not isinstance(values, (list, tuple)) or not values:
        raise ParamError("param_bytes", "must be a non-empty list of sizes in bytes")
    if len(values) > MAX_TENSORS:
        raise ParamError("param_bytes", f"at most {MAX_TENSORS:,} tensors")
    return [count("param_bytes", v, 0, MAX_TENSOR_BYTES) for v in values]


BUCKETS = spec(
    Param("param_bytes", REQUIRED, "data", "parameter sizes in BYTES, in model order, separated "
          "by commas", metavar="B1,B2,..."),
    BUCKET_CAP_MB,
    FIRST_BUCKET_MB,
)  # fmt: skip


@takes(BUCKETS)
def buckets(
    param_bytes: object, bucket_cap_mb: float | None = None, first_bucket_mb: float | None = None
) -> dict:
    """PyTorch DDP's steady-state buckets for parameters of these sizes (bytes, model order)."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    sizes = param_sizes(p["param_bytes"])
    cap, first = p["bucket_cap_mb"], p["first_bucket_mb"]
    out = ddp_engine.buckets(sizes, cap, first)
    first_b, cap_b = ddp_engine.limits(cap, first)
    return {
        "buckets": out,
        "bucket_bytes": [sum(sizes[i] for i in b) for b in out],
        "first_bucket_bytes": first_b,
        "bucket_cap_bytes": cap_b,
    }


def model_name(name) -> models.Model:
    """Any spelling of a model's key or label, or an unambiguous prefix (llama-3-8b, gpt2-xl)."""
    return models.get(calculator.resolve_model(name))


DDP = spec(
    MODEL.narrow(default="gpt2"),
    GPUS.narrow(default=8),
    GPUS_PER_NODE,
    BUCKET_CAP_MB,
    FIRST_BUCKET_MB,
    Param("batch", None, "int", "samples per GPU (default: per model)", 1, MAX_BATCH,
          optional=True, metavar="B"),
    MFU,
    Param("peak_tflops", None, "float", "GPU peak; the default is the GPU's dense BF16 peak, "
          f"{hardware.H100_SXM.peak_bf16_tflops:g} for the H100 SXM", POSITIVE, 1e6,
          unit="TFLOP/s", optional=True, metavar="T"),
    Param("grad_bytes", calculator.GRAD_BYTES["fp32"], "choice", "bytes per gradient element",
          choices=tuple(sorted((n, k.upper()) for k, n in calculator.GRAD_BYTES.items()))),
    Param("sweep", False, "bool", "also sweep the bucket cap from 0.1 MiB to the model"),
    *_links(NCCL_NVLINK_HOP_US, NCCL_NETWORK_HOP_US),
    GPU.narrow(label=""),  # without a label: the library's only, not the CLI's
    Param("timing", "nccl", "choice", choices=_choices(DDP_TIMINGS)),
)  # fmt: skip


@takes(DDP)
def ddp(
    model: str = "gpt2",
    gpus: int = 8,
    gpus_per_node: int | None = None,
    bucket_cap_mb: float | None = None,
    first_bucket_mb: float | None = None,
    batch: int | None = None,
    mfu: float = calculator.DEFAULT_MFU,
    peak_tflops: float | None = None,
    grad_bytes: int = 4,
    sweep: bool = False,
    intra_bw: float = H100_NVLINK_GBps,
    inter_bw: float = NIC_400G_GBps,
    intra_latency: float = NCCL_NVLINK_HOP_US,
    inter_latency: float = NCCL_NETWORK_HOP_US,
    gpu: str = DEFAULT_GPU,
    timing: str = "nccl",
) -> dict:
    """One steady-state DDP backward pass: buckets, timeline, exposed communication (and sweep).

    timing "nccl" (the default) times each bucket's all-reduce by the fitted time of NCCL's
    choice for `gpu`, with one network card of inter_bw GB/s per GPU (the CLI's --nic-gbps takes
    8 × that, in Gb/s); "lock-step" by the whiteboard model of pages 3-6, with the links' rates
    and latencies. peak_tflops defaults to the GPU's dense BF16 peak.
    The sweep varies the cap and keeps the run's first bucket: first_bucket_mb when given, else
    1 MiB when the cap is unset (PyTorch's default), else the cap (PyTorch 2.4 and later). Its
    best cap is the least exposed time over every cap (ddp.optimum), not a point of the sweep.
    """
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    m = model_name(p["model"])
    topo = topology(p["gpus"], p["gpus_per_node"], *_link_values(p))
    timing, grad_bytes = p["timing"], p["grad_bytes"]
    cap, first = p["bucket_cap_mb"], p["first_bucket_mb"]
    b = ddp_engine.DEFAULT_BATCH[m.key] if p["batch"] is None else p["batch"]
    device = hardware.find(hardware.GPUS, p["gpu"], "gpu")
    peak = device.peak_bf16_tflops if p["peak_tflops"] is None else p["peak_tflops"]
    flops = peak * 1e12 * p["mfu"]
    _refuse_unused(p, DDP, topo)
    if timing == "nccl":
        _refuse_lockstep(p)
        system = _ddp_system(device.name, topo)
        timed = ddp_engine.nccl_time(system)
    else:
        if p["peak_tflops"] is not None:
            why = "sets the peak and, timing lock-step, nothing else: peak_tflops is given"
            _refuse_given(p, DDP, ("gpu",), why)
        timed = ddp_engine.lockstep_time(topo)
    r = ddp_engine.run(m, timed, b, flops, grad_bytes, cap, first)
    rows = r["buckets"]
    if timing == "nccl":
        picks: dict[int, nccl.Candidate] = {}  # a model's buckets repeat a few sizes
        for row in rows:
            size = row["bytes"]
            if size and size not in picks:
                picks[size] = nccl.choose("AllReduce", size, system)
            pick = picks[size] if size else None
            row["algorithm"] = pick.algorithm if pick else "none"
            row["protocol"] = pick.protocol if pick else "none"
    out = {
        "model": m.key,
        "params": m.params,
        "gpu": device.name,
        "gpus": topo.gpus,
        "gpus_per_node": topo.gpus_per_node,
        "batch": b,
        "sample": m.sample,
        "timing": timing,
        "algorithm": _ddp_algorithm(timing, topo, rows),
        "gradient_bytes": r["gradient_bytes"],
        "first_bucket_bytes": r["limits_bytes"][0],
        "bucket_cap_bytes": r["limits_bytes"][1],
        "backward_s": r["backward_s"],
        "allreduce_total_s": r["allreduce_total_s"],
        "comm_end_s": r["comm_end_s"],
        "exposed_s": r["exposed_s"],
        "buckets": r["bucket_indices"],
        "bucket_timeline": rows,
    }
    if p["sweep"]:
        swept_first = ddp_engine.DEFAULT_FIRST_MB if cap is None and first is None else first
        swept = ddp_engine.sweep(m, timed, b, flops, grad_bytes, first_mb=swept_first)
        best = ddp_engine.optimum(m, timed, b, flops, grad_bytes, swept_first)
        out.update(best_bucket_mb=best["bucket_mb"], best_exposed_s=best["exposed_s"], sweep=swept)
        # the sweep's first bucket in bytes; None: each cap's own (PyTorch 2.4 and later)
        out["sweep_first_bucket_bytes"] = (
            None if swept_first is None else int(swept_first * ddp_engine.MIB)
        )
    return Answer(out, ddp_engine.RECORD)


def _refuse_lockstep(p: dict) -> None:
    """NCCL's timing has its own latencies and NVLink rate: the whiteboard model's are refused
    when set, as they would change nothing."""
    why = (
        "is the whiteboard model's (timing lock-step); timing nccl takes NCCL's own latencies "
        "and NVLink rate for the GPU"
    )
    _refuse_given(p, DDP, ("intra_latency", "inter_latency", "intra_bw"), why)


def _ddp_system(gpu: str, topo: Topology) -> nccl.System:
    """NCCL's view of the cluster: one network card per GPU at the link's rate."""
    if topo.gpus < 2:
        raise ParamError("gpus", "an all-reduce needs at least 2 GPUs")
    if topo.gpus_per_node > 8:
        raise ParamError("gpus_per_node", "at most 8 (an HGX/DGX server) for NCCL's choice")
    nic_Gbps = topo.inter.GBps * 8
    lo, hi = NCCL_NIC_GBPS
    if not lo <= nic_Gbps <= hi:
        raise ParamError(
            "inter_bw",
            f"must be a {lo:g}-{hi:g} Gb/s card ({lo / 8:g}-{hi / 8:g} GB/s) for NCCL's choice",
        )
    g = topo.gpus_per_node
    return nccl.System(gpu, topo.gpus, g, g, nic_Gbps)


def _ddp_algorithm(timing: str, topo: Topology, rows: list[dict]) -> str:
    """What ran the all-reduces: NCCL's picks, most bytes first, or the lock-step ring."""
    if timing != "nccl":
        return "ring" if topo.nodes == 1 or topo.gpus_per_node == 1 else "multi-ring"
    carried: dict[str, int] = {}
    for row in rows:
        if row["bytes"]:
            key = f"{row['algorithm']}/{row['protocol']}"
            carried[key] = carried.get(key, 0) + row["bytes"]
    return ", ".join(sorted(carried, key=lambda k: -carried[k])) or "none"


# ---- Sharded data parallel and in-network reduction ---------------------------------------


CLUSTER_GPUS = GPUS.narrow(hi=calculator.MAX_GPUS)
CLUSTER_GPUS_PER_NODE = GPUS_PER_NODE.narrow(
    label="GPUs per server (default: the GPU's, 8)", hi=calculator.MAX_GPUS_PER_NODE
)
CLUSTER_NIC_GBPS = NIC_GBPS.narrow(hi=1e6)
NCCL_RELEASE = Param(
    "nccl_version", nccl.NCCL_VERSION, "choice",
    nccl.release_help(),
    choices=tuple((v, v) for v in nccl.VERSIONS),
)  # fmt: skip
GPUS_PER_PROCESS = Param(
    "gpus_per_process", 1, "int", "GPUs each process drives (all_reduce_perf's -g): 1 in a "
    "training job; 8 when one process drives a server's GPUs, whose kernel launches then queue",
    1, calculator.MAX_GPUS_PER_NODE, metavar="G",
)  # fmt: skip
# the calculator's latencies: the vocabulary's under the calculator's keywords (µs in the name)
LATENCIES_US = (
    INTRA_LATENCY.narrow(name="intra_latency_us", hi=1e6, flag="--intra-latency"),
    INTER_LATENCY.narrow(name="inter_latency_us", hi=1e6, flag="--inter-latency"),
)
PRESET_MODEL = MODEL.narrow(
    label=f"one of {', '.join(calculator.PRESET_MODELS)} (any case or spelling, or a prefix)"
)
SHARD = spec(
    PRESET_MODEL, CLUSTER_GPUS, CLUSTER_GPUS_PER_NODE, GPU, CLUSTER_NIC_GBPS, TOKENS_PER_GPU, MFU,
    Param("comm_model", "nccl", "choice", f"how the collectives are timed: nccl: the fitted "
          f"time of NCCL {NCCL_VERSION}'s choice, the collective it would pick for each size and "
          f"group, as on page 8 ({', '.join(nccl.GPU_SPECS)}); ring: a single flat ring, "
          "the whiteboard model",
          choices=_choices(("nccl", "ring"))),
    *LATENCIES_US,
)  # fmt: skip


@takes(SHARD)
def shard(
    model: str,
    gpus: int,
    gpus_per_node: int | None = None,
    gpu: str = DEFAULT_GPU,
    nic_Gbps: float = hardware.NIC_400G_Gbps,
    tokens_per_gpu: float = calculator.DEFAULT_TOKENS,
    mfu: float = calculator.DEFAULT_MFU,
    comm_model: str = "nccl",
    intra_latency_us: float = 0.0,
    inter_latency_us: float = 0.0,
) -> dict:
    """Memory, bytes and time per GPU of DDP, ZeRO-1/2/3 and HSDP for a model on a cluster.

    `strategies[name].memory_bytes_per_gpu` is {"params", "grads", "optimizer", "total"} in
    bytes; `comm_bytes_per_gpu` the bytes each GPU sends per step; `comm_s` their time, the
    fitted time of NCCL's choice unless comm_model="ring" (the latencies are the ring's only);
    `fits` whether the model states fit the GPU's memory (GiB); `overlap[zero3|hsdp]` the tokens
    per GPU from which the collectives hide, (m - 1)/m · F/B with its F and B, the figure page 8
    prints.
    """
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    m = calculator.model_for(p.pop("model"), None)
    tokens, u = float(p.pop("tokens_per_gpu")), float(p.pop("mfu"))
    timing = p.pop("comm_model")
    if timing == "nccl":
        why = "is the ring's (comm_model ring); NCCL's fitted time has its own latencies"
        _refuse_given(p, SHARD, ("intra_latency_us", "inter_latency_us"), why)
    c = calculator.cluster_for(**p)
    _refuse_between_servers(p, SHARD, ("nic_Gbps",), c.gpus, c.servers, c.gpus_per_node)
    if timing == "nccl" and c.gpu.name not in nccl.GPU_SPECS:
        raise ParamError("gpu", f"NCCL's tuning code knows {', '.join(nccl.GPU_SPECS)}")
    timer = shardcost.nccl_time(c.gpu.name, c.nic_GBps * 8) if timing == "nccl" else None
    out = shardcost.strategies(m, c, tokens, u, **({"comm_time": timer} if timer else {}))
    head = {
        "model": m.key,
        "params": m.params,
        "gpus": c.gpus,
        "gpus_per_node": c.gpus_per_node,
        "servers": c.servers,
        "gpu": c.gpu.name,
        "intra_GBps": c.intra_rate("ring"),
        "nic_GBps": c.nic_GBps,
        "bytes_per_param": dict(memory.BYTES_PER_PARAM),
        "comm_model": timing,
        "tokens_per_gpu": tokens,
        "mfu": u,
    }
    return Answer(head | out, shardcost.RECORD)


# ---- NCCL's choice: its pick, its estimate and the fitted time, size by size ------------------

MAX_SWEEP_SIZES = 64
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size(field: str, value) -> int:
    """A size as all_reduce_perf's -b/-e read it: a whole number of bytes, or text with K, M, G
    or T (powers of 1024): 8, 1K, 64M, 8G."""
    if isinstance(value, str):
        t = value.strip().upper().removesuffix("B")
        unit = t[-1:] if t[-1:] in _SIZE_UNITS and t[-1:] else ""
        try:
            value = float(t[: len(t) - len(unit)]) * _SIZE_UNITS[unit]
        except ValueError:
            raise ParamError(field, f"not a size: {value!r} (8, 1K, 64M, 8G)") from None
    return count(field, value, 1, 1 << 50)


def size_range(value) -> list[int]:
    """MIN:MAX stepped by powers of two, as all_reduce_perf -b MIN -e MAX -f 2; or a list."""
    if not isinstance(value, str):
        if not isinstance(value, (list, tuple)) or not value:
            raise ParamError("sizes", "must be MIN:MAX or a list of sizes")
        sizes = [size("sizes", v) for v in value]
    else:
        lo, sep, hi = value.partition(":")
        if not sep:
            raise ParamError("sizes", f"expected MIN:MAX, got {value!r}")
        a, b = size("sizes", lo), size("sizes", hi)
        if a > b:
            raise ParamError("sizes", f"MIN {a:,} is above MAX {b:,}")
        sizes = [a]
        while sizes[-1] * 2 <= b:
            sizes.append(sizes[-1] * 2)
    if len(sizes) > MAX_SWEEP_SIZES:
        raise ParamError("sizes", f"more than {MAX_SWEEP_SIZES} sizes")
    return sizes


NCCL_GPUS = ", ".join(nccl.GPU_SPECS)

NCCL_SWEEP = spec(
    GPUS,
    GPUS_PER_NODE.narrow(label="GPUs per server (default: min(N, 8))"),
    GPU.narrow(label=f"one of {NCCL_GPUS} (any case, or a prefix: h100)"),
    NIC_GBPS.narrow(label="network card rate, as sold", hi=NCCL_NIC_GBPS[1]),
    Param("nics_per_node", None, "int", "cards per server (default: one per GPU)", 1, 64,
          optional=True, metavar="K"),
    Param("in_network_reduction", False, "bool",
          "the network reduces (InfiniBand SHARP): NCCL's CollNet algorithms"),
    Param("cpu", "intel", "name", f"host CPU, {' or '.join(nccl.NET_OVERHEAD_US)}: "
          "across servers NCCL's LL limit and its network overhead per step differ",
          metavar="VENDOR"),
    Param("bytes", None, "data", "one size: 8, 1K, 64M, 8G", optional=True, metavar="B"),
    Param("sizes", None, "data", "MIN:MAX in x2 steps, as all_reduce_perf -b MIN -e MAX -f 2 "
          "(8:8G)", optional=True, metavar="MIN:MAX"),
    Param("algorithm", None, "name", f"force one, as NCCL_ALGO: {', '.join(nccl.ALGORITHMS)}",
          optional=True, metavar="ALGO"),
    Param("protocol", None, "name", f"force one, as NCCL_PROTO: {', '.join(nccl.PROTOCOLS)}",
          optional=True, metavar="PROTO"),
    Param("collective", "AllReduce", "choice", "the collective",
          choices=_choices(nccl.COLLECTIVES)),
    NCCL_RELEASE,
    GPUS_PER_PROCESS,
)  # fmt: skip


# What a row of nccl_sweep's answer holds (records.py): its two times, each with its source.
NCCL_ROW = Record(
    "nccl row",
    (
        Quantity("time_us", TIME, "time", sources.FITTED, band="band", scale=1e-6),
        Quantity("nccl_time_us", TIME, "NCCL\ntime", sources.ESTIMATE, scale=1e-6),
    ),
)


@takes(NCCL_SWEEP)
def nccl_sweep(
    gpus: int,
    gpus_per_node: int | None = None,
    gpu: str = DEFAULT_GPU,
    nic_Gbps: float = hardware.NIC_400G_Gbps,
    nics_per_node: int | None = None,
    in_network_reduction: bool = False,
    cpu: str = "intel",
    bytes: object = None,
    sizes: object = None,
    algorithm: str | None = None,
    protocol: str | None = None,
    collective: str = "AllReduce",
    nccl_version: str = NCCL_VERSION,
    gpus_per_process: int = 1,
) -> dict:
    """NCCL's pick for each size (one `bytes`, or `sizes`): its algorithm and protocol, the
    fitted time (what published runs of that size measure), NCCL's estimate (the time its
    tuning code picks on), and every candidate it weighed."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    if (p["bytes"] is None) == (p["sizes"] is None):
        raise ParamError("bytes", "give one size (bytes) or a range (sizes), one of the two")
    sizes = [size("bytes", p["bytes"])] if p["sizes"] is None else size_range(p["sizes"])
    per_node = p["gpus_per_node"] or min(p["gpus"], 8)
    system = nccl.System(
        p["gpu"], p["gpus"], per_node, p["nics_per_node"] or per_node, p["nic_Gbps"],
        p["in_network_reduction"], str(p["cpu"]).lower(), p["nccl_version"],
    )  # fmt: skip
    if system.nodes == 1:
        why = "changes NCCL's tuning across servers only, and all the GPUs are in one server"
        _refuse_given(p, NCCL_SWEEP, ("cpu",), why)
    if p["gpus_per_process"] > per_node:
        raise ParamError(
            "gpus_per_process", f"one process drives GPUs of one server: at most {per_node}"
        )
    return nccl.sweep(
        p["collective"], sizes, system, p["algorithm"], p["protocol"], p["gpus_per_process"]
    )


# The steppers take their parameters as the engines declare them, not restated here: the sharded
# step (reduce-scatter, update one shard, all-gather; checked against DDP) and in-network
# reduction beside the ring on the same vectors.
shard_step = shard_engine.run
innetwork = innetwork_engine.run


# ---- Your cluster -----------------------------------------------------------------------------


def _custom_gpu(name: str, hi: float, unit: str) -> Param:
    """A figure of a custom GPU (gpu="custom"): the calculator reads it only then. Without a
    label, as the CLI does not offer it."""
    return Param(name, None, "float", "", POSITIVE, hi, unit=unit, optional=True)


CALC = spec(
    PRESET_MODEL.narrow(default=None, optional=True),
    Param("params", None, "float", "a custom parameter count (7e9): a uniform stack of "
          "transformer layers", calculator.MIN_PARAMS, calculator.MAX_PARAMS, optional=True,
          metavar="P"),
    replace(CLUSTER_GPUS, default=64),
    CLUSTER_GPUS_PER_NODE,
    GPU,
    CLUSTER_NIC_GBPS,
    GPUS_PER_PROCESS,
    Param("algorithm", calculator.DEFAULT_ALGORITHM, "choice", "nccl: NCCL's choice and its "
          "fitted time; ring, multi-ring, tree, hierarchical, auto: the site's teaching models",
          choices=_choices(calculator.ALGORITHMS)),
    NCCL_RELEASE,
    Param("grad_dtype", "bf16", "choice", "the gradient's type",
          choices=_choices(calculator.GRAD_BYTES)),
    TOKENS_PER_GPU,
    MFU,
    *LATENCIES_US,
    _custom_gpu("link_GBps", 1e5, "GB/s"),
    _custom_gpu("peak_tflops", 1e6, "TFLOP/s"),
    _custom_gpu("memory_gb", 1e5, "GiB"),
    Param("overlap_too", True, "bool"),  # also the step with communication overlapped
)  # fmt: skip


@takes(CALC)
def calc(
    model: str | None = None,
    params: float | None = None,
    gpus: int = 64,
    gpus_per_node: int | None = None,
    gpu: str = DEFAULT_GPU,
    nic_Gbps: float = hardware.NIC_400G_Gbps,
    gpus_per_process: int = 1,
    algorithm: str = "nccl",
    nccl_version: str = NCCL_VERSION,
    grad_dtype: str = "bf16",
    tokens_per_gpu: float = calculator.DEFAULT_TOKENS,
    mfu: float = calculator.DEFAULT_MFU,
    intra_latency_us: float = 0.0,
    inter_latency_us: float = 0.0,
    link_GBps: float | None = None,
    peak_tflops: float | None = None,
    memory_gb: float | None = None,
    overlap_too: bool = True,
) -> dict:
    """The calculator: all-reduce time, bandwidths, lower bound, compute and shares of a step.

    Give a model or a parameter count; link_GBps, peak_tflops and memory_gb describe a custom
    GPU (gpu="custom") and are refused for another; nccl_version and gpus_per_process are NCCL's
    and refused for a teaching model; the card and a latency between servers are refused with
    every GPU in one server: each would change nothing.
    """
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    if p["model"] is None and p["params"] is None:
        raise ParamError("model", "give a model name or a parameter count")
    if p["model"] is not None and p["params"] is not None:
        raise ParamError("params", "give a model name or a parameter count, not both")
    if calculator.normalize_name(p["gpu"]) != "custom":
        why = f'is a custom GPU\'s figure: give gpu="custom" to use it (gpu is {p["gpu"]})'
        _refuse_given(p, CALC, ("link_GBps", "peak_tflops", "memory_gb"), why)
    if p["algorithm"] != "nccl" and p["algorithm"] not in calculator.NCCL_FORCED:
        why = (
            f"times NCCL's choice (algorithm nccl); algorithm {p['algorithm']} is a teaching model"
        )
        _refuse_given(p, CALC, ("nccl_version", "gpus_per_process"), why)
    out = calculator.calculate(**p).figures
    _refuse_between_servers(
        p, CALC, ("inter_latency_us", "nic_Gbps"), out["gpus"], out["servers"],
        out["gpus_per_node"],
    )  # fmt: skip
    out = {k: v for k, v in out.items() if k != "times_s"} | {"algorithm_times_s": out["times_s"]}
    return Answer(out, calculator.RECORD)


@takes(spec())
def presets() -> dict:
    """The calculator's models, GPUs and network cards, each with its source."""
    return calculator.presets()


NCCL_TESTS = spec(
    Param("log", REQUIRED, "text", "an all_reduce_perf log", flag="FILE"),
    GPUS.narrow(label="GPUs in the run (default: counted from the '#  Rank' lines)",
                default=None, optional=True),
    GPUS_PER_NODE.narrow(label="GPUs per server (default: from the host names, else 8)", hi=8),
    GPU.narrow(label="A100, H100, H200 or B200: NCCL's prediction beside each row, and the "
               "NVLink line rate one server's busbw is held against (default: no prediction)",
               default=None, optional=True),
    NIC_GBPS.narrow(label="network card rate, as sold: the multi-server line rate; 400 if not "
                    "given, assumed", hi=NCCL_NIC_GBPS[1], default=None, optional=True),
    Param("nics_per_node", None, "int", "network cards per server (default: one per GPU)", 1, 64,
          optional=True, metavar="K"),
)  # fmt: skip


@takes(NCCL_TESTS)
def nccl_tests(
    log: str,
    gpus: int | None = None,
    gpus_per_node: int | None = None,
    gpu: str | None = None,
    nic_Gbps: float | None = None,
    nics_per_node: int | None = None,
) -> dict:
    """An all_reduce_perf log: rows, GPU count, skipped lines, the alpha-beta fit, NCCL's
    regimes fitted to it (nccl_fit) and, given the GPU, NCCL's prediction beside each row; every
    run."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    gpu = None if p["gpu"] is None else hardware.find(hardware.GPUS, p["gpu"], "gpu").name
    per = p["gpus_per_node"]
    nic = None if p["nic_Gbps"] is None else float(p["nic_Gbps"])
    net = explain.Network(gpu, nic, p["nics_per_node"], per)
    if per is None:
        return Answer(explain.read_log(p["log"], p["gpus"], net=net), explain.LOG)
    return Answer(explain.read_log(p["log"], p["gpus"], per, net), explain.LOG)


NCCL_DEBUG = spec(
    Param("log", REQUIRED, "text", "NCCL_DEBUG=INFO output, alone or with all_reduce_perf's",
          flag="FILE"),
    GPUS.narrow(label="GPUs in the run (default: nRanks from the comm lines)", default=None,
                optional=True),
    GPU.narrow(label="A100, H100, H200 or B200 (default: from the '#  Rank' device names)",
               default=None, optional=True),
    NIC_GBPS.narrow(label="the rate of one network device NCCL uses, as sold (a log does not "
                    "print it): the line rate busbw is held against", hi=NCCL_NIC_GBPS[1],
                    default=None, optional=True),
)  # fmt: skip


@takes(NCCL_DEBUG)
def nccl_debug(
    log: str, gpus: int | None = None, gpu: str | None = None, nic_Gbps: float | None = None
) -> dict:
    """A NCCL_DEBUG=INFO log read: NCCL version, ranks, servers, GPUs per server, network, NVLS,
    CollNet, each channel's ring and tree, the tuning lines' calls, findings with their
    evidence line and, with all_reduce_perf rows, each row's algorithm on that topology."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    gpu = None if p["gpu"] is None else hardware.find(hardware.GPUS, p["gpu"], "gpu").name
    nic = None if p["nic_Gbps"] is None else float(p["nic_Gbps"])
    return Answer(explain.read_debug(p["log"], p["gpus"], explain.Network(gpu, nic)), explain.DEBUG)


TOPOLOGY = spec(
    Param("topology", REQUIRED, "text", "a topology file as NCCL_TOPO_DUMP_FILE writes it, or "
          "a log with the system NCCL_DEBUG_SUBSYS=GRAPH prints", flag="FILE"),
    # named apart from the pages' `servers` (their own ranges, tests/widgets/test_narrowed.py)
    Param("topology_servers", 1, "int", "servers of this kind in the job (the file is one of "
          "them)", 1, topology_engine.MAX_SERVERS, flag="--servers", metavar="N"),
)  # fmt: skip


@takes(TOPOLOGY)
def nccl_topology(topology: str, topology_servers: int = 1) -> dict:
    """NCCL 2.30.7's topology search on a server's topology file: the ring, tree and NVLS graphs
    (pattern, nChannels, bwIntra, bwInter, typeIntra, typeInter, sameChannels) and every
    channel's ring and tree after NCCL's duplication, across `servers` such servers. From a log,
    `log` holds the log's own printed search next to the port's, field by field."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    out = topology_engine.topology(p["topology"], p["topology_servers"])
    if topology_engine.is_log(p["topology"]):  # the log's own search, held against the port's
        out["log"] = topology_logcheck.check(p["topology"])
    return out


MAX_ORDER_GPUS = 512
MAX_ORDER_LENGTH = 4096
MAX_ORDER_ELEMENTS = 1 << 17  # gpus x length: four methods of exact rationals stay well under 1 s
ORDER_DTYPES = tuple(dtypes.FLOATS)
# NCCL's algorithm -> the method that models its order (NVLSTree: the switch's FP32 sum inside a
# server; its tree across servers is not modelled)
ORDER_METHOD = {"Ring": "ring", "Tree": "tree", "NVLS": "nvls", "NVLSTree": "nvls"}

ORDER_FIGURES = ("result", "ranks_agree", "max_ulp", "mean_ulp")  # a method's, in the CLI's JSON

ORDERS = spec(
    GPUS.narrow(default=4, lo=2, hi=MAX_ORDER_GPUS),
    Param("dtype", "bf16", "choice", "element type of the gradient and of the reduction",
          choices=_choices(ORDER_DTYPES)),
    Param("seed", 0, "int", "seed of the drawn values", 0, 2**63),
    Param("length", 8, "int", "elements of the gradient (taken from --values if given)", 1,
          MAX_ORDER_LENGTH, metavar="L"),
    Param("kind", "random", "choice", "drawn values: a gradient's spread, wide magnitudes, or "
          "the cancellation probe 1e8, 1, -1e8, 1", choices=_choices(orders_engine.KINDS)),
    Param("bytes", None, "int", "the bucket all-reduced, in bytes (default: the gradient "
          "alone); NCCL's algorithm, protocol, channels and chunks follow from it", 1, 1 << 40,
          optional=True, metavar="B"),
    Param("offset", 0, "int", "the gradient's first element inside the bucket", 0, 1 << 39),
    GPU.narrow(label="GPU (NCCL's channels and pick)", metavar=""),
    VALUES,
    Param("rings", None, "data", "each channel's ring of GPUs, as NCCL_DEBUG=INFO prints them, "
          "channels separated by ';' (0,1,3,2;0,2,3,1), from any GPU (NCCL numbers a ring from "
          "GPU 0); channel c takes ring c modulo their number, as NCCL duplicates its channels "
          "(default 0,1,...,N-1 on every channel)", optional=True, metavar="R,R,...;..."),
    Param("chains", None, "data", "one server's tree: each channel's chain of GPUs from its "
          "head down, as the log's Trees lines link them (rank r's 'c/-1/-1->r->u': u before r "
          "before c), channels separated by ';' (0,3,2,1;1,2,3,0); channel c takes chain c "
          "modulo their number (default 0,1,...,N-1)", optional=True, metavar="R,R,...;..."),
)  # fmt: skip
MAX_ORDER_RINGS = 64  # MAXCHANNELS (src/include/device.h:91)


@takes(ORDERS)
def orders(
    gpus: int = 4,
    dtype: str = "bf16",
    seed: int = 0,
    length: int = 8,
    kind: str = "random",
    bytes: int | None = None,
    offset: int = 0,
    gpu: str = DEFAULT_GPU,
    values: object = None,
    rings: object = None,
    chains: object = None,
) -> dict:
    """The same all-reduce summed in each method's order (serial, NCCL's ring, NCCL's trees,
    NVLS) against the exactly rounded sum: each method's result, whether every GPU holds the
    same bits, and its distance from the exact sum in ulps. The bucket size decides NCCL's
    algorithm, protocol, channels and chunks, hence the ring's and the trees' orders; `rings`
    gives each channel's ring (a debug log's), rank order by default."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    n, dt = p["gpus"], dtypes.FLOATS[p["dtype"]]
    if p["values"] is None:
        if n * p["length"] > MAX_ORDER_ELEMENTS:
            raise ParamError("length", f"gpus x length must be at most {MAX_ORDER_ELEMENTS:,}")
        inputs = orders_engine.draw(p["kind"], n, p["length"], dt, p["seed"])
    else:
        _refuse_given(p, ORDERS, ("seed", "kind"), "draws the values, and values are given")
        inputs = gradients.check(p["values"], n, dt, min(MAX_ORDER_LENGTH, MAX_ORDER_ELEMENTS // n))
        if p["length"] not in (ORDERS["length"].default, len(inputs[0])):
            raise ParamError("length", "does not match the length of the given values")
    length = len(inputs[0])
    own = length * dt.itemsize
    nbytes = own if p["bytes"] is None else p["bytes"]
    if p["offset"] * dt.itemsize + own > nbytes:
        field = "bytes" if p["bytes"] is not None else "offset"
        need = (p["offset"] + length) * dt.itemsize
        raise ParamError(field, f"the bucket must hold the gradient: at least {need:,} bytes")
    system = _order_system(n, p["gpu"])
    plans = _order_plans(system, nbytes, dt)
    at = p["offset"]
    channel_rings = None if p["rings"] is None else _rings(p["rings"], n)
    chains = None if p["chains"] is None else _rings(p["chains"], n, "chains")
    if chains and system.gpus_per_node < n:
        raise ParamError(
            "chains",
            f"are one server's: {n} GPUs are {n // system.gpus_per_node} "
            "servers here, whose chains NCCL joins by trees the lab builds itself",
        )
    ring = orders_engine.ring(inputs, dt, plans["ring"], at, channel_rings)
    tree_run = orders_engine.tree(
        inputs, dt, plans["tree"], plans["tree_channels"], at,
        gpus_per_node=system.gpus_per_node, pattern=tree_pattern(system), chains=chains,
    )  # fmt: skip
    runs = {
        "serial": orders_engine.serial(inputs, dt)["buffers"],
        "ring": ring["buffers"],
        "tree": tree_run["buffers"],
        "nvls": orders_engine.nvls(inputs, dt)["buffers"],
    }
    target = orders_engine.exact(inputs, dt)
    pick = plans["pick"]
    methods = {k: orders_engine.summary(b, target, dt) for k, b in runs.items()}
    out = {
        "gpus": n,
        "dtype": dt.name,
        "length": length,
        "bytes": nbytes,
        "offset": p["offset"],
        "inputs": inputs,
        "exact": target,
        "methods": {k: {f: m[f] for f in ORDER_FIGURES} for k, m in methods.items()},
        "ulps": {k: m["ulps"] for k, m in methods.items()},
        "ring_first": ring["first"],
        "tree_index": tree_run["tree"],
        "nccl": {
            "version": nccl.NCCL_VERSION,
            "algorithm": pick.algorithm,
            "protocol": pick.protocol,
            "method": ORDER_METHOD.get(pick.algorithm),
            "time_us": pick.time_us,
            "ring": _plan_json(plans["ring"]),
            "tree": _plan_json(plans["tree"]),
        },
    }
    return Answer(out, orders_engine.RECORD)


def _rings(value, n: int, field: str = "rings") -> list[list[int]]:
    """Each channel's ring (or chain): text "0,1,3,2;0,2,3,1" (one per channel, as
    NCCL_DEBUG=INFO prints them) or a list of them; each a permutation of the n GPUs."""
    one = field[:-1]
    rings = [r for r in value.split(";") if r.strip()] if isinstance(value, str) else value
    if not isinstance(rings, (list, tuple)) or not rings:
        raise ParamError(field, f"must list one {one} per channel, such as 0,1,3,2;0,2,3,1")
    if len(rings) > MAX_ORDER_RINGS:
        raise ParamError(field, f"lists {len(rings)} {field}; NCCL has at most {MAX_ORDER_RINGS}")
    out = []
    for k, ring in enumerate(rings):
        try:
            out.append(permutation(field, ring, n))
        except ParamError as e:
            raise ParamError(field, f"{one} {k + 1}: {e.message}") from None
    return out


def _order_system(n: int, gpu: str) -> nccl.System:
    """n GPUs in servers of up to 8 (the largest divisor of n that fits), a card per GPU."""
    g = max(d for d in range(1, 9) if n % d == 0)
    return nccl.System(gpu, n, g, g)


def _order_plans(system: nccl.System, nbytes: int, dt) -> dict:
    """NCCL's pick at this size, and the ring's and the tree's plans with their best protocol."""
    best = nccl.best_by_algorithm(system, [nbytes])
    graphs = nccl.graphs(system)
    count = -(-nbytes // dt.itemsize)
    n, channels = system.gpus, comm_channels(system)
    plans: dict[str, Any] = {}  # the two plans, the tree's channels, NCCL's pick
    for method, algo in (("ring", "Ring"), ("tree", "Tree")):
        protocol = best.protocol.get(algo, ["Simple"])[0]
        plans[method] = orders_engine.make_plan(
            count, dt.itemsize, n, algo, protocol, channels, system.nodes
        )
    plans["tree_channels"] = min(
        graphs["Ring"].n_channels, graphs.get("Tree", graphs["Ring"]).n_channels
    )
    plans["pick"] = nccl.choose("AllReduce", nbytes, system)
    return plans


def _plan_json(plan) -> dict:
    return {
        "algorithm": plan.algorithm,
        "protocol": plan.protocol,
        "channels": plan.channels,
        "parts": [[q.channel, q.offset, q.count, q.chunk] for q in plan.parts],
    }
