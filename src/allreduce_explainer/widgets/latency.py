"""Latency, ring against tree: time against size, steps against GPUs, the tree stepped, and
bus bandwidth against size.

The time chart is NCCL's model (the `nccl` package, a port of NCCL 2.30.7's tuning.cc) on
servers of H100s with one network card per GPU: the ring's and the tree's best protocol, and a
band of what NCCL picks at each size. The page's whiteboard model (cost.py's lock-step closed
forms on a flat network: every GPU its own server, one latency alpha per message) counts steps
and start-up costs; it has a chart of its own, titled with its cluster, so that each chart
shows one model of one cluster. The busbw chart is NCCL's model beside the cited all_reduce_perf
runs on the same system.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from .. import api, fmt, nccl
from ..catalog import hardware, measured
from ..catalog.hardware import GIB, NCCL_GPU, NIC_400G_Gbps
from ..costs import cost
from ..costs.latency_model import (
    NCCL_NETWORK_HOP_US,
    SIZES,
    crossover,
    flat,
    nccl_crossovers,
    pick_starts,
    ring_time,
    whole,
)
from ..errors import ParamError
from ..exercises.check import close
from ..exercises.check import verdict as judged
from ..exercises.units import BYTES
from ..nccl import BASE_LATENCY_US, HW_LATENCY_US, NIC_GBPS, RING_PLATEAU_FACTOR
from ..palette import GPU_COLOURS, NEUTRAL, SERIES
from ..params import Param, api_args, defaults, narrowed, spec, validated
from ..performance import fitted
from ..schedules import tree
from ..schedules.ring import steps as ring_steps
from ..schedules.schedule import split
from ..simulation.verify import check
from ..sources import ESTIMATE, FITTED, REFERENCE_DASH, WHITEBOARD
from . import Widget, common, diagram, views
from . import figures as fig
from .common import chunk_of, gap, read_answer, stepper_frames, summed, traced, vectors

MAX_LATENCY_GPUS = 1024
# One colour per algorithm NCCL may pick (Okabe & Ito), one marker per protocol
ALGO_COLOURS = {"Ring": SERIES["ring"], "Tree": SERIES["tree"], "NVLS": GPU_COLOURS[6],
                "NVLSTree": GPU_COLOURS[0], "CollNetDirect": GPU_COLOURS[5],
                "CollNetChain": GPU_COLOURS[5]}  # fmt: skip
PROTO_SYMBOLS = {"LL": "circle", "LL128": "diamond", "Simple": "square"}


LATENCY = spec(
    narrowed(api.NCCL_SWEEP["gpus"], label="GPUs", default=64, lo=2, hi=MAX_LATENCY_GPUS),
    narrowed(api.NCCL_SWEEP["gpus_per_node"], label="GPUs per server (NCCL's curves)", default=8,
             hi=8, optional=False),
    # the whiteboard model's network link, under the page's names
    narrowed(api.ESTIMATE["inter_latency"], "latency_us",
             label="Whiteboard model's α per message (µs)", default=NCCL_NETWORK_HOP_US,
             hi=10000),
    # the card, asked as sold: NCCL's curves take it so, the whiteboard model's B in GB/s
    narrowed(api.ESTIMATE["inter_bw"], "nic_gbps", as_flag=True,
             label="Network card (Gb/s, one per GPU)", lo=NIC_GBPS[0], hi=NIC_GBPS[1]),
)  # fmt: skip


def nccl_system(gpus: int, per_node: int, *, card_Gbps: float) -> nccl.System:
    """NCCL's servers: H100s, `per_node` to a server, one card of `card_Gbps` per GPU (as sold;
    a keyword, so no caller passes the model's GB/s by mistake)."""
    return nccl.System(NCCL_GPU, gpus, per_node, per_node, float(card_Gbps))


def whiteboard_bw(p: dict) -> float:
    """The whiteboard model's B, GB/s: the page's card (Gb/s) in the model's unit, as api_args
    hands it to api.estimate."""
    return float(api_args(p, LATENCY, api.ESTIMATE)["inter_bw"])


@lru_cache(maxsize=32)
def _nccl_curves(s: nccl.System) -> tuple[nccl.Best, list[float]]:
    """NCCL's times at the page's sizes and its crossovers, once per cluster: the teaching
    model's α does not change them. Read only: they are shared."""
    best = nccl.best_by_algorithm(s, whole(SIZES))
    return best, nccl_crossovers(s)


