"""Stage 8: your cluster. The calculator (calculator.py) and a pasted `all_reduce_perf` log
(nccltests.parse_runs, fit.py, nccl/logfit.py) in one widget, so that the fitted lines, the
measured points and the calculator's assumption share one set of parameters and the fit can be
applied to it. The default is NCCL's own model (algorithm "nccl"); the teaching closed forms at
line rate and the lower bound are its references.

Presets and custom values: each of model, GPU and network is a select with a "custom" choice and
number fields beside it. The select decides: a preset writes its figures into the fields (so they
show what is used), "custom" uses the fields as they are, starting from the last preset's.
"""

from __future__ import annotations

import math
from functools import lru_cache

from .. import fmt, nccl
from ..catalog import hardware, models
from ..errors import ParamError
from ..logs import alphabeta as fit
from ..logs import ncclfit as logfit
from ..logs import parse as nccltests
from ..palette import NEUTRAL, SERIES
from ..params import Param, spec, validated
from ..training import calculator
from ..validate import count
from . import figures as fig
from .common import grad_dtype

MAX_DRAWN_ROWS = 2000  # rows of one run drawn and tabulated (all are fitted)
MAX_LISTED = 50  # unreadable lines listed one by one; the rest are counted by reason
H100 = hardware.H100_SXM
GRAD_BYTES = calculator.GRAD_BYTES
ALGORITHM_TEXT = {
    "nccl": "NCCL's choice (its own cost model)",
    "nccl-ring": "NCCL's Ring, forced (NCCL_ALGO=Ring)",
    "nccl-tree": "NCCL's Tree, forced (NCCL_ALGO=Tree)",
    "ring": "single ring at line rate (the first page's)",
    "multi-ring": "one ring per card at line rate",
    "tree": "teaching tree at line rate (not NCCL's tree)",
    "hierarchical": "hierarchical (Horovod) at line rate",
    "auto": "the fastest line-rate closed form",
}
assert tuple(ALGORITHM_TEXT) == calculator.ALGORITHMS
# the teaching closed forms, by their short names, in the "at line rate" readout
IDEAL_TEXT = {
    "ring": "single ring",
    "multi-ring": "one ring per card",
    "tree": "teaching tree",
    "hierarchical": "hierarchical",
}
# Presets by their canonical names; "custom" uses the number boxes beside the select.
SPEC = spec(
    Param("model", "custom", "name", "Model", choices=(
        ("custom", "custom: the parameter count"),
        *((k, calculator.model_label(k)) for k in calculator.PRESET_MODELS))),
    Param("params", int(models.EXAMPLE_PARAMS), "float", "Parameters (custom)",
          int(calculator.MIN_PARAMS), calculator.MAX_PARAMS),
    grad_dtype("bf16", "bf16", "fp32"),
    Param("gpu", H100.name, "name", "GPU", choices=(
        *((g.name, g.name) for g in hardware.GPUS), ("custom", "custom: the figures beside"))),
    Param("link_gbps", H100.link_GBps, "float", "Link inside a server (GB/s per direction)",
          0.001, 100000, unit="GB/s"),
    Param("peak_tflops", H100.peak_bf16_tflops, "float", "Dense BF16 peak (TFLOP/s)",
          0.001, 1000000, unit="TFLOP/s"),
    Param("memory_gb", H100.memory_gb, "float", "Memory (GiB, sold as GB)", 0.001, 100000,
          unit="GiB"),
    Param("gpus", 64, "int", "GPUs (n)", 1, calculator.MAX_GPUS, nudge=(8, "8 GPUs")),
    Param("gpus_per_node", 8, "int", "GPUs per server (g)", 1, calculator.MAX_GPUS_PER_NODE),
    Param("network", hardware.NIC_400G["name"], "name", "Network card per GPU", choices=(
        *((n["name"], n["name"]) for n in hardware.NETWORKS),
        ("custom", "custom: the rate beside"))),
    Param("nic_gbps", hardware.NIC_400G_Gbps, "float", "Card rate (Gb/s, bits)", 0.001, 1000000,
          unit="Gb/s"),
    Param("algorithm", calculator.DEFAULT_ALGORITHM, "choice", "Algorithm",
          choices=tuple(ALGORITHM_TEXT.items())),
    Param("tokens_per_gpu", calculator.DEFAULT_TOKENS, "float", "Tokens per GPU per step", 1, 1e9),
    Param("mfu", calculator.DEFAULT_MFU, "float", "MFU (share of peak)", 0.01, 1),
    Param("intra_latency_us", 0.0, "float", "Latency per message in a server (µs)", 0, 1000000,
          unit="µs"),
    Param("inter_latency_us", 0.0, "float", "Latency per message between servers (µs)", 0, 1000000,
          unit="µs"),
    Param("log", "", "text", optional=True),
    # an opened file's text: held in a hidden text box, never drawn in the one above
    Param("log_file", "", "text", optional=True),
    Param("log_gpus", None, "int", "GPUs in the run (if the log does not say)", 1, 65536,
          optional=True),
    Param("run", 1, "int", "Run in the file", 1, 100000),
)  # fmt: skip


