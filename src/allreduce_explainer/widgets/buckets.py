"""PyTorch DDP's gradient buckets, overlapping all-reduce with the backward pass."""

from __future__ import annotations

import math

from .. import api, fmt, nccl, performance, records
from ..catalog import models
from ..errors import ParamError
from ..exercises.check import check_choice, close
from ..exercises.check import verdict as judged
from ..exercises.units import BYTES
from ..nccl import GPU_SPECS
from ..palette import NEUTRAL, SERIES
from ..params import ROWS, Param, api_args, narrowed, spec, validated
from ..sources import REFERENCE_DASH
from ..training import calculator, ddp
from . import Widget, views
from . import figures as fig
from .common import gap, grad_dtype, read_answer

# The widget opens on 64 servers of 8 GPUs, where both ends of the bucket-size trade-off show
# (tiny buckets pay NCCL's fixed cost of a call many times); one server hides almost all of it.
DEFAULT_GPUS = 512
FIRST = (
    ("1mib", "1 MiB (cap unset; PyTorch ≤ 2.3)"),
    ("cap", "the cap (PyTorch ≥ 2.4)"),
)
SPEC = spec(
    narrowed(api.DDP["model"], label="Model", kind="choice",
             choices=tuple((k, calculator.model_label(k)) for k in models.MODELS)),
    narrowed(api.DDP["batch"], label="Samples per GPU", default=ddp.DEFAULT_BATCH["gpt2"],
             hi=4096),
    Param("batch_model", "gpt2", "data"),  # the model the batch was chosen for: a new one resets it
    narrowed(api.DDP["gpu"], label="GPU", kind="choice", choices=tuple((g, g) for g in GPU_SPECS)),
    narrowed(api.DDP["gpus"], label="GPUs", default=DEFAULT_GPUS, lo=2, hi=4096),
    narrowed(api.DDP["gpus_per_node"], label="GPUs (and cards) per server", default=8, hi=8,
             optional=False),
    narrowed(api.DDP["bucket_cap_mb"], label="Bucket cap (MiB)", default=ddp.DEFAULT_CAP_MB,
             lo=0.001, hi=1000000, optional=False),
    # the first bucket: the cap when set, from PyTorch 2.4 (pull request 121640); else 1 MiB
    Param("first_bucket", "1mib", "choice", "First bucket", choices=FIRST),
    grad_dtype("fp32", "fp32", "bf16"),  # api.ddp takes its bytes, grad_bytes
    narrowed(api.DDP["mfu"], label="Share of peak FLOP/s", lo=0.01, step=0.05),
    narrowed(api.DDP["inter_bw"], "nic_gbps", as_flag=True,
             label="Network card (Gb/s, one per GPU)", lo=1, hi=3200),
    ROWS,
)  # fmt: skip
# the backward and all-reduce lanes (Okabe & Ito blues), each in two shades: odd and even buckets
COLOURS = (("#0072B2", "#005A8C"), ("#56B4E9", "#3A9BD6"))
EXPOSED = SERIES["naive"]


def _params(params) -> dict:
    p = validated(params, SPEC)
    if p["batch_model"] != p["model"] or p["batch"] is None:
        p["batch"], p["batch_model"] = ddp.DEFAULT_BATCH[p["model"]], p["model"]
    return p


def _args(p: dict) -> tuple[dict, float | None]:
    """api.ddp's arguments but the cap, and the first bucket's size (None: the cap's)."""
    first = ddp.DEFAULT_FIRST_MB if p["first_bucket"] == "1mib" else None
    args = {k: v for k, v in api_args(p, SPEC, api.DDP).items() if k != "bucket_cap_mb"}
    if p["gpus"] <= p["gpus_per_node"]:  # one server: no card (api.ddp refuses one it can't use)
        args.pop("inter_bw")
    return args | {"grad_bytes": calculator.GRAD_BYTES[p["grad_dtype"]]}, first


