"""Your cluster. The calculator (training/calculator.py) and a pasted `all_reduce_perf` log
(logs/explain.py; drawn by logview.py) in one widget, so that the fitted lines, the measured
points and the calculator's assumption share one set of parameters and the fit can be applied to
it. This module is the calculator's view and the widget. The default is NCCL's own model
(algorithm "nccl"); the teaching closed forms at line rate and the lower bound are its references.

Presets and custom values: each of model, GPU and network is a select with a "custom" choice and
number fields beside it. The select decides: a preset writes its figures into the fields (so they
show what is used), "custom" uses the fields as they are, starting from the last preset's.
"""

from __future__ import annotations

import math

from .. import api, fmt, nccl, records
from ..catalog import hardware, measured, models
from ..errors import ParamError
from ..logs import examples, ncclfit
from ..palette import SERIES
from ..params import Param, api_args, narrowed, spec, validated
from ..performance import bands, fitted
from ..sources import ESTIMATE, FITTED
from ..training import calculator, memory
from . import Widget, logview, views
from . import figures as fig
from .common import grad_dtype
from .logview import pct

H100 = hardware.H100_SXM
GRAD_BYTES = calculator.GRAD_BYTES
ALGORITHM_TEXT = {
    "nccl": "NCCL's choice (its fitted time)",
    "nccl-ring": "NCCL's Ring, forced (NCCL_ALGO=Ring)",
    "nccl-tree": "NCCL's Tree, forced (NCCL_ALGO=Tree)",
    "ring": "single ring at line rate (the first page's)",
    "multi-ring": "one ring per card at line rate",
    "tree": "teaching tree at line rate (not NCCL's tree)",
    "hierarchical": "hierarchical (Horovod) at line rate",
    "auto": "the fastest line-rate closed form",
}
assert set(ALGORITHM_TEXT) == set(calculator.ALGORITHMS)
# The menu leads with the three a reader compares (NCCL's choice, page 2's ring, one ring per
# card); the others are under "more models", every value kept, so an old link still works.
MENU = ("nccl", "ring", "multi-ring")
MORE_MODELS = tuple(a for a in ALGORITHM_TEXT if a not in MENU)
# the teaching closed forms, by their short names, in the "at line rate" readout
IDEAL_TEXT = {
    "ring": "single ring",
    "multi-ring": "one ring per card",
    "tree": "teaching tree",
    "hierarchical": "hierarchical",
}
# Presets by their canonical names; "custom" uses the number boxes beside the select. Every
# parameter the calculator takes narrows api.CALC's (the page's ranges, labels and menus); the
# network select, the log and the debug drawing are the page's own.
CALC = api.CALC
SPEC = spec(
    narrowed(CALC["model"], default="custom", optional=False, label="Model", choices=(
        ("custom", "custom: the parameter count"),
        *((k, calculator.model_label(k)) for k in calculator.PRESET_MODELS))),
    narrowed(CALC["params"], default=int(models.EXAMPLE_PARAMS), optional=False,
             label="Parameters (custom)", lo=int(calculator.MIN_PARAMS)),
    grad_dtype("bf16", "bf16", "fp32"),
    narrowed(CALC["gpu"], label="GPU", choices=(
        *((g.name, g.name) for g in hardware.GPUS), ("custom", "custom: the figures beside"))),
    narrowed(CALC["link_GBps"], "link_gbps", default=H100.link_GBps, optional=False,
             label="Link inside a server (GB/s per direction)", lo=0.001, hi=100000),
    narrowed(CALC["peak_tflops"], default=H100.peak_bf16_tflops, optional=False,
             label="Dense BF16 peak (TFLOP/s)", lo=0.001, hi=1000000),
    narrowed(CALC["memory_gb"], default=H100.memory_gb, optional=False,
             label="Memory (GiB, sold as GB)", lo=0.001, hi=100000),
    narrowed(CALC["gpus"], label="GPUs (n)", nudge=(8, "8 GPUs")),
    narrowed(CALC["gpus_per_node"], default=8, optional=False, label="GPUs per server (g)"),
    narrowed(CALC["gpus_per_process"], label="GPUs each process drives (all_reduce_perf -g)"),
    Param("network", hardware.NIC_400G["name"], "name", "Network card per GPU", choices=(
        *((n["name"], n["name"]) for n in hardware.NETWORKS),
        ("custom", "custom: the rate beside"))),
    narrowed(CALC["nic_Gbps"], "nic_gbps", label="Card rate (Gb/s, bits)", lo=0.001,
             hi=1000000),
    narrowed(CALC["algorithm"], label="Algorithm",
             choices=tuple((a, ALGORITHM_TEXT[a]) for a in (*MENU, *MORE_MODELS)),
             more=("more models", MORE_MODELS)),
    narrowed(CALC["nccl_version"], label="NCCL release (its tuning code picks)"),
    narrowed(CALC["tokens_per_gpu"], label="Tokens per GPU per step", lo=1),
    narrowed(CALC["mfu"], label="MFU (share of peak)", lo=0.01),
    narrowed(CALC["intra_latency_us"], label="Latency per message in a server (µs)",
             hi=1000000),
    narrowed(CALC["inter_latency_us"], label="Latency per message between servers (µs)",
             hi=1000000),
    Param("example", "", "choice", "Load an example (a published run)", choices=(
        ("", "none: paste or open a log"),
        *((k, e.label) for k, e in examples.EXAMPLES.items()))),
    narrowed(api.NCCL_TESTS["log"], label="", default="", optional=True),
    # an opened file's text: held in a hidden text box, never drawn in the one above
    Param("log_file", "", "text", optional=True),
    Param("log_gpus", None, "int", "GPUs in the run (if the log does not say)", 1, 65536,
          optional=True),
    Param("run", 1, "int", "Run in the file", 1, 100000),
    # a NCCL_DEBUG=INFO log's drawing (widgets/debugview.py): which channel, its ring or tree
    Param("debug_channel", 0, "int", "Channel drawn", 0, 63),
    Param("debug_view", "ring", "choice", "Draw the channel's", choices=(
        ("ring", "ring"), ("tree", "tree"))),
)  # fmt: skip


