"""Latency, ring against tree: time against size, steps against GPUs, the tree stepped.

The time chart holds two models. NCCL's own (the `nccl` package, a port of NCCL 2.30.7's
tuning.cc) on servers of H100s with one network card per GPU: the ring's and the tree's best
protocol, and a band of what NCCL picks at each size. And this page's teaching model (cost.py's
closed forms on a flat network: every GPU its own server, one latency alpha per message), which
the steppers and the step counts explain.
"""

from __future__ import annotations

import math
from functools import lru_cache

from .. import api, fmt, nccl
from ..catalog.hardware import GIB, NCCL_GPU
from ..costs import cost
from ..costs.latency_model import (
    NCCL_NETWORK_HOP_US,
    SIZES,
    crossover,
    flat,
    nccl_crossovers,
    ring_time,
    whole,
)
from ..errors import ParamError
from ..palette import GPU_COLOURS, NEUTRAL, SERIES
from ..params import DTYPE, SEED, VALUES, Param, defaults, spec, validated
from ..schedules import tree
from ..schedules.ring import steps as ring_steps
from ..schedules.schedule import split
from ..schedules.topology import NIC_400G_GBps
from ..simulation.verify import check
from . import Widget, diagram, views
from . import figures as fig
from .common import chunk_of, stepper_frames, value_text, vectors

MAX_LATENCY_GPUS = 1024
# One colour per algorithm NCCL may pick (Okabe & Ito), one marker per protocol
ALGO_COLOURS = {"Ring": SERIES["ring"], "Tree": SERIES["tree"], "NVLS": GPU_COLOURS[6],
                "NVLSTree": GPU_COLOURS[0], "CollNetDirect": GPU_COLOURS[5],
                "CollNetChain": GPU_COLOURS[5]}  # fmt: skip
PROTO_SYMBOLS = {"LL": "circle", "LL128": "diamond", "Simple": "square"}


LATENCY = spec(
    Param("gpus", 64, "int", "GPUs", 2, MAX_LATENCY_GPUS),
    Param("gpus_per_node", 8, "int", "GPUs per server (NCCL's model)", 1, 8),
    Param("latency_us", NCCL_NETWORK_HOP_US, "float", "Latency per message α (µs, teaching model)",
          0, 10000, unit="µs"),
    Param("bandwidth_gbps", NIC_400G_GBps, "float", "Network card B (GB/s)", 0.125, 400,
          unit="GB/s"),
)  # fmt: skip


def nccl_system(gpus: int, per_node: int, card_GBps: float) -> nccl.System:
    """NCCL's servers: H100s, `per_node` to a server, one card of `card_GBps` per GPU."""
    return nccl.System(NCCL_GPU, gpus, per_node, per_node, card_GBps * 8)


@lru_cache(maxsize=32)
def _nccl_curves(s: nccl.System) -> tuple[nccl.Best, list[float]]:
    """NCCL's times at the page's sizes and its crossovers, once per cluster: the teaching
    model's α does not change them. Read only: they are shared."""
    best = nccl.best_by_algorithm(s, whole(SIZES))
    return best, nccl_crossovers(s, best)