def ddp_buckets(params=None) -> dict:
    """DDP buckets: one steady-state backward pass under DDP, and the sweep over bucket sizes."""
    p = _params(params)
    args, first = _args(p)
    r = api.ddp(**args, bucket_cap_mb=p["bucket_cap_mb"], first_bucket_mb=first, sweep=True)
    default, best = api.ddp(**args), _best(r, args, first)
    m = models.get(p["model"])
    return views.chart(
        params=p,
        main=_timeline(r, p["rows"] == "all"),
        figures={"sweep": _sweep(r["sweep"], best, default, r, p)},
        data={"result": views.result(r)},
        readouts={
            "model": f"{m.label}: {m.params:,} parameters in {len(m.tensors())} tensors",
            "gradient": r.text("gradient_bytes"),
            "batch": f"{r['batch']} × {m.sample} per GPU",
            "backward": ms(r["backward_s"]),
            "allreduce": ms(r["allreduce_total_s"]),
            "exposed": ms(r["exposed_s"]),
            "buckets": str(len(r["buckets"])),
            "best": cap_text(best["bucket_mb"]),
            "best_exposed": ms(best["exposed_s"]),
            "default_exposed": ms(default["exposed_s"]),
            "advice": advice(default, best, r["sweep"][-1]),
            "algorithm": f"NCCL's choice: {r['algorithm']}",
            "first": r.text("first_bucket_bytes"),
        },
        prediction=views.prediction(
            id=PREDICTION_ID,
            question=(
                "Will the best bucket cap, the one that leaves the least all-reduce exposed "
                f"after the backward pass, be above or below PyTorch's default of "
                f"{cap_text(ddp.DEFAULT_CAP_MB)}? Type above or below, or the cap you expect."
            ),
            example="above, below or a cap in MiB",
            figures=["sweep"],
            readouts=[key for key, _ in READOUTS["sweep"]],
        ),
    )


PREDICTION_ID = "buckets-best-cap"
SIDES = ("above", "below")


def predict_buckets(params, answer) -> dict:
    """The reader's commitment, before the sweep: will the best cap be above or below PyTorch's
    default (a word, or a cap in MiB, whose side is judged and whose gap to the best is told)?
    The verdict gives the best cap, the exposed time it leaves against the default's, and
    whether one bucket of everything beats the default."""
    p = _params(params)
    args, first = _args(p)
    word = check_choice(answer, "", SIDES)
    cap = None if word.get("counts", True) else read_answer(answer, BYTES, "MiB") / ddp.MIB
    lo, hi = SPEC["bucket_cap_mb"].lo, SPEC["bucket_cap_mb"].hi
    if cap is not None and not lo <= cap <= hi:
        raise ParamError("answer", f"A bucket cap is between {lo:g} and {hi:,.0f} MiB.")
    default = ddp.DEFAULT_CAP_MB
    r = api.ddp(**args, bucket_cap_mb=default, first_bucket_mb=first, sweep=True)
    best, whole = _best(r, args, first), r["sweep"][-1]
    said = _side(cap, default) if cap is not None else _said(answer)
    right = _side(best["bucket_mb"], default)
    times = best["bucket_mb"] / default
    said_text = (
        gap(cap, best["bucket_mb"], cap_text)
        if cap is not None
        else f"you said {said}; the best is {fmt.sig(times, 2)} times the default"
        if times >= 1
        else f"you said {said}; the default is {fmt.sig(1 / times, 2)} times the best"
    )
    beats = "beats" if whole["exposed_s"] < r["exposed_s"] else "does not beat"
    text = (
        f"The best cap is {cap_text(best['bucket_mb'])}, leaving {ms(best['exposed_s'])} exposed "
        f"against the default's {ms(r['exposed_s'])}: {said_text}. One bucket of everything "
        f"({ms(whole['exposed_s'])}) {beats} the default."
    )
    if said == right:
        return judged(True, f"Right. {text}")
    why = {
        "above": "Larger buckets pay NCCL's fixed cost of a call fewer times, but start their "
        "all-reduce later; here smaller ones win.",
        "below": "Smaller buckets start their all-reduce sooner, but each pays NCCL's fixed cost "
        "of a call; here fewer, larger ones win.",
        "at": "The default is not the best here.",
    }
    return judged(False, f"{why.get(said, 'Not quite.')} {text}")


def _side(cap: float, default: float) -> str:
    """Where a cap lies against PyTorch's default: above, below, or at it (within 1 %)."""
    return "at" if close(cap, default, 0.01) else "above" if cap > default else "below"