# Each model once, and the closed forms' fastest ("auto", which times the teaching tree too) on
# the default servers of 8: the tree's layouts for the share curve's GPU counts up to 4,096 take
# a few hundred ms in the browser the first time. Made by this page's worker once Python is
# ready (the record's `warm`), not before the snapshot: the models' layers they keep were
# 350 kB of the snapshot every page downloads (Brotli, bench/RESULTS.md).
FIRST_CALLS = tuple({"model": key} for key in calculator.PRESET_MODELS) + ({"algorithm": "auto"},)


def _custom(p: dict, field: str, what: str) -> bool:
    """Whether `field` names "custom" (the reader's own figures) rather than a preset."""
    if not isinstance(p[field], str):
        raise ParamError(field, f"must be {what}")
    return calculator.normalize_name(p[field]) == "custom"


def _choose(p: dict) -> dict:
    """Apply the select-decides rule; the names are normalised to the presets' spellings."""
    out = dict(p)
    if _custom(p, "model", "a model name"):
        out["model"] = "custom"
    else:
        key = calculator.resolve_model(p["model"], calculator.PRESET_MODELS)
        out["model"], out["params"] = key, calculator.models.get(key).params
    if _custom(p, "gpu", "a GPU name"):
        out["gpu"] = "custom"
    else:
        g = hardware.find(hardware.GPUS, p["gpu"], "gpu")
        out.update(gpu=g.name, link_gbps=g.link_GBps, peak_tflops=g.peak_bf16_tflops)
        out["memory_gb"] = g.memory_gb
    if _custom(p, "network", "a network card"):
        out["network"] = "custom"
    else:
        nic = hardware.find(hardware.NETWORKS, p["network"], "network")
        out.update(network=nic["name"], nic_gbps=nic["GBps"] * 8)
    return out


