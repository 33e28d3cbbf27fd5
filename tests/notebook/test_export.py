"""A notebook exported to HTML (`jupyter nbconvert --to html`) shows each widget's state as a
static figure: executed in a real kernel (nbclient), exported by nbconvert's own exporter, its
widgets' readouts are in the page, in a declarative shadow root with the site's sheet.

nbconvert shows a widget's live view only from widget state saved in the notebook (and a widget
manager fetched from a CDN); without it, the output's next mimetype, the static figure. JupyterLab
and Notebook 7 save no widget state unless asked to, so that is the case held here.

Marked `notebook` (a kernel: some seconds).
"""

from __future__ import annotations

import html
import json
import os
from html.parser import HTMLParser

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from helpers import ROOT

pytestmark = pytest.mark.notebook

GPUS, LENGTH, INT32 = 6, 12, 4
CELLS = [
    "from allreduce_explainer.notebook import Latency, RingReduceScatter",
    f"s = RingReduceScatter(gpus={GPUS}, length={LENGTH})\ns",
    "c = Latency(gpus=512)\nc",
    "import json\nprint(json.dumps(c.state['readouts']))",
]


class Readouts(HTMLParser):
    """Every `data-readout` element's text, in the order of the page, and the shadow roots'
    templates (`<template shadowrootmode>`) that hold them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self.templates = 0
        self._open: list[list] = []  # [key, depth, text] of the readouts being read

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "template" and a.get("shadowrootmode") == "open":
            self.templates += 1
        for entry in self._open:
            entry[1] += 1
        if "data-readout" in a:
            self._open.append([a["data-readout"], 1, ""])

    def handle_endtag(self, tag):
        for entry in self._open:
            entry[1] -= 1
        while self._open and self._open[-1][1] == 0:
            key, _, text = self._open.pop()
            self.found.append((key, " ".join(text.split())))

    def handle_data(self, data):
        for entry in self._open:
            entry[2] += data


@pytest.fixture(scope="module")
def exported() -> tuple[str, nbformat.NotebookNode]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONPATH"] = path  # the kernel imports this checkout's code
    # no widget state saved, as JupyterLab and Notebook 7 save a notebook by default
    NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=False).execute()
    body, _ = HTMLExporter().from_notebook_node(nb)
    return body, nb


def readouts(body: str) -> dict[str, str]:
    parser = Readouts()
    parser.feed(body)
    return dict(parser.found)


def test_the_stepper_shows_its_readouts_by_the_rings_formula(exported):
    """Reduce-scatter on a ring of n GPUs, L numbers each: n − 1 steps, each GPU sends
    (n − 1)·L/n of its L numbers (Patarasuk and Yuan's ring), here int32's 4 bytes each."""
    got = readouts(exported[0])
    sent = (GPUS - 1) * (LENGTH // GPUS) * INT32
    assert got["steps"] == f"{GPUS - 1} (n − 1)"
    assert got["sent"] == f"{sent} bytes of its {LENGTH * INT32}"
    ring = " → ".join(str(g) for g in [*range(GPUS), 0])
    assert got["ring"].startswith(ring)


def test_the_charts_readouts_are_its_kernel_state(exported):
    """The chart's headline figures in the page are those the kernel's `c.state` holds (the last
    cell printed them), not the defaults' (its 512 GPUs are not Latency's default)."""
    body, nb = exported
    printed = json.loads(nb.cells[-1].outputs[0]["text"])
    got = readouts(body)
    for key, value in printed.items():
        if f'data-readout="{key}"' in body:
            assert got[key] == " ".join(value.split()), key
    assert "crossover_nccl" in printed and got["crossover_nccl"] == printed["crossover_nccl"]


def test_each_widget_is_a_static_figure_in_its_own_shadow_root_with_the_sites_sheet(exported):
    """Two widgets, two shadow roots, each with the site's sheet as it is (rule for rule: the
    file's text) and its :root variables as the host's; the exported page's own rules untouched
    (no site rule outside a shadow root), no widget script (nothing runs: the figure is static)."""
    body = exported[0]
    parser = Readouts()
    parser.feed(body)
    assert parser.templates == 2
    site = (ROOT / "client" / "css" / "site.css").read_text()
    assert body.count(html.escape(site, quote=False)) + body.count(site) >= 2
    assert body.count(":host {\n  /* Each colour is light-dark") == 2
    # the two sheets' own and their hosts' copies of the variable, none elsewhere on the page
    assert body.count("--wide") == 2 * (site.count("--wide") + 1)
    assert 'data-role="state" type="application/json">null<' in body  # no state for a script