def _said(answer: str) -> str:
    """The side a word names (check_choice read it: a unique prefix of SIDES)."""
    t = answer.strip().lower()
    return next(c for c in SIDES if c.startswith(t) or t.startswith(c))


def _best(r: dict, args: dict, first: float | None) -> dict:
    """api.ddp's best cap (the least exposed time over every cap, with the run's first
    bucket) as a row of its sweep: the run at that cap."""
    at = api.ddp(**args, bucket_cap_mb=r["best_bucket_mb"], first_bucket_mb=first)
    return {
        "bucket_mb": r["best_bucket_mb"],
        "buckets": len(at["buckets"]),
        "exposed_s": at["exposed_s"],
        "allreduce_total_s": at["allreduce_total_s"],
    }


def _cap(row: dict) -> float:
    return row["bucket_mb"]


def cap_text(mb: float) -> str:
    """A cap in MiB with every digit it holds: the best cap is the shortest decimal that gives
    its buckets (ddp.shortest_cap), and a digit fewer may give others (63.091, not 63)."""
    return f"{fmt.sig(mb, 12)} MiB"


# the figures of api.ddp's answer under its record's labels, as `ddp` prints them (one name a door)
HEADLINE = (
    ("exposed", ddp.RECORD.heading("exposed_s")),
    ("allreduce", ddp.RECORD.heading("allreduce_total_s")),
    ("backward", ddp.RECORD.heading("backward_s")),
)
READOUTS = {
    "inputs": (
        ("model", "Model"),
        ("gradient", ddp.RECORD.heading("gradient_bytes")),
        ("batch", "Batch"),
        ("algorithm", "All-reduce by"),
    ),
    "timeline": (
        ("first", ddp.RECORD.heading("first_bucket_bytes")),
        ("buckets", "Buckets"),
    ),
    "sweep": (
        ("best", records.heading(ddp.BEST_CAP)),
        ("best_exposed", ddp.RECORD.heading("best_exposed_s")),
        ("default_exposed", "Exposed with PyTorch's default"),
        ("advice", "What to do"),
    ),
}


# PyTorch's default is "as good as the best cap" when it leaves at most this much more exposed
NEAR_BEST = 1.1


def advice(default: dict, best: dict, whole: dict) -> str:
    """What the sweep says to do, from the numbers on the screen: keep PyTorch's default when it
    is as good as the best cap, else try the best cap (and say when even one bucket of
    everything, the sweep's last row, beats the default, which the page's lesson turns on)."""
    default, least, whole = default["exposed_s"], best["exposed_s"], whole["exposed_s"]
    cap = f"bucket_cap_mb={fmt.sig(best['bucket_mb'], 12)}"
    if default <= NEAR_BEST * least:
        return "PyTorch's default is as good as the best cap here: keep it."
    text = f"PyTorch's default leaves {fmt.sig(default / least, 2)} × the best cap's: try {cap}."
    if whole < default:
        text += f" Even one bucket of everything ({ms(whole)}) beats the default."
    return text


def _ms(x: float) -> float:
    return x * 1e3


def ms(x: float) -> str:
    """A duration in milliseconds, to three significant digits as the sweep's table gives them:
    the page compares every time it gives in one unit and at one precision (at two digits the
    headline's 12,000 ms of all-reduce read as a contradiction of the table's 12,300)."""
    return f"{fmt.sig(_ms(x), 3)} ms"


# The timeline's lanes, bottom to top, at y = 0, 1, 2; a bucket is a box of LANE_HEIGHT
LANES = ("exposed", "all-reduce", "backward")
LANE_HEIGHT = 0.65