def _calc(p: dict) -> calculator.Calculation:
    """The calculator on the page's parameters. NCCL's tuning code covers NVIDIA GPUs only, so on
    the MI300X or a custom GPU NCCL's choice falls back to the closed form fastest for the whole
    gradient (the readout says so; one algorithm, so the buckets are not timed four times); the
    CLI refuses instead."""
    per_process = min(p["gpus_per_process"], p["gpus_per_node"])
    args = api_args(p, SPEC, CALC) | {"gpus_per_process": per_process}
    return calculator.calculate(**args, nccl_fallback=True)


def cluster(params=None) -> dict:
    """The calculator's outputs, the share against GPU count, and the pasted log against both."""
    p = logview.with_example(_choose(validated(params, SPEC)))
    done = _calc(p)
    r, c = done.figures, done.cluster
    p.update(gpus=r["gpus"], params=r["params"])
    curve = calculator.share_curve(
        done.model, p["grad_dtype"], r["algorithm_asked"], c, r["compute_s"]
    )
    log = logview.read(p, c)
    data = {"result": {k: v for k, v in r.items() if k != "memory"}}
    if log and log["fit"] and log["apply"]:
        data["fit_apply"] = log["apply"]  # what logpanel.js's "use the fitted figures" applies
    if log and log.get("topology_apply"):
        data["topology_apply"] = log["topology_apply"]  # logpanel.js's "use this topology"
    if log and log.get("debug"):
        data["debug"] = log["debug"]  # the ring or tree logpanel.js draws
    return views.chart(
        params=views.unchanged_left_out(p, params, ("log_file",)),
        main=_share_figure(curve, r),  # the share against GPU count
        figures=logview.figures(log, r, ALGORITHM_TEXT[r["algorithm_asked"]]),
        readouts={**_readouts(r, p), **logview.readouts(log)},
        data=data,
    )


# ---- Readouts ----------------------------------------------------------------------------------


def _readouts(r: dict, p: dict) -> dict:
    mem = r["memory"]
    have = gib(mem["gpu_bytes"])
    fits = (
        f"yes: {gib(mem['bytes_per_gpu'])} of {have}"
        if mem["fits"]
        else f"no: {gib(mem['bytes_per_gpu'])} needed, {have} "
        f"on the GPU; sharded over {r['gpus']} GPUs (ZeRO-3 / FSDP) "
        f"{gib(mem['sharded_bytes_per_gpu'])} each"
        + ("" if mem["sharded_fits"] else ", still too much")
    )
    mesh = (
        f" (a mesh: one ring gets one link, {_text(r, 'intra_GBps_used')})"
        if r["fabric"] == "mesh" and r["algorithm"] in ("ring", "tree")
        else ""
    )
    return {
        "params": f"{r['params']:,} ({r['params_source']})",
        "params_words": _in_words(r["params"]),
        "gradient": f"{_text(r, 'gradient_bytes')} ({r['grad_dtype'].upper()})",
        "cluster": f"{r['gpus']} × {r['gpu']} in {r['servers']} server"
        + ("s" if r["servers"] > 1 else "")
        + f", {_text(r, 'nic_GBps')} per card{mesh}",
        "allreduce": _text(r, "allreduce_s"),
        "algorithm": _algorithm_text(r, p),
        "busbw": "—"
        if r["busbw_GBps"] is None
        else f"{_text(r, 'busbw_GBps')} (algbw {_text(r, 'algbw_GBps')})",
        "band": bands.sentence(r["nccl_band"]) if "nccl_band" in r else NO_BAND,
        "ideal": _ideal(r["times_s"]),
        "bound": f"{_text(r, 'lower_bound_s')}, set by {r['lower_bound_limit']} "
        "(when the GPUs add; NVLink SHARP and InfiniBand SHARP add in the switch and can beat it)",
        "compute": f"{_text(r, 'compute_s')} ({fmt.sig(r['samples_per_gpu'], 3)} × "
        f"{r['sample']} per GPU at {fmt.sig(100 * r['mfu'], 3)} % of "
        f"{fmt.sig(r['peak_tflops'], 4)} TFLOP/s; attention's score FLOPs left out, "
        "embeddings counted, no recomputation)",
        "share_no_overlap": _text(r, "share_no_overlap"),
        "share_with_overlap": _text(r, "share_with_overlap"),
        "exposed": f"{_text(r, 'exposed_s')} after {_text(r, 'buckets')} buckets",
        "memory": fits,
    }


