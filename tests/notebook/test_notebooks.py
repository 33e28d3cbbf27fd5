"""Every lab under labs/source/ runs top to bottom in a real kernel (nbgrader's autograde of the
teacher's version, tests/notebook/course.py), and its cells show what they say: a widget view,
and the reader's code's answers, checked here against formulas written out in the test.

Marked `notebook` (a kernel per notebook: some seconds each).
"""

from __future__ import annotations

import re

import pytest
from course import LABS, labs

from helpers import ROOT

pytestmark = pytest.mark.notebook

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def executed(course):
    """A lab as the solved student's autograde ran it, every cell with its outputs."""
    return lambda lab: course.notebook("autograded", lab, "solved")


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        out.append(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
    return "".join(out)


def test_one_lab_per_stage():
    stages = sorted(p.name for p in (ROOT / "content").glob("[0-9][0-9]-*.md"))
    assert labs() == [s.removesuffix(".md") for s in stages]


@pytest.mark.parametrize("lab", labs())
def test_lab_runs_and_shows_its_widget(executed, lab):
    nb = executed(lab)
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    widget_cells = [c for c in code if re.search(r"^w$", c.source, re.MULTILINE)]
    views = [o for c in widget_cells for o in c.outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(views) == 1, [c.outputs for c in widget_cells]
    assert _text(code[-1]).strip(), "the reader's own cell printed nothing"


def _printed(executed, lab: str) -> str:
    return "".join(_text(c) for c in executed(lab).cells if c.cell_type == "code")


def test_busbw_lab_prints_nccl_tests_factor(executed):
    """nccl-tests' all-reduce busbw = algbw * 2(n-1)/n (PERFORMANCE.md of nccl-tests), and
    algbw = the row's bytes over its time."""
    from allreduce_explainer.exercises import labs as lab_problems

    g = lab_problems.problem("line_busbw").given
    text = _printed(executed, "04-what-each-gpu-sends")
    n, algbw, busbw = re.search(r"n = (\d+): algbw ([\d.]+) GB/s, busbw ([\d.]+)", text).groups()
    n, algbw, busbw = int(n), float(algbw), float(busbw)
    assert n == g["gpus"] and algbw == pytest.approx(g["bytes"] / g["time_us"] / 1e3, abs=0.005)
    assert busbw == pytest.approx(algbw * 2 * (n - 1) / n, abs=0.01)


def test_latency_lab_times_ring_and_tree_as_the_whiteboard_model(executed):
    """The lab's ring and tree on the exercise's flat network, against the page's whiteboard
    model written out: the ring pays 2(n − 1) messages of α + (S/n)/B in a row, the tree
    2(2 log2 n − 1) of α + (S/2)/B (each phase's steps but one send both trees' halves)."""
    from allreduce_explainer.exercises import labs as lab_problems

    g = lab_problems.problem("speedup", gpus=64).given
    n, a, b, s = g["gpus"], g["latency_us"] * 1e-6, g["gbps"] * 1e9, g["bytes"]
    text = _printed(executed, "05-latency-ring-vs-tree")
    ring, tree = (
        float(x) * 1e-6 for x in re.search(r"ring ([\d.]+) µs, tree ([\d.]+)", text).groups()
    )
    assert ring == pytest.approx(2 * (n - 1) * (a + s / n / b), rel=1e-3)
    depth = n.bit_length() - 1
    assert tree == pytest.approx(2 * (2 * depth - 1) * (a + s / 2 / b), rel=1e-3)


def test_cluster_lab_prints_nccl_s_pick(executed):
    from allreduce_explainer import api

    c = api.calc(model="llama-3-8b", gpus=64, gpus_per_node=8, gpu="h100")
    printed = _printed(executed, "10-your-cluster")
    assert f"NCCL picks: {c['nccl_algorithm']} {c['nccl_protocol']}" in printed
    # the record as the CLI's human view renders it, not figures the lab formats itself
    assert str(c) in printed and "the fitted time" in str(c)


@pytest.mark.parametrize("lab", labs())
def test_lab_writes_the_site_s_notation(lab):
    """n GPUs, N servers (page 10's notation; page 6 writes the servers' ring as 2(N − 1)
    steps) and DDP's caps in MiB, as page 7 writes them."""
    text = (LABS / "source" / lab / f"{lab}.ipynb").read_text(encoding="utf-8")
    assert not re.search(r"\bN (GPUs|ranks)\b|\bn servers\b", text), lab
    if "ddp" in lab or "bucket" in text:
        assert not re.search(r"\d ?MB\b", text), lab
