"""widgets/debugview.py's link to stage 2's stepper: it carries the channel's ring as the log
printed it (the p5 log's channel 0, read here from its Channel line, not from the reader), and
the stepper it opens runs that ring; a ring longer than the stepper's limit, cut short, or not a
permutation gets no link."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import helpers
from allreduce_explainer.logs import debug
from allreduce_explainer.widgets import debugview
from allreduce_explainer.widgets.ring import RING, ring_reduce_scatter

P5 = helpers.DATA / "nccl-debug" / "aws-p5-2x8xh100-efa-nccl-2.22.3.log"


def _channel_line_ring(text: str, ch: int) -> list[int]:
    """The first `Channel 0c/NN : r r r` line's ranks, read with a regex of this test's own."""
    m = re.search(rf"Channel {ch:02d}/\d+ :((?: +\d+)+) *$", text, re.M)
    assert m, "no Channel line"
    return [int(r) for r in m.group(1).split()]


def _query(link: str) -> dict[str, str]:
    parts = urlsplit(link)
    assert parts.path == "ring-reduce-scatter/index.html"
    return {k: v[0] for k, v in parse_qs(parts.query).items()}


def test_the_link_carries_channel_0_s_ring_and_the_stepper_runs_it():
    text = P5.read_text()
    want = _channel_line_ring(text, 0)
    assert want == [0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14, 15, 8]
    s = debugview.state(debug.read(text), 0, "ring")
    q = _query(s["step_link"])
    assert q["ring_reduce_scatter.order"] == ",".join(map(str, want))
    params = {k.split(".", 1)[1]: v for k, v in q.items()}
    params = {k: int(v) if k != "order" else v for k, v in params.items()}
    st = ring_reduce_scatter(params)
    assert [n["gpu"] for n in st["diagram"]["nodes"]] == want
    for frame in st["frames"][1:]:
        hops = sorted((m[0], m[1]) for m in frame["moves"])
        assert hops == sorted(zip(want, want[1:] + want[:1], strict=True))


def _channel(ring, truncated=False) -> dict:
    return {"channel": 0, "ring": ring, "ring_truncated": truncated, "tree": None}


def test_no_link_when_the_ring_does_not_fit_the_stepper():
    most = RING["gpus"].hi
    assert debugview.step_link(_channel(list(range(most)))) is not None
    assert debugview.step_link(_channel(list(range(most + 1)))) is None
    assert debugview.step_link(_channel([0, 1, 2], truncated=True)) is None
    assert debugview.step_link(_channel([0, 2, 3])) is None  # not every rank once
    assert debugview.step_link(_channel([])) is None
    assert debugview.step_link(None) is None
