"""The page widgets: each a pure function from JSON-able parameters to a JSON-able state.

The build calls each with its defaults and inlines the state into the page; the browser's worker
calls the same function (through bridge.py) whenever a reader changes a control. A bad parameter
raises ParamError naming it, which the page shows next to that control.
"""

from __future__ import annotations

import math
from fractions import Fraction

from . import api, dtypes, fmt, gradients
from .errors import ParamError
from .palette import SERIES
from .schedule import split
from .validate import count, positive

DIGITS = {"int": 0, "fp32": 7, "bf16": 3}  # significant digits a reader needs to tell values apart


def _options(params, defaults: dict) -> dict:
    """Merge parameters over the defaults, refusing unknown names (a typo should not pass)."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParamError("_", "parameters must be an object")
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ParamError(str(unknown[0])[:40], "is not a parameter of this widget")
    return {**defaults, **params}


def _vectors(p: dict, lo: int, hi: int, max_length: int, dtype: str) -> tuple[int, list[list]]:
    """GPU count and gradients: drawn from the seed, or the reader's edited values."""
    n = count("gpus", p["gpus"], lo, hi)
    dt = dtypes.get(dtype)
    if p.get("values") is not None:
        values = gradients.check(p["values"], n, dt, max_length)
        return n, values
    length = count("length", p["length"], 1, max_length)
    return n, gradients.draw(n, length, dt, count("seed", p["seed"], 0, 2**53))


def _text(v, dtype: str) -> str:
    """A value as the narration prints it (the grid uses the same digits)."""
    text = str(v) if dtype == "int" else f"{v:.{DIGITS[dtype]}g}"
    return text.replace("-", "−")


def _frames(trace: list[dict], first_buffers, first_counts, n: int, chunks, narrate) -> list[dict]:
    """Step frames for the stepper view: buffers, finished cells, and what moved.

    A move is [src, dst, start, stop, chunk]: GPU src sent elements [start, stop), its chunk.
    """
    frames = [
        {
            "buffers": first_buffers,
            "complete": _complete(first_counts, n),
            "moves": [],
            "phase": "start",
            "narration": narrate(None, 0),
        }
    ]
    for s, step in enumerate(trace, 1):
        frames.append(
            {
                "buffers": step["buffers"],
                "complete": _complete(step["contributors"], n),
                "moves": [
                    [
                        m["src"],
                        m["dst"],
                        m["start"],
                        m["stop"],
                        _chunk_of(chunks, m["start"], m["stop"]),
                    ]
                    for m in step["messages"]
                ],
                "op": step["op"],
                "phase": step["phase"],
                "narration": narrate(step, s),
            }
        )
    return frames


def _complete(counts: list[list[int]], n: int) -> list[list[bool]]:
    return [[c == n for c in row] for row in counts]


def _chunk_of(chunks: list[tuple[int, int]], start: int, stop: int) -> int:
    return next(i for i, (a, b) in enumerate(chunks) if a == start and b == stop)


def _ring_narration(chunks, dtype: str, n: int):
    def narrate(step, s):
        if step is None:
            return [f"Each of the {n} GPUs holds its own gradient, cut into {n} chunks."]
        verb = "adds it to its own" if step["op"] == "add" else "stores it"
        lines = [f"Step {s}: every GPU sends one chunk to the next GPU, which {verb}."]
        for m in step["messages"]:
            c = _chunk_of(chunks, m["start"], m["stop"])
            sent = ", ".join(_text(v, dtype) for v in m["values"])
            now = ", ".join(
                _text(v, dtype) for v in step["buffers"][m["dst"]][m["start"] : m["stop"]]
            )
            lines.append(
                f"GPU {m['src']} sends chunk {c} ({sent}) to GPU {m['dst']}, which now holds {now}."
            )
        return lines

    return narrate


RING_DEFAULTS = {"gpus": 4, "length": 8, "dtype": "int", "seed": 1, "values": None}
RING_LIMITS = {"gpus": (2, 16), "length": 64}


def _ring_trace(params) -> tuple[dict, dict]:
    p = _options(params, RING_DEFAULTS)
    dtype = p["dtype"]
    dtypes.get(dtype)
    n, inputs = _vectors(p, *RING_LIMITS["gpus"], RING_LIMITS["length"], dtype)
    result = api.simulate("ring", n, values=inputs, dtype=dtype, trace=True)
    return p, result


