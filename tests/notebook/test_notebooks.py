"""Every lab under notebooks/ runs top to bottom in a real kernel (nbclient), and its cells show
what they say: a widget view, the widget's readouts, and the reader's code's answers, checked here
against formulas written out in the test.

Marked `notebook` (a kernel per notebook: some seconds each).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from helpers import ROOT

pytestmark = pytest.mark.notebook

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@functools.cache
def _executed(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    env_path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONPATH"] = env_path  # the kernel imports this checkout's code
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": ROOT}}
    )
    client.execute()
    return nb


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        out.append(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
    return "".join(out)


def test_one_lab_per_stage():
    stages = sorted(p.name for p in (ROOT / "content").glob("[0-9][0-9]-*.md"))
    assert [p.stem for p in NOTEBOOKS] == [s.removesuffix(".md") for s in stages]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lab_runs_and_shows_its_widget(path):
    nb = _executed(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    widget_cell = next(c for c in code if "show(" in c.source)
    views = [o for o in widget_cell.outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(views) == 1, widget_cell.outputs
    assert _text(code[-1]).strip(), "the reader's own cell printed nothing"


def test_busbw_lab_prints_nccl_tests_factor():
    """nccl-tests' all-reduce busbw = algbw * 2(n-1)/n (PERFORMANCE.md of nccl-tests)."""
    nb = _executed(ROOT / "notebooks" / "04-what-each-gpu-sends.ipynb")
    text = _text([c for c in nb.cells if c.cell_type == "code"][-1])
    algbw, busbw = map(float, re.findall(r"([\d.]+) GB/s", text))
    assert algbw == pytest.approx(1e9 / 5e-3 / 1e9, abs=0.05)
    assert busbw == pytest.approx(algbw * 2 * 7 / 8, abs=0.05)


def _last_output(name: str) -> str:
    nb = _executed(ROOT / "notebooks" / name)
    return _text([c for c in nb.cells if c.cell_type == "code"][-1])


def test_latency_lab_shows_page_5_s_lesson():
    """A small message with 5 µs a message, every GPU its own server: the tree wins, as page 5
    teaches (the whiteboard model: the ring pays 2(n - 1) latencies in a row, the tree about
    2·log2 n). The lab once gave no servers, so the latency never applied and the ring won."""
    text = _last_output("05-latency-ring-vs-tree.ipynb")
    times = dict(re.findall(r"(ring|tree): ([\d.]+) µs", text))
    ring, tree = float(times["ring"]), float(times["tree"])
    assert ring >= 2 * 63 * 5 and tree < ring / 3


def test_buckets_lab_finds_no_cap_below_the_best():
    """The lab's caps each leave at least the best cap's exposed time, which is api.ddp's."""
    from allreduce_explainer import api

    text = _last_output("07-ddp-buckets.ipynb")
    exposed = [float(x) for x in re.findall(r"MiB: ([\d.]+) ms exposed", text)]
    best = api.ddp(model="gpt2", gpus=512, gpus_per_node=8, sweep=True)
    assert len(exposed) == 4 and min(exposed) >= round(best["best_exposed_s"] * 1e3, 2)
    assert f"the best of every cap: {best['best_bucket_mb']:g} MiB" in text


def test_cluster_lab_prints_nccl_s_pick():
    from allreduce_explainer import api

    c = api.calc(model="llama-3-8b", gpus=64, gpus_per_node=8, gpu="h100")
    assert f"NCCL picks: {c['nccl_algorithm']} {c['nccl_protocol']}" in _last_output(
        "10-your-cluster.ipynb"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lab_writes_the_site_s_notation(path):
    """n GPUs, N servers (page 10's notation) and DDP's caps in MiB, as page 7 writes them."""
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"\bN ?[−-] ?1|2\(N|/N\b", text), path.name
    if "ddp" in path.name or "bucket" in text:
        assert not re.search(r"\d ?MB\b", text), path.name