# Each model once, and the closed forms' fastest ("auto", which times the teaching tree too) on
# the default servers of 8: the tree's layouts for the share curve's GPU counts up to 4,096 take
# a few hundred ms in the browser the first time, and their summaries are small.
WARM = [("cluster", {"model": key}) for key in calculator.PRESET_MODELS]
WARM.append(("cluster", {"algorithm": "auto"}))


def _choose(p: dict) -> dict:
    """Apply the select-decides rule; the names are normalised to the presets' spellings."""
    out = dict(p)
    if not isinstance(p["model"], str):
        raise ParamError("model", "must be a model name")
    if calculator.normalize_name(p["model"]) == "custom":
        out["model"] = "custom"
    else:
        key = calculator.resolve_model(p["model"], calculator.PRESET_MODELS)
        out["model"], out["params"] = key, calculator.models.get(key).params
    if not isinstance(p["gpu"], str):
        raise ParamError("gpu", "must be a GPU name")
    if calculator.normalize_name(p["gpu"]) == "custom":
        out["gpu"] = "custom"
    else:
        g = hardware.find(hardware.GPUS, p["gpu"], "gpu")
        out.update(gpu=g.name, link_gbps=g.link_GBps, peak_tflops=g.peak_bf16_tflops)
        out["memory_gb"] = g.memory_gb
    if not isinstance(p["network"], str):
        raise ParamError("network", "must be a network card")
    if calculator.normalize_name(p["network"]) == "custom":
        out["network"] = "custom"
    else:
        nic = hardware.find(hardware.NETWORKS, p["network"], "network")
        out.update(network=nic["name"], nic_gbps=nic["GBps"] * 8)
    return out


def _algorithm(p: dict) -> str:
    """The algorithm the page runs: NCCL's model covers NVIDIA GPUs only, so on the MI300X or a
    custom GPU NCCL's choice falls back to the closed form fastest for the whole gradient (the
    readout says so; one algorithm, so the buckets are not timed four times); the CLI refuses
    instead."""
    nccl_family = p["algorithm"] == "nccl" or p["algorithm"] in calculator.NCCL_FORCED
    if not nccl_family or p["gpu"] in nccl.topology.GPU_SPECS:
        return p["algorithm"]
    c = calculator.cluster_for(**_cluster_args(p))
    size = calculator.model_for(p["model"], p["params"]).params * GRAD_BYTES[p["grad_dtype"]]
    return calculator.allreduce(c, "auto", float(size))["algorithm"]


def _calc(p: dict) -> dict:
    return calculator.calc(
        model=p["model"],
        params=p["params"],
        grad_dtype=p["grad_dtype"],
        algorithm=_algorithm(p),
        tokens_per_gpu=p["tokens_per_gpu"],
        mfu=p["mfu"],
        **_cluster_args(p),
    )


def _cluster_args(p: dict) -> dict:
    return {
        "gpu": p["gpu"],
        "gpus": p["gpus"],
        "gpus_per_node": p["gpus_per_node"],
        "nic_Gbps": p["nic_gbps"],
        "link_GBps": p["link_gbps"],
        "peak_tflops": p["peak_tflops"],
        "memory_gb": p["memory_gb"],
        "intra_latency_us": p["intra_latency_us"],
        "inter_latency_us": p["inter_latency_us"],
    }