def latency(params=None) -> dict:
    """Latency: time of one all-reduce against size, NCCL's model and the teaching model, with
    the crossovers and a band of what NCCL picks."""
    p = validated(params, LATENCY)
    n, per, alpha, gbps = p["gpus"], p["gpus_per_node"], float(p["latency_us"]), p["bandwidth_gbps"]
    if n % per:
        raise ParamError("gpus", f"{n} GPUs do not fill servers of {per}: use a multiple of {per}")
    sizes = whole(SIZES)
    nc, xs_n = _nccl_curves(nccl_system(n, per, float(gbps)))
    xn = xs_n[0] if xs_n else None
    topo = flat(n, float(gbps), alpha)
    ring = [ring_time(topo, s) for s in SIZES]
    tr = [cost.tree_time_fast(topo, s) for s in SIZES]
    x = crossover(topo, d=[a - b for a, b in zip(ring, tr, strict=True)])
    nring = [t * 1e-6 for t in nc.time_us["Ring"]]
    ntree = [t * 1e-6 for t in nc.time_us["Tree"]]
    data = [
        _curve("ring, NCCL", nring, SERIES["ring"], "solid", 2.5),
        _curve("tree, NCCL", ntree, SERIES["tree"], "solid", 2.5),
        _curve("ring, teaching", ring, SERIES["ring"], "dash", 1.5),
        _curve("tree, teaching", tr, SERIES["tree"], "dash", 1.5),
    ]
    lo = min(min(ring), min(tr), min(nring), min(ntree))
    hi = max(max(ring), max(tr), max(nring), max(ntree))
    for at, name, symbol in (
        (xn, "NCCL crossover", "diamond"),
        (x, "teaching crossover", "x"),
    ):
        if at is not None:
            data.append(_marker(at, lo, hi, f"{name}: {fmt.nbytes(at)}", symbol))
    data += _band(sizes, nc.pick)
    big = -1  # 8 GiB
    a8, p8, t8 = nc.pick[big]
    where = f"{n // per} server{'s' if n // per > 1 else ''} of {per} H100"
    summary = (
        f"NCCL's model on {where} (one {fmt.sig(gbps, 3)} GB/s card per GPU): 8 GiB takes "
        f"{fmt.seconds(nring[big])} on the ring and {fmt.seconds(ntree[big])} on the tree; NCCL "
        f"picks {a8} {p8} ({fmt.seconds(t8 * 1e-6)}). "
        + (
            f"Its ring catches up with its tree at {fmt.nbytes(xn)}{_again(xs_n)}. "
            if xn is not None
            else "Its ring and tree do not cross between 8 B and 8 GiB. "
        )
        + f"This page's teaching model ({n} GPUs each on its own server, "
        f"α = {fmt.sig(alpha, 3)} µs per message): ring {fmt.seconds(ring[0])} and tree "
        f"{fmt.seconds(tr[0])} at 8 B, "
        f"{fmt.seconds(ring[big])} and {fmt.seconds(tr[big])} at 8 GiB; "
        + (f"they cross at {fmt.nbytes(x)}." if x is not None else _no_crossover(ring, tr))
    )
    columns = ["size", "NCCL ring", "NCCL tree", "NCCL picks", "teaching ring", "teaching tree"]
    rows = list(zip(sizes, nring, ntree, nc.pick, ring, tr, strict=True))[::8]
    table = {
        "columns": columns,
        "rows": [
            [fmt.nbytes(s), fmt.seconds(a), fmt.seconds(b), f"{pk[0]} {pk[1]}", fmt.seconds(c),
             fmt.seconds(d)]
            for s, a, b, pk, c, d in rows
        ],
    }  # fmt: skip
    return views.chart(
        params=p,
        main=views.part(
            figure={"data": data, "layout": _time_layout(SIZES[0], SIZES[-1])},
            summary=summary,
            table=table,
        ),
        readouts={
            "crossover_nccl": "none in 8 B – 8 GiB" if xn is None else fmt.nbytes(xn),
            "nccl_8gib": f"ring {fmt.seconds(nring[big])}, tree {fmt.seconds(ntree[big])}",
            "nccl_pick_8gib": f"{a8} {p8}, {fmt.seconds(t8 * 1e-6)}",
            "band": band_text(sizes, nc.pick),
            "crossover": "none in 8 B – 8 GiB" if x is None else fmt.nbytes(x),
            "crossover_exact": "—" if x is None else f"{x:,.0f} bytes",
            "ring_small": fmt.seconds(ring[0]),
            "tree_small": fmt.seconds(tr[0]),
            "ring_steps": str(ring_steps(n)),
            "tree_steps": str(tree.steps(n)),
        },
        # the core's answers the chart was drawn from: facts' and the tests'
        data={
            "crossover_bytes": x,
            "crossover_nccl_bytes": xn,
            "crossovers_nccl_bytes": xs_n,
            "picks": [
                {"bytes": s, "algorithm": a, "protocol": q}
                for s, (a, q, _) in zip(sizes, nc.pick, strict=True)
            ],
        },
    )


