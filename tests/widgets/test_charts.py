"""Charts chosen for their message: every log axis labelled at powers of ten only, in the site's
units; stage 7's timeline two fill-only traces per lane at Llama 3 405B's 884 buckets; the log
panel with no chart before a log."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest

from allreduce_explainer import api, fmt, widgets
from allreduce_explainer.logs import examples
from allreduce_explainer.widgets import buckets, cluster, views

# States with log axes beyond the defaults: a loaded log, wide and narrow ranges
VARIANTS = [
    ("cluster", {"example": key}) for key in examples.EXAMPLES
] + [
    ("latency", {"gpus": 1024, "latency_us": 0}),
    ("latency", {"gpus": 2, "gpus_per_node": 1, "nic_gbps": 3200}),
    ("ddp_buckets", {"model": "llama3-405b"}),
    ("servers_compare", {"servers": 64}),
]  # fmt: skip
SECONDS = {-9: "1 ns", -8: "10 ns", -7: "100 ns", -6: "1 µs", -5: "10 µs", -4: "100 µs",
           -3: "1 ms", -2: "10 ms", -1: "100 ms", 0: "1 s", 1: "10 s", 2: "100 s",
           3: "1,000 s"}  # fmt: skip


def _parts(state: dict) -> list[tuple[str, dict]]:
    """Every figure of a chart's state: the main one and those under "figures"."""
    out = [("main", state["figure"])] if state.get("figure") else []
    out += [(k, p["figure"]) for k, p in state.get("figures", {}).items() if p["figure"]]
    return out


def _log_axes(layout: dict):
    for key, ax in layout.items():
        if key.startswith(("xaxis", "yaxis")) and ax.get("type") == "log":
            yield key, ax


def _states():
    for name in sorted(widgets.WIDGETS):
        state = widgets.WIDGETS[name]()
        if state["kind"] == "chart":
            yield name, {}, state
    for name, params in VARIANTS:
        yield name, params, widgets.WIDGETS[name](params)


def _label(v: float, text: str) -> str:
    """The label a power of ten should carry, from the site's own formats where it has one."""
    e = round(math.log10(v))
    if text.endswith("B"):
        return fmt.nbytes(v)  # the site's byte units: 1 kB, 10 MB
    if text.endswith("s"):  # 1 ns .. 1,000 s
        return SECONDS[e]
    return f"{10**e:,}" if e >= 0 else f"{v:g}"


def test_every_log_axis_is_labelled_at_powers_of_ten_only():
    seen = 0
    for name, params, state in _states():
        for part, figure in _parts(state):
            go.Figure(figure)  # every part is valid Plotly, the ones under "figures" too
            for key, ax in _log_axes(figure["layout"]):
                where = (name, params, part, key)
                seen += 1
                vals, text = ax["tickvals"], ax["ticktext"]
                assert len(vals) >= 2, where
                for v in vals:  # a power of ten, to the bit
                    assert v == 10.0 ** round(math.log10(v)), where
                lo, hi = ax["range"]
                assert all(lo - 1e-9 <= math.log10(v) <= hi + 1e-9 for v in vals), where
                assert text == [_label(v, t) for v, t in zip(vals, text, strict=True)], where
    assert seen >= 15  # the GPU, size, time, steps and bytes axes of eight pages


def test_byte_and_time_axes_step_by_an_si_prefix_past_seven_decades():
    """Stage 5's size axis spans 8 B to 8 GiB, ten decades: 1 kB, 1 MB, 1 GB, not ten labels."""
    axis = widgets.WIDGETS["latency"]()["figure"]["layout"]["xaxis"]
    assert axis["ticktext"] == ["1 kB", "1 MB", "1 GB"]
    assert axis["range"] == pytest.approx([math.log10(8), math.log10(8 * 2**30)])


def _ddp_at(p: dict) -> dict:
    """api.ddp at a Llama 3 405B state's parameters (fp32 gradients, first bucket 1 MiB)."""
    return api.ddp(
        model="llama3-405b", gpu=p["gpu"], gpus=p["gpus"], gpus_per_node=p["gpus_per_node"],
        batch=p["batch"], mfu=p["mfu"], grad_bytes=4, inter_bw=p["nic_gbps"] / 8,
        bucket_cap_mb=p["bucket_cap_mb"], first_bucket_mb=1,
    )  # fmt: skip


