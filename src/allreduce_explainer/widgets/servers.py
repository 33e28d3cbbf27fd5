"""Across servers: the flat ring, one ring per network card, and the hierarchical method.

Every byte count here is counted from the messages of the core's simulation, never from the
formulas; the tests check that the counts equal the formulas. Times come from two models, side
by side and labelled: the lock-step closed forms in cost.py (the teaching model, checked against
the same simulation; exact for steps and bytes) and NCCL's own model, which the prose quotes for
real hardware.
"""

from __future__ import annotations

from dataclasses import replace

from .. import api, dtypes, fmt, nccl
from ..catalog.hardware import NCCL_GPU, NIC_400G_Gbps
from ..catalog.models import EXAMPLE_GRADIENT_BYTES
from ..costs.latency_model import NCCL_NETWORK_HOP_US, NCCL_NVLINK_HOP_US
from ..errors import ParamError
from ..exercises.units import COUNT
from ..palette import SERIES
from ..params import Param, api_args, narrowed, spec, validated
from ..schedules.schedule import split
from ..simulation.simulate import count_bytes
from ..simulation.verify import check
from ..sources import FITTED, WHITEBOARD
from . import Widget, diagram, views
from . import figures as fig
from .common import SEED, VALUES, complete, judge_quantity, simulated, summed, traced

METHODS = ("ring", "multi-ring", "hierarchical")
LABELS = {
    "ring": "flat ring (one card per server)",
    "multi-ring": "one ring per card (NCCL)",
    "hierarchical": "hierarchical (Horovod)",
}
INT_BYTES = dtypes.INT.itemsize  # the stepper's int32 elements
NCCL_LABEL = f"NCCL's choice, {FITTED.legend} (H100 SXM)"


# ---- The stepper: one method on real numbers --------------------------------------------------

STEPPER = spec(
    simulated("algorithm", "Method", name="method", default="hierarchical",
              choices=tuple(zip(METHODS, ("flat ring", "one ring per card", "hierarchical"),
                                strict=True))),
    Param("servers", 2, "int", "Servers", 1, 4),
    simulated("gpus_per_node", "GPUs per server", default=4, hi=4, optional=False),
    simulated("length", "Numbers per gradient", default=16, hi=64, optional=False),
    replace(SEED, default=6),
    VALUES,
)  # fmt: skip


def servers_stepper(params=None) -> dict:
    """Across servers: step through one method on N servers of g GPUs, counting network bytes."""
    p = validated(params, STEPPER)
    method, servers, g = p["method"], p["servers"], p["gpus_per_node"]
    n = servers * g
    if n < 2:
        raise ParamError("gpus_per_node", "one GPU in all: nothing to add up; use 2 or more")
    r = traced(p, STEPPER, gpus=n)
    length = r["length"]
    groups = split(0, length, n if method == "ring" else g)
    frames = _frames(r, groups, servers, g, method)
    counted = _counts_from_trace(r, servers, g)
    state_check = check(r)
    frames[-1]["narration"].append(state_check["verdict"])
    state = views.stepper(
        params={**p, "length": length},
        dtype="int",
        chunks=groups,
        **summed(r),
        frames=frames,
        check=state_check,
        readouts={
            "total": f"{counted['total']:,} bytes",
            "per_server": f"{counted['per_server']:,} bytes",
            "per_card": f"{counted['per_card']:,} bytes",
            "network_steps": f"{r['network_steps']} of {r['steps']}",
            "gradient": f"{length * INT_BYTES:,} bytes ({length} int32 numbers)",
        },
        row_groups=[[f"server {k}", k * g, (k + 1) * g] for k in range(servers)],
    )
    return diagram.attach(state, diagram.servers(servers, g))


STEPPER_HEADLINE = (
    ("total", "Over the network, in total"),
    ("per_card", "Per network card (busiest)"),
)
STEPPER_READOUTS = (
    ("gradient", "Gradient per GPU"),
    ("per_server", "Per server (busiest)"),
    ("network_steps", "Steps that use the network"),
)


def _counts_from_trace(r: dict, servers: int, g: int) -> dict:
    inter = [b["inter"] for b in r["bytes_sent_per_gpu_by_link"]]
    return {
        "total": sum(inter),
        "per_server": max(sum(inter[k * g : (k + 1) * g]) for k in range(servers)),
        "per_card": max(inter),
    }


