"""Sharded data parallel (ZeRO, FSDP). The stepper runs shard.py's reduce-scatter, update
of one shard and all-gather on real numbers and checks them against DDP; the chart puts
shardcost.py's memory and time per step of each strategy side by side, its collectives timed by
NCCL's own model (nccl/), the same one your cluster's calculator uses by default.
"""

from __future__ import annotations

import struct

from .. import api, fmt, nccl, performance, records
from ..catalog import hardware
from ..catalog.models import EXAMPLE_PARAMS
from ..errors import ParamError
from ..exercises.units import COUNT
from ..palette import GPU_COLOURS, NEUTRAL
from ..params import Param, narrowed, spec, validated
from ..simulation.shard import OPTIMIZERS
from ..sources import REFERENCE_DASH
from ..training import calculator, memory, shardcost
from . import Widget, diagram, views
from . import figures as fig
from .common import DTYPE, SEED, VALUES, judge_quantity, simulated, value_text

# ---- The stepper -------------------------------------------------------------------------------

OPTIMIZER_TEXT = {"sgd": "SGD", "adam": "Adam"}
REFERENCE_TEXT = {"ring": "ring (the same order)", "tree": "tree (another order)"}
STEPPER = spec(
    simulated("gpus", "GPUs", lo=2, hi=16),
    simulated("length", "Numbers per gradient", default=8, hi=64, optional=False),
    DTYPE,
    Param("optimizer", "sgd", "choice", "Optimizer",
          choices=tuple((k, OPTIMIZER_TEXT[k]) for k in OPTIMIZERS)),
    Param("lr", None, "float", "Learning rate (blank: the default)", 0, 1000, optional=True),
    Param("reference", "ring", "choice", "DDP's all-reduce", choices=tuple(REFERENCE_TEXT.items())),
    SEED,
    VALUES,
)  # fmt: skip


def _bits(x) -> object:
    """A value as its bits, so that 0.0 and -0.0 differ (a float compared bit for bit)."""
    return struct.pack("<d", x) if isinstance(x, float) else x


def shard_stepper(params=None) -> dict:
    """Reduce-scatter, each GPU's optimizer step on its shard, all-gather; checked against DDP."""
    p = validated(params, STEPPER)
    if p["values"] is not None and not isinstance(p["values"], list):
        raise ParamError("values", "must be a list of one list of numbers per GPU")
    r = api.shard_step(
        gpus=p["gpus"],
        length=p["length"],
        dtype=p["dtype"],
        optimizer=p["optimizer"],
        lr=p["lr"],
        seed=p["seed"],
        grads=p["values"],
        reference=p["reference"],
    )
    n, length, dtype = r["gpus"], r["length"], r["dtype"]
    ddp = r["ddp_params"][0]
    frames = [_frame(f, r) for f in r["frames"]]
    matches = [
        [_bits(x) == _bits(y) for x, y in zip(mine, theirs, strict=True)]
        for mine, theirs in zip(r["final_params"], r["ddp_params"], strict=True)
    ]
    check = {
        **r["check"],
        "matches": matches,
        "all_match": r["check"]["all_equal"],
        "target_label": "DDP",
        "rows": _check_rows(r),
    }
    sent = r["bytes_sent_per_gpu"]
    state = views.stepper(
        params={**p, "gpus": n, "length": length},
        dtype=dtype,
        chunks=r["chunks"],
        owned=r["owned"],
        inputs=r["grads"],
        target=ddp,
        editable=True,
        frames=frames,
        check=check,
        readouts={
            "lr": value_text(r["lr"], "fp32" if isinstance(r["lr"], float) else "int"),
            "reduce_scatter": f"{fmt.nbytes(sent['reduce_scatter'][0])} per GPU",
            "all_gather": f"{fmt.nbytes(sent['all_gather'][0])} per GPU",
            "total": f"{fmt.nbytes(sent['total'][0])} per GPU",
            "ddp": f"{fmt.nbytes(sent['ddp_allreduce'][0])} per GPU",
            "state": _state_text(r),
        },
    )
    return diagram.attach(state, diagram.ring(n))