def _lane(name: str, y: float, spans: list, colours: tuple[str, str], k: list, template: str):
    """One lane of the timeline as two traces: a box per (start, end) span, the odd buckets in
    one shade and the even in the other, each trace one filled polygon with no outline that
    runs along the lane's foot from box to box (the runs between boxes have no area, so only
    the boxes are painted). Plotly draws an outline as one SVG path per box (884 a lane for
    Llama 3 405B) and splits a trace at every gap into pieces it handles one by one; one
    gapless polygon per trace is a quarter of that redraw (bench/site.py's "joined-lanes").
    `k` numbers the spans (the buckets), shown on hover by `template`; the table gives the rest.
    """
    lo, hi = y - LANE_HEIGHT / 2, y + LANE_HEIGHT / 2
    traces = []
    for parity, colour in enumerate(colours):
        xs, ys, custom = [], [], []
        for (a, b), c in list(zip(_drawn(spans), k, strict=True))[parity::2]:
            xs += [a, a, b, b]  # up from the foot, across, down: "toself" closes the polygon
            ys += [lo, hi, hi, lo]
            custom += [c] * 4
        traces.append(
            {
                "type": "scatter",
                "mode": "none",
                "name": name,
                "legendgroup": name,
                "showlegend": parity == 0,
                "x": xs,
                "y": ys,
                "fill": "toself",
                "fillcolor": colour,
                "hoveron": "points",
                "customdata": custom,
                "hovertemplate": template + "<extra></extra>",
            }
        )
    return traces


def _drawn(spans: list) -> list:
    """Spans in ms rounded to a ten-thousandth of the longest end or finer, for drawing (a
    pixel is hundreds of times wider): the state stays small at hundreds of buckets (Llama 3
    405B's 35 s pass in whole ms); the table gives the figures."""
    end = max((b for _, b in spans), default=0.0)
    digits = max(0, 4 - math.floor(math.log10(end))) if end > 0 else 4
    if digits == 0:
        return [(round(a), round(b)) for a, b in spans]
    return [(round(a, digits), round(b, digits)) for a, b in spans]


def _timeline(r: dict, every: bool) -> views.Part:
    rows = r["bucket_timeline"]
    ready = [_ms(b["ready_s"]) for b in rows]
    k = list(range(1, len(rows) + 1))
    data = [
        *_lane(
            "backward (a box: a bucket's gradients)",
            LANES.index("backward"),
            list(zip([0.0, *ready[:-1]], ready, strict=True)),
            COLOURS[0],
            k,
            "gradients of bucket %{customdata}: ready at %{x:.3g} ms",
        ),
        *_lane(
            "all-reduce per bucket",
            LANES.index("all-reduce"),
            [(_ms(b["start_s"]), _ms(b["end_s"])) for b in rows],
            COLOURS[1],
            k,
            "all-reduce of bucket %{customdata}: %{x:.3g} ms",
        ),
    ]
    if r["exposed_s"] > 0:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"exposed: {ms(r['exposed_s'])}",
                "x": [_ms(r["backward_s"]), _ms(r["comm_end_s"])],
                "y": [LANES.index("exposed")] * 2,
                "line": {"color": EXPOSED, "width": 10},
                "hoverinfo": "skip",
            }
        )
    end = max(r["backward_s"], r["comm_end_s"])
    return views.part(
        figure={
            "data": data,
            "layout": {
                "xaxis": {
                    "title": {"text": "time into the backward pass (ms)"},
                    "range": [0, _ms(end) * 1.03],
                },
                "yaxis": {
                    "tickvals": list(range(len(LANES))),
                    "ticktext": list(LANES),
                    "showgrid": False,
                    "zeroline": False,
                    "range": [-0.6, 2.6],
                    "fixedrange": True,
                },
                "shapes": [
                    {
                        "type": "line",
                        "x0": _ms(r["backward_s"]),
                        "x1": _ms(r["backward_s"]),
                        "y0": 0,
                        "y1": 1,
                        "yref": "paper",
                        "line": {"dash": REFERENCE_DASH, "width": 2, "color": NEUTRAL},
                    }
                ],
                "legend": dict(fig.LEGEND_BELOW),
                "margin": {**fig.MARGIN_BELOW, "l": 80},  # room for the rows' names
            },
        },
        summary=(
            f"The backward pass takes {ms(r['backward_s'])} and fills "
            f"{len(rows)} buckets; their all-reduces take {ms(r['allreduce_total_s'])} "
            f"in all and end at {ms(r['comm_end_s'])}, leaving "
            f"{ms(r['exposed_s'])} exposed."
        ),
        table=views.table(
            ["bucket", "size", "tensors", "ready (ms)", "start (ms)", "end (ms)", "NCCL's pick"],
            list(enumerate(rows, 1)),
            _bucket_row,
            every,
        ),
    )


