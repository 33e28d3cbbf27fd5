"""Page 4: bytes per GPU counted against the formulas; algbw and busbw as nccl-tests defines
them; one pasted all_reduce_perf line read, named and checked; its prose's figures."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers
from allreduce_explainer import api, bridge
from allreduce_explainer.widgets import innetwork, sends
from helpers import examples

# nccl-tests src/*.cu, *GetBw: busbw = algbw x factor (written out here, not read from the code)
FACTORS = {
    "allreduce": lambda n: Fraction(2 * (n - 1), n),
    "reducescatter": lambda n: Fraction(n - 1, n),
    "allgather": lambda n: Fraction(n - 1, n),
    "alltoall": lambda n: Fraction(n - 1, n),
    "broadcast": lambda n: Fraction(1),
    "reduce": lambda n: Fraction(1),
}


def test_counted_bytes_equal_the_formulas_exactly():
    rows = sends.counted()
    assert [r[0] for r in rows] == list(sends.COUNTED) and max(sends.COUNTED) == 64
    for n, ring_max, ring_min, root, other in rows:
        assert ring_max == ring_min == 2 * (n - 1) / n  # every GPU of the ring sends the same
        assert root == n - 1 and other == 1


def test_chart_draws_counted_and_formula_values_that_agree():
    s = sends.sends({"gpus": 64, "gradient_gb": 14})
    series = {t["name"]: t for t in s["figure"]["data"]}
    for counted, formula in (
        ("ring, counted", "ring"),
        ("naive root, counted", "naive root"),
        ("naive, other GPUs, counted", "naive, other GPUs"),
    ):
        c, f = series[counted], series[formula]
        assert c["mode"] == "markers" and f["line"]["dash"] != "solid"  # told apart on the chart
        for x, y in zip(f["x"], f["y"], strict=True):
            if x in c["x"]:
                assert c["y"][c["x"].index(x)] == pytest.approx(y, rel=1e-12)
    assert series["ring"]["x"][-1] == 4096
    assert max(series["ring"]["y"]) < 2  # approaches two, never reaches it
    assert {"counted (simulation)", "formula (whiteboard model)"} <= set(series)  # the legend says
    marker = s["figure"]["data"][-1]
    assert marker["x"] == [64, 64] and marker["y"] == pytest.approx([126 / 64, 63])
    assert s["readouts"]["ring"].startswith("27.6 GB")


def test_chart_axes_are_fixed_so_the_marker_moves_not_the_chart():
    a = sends.sends({"gpus": 4})["figure"]["layout"]
    b = sends.sends({"gpus": 4000, "gradient_gb": 1})["figure"]["layout"]
    assert a == b


@settings(max_examples=examples(100), deadline=None)
@given(
    st.integers(1, 4096),
    st.floats(1, 1e13),
    st.floats(0.1, 1e9),
    st.sampled_from(sorted(FACTORS)),
)
def test_busbw_follows_nccl_tests_definitions(n, nbytes, time_us, collective):
    out = api.busbw(gpus=n, bytes=nbytes, time_us=time_us, collective=collective)
    algbw = nbytes / (time_us * 1e-6) / 1e9  # GB = 1e9 bytes
    assert out["algbw_GBps"] == pytest.approx(algbw, rel=1e-12)
    assert out["factor"] == pytest.approx(float(FACTORS[collective](n)), rel=1e-12)
    assert out["busbw_GBps"] == pytest.approx(algbw * float(FACTORS[collective](n)), rel=1e-12)


def test_busbw_widget_defaults_reach_the_measured_h100_rate():
    s = sends.busbw()
    assert s["readouts"]["busbw"] == "370 GB/s"
    assert s["readouts"]["busbw_share"].startswith("82 %")
    more = sends.busbw({"gpus": 64})  # more GPUs, same time: algbw unchanged, busbw up
    assert more["readouts"]["algbw"] == s["readouts"]["algbw"]
    assert more["readouts"]["busbw"] != s["readouts"]["busbw"]


def _line(size, time_us, n, tag=""):
    """A row as nccl-tests would print it for an all-reduce on n GPUs."""
    algbw = size / time_us / 1e3
    busbw = algbw * 2 * (n - 1) / n
    half = f"  {time_us:7.2f}  {algbw:6.2f}  {busbw:6.2f}       0"
    return f"{tag}{size:12d}  {size // 4:12d}     float     sum      -1{half}{half}"


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(2, 512), st.integers(1 << 20, 1 << 34), st.floats(100, 99999))
def test_a_consistent_line_agrees_and_a_wrong_gpu_count_does_not(n, size, time_us):
    line = _line(size, round(time_us, 2), n)
    s = sends.nccl_line({"line": line, "gpus": n})
    assert s["readouts"]["oop_check"].startswith("agrees"), s["readouts"]
    busbw = size / round(time_us, 2) / 1e3 * 2 * (n - 1) / n
    if busbw > 20:  # large enough that a factor 1 instead of 2(n - 1)/n shows above rounding
        wrong = sends.nccl_line({"line": line, "gpus": 1 if n > 2 else 64})
        assert "busbw does not" in wrong["readouts"]["oop_check"]


def test_default_line_is_read_and_named():
    r = sends.nccl_line()["readouts"]
    assert r["col_size"].startswith("1,073,741,824 bytes")
    assert r["oop_time"] == "9306.7 µs" and r["ip_busbw"] == "115.56 GB/s"
    assert r["oop_check"].startswith("agrees") and r["ip_check"].startswith("agrees")
    assert r["oop_wrong"].startswith("0")


def test_tagged_old_line_without_root():
    line = (
        "[0]  33554432  8388608  float  sum  195.40  171.72  300.51  N/A"
        "  195.40  171.73  300.52  N/A"
    )
    r = sends.nccl_line({"line": line, "gpus": 8})["readouts"]
    assert r["col_root"].startswith("no root column")
    assert r["oop_wrong"].startswith("N/A") and r["oop_check"].startswith("agrees")


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("sends", {"gpus": 1}, "gpus"),
        ("sends", {"gpus": 5000}, "gpus"),
        ("sends", {"gradient_gb": 0}, "gradient_gb"),
        ("sends", {"gradient_gb": float("inf")}, "gradient_gb"),
        ("busbw", {"time_us": 0}, "time_us"),
        ("busbw", {"bytes": -1}, "bytes"),
        ("busbw", {"collective": "allreduce2"}, "collective"),
        ("busbw", {"gpus": 2.5}, "gpus"),
        ("busbw", {"link_gbps": "fast"}, "link_gbps"),
        ("nccl_line", {"line": "# Avg bus bandwidth : 3"}, "line"),
        ("nccl_line", {"line": "hello world"}, "line"),
        ("nccl_line", {"line": 42}, "line"),
        ("nccl_line", {"line": "0 0 float sum -1 5.7 0.00 0.00 0 5.5 0.00 0.00 0"}, "line"),
        ("nccl_line", {"line": "8 2 float sum -1 N/A 0 0 0 N/A 0 0 0"}, "line"),
        ("nccl_line", {"line": "x" * 10_000}, "line"),
        ("nccl_line", {"gpus": 0}, "gpus"),
    ],
)
def test_bad_parameters_name_their_field(name, params, field):
    out = json.loads(bridge.call(name, json.dumps(params)))
    assert out["ok"] is False and out["error"]["field"] == field, out
    assert out["error"]["message"]


def test_unreadable_line_says_why():
    out = json.loads(bridge.call("nccl_line", json.dumps({"line": "8 2 float sum -1 1.0"})))
    assert "columns" in out["error"]["message"]


def test_facts_are_strings_and_match_the_model():
    f = sends.facts()
    assert all(isinstance(v, str) for v in f.values())
    assert f["sends_ring_8"] == "1.75" and f["busbw_busbw"] == "370 GB/s"


def test_the_pasted_lines_share_of_its_link_is_its_busbw_over_the_bridge():
    """Page 4 asks whether the default line's share is normal: 115.37 GB/s (its printed busbw,
    2 GPUs, factor 1) over the bridge's 300 GB/s per direction."""
    f = sends.facts()
    busbw = 1073741824 / 9306.7e-6 / 1e9  # the line's size over its out-of-place time
    assert f["line_share"] == f"{100 * busbw / 300:.0f} %" == "38 %"
    assert f["line_link"] == "300 GB/s"
    assert sends.nccl_line()["readouts"]["busbw_share"].startswith(f["line_share"])