STEPPER_HEADLINE = (("total", "Sharded step, total"), ("ddp", "DDP's all-reduce"))
STEPPER_READOUTS = (
    ("reduce_scatter", "Reduce-scatter sends"),
    ("all_gather", "All-gather sends"),
    ("lr", "Learning rate used"),
    ("state", "Optimizer state kept"),
)
PHASES = {
    "start": "start",
    "reduce-scatter": "reduce-scatter",
    "update": "optimizer step",
    "all-gather": "all-gather",
}


def _frame(f: dict, r: dict) -> views.Frame:
    """A core frame for the stepper view: what the rows hold, and the rows below the GPUs; the
    reduce-scatter adds what it receives, the optimizer step and the all-gather copy."""
    rows = []
    if f["shows"] == "grads":
        rows.append({"label": "parameters (every GPU)", "values": r["params"]})
    else:
        rows.append({"label": "DDP's parameters", "values": r["ddp_params"][0]})
    if f["phase"] == "update":
        rows += _state_rows(f["optimizer_state"], r["length"])
    return views.frame(
        buffers=f["buffers"],
        complete=f["complete"],
        moves=f["moves"],
        op="add" if f["phase"] == "reduce-scatter" else "copy",
        phase=f["phase"],
        label=PHASES[f["phase"]],
        rows_show="gradients" if f["shows"] == "grads" else "parameters",
        rows=rows,
        narration=f["narration"],
    )


def _state_rows(states: list[dict], length: int) -> list[dict]:
    """The optimizer state each GPU keeps, for its shard only: one row per kind of state."""
    rows = []
    for key, label in (("master", "FP32 master weights"), ("m", "Adam m"), ("v", "Adam v")):
        if key not in states[0]:
            continue
        values: list = [None] * length
        for s in states:
            values[s["start"] : s["stop"]] = s[key]
        rows.append({"label": f"{label} (each GPU: its shard)", "values": values, "digits": 4})
    return rows


def _check_rows(r: dict) -> list[dict]:
    if r["dtype"] == "int":
        return []
    return [
        {"label": "largest gap to DDP (ulp)", "values": [fmt.sig(r["check"]["max_ulp_vs_ddp"])]}
    ]


def _state_text(r: dict) -> str:
    n, length = r["gpus"], r["length"]
    kinds = [k for k in ("master", "m", "v") if k in r["optimizer_state"][0]]
    if not kinds:
        return "none: plain SGD keeps no state"
    shard = max(s["stop"] - s["start"] for s in r["optimizer_state"])
    return (
        f"{len(kinds)} value(s) per element, for {shard} of {length} elements per GPU "
        f"(DDP keeps them for all {length} on each of the {n} GPUs)"
    )


# ---- Memory against time per step --------------------------------------------------------------

NCCL_GPUS = [g for g in hardware.GPUS if g.name in nccl.GPU_SPECS]
H100 = hardware.H100_SXM
COMM_TEXT = {
    "nccl": f"the fitted time of NCCL {nccl.NCCL_VERSION}'s choice",
    "ring": "a single ring (page 4)",
}
# The chart's parameters narrow api.shard's (SHARD); the network select is the page's own.
SHARD = api.SHARD
MEMORY = spec(
    narrowed(SHARD["model"], default="llama3-8b", label="Model",
             choices=tuple((k, calculator.model_label(k)) for k in calculator.PRESET_MODELS)),
    narrowed(SHARD["gpu"], label="GPU", choices=tuple((g.name, g.name) for g in NCCL_GPUS)),
    narrowed(SHARD["gpus"], default=64, label="GPUs (n)", lo=2, hi=1024, nudge=(8, "8 GPUs")),
    narrowed(SHARD["gpus_per_node"], default=8, optional=False, label="GPUs per server (g)",
             hi=8),
    Param("network", hardware.NIC_400G["name"], "name", "Network card per GPU",
          choices=tuple((n["name"], n["name"]) for n in hardware.NETWORKS)),
    narrowed(SHARD["comm_model"], label="Collectives timed by", choices=tuple(COMM_TEXT.items())),
    narrowed(SHARD["tokens_per_gpu"], label="Tokens per GPU per step", lo=1),
    narrowed(SHARD["mfu"], label="MFU (share of peak)", lo=0.01),
)  # fmt: skip
WARM = [("shard_memory", {})]


