"""Stage 5: latency, ring against tree: time against size, steps against GPUs, the tree stepped.

Times come from cost.py's closed forms (the ring's 2(n-1) steps; NCCL's double binary tree,
pipelined in 512 KiB slots), on a flat network: every GPU its own server, one link class of
bandwidth B and a latency alpha per message. The crossover is found on a fine grid of sizes and
refined by bisection, so the number the page prints is where the two curves meet.
"""

from __future__ import annotations

import math
from functools import lru_cache

from .. import api, cost, fmt, tree
from ..errors import ParamError
from ..palette import SERIES
from ..schedule import split
from ..topology import NETWORK_LATENCY_US, NIC_400G_GBPS, Topology
from .common import DIGITS, chunk_of, stepper_frames, value_text, vectors
from .params import DTYPE, SEED, VALUES, Param, defaults, spec, validated
from .ring import check

GIB = 1 << 30
SIZES = [8 * 2 ** (i / 8) for i in range(8 * 30 + 1)]  # 8 B .. 8 GiB, 8 points per octave
MAX_LATENCY_GPUS = 1024

# NCCL 2.30 src/graph/tuning.cc (REFERENCE.md): base latency per algorithm and protocol (us), and
# per-hop latency by link (us). The page's default alpha is the Simple protocol's network hop,
# 14 us, the same for the ring and the tree.
NCCL_VERSION = "2.30"
NCCL_BASE_US = {"ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4},
                "tree": {"LL": 6.8, "LL128": 14.0, "Simple": 8.4}}  # fmt: skip
NCCL_HOP_US = {
    "ring": {"nvlink": {"LL": 0.6, "LL128": 1.9, "Simple": 3.4},
             "pci": {"LL": 1.0, "LL128": 2.5, "Simple": 5.7},
             "network": {"LL": 2.7, "LL128": 4.0, "Simple": 14.0}},
    "tree": {"nvlink": {"LL": 0.6, "LL128": 1.25, "Simple": 4.0},
             "pci": {"LL": 1.0, "LL128": 1.9, "Simple": 4.0},
             "network": {"LL": 5.0, "LL128": 8.5, "Simple": 14.0}},
}  # fmt: skip


def nccl_latency_us(algorithm: str, gpus: int, per_node: int, protocol: str = "Simple") -> float:
    """NCCL's modelled latency of one all-reduce (base included), NVLink inside a server."""
    nodes = gpus // per_node
    base = NCCL_BASE_US[algorithm][protocol]
    intra = NCCL_HOP_US[algorithm]["nvlink"][protocol]
    inter = NCCL_HOP_US[algorithm]["network"][protocol]
    if algorithm == "ring":
        steps, n_inter = 2 * (gpus - 1), 2 * (nodes - 1)
        return base + (steps - n_inter) * intra + n_inter * inter
    return base + 2 * ((per_node - 1) * intra + math.log2(nodes) * inter)


# ---- Time against size -------------------------------------------------------------------------


def flat(gpus: int, gbps: float, latency_us: float) -> Topology:
    """n GPUs on one kind of link: every GPU its own server (so every message crosses it)."""
    return Topology.make(gpus, 1, gbps, gbps, latency_us, latency_us)


@lru_cache(maxsize=64)
def _steady_from(n: int) -> int:
    """From this many chunks on, only the number of steady-state steps grows with the chunks."""
    return max(max(off for *_, off in edges) for edges in tree.phases(n)) + 1


def tree_time(topo: Topology, s: float) -> float:
    """cost.cost("tree", ...)'s time, without rebuilding its step profile for every chunk count.

    For k chunks at least k0 = (last pipeline offset + 1), the steps of filling and draining the
    pipeline are the same for every k and only the steady steps (one per extra chunk) add up, so
    at a fixed chunk size c the time is linear in k: T(k) = T(k0) + (k - k0)(T(k0 + 1) - T(k0)).
    Tests check this against cost.cost itself.
    """
    k, k0 = cost.tree_chunks(s), _steady_from(topo.gpus)
    if k <= k0 + 1:
        return cost.cost("tree", topo, s)["time_s"]
    c = s / (2 * k)
    t0 = cost.cost("tree", topo, 2 * k0 * c, k0)["time_s"]
    t1 = cost.cost("tree", topo, 2 * (k0 + 1) * c, k0 + 1)["time_s"]
    return t0 + (k - k0) * (t1 - t0)


def ring_time(topo: Topology, s: float) -> float:
    return cost.cost("ring", topo, s)["time_s"]


