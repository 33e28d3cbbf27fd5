"""In-network reduction. The stepper runs innetwork.py's NVLS all-reduce (GPUs -> the
switch adds -> the sum to every GPU) beside the ring on the same vectors; the bandwidth widget
holds algbw, nccl-tests' busbw and the bytes on each link against each other, the published
8 x H100 runs, NCCL's own model (nccl/) by GPU count, and the bytes per network card across
servers with a ring, a tree and InfiniBand SHARP.
"""

from __future__ import annotations

from fractions import Fraction

from .. import api, fmt, nccl
from ..catalog.hardware import NVLS_GPUS
from ..catalog.measured import MEASURED_H100_BUSBW_GBPS
from ..collectives import ALLREDUCE
from ..errors import ParamError
from ..exercises.units import BYTES
from ..palette import NEUTRAL, SERIES
from ..params import Param, narrowed, spec, validated
from ..schedules.ring import steps as ring_steps
from ..schedules.topology import H100_NVLINK_GBps
from ..simulation import innetwork
from ..simulation.innetwork import SWITCH
from ..sources import FITTED, REFERENCE_DASH, WHITEBOARD
from . import Widget, diagram, views
from . import figures as fig
from .common import DTYPE, SEED, VALUES, judge_quantity, simulated, value_text, vectors

# ---- The stepper -------------------------------------------------------------------------------

STEPPER = spec(
    simulated("gpus", "GPUs", default=8, lo=2, hi=16),
    simulated("length", "Numbers per GPU", default=16, hi=64, optional=False),
    simulated("dtype", DTYPE.label, default="bf16"),
    SEED,
    VALUES,
)


def innetwork_stepper(params=None) -> dict:
    """The switch's all-reduce step by step, the ring's result on the same vectors in the check."""
    p = validated(params, STEPPER)
    n, dtype = p["gpus"], p["dtype"]
    inputs = vectors(p, n, dtype, STEPPER["length"].hi)
    r = innetwork.run(gpus=n, dtype=dtype, values=inputs)
    length = r["length"]
    frames = [_frame(f, r) for f in r["frames"]]
    sw, ring = r["switch"], r["ring"]
    ok = sw["all_match"]
    verdict = (
        f"All {n} GPUs hold the same sum. The switch's is "
        + ("the exactly rounded sum" if ok else f"within {fmt.sig(sw['max_ulp'])} ulp of it")
        + "; the ring's is "
        + (
            "the exactly rounded sum too."
            if ring["all_match"]
            else f"within {fmt.sig(ring['max_ulp'])} ulp of it."
        )
    )
    frames[-1]["narration"].append(verdict)
    rows = [
        {"label": "switch (NVLS)", "values": r["switch_result"]},
        {"label": "ring, same vectors", "values": r["ring_result"]},
    ]
    if dtype != "int":
        rows += [
            {"label": "switch: ulp from exact", "values": [fmt.sig(u) for u in sw["ulps"]]},
            {"label": "ring: ulp from exact", "values": [fmt.sig(u) for u in ring["ulps"]]},
        ]
    final = frames[-1]["buffers"]
    b = r["bytes"]
    state = views.stepper(
        params={**p, "gpus": n, "length": length},
        dtype=dtype,
        chunks=r["chunks"],
        inputs=inputs,
        target=r["target"],
        editable=True,
        extra_rows=[{"label": "exact sum, rounded once", "values": r["target"]}],
        frames=frames,
        check={
            "matches": [[x == t for x, t in zip(row, r["target"], strict=True)] for row in final],
            "all_match": ok,
            "verdict": verdict,
            "target_label": "exact sum",
            "rows": rows,
            "switch_max_ulp": sw["max_ulp"],
            "ring_max_ulp": ring["max_ulp"],
        },
        readouts={
            "nvls_sent": fmt.nbytes(b["nvls"]["sent_per_gpu"]),
            "nvls_received": fmt.nbytes(b["nvls"]["received_per_gpu"]),
            "ring_sent": fmt.nbytes(b["ring"]["sent_per_gpu"]),
            "ring_received": fmt.nbytes(b["ring"]["received_per_gpu"]),
            "steps": f"{b['nvls']['steps']} (switch) against {b['ring']['steps']} (ring)",
            "accumulate": r["accumulate"].upper() if r["accumulate"] != "int" else "int32, exact",
        },
    )
    return diagram.attach(state, diagram.ring(n, switch=True))