def cluster(params=None) -> dict:
    """The calculator's outputs, the share against GPU count, and the pasted log against both."""
    p = _choose(validated(params, SPEC))
    r = _calc(p)
    c = calculator.cluster_for(**_cluster_args(p))
    model = calculator.model_for(p["model"], p["params"])
    p.update(gpus=r["gpus"], gpus_per_node=p["gpus_per_node"], params=r["params"])
    curve = calculator.share_curve(model, p["grad_dtype"], _algorithm(p), c, r["compute_s"])
    log = _log(p, c)
    state = {
        "kind": "chart",
        "params": p,
        **_share_figure(curve, r),  # the main figure: the share against GPU count
        "figures": _log_figures(log, r),
        "readouts": {**_readouts(r, p), **_log_readouts(log)},
        "result": {k: v for k, v in r.items() if k != "memory"},
    }
    if log and log["fit"] and log["apply"]:
        state["fit_apply"] = log["apply"]
    return state


# ---- Readouts ----------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{fmt.sig(100 * x, 2)} %"


def _readouts(r: dict, p: dict) -> dict:
    mem = r["memory"]
    have = f"{fmt.nbytes(mem['gpu_bytes'])} ({fmt.sig(mem['gpu_bytes'] / hardware.GIB, 4)} GiB)"
    fits = (
        f"yes: {fmt.nbytes(mem['bytes_per_gpu'])} of {have}"
        if mem["fits"]
        else f"no: {fmt.nbytes(mem['bytes_per_gpu'])} needed, {have} "
        f"on the GPU; sharded over {r['gpus']} GPUs (ZeRO-3 / FSDP) "
        f"{fmt.nbytes(mem['sharded_bytes_per_gpu'])} each"
        + ("" if mem["sharded_fits"] else ", still too much")
    )
    mesh = (
        f" (a mesh: one ring gets one link, {fmt.sig(r['intra_GBps_used'], 3)} GB/s)"
        if r["fabric"] == "mesh" and r["algorithm"] in ("ring", "tree")
        else ""
    )
    return {
        "params": f"{r['params']:,} ({r['params_source']})",
        "params_words": _in_words(r["params"]),
        "gradient": f"{fmt.nbytes(r['gradient_bytes'])} ({r['grad_dtype'].upper()})",
        "cluster": f"{r['gpus']} × {r['gpu']} in {r['servers']} server"
        + ("s" if r["servers"] > 1 else "")
        + f", {fmt.sig(r['nic_GBps'], 4)} GB/s per card{mesh}",
        "allreduce": fmt.seconds(r["allreduce_s"]),
        "algorithm": _algorithm_text(r, p),
        "busbw": "—"
        if r["busbw_GBps"] is None
        else f"{fmt.sig(r['busbw_GBps'], 4)} GB/s (algbw {fmt.sig(r['algbw_GBps'], 4)} GB/s)",
        "ideal": "; ".join(
            f"{IDEAL_TEXT[k]} {fmt.seconds(v)}"
            for k, v in sorted(r["times_s"].items(), key=lambda kv: kv[1])
        ),
        "bound": f"{fmt.seconds(r['lower_bound_s'])}, set by {r['lower_bound_limit']} "
        "(when the GPUs add; NVLink SHARP and InfiniBand SHARP add in the switch and can beat it)",
        "compute": f"{fmt.seconds(r['compute_s'])} ({fmt.sig(r['samples_per_gpu'], 3)} × "
        f"{r['sample']} per GPU at {fmt.sig(100 * r['mfu'], 3)} % of "
        f"{fmt.sig(r['peak_tflops'], 4)} TFLOP/s; attention's score FLOPs left out, "
        "embeddings counted, no recomputation)",
        "share_no_overlap": _pct(r["share_no_overlap"]),
        "share_with_overlap": f"{_pct(r['share_with_overlap'])} "
        f"({fmt.seconds(r['exposed_s'])} exposed after {r['buckets']} buckets)",
        "memory": fits,
    }


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
            f"NCCL's model covers NVIDIA GPUs, not {r['gpu']}"
        )
    if "nccl_algorithm" not in r:
        return text
    return (
        f"{text}: {r['nccl_algorithm']} with the {r['nccl_protocol']} protocol (NCCL "
        f"{nccl.NCCL_VERSION}'s model, calibrated against measured runs; its own uncalibrated "
        f"figure {fmt.seconds(r['nccl_time_s'])})"
    )