def _ideal(times: dict[str, float]) -> str:
    """The closed forms' times, fastest first, in one unit (a readout is a block)."""
    unit = records.time_unit(times.values())
    ordered = sorted(times.items(), key=lambda kv: kv[1])
    return "; ".join(f"{IDEAL_TEXT[k]} {records.in_unit(v, unit)} {unit}" for k, v in ordered)


def _text(r: dict, key: str) -> str:
    """A readout's figure: the calculator's record formats it, as the CLI's view does."""
    return records.text(calculator.RECORD, r, key)


NO_BAND = "the teaching models are line-rate closed forms, not fitted on published runs"


gib = records.gib  # memory on a GPU, in GiB (the unit it is sold in as "GB"), on every door


def _in_words(p: float) -> str:
    """A parameter count that a narrow box cannot hide: 7,000,000,000 = 7 billion."""
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if p >= scale:
            return f"= {fmt.sig(p / scale, 4)} {word} parameters"
    return f"= {p:,.0f} parameters"


def _algorithm_text(r: dict, p: dict) -> str:
    """What ran: NCCL's pick (algorithm and protocol) or a teaching closed form."""
    text = ALGORITHM_TEXT[r["algorithm"]]
    if r["algorithm_asked"] != p["algorithm"]:
        return (
            f"{IDEAL_TEXT[r['algorithm']]} at line rate, the fastest closed form here: "
            f"NCCL's tuning code covers NVIDIA GPUs, not {r['gpu']}"
        )
    if "nccl_algorithm" not in r:
        return text
    return (
        f"{text}: {r['nccl_algorithm']} with the {r['nccl_protocol']} protocol (NCCL "
        f"{r['nccl_version']}'s choice; {FITTED.name}, {ESTIMATE.name} "
        f"{_text(r, 'nccl_time_s')})"
    )


# ---- Share against GPU count ---------------------------------------------------------------


def _share_figure(curve: list, r: dict) -> views.Part:
    comp = r["compute_s"]
    xs = [x for x, *_ in curve]
    no = [100 * a / (comp + a) for _, a, _, _ in curve]
    yes = [100 * e / (comp + e) for _, _, e, _ in curve]
    n = r["gpus"]
    data = [
        _series("no overlap", xs, no, SERIES["ring"], "solid", "circle"),
        _series("with DDP's overlap", xs, yes, SERIES["tree"], FITTED.dash, "diamond"),
        fig.you_are_here(
            f"{n} GPUs", n, [100 * r["share_no_overlap"], 100 * r["share_with_overlap"]]
        ),
    ]
    layout = fig.layout(
        fig.log_axis("GPUs", (1.5, calculator.MAX_GPUS * 1.4)),
        # a log axis that fits the lines: shares near 4 % and near 0.2 % (the defaults) both
        # read off it (on 0 to 100 % they lay flat along the bottom); up to the power of ten
        # above the top one, so that the highest share lies between two labels
        fig.log_axis("all-reduce share of a step (%)", _share_ends(no + yes)),
    )
    return views.part(
        figure={"data": data, "layout": layout},
        summary=(
            f"At {n} GPUs the all-reduce takes {_text(r, 'share_no_overlap')} of a step if it "
            f"waits for the backward pass and {_text(r, 'share_with_overlap')} with DDP's "
            "buckets overlapping it; the tokens per GPU stay fixed as GPUs are added."
        ),
        table=dict(zip(("columns", "rows"), records.columns(SHARE_COLUMNS(comp), curve, " "))),
    )


