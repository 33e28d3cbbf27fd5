"""The library's front door: plain parameters in, validated, JSON-able results out.

The CLI and the page widgets both call these, so a parameter is checked in one place and a bad
one raises a ParamError that names it.
"""

from __future__ import annotations

from . import dtypes, nccl
from .catalog import hardware, models
from .collectives import COLLECTIVES
from .costs import cost as cost_model
from .costs.latency_model import NCCL_NETWORK_HOP_US, NCCL_NVLINK_HOP_US
from .errors import ParamError
from .logs import explain
from .schedules import tree
from .schedules.topology import H100_NVLINK_GBps, NIC_400G_GBps, Topology
from .simulation import gradients
from .simulation import innetwork as innetwork_engine
from .simulation import shard as shard_engine
from .simulation import simulate as sim
from .training import calculator, memory, shardcost
from .training import ddp as ddp_engine
from .validate import count, nonnegative, positive

ALGORITHMS = tuple(sim.ALGORITHMS)
MAX_SIM_GPUS = 1024  # summary mode
MAX_TRACE_GPUS = 64  # full traces keep every buffer after every step
MAX_TRACE_LENGTH = 1024
MAX_LENGTH = 1 << 16
MAX_ELEMENTS = 1 << 22  # gpus x length held in memory
MAX_COST_GPUS = 1 << 16


def algorithm_name(name) -> str:
    if name not in ALGORITHMS:
        raise ParamError("algorithm", f"must be one of {', '.join(ALGORITHMS)}")
    return name


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