# ---- Share against GPU count ---------------------------------------------------------------


def _share_figure(curve: list, r: dict) -> dict:
    comp = r["compute_s"]
    xs = [x for x, *_ in curve]
    no = [100 * a / (comp + a) for _, a, _, _ in curve]
    yes = [100 * e / (comp + e) for _, _, e, _ in curve]
    n = r["gpus"]
    data = [
        _series("no overlap", xs, no, SERIES["ring"], "solid", "circle"),
        _series("with DDP's overlap", xs, yes, SERIES["tree"], "dash", "diamond"),
        fig.you_are_here(
            f"{n} GPUs", n, [100 * r["share_no_overlap"], 100 * r["share_with_overlap"]]
        ),
    ]
    layout = fig.layout(
        fig.log_axis(
            "GPUs",
            [math.log10(1.5), math.log10(calculator.MAX_GPUS * 1.4)],
            [2, 8, 32, 128, 512, 2048],
        ),
        fig.axis("all-reduce share of a step (%)", range=[0, 100]),
    )
    return {
        "figure": {"data": data, "layout": layout},
        "summary": (
            f"At {n} GPUs the all-reduce takes {_pct(r['share_no_overlap'])} of a step if it "
            f"waits for the backward pass and {_pct(r['share_with_overlap'])} with DDP's "
            "buckets overlapping it; the tokens per GPU stay fixed as GPUs are added."
        ),
        "table": {
            "columns": ["GPUs", "all-reduce", "algorithm", "exposed", "share", "with overlap"],
            "rows": [
                [
                    x,
                    fmt.seconds(a),
                    alg,
                    fmt.seconds(e),
                    _pct(a / (comp + a)),
                    _pct(e / (comp + e)),
                ]  # fmt: skip
                for x, a, e, alg in curve
            ],
        },
    }


def _series(name, x, y, colour, dash, symbol) -> dict:
    marker = {"symbol": symbol, "size": 6}
    return fig.line(name, x, y, colour, dash, 2, marker, "%{x} GPUs: %{y:.3g} %")


# ---- The pasted log ----------------------------------------------------------------------------


@lru_cache(maxsize=2)
def _parsed(text: str) -> nccltests.Log:
    """Parsing is the slow part (tens of µs a line): a calculator change should not redo it."""
    return nccltests.parse_runs(text)


def _log_text(p: dict) -> tuple[str, str]:
    """The text to read and the parameter it came from: a paste wins over an opened file.

    An opened file goes to `log_file`, not into the text box: a text box of millions of short
    lines takes Chromium minutes to lay out, which would freeze the page.
    """
    for field in ("log", "log_file"):
        text = p[field]
        if text is None or text == "":
            continue
        if not isinstance(text, str):
            raise ParamError(field, "must be text")
        fit.check_size(text, field, "; paste or open a shorter log")
        return text, field
    return "", ""


def _log(p: dict, c: calculator.Cluster) -> dict | None:
    count("run", p["run"], 1, 100_000)
    text, field = _log_text(p)
    if not text:
        if p["log_gpus"] is not None:
            count("log_gpus", p["log_gpus"], 1, 1 << 16)
        return None
    log = _parsed(text)
    out = {"log": log, "fit": None, "apply": None, "run": None, "source": field}
    out |= {"nccl_fit": None, "prediction": None, "nccl_error": None}
    if not log.runs:
        if p["run"] != 1:
            raise ParamError("run", "the log has no runs to choose from")
        return out
    k = count("run", p["run"], 1, len(log.runs))
    run = log.runs[k - 1]
    n = (
        count("log_gpus", p["log_gpus"], 1, 1 << 16)
        if p["log_gpus"] is not None
        else len(run.ranks)
    )
    m = fit.measured(run, n or None)
    out.update(run=m, k=k, n=n or None, fit=m["fit"])
    if not n:  # ask for the count, keeping the log (an error would drop the paste)
        return out
    a = fit.applied(run, m, n, c.gpus_per_node)
    per = a["gpus_per_node"]
    assumed = calculator.Cluster(n, per, c.gpu, c.nic_GBps, c.intra_latency_us, c.inter_latency_us)
    out.update(servers=a["servers"], per=per, assumed=assumed)
    gpu = c.gpu.name if c.gpu.name in nccl.topology.GPU_SPECS else None
    out.update(_explained(text, k, n, a["servers"], per, gpu, c.nic_GBps * 8))
    if out["nccl_fit"]:
        out["apply"] = _apply(out["nccl_fit"]["calculator_settings"])
    return out