def _ring_common(p: dict, r: dict) -> dict:
    n, length = r["gpus"], r["length"]
    return {
        "kind": "stepper",
        "params": {**p, "gpus": n, "length": length},
        "gpus": n,
        "length": length,
        "dtype": r["dtype"],
        "digits": DIGITS[r["dtype"]],
        "chunks": split(0, length, n),
        "inputs": r["inputs"],
        "target": r["target"],
        "extra_rows": [{"label": "target (sum)", "values": r["target"]}],
    }


def ring_reduce_scatter(params=None) -> dict:
    """Stage 2: the ring's reduce-scatter, n - 1 steps on real numbers."""
    p, r = _ring_trace(params)
    n = r["gpus"]
    chunks = split(0, r["length"], n)
    trace = r["trace"][: n - 1]
    state = _ring_common(p, r)
    state["frames"] = _frames(
        trace,
        r["inputs"],
        [[1] * r["length"]] * n,
        n,
        chunks,
        _ring_narration(chunks, r["dtype"], n),
    )
    state["editable"] = True
    state["owned"] = [(i + 1) % n for i in range(n)]
    last = state["frames"][-1]
    last["narration"].append(
        "Every GPU now owns the complete sum of one chunk: "
        + "; ".join(f"GPU {i} owns chunk {(i + 1) % n}" for i in range(n))
        + "."
    )
    return state


def ring_all_gather(params=None) -> dict:
    """Stage 3: the all-gather from the end of the reduce-scatter, then the exact check."""
    p, r = _ring_trace(params)
    n, dtype = r["gpus"], r["dtype"]
    chunks = split(0, r["length"], n)
    rs_end = r["trace"][n - 2] if n > 1 else None
    state = _ring_common(p, r)
    state["frames"] = _frames(
        r["trace"][n - 1 :],
        rs_end["buffers"],
        rs_end["contributors"],
        n,
        chunks,
        _ring_narration(chunks, dtype, n),
    )
    state["frames"][0]["narration"] = [
        "After the reduce-scatter every GPU owns the complete sum of one chunk; "
        "now those chunks travel the ring."
    ]
    state["check"] = check(r)
    state["frames"][-1]["narration"].append(state["check"]["verdict"])
    return state


def check(r: dict) -> dict:
    """Element by element, every GPU against the target; for floats, ulps from two references."""
    dt = dtypes.get(r["dtype"])
    n, inputs, target = r["gpus"], r["inputs"], r["target"]
    add = dt.adder()
    in_order = [_fold(add, col) for col in zip(*inputs, strict=True)]
    matches = [[x == t for x, t in zip(res, target, strict=True)] for res in r["results"]]
    ulps = [_ulps(x, t, dt) for x, t in zip(r["results"][0], target, strict=True)]
    ulps_in_order = [_ulps(x, t, dt) for x, t in zip(r["results"][0], in_order, strict=True)]
    all_match = all(all(row) for row in matches)
    if all_match:
        verdict = (
            f"Exact match: all {n} GPUs hold the target sum in every one of the "
            f"{r['length']} elements."
        )
    elif r["identical_on_all_gpus"]:
        verdict = (
            f"Identical bits on all {n} GPUs; the ring's sum is at most {max(ulps):g} ulp "
            f"from the exactly rounded sum, and at most {max(ulps_in_order):g} ulp from "
            f"the sum taken in GPU order."
        )
    else:
        verdict = "Mismatch: the GPUs disagree."
    return {
        "matches": matches,
        "all_match": all_match,
        "identical": r["identical_on_all_gpus"],
        "in_order": in_order,
        "ulps": ulps,
        "ulps_in_order": ulps_in_order,
        "verdict": verdict,
    }


def _fold(add, values):
    acc = values[0]
    for v in values[1:]:
        acc = add(acc, v)
    return acc


def _ulps(x, ref, dt: dtypes.DType) -> float:
    if x == ref:
        return 0
    return float(abs(Fraction(x) - Fraction(ref)) / Fraction(dt.ulp(ref)))


NAIVE_DEFAULTS = {"gpus": 4, "length": 6, "seed": 1, "values": None}