def _resolve(p: dict) -> dict:
    out = dict(p)
    out["model"] = calculator.resolve_model(p["model"], calculator.PRESET_MODELS)
    g = hardware.find(hardware.GPUS, p["gpu"], "gpu")
    if g not in NCCL_GPUS:
        raise ParamError("gpu", f"NCCL's tuning code knows {', '.join(x.name for x in NCCL_GPUS)}")
    out["gpu"] = g.name
    out["network"] = hardware.find(hardware.NETWORKS, p["network"], "network")["name"]
    if out["gpus"] % out["gpus_per_node"]:
        raise ParamError(
            "gpus", f"{out['gpus']} GPUs do not fill servers of {out['gpus_per_node']}"
        )
    return out


def strategies(p: dict) -> dict:
    """shardcost.strategies for the chart's parameters, with the chosen time model."""
    nic = hardware.find(hardware.NETWORKS, p["network"], "network")
    c = calculator.cluster_for(
        gpu=p["gpu"], gpus=p["gpus"], gpus_per_node=p["gpus_per_node"], nic_Gbps=nic["GBps"] * 8
    )
    timer = shardcost.nccl_time(p["gpu"], nic["GBps"] * 8) if p["comm_model"] == "nccl" else None
    kw = {"comm_time": timer} if timer else {}
    m = calculator.model_for(p["model"], None)
    return shardcost.strategies(m, c, p["tokens_per_gpu"], p["mfu"], **kw) | {"model": m}


def shard_memory(params=None) -> dict:
    """Model states per GPU as stacked bars per strategy, the GPU's memory a line; time per step
    as bars from zero (compute, then communication)."""
    p = _resolve(validated(params, MEMORY))
    out = strategies(p)
    rows, have = out["strategies"], out["gpu_memory_bytes"]
    mems = [rows[s]["memory_bytes_per_gpu"]["total"] / hardware.GIB for s in shardcost.STRATEGIES]
    fits = [rows[s]["label"] for s in shardcost.STRATEGIES if rows[s]["fits"]]
    z3, hs = out["overlap"]["zero3"], out["overlap"]["hsdp"]
    summary = (
        f"{out['model'].label} on {p['gpus']} {p['gpu']}: model states per GPU "
        + ", ".join(
            f"{rows[s]['label']} {fmt.sig(m, 3)} GiB" for s, m in zip(shardcost.STRATEGIES, mems)
        )
        + f" against {fmt.sig(have / hardware.GIB, 3)} GiB; "
        + (f"fits: {', '.join(fits)}." if fits else "none fits.")
    )
    return views.chart(
        params=p,
        main=views.part(
            figure=_memory_figure(rows, have, p["gpu"]), summary=summary, table=_table(rows)
        ),
        figures={"time": _time_part(rows, out["compute_s"])},
        readouts={
            "fits": ", ".join(fits) if fits else "none",
            "compute": records.text(shardcost.RECORD, out, "compute_s"),
            "ddp_comm": records.text(shardcost.RECORD, rows["ddp"], "comm_s"),
            "zero3_comm": records.text(shardcost.RECORD, rows["zero3"], "comm_s"),
            "ratio": fmt.sig(
                rows["zero3"]["comm_bytes_per_gpu"] / rows["ddp"]["comm_bytes_per_gpu"], 3
            ),
            "zero3_tokens": _tokens_text(z3),
            "hsdp_tokens": _tokens_text(hs),
        },
        prediction=views.prediction(
            id=MEMORY_PREDICTION_ID,
            question=(
                "Per GPU and per training step, how many times DDP's bytes will ZeRO-3 / FSDP send?"
            ),
            example="such as 2",
            figures=["", "time"],
            readouts=["ddp_comm", "zero3_comm", "ratio"],
        ),
    )