@lru_cache(maxsize=4)
def _explained(text: str, k: int, n: int, servers: int, per: int, gpu, nic_Gbps: float) -> dict:
    """NCCL's model fitted to run k (nccl_fit) and, on an NVIDIA GPU, its prediction: on the
    calculator's GPU and card, as the reader's cluster (fit.read_log's keys)."""
    run = _parsed(text).runs[k - 1]
    rows = fit.measured(run, n)["rows"]
    net = logfit.Network(gpu=gpu, nic_Gbps=nic_Gbps)
    device = logfit.device_name(text)
    try:
        return {"prediction": None} | logfit.explain(rows, n, servers, per, net, device)
    except ParamError as e:  # a layout NCCL's model does not hold: the alpha-beta fit stands
        return {"nccl_fit": None, "prediction": None, "nccl_error": e.message}


def _apply(settings: dict) -> dict:
    """The NCCL fit's calculator settings (erratum: the figures belong to the model they were
    fitted with): algorithm nccl, the GPU and, across servers, the card rate that makes NCCL's
    model give the fitted busbw."""
    out = {"algorithm": "nccl", "gpu": settings["gpu"]}
    if "nic_gbps" in settings:
        out |= {"network": "custom", "nic_gbps": settings["nic_gbps"]}
    return out


def _assumed_curve(log: dict, r: dict, sizes: list[float]) -> list[tuple[float, float, float]]:
    """(size, time µs, busbw) of the calculator's algorithm on the measured cluster."""
    out = []
    for s in sizes:
        a = calculator.allreduce(log["assumed"], r["algorithm_asked"], s)
        if a["time_s"] > 0:
            out.append((s, a["time_s"] * 1e6, a["busbw_GBps"]))
    return out


def _log_figures(log: dict | None, r: dict) -> dict:
    time_fig = {"data": [], "layout": _size_layout("time (µs)")}
    bus_fig = {"data": [], "layout": _size_layout("busbw (GB/s)")}
    if not log or not log["run"]:
        why = "Paste all_reduce_perf output to compare it with the model."
        empty = {"columns": ["size", "measured"], "rows": []}
        return {
            "time": {"figure": time_fig, "summary": why, "table": empty},
            "busbw": {"figure": bus_fig, "summary": why, "table": empty},
        }
    m, f = log["run"], log["fit"]
    rows = [x for x in m["rows"] if x["time_us"] and x["size_bytes"] > 0][:MAX_DRAWN_ROWS]
    sizes = [x["size_bytes"] for x in rows]
    assumed = _assumed_curve(log, r, sizes) if log["n"] else []
    calc = f"calculator ({ALGORITHM_TEXT[r['algorithm_asked']]})"
    in_place = [x for x in rows if x["in_place"] and x["in_place"]["time_us"]]
    time_fig["data"] = [
        _dots("measured (out-of-place)", sizes, [x["time_us"] for x in rows]),
        _dots(
            "measured (in-place)",
            [x["size_bytes"] for x in in_place],
            [x["in_place"]["time_us"] for x in in_place],
            hollow=True,
        ),
        _line(calc, [a[0] for a in assumed], [a[1] for a in assumed], NEUTRAL, "dot"),
    ]
    bus_fig["data"] = [
        _dots("measured (out-of-place)", sizes, [x["busbw_GBps"] for x in rows]),
        _line(calc, [a[0] for a in assumed], [a[2] for a in assumed], NEUTRAL, "dot"),
    ]
    fitted_t = []
    if f:
        fitted_t = [f["latency_us"] + s / (f["algbw_GBps"] * 1e3) for s in sizes]
        time_fig["data"].insert(2, _line("alpha-beta fit", sizes, fitted_t, SERIES["ring"], "dash"))
    if f and log["n"] and log["n"] > 1:
        factor = fit.busbw_factor(log["n"])
        fitted_bus = [s / t / 1e3 * factor for s, t in zip(sizes, fitted_t, strict=True)]
        bus_fig["data"].insert(
            1, _line("alpha-beta fit", sizes, fitted_bus, SERIES["ring"], "dash")
        )
    nf = log.get("nccl_fit")
    if nf:
        xs = [x["bytes"] for x in nf["rows"]]
        colour = SERIES["tree"]
        t_nccl = [x["fitted_time_us"] for x in nf["rows"]]
        b_nccl = [x["fitted_busbw_GBps"] for x in nf["rows"]]
        time_fig["data"].insert(2, _line("NCCL's model, fitted", xs, t_nccl, colour, "solid"))
        bus_fig["data"].insert(1, _line("NCCL's model, fitted", xs, b_nccl, colour, "solid"))
        rate = nf["line_rate"]["GBps"]
        if rate:
            ends = [xs[0], xs[-1]]
            bus_fig["data"].append(_line("line rate", ends, [rate, rate], NEUTRAL, "dash"))
    summary = _fit_text(log)
    table = _log_table(log, rows, fitted_t, assumed)
    return {
        "time": {"figure": time_fig, "summary": summary, "table": table},
        "busbw": {"figure": bus_fig, "summary": summary, "table": table},
    }


