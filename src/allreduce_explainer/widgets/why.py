"""Why all-reduce: the naive method on real vectors, and its cost against the ring's."""

from __future__ import annotations

from .. import api, dtypes, fmt
from ..catalog import hardware
from ..catalog.models import EXAMPLE_PARAMS
from ..errors import ParamError
from ..palette import SERIES
from ..params import Param, narrowed, spec, validated
from . import Widget, diagram, views
from . import figures as fig
from .common import SEED, VALUES, simulated, stepper_frames, summed, traced, value_text

NAIVE = spec(
    simulated("gpus", "GPUs", lo=2, hi=8),
    simulated("length", "Numbers per gradient", default=6, hi=16, optional=False),
    SEED,
    VALUES,
)


def naive(params=None) -> dict:
    """Why all-reduce: gather to GPU 0, add, broadcast back, on real integer vectors."""
    p = validated(params, NAIVE)
    n = p["gpus"]
    r = traced(p, NAIVE, algorithm="naive")
    length = r["length"]
    nbytes = length * dtypes.INT.itemsize

    def narrate(step, s):
        if step is None:
            return [f"Each of the {n} GPUs holds its own gradient of {length} numbers."]
        m = step["messages"][0]
        vals = ", ".join(value_text(v, "int") for v in m["values"])
        if step["op"] == "add":
            now = ", ".join(value_text(v, "int") for v in step["buffers"][0])
            return [
                f"Step {s}: GPU {m['src']} sends its whole gradient ({vals}) to GPU 0, "
                f"which adds it in and now holds {now}."
            ]
        return [f"Step {s}: GPU 0 sends the finished sum ({vals}) to GPU {m['dst']}."]

    frames = stepper_frames(r["trace"], r["inputs"], [[1] * length] * n, n, [(0, length)], narrate)
    state = views.stepper(
        params={**p, "gpus": n, "length": length},
        dtype="int",
        chunks=[(0, length)],
        **summed(
            r,
            {"label": f"average (sum / {n})", "values": [t / n for t in r["target"]], "digits": 3},
        ),
        frames=frames,
        readouts={
            "root_received": f"{(n - 1) * nbytes:,} bytes ({n - 1} gradients of {nbytes} bytes)",
            "root_sent": f"{(n - 1) * nbytes:,} bytes",
            "other_sent": f"{nbytes:,} bytes",
        },
    )
    return diagram.attach(state, diagram.star(n))


NAIVE_HEADLINE = (("root_received", "GPU 0 receives"), ("other_sent", "Every other GPU sends"))
NAIVE_READOUTS = (("root_sent", "GPU 0 sends"),)


PER_SERVER = hardware.H100_SXM.gpus_per_node  # 8
SCALING = spec(
    narrowed(api.ESTIMATE["gpus"], label=f"GPUs ({PER_SERVER} per server)", default=64,
             hi=1024, step=PER_SERVER, nudge=(PER_SERVER, f"a server of {PER_SERVER} GPUs")),
    Param("params_b", EXAMPLE_PARAMS / 1e9, "float",
          "Model size (billion parameters, BF16 gradient)", 0.001, 10000,
          unit="(billion parameters)"),
)  # fmt: skip
SCALING_X = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


def scaling(params=None) -> dict:
    """Why all-reduce: time of naive and ring against GPU count (8 per server, no latency)."""
    p = validated(params, SCALING)
    n = p["gpus"]
    if n > PER_SERVER and n % PER_SERVER:
        raise ParamError(
            "gpus",
            f"above {PER_SERVER}, use a multiple of {PER_SERVER} "
            f"(whole servers of {PER_SERVER} GPUs)",
        )
    params_b = float(p["params_b"])
    s = params_b * 1e9 * dtypes.BF16.itemsize  # a BF16 gradient

    def times(algorithm: str, xs: list[int]) -> list[float]:
        return [
            api.estimate(algorithm=algorithm, gpus=x, bytes=s, gpus_per_node=min(x, PER_SERVER))[
                "time_s"
            ]
            for x in xs
        ]

    xs = [x for x in SCALING_X if x > 1]
    naive_t, ring_t = times("naive", [n])[0], times("ring", [n])[0]
    series = [("naive", "gather to GPU 0, broadcast back"), ("ring", "ring all-reduce")]
    data = [
        fig.line(
            label,
            xs,
            times(alg, xs),
            SERIES[alg],
            marker={"symbol": "circle" if alg == "ring" else "square"},
            hover="%{x} GPUs: %{y:.3g} s",
        )
        for alg, label in series
    ]
    if n > 1:
        data.append(fig.you_are_here(f"{n} GPUs", n, [naive_t, ring_t], 14))
    main = views.part(
        figure={
            "data": data,
            "layout": fig.layout(
                fig.log_axis("GPUs (8 per server)", (1.6, 1300)),
                fig.log_axis(
                    "time of one all-reduce",
                    fig.around([y for t in data for y in t["y"]]),
                    fig.SECONDS,
                ),
                fig.LEGEND_BELOW,
                fig.MARGIN_BELOW,
            ),
        },
        summary=(
            f"At {n} GPUs the naive method takes {fmt.seconds(naive_t)} and the ring "
            f"{fmt.seconds(ring_t)} for {fmt.nbytes(s)} of gradient."
        ),
        table={
            "columns": ["GPUs", "naive (s)", "ring (s)"],
            "rows": [
                [x, fmt.sig(a, 3), fmt.sig(b, 3)]
                for x, a, b in zip(xs, data[0]["y"], data[1]["y"], strict=True)
            ],
        },
    )
    readouts = {
        "naive": fmt.seconds(naive_t),
        "ring": fmt.seconds(ring_t),
        "ratio": f"{naive_t / ring_t:.0f}×" if ring_t > 0 else "—",
        "gradient": fmt.nbytes(s),
    }
    return views.chart(params=p, main=main, readouts=readouts)


SCALING_HEADLINE = (
    ("naive", "Naive (gather, broadcast)"),
    ("ring", "Ring"),
    ("ratio", "Naive / ring"),
)
RECORDS = (
    Widget(
        "naive",
        naive,
        NAIVE,
        views.STEPPER,
        label="The naive method: gather to GPU 0, add, broadcast back",
        headline=NAIVE_HEADLINE,
        readouts={"main": NAIVE_READOUTS},
    ),
    Widget(
        "scaling",
        scaling,
        SCALING,
        views.CHART,
        label="All-reduce time against GPU count",
        headline=SCALING_HEADLINE,
        layout=(("chart", "The chart's data as a table"),),
    ),
)
