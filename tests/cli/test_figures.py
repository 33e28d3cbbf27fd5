"""`allreduce-explainer figure`: a widget's chart as SVG and PNG, themed and titled.

The rendering tests run plotly.js in Chromium through Kaleido (Debian's chromium, as the
browser tests use); the rest checks the themed figure and the command line without drawing.
"""

import re
import shutil
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from allreduce_explainer import figures
from allreduce_explainer.cli import main
from allreduce_explainer.cli.files import widget_params
from allreduce_explainer.errors import ParamError
from allreduce_explainer.widgets import WIDGETS

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def _chromium():
    if shutil.which("chromium") is None:
        pytest.fail("Chromium is missing: run `make test` or `apt-get install chromium`")


def test_theme_colours_are_the_stylesheets():
    css = (ROOT / "client/css/site.css").read_text()
    for var, key in (("bg", "bg"), ("fg", "fg"), ("grid", "grid")):
        light, dark = re.search(rf"--{var}: light-dark\((#\w+), (#\w+)\)", css).groups()
        assert figures.THEMES["light"][key] == light
        assert figures.THEMES["dark"][key] == dark


def test_themed_sets_colours_and_title_and_leaves_the_widget_figure_alone():
    fig = WIDGETS["scaling"]()["figure"]
    before = repr(fig)
    out = figures.themed(fig, "dark")
    assert repr(fig) == before
    layout = out["layout"]
    assert layout["paper_bgcolor"] == layout["plot_bgcolor"] == "#16171b"
    assert layout["font"]["color"] == "#e8e8ea"
    assert layout["xaxis"]["gridcolor"] == "#343842" and layout["xaxis"]["type"] == "log"
    assert layout["title"]["text"] == "Time of one all-reduce against GPUs (8 per server)"
    assert figures.themed(fig, "light", "Mine")["layout"]["title"]["text"] == "Mine"
    assert out["data"] == fig["data"]


def test_a_figure_keeps_its_own_title_and_a_part_not_drawn_is_not_offered():
    fig = {"data": [], "layout": {"title": {"text": "Own"}, "xaxis": {"title": "x"}}}
    assert figures.themed(fig)["layout"]["title"]["text"] == "Own"
    assert figures.themed(fig, title="Given")["layout"]["title"]["text"] == "Given"
    state = WIDGETS["cluster"]()  # no log pasted: the log panel's two parts draw nothing
    undrawn = [k for k, v in state["figures"].items() if v["figure"] is None]
    assert undrawn, "the default calculator should leave the log panel's figures undrawn"
    for name in undrawn:
        with pytest.raises(ParamError) as e:
            figures.widget_figure("cluster", {}, name)
        assert e.value.field == "figure"
    assert figures.widget_figure("cluster", {})["data"]  # its main figure is still exported


def test_widget_params_are_read_as_json_or_text():
    assert widget_params(["--gpus", "64", "--params-b", "7.5"]) == {"gpus": 64, "params_b": 7.5}
    assert widget_params(["--model=gpt2", "--sweep"]) == {"model": "gpt2", "sweep": True}
    assert widget_params(["--values", "[[1,2],[3,4]]"]) == {"values": [[1, 2], [3, 4]]}


@pytest.mark.chromium
def test_svg_is_valid_xml_with_the_title_and_every_point(tmp_path):
    _chromium()
    out = tmp_path / "scaling.svg"
    assert main(["figure", "scaling", "--gpus", "128", "--theme", "dark", "--out", str(out)]) == 0
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg"
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "Time of one all-reduce against GPUs (8 per server)" in texts
    fig = WIDGETS["scaling"]({"gpus": 128})["figure"]
    traces = [g for g in root.iter(f"{SVG}g") if g.get("class", "").startswith("trace scatter")]
    assert len(traces) == len(fig["data"])
    for trace, g in zip(fig["data"], traces, strict=True):
        points = [p for p in g.iter(f"{SVG}path") if p.get("class") == "point"]
        assert len(points) == len(trace["x"])
        if trace.get("visible") != "legendonly" and trace.get("showlegend", True):
            assert trace["name"] in texts
    # the markers of the two curves run left to right, as their x values do
    xs = [
        float(re.match(r"translate\(([\d.]+),", p.get("transform")).group(1))
        for p in traces[0].iter(f"{SVG}path")
        if p.get("class") == "point"
    ]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    # the dark theme's background
    assert "fill: rgb(22, 23, 27)" in out.read_text()


@pytest.mark.chromium
def test_png_has_the_signature_and_the_size_asked(tmp_path):
    _chromium()
    out = tmp_path / "latency.png"
    assert main(["figure", "latency", "--width", "800", "--height", "450", "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # IHDR, drawn at scale 2
    assert (width, height) == (1600, 900)
    assert len(data) > 20_000  # a drawn chart, not an empty canvas