def _group(groups, start: int) -> int:
    return next((i for i, (a, b) in enumerate(groups) if a <= start < b), 0)


def _columns(method: str, k: int) -> str:
    """What the stepper's column groups are, in the reader's words, for the first frame."""
    if method == "ring":
        return f"The columns are grouped into the ring's {k} chunks, one per GPU."
    if method == "multi-ring":
        return f"The columns are grouped into {k} parts, one per ring, each ring on its own card."
    return (
        f"The columns are grouped into {k} shards: after the reduce-scatter inside its server, "
        "the GPU of local rank p holds its server's sum of shard p."
    )


def _frames(r: dict, groups, servers: int, g: int, method: str) -> list[views.Frame]:
    n, length = r["gpus"], r["length"]
    frames = [
        views.frame(
            buffers=r["inputs"],
            complete=complete([[1] * length] * n, n),
            moves=[],
            phase="start",
            narration=[
                f"{servers} servers of {g} GPUs: GPUs 0 to {g - 1} on the first server, "
                f"{g} to {2 * g - 1} on the second{', and so on' if servers > 2 else ''}. "
                + _columns(method, len(groups))
            ],
        )
    ]
    network = 0
    for s, step in enumerate(r["trace"], 1):
        msgs = step["messages"]
        cross = [m for m in msgs if m["link"] == "inter"]
        step_bytes = sum((m["stop"] - m["start"]) * INT_BYTES for m in cross)
        network += step_bytes
        verb = "adds" if step["op"] == "add" else "copies"
        lines = [
            f"Step {s}, {step['phase']}: {len(msgs)} messages, {len(cross)} of them between "
            f"servers; each receiver {verb}."
        ]
        lines.append(
            f"Network bytes this step: {step_bytes:,}; so far: {network:,}."
            if cross
            else "Nothing crosses the network in this step: NVLink only."
        )
        for m in cross[:8]:
            lines.append(
                f"GPU {m['src']} (server {m['src'] // g}) → GPU {m['dst']} "
                f"(server {m['dst'] // g}): numbers {m['start']}–{m['stop'] - 1}."
            )
        if len(cross) > 8:
            lines.append(f"… and {len(cross) - 8} more messages between servers.")
        frames.append(
            views.frame(
                buffers=step["buffers"],
                complete=complete(step["contributors"], n),
                moves=[
                    [m["src"], m["dst"], m["start"], m["stop"], _group(groups, m["start"])]
                    for m in msgs
                ],
                op=step["op"],
                phase=step["phase"],
                narration=lines,
            )
        )
    return frames


# ---- Counts and times as servers are added ---------------------------------------------------

COMPARE = spec(
    Param("servers", 8, "int", "Servers", 1, 64, nudge=(1, "a server")),
    narrowed(api.ESTIMATE["gpus_per_node"], label="GPUs (and cards) per server", default=8,
             hi=8, optional=False),
    # a 7B-parameter model's BF16 gradient (why-allreduce's)
    Param("gradient_gb", EXAMPLE_GRADIENT_BYTES / 1e9, "float", "Gradient per GPU (GB)",
          0.000001, 10000, unit="GB"),
    narrowed(api.ESTIMATE["intra_bw"], label="NVLink (GB/s)", lo=0.001, hi=1000000),
    narrowed(api.ESTIMATE["inter_bw"], "nic_gbps", as_flag=True,
             label="Network card (Gb/s, one per GPU)", lo=0.008, hi=8000000),
    narrowed(api.ESTIMATE["intra_latency"], label="NVLink latency (µs)", hi=1000000),
    narrowed(api.ESTIMATE["inter_latency"], label="Network latency (µs)", hi=1000000),
)  # fmt: skip
# Counting 64 x 8 GPUs (4 million messages for one ring per card) takes about 0.8 s in CPython
# and 1.5 s in the browser, once per layout (cached).
MAX_COUNTED_GPUS = 512
SERVER_X = [1, 2, 4, 8, 16, 32, 64]


