"""What each GPU sends as the ring grows, and nccl-tests' algbw and busbw.

The counted values come from the simulation, message by message (every GPU's bytes), the formula
values from cost.py; the chart draws both so that a reader sees them agree.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from .. import api, dtypes, fmt, records
from ..catalog.hardware import GIB
from ..catalog.measured import H100_RING_BUSBW
from ..catalog.models import EXAMPLE_GRADIENT_BYTES
from ..collectives import ALLREDUCE, COLLECTIVES
from ..costs import cost
from ..errors import ParamError
from ..logs import parse as nccltests
from ..palette import NEUTRAL, SERIES
from ..params import Param, defaults, narrowed, spec, validated
from ..schedules.topology import H100_NVLINK_GBps, Topology
from ..sources import REFERENCE_DASH, WHITEBOARD
from . import Widget, views
from . import figures as fig

COUNTED = (*range(2, 17), *range(20, 65, 4))  # GPU counts simulated message by message
MAX_GPUS = fig.GPU_SWEEP[-1]
Y_ENDS = (0.4, 8000)


@lru_cache(maxsize=1)
def counted() -> tuple[tuple[int, float, float, float, float], ...]:
    """(n, ring max, ring min, naive root, naive other) bytes sent per GPU, as multiples of S.

    Integer vectors of n elements give every ring chunk one element, so no chunk is empty and
    the counts scale exactly to any S. The simulations do not depend on the page's parameters,
    so they run once per process (at build time, and once in the browser).
    """
    out = []
    for n in COUNTED:
        item = dtypes.INT.itemsize
        ring = api.simulate(algorithm="ring", gpus=n, length=n, trace=False)["bytes_sent_per_gpu"]
        naive = api.simulate(algorithm="naive", gpus=n, length=1, trace=False)["bytes_sent_per_gpu"]
        unit = n * item
        out.append((n, max(ring) / unit, min(ring) / unit, naive[0] / item, max(naive[1:]) / item))
    return tuple(out)


def formula(n: int, s: float) -> tuple[float, float, float]:
    """cost.py's bytes per GPU for the ring and the naive root, and a naive non-root GPU (S)."""
    topo = Topology.make(n)
    ring = cost.cost("ring", topo, s)["bytes_sent_per_gpu_max"]
    root = cost.cost("naive", topo, s)["bytes_sent_per_gpu_max"]
    return ring, root, s


SENDS = spec(
    narrowed(api.ESTIMATE["gpus"], label="GPUs (marked on the chart)", default=64, lo=2,
             hi=MAX_GPUS, nudge=(1, "a GPU")),
    Param("gradient_gb", EXAMPLE_GRADIENT_BYTES / 1e9, "float", "Gradient size S (GB)",
          0.000001, 1000000, unit="GB"),
)  # fmt: skip


def sends(params=None) -> dict:
    """Bytes each GPU sends, in gradients: the ring approaches 2, the naive root grows as n - 1."""
    p = validated(params, SENDS)
    n = p["gpus"]
    s = p["gradient_gb"] * 1e9
    rows = counted()
    f = {x: [v / s for v in formula(x, s)] for x in sorted({*fig.GPU_SWEEP, *COUNTED, n})}
    fx = list(fig.GPU_SWEEP)
    ring_n, root_n, _ = formula(n, s)
    xs = [r[0] for r in rows]
    data = [
        _line("ring", fx, [f[x][0] for x in fx], SERIES["ring"], WHITEBOARD.dash),
        _dots("ring, counted", xs, [r[1] for r in rows], SERIES["ring"], "circle", "ring"),
        _line("naive root", fx, [f[x][1] for x in fx], SERIES["naive"], WHITEBOARD.dash),
        _dots(
            "naive root, counted", xs, [r[3] for r in rows], SERIES["naive"], "square", "naive root"
        ),  # fmt: skip
        _line("naive, other GPUs", fx, [1.0] * len(fx), NEUTRAL, WHITEBOARD.dash),
        _dots(
            "naive, other GPUs, counted",
            xs,
            [r[4] for r in rows],
            NEUTRAL,
            "diamond",
            "naive, other GPUs",
        ),  # fmt: skip
        {
            **_line("two gradients", fig.GPU_AXIS_ENDS, [2, 2], NEUTRAL, REFERENCE_DASH),
            "showlegend": False,
        },
        _key("counted (simulation)", {"mode": "markers", "marker": {"color": NEUTRAL}}),
        _key(
            f"formula ({WHITEBOARD.legend})",
            {"mode": "lines", "line": {"color": NEUTRAL, "dash": WHITEBOARD.dash}},
        ),
        fig.you_are_here(f"{n} GPUs", n, [ring_n / s, root_n / s]),
    ]
    counted_at = {r[0]: r for r in rows}
    at = counted_at.get(n)
    main = views.part(
        figure={"data": data, "layout": _layout()},
        summary=(
            f"At {n} GPUs each GPU of the ring sends {fmt.sig(ring_n / s, 4)} gradients "
            f"({fmt.nbytes(ring_n)}), approaching 2 as GPUs join; the naive method's root sends "
            f"{fmt.sig(root_n / s, 4)} ({fmt.nbytes(root_n)}), growing with n; the counted "
            "values (n up to 64) equal the formulas."
        ),
        table=_table(rows, f),
    )
    return views.chart(
        params=p,
        main=main,
        readouts={
            "ring": f"{fmt.nbytes(ring_n)} = {fmt.sig(ring_n / s, 4)} × S",
            "ring_counted": (
                f"{fmt.nbytes(at[1] * s)} (every GPU the same)"
                if at
                else "— (counted up to 64 GPUs)"
            ),
            "root": f"{fmt.nbytes(root_n)} = {n - 1} × S (and receives as much)",
            "other": f"{fmt.nbytes(s)} = 1 × S",
            "gradient": fmt.nbytes(s),
        },
    )