def _log_table(log: dict, rows: list, fitted_t: list, assumed: list) -> dict:
    """One row per measured size: both fits, NCCL's likely regime, its prediction and the
    ratio, and (across servers) what each card carried."""
    nf = log.get("nccl_fit")
    by_size = {x["bytes"]: x for x in nf["rows"]} if nf else {}
    pred = {x["bytes"]: x for x in (log.get("prediction") or {"rows": []})["rows"]}
    cards = log.get("servers", 1) > 1
    columns = ["size", "measured µs", "alpha-beta µs", "NCCL fit µs", "likely regime"]
    columns += ["measured busbw", "NCCL predicts", "measured / predicted"]
    columns += ["per card GB/s"] * cards + ["calculator busbw"]
    out = []
    for i, x in enumerate(rows):
        s, n = x["size_bytes"], by_size.get(x["size_bytes"])
        p = pred.get(s)
        regime = "—" if n is None else n["regime"] + (" (above line rate)" * n["above_line_rate"])
        row = [
            fmt.nbytes(s),
            fmt.sig(x["time_us"], 5),
            fmt.sig(fitted_t[i], 4) if fitted_t else "—",
            "—" if n is None else fmt.sig(n["fitted_time_us"], 4),
            regime,
            "N/A" if x["busbw_GBps"] is None else fmt.sig(x["busbw_GBps"], 4),
            "—" if p is None else fmt.sig(p["busbw_GBps"], 4),
            "—" if p is None else fmt.sig(p["ratio"], 3),
        ]
        if cards:
            row.append(
                "—" if n is None or "per_card" not in n else fmt.sig(n["per_card"]["GBps"], 3)
            )
        row.append(_assumed_at(assumed, s, 2))
        out.append(row)
    return {"columns": columns, "rows": out}


def _assumed_at(assumed, size, i) -> str:
    hit = next((a for a in assumed if a[0] == size), None)
    return "—" if hit is None or hit[i] is None else fmt.sig(hit[i], 4)


def _fit_text(log: dict) -> str:
    f = log["fit"]
    if not f:
        return "Too few measured sizes, or times that do not grow with size: nothing to fit."
    bus = "" if f["busbw_GBps"] is None else f", busbw {fmt.sig(f['busbw_GBps'], 4)} GB/s"
    gpus = f" of {log['n']} GPUs" if log["n"] else ""
    text = (
        f"Alpha-beta line fitted to {f['points']} {f['times']} times{gpus}: latency "
        f"{fmt.sig(f['latency_us'], 3)} µs, algbw {fmt.sig(f['algbw_GBps'], 4)} GB/s{bus}; "
        f"rms relative error {_pct(f['rms_rel_error'])}."
    )
    nf = log.get("nccl_fit")
    if not nf:
        return text
    regimes = ", ".join(
        f"{g['regime']} {fmt.nbytes(g['from_bytes'])}–{fmt.nbytes(g['to_bytes'])}"
        for g in nf["regimes"]
    )
    ab = nf["alpha_beta_rms_rel_error"]
    return (
        f"{text} NCCL's model fitted to the {nf['points']} sizes from "
        f"{fmt.nbytes(nf['min_bytes'])}: rms relative error {_pct(nf['rms_rel_error'])}"
        + ("" if ab is None else f" (the alpha-beta line on the same sizes: {_pct(ab)})")
        + f"; likely regimes {regimes}; busbw {fmt.sig(nf['busbw_GBps'], 4)} GB/s at the "
        f"largest size, latency {fmt.sig(nf['latency_us'], 3)} µs."
    )


