"""Stage 5: latency, ring against tree: time against size, steps against GPUs, the tree stepped.

Times come from cost.py's closed forms (the ring's 2(n-1) steps; NCCL's double binary tree,
pipelined in 512 KiB slots) and NCCL's own latency model (latency_model.py), on a flat network:
every GPU its own server, one link class of bandwidth B and a latency alpha per message.
"""

from __future__ import annotations

import math

from .. import api, cost, fmt, tree
from ..errors import ParamError
from ..latency_model import (
    NCCL_NETWORK_HOP_US,
    NCCL_VERSION,
    SIZES,
    crossover,
    flat,
    nccl_latency_us,
    nccl_tree_time,
    ring_time,
)
from ..palette import NEUTRAL, SERIES
from ..schedule import split
from ..topology import NIC_400G_GBps
from ..verify import check
from . import diagram
from . import figures as fig
from .common import DIGITS, chunk_of, stepper_frames, value_text, vectors
from .params import DTYPE, SEED, VALUES, Param, defaults, spec, validated

GIB = 1 << 30
MAX_LATENCY_GPUS = 1024


LATENCY = spec(
    Param("gpus", 64, "int", "GPUs", 2, MAX_LATENCY_GPUS),
    Param("latency_us", NCCL_NETWORK_HOP_US, "float", "Latency per message α (µs)", 0, 10000,
          unit="µs"),
    Param("bandwidth_gbps", NIC_400G_GBps, "float", "Bandwidth B (GB/s)", 0.001, 100000,
          unit="GB/s"),
)  # fmt: skip


def latency(params=None) -> dict:
    """Stage 5: time of one all-reduce against message size, ring and tree, with the crossover."""
    p = validated(params, LATENCY)
    n, alpha, gbps = p["gpus"], float(p["latency_us"]), float(p["bandwidth_gbps"])
    topo = flat(n, gbps, alpha)
    ring = [ring_time(topo, s) for s in SIZES]
    tr = [cost.tree_time_fast(topo, s) for s in SIZES]
    nccl = [nccl_tree_time(topo, s) for s in SIZES]
    x, xn = crossover(topo), crossover(topo, nccl_tree_time)
    data = [
        _curve("ring", ring, SERIES["ring"], "solid", 2.5),
        _curve("tree, this page's model (α per message)", tr, SERIES["tree"], "dash", 2.5),
        _curve("tree, NCCL's latency model (α per hop)", nccl, SERIES["tree"], "dot", 1.5),
    ]
    lo = min(min(ring), min(tr), min(nccl))
    hi = max(max(ring), max(tr), max(nccl))
    for at, name, symbol in ((x, "crossover", "diamond"), (xn, "NCCL-model crossover", "x")):
        if at is not None:
            data.append(_marker(at, lo, hi, f"{name}: {fmt.nbytes(at)}", symbol))
    small, large = SIZES[0], SIZES[-1]
    summary = (
        f"On {n} GPUs with {fmt.sig(alpha, 3)} µs per message and {fmt.sig(gbps, 3)} GB/s, "
        f"an 8-byte all-reduce takes {fmt.seconds(ring[0])} on the ring and "
        f"{fmt.seconds(tr[0])} on the tree; 8 GiB takes {fmt.seconds(ring[-1])} and "
        f"{fmt.seconds(tr[-1])}. "
        + (
            f"The curves cross at {fmt.nbytes(x)}: below it the tree is faster."
            if x is not None
            else _no_crossover(ring, tr)
        )
        + (
            f" With NCCL's latency model the tree stays faster up to {fmt.nbytes(xn)}."
            if xn is not None
            else ""
        )
    )
    return {
        "kind": "chart",
        "params": p,
        "crossover_bytes": x,
        "crossover_nccl_bytes": xn,
        "figure": {"data": data, "layout": _time_layout(small, large)},
        "summary": summary,
        "table": {
            "columns": ["size", "ring", "tree (page)", "faster (page)", "tree (NCCL model)"],
            "rows": [
                [
                    fmt.nbytes(s),
                    fmt.seconds(a),
                    fmt.seconds(b),
                    "tree" if b < a else "ring",
                    fmt.seconds(c),
                ]
                for s, a, b, c in list(zip(SIZES, ring, tr, nccl, strict=True))[::8]
            ],
        },
        "readouts": {
            "crossover": "none in 8 B – 8 GiB" if x is None else fmt.nbytes(x),
            "crossover_exact": "—" if x is None else f"{x:,.0f} bytes",
            "crossover_nccl": "none in 8 B – 8 GiB" if xn is None else fmt.nbytes(xn),
            "ring_small": fmt.seconds(ring[0]),
            "tree_small": fmt.seconds(tr[0]),
            "ring_steps": str(2 * (n - 1)),
            "tree_steps": str(tree.steps(n)),
        },
    }