MEMORY_PREDICTION_ID = "sharded-zero3-bytes"
RATIO_TOLERANCE = 0.05  # the bytes' ratio is a count of collectives: 3/2, not an estimate


def predict_memory(params, answer) -> dict:
    """The reader's ratio of ZeRO-3's bytes per GPU to DDP's (shardcost's collectives), right
    within RATIO_TOLERANCE; the misconceptions: ZeRO-1/2's (the same as DDP's), and three
    collectives counted against one."""
    rows = strategies(_resolve(validated(params, MEMORY)))["strategies"]
    zero3, ddp = (rows[s]["comm_bytes_per_gpu"] for s in ("zero3", "ddp"))
    mistakes = (
        (1.0, "That is ZeRO-1's and ZeRO-2's: their reduce-scatter and all-gather send what "
         "DDP's all-reduce does. ZeRO-3 gathers the parameters twice, for the forward and the "
         "backward pass."),
        (3.0, "That counts three collectives against DDP's one, but DDP's all-reduce is two "
         "halves: a reduce-scatter and an all-gather."),
    )  # fmt: skip
    result = (
        f"ZeRO-3 / FSDP sends {fmt.nbytes(zero3)} per GPU per step, DDP {fmt.nbytes(ddp)}: "
        f"{fmt.sig(zero3 / ddp, 3)} times as much"
    )
    return judge_quantity(
        answer, zero3 / ddp, COUNT, "", RATIO_TOLERANCE, mistakes, _times_text, result
    )


def _times_text(x: float) -> str:
    return f"{fmt.sig(x, 3)}×"


# The parts of the model states, stacked in this order from the bottom, as memory.py names them
PARTS = (
    ("params", "parameters (BF16)", GPU_COLOURS[4]),
    ("grads", "gradients (BF16)", GPU_COLOURS[1]),
    ("optimizer", "optimizer state (FP32 weights, Adam m and v)", GPU_COLOURS[0]),
)
COMPUTE, COMM = GPU_COLOURS[7], GPU_COLOURS[5]  # time per step: compute grey, communication


def _labels() -> list[str]:
    return [shardcost.LABELS[s] for s in shardcost.STRATEGIES]


def _memory_figure(rows: dict, have: float, gpu: str) -> dict:
    """One stacked bar per strategy (memory.py's bytes of each part, in GiB) and the GPU's
    memory as a dash-dot line across them (a limit, no source of time): a bar above the line
    does not fit."""
    gib, labels = hardware.GIB, _labels()
    data = [
        {
            "type": "bar",
            "name": name,
            "x": labels,
            "y": [rows[s]["memory_bytes_per_gpu"][key] / gib for s in shardcost.STRATEGIES],
            "marker": {"color": colour},
            "hovertemplate": f"%{{x}}: %{{y:.3g}} GiB of {name}<extra></extra>",
        }
        for key, name, colour in PARTS
    ]
    totals = [rows[s]["memory_bytes_per_gpu"]["total"] / gib for s in shardcost.STRATEGIES]
    top = max(*totals, have / gib) * 1.15
    marks = [
        {"x": x, "y": t, "text": f"{fmt.sig(t, 3)}{'' if rows[s]['fits'] else ' ✗'}",
         "showarrow": False, "yanchor": "bottom"}
        for x, t, s in zip(labels, totals, shardcost.STRATEGIES, strict=True)
    ]  # fmt: skip
    # the line named in the legend, with what the crosses mean: written on the line, the name
    # ran across the bars on a phone
    line = {
        "type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": have / gib, "y1": have / gib,
        "line": {"dash": REFERENCE_DASH, "width": 2, "color": NEUTRAL}, "showlegend": True,
        "name": f"{gpu}'s memory, {fmt.sig(have / gib, 3)} GiB (✗: does not fit)",
    }  # fmt: skip
    return {
        "data": data,
        "layout": fig.layout(
            fig.axis(
                "",
                type="category",
                fixedrange=True,
                tickvals=labels,
                ticktext=[t.replace(" / ", " /<br>") for t in labels],
            ),
            fig.axis("model states per GPU (GiB)", range=[0, top], fixedrange=True),
            barmode="stack",
            shapes=[line],
            annotations=marks,
        ),
    }