def SHARE_COLUMNS(comp: float) -> list[records.Column]:
    """The share curve's table: a time column in one unit, named in its head."""
    return [
        records.Column("GPUs", records.AS_IS, lambda row: row[0]),
        records.Column("all-reduce", records.TIME, lambda row: row[1]),
        records.Column("algorithm", records.AS_IS, lambda row: row[3]),
        records.Column("exposed", records.TIME, lambda row: row[2]),
        records.Column("share", records.SHARE, lambda row: row[1] / (comp + row[1])),
        records.Column("with overlap", records.SHARE, lambda row: row[2] / (comp + row[2])),
    ]


def _share_ends(shares: list[float]) -> tuple[float, float]:
    """The share axis's ends (per cent): just under the smallest share, and the power of ten
    above the largest, so that its few per cent lie between two labels (1 and 10)."""
    lo, hi = fig.around(shares)
    return lo, 10 ** math.ceil(math.log10(max(hi, 1e-9)))


def _series(name, x, y, colour, dash, symbol) -> dict:
    marker = {"symbol": symbol, "size": 6}
    return fig.line(name, x, y, colour, dash, 2, marker, "%{x} GPUs: %{y:.3g} %")


RECORDS = (
    Widget(
        "cluster",
        cluster,
        SPEC,
        views.CHART,
        warm=FIRST_CALLS,
        result=calculator.RECORD,
        # the answer: the all-reduce's time per step and its share of the step
        headline=(
            ("allreduce", calculator.RECORD.label("allreduce_s")),
            ("share_no_overlap", calculator.RECORD.label("share_no_overlap")),
            ("share_with_overlap", calculator.RECORD.label("share_with_overlap")),
        ),
        readouts={
            # then why: how the gradient is moved, and how many bytes
            "why": (
                ("algorithm", "algorithm and protocol"),
                ("busbw", calculator.RECORD.label("busbw_GBps")),
                ("band", "how close published runs come"),
                ("gradient", calculator.RECORD.label("gradient_bytes")),
                ("cluster", "cluster"),
            ),
            # then the rest of the step: what the time is a share of, what fits
            "step": (
                ("compute", calculator.RECORD.label("compute_s")),
                ("exposed", calculator.RECORD.label("exposed_s")),
                ("params", calculator.RECORD.label("params")),
                (
                    "memory",
                    f"{memory.MODEL_STATES} (plain DDP, {memory.ADAM_BYTES_PER_PARAM} bytes per "
                    "parameter): fit?",
                ),
            ),
            # and, folded, what a model could do at best: the references
            "references": (
                ("ideal", "closed forms at line rate, no latency"),
                ("bound", calculator.RECORD.label("lower_bound_s")),
            ),
            # the pasted log's (logview.readouts), under its controls
            "log": (
                ("log_status", "read"),
                ("log_fit", "fits: alpha-beta and NCCL's regimes"),
                ("log_line_rate", "line rate of the links"),
                ("log_apply", "the NCCL fit, as calculator figures"),
                ("log_debug", "what NCCL_DEBUG=INFO says"),
                ("log_findings", "findings, each with its line of the log"),
            ),
        },
    ),
)