def _estimate(method: str, servers: int, g: int, s: float, links: dict) -> dict:
    """api.estimate on `servers` servers of g: the network's rate and latency only where there
    is a network (api.estimate refuses what it cannot apply)."""
    if servers == 1:
        links = {k: v for k, v in links.items() if k not in api.INTER}
    return api.estimate(algorithm=method, gpus=servers * g, bytes=s, gpus_per_node=g, **links)


def servers_compare(params=None) -> dict:
    """Across servers: network bytes and time of the three methods, as servers are added."""
    p = validated(params, COMPARE)
    servers, g, gb = p["servers"], p["gpus_per_node"], float(p["gradient_gb"])
    links = {k: float(v) for k, v in api_args(p, COMPARE).items() if k != "gpus_per_node"}
    s, n = gb * 1e9, servers * g
    times = {m: [_estimate(m, x, g, s, links)["time_s"] for x in SERVER_X] for m in METHODS}
    at = {m: _estimate(m, servers, g, s, links) for m in METHODS}
    nccl_at = _nccl(n, g, s, p["nic_gbps"])
    nccl_times = [_nccl(x * g, g, s, p["nic_gbps"]) for x in SERVER_X]
    counted = n <= MAX_COUNTED_GPUS and servers > 1
    counts = {m: count_bytes(m, servers, g, s) if counted else None for m in METHODS}
    readouts = {"verdict": _verdict(at, servers, g), "gradient": fmt.nbytes(s)}
    for m in METHODS:
        key = m.replace("-", "_")
        c = counts[m]
        readouts[f"{key}_total"] = fmt.nbytes(c["total"]) if c else "—"
        readouts[f"{key}_server"] = fmt.nbytes(c["per_server"]) if c else "—"
        readouts[f"{key}_card"] = fmt.nbytes(c["per_card"]) if c else "—"
        readouts[f"{key}_steps"] = str(at[m]["network_steps"])
        readouts[f"{key}_time"] = fmt.seconds(at[m]["time_s"])
    readouts["counted"] = _counted_note(servers, g, counts)
    readouts["nccl_time"] = fmt.seconds(nccl_at.time_us * 1e-6) if nccl_at else "—"
    readouts["nccl_pick"] = f"{nccl_at.algorithm}/{nccl_at.protocol}" if nccl_at else "—"
    readouts["nccl_note"] = _nccl_note(nccl_at, servers, g, p["nic_gbps"])
    main = views.part(
        figure=_figure(times, servers, g, at, nccl_times, nccl_at),
        summary=(
            f"With {servers} servers of {g} GPUs and {fmt.nbytes(s)} per GPU: "
            + ", ".join(f"{LABELS[m]} {fmt.seconds(at[m]['time_s'])}" for m in METHODS)
            + f"; {NCCL_LABEL} {readouts['nccl_time']}."
        ),
        table={
            "columns": ["servers", *[f"{LABELS[m]} (s)" for m in METHODS], f"{NCCL_LABEL} (s)"],
            "rows": [
                [
                    x,
                    *[fmt.sig(times[m][i], 3) for m in METHODS],
                    fmt.sig(nccl_times[i].time_us * 1e-6, 3) if nccl_times[i] else "—",
                ]
                for i, x in enumerate(SERVER_X)
            ],
        },
    )
    return views.chart(
        params=p,
        main=main,
        readouts=readouts,
        prediction=views.prediction(
            id=COMPARE_PREDICTION_ID,
            question=(
                f"The flat ring crosses each server boundary through one card. With {servers} "
                f"servers of {g} GPUs, how many times as long as one ring per card will it "
                "take, by the closed forms?"
            ),
            example="such as 2",
            figures=[""],
            readouts=[f"{m.replace('-', '_')}_time" for m in METHODS] + ["verdict"],
        ),
    )


COMPARE_PREDICTION_ID = "servers-flat-ring-slower"
COMPARE_TOLERANCE = 0.1  # a ratio read off the closed forms: right within 10 %