def _bucket_row(item: tuple[int, dict]) -> list:
    k, b = item
    times = (records.in_unit(b[key], "ms") for key in ("ready_s", "start_s", "end_s"))
    size = records.ALONE[records.BINARY](b["bytes"])  # as the CLI's table and the caps: MiB
    return [k, size, b["tensors"], *times, f"{b['algorithm']}/{b['protocol']}"]


def _sweep_top(ys: list[float], marked: list[float]) -> float:
    """The sweep's y axis top: its highest point, unless the smallest caps (thousands of
    buckets, each paying NCCL's fixed cost) rise more than ten times above every marked point
    (best, PyTorch's default, the reader's); then four times the highest marked one, and the
    curve runs off the top, so that the caps that matter are told apart (Llama 3 405B: 8 s at
    0.1 MiB against 63 ms at the best)."""
    high = max(marked)
    return 4 * high if high > 0 and max(ys) > 10 * high else max(*ys, high)


def _off_chart(xs: list[float], ys: list[float], best: float, top: float) -> str:
    """The sentence for the caps whose exposed time runs above the chart's axis, if any: small
    caps (many buckets, each a call) and large ones (the last buckets all-reduced after the
    backward pass), either side of the best."""
    low = [x for x, y in zip(xs, ys, strict=True) if y > top and x < best]
    high = [x for x, y in zip(xs, ys, strict=True) if y > top and x > best]
    sides = ([f"below {fmt.sig(max(low), 2)} MiB"] if low else []) + (
        [f"above {fmt.sig(min(high), 2)} MiB"] if high else []
    )
    if not sides:
        return ""
    return (
        f" Caps {' and '.join(sides)} leave more than {fmt.sig(top, 3)} ms exposed "
        f"(up to {fmt.sig(max(ys), 3)} ms), above the chart."
    )


def _sweep(grid: list[dict], best: dict, default: dict, current: dict, p: dict) -> views.Part:
    """The sweep's caps with the best cap among them (the curve is jagged: a grid of caps
    passes beside its least point), drawn and tabled."""
    rows = sorted([*grid, best], key=_cap)
    xs = [row["bucket_mb"] for row in rows]
    ys = [_ms(row["exposed_s"]) for row in rows]
    marked = [_ms(x["exposed_s"]) for x in (best, default, current)]
    top = _sweep_top(ys, marked)
    what = "first bucket 1 MiB" if p["first_bucket"] == "1mib" else "first bucket at the cap too"
    exposed = fig.line(f"exposed ({what})", xs, ys, SERIES["ring"], marker={"size": 5})
    data = [
        {**exposed, "hovertemplate": "%{x:.3g} MiB: %{y:.3g} ms<extra></extra>"},
        fig.dots(
            f"best: {cap_text(best['bucket_mb'])}",
            [best["bucket_mb"]],
            [_ms(best["exposed_s"])],
            SERIES["tree"],
            "star",
            16,
        ),
        fig.dots(
            "PyTorch default",
            [ddp.DEFAULT_CAP_MB],
            [_ms(default["exposed_s"])],
            SERIES["hierarchical"],
            "diamond",
            13,
        ),
        fig.you_are_here(
            f"your setting ({fmt.sig(p['bucket_cap_mb'], 3)} MiB)",
            p["bucket_cap_mb"],
            [_ms(current["exposed_s"])],
            legend=True,
        ),
    ]
    return views.part(
        figure={
            "data": data,
            "layout": fig.layout(
                fig.log_axis("bucket cap (MiB)", (xs[0] / 10**0.1, xs[-1] * 10**0.1)),
                fig.axis("exposed (ms)", range=[0, top * 1.1 if top > 0 else 1]),
                fig.LEGEND_BELOW,
                fig.MARGIN_BELOW,
            ),
        },
        summary=(
            f"Exposed communication against bucket cap, from {fmt.sig(xs[0], 2)} MiB to the whole "
            f"model ({fmt.sig(xs[-1], 3)} MiB): least at {cap_text(best['bucket_mb'])} "
            f"({ms(best['exposed_s'])}); PyTorch's default leaves "
            f"{ms(default['exposed_s'])}.{_off_chart(xs, ys, best['bucket_mb'], top * 1.1)}"
        ),
        table={
            "columns": ["bucket cap (MiB)", "buckets", "exposed (ms)", "all-reduce busy (ms)"],
            "rows": [
                [
                    fmt.sig(r["bucket_mb"], 3),
                    r["buckets"],
                    fmt.sig(_ms(r["exposed_s"]), 3),
                    fmt.sig(_ms(r["allreduce_total_s"]), 3),
                ]
                for r in rows
            ],
        },
    )