def _main_prose(text: str) -> str:
    """A page's Markdown without its front matter, Deeper boxes and footnotes."""
    body = text.split("\n---\n", 1)[1]
    body = re.sub(r"<details.*?</details>", "", body, flags=re.S)
    return re.sub(r"^\[\^[^\]]+\]:.*?(?=^\[\^|\Z)", "", body, flags=re.S | re.M)


def test_page_4_quotes_the_one_nvls_ceiling_and_no_curve():
    """One voice: the NVLS ceiling on page 4 is page 9's fact itself (ld_reduce then st, so each
    link carries (n + 1)/n · S and busbw <= 2(n - 1)/(n + 1) · B). NCCL's busbw curve is page
    5's, and the core path's main prose uses no term it has not taught."""
    text = (helpers.ROOT / "content" / "04-what-each-gpu-sends.md").read_text()
    assert "{{ f.nvls_ideal_busbw }} GB/s" in text and "curve_nvls" not in text
    assert innetwork.facts()["nvls_ideal_busbw"] == f"{2 * 7 / 9 * 450:g}"  # 700
    main = _main_prose(text)
    assert 'widget("busbw_curve")' not in main and "{{ f.curve_" not in text
    for term in (r"NVLS\b", "NVLSTree", "[Cc]alibrat", r"\bSimple\b", "LL128", "SHARP"):
        assert not re.search(term, main), term
    assert main.count("protocol") == 1  # taught in the one clause that uses it


def test_page_4_has_a_measure_it_box_with_the_exact_command_lines():
    text = (helpers.ROOT / "content" / "04-what-each-gpu-sends.md").read_text()
    box = re.search(r'<aside data-role="practice" markdown="1">\n\n(.*?)</aside>', text, re.S)
    assert box and box.group(1).startswith("**Measure it**")
    for line in (
        "all_reduce_perf -b 8 -e 8G -f 2 -g 8",
        "mpirun -np 16 -N 8 ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1",
        "NCCL_DEBUG=INFO",
        "NCCL_ALGO",
        "NCCL_PROTO",
    ):
        assert line in box.group(1), line