def _again(xs: list[float]) -> str:
    if len(xs) < 2:
        return ""
    return f" (the tree's size correction makes them trade places up to {fmt.nbytes(xs[-1])})"


def segments(sizes, picks) -> list[tuple[int, int, str, str]]:
    """NCCL's picks as runs along the size axis: (first size, last size, algorithm, protocol)."""
    out: list[tuple[int, int, str, str]] = []
    for s, (a, q, _) in zip(sizes, picks, strict=True):
        if out and out[-1][2:] == (a, q):
            out[-1] = (out[-1][0], s, a, q)
        else:
            out.append((s, s, a, q))
    return out


def band_text(sizes, picks) -> str:
    runs = segments(sizes, picks)
    return "; ".join(f"{a} {q} from {fmt.nbytes(lo)}" for lo, _, a, q in runs)


BAND_EVERY = 4  # a mark every half octave: its shape (the protocol) stays readable


def _band(sizes, picks) -> list[dict]:
    """A strip under the chart (its own small y axis): a mark every half octave, coloured by the
    algorithm NCCL picks and shaped by the protocol; one legend entry per pair."""
    by: dict[tuple[str, str], list[int]] = {}
    for s, (a, q, _) in list(zip(sizes, picks, strict=True))[::BAND_EVERY]:
        by.setdefault((a, q), []).append(s)
    return [
        fig.dots(f"picks {a} {q}", xs, [0] * len(xs), ALGO_COLOURS[a], PROTO_SYMBOLS[q], 9,
                 hover=f"%{{x:.3s}}B: NCCL picks {a} {q}", yaxis="y2")
        for (a, q), xs in by.items()
    ]  # fmt: skip


def _no_crossover(ring, tr) -> str:
    if ring[0] <= tr[0]:
        return "the ring is never slower here: no crossover."
    return "the tree stays faster up to 8 GiB: no crossover in this range."


def _curve(name, y, colour, dash, width) -> dict:
    return fig.line(name, SIZES, y, colour, dash, width, hover="%{x:.3s}B: %{y:.3s}s")


def _marker(x: float, lo: float, hi: float, name: str, symbol: str) -> dict:
    """A vertical line at the crossover, with a marker at its foot."""
    marker = {"size": [10, 0], "symbol": symbol}
    trace = fig.line(name, [x, x], [lo, hi], NEUTRAL, "dot", 1, marker)
    return {**trace, "hovertemplate": name + "<extra></extra>"}


SECONDS_TICKS = ["1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms",
                 "1 s", "10 s", "100 s", "1000 s"]  # fmt: skip


def _time_layout(small: float, large: float) -> dict:
    return fig.layout(
        fig.log_axis(
            "message size per GPU",
            [math.log10(small), math.log10(large)],
            [8, 1024, 2**20, GIB, 8 * GIB],
            ["8 B", "1 KiB", "1 MiB", "1 GiB", "8 GiB"],
            anchor="y2",  # the tick labels under the strip of NCCL's picks
        ),
        fig.log_axis(
            "time of one all-reduce",
            ticks=[10.0**e for e in range(-9, 4)],
            ticktext=SECONDS_TICKS,
            domain=[0.12, 1],
        ),
        yaxis2={"domain": [0, 0.07], "range": [-1, 1], "showgrid": False, "zeroline": False,
                "tickvals": [0], "ticktext": ["picks"], "fixedrange": True},
    )  # fmt: skip


# ---- Steps against GPU count -------------------------------------------------------------------

STEPS = spec(Param("gpus", 1024, "int", "GPUs (marked on the chart)", 2, fig.GPU_SWEEP[-1]))