STEPPER_HEADLINE = (("nvls_sent", "Switch: each GPU sends"), ("ring_sent", "Ring: each GPU sends"))
STEPPER_READOUTS = (
    ("nvls_received", "Switch: each GPU receives"),
    ("ring_received", "Ring: each GPU receives"),
    ("steps", "Steps"),
    ("accumulate", "The switch accumulates in"),
)
PHASES = {"start": "start", "reduce": "the switch adds", "multicast": "multicast"}


def _frame(f: dict, r: dict) -> views.Frame:
    """A core frame with the switch as a row below the GPUs (moves name it as GPU -1)."""
    n, length = r["gpus"], r["length"]
    values = [None] * length if f["phase"] == "start" else r["switch_result"]
    move = {
        "start": "",
        "reduce": "chunk k's sum → GPU k",
        "multicast": f"every chunk → all {n} GPUs",
    }[f["phase"]]
    narration = list(f["narration"])
    if f["phase"] == "reduce" and r["dtype"] == "bf16":
        k = next(i for i, (a, b) in enumerate(r["chunks"]) if b > a)
        a, b = r["chunks"][k]
        narration.append(
            f"Chunk {k}: the switch's sums are "
            + ", ".join(value_text(v, "bf16") for v in r["switch_result"][a:b])
            + "."
        )
    return views.frame(
        buffers=f["buffers"],
        complete=f["complete"],
        moves=f["moves"],
        phase=f["phase"],
        label=PHASES[f["phase"]],
        rows=[{"label": "switch", "key": SWITCH, "values": values, "move": move}],
        narration=narration,
    )


# ---- Bus bandwidth against the wire --------------------------------------------------------------

BANDWIDTH = spec(
    narrowed(api.NCCL_SWEEP["gpus"], label="GPUs in the server", default=8, lo=2, hi=8),
    Param("size_mb", 8192, "float", "Buffer S (MiB)", 1, 1 << 20, unit="MiB"),
    narrowed(api.NCCL_SWEEP["gpu"], label="GPU (NCCL's choice)", kind="choice",
             choices=tuple((g, g) for g in NVLS_GPUS)),
    Param("servers", 4, "int", "Servers (across)", 2, 512),
)  # fmt: skip
MIB = 1 << 20
# What NCCL's pick means across servers: its NVLS spans servers only through SHARP
PICK_TEXT = {
    "NVLS": "NVLS: NVLS inside each server, SHARP between them",
    "NVLSTree": "NVLSTree: NVLS inside each server, the tree between them",
    "CollNetDirect": "CollNet: SHARP between servers",
    "CollNetChain": "CollNet (chain): SHARP between servers",
}
COLOURS = {"ring": SERIES["ring"], "nvls": SERIES["hierarchical"], "sharp": SERIES["tree"]}


def _nccl(algorithm: str, nbytes: int, system: nccl.System) -> dict | None:
    """NCCL's time for one algorithm (its best protocol), or None where NCCL cannot run it."""
    try:
        c = nccl.choose("AllReduce", nbytes, system, algorithm=algorithm)
    except ParamError:
        return None
    return {"time_us": c.time_us, "algbw_GBps": c.algbw_GBps, "busbw_GBps": c.busbw_GBps}


