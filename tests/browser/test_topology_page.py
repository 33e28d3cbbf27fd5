"""Stage 10's server as NCCL's search sees it, in Chromium: the preset drawn with its GPUs and
the chosen channel's ring as the first frame's arrows; another preset and channel recomputed by
Python (the ring readout and the arrows follow the command line's `topology --json`); a bad
pasted file refused next to the file box; no serious axe violation."""

from __future__ import annotations

import contextlib
import io
import json

from axe_playwright_python.sync_playwright import Axe

from allreduce_explainer.cli import main
from helpers import PY_READY, axe_violations, open_page


def cli_ring(preset: str, channel: int) -> list[int]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["topology", preset, "--json"]) == 0
    return json.loads(out.getvalue())["channels"][channel]["ring"]


def _arrows(page) -> set[tuple[int, int]]:
    pairs = page.evaluate(
        "() => [...document.querySelectorAll('[data-widget=nccl_topology] svg .arrow')]"
        ".map(a => [Number(a.dataset.from), Number(a.dataset.to)])"
    )
    return {tuple(p) for p in pairs}


def test_the_server_its_ring_and_a_bad_file(page, server):
    open_page(page, server, "your-cluster", live=True)
    page.wait_for_selector(PY_READY, state="attached")
    w = page.locator("[data-widget=nccl_topology]")
    w.scroll_into_view_if_needed()
    gpus = page.evaluate(
        "() => [...document.querySelectorAll('[data-widget=nccl_topology] svg .node')]"
        ".map(g => Number(g.dataset.gpu))"
    )
    assert sorted(gpus) == list(range(8))
    ring = cli_ring("dgx-h100", 0)
    assert _arrows(page) == set(zip(ring, ring[1:] + ring[:1], strict=True))
    w.locator("[data-param=preset]").select_option("dgx-a100")
    # one change at a time: a change made while another is computing can be lost (widget.js)
    page.wait_for_selector("[data-widget=nccl_topology]:not([aria-busy])", state="attached")
    box = w.locator("[data-param=channel]")
    box.fill("13")
    box.press("Tab")
    ring = cli_ring("dgx-a100", 13)
    want = " → ".join(map(str, [*ring, ring[0]]))
    page.wait_for_function(
        "w => document.querySelector('[data-widget=nccl_topology] [data-readout=ring]')"
        ".textContent.startsWith(w)",
        arg=want,
    )
    assert _arrows(page) == set(zip(ring, ring[1:] + ring[:1], strict=True))
    # one change at a time: a change made while another is computing can be lost (widget.js)
    page.wait_for_selector("[data-widget=nccl_topology]:not([aria-busy])", state="attached")
    f = w.locator("[data-param=file]")
    f.fill("<system><cpu>")
    f.press("Tab")
    err = w.locator("[data-error-for=file]")
    page.wait_for_function(
        "() => document.querySelector('[data-widget=nccl_topology] [data-error-for=file]')"
        ".textContent.length > 0"
    )
    assert err.inner_text()
    assert axe_violations(Axe(), page) == []
