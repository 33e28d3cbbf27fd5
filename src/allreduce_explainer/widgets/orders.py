"""Stage 3's order lab: the same sum in each method's order, on the reader's numbers.

One call of api.orders per setting (the gradient alone, and inside the bucket the reader picks):
each method's result per element (the readouts list them, so the default shows where the
methods part), its ulps from the exactly rounded sum, whether every GPU holds the same bits
(each GPU's copy computed along its own path), and whether NCCL's pick changes bits between the
two sizes. A second chart
sweeps n: a BF16 ring's error against reducing the same BF16 gradient in FP32 (rounded once at
the end), with the cost of the FP32 reduction (twice the bytes) from NCCL's model.
"""

from __future__ import annotations

import math
from functools import lru_cache

from .. import api, fmt, nccl, records
from ..dtypes import BF16, FP32
from ..palette import GPU_COLOURS, SERIES
from ..params import Param, api_args, narrowed, spec, validated
from ..simulation import orders as engine
from ..sources import FITTED
from . import Widget, views
from . import figures as fig

LENGTH = 8  # elements shown: one row each in the table
METHODS = ("serial", "ring", "tree", "nvls")
METHOD_TEXT = {"serial": "serial, in GPU order", "ring": "NCCL ring", "tree": "NCCL trees",
               "nvls": "NVLS, FP32 inside"}  # fmt: skip
SHORT = {"serial": "serial", "ring": "ring", "tree": "trees", "nvls": "NVLS"}
COLOURS = {"serial": GPU_COLOURS[0], "ring": SERIES["ring"], "tree": SERIES["tree"],
           "nvls": GPU_COLOURS[6]}  # fmt: skip
MIB = 1 << 20
BUCKETS = (("1", "1 MiB"), ("25", "25 MiB (DDP's default)"), ("256", "256 MiB"))  # MiB
SWEEP_GPUS = (2, 4, 8, 16, 32, 64, 128, 256)
SWEEP_LENGTH = 32

ORDERS = spec(
    narrowed(api.ORDERS["dtype"], label="Number type",
             choices=tuple((d, d.upper()) for d in api.ORDER_DTYPES)),
    narrowed(api.ORDERS["gpus"], label="GPUs", hi=64),
    narrowed(api.ORDERS["kind"], label="Values", default="probe",
             choices=(("random", "random gradient"), ("wide", "wide magnitudes"),
                      ("probe", "cancellation probe 1e8, 1, −1e8, 1"))),
    Param("bucket_mb", "25", "choice", "Bucket it sits in", choices=BUCKETS),
    narrowed(api.ORDERS["seed"], label="", default=1, hi=2**53),
)  # fmt: skip


def orders(params=None) -> dict:
    """The lab's state: the methods' results per element, alone and in the bucket, and the
    BF16-against-FP32 sweep."""
    p = validated(params, ORDERS)
    n, name = p["gpus"], p["dtype"]
    common = api_args(p, ORDERS) | {"length": LENGTH}
    alone = api.orders(**common)
    bucket = int(p["bucket_mb"]) * MIB
    inside = api.orders(**common, bytes=bucket, offset=_middle(bucket, name))
    changed = _changed(alone, inside)
    cost = fp32_cost(n, bucket)
    readouts = {
        "agree": _agree_text(alone, inside),
        "differ": _differ_text(alone),
        "bucket": (
            f"{changed} of {LENGTH} elements change bits (alone: {_pick(alone)}; "
            f"in {p['bucket_mb']} MiB: {_pick(inside)})"
        ),
        **{f"values_{m}": _values_text(alone, m) for m in METHODS},
        "cost": (
            f"{fmt.seconds(cost['bf16_us'] * 1e-6)} in BF16, {fmt.seconds(cost['fp32_us'] * 1e-6)} "
            f"in FP32 ({p['bucket_mb']} MiB then {2 * int(p['bucket_mb'])} MiB on {n} GPUs)"
        ),
    }
    sweep = precision_sweep(p["seed"])
    return views.chart(
        params=p,
        main=views.part(
            figure=_ulps_figure(alone, name),
            summary=_summary(alone, inside, changed, p["bucket_mb"]),
            table=_table(alone, inside),
        ),
        figures={"precision": _sweep_part(sweep)},
        readouts=readouts,
        data={"alone": _brief(alone), "inside": _brief(inside), "changed": changed, "cost": cost},
    )