def predict_compare(params, answer) -> dict:
    """The reader's guess of the flat ring's time over one ring per card's (the closed forms at
    these settings), right within COMPARE_TOLERANCE; the misconceptions: no difference (both
    send the same total) and NVLink's rate over the card's."""
    p = validated(params, COMPARE)
    servers, g, s = p["servers"], p["gpus_per_node"], float(p["gradient_gb"]) * 1e9
    links = {k: float(v) for k, v in api_args(p, COMPARE).items() if k != "gpus_per_node"}
    ring, multi = (_estimate(m, servers, g, s, links)["time_s"] for m in ("ring", "multi-ring"))
    want = ring / multi
    mistakes = (
        (1.0, f"Both send the same bytes between servers in total, but each card of the per-card "
         f"rings carries 1/{g} of what the flat ring pushes through its one card."),
        (links["intra_bw"] / links["inter_bw"], "That is NVLink's rate over the card's, but a ring "
         "waits for its slowest hop in both methods: what differs is how much each card "
         "carries."),
    )  # fmt: skip
    result = (
        f"The flat ring takes {fmt.seconds(ring)}, one ring per card {fmt.seconds(multi)}: "
        f"{fmt.sig(want, 3)} times as long"
    )
    return judge_quantity(answer, want, COUNT, "", COMPARE_TOLERANCE, mistakes, _times_text, result)


def _times_text(x: float) -> str:
    return f"{fmt.sig(x, 3)}×"


def _nccl(n: int, g: int, nbytes: float, card_Gbps: float) -> nccl.Candidate | None:
    """NCCL's pick for this all-reduce, one card per GPU at the card's rate; None where its
    model does not reach (one GPU, a card outside 1-3200 Gb/s, more than 16 TiB), as nccl.System
    and nccl.choose check it."""
    try:
        return nccl.choose(
            "AllReduce", round(nbytes), nccl.System(NCCL_GPU, n, g, g, float(card_Gbps))
        )
    except ParamError:
        return None


def _nccl_note(pick: nccl.Candidate | None, servers: int, g: int, card_Gbps: float) -> str:
    if pick is None:
        return "NCCL's choice needs 2 or more GPUs and a card of 1-3200 Gb/s."
    return (
        f"NCCL picks {pick.algorithm} with {pick.protocol}, {FITTED.name} "
        f"{fmt.seconds(pick.time_us * 1e-6)}, on H100 SXM servers with one "
        f"{fmt.sig(card_Gbps, 3)} Gb/s card per GPU, its own NVLink rate and latencies "
        "(the latency fields above feed only the closed forms). Its rings cross each server "
        "boundary once per channel, with every card busy."
    )


def _counted_note(servers: int, g: int, counts: dict) -> str:
    if servers == 1:
        return "One server: nothing crosses the network."
    if counts["ring"] is None:
        return (
            f"{servers * g} GPUs is more than the page counts live ({MAX_COUNTED_GPUS}); "
            "times still come from the formulas."
        )
    return (
        "Bytes counted message by message in the simulation, as in the stepper above, on a small "
        "vector, then scaled to this gradient."
    )


def _verdict(at: dict, servers: int, g: int) -> str:
    if servers == 1:
        return "One server: all three are the same ring over NVLink."
    order = sorted(METHODS, key=lambda m: at[m]["time_s"])
    best, second = order[0], order[1]
    t0, t1 = at[best]["time_s"], at[second]["time_s"]
    if t1 <= t0 * 1.005:
        return (
            f"By the closed forms, for these settings {LABELS[best]} and {LABELS[second]} take "
            "the same time."
        )
    return (
        f"By the closed forms, for these settings the fastest is {LABELS[best]}: "
        f"{fmt.seconds(t0)}, {t1 / t0:.2g}× faster than {LABELS[second]}."
    )


def _figure(times: dict, servers: int, g: int, at: dict, nccl_times: list, nccl_at) -> dict:
    symbols = {"ring": "circle", "multi-ring": "diamond", "hierarchical": "square"}
    data = [
        fig.line(
            f"{LABELS[m]}, {WHITEBOARD.legend}",
            SERVER_X,
            times[m],
            SERIES[m],
            WHITEBOARD.dash,
            marker={"symbol": symbols[m]},
            hover="%{x} servers: %{y:.3g} s",
        )
        for m in METHODS
    ]
    xs = [x for x, c in zip(SERVER_X, nccl_times, strict=True) if c]
    ys = [c.time_us * 1e-6 for c in nccl_times if c]
    data.append(
        fig.line(NCCL_LABEL, xs, ys, SERIES["tree"], dash=FITTED.dash, marker={"symbol": "x"},
                 hover="%{x} servers: %{y:.3g} s")
    )  # fmt: skip
    here = [at[m]["time_s"] for m in METHODS] + ([nccl_at.time_us * 1e-6] if nccl_at else [])
    data.append(fig.you_are_here(f"{servers} servers", servers, here, 14))
    return {
        "data": data,
        "layout": fig.layout(
            fig.log_axis(f"servers ({g} GPUs each)", (0.8, 80)),
            fig.log_axis(
                "all-reduce time", fig.around([y for t in data for y in t["y"]]), fig.SECONDS
            ),
            fig.LEGEND_BELOW,
            fig.MARGIN_BELOW,
        ),
    }