def facts() -> dict[str, str]:
    """DDP buckets' figures, timed by the fitted time of NCCL's choice: GPT-2 small on the
    widget's default layout (64 servers of 8 H100s, "many") and on 8 H100s in one server ("one")."""
    out = {}
    m = models.get("gpt2")
    out["ddp_gpt2_params"] = f"{m.params:,}"
    out["ddp_gpt2_tensors"] = str(len(m.tensors()))
    out["ddp_resnet_params"] = f"{models.get('resnet50').params:,}"
    out["ddp_resnet_gflop"] = fmt.sig(models.get("resnet50").forward_flops / 1e9, 2)
    out["ddp_bert_params"] = f"{models.get('bert-base').params:,}"
    layouts = {"one": 8, "many": DEFAULT_GPUS}
    for key, gpus in layouts.items():
        # PyTorch's default (cap unset), and the sweep with the widget's default first bucket
        r = api.ddp(model="gpt2", gpus=gpus, gpus_per_node=8, sweep=True)
        best = _best(r, {"model": "gpt2", "gpus": gpus, "gpus_per_node": 8}, ddp.DEFAULT_FIRST_MB)
        out[f"ddp_{key}_gpus"] = str(gpus)
        out[f"ddp_{key}_servers"] = str(gpus // 8)
        out[f"ddp_{key}_backward"] = ms(r["backward_s"])
        out[f"ddp_{key}_allreduce"] = ms(r["allreduce_total_s"])
        out[f"ddp_{key}_exposed"] = ms(r["exposed_s"])
        out[f"ddp_{key}_buckets"] = str(len(r["buckets"]))
        out[f"ddp_{key}_best"] = cap_text(best["bucket_mb"])
        out[f"ddp_{key}_best_exposed"] = ms(best["exposed_s"])
        out[f"ddp_{key}_default_over_best"] = fmt.sig(r["exposed_s"] / best["exposed_s"], 2)
        out[f"ddp_{key}_hidden"] = fmt.percent(1 - r["exposed_s"] / r["allreduce_total_s"])
        out[f"ddp_{key}_tiny"] = ms(r["sweep"][0]["exposed_s"])
        out[f"ddp_{key}_tiny_buckets"] = str(r["sweep"][0]["buckets"])
        out[f"ddp_{key}_whole"] = ms(r["sweep"][-1]["exposed_s"])
        out[f"ddp_{key}_algorithm"] = r["algorithm"]
        if key == "many":
            out["ddp_gradient"] = r.text("gradient_bytes")
    gpt2 = models.TRANSFORMERS["gpt2"][1]
    out["ddp_wte"] = fmt.binary_bytes(gpt2.vocab * gpt2.d * calculator.GRAD_BYTES["fp32"])
    out["ddp_tokens"] = f"{ddp.DEFAULT_BATCH['gpt2'] * m.tokens:,}"
    cap = int(ddp.DEFAULT_CAP_MB * (1 << 20))
    out["ddp_cap_size"] = f"{ddp.DEFAULT_CAP_MB:g} MiB"
    out["ddp_first_size"] = f"{ddp.DEFAULT_FIRST_MB:g} MiB"
    out["ddp_sweep_low"] = f"{ddp.SWEEP_LOW_MB:g} MiB"
    many = nccl.band_class(nccl.System(api.DEFAULT_GPU, DEFAULT_GPUS, 8))
    out["ddp_cap_band"] = performance.words(many, cap)
    return out


RECORDS = (
    Widget(
        "ddp_buckets",
        ddp_buckets,
        SPEC,
        views.CHART,
        headline=HEADLINE,
        readouts=READOUTS,
        result=ddp.RECORD,
        # each model's first answer (its tensors, the sweep's bucketings: Llama 3 405B about
        # 40 ms in the browser against 12-17 after), so that a reader's first choice of model
        # is as quick as the next
        warm=tuple({"model": key} for key in models.MODELS),
        in_snapshot=False,
        predict=predict_buckets,
    ),
)