def innetwork_bandwidth(params=None) -> dict:
    """algbw, busbw and bytes per link for ring and NVLS; the gain by GPU count; across servers."""
    p = validated(params, BANDWIDTH)
    n, s, gpu = p["gpus"], int(p["size_mb"] * MIB), p["gpu"]
    ideal = innetwork.bandwidth(n, s, H100_NVLINK_GBps)
    one = nccl.System(gpu, n, n, n, 400.0)
    model = {a: _nccl(a, s, one) for a in ("Ring", "NVLS")}
    by_n = [
        (k, *(_nccl(a, s, nccl.System(gpu, k, k, k, 400.0)) for a in ("Ring", "NVLS")))
        for k in range(2, 9)
    ]
    measured = innetwork.measured_h100()
    across = _across(p, s)
    return views.chart(
        params=p,
        figures={"gpus": _gpus_figure(by_n, measured, gpu), "servers": across["figure"]},
        readouts=_readouts(ideal, model, n, s, gpu, across),
        data={"ideal": ideal, "nccl": model, "across": across["rows"]},
        prediction=views.prediction(
            id=BANDWIDTH_PREDICTION_ID,
            question=(
                f"With the switch adding (NVLS), how many bytes will each GPU's link carry each "
                f"way for this all-reduce of {fmt.nbytes(s)} on {n} GPUs? The ring's carries "
                f"{fmt.nbytes(ideal['ring']['bytes_per_link_each_way'])}."
            ),
            example="such as 5 GB",
            readouts=[f"nvls_{k}" for k in ("link", "algbw", "busbw", "wire", "nccl", "time")]
            + ["gain"],
        ),
    )


BANDWIDTH_PREDICTION_ID = "innetwork-link-bytes"
LINK_TOLERANCE = 0.05  # (n + 1)/n S against S: 12.5 % apart on 8 GPUs, told apart at 5 %


def predict_bandwidth(params, answer) -> dict:
    """The reader's bytes on each GPU's link with NVLS (simulation.innetwork.bandwidth), right
    within LINK_TOLERANCE, with the share of the ring's traffic it saves; the misconceptions:
    the ring's bytes (as if the GPUs still added), and S itself."""
    p = validated(params, BANDWIDTH)
    n, s = p["gpus"], int(p["size_mb"] * MIB)
    ideal = innetwork.bandwidth(n, s, H100_NVLINK_GBps)
    nvls, ring = (ideal[k]["bytes_per_link_each_way"] for k in ("nvls", "ring"))
    mistakes = (
        (ring, "That is the ring's: with NVLS the switch does the additions, so no partial sum "
         "crosses a GPU's link on its way to be added again."),
        (s, "That is the buffer S itself; a GPU's link carries a little more: (n + 1)/n · S."),
    )  # fmt: skip
    result = (
        f"Each link carries {fmt.nbytes(nvls)} with NVLS against the ring's {fmt.nbytes(ring)}, "
        f"{fmt.sig(100 * abs(1 - nvls / ring), 2)} % {'less' if nvls < ring else 'more'} traffic"
    )
    return judge_quantity(answer, nvls, BYTES, "GB", LINK_TOLERANCE, mistakes, fmt.nbytes, result)


BANDWIDTH_HEADLINE = (  # the ring and NVLS side by side are the table's cells, labelled there
    ("gain", "busbw gain at the line rate"),
    ("nvls_time", "NVLS at the line rate"),
    ("bound", "Lower bound for any point-to-point all-reduce"),
)
SERVERS_READOUTS = (
    ("card_ring", "Each card sends, ring"),
    ("card_tree", "Each card sends, tree (at most)"),
    ("card_sharp", "Each card sends, SHARP"),
    ("across_ring", f"Ring, {FITTED.name}"),
    ("across_nvlstree", f"NVLSTree, {FITTED.name}"),
    ("across_collnetdirect", f"CollNet (SHARP), {FITTED.name}"),
    ("across_nvls", f"NVLS with SHARP, {FITTED.name}"),
    ("across_pick", "NCCL would pick"),
)