def nccl_tree_time(topo: Topology, s: float) -> float:
    """The tree as NCCL's own model charges it (tuning.cc): latency once per hop, 2 log2 n hops
    (both phases), and a bandwidth term of 2S/B (tree algorithm bandwidth = half the bus
    bandwidth); base latency left out, as for the page's curves. Flat network: one link class.
    """
    link = topo.inter
    return 2 * math.log2(topo.gpus) * link.latency_us * 1e-6 + 2 * s / (link.gbps * 1e9)


def crossover(topo: Topology, tree_fn=tree_time, sizes=SIZES) -> float | None:
    """The smallest size at which the ring stops being slower than the tree, or None.

    Found on the grid (first point where ring - tree changes from > 0 to <= 0), then refined by
    bisection between the two grid points around it.
    """

    def gap(s: float) -> float:
        return ring_time(topo, s) - tree_fn(topo, s)

    d = [gap(s) for s in sizes]
    for i in range(1, len(sizes)):
        if d[i - 1] > 0 >= d[i]:
            lo, hi = sizes[i - 1], sizes[i]
            for _ in range(40):
                mid = math.sqrt(lo * hi)
                lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
            return hi
    return None


LATENCY = spec(
    Param("gpus", 64, "int", "GPUs", 2, MAX_LATENCY_GPUS),
    Param("latency_us", NETWORK_LATENCY_US, "float", "Latency per message α (µs)", 0, 10000,
          unit="µs"),
    Param("bandwidth_gbps", NIC_400G_GBPS, "float", "Bandwidth B (GB/s)", 0.001, 100000,
          unit="GB/s"),
)  # fmt: skip


def latency(params=None) -> dict:
    """Stage 5: time of one all-reduce against message size, ring and tree, with the crossover."""
    p = validated(params, LATENCY)
    n, alpha, gbps = p["gpus"], float(p["latency_us"]), float(p["bandwidth_gbps"])
    topo = flat(n, gbps, alpha)
    ring = [ring_time(topo, s) for s in SIZES]
    tr = [tree_time(topo, s) for s in SIZES]
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
            "tree_steps": str(tree_steps(n)),
        },
    }


def _no_crossover(ring, tr) -> str:
    if ring[0] <= tr[0]:
        return "The ring is never slower here: no crossover."
    return "The tree stays faster up to 8 GiB: no crossover in this range."


def _curve(name, y, colour, dash, width) -> dict:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": SIZES,
        "y": y,
        "line": {"color": colour, "dash": dash, "width": width},
        "hovertemplate": "%{x:.3s}B: %{y:.3s}s<extra>" + name + "</extra>",
    }


def _marker(x: float, lo: float, hi: float, name: str, symbol: str) -> dict:
    """A vertical line at the crossover, with a marker at its foot."""
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "name": name,
        "x": [x, x],
        "y": [lo, hi],
        "line": {"color": "#888888", "dash": "dot", "width": 1},
        "marker": {"size": [10, 0], "color": "#888888", "symbol": symbol},
        "hovertemplate": name + "<extra></extra>",
    }


def _time_layout(small: float, large: float) -> dict:
    ticks = [8, 1024, 2**20, 2**30, 8 * GIB]
    return {
        "xaxis": {
            "title": {"text": "message size per GPU"},
            "type": "log",
            "range": [math.log10(small), math.log10(large)],
            "tickvals": ticks,
            "ticktext": ["8 B", "1 KiB", "1 MiB", "1 GiB", "8 GiB"],
        },
        "yaxis": {
            "title": {"text": "time of one all-reduce"},
            "type": "log",
            "tickvals": [10.0**e for e in range(-9, 4)],
            "ticktext": [
                "1 ns",
                "10 ns",
                "100 ns",
                "1 µs",
                "10 µs",
                "100 µs",
                "1 ms",
                "10 ms",
                "100 ms",
                "1 s",
                "10 s",
                "100 s",
                "1000 s",
            ],  # fmt: skip
        },
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "margin": {"l": 60, "r": 30, "t": 10, "b": 50},
    }


# ---- Steps against GPU count -------------------------------------------------------------------

STEP_GPUS = sorted({2**i for i in range(1, 13)} | {3 * 2**i for i in range(0, 11)})  # 2 .. 4096
MAX_STEP_GPUS = 4096


@lru_cache(maxsize=4096)
def tree_steps(n: int, chunks: int = 1) -> int:
    """Steps of the pipelined double binary tree: both phases, each (last offset + chunks)."""
    if n == 1:
        return 0
    return sum(max(off for *_, off in edges) + chunks for edges in tree.phases(n))


STEPS = spec(Param("gpus", 1024, "int", "GPUs (marked on the chart)", 2, MAX_STEP_GPUS))