def _time_part(rows: dict, compute_s: float) -> views.Part:
    """Time per step as bars from zero, one per strategy: the compute (the same for all) and the
    communication on top, not overlapped; so that a 5 % difference looks like one."""
    labels = _labels()
    comm = [rows[s]["comm_s"] for s in shardcost.STRATEGIES]
    steps = [rows[s]["step_s"] for s in shardcost.STRATEGIES]
    hover = "%{y}: %{x:.3g} s of "
    data = [
        {"type": "bar", "orientation": "h", "name": "compute", "y": labels,
         "x": [compute_s] * len(labels), "marker": {"color": COMPUTE},
         "hovertemplate": hover + "compute<extra></extra>"},
        {"type": "bar", "orientation": "h", "name": "communication (not overlapped)", "y": labels,
         "x": comm, "marker": {"color": COMM},
         "hovertemplate": hover + "communication<extra></extra>"},
    ]  # fmt: skip
    heads, cells = records.columns([
        records.Column("strategy", records.AS_IS, lambda row: row[0]),
        records.Column("compute", records.TIME, lambda row: compute_s),
        records.Column("communication", records.TIME, lambda row: row[1]),
        records.Column("step, no overlap", records.TIME, lambda row: row[2]),
    ], list(zip(labels, comm, steps, strict=True)), " ")  # fmt: skip
    unit = heads[3].rsplit("(", 1)[1].rstrip(")")
    shown = [f"{row[3]} {unit}" for row in cells]  # ranked at the precision the table prints
    return views.part(
        figure={
            "data": data,
            "layout": fig.layout(
                fig.axis("time per step, no overlap (s)", range=[0, max(steps) * 1.05]),
                fig.axis("", type="category", autorange="reversed", fixedrange=True),
                barmode="stack",
                margin={**fig.MARGIN, "l": 110},  # room for the strategies' names
            ),
        },
        summary=(
            f"Time per step with no overlap: compute {fmt.seconds(compute_s)} for every "
            f"strategy, plus communication from {fmt.seconds(min(comm))} to "
            f"{fmt.seconds(max(comm))}; {_ranked(labels, steps, shown)}."
        ),
        table={"columns": heads, "rows": cells},
    )


def _tokens_text(o: dict) -> str:
    """The overlap threshold with the B it comes from, so the formula can be checked by hand."""
    if not o["bus_GBps"]:
        return "at once: nothing to send"
    return (
        f"{fmt.sig_up(o['critical_tokens_per_gpu'], 3)} tokens per GPU "
        f"(B = {fmt.sig(o['bus_GBps'], 3)} GB/s)"
    )


MEMORY_HEADLINE = (
    ("fits", "Fit in the GPU's memory"),
    ("ddp_comm", "DDP's communication"),
    ("zero3_comm", "ZeRO-3 / FSDP's communication"),
)
MEMORY_READOUTS = (
    ("compute", "Compute per step"),
    ("ratio", "ZeRO-3 bytes ÷ DDP bytes"),
    ("zero3_tokens", shardcost.hides("zero3")),
    ("hsdp_tokens", shardcost.hides("hsdp")),
)