def _readouts(ideal: dict, model: dict, n: int, s: int, gpu: str, across: dict) -> dict:
    out = {"size": fmt.nbytes(s)}
    for name in ("ring", "nvls"):
        x = ideal[name]
        out[f"{name}_link"] = fmt.nbytes(x["bytes_per_link_each_way"])
        out[f"{name}_algbw"] = f"{fmt.sig(x['algbw_GBps'], 3)} GB/s"
        out[f"{name}_busbw"] = f"{fmt.sig(x['busbw_GBps'], 3)} GB/s"
        out[f"{name}_wire"] = f"{fmt.sig(x['wire_GBps'], 3)} GB/s"
        m = model["Ring" if name == "ring" else "NVLS"]
        out[f"{name}_nccl"] = (
            f"{fmt.sig(m['busbw_GBps'], 3)} GB/s busbw, {fmt.seconds(m['time_us'] * 1e-6)}"
            if m
            else f"not available on {n} × {gpu}"
        )
    out["bound"] = fmt.seconds(ideal["lower_bound_s"])
    out["nvls_time"] = fmt.seconds(ideal["nvls"]["time_s"])
    out["gain"] = f"{fmt.sig(ideal['busbw_gain'], 3)}×"
    out.update(across["readouts"])
    return out


def _gpus_figure(by_n, measured, gpu: str) -> views.Part:
    xs = [k for k, *_ in by_n]
    data = [
        fig.line(f"ring, {WHITEBOARD.legend} at the line rate", xs,
                 [_ideal(k, "ring") for k in xs], SERIES["ring"], WHITEBOARD.dash, 1.5,
                 hover="%{x} GPUs: %{y:.3g} GB/s"),
        fig.line(f"NVLS, {WHITEBOARD.legend} at the line rate", xs,
                 [_ideal(k, "nvls") for k in xs], COLOURS["nvls"], WHITEBOARD.dash, 1.5,
                 hover="%{x} GPUs: %{y:.3g} GB/s"),
        fig.line(f"ring, {FITTED.legend} ({gpu})", xs, [_bus(r) for _, r, _ in by_n],
                 SERIES["ring"], FITTED.dash, 2, hover="%{x} GPUs: %{y:.3g} GB/s"),
        fig.line(f"NVLS, {FITTED.legend} ({gpu})", xs, [_bus(v) for _, _, v in by_n],
                 COLOURS["nvls"], FITTED.dash, 2, hover="%{x} GPUs: %{y:.3g} GB/s"),
        fig.dots("ring, measured (8 × H100)", [m["gpus"] for m in measured],
                 [m["ring_busbw_GBps"] for m in measured], SERIES["ring"], "circle", 9,
                 hover="%{x} GPUs: %{y:.3g} GB/s"),
        fig.dots("NVLS, measured (8 × H100)", [m["gpus"] for m in measured],
                 [m["nvls_busbw_GBps"] for m in measured], COLOURS["nvls"], "diamond", 10,
                 hover="%{x} GPUs: %{y:.3g} GB/s"),
        {**fig.line("NVLink line rate", [1.8, 8.2], [H100_NVLINK_GBps] * 2, NEUTRAL,
                    REFERENCE_DASH, 1),
         "hoverinfo": "skip", "showlegend": False},
    ]  # fmt: skip
    rows = [
        [
            k,
            fmt.sig(_ideal(k, "ring"), 3),
            fmt.sig(_ideal(k, "nvls"), 3),
            fmt.sig(_bus(r), 3) if r else "—",
            fmt.sig(_bus(v), 3) if v else "—",
            fmt.sig(MEASURED_H100_BUSBW_GBPS["ring"][k], 3),
            fmt.sig(MEASURED_H100_BUSBW_GBPS["nvls"][k], 3),
        ]
        for k, r, v in by_n
    ]
    m8 = measured[-1]
    return views.part(
        figure={
            "data": data,
            "layout": fig.layout(
                fig.axis("GPUs in one server", dtick=1, range=[1.8, 8.2]),
                fig.axis("bus bandwidth (GB/s)", rangemode="tozero"),
            ),
        },
        summary=(
            f"Bus bandwidth by GPU count on one server: measured on 8 × H100 the ring stays at "
            f"{fmt.sig(m8['ring_busbw_GBps'], 3)} GB/s and NVLS reaches "
            f"{fmt.sig(m8['nvls_busbw_GBps'], 3)} GB/s at 8 GPUs, above the "
            f"{fmt.sig(H100_NVLINK_GBps, 3)} GB/s line rate (the grey dash-dotted line)."
        ),
        table={
            "columns": [
                "GPUs",
                "ring at line rate",
                "NVLS at line rate",
                "ring, NCCL model",
                "NVLS, NCCL model",
                "ring, measured",
                "NVLS, measured",
            ],
            "rows": rows,
        },
    )