def steps(params=None) -> dict:
    """Lock-step rounds of a small all-reduce: the ring's 2(n - 1) against the tree's ~2 log2 n."""
    p = validated(params, STEPS)
    n = p["gpus"]
    ring = [2 * (x - 1) for x in STEP_GPUS]
    tr = [tree_steps(x) for x in STEP_GPUS]
    logs = [2 * math.log2(x) for x in STEP_GPUS]
    data = [
        _steps_line("ring: 2(n−1)", ring, SERIES["ring"], "solid", "circle"),
        _steps_line("tree: counted from its schedule", tr, SERIES["tree"], "dash", "square"),
        _steps_line("2 log₂ n", logs, "#888888", "dot", None),
        {
            "type": "scatter",
            "mode": "markers",
            "name": f"{n} GPUs",
            "x": [n, n],
            "y": [2 * (n - 1), tree_steps(n)],
            "showlegend": False,
            "marker": {"size": 16, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#888"}},
            "hoverinfo": "skip",
        },
    ]
    return {
        "kind": "chart",
        "params": p,
        "figure": {
            "data": data,
            "layout": {
                "xaxis": {
                    "title": {"text": "GPUs"},
                    "type": "log",
                    "range": [math.log10(1.6), math.log10(6000)],
                    "tickvals": [2, 8, 32, 128, 512, 2048],
                },
                "yaxis": {
                    "title": {"text": "steps (message after message)"},
                    "type": "log",
                    "range": [0, math.log10(20000)],
                },
                "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
                "margin": {"l": 60, "r": 30, "t": 10, "b": 50},
            },
        },
        "summary": (
            f"At {n} GPUs a small all-reduce takes {2 * (n - 1):,} steps on the ring and "
            f"{tree_steps(n)} on the tree."
        ),
        "table": {
            "columns": ["GPUs", "ring steps", "tree steps", "2 log₂ n"],
            "rows": [
                [x, f"{a:,}", b, fmt.sig(c, 3)]
                for x, a, b, c in zip(STEP_GPUS, ring, tr, logs, strict=True)
            ],
        },
        "readouts": {"ring": f"{2 * (n - 1):,}", "tree": str(tree_steps(n))},
    }


def _steps_line(name, y, colour, dash, symbol) -> dict:
    return {
        "type": "scatter",
        "mode": "lines+markers" if symbol else "lines",
        "name": name,
        "x": STEP_GPUS,
        "y": y,
        "line": {"color": colour, "dash": dash, "width": 2},
        **({"marker": {"symbol": symbol, "color": colour, "size": 6}} if symbol else {}),
        "hovertemplate": "%{x} GPUs: %{y:.3g} steps<extra>" + name + "</extra>",
    }


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
    return {
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
    tree_small = tree_time(topo, 8)
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
        "lat_tree_8gib": fmt.seconds(tree_time(topo, 8 * GIB)),
        "lat_nccl_tree_8gib": fmt.seconds(nccl_tree_time(topo, 8 * GIB)),
        "lat_tree_chunks_8gib": f"{cost.tree_chunks(8 * GIB):,}",
        "lat_ring_small": fmt.seconds(ring_small),
        "lat_tree_small": fmt.seconds(tree_small),
        "lat_ring_alphas": fmt.sig(ring_small / (a * 1e-6), 3),
        "lat_tree_alphas": fmt.sig(tree_small / (a * 1e-6), 3),
        "lat_tree_steps": str(tree_steps(n)),
        "lat_ring_steps": str(2 * (n - 1)),
        "steps_1024_ring": f"{2 * 1023:,}",
        "steps_1024_tree": str(tree_steps(1024)),
        "steps_4096_tree": str(tree_steps(4096)),
        "nccl_version": NCCL_VERSION,
        "nccl_ring_flat": f"{fmt.sig(nccl_latency_us('ring', n, 1), 4)} µs",
        "nccl_tree_flat": f"{fmt.sig(nccl_latency_us('tree', n, 1), 4)} µs",
        "nccl_ring_8x8": f"{fmt.sig(nccl_latency_us('ring', 64, 8), 4)} µs",
        "nccl_tree_8x8": f"{fmt.sig(nccl_latency_us('tree', 64, 8), 4)} µs",
        "nccl_tree_1x8": f"{fmt.sig(nccl_latency_us('tree', 8, 8), 3)} µs",
        "nccl_ring_1x8": f"{fmt.sig(nccl_latency_us('ring', 8, 8), 3)} µs",
        "tree_stepper_steps": str(tree_steps(TREE["gpus"].default, TREE["chunks"].default)),
        "tree_stepper_ring_steps": str(2 * (TREE["gpus"].default - 1)),
    }