def simulate(
    algorithm,
    gpus=4,
    gpus_per_node=None,
    length=None,
    dtype="int",
    seed=0,
    values=None,
    trace=False,
    chunks=None,
    **links,
) -> dict:
    """Run one all-reduce on real vectors; the trace of every step when `trace` is true."""
    algorithm = algorithm_name(algorithm)
    topo = topology(
        gpus, gpus_per_node, max_gpus=MAX_TRACE_GPUS if trace else MAX_SIM_GPUS, **links
    )
    dt = dtypes.get(dtype)
    max_length = MAX_TRACE_LENGTH if trace else min(MAX_LENGTH, MAX_ELEMENTS // topo.gpus)
    if values is None:
        length = count("length", 2 * topo.gpus if length is None else length, 1, max_length)
        inputs = gradients.draw(topo.gpus, length, dt, count("seed", seed, 0, 2**63))
    else:
        inputs = gradients.check(values, topo.gpus, dt, max_length)
        if length is not None and count("length", length, 1, max_length) != len(inputs[0]):
            raise ParamError("length", "does not match the length of the given values")
    opts = {}
    if chunks is not None:
        if algorithm != "tree":
            raise ParamError("chunks", "only the tree is pipelined in chunks")
        opts["chunks"] = count("chunks", chunks, 1, 64)
    elif algorithm == "tree":  # no more chunks than elements in half the vector
        opts["chunks"] = max(1, min(tree.SIMULATE_CHUNKS, len(inputs[0]) // 2))
    return sim.run(algorithm, topo, inputs, dt, full=bool(trace), **opts)


def estimate(algorithm, gpus, nbytes, gpus_per_node=None, chunks=None, **links) -> dict:
    """Closed-form time, steps and bytes of one all-reduce of `nbytes` per GPU."""
    algorithm = algorithm_name(algorithm)
    topo = topology(gpus, gpus_per_node, **links)
    s = positive("bytes", nbytes)
    if chunks is not None:
        chunks = count("chunks", chunks, 1, 1 << 20)
    return cost_model.cost(algorithm, topo, s, chunks)


def busbw(gpus, nbytes, time_us, collective="allreduce") -> dict:
    """nccl-tests' algbw and busbw for one measured time (S as nccl-tests counts it)."""
    if collective not in COLLECTIVES:
        raise ParamError("collective", f"must be one of {', '.join(COLLECTIVES)}")
    n = count("gpus", gpus, 1, MAX_COST_GPUS)
    out = cost_model.bandwidths(
        positive("bytes", nbytes), positive("time_us", time_us) * 1e-6, n, collective
    )
    out.update(gpus=n, bytes=nbytes, time_us=time_us, collective=collective)
    return out


# ---- DDP buckets -----------------------------------------------------------------------------

MAX_TENSORS = 100_000
MAX_TENSOR_BYTES = 1 << 50
MAX_BUCKET_MB = 1 << 30  # 1 PiB: far beyond any model, still a finite number of bytes
MAX_BATCH = 1 << 20


DDP_TIMINGS = ("nccl", "lock-step")


def _bucket_mb(field: str, value) -> float | None:
    """A cap in MiB as PyTorch takes it: 0 is allowed (every tensor closes its bucket)."""
    if value is None:
        return None
    v = nonnegative(field, value)
    if v > MAX_BUCKET_MB:
        raise ParamError(field, f"must be at most {MAX_BUCKET_MB:,} MiB")
    return v


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


def buckets(param_bytes, bucket_cap_mb=None, first_bucket_mb=None) -> dict:
    """PyTorch DDP's steady-state buckets for parameters of these sizes (bytes, model order)."""
    sizes = param_sizes(param_bytes)
    cap = _bucket_mb("bucket_cap_mb", bucket_cap_mb)
    first = _bucket_mb("first_bucket_mb", first_bucket_mb)
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


def ddp(
    model="gpt2",
    gpus=8,
    gpus_per_node=None,
    bucket_cap_mb=None,
    first_bucket_mb=None,
    batch=None,
    mfu=calculator.DEFAULT_MFU,
    peak_tflops=None,
    grad_bytes=4,
    sweep=False,
    intra_bw=H100_NVLINK_GBps,
    inter_bw=NIC_400G_GBps,
    intra_latency=NCCL_NVLINK_HOP_US,
    inter_latency=NCCL_NETWORK_HOP_US,
    gpu="H100 SXM",
    timing="nccl",
    sweep_first_mb=None,
) -> dict:
    """One steady-state DDP backward pass: buckets, timeline, exposed communication (and sweep).

    timing "nccl" (the default) times each bucket's all-reduce by NCCL's model for `gpu`, with
    one network card of inter_bw GB/s per GPU; "lock-step" by the teaching model of pages 3-6,
    with the links' rates and latencies. peak_tflops defaults to the GPU's dense BF16 peak.
    sweep_first_mb fixes the sweep's first bucket (1: PyTorch 2.3 and earlier).
    """
    m = model_name(model)
    topo = topology(gpus, gpus_per_node, intra_bw, inter_bw, intra_latency, inter_latency)
    if timing not in DDP_TIMINGS:
        raise ParamError("timing", f"must be one of {', '.join(DDP_TIMINGS)}")
    cap = _bucket_mb("bucket_cap_mb", bucket_cap_mb)
    first = _bucket_mb("first_bucket_mb", first_bucket_mb)
    sweep_first = _bucket_mb("sweep_first_mb", sweep_first_mb)
    b = count("batch", ddp_engine.DEFAULT_BATCH[m.key] if batch is None else batch, 1, MAX_BATCH)
    u = positive("mfu", mfu)
    if u > 1:
        raise ParamError("mfu", "is a share of peak: at most 1")
    device = hardware.find(hardware.GPUS, gpu, "gpu")
    peak = positive("peak_tflops", device.peak_bf16_tflops if peak_tflops is None else peak_tflops)
    if peak > 1e6:
        raise ParamError("peak_tflops", "must be at most 1,000,000 TFLOP/s")
    if grad_bytes not in calculator.GRAD_BYTES.values():
        raise ParamError("grad_bytes", "must be 2 (BF16) or 4 (FP32)")
    flops = peak * 1e12 * u
    if timing == "nccl":
        system = _ddp_system(device.name, topo)
        timed = ddp_engine.nccl_time(system)
    else:
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
    if sweep:
        swept = ddp_engine.sweep(m, timed, b, flops, grad_bytes, first_mb=sweep_first)
        best = ddp_engine.best(swept)
        out.update(best_bucket_mb=best["bucket_mb"], best_exposed_s=best["exposed_s"], sweep=swept)
    return out


def _ddp_system(gpu: str, topo: Topology) -> nccl.System:
    """NCCL's view of the cluster: one network card per GPU at the link's rate."""
    if topo.gpus < 2:
        raise ParamError("gpus", "an all-reduce needs at least 2 GPUs")
    if topo.gpus_per_node > 8:
        raise ParamError("gpus_per_node", "at most 8 (an HGX/DGX server) in NCCL's model")
    nic_Gbps = topo.inter.GBps * 8
    if not 1 <= nic_Gbps <= 3200:
        raise ParamError("inter_bw", "must be 0.125-400 GB/s (a 1-3200 Gb/s card) for NCCL's model")
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


def shard(
    model,
    gpus,
    gpus_per_node=None,
    gpu="H100 SXM",
    nic_Gbps=hardware.NIC_400G_Gbps,
    tokens_per_gpu=calculator.DEFAULT_TOKENS,
    mfu=calculator.DEFAULT_MFU,
    intra_latency_us=0.0,
    inter_latency_us=0.0,
) -> dict:
    """Memory, bytes and time per GPU of DDP, ZeRO-1/2/3 and HSDP for a model on a cluster.

    `strategies[name].memory_bytes_per_gpu` is {"params", "grads", "optimizer", "total"} in
    bytes; `comm_bytes_per_gpu` the bytes each GPU sends per step; `comm_s` the ring's time;
    `fits` whether the model states fit the GPU's memory (GiB).
    """
    m = calculator.model_for(model, None)
    c = calculator.cluster_for(
        gpu=gpu,
        gpus=gpus,
        gpus_per_node=gpus_per_node,
        nic_Gbps=nic_Gbps,
        intra_latency_us=intra_latency_us,
        inter_latency_us=inter_latency_us,
    )
    tokens = positive("tokens_per_gpu", tokens_per_gpu)
    if tokens > 1e9:
        raise ParamError("tokens_per_gpu", "must be at most 1,000,000,000")
    u = positive("mfu", mfu)
    if u > 1:
        raise ParamError("mfu", "is a share of peak: at most 1")
    out = shardcost.strategies(m, c, tokens, u)
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
        "comm_model": "ring",
        "tokens_per_gpu": tokens,
        "mfu": u,
    }
    return head | out


def shard_step(
    gpus=4,
    length=8,
    dtype="int",
    optimizer="sgd",
    lr=None,
    seed=1,
    grads=None,
    params=None,
    reference="ring",
) -> dict:
    """The sharded stepper: reduce-scatter, update one shard, all-gather; checked against DDP."""
    return shard_engine.run(gpus, length, dtype, optimizer, lr, seed, grads, params, reference)


def innetwork(gpus=8, length=16, dtype="bf16", seed=1, values=None) -> dict:
    """The in-network reduction stepper beside the ring on the same vectors."""
    return innetwork_engine.run(gpus, length, dtype, seed, values)


# ---- Your cluster -----------------------------------------------------------------------------


def calc(model=None, params=None, **kw) -> dict:
    """The calculator: all-reduce time, bandwidths, lower bound, compute and shares of a step."""
    if model is None and params is None:
        raise ParamError("model", "give a model name or a parameter count")
    if model is not None and params is not None:
        raise ParamError("params", "give a model name or a parameter count, not both")
    out = calculator.calc(model=model, params=params, **kw)
    return {k: v for k, v in out.items() if k != "times_s"} | {"algorithm_times_s": out["times_s"]}


def presets() -> dict:
    """The calculator's models, GPUs and network cards, each with its source."""
    return calculator.presets()


def nccl_tests(
    text, gpus=None, gpu=None, nic_gbps=None, nics_per_node=None, gpus_per_node=None
) -> dict:
    """An all_reduce_perf log: rows, GPU count, skipped lines, the alpha-beta fit, NCCL's model
    fitted (nccl_fit) and, given the GPU, NCCL's prediction beside each row; every run."""
    if not isinstance(text, str):
        raise ParamError("log", "must be text")
    n = None if gpus is None else count("gpus", gpus, 1, MAX_COST_GPUS)
    per = None if gpus_per_node is None else count("gpus_per_node", gpus_per_node, 1, 8)
    nics = None if nics_per_node is None else count("nics_per_node", nics_per_node, 1, 64)
    if nic_gbps is not None:
        nic_gbps = positive("nic_gbps", nic_gbps)
        if nic_gbps > 3200:
            raise ParamError("nic_gbps", f"must be 1-3200 Gb/s, got {nic_gbps!r}")
    if gpu is not None:
        gpu = hardware.find(hardware.GPUS, gpu, "gpu").name
    net = explain.Network(gpu, nic_gbps, nics, per)
    if per is None:
        return explain.read_log(text, n, net=net)
    return explain.read_log(text, n, per, net)