def naive(params=None) -> dict:
    """Stage 1: gather to GPU 0, add, broadcast back, on real integer vectors."""
    p = _options(params, NAIVE_DEFAULTS)
    n, inputs = _vectors(p, 2, 8, 16, "int")
    r = api.simulate("naive", n, values=inputs, trace=True)
    length = r["length"]
    nbytes = length * dtypes.INT.itemsize

    def narrate(step, s):
        if step is None:
            return [f"Each of the {n} GPUs holds its own gradient of {length} numbers."]
        m = step["messages"][0]
        vals = ", ".join(_text(v, "int") for v in m["values"])
        if step["op"] == "add":
            now = ", ".join(_text(v, "int") for v in step["buffers"][0])
            return [
                f"Step {s}: GPU {m['src']} sends its whole gradient ({vals}) to GPU 0, "
                f"which adds it in and now holds {now}."
            ]
        return [f"Step {s}: GPU 0 sends the finished sum ({vals}) to GPU {m['dst']}."]

    frames = _frames(r["trace"], r["inputs"], [[1] * length] * n, n, [(0, length)], narrate)
    return {
        "kind": "stepper",
        "params": {**p, "gpus": n, "length": length},
        "gpus": n,
        "length": length,
        "dtype": "int",
        "digits": 0,
        "chunks": [(0, length)],
        "inputs": r["inputs"],
        "target": r["target"],
        "extra_rows": [
            {"label": "target (sum)", "values": r["target"]},
            {"label": f"average (sum / {n})", "values": [t / n for t in r["target"]], "digits": 3},
        ],
        "frames": frames,
        "readouts": {
            "root_received": f"{(n - 1) * nbytes:,} bytes ({n - 1} gradients of {nbytes} bytes)",
            "root_sent": f"{(n - 1) * nbytes:,} bytes",
            "other_sent": f"{nbytes:,} bytes",
        },
    }


SCALING_DEFAULTS = {"gpus": 64, "params_b": 7.0}
SCALING_X = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
PER_SERVER = 8


def scaling(params=None) -> dict:
    """Stage 1: time of naive and ring against GPU count (8 per server, no latency)."""
    p = _options(params, SCALING_DEFAULTS)
    n = count("gpus", p["gpus"], 1, 1024)
    if n > PER_SERVER and n % PER_SERVER:
        raise ParamError(
            "gpus",
            f"above {PER_SERVER}, use a multiple of {PER_SERVER} "
            f"(whole servers of {PER_SERVER} GPUs)",
        )
    params_b = positive("params_b", p["params_b"])
    if params_b > 10_000:
        raise ParamError("params_b", "must be at most 10,000 (billion parameters)")
    s = params_b * 1e9 * 2

    def times(algorithm: str, xs: list[int]) -> list[float]:
        return [api.estimate(algorithm, x, s, min(x, PER_SERVER))["time_s"] for x in xs]

    xs = [x for x in SCALING_X if x > 1]
    naive_t, ring_t = times("naive", [n])[0], times("ring", [n])[0]
    series = [("naive", "gather to GPU 0, broadcast back"), ("ring", "ring all-reduce")]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": label,
            "x": xs,
            "y": times(alg, xs),
            "line": {"color": SERIES[alg]},
            "marker": {"color": SERIES[alg], "symbol": "circle" if alg == "ring" else "square"},
            "hovertemplate": "%{x} GPUs: %{y:.3g} s<extra>" + label + "</extra>",
        }
        for alg, label in series
    ]
    if n > 1:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"{n} GPUs",
                "x": [n, n],
                "y": [naive_t, ring_t],
                "showlegend": False,
                "marker": {
                    "size": 14,
                    "color": "rgba(0,0,0,0)",
                    "line": {"width": 2, "color": "#888888"},
                },
                "hoverinfo": "skip",
            }
        )
    return {
        "kind": "chart",
        "params": {"gpus": n, "params_b": params_b},
        "figure": {
            "data": data,
            "layout": {
                "xaxis": {
                    "title": {"text": "GPUs (8 per server)"},
                    "type": "log",
                    "range": [math.log10(1.6), math.log10(1300)],
                    "tickvals": xs,
                },
                "yaxis": {"title": {"text": "time of one all-reduce (s)"}, "type": "log"},
                "legend": {"orientation": "h", "y": -0.25},
                "margin": {"l": 60, "r": 10, "t": 10, "b": 60},
            },
        },
        "summary": (
            f"At {n} GPUs the naive method takes {fmt.seconds(naive_t)} and the ring "
            f"{fmt.seconds(ring_t)} for {fmt.nbytes(s)} of gradient."
        ),
        "table": {
            "columns": ["GPUs", "naive (s)", "ring (s)"],
            "rows": [
                [x, fmt.sig(a, 3), fmt.sig(b, 3)]
                for x, a, b in zip(xs, data[0]["y"], data[1]["y"], strict=True)
            ],
        },
        "readouts": {
            "naive": fmt.seconds(naive_t),
            "ring": fmt.seconds(ring_t),
            "ratio": f"{naive_t / ring_t:.0f}×" if ring_t > 0 else "—",
            "gradient": fmt.nbytes(s),
        },
    }


WIDGETS = {
    "naive": naive,
    "scaling": scaling,
    "ring_reduce_scatter": ring_reduce_scatter,
    "ring_all_gather": ring_all_gather,
}
