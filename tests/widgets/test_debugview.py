"""widgets/debugview.py: the drawn ring is the log's ring (each hop an arrow from a rank to the
next, the last back to the first), the tree one arrow per parent-child pair; the summary and
findings name what the reader read; no debug lines, no drawing."""

from __future__ import annotations

import helpers
from allreduce_explainer.logs import debug, findings
from allreduce_explainer.widgets import debugview

P5 = helpers.DATA / "nccl-debug" / "aws-p5-2x8xh100-efa-nccl-2.22.3.log"


def _topo() -> dict:
    return debug.read(P5.read_text())


def test_the_ring_drawn_is_the_log_s_ring():
    topo = _topo()
    for ch in (0, 1, 5):
        s = debugview.state(topo, ch, "ring")
        ring = topo["channels"][ch]["ring"]
        want = list(zip(ring, ring[1:] + ring[:1], strict=True))
        assert [(a[0], a[1]) for a in s["frame"]["arrows"]] == want
        assert s["left_out"] == 0 and len(s["diagram"]["nodes"]) == 16


def test_the_tree_drawn_is_parent_to_child():
    topo = _topo()
    s = debugview.state(topo, 0, "tree")
    got = {(a[0], a[1]) for a in s["frame"]["arrows"]}
    parent = topo["channels"][0]["tree"]["parent"]
    assert got == {(up, int(r)) for r, up in parent.items() if up >= 0}
    assert len(got) == topo["ranks"] - 1  # a tree over every rank


def test_an_unknown_channel_falls_back_to_the_first():
    assert debugview.state(_topo(), 63, "ring")["channel"] == 0


def test_summary_and_findings_text():
    topo = _topo()
    text = debugview.summary(topo)
    assert text.startswith("NCCL 2.22.3; 16 ranks on 2 server(s) of 8")
    found = debugview.findings_text(findings.from_debug(topo))
    assert "evidence: " in found
    assert debugview.state(None, 0, "ring") is None
    assert "NCCL_DEBUG=INFO" in debugview.summary(None)


EFA28 = helpers.DATA / "nccl-debug" / "aws-efa-eks-2x8xa100-nccl-2.8.3.log"


def test_the_summary_says_nvls_is_absent_before_its_release():
    """NVLS came with 2.17: a 2.8.3 log's summary says absent; a 2.22.3 log's says what its
    NVLS lines say (off on these H100s with EFA), never 'absent'."""
    old = debug.read(EFA28.read_text())
    assert old["nccl_version"] == "2.8.3" and "NVLS absent" in debugview.summary(old)
    new = _topo()
    assert f"NVLS {new['nvls']['state']}" in debugview.summary(new)
    assert "absent" not in debugview.summary(new)