def _no_crossover(ring, tr) -> str:
    if ring[0] <= tr[0]:
        return "The ring is never slower here: no crossover."
    return "The tree stays faster up to 8 GiB: no crossover in this range."


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
            [8, 1024, 2**20, 2**30, 8 * GIB],
            ["8 B", "1 KiB", "1 MiB", "1 GiB", "8 GiB"],
        ),
        fig.log_axis(
            "time of one all-reduce", ticks=[10.0**e for e in range(-9, 4)], ticktext=SECONDS_TICKS
        ),
    )


# ---- Steps against GPU count -------------------------------------------------------------------

STEP_GPUS = sorted({2**i for i in range(1, 13)} | {3 * 2**i for i in range(0, 11)})  # 2 .. 4096
MAX_STEP_GPUS = 4096


STEPS = spec(Param("gpus", 1024, "int", "GPUs (marked on the chart)", 2, MAX_STEP_GPUS))


def steps(params=None) -> dict:
    """Lock-step rounds of a small all-reduce: the ring's 2(n - 1) against the tree's ~2 log2 n."""
    p = validated(params, STEPS)
    n = p["gpus"]
    ring = [2 * (x - 1) for x in STEP_GPUS]
    tr = [tree.steps(x) for x in STEP_GPUS]
    logs = [2 * math.log2(x) for x in STEP_GPUS]
    data = [
        _steps_line("ring: 2(n−1)", ring, SERIES["ring"], "solid", "circle"),
        _steps_line("tree: counted from its schedule", tr, SERIES["tree"], "dash", "square"),
        _steps_line("2 log₂ n", logs, NEUTRAL, "dot", None),
        fig.you_are_here(f"{n} GPUs", n, [2 * (n - 1), tree.steps(n)]),
    ]
    return {
        "kind": "chart",
        "params": p,
        "figure": {
            "data": data,
            "layout": fig.layout(
                fig.log_axis(
                    "GPUs", [math.log10(1.6), math.log10(6000)], [2, 8, 32, 128, 512, 2048]
                ),
                fig.log_axis("steps (message after message)", [0, math.log10(20000)]),
            ),
        },
        "summary": (
            f"At {n} GPUs a small all-reduce takes {2 * (n - 1):,} steps on the ring and "
            f"{tree.steps(n)} on the tree."
        ),
        "table": {
            "columns": ["GPUs", "ring steps", "tree steps", "2 log₂ n"],
            "rows": [
                [x, f"{a:,}", b, fmt.sig(c, 3)]
                for x, a, b, c in zip(STEP_GPUS, ring, tr, logs, strict=True)
            ],
        },
        "readouts": {"ring": f"{2 * (n - 1):,}", "tree": str(tree.steps(n))},
    }