def _size_layout(title: str) -> dict:
    decades = {"dtick": 1, "exponentformat": "SI"}
    return fig.layout(fig.log_axis("size (bytes)", **decades), fig.log_axis(title, **decades))


def _dots(name, x, y, hollow=False) -> dict:
    return fig.dots(name, x, y, SERIES["measured"], outline=1.5, hollow=hollow)


def _line(name, x, y, colour, dash) -> dict:
    return fig.line(name, x, y, colour, dash, 2)


def _log_readouts(log: dict | None) -> dict:
    if not log:
        return {
            "log_status": "No log yet: paste the output of all_reduce_perf, or open a file.",
            "log_fit": "—",
            "log_line_rate": "—",
            "log_apply": "—",
            "log_skipped": "",
        }
    parsed = log["log"]
    kinds: dict[str, int] = {}
    listed = []
    for line, kind, reason in parsed.skipped:
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind in ("unreadable", "duplicate", "unread") and len(listed) < MAX_LISTED:
            listed.append(f"line {line}: {reason}")
    extra = sum(kinds.get(k, 0) for k in ("unreadable", "duplicate", "unread")) - len(listed)
    if extra > 0:
        listed.append(f"… and {extra:,} more lines that could not be read")
    counted = [f"{v:,} {k}" for k, v in sorted(kinds.items())] + [f"{parsed.blank:,} blank"]
    runs = len(parsed.runs)
    source = "the opened file" if log["source"] == "log_file" else "the pasted text"
    if not log["run"]:
        status = f"No all_reduce_perf rows found in {parsed.lines:,} lines of {source}."
    else:
        m = log["run"]
        status = (
            f"Run {log['k']} of {runs} in {source}: {len(m['rows'])} rows from line "
            f"{m['first_line']}. "
            "How many GPUs ran it? The log has no '#  Rank' lines: enter the count above "
            "for the bus bandwidth."
        )
    if log["run"] and log["n"]:
        m = log["run"]
        status = (
            f"Run {log['k']} of {runs} in {source}: {len(m['rows'])} rows from line "
            f"{m['first_line']}, "
            f"{log['n']} GPUs"
            + (" (from the rank lines)" if m["gpus_in_file"] == log["n"] else " (as entered)")
            + f" in {log['servers']} server"
            + ("s" if log["servers"] > 1 else "")
            + (
                ""
                if m["avg_busbw_GBps"] is None
                else f"; its summary: avg busbw {fmt.sig(m['avg_busbw_GBps'], 4)} GB/s"
            )  # fmt: skip
            + "."
        )
    apply_text = _apply_text(log)
    return {
        "log_status": status,
        "log_fit": _fit_text(log) if log["run"] else "—",
        "log_line_rate": _line_rate_text(log),
        "log_apply": apply_text,
        "log_skipped": "Lines not read as rows: "
        + ", ".join(counted)
        + (".\n" + "\n".join(listed) if listed else "."),
    }


def _line_rate_text(log: dict) -> str:
    nf = log.get("nccl_fit")
    if not nf:
        return log.get("nccl_error") or "—"
    rate = nf["line_rate"]
    if rate["GBps"] is None:
        return rate["basis"]
    text = f"{fmt.sig(rate['GBps'], 4)} GB/s ({rate['basis']}, the calculator's)"
    if rate["rows_above"]:
        first = fmt.nbytes(min(rate["rows_above"]))
        text += f"; {len(rate['rows_above'])} sizes from {first} measured above it: {rate['why']}"
    return text + "."