def latency(params=None) -> dict:
    """Latency: time of one all-reduce against size, NCCL's model and the teaching model, with
    the crossovers and a band of what NCCL picks."""
    p = validated(params, LATENCY)
    n, per, alpha, gbps = p["gpus"], p["gpus_per_node"], float(p["latency_us"]), whiteboard_bw(p)
    if n % per:
        raise ParamError("gpus", f"{n} GPUs do not fill servers of {per}: use a multiple of {per}")
    sizes = whole(SIZES)
    system = nccl_system(n, per, card_Gbps=p["nic_gbps"])
    nc, xs_n = _nccl_curves(system)
    xn = xs_n[0] if xs_n else None
    topo = flat(n, float(gbps), alpha)
    ring = [ring_time(topo, s) for s in SIZES]
    tr = [cost.tree_time_fast(topo, s) for s in SIZES]
    x = crossover(topo, d=[a - b for a, b in zip(ring, tr, strict=True)])
    nring = [t * 1e-6 for t in nc.time_us["Ring"]]
    ntree = [t * 1e-6 for t in nc.time_us["Tree"]]
    big = -1  # 8 GiB
    a8, p8, t8 = nc.pick[big]
    where = f"{n // per} server{'s' if n // per > 1 else ''} of {per} H100"
    card = f"one {fmt.sig(p['nic_gbps'], 3)} Gb/s card per GPU"
    summary = (
        f"{ESTIMATE.name} on {where} ({card}): 8 GiB takes "
        f"{fmt.seconds(nring[big])} on the ring and {fmt.seconds(ntree[big])} on the tree; NCCL "
        f"picks {a8} {p8} ({fmt.seconds(t8 * 1e-6)}). "
        + (
            f"Its ring catches up with its tree at {fmt.nbytes(xn)}{_again(xs_n)}."
            if xn is not None
            else "Its ring and tree do not cross between 8 B and 8 GiB."
        )
    )
    rows = list(zip(sizes, nring, ntree, nc.pick, strict=True))[::8]
    table = {
        "columns": ["size", "NCCL ring", "NCCL tree", "NCCL picks"],
        "rows": [
            [fmt.nbytes(s), fmt.seconds(a), fmt.seconds(b), f"{pk[0]} {pk[1]}"]
            for s, a, b, pk in rows
        ],
    }
    board = f"{n} GPUs, each on its own server, α = {fmt.sig(alpha, 3)} µs per message"
    board_summary = f"The whiteboard model ({board}, B = {fmt.sig(gbps, 3)} GB/s from {card}): " + (
        f"its ring and tree cross at {fmt.nbytes(x)}." if x is not None else _no_crossover(ring, tr)
    )
    board_table = {
        "columns": ["size", "whiteboard ring", "whiteboard tree"],
        "rows": [
            [fmt.nbytes(s), fmt.seconds(a), fmt.seconds(b)]
            for s, a, b in list(zip(sizes, ring, tr, strict=True))[::8]
        ],
    }
    return views.chart(
        params=p,
        main=views.part(
            figure=_nccl_figure(nring, ntree, xn, sizes, nc.pick, f"{where}, {card}"),
            summary=summary,
            table=table,
        ),
        figures={
            "whiteboard": views.part(
                figure=_whiteboard_figure(
                    ring, tr, x, f"{n} GPUs, one per server, α = {fmt.sig(alpha, 3)} µs"
                ),
                summary=board_summary,
                table=board_table,
            )
        },
        readouts={
            "crossover_nccl": "none in 8 B – 8 GiB" if xn is None else fmt.nbytes(xn),
            "nccl_8gib": f"ring {fmt.seconds(nring[big])}, tree {fmt.seconds(ntree[big])}",
            "nccl_pick_8gib": f"{a8} {p8}, {fmt.seconds(t8 * 1e-6)}",
            "band": band_text(system, sizes, nc.pick),
            "crossover": "none in 8 B – 8 GiB" if x is None else fmt.nbytes(x),
        },
        prediction=views.prediction(
            id=PREDICTION_ID,
            question=(
                "On the first chart, NCCL's estimate of its ring and of its tree (the two dotted "
                "curves): at what message size, in MB, will the ring catch up with the tree? "
                "Not the size from which NCCL picks its ring: it may pick neither. (If you "
                "think they never cross, type “never”.)"
            ),
            example="such as 1 MB",
            figures=["", "whiteboard"],
            readouts=["crossover_nccl", "crossover"],
        ),
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


PREDICTION_ID = "latency-crossover"
PREDICT_FACTOR = 2  # a guess on a log axis is right within a factor of two of the crossing
NEVER = re.compile(r"^\s*(never|none|no|not)\b", re.IGNORECASE)


def predict_latency(params, answer) -> dict:
    """The reader's guess of where NCCL's estimate has its ring catch up with its tree (the first
    chart's dotted curves' first crossing, or "never"), right within a factor of PREDICT_FACTOR,
    with the gap. Two other sizes are named when the guess is theirs: the whiteboard model's
    crossing (the second chart), and the size from which NCCL picks its ring (the strip). Every
    verdict says where the whiteboard model's curves cross, and what NCCL picks by size."""
    p = validated(params, LATENCY)
    n, gbps, alpha = p["gpus"], whiteboard_bw(p), float(p["latency_us"])
    system = nccl_system(n, p["gpus_per_node"], card_Gbps=p["nic_gbps"])
    best, xs = _nccl_curves(system)
    got = (
        None
        if isinstance(answer, str) and NEVER.match(answer)
        else read_answer(answer, BYTES, "MB")
    )
    if got is not None and got <= 0:
        raise ParamError("answer", "A message size is more than 0 B: type one such as 1 MB.")
    board, picks = _board_crossover(n, gbps, alpha), best.pick
    others = _other_models(board, band_text(system, whole(SIZES), picks))
    if not xs:
        faster = "ring" if best.time_us["Ring"][0] <= best.time_us["Tree"][0] else "tree"
        where = f"here they do not cross between 8 B and 8 GiB: the {faster} is faster throughout."
        head = "Right: " if got is None else f"Not quite: you said {fmt.nbytes(got)}; "
        return judged(got is None, f"{head}{where} {others}")
    at = f"NCCL's estimate has its ring catch up with its tree at {fmt.nbytes(xs[0])}"
    if got is None:
        return judged(False, f"Not quite: they do cross. {at}. {others}")
    result = f"{at}; {gap(got, xs[0], fmt.nbytes)}. {others}"
    runs = algorithm_runs(system, whole(SIZES), picks)
    ring_from = next((lo for lo, a in runs[1:] if a == "Ring"), None)
    if board is not None and close(got, board, 0.1) and not close(xs[0], board, 0.1):
        return judged(False, f"That is where the whiteboard model's curves cross. {result}")
    if ring_from is not None and _within(got, ring_from) and not _within(xs[0], ring_from):
        return judged(
            False, "That is where NCCL starts to pick its ring, not where its curves cross: "
            f"NCCL may pick neither. {result}"
        )  # fmt: skip
    return judged(
        _within(got, xs[0]), ("Right: " if _within(got, xs[0]) else "Not quite: ") + result
    )


def _within(a: float, b: float) -> bool:
    return 1 / PREDICT_FACTOR <= b / a <= PREDICT_FACTOR


def _board_crossover(n: int, gbps: float, alpha: float) -> float | None:
    """Where the whiteboard model's ring and tree cross on the page's second chart."""
    topo = flat(n, gbps, alpha)
    ring = [ring_time(topo, s) for s in SIZES]
    tr = [cost.tree_time_fast(topo, s) for s in SIZES]
    return crossover(topo, d=[a - b for a, b in zip(ring, tr, strict=True)])


def _other_models(board: float | None, band: str) -> str:
    """What the verdict says of the two other answers on the page: the whiteboard model's
    crossing and NCCL's picks by size."""
    crossing = "do not cross" if board is None else f"cross at {fmt.nbytes(board)}"
    return (
        f"The whiteboard model's curves (the second chart, every GPU on its own server) "
        f"{crossing}; NCCL picks {band}."
    )


def _nccl_figure(ring, tr, xn, sizes, picks, where: str) -> dict:
    """NCCL's model of one cluster: its ring and its tree, where they cross, and what NCCL
    picks at each size in a strip underneath."""
    lo, hi = min(ring + tr), max(ring + tr)
    data = [
        _curve(f"ring, {ESTIMATE.legend}", ring, SERIES["ring"], ESTIMATE.dash, ESTIMATE.width),
        _curve(f"tree, {ESTIMATE.legend}", tr, SERIES["tree"], ESTIMATE.dash, ESTIMATE.width),
    ]
    if xn is not None:
        data.append(_marker(xn, lo, hi, f"crossover: {fmt.nbytes(xn)}", "diamond"))
    data += _band(sizes, picks)
    return {
        "data": data,
        "layout": _time_layout((ESTIMATE.name, where), (lo, hi), strip=True),
    }


def _whiteboard_figure(ring, tr, x, board: str) -> dict:
    """The whiteboard model on its own cluster (every GPU its own server): its ring, its tree
    and their crossover, which its α moves."""
    lo, hi = min(ring + tr), max(ring + tr)
    data = [
        _curve(
            f"ring, {WHITEBOARD.legend}", ring, SERIES["ring"], WHITEBOARD.dash, WHITEBOARD.width
        ),
        _curve(f"tree, {WHITEBOARD.legend}", tr, SERIES["tree"], WHITEBOARD.dash, WHITEBOARD.width),
    ]
    if x is not None:
        data.append(_marker(x, lo, hi, f"teaching crossover: {fmt.nbytes(x)}", "x"))
    return {"data": data, "layout": _time_layout(("The whiteboard model", board), (lo, hi))}


def _again(xs: list[float]) -> str:
    if len(xs) < 2:
        return ""
    return f" (the tree's size correction makes them trade places up to {fmt.nbytes(xs[-1])})"


def band_text(system: nccl.System, sizes, picks) -> str:
    """What NCCL picks by size, each from the size where it starts (pick_starts: not a grid's)."""
    runs = pick_starts(system, sizes, picks)
    return "; ".join(f"{a} {q} from {fmt.nbytes(lo)}" for lo, a, q in runs)


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
        return "do not cross: the ring is never slower here."
    return "do not cross: the tree stays faster up to 8 GiB."


def algorithm_runs(system: nccl.System, sizes, picks) -> list[tuple[int, str]]:
    """NCCL's picks by algorithm alone (protocols merged): (first size, algorithm) per run, each
    from the size where NCCL starts to pick it (pick_starts)."""
    out: list[tuple[int, str]] = []
    for s, a, _ in pick_starts(system, sizes, picks):
        if not out or out[-1][1] != a:
            out.append((s, a))
    return out


def _curve(name, y, colour, dash, width) -> dict:
    return fig.line(name, SIZES, y, colour, dash, width, hover="%{x:.3s}B: %{y:.3s}s")


def _marker(x: float, lo: float, hi: float, name: str, symbol: str) -> dict:
    """A vertical line at the crossover, with a marker at its foot."""
    marker = {"size": [10, 0], "symbol": symbol}
    trace = fig.line(name, [x, x], [lo, hi], NEUTRAL, REFERENCE_DASH, 1, marker)
    return {**trace, "hovertemplate": name + "<extra></extra>"}


def _time_layout(title: tuple[str, str], times: tuple[float, float], strip: bool = False) -> dict:
    """Time against size on log axes, titled with the model and its cluster; with `strip`, room
    under the plot for the strip of NCCL's picks (its own small y axis), the size labels under
    the strip."""
    size = fig.log_axis("message size per GPU", (SIZES[0], SIZES[-1]), fig.BYTES)
    time = fig.log_axis("time of one all-reduce", fig.around(times), fig.SECONDS)
    extra = {}
    if strip:
        size["anchor"] = "y2"
        time["domain"] = [0.12, 1]
        extra["yaxis2"] = {"domain": [0, 0.07], "range": [-1, 1], "showgrid": False,
                           "zeroline": False, "tickvals": [0], "ticktext": ["picks"],
                           "fixedrange": True}  # fmt: skip
    return fig.layout(size, time, fig.LEGEND_BELOW, fig.MARGIN_BELOW, heading=title, **extra)


# ---- Steps against GPU count -------------------------------------------------------------------

STEPS = spec(
    narrowed(
        api.ESTIMATE["gpus"],
        label="GPUs (marked on the chart)",
        default=1024,
        lo=2,
        hi=fig.GPU_SWEEP[-1],
    )
)


def steps(params=None) -> dict:
    """Lock-step rounds of a small all-reduce: the ring's 2(n - 1) against the tree's ~2 log2 n."""
    p = validated(params, STEPS)
    n = p["gpus"]
    ring = [ring_steps(x) for x in fig.GPU_SWEEP]
    tr = [tree.steps(x) for x in fig.GPU_SWEEP]
    logs = [2 * math.log2(x) for x in fig.GPU_SWEEP]
    data = [
        _steps_line("ring: 2(n−1)", ring, SERIES["ring"], "solid", "circle"),
        _steps_line("tree: counted from its schedule", tr, SERIES["tree"], "solid", "square"),
        _steps_line("2 log₂ n", logs, NEUTRAL, REFERENCE_DASH, None),
        fig.you_are_here(f"{n} GPUs", n, [ring_steps(n), tree.steps(n)]),
    ]
    return views.chart(
        params=p,
        main=views.part(
            figure={
                "data": data,
                "layout": fig.layout(
                    fig.gpus_axis(),
                    fig.log_axis("steps (message after message)", (1, 20000)),
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
    common.simulated("gpus", "GPUs", default=8, lo=2, hi=16),
    common.simulated("length", "Numbers per gradient", default=8, lo=2, hi=64, optional=False),
    common.simulated("chunks", "Chunks per tree (pipeline)", default=2, hi=4, optional=False),
    common.DTYPE,
    common.SEED,
    common.VALUES,
)


def tree_allreduce(params=None) -> dict:
    """Latency: the double binary tree on real numbers, up the trees and down, then the check."""
    p = validated(params, TREE)
    n, k, dtype = p["gpus"], p["chunks"], p["dtype"]
    inputs = vectors(p, n, dtype, TREE["length"].hi)
    length = len(inputs[0])
    if length < 2 * k:
        raise ParamError("length", f"needs at least {2 * k} numbers: two trees × {k} chunks")
    r = traced(p, TREE, inputs, algorithm="tree")
    halves = split(0, length, 2)
    chunks = [c for a, b in halves for c in split(a, b, k)]
    parents = tree.dtree_parents(n)
    levels = [tree.heights_depths(pa)[1] for pa in parents]
    narrate = _tree_narration(chunks, k, halves[1][0], levels, n)
    frames = stepper_frames(r["trace"], r["inputs"], [[1] * length] * n, n, chunks, narrate)
    verdict = check(r)
    frames[-1]["narration"].append(verdict["verdict"])
    state = views.stepper(
        params={**p, "gpus": n, "length": length, "chunks": k},
        dtype=r["dtype"],
        chunks=chunks,
        **summed(r),
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


def _tree_narration(chunks, k, b_start, levels, n):
    """One line per tree, chunk and level a step moves: who sends to whom, grouped by parent
    ("1, 3 → 2 and 5, 7 → 6"), not one line per message, so a step reads at a glance; the
    values are in the grid beside it."""

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
            f"Step {s}: partial sums climb one level; each parent adds in what its children send."
            if up
            else f"Step {s}: the finished sums come down one level, from each parent to its "
            "children."
        )
        moves: dict[tuple[int, int, int], dict[int, list[int]]] = {}
        for m in step["messages"]:
            t = 0 if m["start"] < b_start else 1
            c = chunk_of(chunks, m["start"], m["stop"])
            parent, child = (m["dst"], m["src"]) if up else (m["src"], m["dst"])
            key = (t, c, levels[t][m["src"]])
            moves.setdefault(key, {}).setdefault(parent, []).append(child)
        lines = [head]
        for (t, c, lvl), by_parent in sorted(moves.items()):
            lines.append(_level_line(t, c, lvl, up, by_parent))
            if up and lvl == 1:  # the chunk reached its root: summed once, there
                (root,) = by_parent
                lines.append(f"Tree {'AB'[t]}'s root, GPU {root}, now holds chunk {c}'s sum.")
            elif not up and lvl + 1 == max(levels[t]):  # down to the deepest leaves
                lines.append(f"Every GPU now holds chunk {c}'s sum.")
        return lines

    return narrate


def _level_line(t: int, c: int, level: int, up: bool, by_parent: dict[int, list[int]]) -> str:
    """ "Tree A, chunk 0, level 2 → 1: 1, 3 → 2 and 5, 7 → 6" (up), or the arrows reversed."""

    def group(parent: int) -> str:
        kids = ", ".join(map(str, sorted(by_parent[parent])))
        return f"{kids} → {parent}" if up else f"{parent} → {kids}"

    to = level - 1 if up else level + 1
    groups = " and ".join(group(p) for p in sorted(by_parent))
    return f"Tree {'AB'[t]}, chunk {c}, level {level} → {to}: {groups}."


# ---- Bus bandwidth against size: NCCL's model beside a published run ---------------------------

CURVE_SIZES = sorted({round(2 ** (k / 2)) for k in range(20, 69)})  # 1 KiB .. 16 GiB, 2 per octave
CURVE_BIG_GIB = 8  # the size (GiB) the summary and the readouts quote NCCL's model at
CURVE_BIG = CURVE_BIG_GIB * GIB
CURVE_GPUS = tuple((g, g) for g in nccl.GPU_SPECS)
CURVE_ALGORITHMS = (("nccl", "NCCL's choice"), ("Ring", "Ring (NCCL_ALGO=Ring)"))
CURVE = spec(
    narrowed(api.NCCL_SWEEP["gpu"], label="GPU", kind="choice", choices=CURVE_GPUS),
    narrowed(api.NCCL_SWEEP["gpus_per_node"], label="GPUs per server", default=8, lo=2, hi=8,
             optional=False),
    Param("servers", 1, "int", "Servers", 1, 512),
    narrowed(api.NCCL_SWEEP["nic_Gbps"], "nic_gbps", label="Network card (Gb/s, one per GPU)",
             lo=NIC_GBPS[0], hi=NIC_GBPS[1]),
    Param("algorithm", "nccl", "choice", "Algorithm", choices=CURVE_ALGORITHMS),
)  # fmt: skip


def curve_system(p: dict) -> nccl.System:
    g = p["gpus_per_node"]
    return nccl.System(p["gpu"], g * p["servers"], g, g, float(p["nic_gbps"]))


def curve_rows(p: dict) -> list[nccl.Candidate]:
    """NCCL's pick at every size (forced to the ring if asked), as nccl.choose makes it."""
    s = curve_system(p)
    algo = None if p["algorithm"] == "nccl" else p["algorithm"]
    return [nccl.choose("AllReduce", n, s, algorithm=algo) for n in CURVE_SIZES]


def yardstick(p: dict) -> tuple[float, str]:
    """What busbw is held against: one GPU's NVLink rate on one server; across servers a
    server's cards (one per GPU) times a card's rate, as NCCL spreads its channels over all."""
    if p["servers"] == 1:
        rate = hardware.find(hardware.GPUS, p["gpu"], "gpu").link_GBps
        return rate, f"NVLink line rate, {fmt.sig(rate, 3)} GB/s"
    g, nic = p["gpus_per_node"], float(p["nic_gbps"])
    card = float(api.ESTIMATE["inter_bw"].from_flag(nic))  # GB/s, as busbw is
    return g * card, (
        f"{g} cards of {fmt.sig(nic, 3)} Gb/s ({fmt.sig(card, 3)} GB/s each) = "
        f"{fmt.sig(g * card, 3)} GB/s"
    )


def busbw_curve(params=None) -> dict:
    """Bus bandwidth against size for one system: NCCL's pick as runs measure it (the
    performance layer), NCCL's own figure and, where a published run on the same system is
    cited, its measured rows."""
    p = validated(params, CURVE)
    rows = curve_rows(p)
    sys_ = curve_system(p)
    run = measured.find(p["gpu"], sys_.gpus, sys_.gpus_per_node, float(p["nic_gbps"]),
                        p["algorithm"])  # fmt: skip
    line, line_text = yardstick(p)
    picks = [f"{c.algorithm} {c.protocol}" for c in rows]
    model = [c.busbw_GBps for c in rows]
    hover = "%{x:.3s}B: %{y:.4g} GB/s, %{customdata}"
    data = [
        fig.line(f"NCCL's choice, {FITTED.legend}", CURVE_SIZES, model, SERIES["ring"],
                 FITTED.dash, FITTED.width, hover=hover, customdata=picks),
        fig.line(ESTIMATE.legend, CURVE_SIZES, [c.nccl_busbw_GBps for c in rows],
                 SERIES["ring"], ESTIMATE.dash, ESTIMATE.width, hover=hover, customdata=picks),
        fig.line(line_text, [CURVE_SIZES[0], CURVE_SIZES[-1]], [line, line], NEUTRAL,
                 REFERENCE_DASH, 1, hoverinfo="skip"),
    ]  # fmt: skip
    if run:
        xs, ys = zip(*run.rows, strict=True)
        data.append(fig.dots("measured (published run)", xs, ys, SERIES["measured"], "circle",
                             hover="%{x:.3s}B: %{y:.4g} GB/s measured"))  # fmt: skip
    top = rows[-1]
    half = next(
        n for n, c in zip(CURVE_SIZES, rows, strict=True) if c.busbw_GBps >= top.busbw_GBps / 2
    )
    big = next(c for n, c in zip(CURVE_SIZES, rows, strict=True) if n == CURVE_BIG)
    where = f"{sys_.nodes} server{'s' if sys_.nodes > 1 else ''} of {sys_.gpus_per_node} {p['gpu']}"
    got = (
        f"; the published run ({run.label}; {run.cited}) measured "
        f"{fmt.sig(max(y for _, y in run.rows), 4)} GB/s at its largest"
        if run
        else "; no published run on this system is cited here"
    )
    main = views.part(
        figure={"data": data, "layout": _curve_layout(max(line, *model) * 1.15, where, p, run)},
        summary=(
            f"On {where}, the {FITTED.name} of NCCL's choice puts the bus bandwidth of an "
            f"all-reduce at {fmt.sig(big.busbw_GBps, 4)} GB/s at {CURVE_BIG_GIB} GiB "
            f"({big.algorithm} {big.protocol}; "
            f"{ESTIMATE.name} {fmt.sig(big.nccl_busbw_GBps, 4)}), half of that from "
            f"{fmt.nbytes(half)}{got}."
        ),
        table={
            "columns": [
                "size",
                "NCCL's pick",
                f"busbw, {FITTED.name}",
                f"busbw, {ESTIMATE.name}",
                "measured",
            ],
            "rows": [
                [
                    fmt.nbytes(n),
                    f"{c.algorithm} {c.protocol}",
                    fmt.sig(c.busbw_GBps, 4),
                    fmt.sig(c.nccl_busbw_GBps, 4),
                    _measured_at(run, n),
                ]
                for n, c in zip(CURVE_SIZES, rows, strict=True)
            ],
        },  # fmt: skip
    )
    return views.chart(
        params=p,
        main=main,
        readouts={
            "model": f"{fmt.sig(big.busbw_GBps, 4)} GB/s ({big.algorithm}, {big.protocol})",
            "nccl_own": f"{fmt.sig(big.nccl_busbw_GBps, 4)} GB/s",
            "half": fmt.nbytes(half),
            "measured": (
                f"{fmt.sig(max(y for _, y in run.rows), 4)} GB/s ({run.label}; {run.cited})"
                if run
                else "— (no published run on this system cited here)"
            ),
            "yardstick": line_text,
        },
    )


CURVE_HEADLINE = (
    ("model", f"NCCL's choice at {CURVE_BIG_GIB} GiB, {FITTED.name}"),
    ("half", "Half of the peak from"),
    ("measured", "Measured, at its largest size"),
)
CURVE_READOUTS = (
    ("nccl_own", f"{ESTIMATE.name} at {CURVE_BIG_GIB} GiB"),
    ("yardstick", "Held against"),
)


def _measured_at(run, n: int) -> str:
    at = dict(run.rows) if run else {}
    return fmt.sig(at[n], 4) if n in at else "—"


def _curve_layout(top: float, where: str, p: dict, run) -> dict:
    """Busbw against size, titled with the one system the model (and the run) are of."""
    what = f"The {FITTED.name} and a published run" if run else f"The {FITTED.name}"
    card = f"one {fmt.sig(float(p['nic_gbps']), 3)} Gb/s card per GPU" if p["servers"] > 1 else ""
    return fig.layout(
        fig.log_axis("message size", (CURVE_SIZES[0], CURVE_SIZES[-1]), fig.BYTES),
        fig.axis("bus bandwidth (GB/s)", range=[0, top]),
        fig.LEGEND_BELOW,
        fig.MARGIN_BELOW,
        heading=(what, where, card) if card else (what, where),
    )


RECORDS = (
    Widget(
        "latency",
        latency,
        LATENCY,
        views.CHART,
        headline=(
            ("crossover_nccl", f"{ESTIMATE.name}: ring catches up with tree at"),
            ("nccl_pick_8gib", "NCCL picks at 8 GiB"),
        ),
        readouts={
            "main": (
                ("nccl_8gib", f"{ESTIMATE.name}: 8 GiB"),
                ("band", "NCCL picks, by size"),
                ("crossover", "Whiteboard model (second chart): crossover"),
            ),
        },
        predict=predict_latency,
    ),
    Widget(
        "steps",
        steps,
        STEPS,
        views.CHART,
        headline=(("ring", "Ring steps"), ("tree", "Tree steps")),
        in_snapshot=False,
    ),
    Widget(
        "tree_allreduce",
        tree_allreduce,
        TREE,
        views.STEPPER,
        label="The double binary tree all-reduce, step by step, and the exact check",
        headline=(("steps", "Steps"),),
        readouts={"setup": (("tree_a", "Tree A"), ("tree_b", "Tree B"))},
    ),
    Widget(
        "busbw_curve",
        busbw_curve,
        CURVE,
        views.CHART,
        headline=CURVE_HEADLINE,
        readouts={"main": CURVE_READOUTS},
    ),
)


def _depth(n: int) -> int:
    """Levels below the root of tree A on n GPUs (both trees are as deep)."""
    return max(tree.heights_depths(tree.dtree_parents(n)[0])[1])


def nccl_latency_us(algorithm: str, gpus: int, per_node: int) -> float:
    """NCCL's latency (base included) of an all-reduce with the Simple protocol, as its tables
    hold it (tuning.cc:384-435), on servers of `per_node` H100s."""
    s = nccl_system(gpus, per_node, card_Gbps=NIC_400G_Gbps)
    return nccl.tables(s)[(algorithm, "Simple")].latency_us


def _nccl_constants() -> dict[str, str]:
    """The constants of NCCL's tuning code that the prose names, from the port."""
    base, nvlink = BASE_LATENCY_US, HW_LATENCY_US["NVLink"]
    return {
        "nccl_base_simple_ring": f"{base['Ring'][2]:g} µs",
        "nccl_base_simple_tree": f"{base['Tree'][2]:g} µs",
        "nccl_nvlink_simple_tree": f"{nvlink['Tree'][2]:.1f} µs",
        "nccl_ring_plateau": f"{RING_PLATEAU_FACTOR[1]:g}",
        "nccl_buffsize": fmt.binary_bytes(tree.NCCL_BUFFSIZE),
        "nccl_steps": str(tree.NCCL_STEPS),
        "nccl_slot": fmt.binary_bytes(tree.COST_CHUNK_BYTES),
    }


def facts() -> dict[str, str]:
    """Latency: the quoted figures."""
    d = defaults(LATENCY)
    n, per, a, b = d["gpus"], d["gpus_per_node"], d["latency_us"], whiteboard_bw(d)
    topo = flat(n, b, a)
    tree_small = cost.tree_time_fast(topo, 8)
    ring_small = ring_time(topo, 8)
    card = d["nic_gbps"]
    system, flat_system = nccl_system(n, per, card_Gbps=card), nccl_system(n, 1, card_Gbps=card)
    big = [8 * GIB]
    nc, nf = nccl.best_by_algorithm(system, big), nccl.best_by_algorithm(flat_system, big)
    pick = nc.pick[0]
    sizes = whole(SIZES)
    tree_flat = nccl_latency_us("Tree", n, 1)
    xs_flat = nccl_crossovers(flat_system)
    picks = nccl.best_by_algorithm(system, sizes).pick
    return (
        _curve_facts()
        | _headline(system, sizes, picks)
        | _nccl_constants()
        | {
            "lat_gpus": str(n),
            "lat_per_node": str(per),
            "lat_servers": str(n // per),
            "lat_alpha": f"{a:g} µs",
            "lat_bw": f"{b:g} GB/s, a {card:g} Gb/s card's",
            "lat_cross": fmt.nbytes(crossover(topo)),
            "lat_cross_2alpha": fmt.nbytes(crossover(flat(n, b, 2 * a))),
            "lat_tree_chunks_8gib": f"{cost.tree_chunks(big[0]):,}",
            "lat_big": fmt.binary_bytes(big[0]),
            "lat_ring_alphas": fmt.sig(ring_small / (a * 1e-6), 3),
            "lat_tree_alphas": fmt.sig(tree_small / (a * 1e-6), 3),
            "lat_tree_steps": str(tree.steps(n)),
            "lat_ring_steps": str(ring_steps(n)),
            "lat_nccl_cross": fmt.nbytes(nccl_crossovers(system)[0]),
            "lat_nccl_cross_flat": fmt.nbytes(_once(xs_flat)),
            "lat_nccl_tree_cut": _plain_tree_cut(system, flat_system),
            "lat_nccl_ring_8gib": fmt.seconds(nc.time_us["Ring"][0] * 1e-6),
            "lat_nccl_tree_8gib": fmt.seconds(nc.time_us["Tree"][0] * 1e-6),
            "lat_nccl_pick_8gib": f"{pick[0]} {pick[1]}",
            "lat_nccl_flat_ring_8gib": fmt.seconds(nf.time_us["Ring"][0] * 1e-6),
            "lat_nccl_flat_tree_8gib": fmt.seconds(nf.time_us["Tree"][0] * 1e-6),
            "lat_nccl_band": band_text(system, sizes, picks),
            "steps_1024_ring": f"{ring_steps(1024):,}",
            "steps_1024_tree": str(tree.steps(1024)),
            "nccl_version": nccl.NCCL_VERSION,
            "nccl_ring_flat": f"{fmt.sig(nccl_latency_us('Ring', n, 1), 4)} µs",
            "nccl_tree_flat": f"{fmt.sig(tree_flat, 4)} µs",
            "nccl_tree_flat_alphas": fmt.sig(tree_flat / a, 3),
            "nccl_ring_8x8": f"{fmt.sig(nccl_latency_us('Ring', 64, 8), 4)} µs",
            "nccl_tree_8x8": f"{fmt.sig(nccl_latency_us('Tree', 64, 8), 4)} µs",
            "nccl_tree_1x8": f"{fmt.sig(nccl_latency_us('Tree', 8, 8), 3)} µs",
            "nccl_ring_1x8": f"{fmt.sig(nccl_latency_us('Ring', 8, 8), 3)} µs",
            "tree_stepper_steps": str(tree.steps(TREE["gpus"].default, TREE["chunks"].default)),
            "tree_stepper_ring_steps": str(ring_steps(TREE["gpus"].default)),
            "tree_stepper_levels": str(_depth(TREE["gpus"].default)),
        }
    )


def _once(crossovers: list[float]) -> float:
    """The one size at which NCCL's ring overtakes its tree with one GPU per server: the page
    says the ring stays ahead from there, so a second crossover fails the build."""
    if len(crossovers) != 1:
        raise ValueError(f"NCCL's ring and tree now cross at {crossovers}: rewrite page 5")
    return crossovers[0]


def _plain_tree_cut(*systems: nccl.System) -> str:
    """What NCCL's model takes off the tree's bandwidth for the plain TREE pattern (tuning.cc:336),
    which its search returns on the page's clusters (a card per GPU; one GPU per server): the
    page says so, so another pattern fails the build."""
    patterns = {nccl.graphs(s)["Tree"].pattern for s in systems}
    if patterns != {"TREE"}:
        raise ValueError(f"NCCL's tree patterns are now {patterns}: rewrite page 5's crossovers")
    return fmt.percent(1 - nccl.TREE_PATTERN_FACTOR)


HEADLINE = ("Tree", "NVLSTree", "Ring")  # the algorithms the page's headline names, in order


def _headline(system: nccl.System, sizes, picks) -> dict[str, str]:
    """Where NCCL leaves its tree for NVLSTree, and NVLSTree for its ring, on the default
    cluster. The prose names the three algorithms, so a port that picks otherwise fails the
    build rather than printing a headline that is no longer true."""
    runs = algorithm_runs(system, sizes, picks)
    if tuple(a for _, a in runs) != HEADLINE:
        raise ValueError(f"NCCL's picks by size are now {runs}: rewrite page 5's headline")
    return {"lat_tree_upto": fmt.nbytes(runs[1][0]), "lat_nvlstree_upto": fmt.nbytes(runs[2][0])}


def _curve_facts() -> dict[str, str]:
    """The busbw chart's figures: NCCL's model against each cited run, at the run's largest size."""
    out, misses = {}, []
    for c in measured.CURVES:
        p = validated(_curve_params(c), CURVE)
        size, got = c.rows[-1]
        s = curve_system(p)
        pick = nccl.choose(
            "AllReduce", size, s, algorithm=None if c.algorithm == "nccl" else "Ring"
        )
        key = c.key.replace("-", "_")
        out[f"curve_{key}_size"] = fmt.nbytes(size)
        out[f"curve_{key}_measured"] = f"{fmt.sig(got, 4)} GB/s"
        out[f"curve_{key}_model"] = f"{fmt.sig(pick.busbw_GBps, 4)} GB/s"
        out[f"curve_{key}_own"] = f"{fmt.sig(pick.nccl_busbw_GBps, 4)} GB/s"
        out[f"curve_{key}_pick"] = f"{pick.algorithm} {pick.protocol}"
        misses.append(abs(pick.nccl_busbw_GBps / got - 1))
    # how far NCCL's own figures are from these runs, at their (largest) sizes only
    out["curve_own_miss"] = fmt.percent(max(misses))
    out["curve_smallest_size"] = fmt.nbytes(min(c.rows[-1][0] for c in measured.CURVES))
    many = busbw_curve({"servers": 8})
    out["perf_launch_us"] = fmt.sig(fitted.PARAMETERS.launch_us_per_gpu, 2)
    return out | {
        "curve_8x8_model": many["readouts"]["model"],
        "curve_big": f"{CURVE_BIG_GIB} GiB",
        "curve_8x8_yardstick": many["readouts"]["yardstick"],
    }


def _curve_params(c: measured.Curve) -> dict:
    p = {"gpu": c.gpu, "gpus_per_node": c.gpus_per_node, "algorithm": c.algorithm}
    p["servers"] = c.gpus // c.gpus_per_node
    return p | ({"nic_gbps": c.nic_Gbps} if c.nic_Gbps else {})