def _ideal(k: int, name: str) -> float:
    return innetwork.bandwidth(k, 1.0, H100_NVLINK_GBps)[name]["busbw_GBps"]


def _bus(x: dict | None) -> float | None:
    return None if x is None else x["busbw_GBps"]


def _across(p: dict, s: int) -> dict:
    """Bytes per network card across servers (one card per GPU) and NCCL's times for it."""
    nodes, g, gpu = p["servers"], 8, p["gpu"]
    here = innetwork.across_servers(nodes, g, s)
    xs = sorted({2, 4, 8, 16, 32, 64, 128, 256, 512, nodes})
    rows = [innetwork.across_servers(k, g, s) for k in xs]
    keys = (
        ("ring_bytes_per_card", "ring", SERIES["ring"]),
        ("tree_bytes_per_card_max", "tree (NVLSTree across servers)", NEUTRAL),
        ("sharp_bytes_per_card", "InfiniBand SHARP (CollNet)", COLOURS["sharp"]),
    )
    data = [
        fig.line(label, xs, [r[k] / s for r in rows], colour, None, 2, marker={"size": 6},
                 hover="%{x} servers: %{y:.3g} × S per card")
        for k, label, colour in keys
    ]  # fmt: skip
    data.append(fig.you_are_here(f"{nodes} servers", nodes, [here[k] / s for k, _, _ in keys]))
    system = nccl.System(gpu, nodes * g, g, g, 400.0, in_network_reduction=True)
    times = {a: _nccl(a, s, system) for a in ("Ring", "NVLSTree", "CollNetDirect", "NVLS")}
    pick = nccl.choose("AllReduce", s, system).algorithm
    readouts = {
        "card_ring": fmt.nbytes(here["ring_bytes_per_card"]),
        "card_tree": fmt.nbytes(here["tree_bytes_per_card_max"]),
        "card_sharp": fmt.nbytes(here["sharp_bytes_per_card"]),
        "across_pick": PICK_TEXT.get(pick, pick),
    }
    for a, t in times.items():
        readouts[f"across_{a.lower()}"] = (
            f"{fmt.seconds(t['time_us'] * 1e-6)} ({fmt.sig(t['busbw_GBps'], 3)} GB/s busbw)"
            if t
            else "not available"
        )
    figure = views.part(
        figure={
            "data": data,
            "layout": fig.layout(
                fig.log_axis("servers (8 GPUs, 8 cards each)", fig.around(xs)),
                fig.axis("bytes per card (× S)", rangemode="tozero"),
            ),
        },
        summary=(
            f"Bytes each network card sends per all-reduce across {nodes} servers of 8 GPUs: "
            f"ring {fmt.nbytes(here['ring_bytes_per_card'])}, tree up to "
            f"{fmt.nbytes(here['tree_bytes_per_card_max'])}, SHARP "
            f"{fmt.nbytes(here['sharp_bytes_per_card'])} of an S = {fmt.nbytes(s)} buffer."
        ),
        table={
            "columns": ["servers", "ring (× S)", "tree, max (× S)", "SHARP (× S)"],
            "rows": [[r["servers"], *(fmt.sig(r[k] / s, 3) for k, _, _ in keys)] for r in rows],
        },
    )
    return {
        "figure": figure,
        "rows": here | {"nccl": times, "nccl_pick": pick},
        "readouts": readouts,
    }