def steps(params=None) -> dict:
    """Lock-step rounds of a small all-reduce: the ring's 2(n - 1) against the tree's ~2 log2 n."""
    p = validated(params, STEPS)
    n = p["gpus"]
    ring = [ring_steps(x) for x in fig.GPU_SWEEP]
    tr = [tree.steps(x) for x in fig.GPU_SWEEP]
    logs = [2 * math.log2(x) for x in fig.GPU_SWEEP]
    data = [
        _steps_line("ring: 2(n−1)", ring, SERIES["ring"], "solid", "circle"),
        _steps_line("tree: counted from its schedule", tr, SERIES["tree"], "dash", "square"),
        _steps_line("2 log₂ n", logs, NEUTRAL, "dot", None),
        fig.you_are_here(f"{n} GPUs", n, [ring_steps(n), tree.steps(n)]),
    ]
    return views.chart(
        params=p,
        main=views.part(
            figure={
                "data": data,
                "layout": fig.layout(
                    fig.gpus_axis(),
                    fig.log_axis("steps (message after message)", [0, math.log10(20000)]),
                ),
            },
            summary=(
                f"At {n} GPUs a small all-reduce takes {ring_steps(n):,} steps on the ring and "
                f"{tree.steps(n)} on the tree."
            ),
            table={
                "columns": ["GPUs", "ring steps", "tree steps", "2 log₂ n"],
                "rows": [
                    [x, f"{a:,}", b, fmt.sig(c, 3)]
                    for x, a, b, c in zip(fig.GPU_SWEEP, ring, tr, logs, strict=True)
                ],
            },
        ),
        readouts={"ring": f"{ring_steps(n):,}", "tree": str(tree.steps(n))},
    )


def _steps_line(name, y, colour, dash, symbol) -> dict:
    marker = {"symbol": symbol, "size": 6} if symbol else None
    return fig.line(name, fig.GPU_SWEEP, y, colour, dash, 2, marker, "%{x} GPUs: %{y:.3g} steps")


# ---- The tree, step by step --------------------------------------------------------------------

TREE = spec(
    Param("gpus", 8, "int", "GPUs", 2, 16),
    Param("length", 8, "int", "Numbers per gradient", 2, 64),
    Param("chunks", 2, "int", "Chunks per tree (pipeline)", 1, 4),
    DTYPE,
    SEED,
    VALUES,
)


def tree_allreduce(params=None) -> dict:
    """Latency: the double binary tree on real numbers, up the trees and down, then the check."""
    p = validated(params, TREE)
    n, k, dtype = p["gpus"], p["chunks"], p["dtype"]
    inputs = vectors(p, n, dtype, TREE["length"].hi)
    length = len(inputs[0])
    if length < 2 * k:
        raise ParamError("length", f"needs at least {2 * k} numbers: two trees × {k} chunks")
    r = api.simulate("tree", n, values=inputs, dtype=dtype, trace=True, chunks=k)
    halves = split(0, length, 2)
    chunks = [c for a, b in halves for c in split(a, b, k)]
    parents = tree.dtree_parents(n)
    levels = [tree.heights_depths(pa)[1] for pa in parents]
    narrate = _tree_narration(chunks, k, halves[1][0], parents, levels, dtype, n)
    frames = stepper_frames(r["trace"], r["inputs"], [[1] * length] * n, n, chunks, narrate)
    verdict = check(r)
    frames[-1]["narration"].append(verdict["verdict"])
    state = views.stepper(
        params={**p, "gpus": n, "length": length, "chunks": k},
        dtype=r["dtype"],
        chunks=chunks,
        inputs=r["inputs"],
        target=r["target"],
        extra_rows=[{"label": "target (sum)", "values": r["target"]}],
        frames=frames,
        editable=True,
        check=verdict,
        readouts={
            "tree_a": _tree_text(parents[0], "A", range(0, k)),
            "tree_b": _tree_text(parents[1], "B", range(k, 2 * k)),
            "steps": f"{len(frames) - 1} (the ring would take {ring_steps(n)})",
        },
    )
    return diagram.attach(state, diagram.trees(parents, lambda c: int(c >= k)))