def facts() -> dict[str, str]:
    """Your cluster's quoted figures: the defaults (why-allreduce's case, NCCL's choice), that
    page's single ring, and a few presets."""
    r = calculator.calc()
    ring = calculator.calc(algorithm="ring")
    multi = calculator.calc(algorithm="multi-ring")
    mi = calculator.calc(gpu="MI300X", gpus=8, algorithm="ring")
    mi_multi = calculator.calc(gpu="MI300X", gpus=8, algorithm="multi-ring")
    l70 = calculator.calc(model="llama3-70b")
    one = calculator.calc(gpus=8)
    return {
        "perf_first_size": fmt.binary_bytes(ncclfit.MIN_BYTES),  # the log panel's fit starts here
        "cluster_allreduce": _text(r, "allreduce_s"),
        "cluster_estimate": _text(r, "nccl_time_s"),
        "cluster_nccl_algorithm": r["nccl_algorithm"],
        "cluster_nccl_protocol": r["nccl_protocol"],
        "cluster_busbw": f"{fmt.sig(r['busbw_GBps'], 3)} GB/s",  # the prose's precision
        "cluster_algbw": f"{fmt.sig(r['algbw_GBps'], 3)} GB/s",
        "cluster_ring": _text(ring, "allreduce_s"),
        "cluster_ring_busbw": f"{fmt.sig(ring['busbw_GBps'], 3)} GB/s",
        "cluster_ring_share": _text(ring, "share_no_overlap"),
        "cluster_bound": _text(r, "lower_bound_s"),
        "cluster_compute": _text(r, "compute_s"),
        "cluster_share": _text(r, "share_no_overlap"),
        "cluster_share_overlap": _text(r, "share_with_overlap"),
        "cluster_exposed": _text(r, "exposed_s"),
        "cluster_multi": _text(multi, "allreduce_s"),
        "cluster_memory": gib(r["memory"]["bytes_per_gpu"]),
        "cluster_h100_memory": gib(r["memory"]["gpu_bytes"]),
        "cluster_tokens": f"{calculator.DEFAULT_TOKENS:,}",
        "cluster_mfu": f"{100 * calculator.DEFAULT_MFU:g} %",
        "cluster_mi300x_ring": _text(mi, "allreduce_s"),
        "cluster_mi300x_multi": _text(mi_multi, "allreduce_s"),
        "cluster_l70_allreduce": _text(l70, "allreduce_s"),
        "cluster_l70_share": _text(l70, "share_no_overlap"),
        "cluster_l70_overlap": _text(l70, "share_with_overlap"),
        "cluster_l70_memory": gib(l70["memory"]["bytes_per_gpu"]),
        "cluster_max_gpus": f"{calculator.MAX_GPUS:,}",
        "cluster_ring_over_bound": fmt.sig(ring["allreduce_s"] / ring["lower_bound_s"], 2),
        "cluster_nccl_over_bound": fmt.sig(r["allreduce_s"] / r["lower_bound_s"], 2),
        "cluster_one_server_algorithm": one["nccl_algorithm"],
        "cluster_one_server": _text(one, "allreduce_s"),
        "cluster_one_server_bound": _text(one, "lower_bound_s"),
        "cluster_l8_samples": fmt.sig(calculator.calc(model="llama3-8b")["samples_per_gpu"], 3),
        "cluster_l8_sequence": f"{calculator.models.get('llama3-8b').tokens:,}",
        "cluster_backward": _text(r, "backward_s"),
        **_rule_facts(r),
        **_band_facts(),
        **_catalog_facts(),
    }


def _catalog_facts() -> dict[str, str]:
    """The datasheet figures the page's notes cite, from the catalog the calculator uses; and
    the attention FLOPs its 6PT count leaves out, for Llama 3 8B at its sequence length."""
    switched = [g for g in hardware.GPUS if g.fabric == "switch"]
    mesh = hardware.find(hardware.GPUS, "MI300X", "GPU")
    lines = [n["name"] for n in hardware.NETWORKS]
    c = models.TRANSFORMERS["llama3-8b"][1]
    l8 = models.get("llama3-8b")
    # causal attention's QK^T and AV: 2 x 2 x ctx x d FLOPs per token per layer, half masked,
    # against the 2P forward FLOPs of the 6PT count
    attention = 2 * c.layers * c.ctx * c.d / (2 * l8.params)
    return {
        "cluster_gpu_names": fmt.in_words([g.name for g in switched]),
        "cluster_gpu_links": fmt.in_words([f"{g.link_GBps:g}" for g in switched]) + " GB/s",
        "cluster_gpu_tflops": fmt.in_words([f"{g.peak_bf16_tflops:,g}" for g in switched])
        + " TFLOP/s",
        "cluster_gpu_memory": fmt.in_words([f"{g.memory_gb:g}" for g in switched]) + " GB",
        "cluster_mesh_links": str(mesh.gpus_per_node - 1),
        "cluster_mesh_peer": f"{mesh.peer_GBps:g} GB/s",
        "cluster_mesh_total": f"{mesh.link_GBps:g} GB/s",
        "cluster_mesh_tflops": f"{mesh.peak_bf16_tflops:,g} TFLOP/s",
        "cluster_mesh_memory": f"{mesh.memory_gb:g} GB",
        "cluster_nic_lines": fmt.in_words(lines),
        "cluster_nic_low": lines[0],
        "cluster_nic_high": lines[-1],
        "cluster_h100_sold": f"{hardware.H100_SXM.memory_gb:g} GB",
        "cluster_attention_l8": pct(attention),
    }