def _share(part: float, whole: float) -> str:
    """A ratio of byte counts as the fraction it is (2/3, 1/2): the formulas' ratios are simple."""
    return str(Fraction(part / whole).limit_denominator(1024))


def _across_facts(b: dict) -> dict:
    """Bytes per card across servers (ring, tree, SHARP), SHARP's share of each, NCCL's pick."""
    a = b["across"]
    sharp = a["sharp_bytes_per_card"]
    return {
        "nvls_size": b["readouts"]["size"],
        "nvls_card_ring": b["readouts"]["card_ring"],
        "nvls_card_tree": b["readouts"]["card_tree"],
        "nvls_card_sharp": b["readouts"]["card_sharp"],
        "nvls_sharp_vs_ring": _share(sharp, a["ring_bytes_per_card"]),
        "nvls_sharp_vs_tree": _share(sharp, a["tree_bytes_per_card_max"]),
        "nvls_across_pick": a["nccl_pick"],
        "nvls_collnet_factor": fmt.sig(nccl.COLLNET_DIRECT_HOPPER_FACTOR, 2),
    }


def facts() -> dict:
    """The figures the in-network page's prose quotes."""
    b = innetwork_bandwidth()
    ideal, m8 = b["ideal"], innetwork.measured_h100()[-1]
    st = innetwork_stepper()
    n = st["gpus"]
    return {
        "nvls_gpus": n,
        "nvls_ring_busbw": fmt.sig(m8["ring_busbw_GBps"], 3),
        "nvls_busbw": fmt.sig(m8["nvls_busbw_GBps"], 3),
        "nvls_algbw": fmt.sig(m8["nvls_algbw_GBps"], 3),
        "nvls_wire": fmt.sig(m8["nvls_wire_GBps"], 3),
        "nvls_wire_share": fmt.sig(m8["nvls_wire_GBps"] / H100_NVLINK_GBps * 100, 2),
        "nvls_line": fmt.sig(H100_NVLINK_GBps, 3),
        "nvls_ideal_gain": fmt.sig(ideal["busbw_gain"], 3),
        "nvls_ideal_busbw": fmt.sig(ideal["nvls"]["busbw_GBps"], 3),
        "nvls_ring_factor": fmt.sig(ALLREDUCE.busbw_factor(n), 3),
        "nvls_factor": fmt.sig((n + 1) / n, 3),
        "nvls_ring_steps": ring_steps(n),
        "nvls_switch_ulp": fmt.sig(st["check"]["switch_max_ulp"]),
        "nvls_ring_ulp": fmt.sig(st["check"]["ring_max_ulp"]),
        "nvls_nccl": nccl.NCCL_VERSION,
        "nvls_servers": b["params"]["servers"],
    } | _across_facts(b)


RECORDS = (
    Widget(
        "innetwork_stepper",
        innetwork_stepper,
        STEPPER,
        views.STEPPER,
        label=(
            "In-network reduction, step by step: the switch adds, beside the ring on the same "
            "vectors"
        ),
        hint="At step 0 you can edit any GPU's numbers.",
        headline=STEPPER_HEADLINE,
        readouts={"main": STEPPER_READOUTS},
    ),
    Widget(
        "innetwork_bandwidth",
        innetwork_bandwidth,
        BANDWIDTH,
        views.CHART,
        label=(
            "Algorithm bandwidth, bus bandwidth and bytes per link for the ring and NVLS; bytes "
            "per network card across servers"
        ),
        headline=BANDWIDTH_HEADLINE,
        readouts={"servers": SERVERS_READOUTS},
        layout=(
            ("partial", "innetwork_table"),
            ("chart", "Bus bandwidth by GPU count as a table", "gpus"),
            ("readouts", "servers"),
            ("chart", "Bytes per card by server count as a table", "servers"),
        ),
        extras=("_predict",),
        predict=predict_bandwidth,
    ),
)