# ---- Figures the prose quotes ----------------------------------------------------------------


def facts() -> dict[str, str]:
    """Across servers: 8 servers of 8 H100s and 14 GB: bytes and steps counted, times by the closed
    forms at line rate and by the fitted time of NCCL's choice; NCCL's pick for a 1 MB message."""
    s, nodes, g = EXAMPLE_GRADIENT_BYTES, 8, 8
    c = {m: count_bytes(m, nodes, g, s) for m in METHODS}
    t = {
        m: api.estimate(algorithm=m, gpus=nodes * g, bytes=s, gpus_per_node=g)["time_s"]
        for m in METHODS
    }
    small = 1e6  # 1 MB: NCCL's pick for a small message
    two = {m: count_bytes(m, 2, g, s) for m in METHODS}
    big, little = _nccl(nodes * g, g, s, NIC_400G_Gbps), _nccl(nodes * g, g, small, NIC_400G_Gbps)
    out = {
        "srv_nccl_time": fmt.seconds(big.time_us * 1e-6),
        "srv_nccl_pick": f"{big.algorithm}/{big.protocol}",
        "srv_nccl_small": fmt.seconds(little.time_us * 1e-6),
        "srv_nccl_small_pick": f"{little.algorithm}/{little.protocol}",
        "srv_gradient": fmt.nbytes(s),
        "srv_small": fmt.nbytes(small),
        "srv_small_gb": f"{small / 1e9:g}",  # the same message, as the widget's GB field takes it
        "srv_lat_nvlink": f"{NCCL_NVLINK_HOP_US:g} µs",
        "srv_lat_network": f"{NCCL_NETWORK_HOP_US:g} µs",
        "srv_ratio_total_8": f"{c['ring']['total'] / c['hierarchical']['total']:.2f}",
        "srv_ratio_total_2": f"{two['ring']['total'] / two['hierarchical']['total']:.2f}",
        "srv_card_ratio": f"{c['ring']['per_card'] / c['multi-ring']['per_card']:.0f}",
        # NCCL's ring: 2(N - 1) network latencies (the hierarchical count), NVLink for the rest
        "srv_ring_nvlink_hops": str(
            c["ring"]["network_steps"] - c["hierarchical"]["network_steps"]
        ),
    }
    for m in METHODS:
        k = m.replace("-", "")
        out[f"srv_total_{k}"] = fmt.nbytes(c[m]["total"])
        out[f"srv_card_{k}"] = fmt.nbytes(c[m]["per_card"])
        out[f"srv_netsteps_{k}"] = str(c[m]["network_steps"])
        out[f"srv_time_{k}"] = fmt.seconds(t[m])
    return out


RECORDS = (
    Widget(
        "servers_stepper",
        servers_stepper,
        STEPPER,
        views.STEPPER,
        label=(
            "An all-reduce across servers, step by step, with the bytes it sends over the network"
        ),
        headline=STEPPER_HEADLINE,
        readouts={"main": STEPPER_READOUTS},
    ),
    Widget(
        "servers_compare",
        servers_compare,
        COMPARE,
        views.CHART,
        # the three closed forms side by side are the table's cells, labelled there
        headline=(
            ("nccl_time", f"NCCL's choice, {FITTED.name}: one all-reduce"),
            ("nccl_pick", "NCCL picks"),
        ),
        label="Bytes over the network and time of three all-reduce methods as servers are added",
        layout=(("partial", "servers_table"), ("chart", "The chart's data as a table")),
        extras=("_predict",),
        predict=predict_compare,
    ),
)