def test_ddp_timeline_at_884_buckets_is_two_fill_only_traces_per_lane():
    """Llama 3 405B fills 884 buckets: a lane is two fill-only traces (odd and even buckets in
    two shades), each one gapless polygon along the lane's foot, where outlined boxes made Plotly
    draw a path per box (1,768 in all) and gaps made it handle each box apart; the boxes are
    api.ddp's timeline, called here, each drawn once."""
    s = buckets.ddp_buckets({"model": "llama3-405b"})
    p = s["params"]
    r = _ddp_at(p)
    rows = r["bucket_timeline"]
    assert len(rows) == 884 == int(s["readouts"]["buckets"])
    data = s["figure"]["data"]
    lanes = s["figure"]["layout"]["yaxis"]["ticktext"]
    drawn = {round(y) for t in data for y in t["y"] if y is not None}
    assert len(lanes) == len(drawn) == 3  # backward, all-reduce, exposed
    assert len(data) == 5  # two traces for each box lane, one line for the exposed time
    boxes = [t for t in data if t.get("fill") == "toself"]
    assert len(boxes) == 4 and all(t["mode"] == "none" and "line" not in t for t in boxes)
    assert [t["showlegend"] for t in boxes] == [True, False, True, False]
    assert boxes[0]["fillcolor"] != boxes[1]["fillcolor"]

    def spans(odd, even):  # each box: foot, top, top, foot (no gaps) -> (bucket, a, b)
        out = []
        for t in (odd, even):
            xs, ys = t["x"], t["y"]
            assert None not in xs and len(xs) % 4 == 0
            lo, hi = min(ys), max(ys)
            assert hi - lo == pytest.approx(buckets.LANE_HEIGHT)
            assert ys == [lo, hi, hi, lo] * (len(xs) // 4)  # between boxes: along the foot
            assert all(xs[i] == xs[i + 1] and xs[i + 2] == xs[i + 3] for i in range(0, len(xs), 4))
            assert all(xs[i] <= xs[i + 2] for i in range(0, len(xs), 4))
            out += [(t["customdata"][i], xs[i], xs[i + 2]) for i in range(0, len(xs), 4)]
        return sorted(out)

    ends = [b["ready_s"] * 1e3 for b in rows]
    starts = [0.0, *ends[:-1]]
    # drawn to a ten-thousandth of the timeline's end or finer: half of that at most off
    tol = 5e-5 * max(ends[-1], rows[-1]["end_s"] * 1e3)
    backward = spans(*boxes[:2])
    assert [k for k, _, _ in backward] == list(range(1, 885))
    assert [x for _, a, b in backward for x in (a, b)] == pytest.approx(
        [x for p in zip(starts, ends) for x in p], abs=tol
    )
    allreduce = spans(*boxes[2:])
    assert [x for _, a, b in allreduce for x in (a, b)] == pytest.approx(
        [x for b in rows for x in (b["start_s"] * 1e3, b["end_s"] * 1e3)], abs=tol
    )
    assert boxes[2]["customdata"][::4] == list(range(1, 885, 2))  # odd buckets in one shade


def test_884_buckets_send_the_first_rows_until_all_are_asked_for():
    """The bucket table holds views.FOLD rows and the count, and every row with rows="all": each
    row the bucket's own figures from api.ddp, formatted as the table formats them."""
    first = buckets.ddp_buckets({"model": "llama3-405b"})
    every = buckets.ddp_buckets({"model": "llama3-405b", "rows": "all"})
    assert len(first["table"]["rows"]) == views.FOLD == first["table"]["fold"] == 20
    assert first["table"]["total"] == every["table"]["total"] == 884 == len(every["table"]["rows"])
    assert every["table"]["rows"][: views.FOLD] == first["table"]["rows"]
    p = every["params"]
    r = _ddp_at(p)
    last = r["bucket_timeline"][-1]
    assert every["table"]["rows"][-1][0] == 884
    assert float(every["table"]["rows"][-1][5].replace(",", "")) == pytest.approx(
        last["end_s"] * 1e3, rel=5e-4
    )
    small = buckets.ddp_buckets({})
    assert "total" not in small["table"] and len(small["table"]["rows"]) == int(
        small["readouts"]["buckets"]
    )


def test_log_panel_has_no_chart_before_a_log_and_both_with_one():
    empty = cluster.cluster({})
    for key in ("time", "busbw"):
        assert empty["figures"][key]["figure"] is None
    assert empty["readouts"]["log_status"].startswith("No log yet")
    garbage = cluster.cluster({"log": "no rows here\n"})
    assert garbage["figures"]["time"]["figure"] is None
    loaded = cluster.cluster({"example": "ib-2nodes"})
    for key in ("time", "busbw"):
        measured = loaded["figures"][key]["figure"]["data"][0]
        assert measured["name"] == "measured (out-of-place)" and len(measured["x"]) > 10


def test_ddp_sweep_axis_keeps_the_marked_caps_readable_and_says_what_runs_off():
    """Llama 3 405B's sweep rises to seconds at the largest caps while the best, PyTorch's
    default and the reader's cap sit near 63 ms: the axis stops at four times the highest of
    those, every marked point is inside it, and the summary names the caps above it. GPT-2's
    sweep fits whole, with no such sentence."""
    s = buckets.ddp_buckets({"model": "llama3-405b"})
    sweep = s["figures"]["sweep"]
    curve, marks = sweep["figure"]["data"][0], sweep["figure"]["data"][1:]
    top = sweep["figure"]["layout"]["yaxis"]["range"][1]
    marked = [y for t in marks for y in t["y"]]
    assert top == pytest.approx(1.1 * 4 * max(marked))
    assert max(curve["y"]) > top > max(marked)
    off = [x for x, y in zip(curve["x"], curve["y"], strict=True) if y > top]
    assert off and f"above {fmt.sig(min(off), 2)} MiB" in sweep["summary"]
    small = buckets.ddp_buckets({})["figures"]["sweep"]
    ys = small["figure"]["data"][0]["y"]
    assert small["figure"]["layout"]["yaxis"]["range"][1] == pytest.approx(1.1 * max(ys))
    assert "above the chart" not in small["summary"]


def test_ddp_headline_times_are_as_precise_as_the_sweep_table():
    """The headline's all-reduce and backward times are within half a unit of the third
    significant digit of api.ddp's (at two digits Llama 3 405B's 12,3xx ms of all-reduce read
    12,000, against the sweep table's 12,300)."""
    s = buckets.ddp_buckets({"model": "llama3-405b"})
    p = s["params"]
    r = _ddp_at(p)
    for key, seconds in (("allreduce", r["allreduce_total_s"]), ("backward", r["backward_s"])):
        shown = float(s["readouts"][key].removesuffix(" ms").replace(",", ""))
        exact = seconds * 1e3
        unit = 10 ** (math.floor(math.log10(exact)) - 2)  # the third significant digit
        assert abs(shown - exact) <= unit / 2 + 1e-9, key


# A character of Plotly's 12 px tick labels, measured on the site's font: "100 ms" is 44 px.
LABEL_CHAR_PX = 7.3
PHONE_PLOT_PX = 330 - 60 - 30  # a 390 px phone's chart, less the smallest side margins


def _titled(ax: dict) -> bool:
    return bool(ax.get("title", {}).get("text"))


def test_every_y_axis_title_clears_its_widest_tick_label():
    """The left margin holds the widest y tick label ("100 ms"), a gap and the axis title's line,
    and the title stands off from the labels by a set gap (Plotly measures the labels for it):
    the title is never drawn across a label, with automargin off."""
    seen = 0
    for name, params, state in _states():
        for part, figure in _parts(state):
            lay, where = figure["layout"], (name, params, part)
            ax = lay["yaxis"]
            if not _titled(ax) or "ticktext" not in ax or name == "ddp_buckets":
                continue  # ddp_buckets: its lanes' names, its own layout (buckets.py)
            seen += 1
            widest = max(len(t) for t in ax["ticktext"]) * LABEL_CHAR_PX
            assert lay["margin"]["l"] >= widest + 4 + 16, where  # a gap, the title's line
            assert ax["title"]["standoff"] >= 4, where
    assert seen >= 6  # the time, steps and share axes of five pages


def test_log_x_labels_stand_level_side_by_side_on_a_phone():
    """Slanted, the size labels ran into each other ("100 kB" into "1 MB") and into the axis
    title below: every log x axis's labels are level and fit a phone's plot side by side."""
    for name, params, state in _states():
        for part, figure in _parts(state):
            ax = figure["layout"]["xaxis"]
            if ax.get("type") != "log" or name == "ddp_buckets":
                continue
            text = ax["ticktext"]
            room = len(text) * (max(map(len, text)) * LABEL_CHAR_PX + 8)
            assert ax["tickangle"] == 0 and room <= PHONE_PLOT_PX, (name, params, part, text)


def test_the_share_axis_fits_the_shares():
    """Your cluster's shares (4.2 % and 0.24 % at 64 GPUs) are read off the chart: the axis
    runs from just under the smallest share to the power of ten above the largest."""
    fig = widgets.WIDGETS["cluster"]()["figure"]
    shares = [y for t in fig["data"] for y in t["y"]]
    lo, hi = fig["layout"]["yaxis"]["range"]
    assert math.log10(min(shares)) - 0.2 < lo < math.log10(min(shares))
    assert hi == math.ceil(math.log10(max(shares))) == 1  # 10 %, above 6 %