SENDS_HEADLINE = (("ring", "Ring: each GPU sends"), ("root", "Naive: the root sends"))
SENDS_READOUTS = (
    ("ring_counted", "Ring, counted message by message"),
    ("other", "Naive: every other GPU sends"),
)


def _key(name: str, style: dict) -> dict:
    """A legend entry with no data: says which marks are counted and which are formulas."""
    return {"type": "scatter", "name": name, "x": [None], "y": [None], "hoverinfo": "skip", **style}


HOVER = "%{x} GPUs: %{y:.4g} × S"


def _line(name, x, y, colour, dash) -> dict:
    return fig.line(name, x, y, colour, dash, 2, hover=HOVER, legendgroup=name)


def _dots(name, x, y, colour, symbol, group) -> dict:
    return fig.dots(name, x, y, colour, symbol, hover=HOVER, legendgroup=group, showlegend=False)


def _layout() -> dict:
    return fig.layout(
        fig.gpus_axis(),
        fig.log_axis("sent per GPU (× S)", Y_ENDS),
    )


def _table(rows, f) -> dict:
    by_n = {r[0]: r for r in rows}
    xs = sorted({*by_n, *fig.GPU_SWEEP})
    return {
        "columns": [
            "GPUs",
            "ring, counted (× S)",
            "ring, formula",
            "naive root, counted",
            "naive root, formula",
            "naive other, counted",
        ],
        "rows": [
            [
                x,
                fmt.sig(by_n[x][1], 4) if x in by_n else "—",
                fmt.sig(f[x][0], 4),
                fmt.sig(by_n[x][3], 4) if x in by_n else "—",
                fmt.sig(f[x][1], 4),
                fmt.sig(by_n[x][4], 4) if x in by_n else "—",
            ]
            for x in xs
        ],
    }


# ---- Algorithm bandwidth and bus bandwidth ---------------------------------------------------

# the link a bandwidth is held against: the calculator's GPU link rate, under the page's name
LINK = narrowed(
    api.CALC["link_GBps"], "link_gbps", label="Link rate per direction (GB/s)",
    default=H100_NVLINK_GBps, lo=0.001, hi=100000, optional=False,
)  # fmt: skip
# The default measured time: the example gradient all-reduced by 8 H100s at the ring's busbw
EXAMPLE_TIME_US = round(
    EXAMPLE_GRADIENT_BYTES * ALLREDUCE.busbw_factor(8) / (H100_RING_BUSBW * 1e9) * 1e6
)
BUSBW = spec(
    narrowed(api.BUSBW["gpus"], label="GPUs (n)", default=8),
    narrowed(api.BUSBW["bytes"], label="Size S (bytes, as nccl-tests counts it)",
             default=EXAMPLE_GRADIENT_BYTES, lo=1, hi=1e15),
    narrowed(api.BUSBW["time_us"], label="Measured time (µs)", default=EXAMPLE_TIME_US,
             lo=0.001, hi=1e12),
    narrowed(api.BUSBW["collective"], label="Collective",
             choices=tuple((k, c.label) for k, c in COLLECTIVES.items())),
    LINK,
)  # fmt: skip


def busbw(params=None) -> dict:
    """algbw = S / t and busbw = algbw x factor, held against the link's rate."""
    p = validated(params, BUSBW)
    r = _bandwidths(p["gpus"], p["bytes"], p["time_us"], p["collective"])
    return views.panel(params=p, readouts=_readouts(r, float(p["link_gbps"])))


