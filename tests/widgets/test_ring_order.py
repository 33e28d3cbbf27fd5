"""The ring steppers (stage 2's reduce-scatter, stage 3's all-gather) run a given order of GPUs:
the ring NCCL printed for a channel (tests/data/nccl-debug/aws-p5-2x8xh100-efa-nccl-2.22.3.log,
channel 0), against an oracle written here: position p of the order sends to position p + 1 and
ends the reduce-scatter owning the chunk of its ring index, its distance round the ring from rank
0 (NCCL's src/init.cc:802 and src/device/all_reduce.h:60, `chunk = ringIx`); every GPU ends with
the exact sum."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer.errors import ParamError
from allreduce_explainer.widgets import ring
from allreduce_explainer.widgets.ring import ring_all_gather, ring_reduce_scatter
from helpers import examples

P5_CHANNEL_0 = [0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14, 15, 8]
TEXT = ",".join(map(str, P5_CHANNEL_0))


def test_the_p5_ring_runs_as_nccl_printed_it():
    s = ring_reduce_scatter({"gpus": 16, "order": TEXT, "length": 32})  # no empty chunk
    n = 16
    want = sorted((P5_CHANNEL_0[p], P5_CHANNEL_0[(p + 1) % n]) for p in range(n))
    for frame in s["frames"][1:]:
        assert sorted((m[0], m[1]) for m in frame["moves"]) == want  # [src, dst, start, stop, ...]
    assert [q["gpu"] for q in s["diagram"]["nodes"]] == P5_CHANNEL_0
    assert s["params"]["order"] == TEXT
    assert s["readouts"]["ring"].startswith("0 → 7 → 6 → 5")
    owned = [0] * n
    for p, g in enumerate(P5_CHANNEL_0):
        owned[g] = (p - P5_CHANNEL_0.index(0)) % n  # NCCL prints the ring from rank 0: p
    assert s["owned"] == owned
    assert owned[7] == 1 and owned[8] == 15


def test_a_ring_given_from_another_rank_keeps_nccls_owners():
    """The same ring written from rank 9: rank 0 still owns chunk 0, rank 7 chunk 1."""
    shifted = P5_CHANNEL_0[9:] + P5_CHANNEL_0[:9]
    a = ring_reduce_scatter({"gpus": 16, "order": TEXT, "length": 32})
    b = ring_reduce_scatter({"gpus": 16, "order": ",".join(map(str, shifted)), "length": 32})
    assert b["owned"] == a["owned"]
    assert b["frames"][-1]["buffers"] == a["frames"][-1]["buffers"]


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(2, 16).flatmap(lambda n: st.permutations(list(range(n)))), st.integers(0, 99))
def test_any_order_ends_with_the_exact_sum(order, seed):
    n = len(order)
    s = ring_all_gather({"gpus": n, "order": order, "seed": seed})
    x = np.array(s["inputs"])
    total = x.sum(axis=0).tolist()
    assert all(row == total for row in s["frames"][-1]["buffers"])
    assert s["check"]["verdict"].startswith("Exact match")
    assert [q["gpu"] for q in s["diagram"]["nodes"]] == order


def test_an_order_of_another_length_falls_back_to_rank_order():
    """The reader changed the GPU box: the link's order no longer fits, the ring is 0..n-1."""
    s = ring_reduce_scatter({"gpus": 8, "order": TEXT})
    assert s["params"]["order"] is None
    assert [q["gpu"] for q in s["diagram"]["nodes"]] == list(range(8))
    assert s == ring_reduce_scatter({"gpus": 8})


def test_no_order_is_todays_stepper():
    assert ring_reduce_scatter({}) == ring_reduce_scatter({"order": None})
    plain, given_ = ring_all_gather({"gpus": 5}), ring_all_gather({"gpus": 5, "order": "0,1,2,3,4"})
    assert given_["readouts"]["ring"] == "0 → 1 → 2 → 3 → 4 → 0 (the given order)"
    assert given_["params"] == plain["params"] | {"order": "0,1,2,3,4"}
    same = set(plain) - {"params", "readouts"}
    assert {k: given_[k] for k in same} == {k: plain[k] for k in same}


@pytest.mark.parametrize(
    ("order", "words"),
    [
        (list(range(17)), "longer than this stepper's 16"),
        (",".join(map(str, range(32))), "a ring of 32 GPUs"),
        ("0,1,1,3", "comes twice"),
        ("0,1,2,x", "not a GPU number"),
        ([0, 1, 2, 9], "not one of 0 to 3"),
        ({"a": 1}, "must be a list"),
    ],
)
def test_bad_orders_name_the_field(order, words):
    for widget in (ring_reduce_scatter, ring_all_gather):
        with pytest.raises(ParamError) as e:
            widget({"gpus": 4, "order": order})
        assert e.value.field == "order" and words in e.value.message


def test_stage_2_quotes_chunk_0s_first_sender_and_owner_as_facts():
    """NCCL's runRing (src/device/all_reduce.h:43, 60): GPU i first sends chunk
    modRanks(i + n - 1) and finishes chunk i, so chunk 0 leaves GPU 1 first and ends on GPU 0;
    the page quotes these through facts, never typed."""

    f = ring.facts()
    n = int(f["rs_gpus"])
    first = next(i for i in range(n) if (i + n - 1) % n == 0)
    assert (n, f["rs_chunk0_first"], f["rs_chunk0_owner"]) == (4, str(first), "0")
    page = (Path(__file__).parents[2] / "content" / "02-ring-reduce-scatter.md").read_text()
    assert "chunk 0 start on GPU {{ f.rs_chunk0_first }}" in page
    assert "GPU {{ f.rs_chunk0_owner }}." in page