def _middle(bucket: int, name: str) -> int:
    """The gradient's first element when it sits in the middle of the bucket."""
    size = api.dtypes.FLOATS[name].itemsize
    return (bucket // size - LENGTH) // 2


def _picked(r: dict) -> list:
    return r["methods"][r["nccl"]["method"]]["result"]


def _changed(alone: dict, inside: dict) -> int:
    """Elements whose bits differ between NCCL's pick alone and in the bucket."""
    a, b = _picked(alone), _picked(inside)
    return sum(not engine.same_bits([x], [y]) for x, y in zip(a, b, strict=True))


def _pick(r: dict) -> str:
    nc = r["nccl"]
    plan = nc.get(nc["method"]) if nc["method"] in ("ring", "tree") else None
    channels = f", {plan['channels']} channel{'s' if plan['channels'] > 1 else ''}" if plan else ""
    return f"NCCL picks {nc['algorithm']} {nc['protocol']}{channels}"


def _ulp_text(m: dict) -> str:
    """The method's worst and mean ulps, as its record prints them (the CLI's table too)."""
    if m["max_ulp"] is None:
        return "overflow"
    return f"max {records.text(engine.METHOD, m, 'max_ulp')}, mean " + records.text(
        engine.METHOD, m, "mean_ulp"
    )


def _num(x: float, dtype: str) -> str:
    """x with the significant digits that tell apart any two numbers of the type (9 for FP32,
    5 for FP16, 4 for BF16), so two results shown alike have the same bits."""
    bits = api.dtypes.FLOATS[dtype].mantissa_bits
    return fmt.sig(x, math.ceil(bits * math.log10(2)) + 1)


def _values_text(r: dict, method: str) -> str:
    """The method's result on every element, then its distance from the exact sum."""
    m = r["methods"][method]
    values = ", ".join(_num(x, r["dtype"]) for x in m["result"])
    return f"{values} ({_ulp_text(m)} from exact)"


def differing(r: dict) -> list[int]:
    """The elements on which the four methods do not all leave the same bits."""
    results = [r["methods"][m]["result"] for m in METHODS]
    return [j for j in range(len(r["exact"])) if len({engine.bits(res[j]) for res in results}) > 1]


def _differ_text(r: dict) -> str:
    """How many elements the methods disagree on, and the first of them spelt out."""
    where = differing(r)
    if not where:
        return f"none of the {len(r['exact'])} elements"
    j = where[0]
    each = ", ".join(
        f"{SHORT[m]} {_num(r['methods'][m]['result'][j], r['dtype'])}" for m in METHODS
    )
    return (
        f"{len(where)} of {len(r['exact'])} elements (element {j}: {each}; "
        f"exact {_num(r['exact'][j], r['dtype'])})"
    )


def _agree_text(*runs: dict) -> str:
    """Whether every GPU holds the same bits, from each GPU's own copy, in every method."""
    split = [m for m in METHODS if not all(r["methods"][m]["ranks_agree"] for r in runs)]
    if split:
        return "no: " + ", ".join(METHOD_TEXT[m] for m in split)
    return f"yes, all {runs[0]['gpus']} GPUs in all {len(METHODS)} methods"


def _brief(r: dict) -> dict:
    return {"nccl": {k: r["nccl"][k] for k in ("algorithm", "protocol", "method")},
            "methods": r["methods"], "exact": r["exact"], "dtype": r["dtype"]}  # fmt: skip


def _summary(alone: dict, inside: dict, changed: int, bucket_mb: str) -> str:
    n = alone["gpus"]
    parts = "; ".join(f"{METHOD_TEXT[m]} {_values_text(alone, m)}" for m in METHODS)
    return (
        f"{n} GPUs, {alone['dtype'].upper()}, {LENGTH} elements, each method's results: {parts}. "
        f"The methods disagree on {_differ_text(alone)}. Same bits on every GPU: "
        f"{_agree_text(alone, inside)}. In the middle of a {bucket_mb} MiB bucket, {changed} of "
        f"{LENGTH} elements of NCCL's pick change bits."
    )


def _value(x: float) -> str:
    return f"{x:.7g}"


def _table(alone: dict, inside: dict) -> dict:
    rows = []
    for j in range(alone["length"]):
        row = [str(j), _value(alone["exact"][j])]
        for m in METHODS:
            e = alone["ulps"][m][j]
            ulp = "–" if e is None else fmt.sig(e, 3)
            row.append(f"{_value(alone['methods'][m]['result'][j])} ({ulp})")
        row += [str(alone["ring_first"][j]), _value(_picked(inside)[j])]
        rows.append(row)
    cols = ["element", "exact sum"] + [f"{METHOD_TEXT[m]} (ulps)" for m in METHODS]
    return {"columns": [*cols, "ring starts at GPU", "NCCL's pick in the bucket"], "rows": rows}


def _ulps_figure(r: dict, name: str) -> dict:
    x = list(range(r["length"]))
    data = [
        {"type": "bar", "name": METHOD_TEXT[m], "x": x,
         "y": [e if e is not None else 0 for e in r["ulps"][m]],
         "marker": {"color": COLOURS[m]},
         "hovertemplate": "element %{x}: %{y} ulps<extra>" + METHOD_TEXT[m] + "</extra>"}
        for m in METHODS
    ]  # fmt: skip
    return {
        "data": data,
        "layout": fig.layout(
            fig.axis("element", dtick=1),
            fig.axis(f"{name.upper()} ulps from exact", rangemode="tozero"),
            barmode="group",
        ),
    }


@lru_cache(maxsize=4)
def precision_sweep(seed: int) -> dict:
    """For each n of SWEEP_GPUS: a random BF16 gradient of SWEEP_LENGTH elements all-reduced by
    NCCL's ring in BF16, and in FP32 then rounded once to BF16; both in BF16 ulps from the
    exactly rounded sum (max and mean over the elements)."""
    rows = []
    for n in SWEEP_GPUS:
        inputs = engine.draw("random", n, SWEEP_LENGTH, BF16, seed)
        target = engine.exact(inputs, BF16)
        out = {"gpus": n}
        for name, dt in (("bf16", BF16), ("fp32", FP32)):
            plan = engine.make_plan(SWEEP_LENGTH, dt.itemsize, n, "Ring", "LL", 1)
            res = engine.ring(inputs, dt, plan)["buffers"][0]
            res = [BF16.round(x) for x in res]
            errs = [engine.ulps(x, t, BF16) for x, t in zip(res, target, strict=True)]
            out[name] = {"max": max(errs), "mean": sum(errs) / len(errs)}
        rows.append(out)
    return {"rows": rows}


@lru_cache(maxsize=64)
def fp32_cost(n: int, nbytes: int) -> dict:
    """NCCL's pick timed (the performance layer's time) for the bucket in BF16 and in FP32."""
    system = api._order_system(n, api.DEFAULT_GPU)
    b = nccl.choose("AllReduce", nbytes, system)
    f = nccl.choose("AllReduce", 2 * nbytes, system)
    return {"bf16_us": b.time_us, "fp32_us": f.time_us, "bf16_pick": b.algorithm,
            "fp32_pick": f.algorithm}  # fmt: skip


def _sweep_part(sweep: dict) -> views.Part:
    rows = sweep["rows"]
    xs = [r["gpus"] for r in rows]
    data = [
        fig.line("BF16 ring, mean", xs, [r["bf16"]["mean"] for r in rows], SERIES["ring"],
                 marker={"size": 6}),
        fig.line("BF16 ring, max", xs, [r["bf16"]["max"] for r in rows], SERIES["ring"],
                 width=1, marker={"size": 7, "symbol": "circle-open"}),
        fig.line("FP32 ring, then BF16, mean", xs, [r["fp32"]["mean"] for r in rows],
                 GPU_COLOURS[5], marker={"size": 6}),
        fig.line("FP32 ring, then BF16, max", xs, [r["fp32"]["max"] for r in rows],
                 GPU_COLOURS[5], width=1, marker={"size": 7, "symbol": "circle-open"}),
    ]  # fmt: skip
    last = rows[-1]
    summary = (
        f"A random BF16 gradient ({SWEEP_LENGTH} elements) on {last['gpus']} GPUs: the BF16 ring "
        f"is {fmt.sig(last['bf16']['mean'], 2)} ulps off on average (at most "
        f"{fmt.sig(last['bf16']['max'], 2)}); reduced in FP32 and rounded once, "
        f"{fmt.sig(last['fp32']['mean'], 2)} (at most {fmt.sig(last['fp32']['max'], 2)})."
    )
    table = {
        "columns": ["GPUs", "BF16 ring mean", "BF16 ring max", "FP32 mean", "FP32 max"],
        "rows": [
            [str(r["gpus"]), fmt.sig(r["bf16"]["mean"], 3), fmt.sig(r["bf16"]["max"], 3),
             fmt.sig(r["fp32"]["mean"], 3), fmt.sig(r["fp32"]["max"], 3)]
            for r in rows
        ],
    }  # fmt: skip
    figure = {
        "data": data,
        "layout": fig.layout(
            fig.log_axis("GPUs", (1.6, 320)),
            fig.axis("BF16 ulps from exact", rangemode="tozero"),
            margin=fig.MARGIN_BELOW,
            legend=fig.LEGEND_BELOW,
        ),
    }
    return views.part(figure=figure, summary=summary, table=table)


def facts() -> dict[str, str]:
    """The figures the page quotes, each at the lab's default (its GPU count, type, values and
    bucket) or read off the precision chart's right end, as its summary reads it."""
    base = orders()
    a, p = base["alone"], base["params"]
    first = differing(a)[0]
    last = precision_sweep(p["seed"])["rows"][-1]
    cost = base["cost"]
    out = {
        "orders_gpus": str(p["gpus"]),
        "orders_dtype": p["dtype"].upper(),
        "orders_length": str(LENGTH),
        "orders_agree": base["readouts"]["agree"],
        "orders_differ": str(len(differing(a))),
        "orders_element": str(first),
        "orders_element_exact": _num(a["exact"][first], p["dtype"]),
        "orders_max_ulp": fmt.sig(max(a["methods"][m]["max_ulp"] for m in METHODS), 3),
        "orders_bucket": f"{p['bucket_mb']} MiB",
        "orders_alone_pick": _pick_name(a),
        "orders_bucket_pick": _pick_name(base["inside"]),
        "orders_changed": str(base["changed"]),
        "orders_sweep_gpus": str(last["gpus"]),
        "orders_sweep_bf16_mean": fmt.sig(last["bf16"]["mean"], 2),
        "orders_sweep_bf16_max": fmt.sig(last["bf16"]["max"], 2),
        "orders_sweep_fp32_mean": fmt.sig(last["fp32"]["mean"], 2),
        "orders_sweep_fp32_max": fmt.sig(last["fp32"]["max"], 2),
        "orders_cost_bf16": fmt.seconds(cost["bf16_us"] * 1e-6),
        "orders_cost_fp32": fmt.seconds(cost["fp32_us"] * 1e-6),
        "orders_cost_bucket_fp32": f"{2 * int(p['bucket_mb'])} MiB",
    }
    for m in METHODS:
        out[f"orders_element_{m}"] = _num(a["methods"][m]["result"][first], p["dtype"])
    return out


def _pick_name(r: dict) -> str:
    return f"{r['nccl']['algorithm']} {r['nccl']['protocol']}"


RECORDS = (
    Widget(
        "orders",
        orders,
        ORDERS,
        views.CHART,
        label=(
            "The same all-reduce summed in four orders: each method's distance from the exactly "
            "rounded sum, per element, alone and inside a bucket; and a BF16 ring's error against "
            "reducing in FP32 as the GPUs grow"
        ),
        headline=(("differ", "The methods disagree on"), ("agree", "Same bits on every GPU")),
        readouts={
            "main": tuple((f"values_{m}", METHOD_TEXT[m]) for m in METHODS)
            + (("bucket", "Alone, then in the middle of the bucket"),),
            "cost": (("cost", f"Reducing in FP32 costs ({FITTED.name})"),),
        },
        layout=(
            ("readouts", "main"),
            ("chart", "Each method's result per element, as a table"),
            ("title", "BF16 reduction against FP32 reduction as n grows"),
            ("chart", "The error against n, as a table", "precision"),
            ("readouts", "cost"),
        ),
    ),
)
WARM = [("orders", {})]