def _tree_text(parents: list[int], name: str, chunk_ids) -> str:
    root = parents.index(-1)
    kids: dict[int, list[int]] = {}
    for v, up in enumerate(parents):
        if up >= 0:
            kids.setdefault(up, []).append(v)
    edges = "; ".join(
        f"GPU {u} ← {', '.join(map(str, sorted(vs)))}" for u, vs in sorted(kids.items())
    )
    ids = list(chunk_ids)
    which = f"chunk {ids[0]}" if len(ids) == 1 else f"chunks {ids[0]}–{ids[-1]}"
    return f"Tree {name} carries {which}; root GPU {root}; parent ← children: {edges}."


def _tree_narration(chunks, k, b_start, parents, levels, dtype, n):
    def vals(v):
        return ", ".join(value_text(x, dtype) for x in v)

    def narrate(step, s):
        if step is None:
            return [
                f"Each of the {n} GPUs holds its own gradient. Tree A adds up the first half "
                f"(chunks 0–{k - 1}), tree B the second half (chunks {k}–{2 * k - 1}); "
                "each half is cut into chunks that follow each other up the tree. "
                "Level 0 is a tree's root."
            ]
        up = step["op"] == "add"
        head = (
            f"Step {s}: partial sums climb one level towards the roots, which add them in."
            if up
            else f"Step {s}: the finished sums come back down, one level per step."
        )
        lines = [head]
        for m in step["messages"]:
            t = 0 if m["start"] < b_start else 1
            src, dst = m["src"], m["dst"]
            c = chunk_of(chunks, m["start"], m["stop"])
            now = vals(step["buffers"][dst][m["start"] : m["stop"]])
            name = "AB"[t]
            if up:
                lines.append(
                    f"Tree {name}, level {levels[t][src]} → {levels[t][dst]}: GPU {src} sends "
                    f"chunk {c} ({vals(m['values'])}) to its parent GPU {dst}, which adds it "
                    f"in (GPU {dst} holds {now} after this step)."
                )
            else:
                lines.append(
                    f"Tree {name}, level {levels[t][src]} → {levels[t][dst]}: GPU {src} sends "
                    f"the finished chunk {c} ({vals(m['values'])}) to its child GPU {dst}."
                )
        return lines

    return narrate


RECORDS = (
    Widget(
        "latency",
        latency,
        LATENCY,
        views.CHART,
        readouts={
            "main": (
                ("crossover_nccl", "NCCL's model: ring catches up with tree at"),
                ("nccl_8gib", "NCCL's model: 8 GiB"),
                ("nccl_pick_8gib", "NCCL picks at 8 GiB"),
                ("band", "NCCL picks, by size"),
                ("crossover", "Teaching model: crossover"),
                ("ring_small", "Teaching model: 8 B on the ring"),
                ("tree_small", "Teaching model: 8 B on the tree"),
            ),
        },
    ),
    Widget(
        "steps",
        steps,
        STEPS,
        views.CHART,
        readouts={"main": (("ring", "Ring steps"), ("tree", "Tree steps"))},
    ),
    Widget(
        "tree_allreduce",
        tree_allreduce,
        TREE,
        views.STEPPER,
        label="The double binary tree all-reduce, step by step, and the exact check",
        readouts={"setup": (("tree_a", "Tree A"), ("tree_b", "Tree B"), ("steps", "Steps"))},
    ),
)


def nccl_latency_us(algorithm: str, gpus: int, per_node: int) -> float:
    """NCCL's latency (base included) of an all-reduce with the Simple protocol, as its tables
    hold it (tuning.cc:384-435), on servers of `per_node` H100s."""
    s = nccl_system(gpus, per_node, NIC_400G_GBps)
    return nccl.tables(s)[(algorithm, "Simple")].latency_us