def _table(rows: dict) -> dict:
    """One row per strategy; the times in one unit per column, named in its head (records)."""
    gib, rec = hardware.GIB, shardcost.RECORD

    def memory(key: str) -> records.Column:
        get = lambda r: fmt.sig(r["memory_bytes_per_gpu"][key] / gib, 3)  # noqa: E731
        return records.Column(f"{key} (GiB)", records.AS_IS, get)

    columns = [
        records.Column("strategy", records.AS_IS, lambda r: r["label"]),
        *(memory(k) for k in ("params", "grads", "optimizer", "total")),
        *(records.Column(rec.label(k), rec[k].kind, lambda r, k=k: r[k])
          for k in ("comm_bytes_per_gpu", "comm_s", "step_s")),
        records.Column("fits", records.AS_IS, lambda r: "yes" if r["fits"] else "no"),
    ]  # fmt: skip
    heads, cells = records.columns(columns, [rows[s] for s in shardcost.STRATEGIES], " ")
    return {"columns": heads, "rows": cells}


def facts() -> dict:
    """The figures the shards page's prose quotes, from the chart's default state."""
    p = _resolve(validated({}, MEMORY))
    out = strategies(p)
    rows = out["strategies"]
    big = _resolve(validated({"model": "llama3-70b"}, MEMORY))
    big_rows = strategies(big)["strategies"]
    return (
        _memory_facts(p, out, big_rows)
        | _overlap_facts(p, out)
        | _hsdp_facts(rows)
        | _example_facts(p)
        | {"shard_nccl": nccl.NCCL_VERSION}
    )


def _gib(x: float) -> str:
    return fmt.sig(x / hardware.GIB, 3)


def _memory_facts(p: dict, out: dict, big_rows: dict) -> dict:
    """Model states per GPU of each strategy, for the chart's default and for the 70B."""
    rows = out["strategies"]
    return {
        "shard_model": out["model"].label,
        "shard_gpus": p["gpus"],
        "shard_gpu_gib": _gib(out["gpu_memory_bytes"]),
        **{f"shard_{s}_gib": _gib(rows[s]["memory_bytes_per_gpu"]["total"]) for s in rows},
        "shard_ratio": fmt.sig(
            rows["zero3"]["comm_bytes_per_gpu"] / rows["ddp"]["comm_bytes_per_gpu"], 3
        ),
        "shard_ddp_comm": fmt.seconds(rows["ddp"]["comm_s"]),
        "shard_zero3_comm": fmt.seconds(rows["zero3"]["comm_s"]),
        "shard_big_model": calculator.model_for("llama3-70b", None).label,
        "shard_big_ddp_gib": _gib(big_rows["ddp"]["memory_bytes_per_gpu"]["total"]),
        "shard_big_zero3_gib": _gib(big_rows["zero3"]["memory_bytes_per_gpu"]["total"]),
        "shard_big_fits": ", ".join(
            big_rows[s]["label"] for s in shardcost.STRATEGIES if big_rows[s]["fits"]
        ),
    }


def _overlap_facts(p: dict, out: dict) -> dict:
    """T ≳ (n − 1)/n · F/B with the page's own F and B: the tokens are that formula's value,
    rounded up at the digits printed."""
    z3, hs = out["overlap"]["zero3"], out["overlap"]["hsdp"]
    gpu = hardware.find(hardware.GPUS, p["gpu"], "gpu")
    nic = hardware.find(hardware.NETWORKS, p["network"], "network")["GBps"] * 8
    system = nccl.System(p["gpu"], p["gpus"], p["gpus_per_node"], p["gpus_per_node"], nic)
    ring = nccl.graphs(system)["Ring"]
    return {
        # thresholds rounded up: at the printed figure the collectives do hide
        "shard_tokens": fmt.sig_up(z3["critical_tokens_per_gpu"], 3),
        "shard_hsdp_tokens": fmt.sig_up(hs["critical_tokens_per_gpu"], 3),
        "shard_peak_tflops": fmt.sig(gpu.peak_bf16_tflops, 3),
        "shard_mfu_pct": fmt.sig(p["mfu"] * 100, 3),
        "shard_flops_tflops": fmt.sig(z3["flops_per_s"] / 1e12, 3),
        "shard_bus": fmt.sig(z3["bus_GBps"], 3),
        "shard_hsdp_bus": fmt.sig(hs["bus_GBps"], 3),
        "shard_block_bytes": fmt.nbytes(memory.BYTES_PER_PARAM["grads"] * z3["block_params"]),
        "shard_block_band": performance.words(
            nccl.band_class(system), int(memory.BYTES_PER_PARAM["grads"] * z3["block_params"])
        ),
        "shard_channels": ring.n_channels,
        "shard_channel_GBps": fmt.sig(ring.bw_inter, 3),
        "shard_bus_ceiling": fmt.sig(ring.n_channels * ring.bw_inter, 3),
    }