def _steps_line(name, y, colour, dash, symbol) -> dict:
    marker = {"symbol": symbol, "size": 6} if symbol else None
    return fig.line(name, STEP_GPUS, y, colour, dash, 2, marker, "%{x} GPUs: %{y:.3g} steps")


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
    """Stage 5: the double binary tree on real numbers, up the trees and down, then the check."""
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
    state = {
        "kind": "stepper",
        "params": {**p, "gpus": n, "length": length, "chunks": k},
        "gpus": n,
        "length": length,
        "dtype": r["dtype"],
        "digits": DIGITS[r["dtype"]],
        "chunks": chunks,
        "inputs": r["inputs"],
        "target": r["target"],
        "extra_rows": [{"label": "target (sum)", "values": r["target"]}],
        "frames": frames,
        "editable": True,
        "check": verdict,
        "readouts": {
            "tree_a": _tree_text(parents[0], "A", range(0, k)),
            "tree_b": _tree_text(parents[1], "B", range(k, 2 * k)),
            "steps": f"{len(frames) - 1} (the ring would take {2 * (n - 1)})",
        },
    }
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


WIDGETS = {"latency": latency, "steps": steps, "tree_allreduce": tree_allreduce}
SPECS = {"latency": LATENCY, "steps": STEPS, "tree_allreduce": TREE}


def facts() -> dict[str, str]:
    """Stage 5's quoted figures."""
    d = defaults(LATENCY)
    topo = flat(d["gpus"], d["bandwidth_gbps"], d["latency_us"])
    x = crossover(topo)
    a = d["latency_us"]
    n = d["gpus"]
    tree_small = cost.tree_time_fast(topo, 8)
    ring_small = ring_time(topo, 8)
    higher = crossover(flat(n, d["bandwidth_gbps"], 2 * a))
    xn = crossover(topo, nccl_tree_time)
    return {
        "lat_gpus": str(n),
        "lat_alpha": f"{a:g} µs",
        "lat_bw": f"{d['bandwidth_gbps']:g} GB/s",
        "lat_cross": fmt.nbytes(x),
        "lat_cross_2alpha": fmt.nbytes(higher),
        "lat_cross_nccl": fmt.nbytes(xn),
        "lat_ring_8gib": fmt.seconds(ring_time(topo, 8 * GIB)),
        "lat_tree_8gib": fmt.seconds(cost.tree_time_fast(topo, 8 * GIB)),
        "lat_nccl_tree_8gib": fmt.seconds(nccl_tree_time(topo, 8 * GIB)),
        "lat_tree_chunks_8gib": f"{cost.tree_chunks(8 * GIB):,}",
        "lat_ring_small": fmt.seconds(ring_small),
        "lat_tree_small": fmt.seconds(tree_small),
        "lat_ring_alphas": fmt.sig(ring_small / (a * 1e-6), 3),
        "lat_tree_alphas": fmt.sig(tree_small / (a * 1e-6), 3),
        "lat_tree_steps": str(tree.steps(n)),
        "lat_ring_steps": str(2 * (n - 1)),
        "steps_1024_ring": f"{2 * 1023:,}",
        "steps_1024_tree": str(tree.steps(1024)),
        "steps_4096_tree": str(tree.steps(4096)),
        "nccl_version": NCCL_VERSION,
        "nccl_ring_flat": f"{fmt.sig(nccl_latency_us('ring', n, 1), 4)} µs",
        "nccl_tree_flat": f"{fmt.sig(nccl_latency_us('tree', n, 1), 4)} µs",
        "nccl_ring_8x8": f"{fmt.sig(nccl_latency_us('ring', 64, 8), 4)} µs",
        "nccl_tree_8x8": f"{fmt.sig(nccl_latency_us('tree', 64, 8), 4)} µs",
        "nccl_tree_1x8": f"{fmt.sig(nccl_latency_us('tree', 8, 8), 3)} µs",
        "nccl_ring_1x8": f"{fmt.sig(nccl_latency_us('ring', 8, 8), 3)} µs",
        "tree_stepper_steps": str(tree.steps(TREE["gpus"].default, TREE["chunks"].default)),
        "tree_stepper_ring_steps": str(2 * (TREE["gpus"].default - 1)),
    }