def facts() -> dict[str, str]:
    """Latency: the quoted figures."""
    d = defaults(LATENCY)
    n, per, a, b = d["gpus"], d["gpus_per_node"], d["latency_us"], d["bandwidth_gbps"]
    topo = flat(n, b, a)
    tree_small = cost.tree_time_fast(topo, 8)
    ring_small = ring_time(topo, 8)
    system, flat_system = nccl_system(n, per, b), nccl_system(n, 1, b)
    big = [8 * GIB]
    nc, nf = nccl.best_by_algorithm(system, big), nccl.best_by_algorithm(flat_system, big)
    pick = nc.pick[0]
    sizes = whole(SIZES)
    tree_flat = nccl_latency_us("Tree", n, 1)
    xs_flat = nccl_crossovers(flat_system)
    return {
        "lat_gpus": str(n),
        "lat_per_node": str(per),
        "lat_servers": str(n // per),
        "lat_alpha": f"{a:g} µs",
        "lat_bw": f"{b:g} GB/s",
        "lat_cross": fmt.nbytes(crossover(topo)),
        "lat_cross_2alpha": fmt.nbytes(crossover(flat(n, b, 2 * a))),
        "lat_ring_8gib": fmt.seconds(ring_time(topo, 8 * GIB)),
        "lat_tree_8gib": fmt.seconds(cost.tree_time_fast(topo, 8 * GIB)),
        "lat_tree_chunks_8gib": f"{cost.tree_chunks(8 * GIB):,}",
        "lat_ring_small": fmt.seconds(ring_small),
        "lat_tree_small": fmt.seconds(tree_small),
        "lat_ring_alphas": fmt.sig(ring_small / (a * 1e-6), 3),
        "lat_tree_alphas": fmt.sig(tree_small / (a * 1e-6), 3),
        "lat_tree_steps": str(tree.steps(n)),
        "lat_ring_steps": str(ring_steps(n)),
        "lat_nccl_cross": fmt.nbytes(nccl_crossovers(system)[0]),
        "lat_nccl_cross_flat": fmt.nbytes(xs_flat[0]),
        "lat_nccl_cross_flat_last": fmt.nbytes(xs_flat[-1]),
        "lat_nccl_ring_8gib": fmt.seconds(nc.time_us["Ring"][0] * 1e-6),
        "lat_nccl_tree_8gib": fmt.seconds(nc.time_us["Tree"][0] * 1e-6),
        "lat_nccl_pick_8gib": f"{pick[0]} {pick[1]}",
        "lat_nccl_flat_ring_8gib": fmt.seconds(nf.time_us["Ring"][0] * 1e-6),
        "lat_nccl_flat_tree_8gib": fmt.seconds(nf.time_us["Tree"][0] * 1e-6),
        "lat_nccl_band": band_text(sizes, nccl.best_by_algorithm(system, sizes).pick),
        "steps_1024_ring": f"{ring_steps(1024):,}",
        "steps_1024_tree": str(tree.steps(1024)),
        "steps_4096_tree": str(tree.steps(4096)),
        "nccl_version": nccl.NCCL_VERSION,
        "nccl_ring_flat": f"{fmt.sig(nccl_latency_us('Ring', n, 1), 4)} µs",
        "nccl_tree_flat": f"{fmt.sig(tree_flat, 4)} µs",
        "nccl_tree_flat_share": f"{tree_flat * 1e-6 / tree_small:.2f}",
        "nccl_ring_8x8": f"{fmt.sig(nccl_latency_us('Ring', 64, 8), 4)} µs",
        "nccl_tree_8x8": f"{fmt.sig(nccl_latency_us('Tree', 64, 8), 4)} µs",
        "nccl_tree_1x8": f"{fmt.sig(nccl_latency_us('Tree', 8, 8), 3)} µs",
        "nccl_ring_1x8": f"{fmt.sig(nccl_latency_us('Ring', 8, 8), 3)} µs",
        "tree_stepper_steps": str(tree.steps(TREE["gpus"].default, TREE["chunks"].default)),
        "tree_stepper_ring_steps": str(ring_steps(TREE["gpus"].default)),
    }