def _apply_text(log: dict) -> str:
    nf = log.get("nccl_fit")
    if not nf:
        return "— (no fit)"
    st = nf["calculator_settings"]
    card = f", a {fmt.sig(st['nic_gbps'], 4)} Gb/s card per GPU" if "nic_gbps" in st else ""
    text = (
        f"algorithm NCCL's choice on {st['gpu']}{card}: NCCL's model then gives "
        f"{fmt.sig(st['model_busbw_GBps'], 4)} GB/s busbw at the largest size, against "
        f"{fmt.sig(st['fitted_busbw_GBps'], 4)} GB/s fitted"
    )
    return text + ("." if st["reproduces"] else f"; {st['note']}.")


WIDGETS = {"cluster": cluster}
SPECS = {"cluster": SPEC}


def facts() -> dict[str, str]:
    """Stage 8's quoted figures: the defaults (stage 1's case, NCCL's model), the first page's
    single ring, and a few presets."""
    r = calculator.calc()
    ring = calculator.calc(algorithm="ring")
    multi = calculator.calc(algorithm="multi-ring")
    mi = calculator.calc(gpu="MI300X", gpus=8, algorithm="ring")
    mi_multi = calculator.calc(gpu="MI300X", gpus=8, algorithm="multi-ring")
    l70 = calculator.calc(model="llama3-70b")
    one = calculator.calc(gpus=8)
    return {
        "cluster_allreduce": fmt.seconds(r["allreduce_s"]),
        "cluster_nccl_algorithm": r["nccl_algorithm"],
        "cluster_nccl_protocol": r["nccl_protocol"],
        "cluster_busbw": f"{fmt.sig(r['busbw_GBps'], 3)} GB/s",
        "cluster_algbw": f"{fmt.sig(r['algbw_GBps'], 3)} GB/s",
        "cluster_ring": fmt.seconds(ring["allreduce_s"]),
        "cluster_ring_busbw": f"{fmt.sig(ring['busbw_GBps'], 3)} GB/s",
        "cluster_ring_share": _pct(ring["share_no_overlap"]),
        "cluster_bound": fmt.seconds(r["lower_bound_s"]),
        "cluster_compute": fmt.seconds(r["compute_s"]),
        "cluster_share": _pct(r["share_no_overlap"]),
        "cluster_share_overlap": _pct(r["share_with_overlap"]),
        "cluster_exposed": fmt.seconds(r["exposed_s"]),
        "cluster_multi": fmt.seconds(multi["allreduce_s"]),
        "cluster_memory": fmt.nbytes(r["memory"]["bytes_per_gpu"]),
        "cluster_h100_memory": fmt.nbytes(r["memory"]["gpu_bytes"]),
        "cluster_tokens": f"{calculator.DEFAULT_TOKENS:,}",
        "cluster_mfu": f"{100 * calculator.DEFAULT_MFU:g} %",
        "cluster_mi300x_ring": fmt.seconds(mi["allreduce_s"]),
        "cluster_mi300x_multi": fmt.seconds(mi_multi["allreduce_s"]),
        "cluster_l70_allreduce": fmt.seconds(l70["allreduce_s"]),
        "cluster_l70_share": _pct(l70["share_no_overlap"]),
        "cluster_l70_overlap": _pct(l70["share_with_overlap"]),
        "cluster_l70_memory": fmt.nbytes(l70["memory"]["bytes_per_gpu"]),
        "cluster_max_gpus": f"{calculator.MAX_GPUS:,}",
        "cluster_ring_over_bound": fmt.sig(ring["allreduce_s"] / ring["lower_bound_s"], 2),
        "cluster_nccl_over_bound": fmt.sig(r["allreduce_s"] / r["lower_bound_s"], 2),
        "cluster_one_server_algorithm": one["nccl_algorithm"],
        "cluster_one_server": fmt.seconds(one["allreduce_s"]),
        "cluster_one_server_bound": fmt.seconds(one["lower_bound_s"]),
        "cluster_l8_samples": fmt.sig(calculator.calc(model="llama3-8b")["samples_per_gpu"], 3),
        "cluster_l8_sequence": f"{calculator.models.get('llama3-8b').tokens:,}",
    }
