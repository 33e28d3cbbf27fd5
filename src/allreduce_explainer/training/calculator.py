"""Your cluster's calculator: a real model, GPU count and network in; all-reduce time per step, bus
bandwidth and the share of a training step it costs out. Pure functions over cost.py (the
closed forms), ddp.py (buckets and their overlap with the backward pass) and hardware.py.

Units: bytes; GB/s = 1e9 B/s per direction; network cards in Gb/s on the wire (400 = 50 GB/s).
The default algorithm is "nccl": NCCL's own cost model and choice (nccl/), timed as published
runs measure it (performance/). The teaching algorithms stay as references: their closed
forms at the links' line rate, with a latency per message of 0 by default (bandwidth only, as
the CLI's `cost`), so
`algorithm="ring"` gives why-allreduce's 0.55 s exactly; NCCL charges a latency per hop
(latency_model.py: 3.4 µs over NVLink, 14 µs over the network for the Simple ring), which a
reader can enter for them. "tree" is this site's teaching tree (all GPUs in rank order, one card
per edge across servers), not NCCL's, which lives in "nccl" (or forced: "nccl-tree").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from .. import nccl, performance
from ..catalog import hardware, models
from ..catalog.models import Layer, Model
from ..collectives import ALLREDUCE
from ..costs import cost
from ..dtypes import BF16, FP32
from ..errors import ParamError
from ..records import BYTES, CARD, COMPUTE, COUNT, MEMORY, RATE, SHARE, TIME, Quantity, Record
from ..schedules.topology import Topology
from ..sources import ESTIMATE, FITTED, WHITEBOARD
from ..validate import count, nonnegative, number, positive
from . import ddp
from .memory import model_states

GRAD_BYTES = {"bf16": BF16.itemsize, "fp32": FP32.itemsize}
CANDIDATES = ("ring", "multi-ring", "tree", "hierarchical")  # the teaching closed forms
# "nccl": NCCL's own model and choice (nccl/); "nccl-ring", "nccl-tree": its Ring or Tree forced,
# as NCCL_ALGO=Ring / Tree do.
NCCL_FORCED = {"nccl-ring": "Ring", "nccl-tree": "Tree"}
ALGORITHMS = ("nccl", *NCCL_FORCED, *CANDIDATES, "auto")
DEFAULT_ALGORITHM = "nccl"
MAX_GPUS = 4096  # the tree's closed form grows with n; 4,096 keeps a page update under ~1 s
MAX_GPUS_PER_NODE = 64
MIN_PARAMS, MAX_PARAMS = 1e6, 1e13
# The backward pass's share of a step's compute: 4N of the 6N FLOPs per token (Kaplan et al.,
# "Scaling Laws for Neural Language Models", 2020, section 2.1), twice the forward's 2N.
BACKWARD_SHARE = 2.0 / 3.0
# Defaults, each an assumption stated on the page: 16,384 tokens per GPU per step (four
# sequences of 4,096), and 40 % of peak (Llama 3 405B reached 38-43 % BF16 MFU on 16k H100s:
# Dubey et al., "The Llama 3 Herd of Models", 2024, Table 4).
DEFAULT_TOKENS = 16384
DEFAULT_MFU = 0.4
MAX_MFU = 1  # MFU is a share of the peak
# A custom parameter count becomes a uniform stack of L transformer layers of width d with
# 12·L·d² = P and d = 128·L (GPT-3's 175B has d/L = 12288/96 = 128; Llama 3 8B 4096/32 = 128).
ASPECT = 128
CUSTOM_SEQUENCE = 4096  # tokens per sample of a custom model: sets the samples per GPU only
# The published totals each preset reproduces (Hugging Face hub safetensors counts; the model
# cards round them to 8B, 70B, 405B, 7B, 1.5B).
PUBLISHED = {
    "gpt2": (124_439_808, "openai-community/gpt2 on the Hugging Face hub: 124M"),
    "bert-base": (109_482_240, "google-bert/bert-base-uncased: 110M (Devlin et al. 2019)"),
    "gpt2-xl": (1_557_611_200, "openai-community/gpt2-xl: 1.5B (Radford et al. 2019)"),
    "mistral-7b": (7_241_732_096, "mistralai/Mistral-7B-v0.1: 7.24B (Jiang et al. 2023)"),
    "llama3-8b": (8_030_261_248, "meta-llama/Meta-Llama-3-8B model card: 8.03B"),
    "llama3-70b": (70_553_706_496, "meta-llama/Meta-Llama-3-70B model card: 70.6B"),
    "llama3-405b": (405_853_388_800, "meta-llama/Llama-3.1-405B model card: 405.9B"),
}
PRESET_MODELS = tuple(k for k in models.MODELS if k in models.TRANSFORMERS)


# ---- Names -------------------------------------------------------------------------------------


def normalize_name(text: str) -> str:
    """Case, spaces, hyphens, underscores and dots do not matter: Llama 3 8B = llama-3-8b."""
    return "".join(c for c in str(text).lower() if c not in " -_.")


def resolve_model(name, keys: tuple[str, ...] = models.MODELS) -> str:
    """A model key from its key or label, in any case and spelling, or an unambiguous prefix."""
    if not isinstance(name, str) or not name.strip():
        raise ParamError("model", "must be a model name")
    names = {}
    for k in keys:
        label = models.TRANSFORMERS[k][0] if k in models.TRANSFORMERS else models.get(k).label
        names[normalize_name(k)] = k
        names[normalize_name(label)] = k
    key = normalize_name(name)
    if key in names:
        return names[key]
    hits = sorted({k for n, k in names.items() if n.startswith(key)})
    if len(hits) == 1:
        return hits[0]
    choices = ", ".join(keys)
    if hits:
        raise ParamError("model", f"{name!r} is ambiguous: it could be {', '.join(hits)}")
    raise ParamError("model", f"unknown model {name!r}: choose one of {choices}")


def model_label(key: str) -> str:
    return models.TRANSFORMERS[key][0] if key in models.TRANSFORMERS else models.get(key).label


# ---- Models ------------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def uniform_stack(params: int) -> Model:
    """A custom parameter count as L identical layers (12·L·d² = P, d = 128·L), for the overlap.

    Each layer holds attention (QKV 3/12, output 1/12) and MLP (4/12 twice) tensors, FLOPs 2 per
    parameter per token; the parameters sum to exactly `params`.
    """
    layers = max(1, round((params / (12 * ASPECT**2)) ** (1 / 3)))
    shares = (("attn.qkv", 3), ("attn.out", 1), ("mlp.fc", 4), ("mlp.proj", 4))
    out, left = [], params
    for i in range(layers):
        size = left // (layers - i)
        left -= size
        parts, rest = [], size
        for j, (name, twelfths) in enumerate(shares):
            n = rest if j == len(shares) - 1 else size * twelfths // 12
            rest -= n
            parts.append((f"layers.{i}.{name}.weight", n))
        out.append(Layer(f"layers.{i}", tuple(parts), 2.0 * size * CUSTOM_SEQUENCE))
    d = ASPECT * layers
    sample = f"a sequence of {CUSTOM_SEQUENCE:,} tokens"
    source = f"custom: {layers} identical transformer layers about {d:,} wide (GPT-3's shape)"
    return Model("custom", "custom", sample, CUSTOM_SEQUENCE, tuple(out), source)


def model_for(model, params) -> Model:
    """A preset (by any spelling of its name) or, when model is None or "custom", a stack."""
    if model is None or (isinstance(model, str) and normalize_name(model) == "custom"):
        # the count's range is api.calc's spec's; a custom model without one is refused here
        return uniform_stack(int(round(number("params", params))))
    key = resolve_model(model)
    if key not in models.TRANSFORMERS:
        raise ParamError(
            "model",
            f"{model_label(key)} is not a transformer: the 6·P·T rule for its compute does not "
            "hold (stage 7 treats it with its layer FLOPs)",
        )
    return models.get(key)


# ---- The cluster -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    gpus: int
    gpus_per_node: int
    gpu: hardware.GPU
    nic_GBps: float  # per direction per card
    intra_latency_us: float = 0.0
    inter_latency_us: float = 0.0
    nccl_version: str = nccl.NCCL_VERSION  # the release whose model picks (algorithm "nccl")
    gpus_per_process: int = 1  # GPUs one process drives (all_reduce_perf -g): NCCL's launches

    @property
    def servers(self) -> int:
        return self.gpus // self.gpus_per_node

    def intra_rate(self, algorithm: str) -> float:
        """What an algorithm gets inside a server, GB/s per GPU per direction.

        On a switch (NVSwitch) any pair gets the full rate. On a mesh (MI300X) a single ring, and
        each edge of a tree, uses one point-to-point link: 64 GB/s. Multi-ring and hierarchical
        can lay several rings over distinct links at once, modelled as all links busy (up to
        7 × 64 = 448 GB/s): an upper bound.
        """
        if self.gpu.fabric == "mesh" and algorithm in ("ring", "tree"):
            return self.gpu.peer_GBps
        return self.gpu.link_GBps

    def topology(self, algorithm: str, gpus: int | None = None) -> Topology:
        return _topology(self, algorithm, self.gpus if gpus is None else gpus)


@lru_cache(maxsize=256)
def _topology(c: Cluster, algorithm: str, n: int) -> Topology:
    """Made once per cluster, algorithm and size: a share curve asks for each a hundred times."""
    return Topology.make(
        n,
        min(c.gpus_per_node, n),
        c.intra_rate(algorithm),
        c.nic_GBps,
        c.intra_latency_us,
        c.inter_latency_us,
        max_gpus=MAX_GPUS,
    )


def allreduce(cluster: Cluster, algorithm: str, nbytes: float, gpus: int | None = None) -> dict:
    """cost.py's closed form on this cluster; "auto" is the fastest of the four; "nccl" is NCCL's
    own choice and the performance layer's time for it (nccl/, performance/), which ignores the
    latencies entered here."""
    if algorithm == "nccl" or algorithm in NCCL_FORCED:
        n = cluster.gpus if gpus is None else gpus
        return _nccl(cluster, nbytes, n, algorithm)
    if algorithm == "auto":
        options = [allreduce(cluster, a, nbytes, gpus) for a in CANDIDATES]
        return min(options, key=lambda r: r["time_s"])
    topo = cluster.topology(algorithm, gpus)
    if topo.gpus == 1 or nbytes <= 0:
        t = 0.0
    elif algorithm == "tree":
        t = cost.tree_time_fast(topo, nbytes)
    else:
        t = cost.cost(algorithm, topo, nbytes)["time_s"]
    algbw = nbytes / t / 1e9 if t > 0 else None
    n = topo.gpus
    return {
        "algorithm": algorithm,
        "time_s": t,
        "algbw_GBps": algbw,
        "busbw_GBps": None if algbw is None else algbw * ALLREDUCE.busbw_factor(n),
    }


def _nccl(c: Cluster, nbytes: float, n: int, algorithm: str = "nccl") -> dict:
    """NCCL's pick for an all-reduce of nbytes on n GPUs, one card per GPU as the page assumes
    (with "nccl-ring" / "nccl-tree", its pick among that algorithm's protocols)."""
    out = {"algorithm": algorithm, "time_s": 0.0, "algbw_GBps": None, "busbw_GBps": None}
    if n == 1 or nbytes <= 0:
        return out
    per = min(c.gpus_per_node, n)
    if c.gpu.name not in nccl.GPU_SPECS:
        raise ParamError(
            "gpu",
            f"NCCL's tuning code covers NVIDIA GPUs, not {c.gpu.name}: choose another algorithm "
            f"({', '.join(CANDIDATES)})",
        )
    system = nccl.System(c.gpu.name, n, per, per, c.nic_GBps * 8, nccl_version=c.nccl_version)
    force = NCCL_FORCED.get(algorithm)
    size, per_process = max(1, round(nbytes)), min(c.gpus_per_process, per)
    pick = nccl.choose("AllReduce", size, system, algorithm=force, gpus_per_thread=per_process)
    return out | {
        "time_s": pick.time_us * 1e-6,
        "algbw_GBps": pick.algbw_GBps,
        "busbw_GBps": pick.busbw_GBps,
        "nccl_algorithm": pick.algorithm,
        "nccl_protocol": pick.protocol,
        "nccl_time_s": pick.nccl_time_us * 1e-6,
        "nccl_version": c.nccl_version,
        "nccl_band": performance.band(nccl.band_class(system, per_process), size),
    }


def lower_bound(n: int, g: int, nbytes: float, link_GBps: float, nic_GBps: float) -> dict:
    """The least time any all-reduce in which the GPUs add needs on these links, and which limit
    sets it. In-network reduction (NVLS in the NVSwitch, SHARP in the network) adds in the switch
    and beats it: each GPU then sends and receives about S, not 2(n−1)/n·S.

    Across servers: each server must send out and take in 2(N−1)/N·S through its g cards.
    Per GPU: each GPU must send 2(n−1)/n·S over its own links (Patarasuk & Yuan 2009): NVLink
    and, when there are other servers, its card. One server uses NVLink alone.
    """
    nodes = n // g
    across = 2 * (nodes - 1) / nodes * nbytes / (g * nic_GBps * 1e9) if nodes > 1 else 0.0
    per_gpu_rate = link_GBps + (nic_GBps if nodes > 1 else 0.0)
    per_gpu = 2 * (n - 1) / n * nbytes / (per_gpu_rate * 1e9)
    limit = "the network cards, across servers" if across > per_gpu else "each GPU's own links"
    return {
        "time_s": max(across, per_gpu),
        "across_s": across,
        "per_gpu_s": per_gpu,
        "limit": limit,
    }


def compute_s(params: float, tokens: float, peak_tflops: float, mfu: float) -> float:
    """Forward and backward of a dense transformer: 6·P·T FLOPs at peak × MFU (Kaplan 2020).

    Assumed: attention's score and value products left out (Kaplan Table 1 lists them apart:
    +13 % for Llama 3 8B at 8,192 tokens); the embeddings counted in P; no recomputation."""
    return 6.0 * params * tokens / (peak_tflops * 1e12 * mfu)


def overlap(
    model: Model, cluster: Cluster, algorithm: str, grad_bytes: int, backward_s: float
) -> dict:
    """DDP's buckets (PyTorch defaults: 25 MiB, first 1 MiB) against a backward pass of
    `backward_s`, shared out over the layers in proportion to their FLOPs (ddp.py's engine).

    The engine times each layer at 2 × forward FLOPs × samples; here the samples per GPU are
    tokens / sequence length, and the layer times are scaled so that they add up to the
    backward's 2/3 of the 6·P·T compute time: one compute figure for both shares.
    """
    ready = _readiness(model, grad_bytes, backward_s)
    took = {b: allreduce(cluster, algorithm, float(b))["time_s"] for b in ready["sizes"]}
    end, busy = ddp.comm_end(ready, took.__getitem__)
    return {
        "backward_s": ready["backward_s"],
        "exposed_s": max(0.0, end - ready["backward_s"]),
        "buckets": len(ready["buckets"]),
        "allreduce_total_s": busy,
    }


@lru_cache(maxsize=8)
def _readiness(model: Model, grad_bytes: int, backward_s: float) -> dict:
    """The buckets and when each is ready: the same for every cluster, so share_curve's GPU
    counts (and a reader's network changes) reuse them. Read only: it is shared."""
    tensors = model.tensors()
    sizes = [e * grad_bytes for _, e, _ in tensors]
    flops = [layer.flops for layer in model.layers]
    total = sum(flops)
    back = [backward_s * f / total for f in flops] if total else [0.0] * len(flops)
    ready = ddp.readiness(back, [i for *_, i in tensors], sizes, ddp.buckets(sizes))
    return {**ready, "sizes": frozenset(b for b, _, _ in ready["buckets"])}


# ---- The calculator's front door ----------------------------------------------------------------


def _gpu(gpu, link_GBps, peak_tflops, memory_gb) -> hardware.GPU:
    """A preset GPU, or a custom one (NVSwitch-like: the full rate between any pair)."""
    if gpu is not None and normalize_name(gpu) != "custom":
        return hardware.find(hardware.GPUS, gpu, "gpu")
    link = _bounded("link_GBps", link_GBps, 1e5)
    peak = _bounded("peak_tflops", peak_tflops, 1e6)
    mem = _bounded("memory_gb", memory_gb, 1e5)
    return hardware.GPU("custom", link, "switch", link, peak, 8, "your figures", mem)


def _bounded(field: str, value, hi: float) -> float:
    v = positive(field, value)
    if v > hi:
        raise ParamError(field, f"must be at most {hi:,.0f}")
    return v


def cluster_for(
    gpu=hardware.H100_SXM.name,
    gpus=64,
    gpus_per_node=None,
    nic_Gbps=hardware.NIC_400G_Gbps,
    link_GBps=None,
    peak_tflops=None,
    memory_gb=None,
    intra_latency_us=0.0,
    inter_latency_us=0.0,
    nccl_version=nccl.NCCL_VERSION,
    gpus_per_process=1,
) -> Cluster:
    """Validated cluster: nic_Gbps is the card's line rate in gigabits per second, as sold;
    gpus_per_process, the GPUs one process drives (all_reduce_perf's -g), at most a server's."""
    g = _gpu(gpu, link_GBps, peak_tflops, memory_gb)
    n = count("gpus", gpus, 1, MAX_GPUS)
    per = g.gpus_per_node if gpus_per_node is None else gpus_per_node
    per = min(count("gpus_per_node", per, 1, MAX_GPUS_PER_NODE), n)
    if n % per:
        raise ParamError("gpus", f"{n} GPUs do not fill servers of {per}: use a multiple of {per}")
    nic = _bounded("nic_Gbps", nic_Gbps, 1e6) / 8
    lat = [nonnegative(f, v) for f, v in (("intra_latency_us", intra_latency_us),
                                          ("inter_latency_us", inter_latency_us))]  # fmt: skip
    for f, v in zip(("intra_latency_us", "inter_latency_us"), lat, strict=True):
        if v > 1e6:
            raise ParamError(f, "must be at most 1,000,000 µs")
    nccl.release(nccl_version)  # a ParamError naming nccl_version
    g_proc = count("gpus_per_process", gpus_per_process, 1, MAX_GPUS_PER_NODE)
    if g_proc > per:
        raise ParamError(
            "gpus_per_process", f"one process drives GPUs of one server: at most {per}"
        )
    return Cluster(n, per, g, nic, lat[0], lat[1], nccl_version, g_proc)


@dataclass(frozen=True)
class Calculation:
    """calc's JSON (`figures`) and the Cluster and Model it was worked out on: the page draws
    its share curve and the log's comparison on them without building them again."""

    figures: dict
    cluster: Cluster
    model: Model


def calc(*args, **kwargs) -> dict:
    """Everything the page and `allreduce-explainer calc` report, JSON-able (calculate's
    figures; its arguments)."""
    return calculate(*args, **kwargs).figures


def calculate(
    model=None,
    params=models.EXAMPLE_PARAMS,
    grad_dtype="bf16",
    algorithm=DEFAULT_ALGORITHM,
    tokens_per_gpu=DEFAULT_TOKENS,
    mfu=DEFAULT_MFU,
    overlap_too=True,
    nccl_fallback=False,
    **cluster,
) -> Calculation:
    """calc, with the Cluster and Model. With `nccl_fallback`, NCCL's choice (or a forced NCCL
    algorithm) on a GPU NCCL's model does not cover becomes the closed form fastest for the
    whole gradient, as the page has it (`algorithm_asked` names it); without, it is refused, as
    the CLI has it."""
    m = model_for(model, params)
    c = cluster_for(**cluster)
    tokens, u = float(tokens_per_gpu), float(mfu)
    p = m.params
    s = float(p * GRAD_BYTES[grad_dtype])
    nccl_family = algorithm == "nccl" or algorithm in NCCL_FORCED
    if nccl_fallback and nccl_family and c.gpu.name not in nccl.GPU_SPECS:
        algorithm = allreduce(c, "auto", s)["algorithm"]
    r = allreduce(c, algorithm, s)
    bound = lower_bound(c.gpus, c.gpus_per_node, s, c.gpu.link_GBps, c.nic_GBps)
    comp = compute_s(p, tokens, c.gpu.peak_bf16_tflops, u)
    a = r["time_s"]
    out = {
        "model": m.key,
        "model_label": model_label(m.key) if m.key != "custom" else "custom",
        "params": p,
        "params_source": PUBLISHED[m.key][1] if m.key in PUBLISHED else m.source,
        "grad_dtype": grad_dtype,
        "gradient_bytes": s,
        "gpus": c.gpus,
        "gpus_per_node": c.gpus_per_node,
        "servers": c.servers,
        "gpu": c.gpu.name,
        "fabric": c.gpu.fabric,
        "intra_GBps_used": c.intra_rate(r["algorithm"]),
        "nic_GBps": c.nic_GBps,
        "algorithm": r["algorithm"],
        "algorithm_asked": algorithm,
        "allreduce_s": a,
        "algbw_GBps": r["algbw_GBps"],
        "busbw_GBps": r["busbw_GBps"],
        "lower_bound_s": bound["time_s"],
        "lower_bound_limit": bound["limit"],
        "compute_s": comp,
        "tokens_per_gpu": tokens,
        "samples_per_gpu": tokens / m.tokens,
        "sample": m.sample,
        "mfu": u,
        "peak_tflops": c.gpu.peak_bf16_tflops,
        "share_no_overlap": a / (comp + a) if comp + a > 0 else 0.0,
        "memory": memory(p, c),
        "times_s": {k: allreduce(c, k, s)["time_s"] for k in CANDIDATES},
    } | {k: v for k, v in r.items() if k.startswith("nccl_")}
    if overlap_too:
        which = r["algorithm"] if algorithm != "auto" else "auto"
        o = overlap(m, c, which, GRAD_BYTES[grad_dtype], BACKWARD_SHARE * comp)
        out["backward_s"] = o["backward_s"]
        out["exposed_s"] = o["exposed_s"]
        out["buckets"] = o["buckets"]
        out["share_with_overlap"] = o["exposed_s"] / (comp + o["exposed_s"])
    return Calculation(out, c, m)


def _timed_by(r) -> object:
    """The source of the all-reduce's time: NCCL's choice (or forced algorithm) is the fitted
    time, a closed form at line rate the whiteboard model."""
    return FITTED if "nccl_algorithm" in r else WHITEBOARD


# What calc's answer holds: each field's kind, its label on every door, a time's source and the
# band of its prediction. The page's readouts, `calc`'s human view and the notebook read these.
RECORD = Record(
    "calc",
    (
        Quantity("allreduce_s", TIME, "all-reduce per step", _timed_by, band="nccl_band"),
        Quantity("share_no_overlap", SHARE, "share of the step, no overlap"),
        Quantity("share_with_overlap", SHARE, "share with DDP's bucketed overlap"),
        Quantity("nccl_time_s", TIME, ESTIMATE.name, ESTIMATE),
        Quantity("algbw_GBps", RATE, "algbw"),
        Quantity("busbw_GBps", RATE, "bus bandwidth"),
        Quantity("gradient_bytes", BYTES, "bytes reduced: the gradient"),
        Quantity("lower_bound_s", TIME, "lower bound"),
        Quantity("compute_s", TIME, "compute per step (6·P·T)"),  # compute_s's rule
        Quantity("backward_s", TIME, "backward pass"),
        Quantity("exposed_s", TIME, "all-reduce exposed with DDP's overlap", _timed_by),
        Quantity("buckets", COUNT, "DDP buckets"),
        Quantity("tokens_per_gpu", COUNT, "tokens per GPU per step"),
        Quantity("mfu", SHARE, "MFU"),
        Quantity("nic_GBps", CARD, "network card per GPU"),
        Quantity("intra_GBps_used", RATE, "link inside a server"),
        Quantity("params", COUNT, "parameters"),
        Quantity("algorithm_times_s", TIME, "all-reduce per step", WHITEBOARD),
    ),
)


def memory(params: int, c: Cluster) -> dict:
    """Plain DDP keeps everything on every GPU; ZeRO-3 / FSDP shard it over the n GPUs (memory.py,
    the ZeRO paper's formulas). The GPU's memory as sold ("80 GB") is GiB (hardware.GIB)."""
    need = model_states("ddp", params, c.gpus, c.gpus_per_node)
    sharded = model_states("zero3", params, c.gpus, c.gpus_per_node)
    have = c.gpu.memory_gb * hardware.GIB
    return {
        "bytes_per_gpu": need,
        "gpu_bytes": have,
        "fits": need <= have,
        "sharded_bytes_per_gpu": sharded,
        "sharded_fits": sharded <= have,
    }


def share_curve(model: Model, grad_dtype: str, algorithm: str, c: Cluster, comp: float) -> list:
    """(GPUs, all-reduce s, exposed s) at powers of two below a server and servers × 2^k."""
    g = c.gpus_per_node
    xs = sorted(
        {2**k for k in range(1, 13) if 2**k < g}
        | {g * 2**k for k in range(0, 13) if g * 2**k <= MAX_GPUS}
        | {c.gpus}
    )
    s = float(model.params * GRAD_BYTES[grad_dtype])
    out = []
    for x in xs:
        if x < 2:
            continue
        sub = replace(c, gpus=x, gpus_per_node=min(g, x))
        a = allreduce(sub, algorithm, s)
        o = overlap(model, sub, algorithm, GRAD_BYTES[grad_dtype], BACKWARD_SHARE * comp)
        out.append((x, a["time_s"], o["exposed_s"], a["algorithm"]))
    return out


# What each preset of `presets` holds (records.py): a model's size, a GPU's figures (its memory
# in GiB, sold as "GB"), a network card's rate.
PRESET_MODEL = Record("preset model", (Quantity("params", COUNT, "parameters"),))
PRESET_GPU = Record("preset GPU", (
    Quantity("link_gbps", RATE, "NVLink"),  # GB/s per direction, despite the key's "gbps"
    Quantity("peak_bf16_tflops", COMPUTE, "BF16"),
    Quantity("memory_gb", MEMORY, "memory", scale=hardware.GIB),
    Quantity("gpus_per_node", COUNT, "per server"),
))  # fmt: skip
PRESET_NETWORK = Record("preset card", (Quantity("GBps", RATE, "rate"),))


def presets() -> dict:
    """The calculator's choices with their sources (`allreduce-explainer presets`)."""
    return {
        "models": [
            {
                "name": model_label(k),
                "key": k,
                "params": models.get(k).params,
                "published": PUBLISHED[k][0],
                "source": f"{PUBLISHED[k][1]}; computed from the configuration "
                f"({models.get(k).source})",
            }
            for k in PRESET_MODELS
        ],
        "gpus": [g.to_json() for g in hardware.GPUS],
        "networks": [
            {
                "name": n["name"],
                "gbits": float(n["name"].split()[0]),
                "GBps": n["GBps"],
                "source": n["source"],
            }  # fmt: skip
            for n in hardware.NETWORKS
        ],
    }