def _bandwidths(gpus: int, nbytes, time_us, collective: str) -> records.Answer:
    """algbw and busbw; a pasted line's size and time are held to the busbw panel's limits."""
    BUSBW["bytes"].check(nbytes)
    BUSBW["time_us"].check(time_us)
    return api.busbw(gpus=gpus, bytes=nbytes, time_us=time_us, collective=collective)


BUSBW_HEADLINE = (("busbw", "busbw = algbw × factor"), ("busbw_share", "busbw against the link"))
BUSBW_READOUTS = (
    ("algbw", "algbw = S / t"),
    ("factor", "factor"),
    ("algbw_share", "algbw against the link"),
)


def _readouts(r: records.Answer, link: float) -> dict:
    n, factor = r["gpus"], r["factor"]
    return {
        "algbw": r.text("algbw_GBps"),  # busbw's record (costs/cost.BANDWIDTHS), as the CLI
        "busbw": r.text("busbw_GBps"),
        "factor": f"{COLLECTIVES[r['collective']].factor_text} = {fmt.sig(factor, 4)} at n = {n}",
        "busbw_share": f"{fmt.percent(r['busbw_GBps'] / link)} of {fmt.sig(link, 4)} GB/s",
        "algbw_share": f"{fmt.percent(r['algbw_GBps'] / link)} of {fmt.sig(link, 4)} GB/s",
        "time": f"{fmt.sig(r['time_us'], 6)} µs ({r.text('time_us')})",
        "size": r.text("bytes"),
    }


# ---- One all_reduce_perf line ------------------------------------------------------------------

# A real row: 2 x H100 PCIe joined by NVLink bridges, 1 GiB, nccl-tests' all_reduce_perf
# (NVIDIA/nccl-tests#194). H100 PCIe: NVLink bridge 600 GB/s bidirectional, so 300 GB/s per
# direction (NVIDIA H100 datasheet).
SAMPLE_LINE = (
    "  1073741824     268435456     float     sum      -1   9306.7  115.37  115.37      0"
    "   9291.5  115.56  115.56      0"
)
LINE = spec(
    Param("line", SAMPLE_LINE, "text"),
    narrowed(api.BUSBW["gpus"], label="GPUs in the run (n)", default=2),
    narrowed(api.BUSBW["collective"], label="Test",
             choices=tuple((k, c.program) for k, c in COLLECTIVES.items())),
    replace(LINK, default=300.0),
)  # fmt: skip


def nccl_line(params=None) -> dict:
    """One pasted nccl-tests row: its columns named, algbw and busbw recomputed and checked."""
    p = validated(params, LINE)
    line = p["line"]
    if len(line) > nccltests.MAX_LINE:
        raise ParamError("line", f"paste one line (at most {nccltests.MAX_LINE} characters)")
    link = float(p["link_gbps"])
    first = next((x for x in line.splitlines() if x.strip()), "")
    row = nccltests.parse_line(first)
    if not isinstance(row, nccltests.Row):
        raise ParamError("line", f"cannot read it: {row.reason}")
    half = row.out_of_place or row.in_place
    if not half.time_us:
        raise ParamError("line", "its time is N/A or 0, so there is no bandwidth to compute")
    if row.size_bytes == 0:
        raise ParamError("line", "its size is 0 bytes, so there is no bandwidth to compute")
    r = _bandwidths(p["gpus"], row.size_bytes, half.time_us, p["collective"])
    readouts = _readouts(r, link)
    readouts.update(_columns(row, r))
    return views.panel(params=p, readouts=readouts)


LINE_READOUTS = (
    ("col_size", "size"),
    ("col_count", "count, type"),
    ("col_redop", "redop"),
    ("col_root", "root"),
)  # then the two halves' columns in a table, labelled there, and:
LINE_HEADLINE = (("busbw_share", "busbw against the link (out-of-place, or in-place if alone)"),)