BAND_NAMES = ("small", "ll", "mid", "upper", "near", "large")  # performance.bands.BANDS
OWN_MID = (1 << 20, 64 << 20)  # where NCCL's own constant bandwidths are furthest from runs


RULE_SIZE = 1 << 30  # the rule of thumb holds busbw to the yardstick from this size up


def _rule_facts(r: dict) -> dict[str, str]:
    """The page's rule of thumb on the default cluster: the cards' yardstick and its floor."""
    yardstick = measured.card_yardstick_GBps(r["gpus_per_node"], r["nic_GBps"])
    return {
        "cluster_rule_size": fmt.binary_bytes(RULE_SIZE),
        "cluster_rule_yardstick": f"{fmt.sig(yardstick, 3)} GB/s",
        "cluster_rule_floor": f"{fmt.sig(measured.HEALTHY_SHARE * yardstick, 3)} GB/s",
        "cluster_rule_share": pct(measured.HEALTHY_SHARE),
    }


def own_misses(lo: float, hi: float) -> list[float]:
    """NCCL's own figure (its selection model, no performance layer) against every cited sweep
    (catalog/measured.py), as own / measured - 1, at each measured size from lo to hi bytes."""
    out = []
    for c in measured.CURVES:
        g = c.gpus_per_node
        # one server: no card in the path, any rate will do
        s = nccl.System(c.gpu, c.gpus, g, g, float(c.nic_Gbps or hardware.NIC_400G_Gbps))
        algo = None if c.algorithm == "nccl" else c.algorithm
        for size, got in c.rows:
            if lo <= size <= hi:
                pick = nccl.choose("AllReduce", size, s, algorithm=algo)
                out.append(pick.nccl_busbw_GBps / got - 1)
    return out


def _band_facts() -> dict[str, str]:
    """The performance layer's validation for the class of the calculator's default cluster
    (each cluster of its runs predicted by the fit on the others), per size band, and how far
    NCCL's own figures are from the runs at mid sizes. A band its class has not earned reads
    bands.UNCHECKED in place of a percentage; its "within" is its class's own nine-in-ten figure."""
    r = calculator.calc()
    klass = nccl.band_class(nccl.System(r["gpu"], r["gpus"], r["gpus_per_node"]))
    out = {"band_systems": str(len(fitted.FITTED_ON)), "band_class": klass}
    out["band_first_size"] = fmt.binary_bytes(bands.BANDS[0][0])  # nothing validated below
    for name, (lo, hi) in zip(BAND_NAMES, bands.BANDS, strict=True):
        b = bands.band(klass, lo)
        out[f"band_{name}_range"] = bands.range_text(lo, hi)
        out[f"band_{name}_median"] = fmt.percent(b["median"]) if b["validated"] else bands.UNCHECKED
        within = fmt.percent(b["nine_in_ten"]) if b["validated"] else bands.UNCHECKED
        out[f"band_{name}_within"] = within
    covered, judged = fitted.COVERAGE
    out["band_coverage"] = fmt.percent(covered / judged)
    out["nccl_own_mid"] = fmt.percent(max(own_misses(*OWN_MID)))
    out["nccl_own_mid_range"] = f"{OWN_MID[0] >> 20}–{OWN_MID[1] >> 20} MiB"
    return out