def _hsdp_facts(rows: dict) -> dict:
    """HSDP against ZeRO-3: its bytes across servers per server (DDP's), and its times."""
    hsdp = rows["hsdp"]["collectives"]
    across = next(c for c in hsdp if c["group"] == "across")
    server_ag = next(c for c in hsdp if c["collective"] == "allgather")
    all_ag = next(c for c in rows["zero3"]["collectives"] if c["collective"] == "allgather")
    g = server_ag["gpus"]
    return {
        "shard_hsdp_comm": fmt.seconds(rows["hsdp"]["comm_s"]),
        "shard_hsdp_cross": fmt.nbytes(g * across["bytes_sent_per_gpu"]),
        "shard_hsdp_across_s": fmt.seconds(across["time_s"]),
        "shard_hsdp_ag_s": fmt.seconds(server_ag["time_s"]),
        "shard_zero3_ag_s": fmt.seconds(all_ag["time_s"]),
    }


def _example_facts(p: dict) -> dict:
    """The course's running example (a 7B model on 64 GPUs) under DDP and ZeRO-2, from memory.py."""
    n, g = p["gpus"], p["gpus_per_node"]
    ddp = memory.model_states("ddp", EXAMPLE_PARAMS, n, g)
    return {
        "shard_example": (f"{EXAMPLE_PARAMS / 1e9:g}B", EXAMPLE_PARAMS),
        "shard_example_ddp_gib": _gib(ddp),
        "shard_example_ddp_gb": fmt.sig(ddp / 1e9, 3),
        "shard_example_zero2_gib": _gib(memory.model_states("zero2", EXAMPLE_PARAMS, n, g)),
    }


RECORDS = (
    Widget(
        "shard_stepper",
        shard_stepper,
        STEPPER,
        views.STEPPER,
        label=(
            "Sharded step: reduce-scatter, optimizer step on each GPU's shard, all-gather, "
            "and the check against DDP"
        ),
        hint="At step 0 you can edit any GPU's gradient.",
        headline=STEPPER_HEADLINE,
        readouts={"main": STEPPER_READOUTS},
    ),
    Widget(
        "shard_memory",
        shard_memory,
        MEMORY,
        views.CHART,
        label=("Model states per GPU and time per step for DDP, ZeRO-1, ZeRO-2, ZeRO-3 and HSDP"),
        headline=MEMORY_HEADLINE,
        readouts={"main": MEMORY_READOUTS},
        layout=(
            ("readouts", "main"),
            ("chart", "Each strategy's memory, bytes and time as a table"),
            ("chart", "Time per step as a table", "time"),
        ),
        extras=("_predict",),
        predict=predict_memory,
    ),
)


def _ranked(labels: list[str], steps: list[float], shown: list[str]) -> str:
    """The fastest and the slowest strategies, as printed: a summary ranks only what differs at
    its precision, so strategies whose step prints the same are named together, and when every
    step prints the same none is called faster."""
    fast, slow = shown[steps.index(min(steps))], shown[steps.index(max(steps))]
    if fast == slow:
        return f"every strategy takes {fast} a step"

    def named(text: str) -> str:
        return fmt.in_words([label for label, s in zip(labels, shown, strict=True) if s == text])

    verb = "is" if shown.count(fast) == 1 else "are"
    return f"{named(fast)} {verb} the fastest at {fast}, {named(slow)} the slowest at {slow}"