def _columns(row: nccltests.Row, r: dict) -> dict:
    """Each column of the row in words, and whether its printed bandwidths agree with ours."""
    out = {
        "col_size": f"{row.size_bytes:,} bytes ({fmt.nbytes(row.size_bytes)})",
        "col_count": f"{row.count:,} elements of {row.type}",
        "col_redop": row.redop,
        "col_root": (
            "no root column (an older nccl-tests)"
            if row.root is None
            else "−1: no root (an all-reduce has none)"
            if row.root < 0
            else str(row.root)
        ),
    }
    for key, half in (("oop", row.out_of_place), ("ip", row.in_place)):
        if half is None:
            out[f"{key}_time"] = out[f"{key}_algbw"] = out[f"{key}_busbw"] = "not printed"
            out[f"{key}_wrong"] = "not printed"
            out[f"{key}_check"] = "—"
            continue
        out[f"{key}_time"] = "N/A" if half.time_us is None else f"{half.text[0]} µs"
        out[f"{key}_algbw"] = _gb(half.algbw_GBps)
        out[f"{key}_busbw"] = _gb(half.busbw_GBps)
        out[f"{key}_wrong"] = (
            "N/A (data not checked)"
            if half.wrong is None
            else f"{half.wrong:g}" + (" (all correct)" if half.wrong == 0 else " — errors!")
        )
        out[f"{key}_check"] = agreement(row.size_bytes, half, r)
    return out


def _gb(v) -> str:
    return "N/A" if v is None else f"{fmt.sig(v, 5)} GB/s"


def agreement(size: int, half: nccltests.Half, r: dict) -> str:
    """Do the printed algbw and busbw follow from the printed size and time at this n?"""
    a = nccltests.agreement(size, half, r["factor"])
    if a is None:
        return "nothing to check (N/A)"
    ours = f"algbw {fmt.sig(a['algbw_GBps'], 5)}, busbw {fmt.sig(a['busbw_GBps'], 5)} GB/s"
    if a["algbw_agrees"] and a["busbw_agrees"]:
        return f"agrees: {ours}"
    if a["algbw_agrees"]:
        return f"algbw agrees but busbw does not ({ours}): is the GPU count right?"
    return f"differs ({ours}): is this line from another test?"


RECORDS = (
    Widget(
        "sends",
        sends,
        SENDS,
        views.CHART,
        label="Bytes each GPU sends against GPU count: ring and naive, counted and by formula",
        headline=SENDS_HEADLINE,
        readouts={"main": SENDS_READOUTS},
        layout=(("readouts", "main"), ("chart", "The chart's data as a table")),
    ),
    Widget(
        "busbw",
        busbw,
        BUSBW,
        views.PANEL,
        label="Algorithm bandwidth and bus bandwidth from one measured time",
        headline=BUSBW_HEADLINE,
        readouts={"main": BUSBW_READOUTS},
        layout=(("readouts", "main"),),
    ),
    Widget(
        "nccl_line",
        nccl_line,
        LINE,
        views.PANEL,
        label="Read one all_reduce_perf line",
        headline=LINE_HEADLINE,
        readouts={"columns": LINE_READOUTS},
        layout=(("readouts", "columns"), ("partial", "nccl_line_table")),
    ),
)


def facts() -> dict[str, str]:
    """What each GPU sends: the quoted figures."""
    s = EXAMPLE_GRADIENT_BYTES
    ring8 = cost.cost("ring", Topology.make(8), s)
    ring64 = cost.cost("ring", Topology.make(64, 8), s)
    d = defaults(BUSBW)
    b = api.busbw(gpus=d["gpus"], bytes=d["bytes"], time_us=d["time_us"])
    sample = nccltests.parse_line(SAMPLE_LINE)
    line = api.busbw(
        gpus=LINE["gpus"].default, bytes=sample.size_bytes, time_us=sample.out_of_place.time_us
    )
    return {
        "sends_ring_8": fmt.sig(ring8["bytes_sent_per_gpu_max"] / s, 3),
        "sends_ring_64": fmt.sig(ring64["bytes_sent_per_gpu_max"] / s, 4),
        "sends_ring_64_bytes": fmt.nbytes(ring64["bytes_sent_per_gpu_max"]),
        "sends_root_64_bytes": fmt.nbytes(63 * s),
        "sends_max_counted": str(max(COUNTED)),
        "busbw_time": fmt.seconds(d["time_us"] * 1e-6),
        "busbw_time_us": f"{d['time_us']:g}",
        "busbw_share": fmt.percent(b["busbw_GBps"] / H100_NVLINK_GBps),
        "busbw_algbw": f"{fmt.sig(b['algbw_GBps'], 3)} GB/s",
        "busbw_busbw": f"{fmt.sig(b['busbw_GBps'], 3)} GB/s",
        "busbw_h100_ring": f"{H100_RING_BUSBW:g} GB/s",
        "line_size": f"{sample.size_bytes:,}",
        "line_size_gib": f"{sample.size_bytes / GIB:g} GiB",
        "line_time": f"{sample.out_of_place.time_us:g} µs",
        "line_share": fmt.percent(line["busbw_GBps"] / LINE["link_gbps"].default),
        "line_link": f"{LINE['link_gbps'].default:g} GB/s",
    }
