"""The predictions of pages 3, 6, 8 and 9 (all-gather bytes, the flat ring against one ring per
card, ZeRO-3's bytes against DDP's, NVLS's bytes per link), page 5's named crossings and page 7's
above-or-below, each judge held right, wrong, misconceived and unreadable against an answer worked
out here from the closed forms the pages teach (numpy's chunk split, (n - 1)/n, g, 3/2,
(n + 1)/n), not from the widgets' code; and the gap every verdict states."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from allreduce_explainer import bridge, dtypes
from allreduce_explainer.errors import ParamError
from allreduce_explainer.training import ddp
from allreduce_explainer.widgets import REGISTRY, buckets, innetwork, latency, ring, servers, shards
from allreduce_explainer.widgets.common import gap

ROOT = Path(__file__).resolve().parents[2]
NEW = {
    "ring_all_gather": ring.predict_all_gather,
    "servers_compare": servers.predict_compare,
    "shard_memory": shards.predict_memory,
    "innetwork_bandwidth": innetwork.predict_bandwidth,
}


def _mib(x: float) -> str:
    return f"{x:g} MiB"


def test_gap_says_how_far_the_guess_is_either_way():
    assert gap(40, 63.1, _mib) == "1.6 times your 40 MiB"
    assert gap(400, 63.1, _mib) == "your 400 MiB is 6.3 times that"
    assert gap(60, 63.1, _mib) == "your 60 MiB is 4.9 % below it"
    assert gap(63.1, 63.1, _mib) == "your 63.1 MiB is spot on"


# ---- page 3: the all-gather's bytes -----------------------------------------------------------


CASES = [(4, 8, "int"), (3, 8, "int"), (3, 7, "int"), (8, 16, "bf16"), (5, 13, "fp32"),
         (2, 4, "int")]  # fmt: skip


@pytest.mark.parametrize(("gpus", "length", "dtype"), CASES)
def test_all_gather_bytes_are_every_chunk_but_the_one_gpu_0_receives_last(gpus, length, dtype):
    """In rank order GPU 0 sends its own chunk, then forwards what it receives: every chunk but
    the one that reaches it last, GPU 1's (it has travelled the whole ring). Chunks as numpy
    splits them, bytes by the type's size."""
    params = {"gpus": gpus, "length": length, "dtype": dtype}
    item = dtypes.get(dtype).itemsize
    sizes = [len(c) * item for c in np.array_split(np.arange(length), gpus)]
    owned = ring.ring_reduce_scatter(params)["owned"]
    want = length * item - sizes[owned[1]]
    if length % gpus == 0:
        assert want == (gpus - 1) * length * item // gpus
    s = ring.ring_all_gather(params)
    assert s["prediction"]["last_step"] == 0 and s["prediction"]["readouts"] == ["sent"]
    right = ring.predict_all_gather(params, f"{want} B")
    assert right["correct"] is True and "spot on" in right["message"]
    assert ring.predict_all_gather(params, str(want + item))["correct"] is False


def test_all_gather_names_the_misconceptions():
    params = {"gpus": 4, "length": 8}  # 32 bytes, chunks of 8
    for answer, words in (("32", "whole gradient"), ("8", "one chunk"), ("48", "whole all-reduce")):
        v = ring.predict_all_gather(params, answer)
        assert v["correct"] is False and words in v["message"], v
        assert "GPU 0 sends 24 bytes of its 32" in v["message"]
    assert ring.predict_all_gather(params, "20")["message"].startswith("Not quite.")


# ---- page 6: the flat ring against one ring per card ------------------------------------------


@pytest.mark.parametrize(("servers_", "g"), [(8, 8), (4, 4), (16, 2)])
def test_flat_ring_is_g_times_one_ring_per_card_when_the_card_sets_the_pace(servers_, g):
    """The page's table: per card the flat ring sends 2(n-1)/n S, each card of the per-card rings
    2(n-1)/n S/g; with no latency and the card far slower than NVLink the card sets both paces,
    so the flat ring takes g times as long."""
    params = {"servers": servers_, "gpus_per_node": g}
    assert servers.predict_compare(params, str(g))["correct"] is True
    assert servers.predict_compare(params, f"{g * 1.05:.3g}x")["correct"] is True
    assert servers.predict_compare(params, str(g * 1.3))["correct"] is False
    same = servers.predict_compare(params, "1")
    assert same["correct"] is False and f"1/{g} of what" in same["message"]


def test_flat_ring_nvlink_over_card_is_named():
    v = servers.predict_compare(None, "9")  # 450 GB/s NVLink over a 50 GB/s card
    assert v["correct"] is False and "NVLink's rate over the card's" in v["message"]
    s = servers.servers_compare()
    hidden = s["prediction"]["readouts"]
    assert {"ring_time", "multi_ring_time", "hierarchical_time", "verdict"} == set(hidden)
    assert s["readouts"]["ring_time"] in v["message"]


# ---- page 8: ZeRO-3's bytes against DDP's ------------------------------------------------------


@pytest.mark.parametrize("params", [None, {"model": "llama3-70b", "gpus": 256}, {"gpus": 8}])
def test_zero3_sends_three_halves_of_ddp(params):
    """ZeRO-3 all-gathers the parameters for the forward and the backward pass and
    reduce-scatters the gradients: three halves of an all-reduce against DDP's two (ZeRO,
    Rajbhandari et al. 2020, section 7), 3/2 whatever the model."""
    assert shards.predict_memory(params, "1.5")["correct"] is True
    assert shards.predict_memory(params, "1.45")["correct"] is True
    assert shards.predict_memory(params, "1.35")["correct"] is False
    one = shards.predict_memory(params, "1")
    assert one["correct"] is False and "ZeRO-1's and ZeRO-2's" in one["message"]
    three = shards.predict_memory(params, "3")
    assert three["correct"] is False and "two halves" in three["message"]
    assert "1.5 times as much" in one["message"]


# ---- page 9: NVLS's bytes on a link ------------------------------------------------------------


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_nvls_link_carries_n_plus_one_over_n_of_the_buffer(gpus):
    """Page 9: with NVLS each link carries (n + 1)/n S; the ring 2(n - 1)/n S."""
    size = 8192 * 2**20
    params = {"gpus": gpus}
    want, ring_bytes = (gpus + 1) / gpus * size, 2 * (gpus - 1) / gpus * size
    v = innetwork.predict_bandwidth(params, f"{want:.0f} B")
    assert v["correct"] is True
    saved = abs(1 - want / ring_bytes) * 100
    word = "less" if want < ring_bytes else "more"
    assert re.search(rf"{saved:.2g} % {word} traffic", v["message"]), v["message"]
    assert innetwork.predict_bandwidth(params, f"{want * 1.1:.0f} B")["correct"] is False
    if abs(ring_bytes / want - 1) > 0.1:
        as_ring = innetwork.predict_bandwidth(params, f"{ring_bytes:.0f} B")
        assert as_ring["correct"] is False and "That is the ring's" in as_ring["message"]
    as_s = innetwork.predict_bandwidth(params, f"{size / 1e9:.4f} GB")
    named = "That is the ring's" if gpus == 2 else "the buffer S itself"  # 2(n - 1)/n S = S
    assert as_s["correct"] is False and named in as_s["message"]


# ---- page 5: which crossing ---------------------------------------------------------------------


def test_latency_names_the_whiteboard_crossing_and_the_ring_pick():
    """The whiteboard model's crossing (the second chart) and the size from which NCCL picks
    its ring (the strip) are other answers than the dotted curves' crossing: each is named as
    such, and every verdict says both."""
    s = latency.latency()
    board = s["crossover_bytes"]
    ring_from = next(p["bytes"] for p in s["picks"] if p["algorithm"] == "Ring")
    assert ring_from > 2 * s["crossover_nccl_bytes"]
    v = latency.predict_latency(None, f"{board:.0f} B")
    assert v["correct"] is False and "whiteboard model's curves cross." in v["message"]
    v = latency.predict_latency(None, f"{ring_from:.0f} B")
    assert v["correct"] is False and "starts to pick its ring" in v["message"]
    for answer in ("1 MB", f"{s['crossover_nccl_bytes']:.0f} B", "never"):
        m = latency.predict_latency(None, answer)["message"]
        assert s["readouts"]["crossover"] in m and s["readouts"]["band"] in m
    assert "dotted" in s["prediction"]["question"]


# ---- page 7: above or below the default -------------------------------------------------------


@pytest.mark.parametrize("params", [None, {"gpus": 8}, {"gpus": 64}])
def test_buckets_side_of_the_default_is_the_sweeps(params):
    """Above or below PyTorch's 25 MiB: the side of the best cap that api.ddp's sweep finds (a
    word, a prefix or a cap in MiB), and the verdict names the best cap and its gap."""
    s = buckets.ddp_buckets(params)
    best = float(s["readouts"]["best"].split()[0])
    side = "above" if best > ddp.DEFAULT_CAP_MB else "below"
    other = "below" if side == "above" else "above"
    assert buckets.predict_buckets(params, side)["correct"] is True
    assert buckets.predict_buckets(params, side[:2].upper())["correct"] is True
    wrong = buckets.predict_buckets(params, other)
    assert wrong["correct"] is False and s["readouts"]["best"] in wrong["message"]
    assert "times the default" in wrong["message"] or "times the best" in wrong["message"]
    cap = best * 1.5 if side == "above" else best / 1.5
    v = buckets.predict_buckets(params, f"{cap:.4g} MiB")
    assert v["correct"] is True and "times" in v["message"]
    default = buckets.predict_buckets(params, "25")
    assert default["correct"] is False and "default is not the best" in default["message"]


def test_buckets_prose_that_gives_the_answer_waits_for_the_prediction():
    """Every block of prose marked data-hidden-until names a prediction its page's widgets ask."""
    marked = 0
    for page in sorted((ROOT / "content").glob("[0-9]*.md")):
        text = page.read_text()
        asked = {
            REGISTRY[n].function()["prediction"]["id"]
            for n in re.findall(r'widget\("(\w+)"\)', text)
            if REGISTRY[n].predict
        }
        for pid in re.findall(r'data-hidden-until="([^"]+)"', text):
            assert pid in asked, (page.name, pid)
            marked += 1
    assert marked >= 1
    page7 = (ROOT / "content" / "07-ddp-buckets.md").read_text()
    hidden = page7.split('data-hidden-until="buckets-best-cap"')[1].split("</div>")[0]
    assert "f.ddp_many_best }}" in hidden and "does better than the default" in hidden


# ---- every judge ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NEW))
@pytest.mark.parametrize("answer", ["abc", "3 s", "", None, "0"])
def test_an_unreadable_answer_is_no_prediction(name, answer):
    with pytest.raises(ParamError) as e:
        NEW[name](None, answer)
    assert e.value.field == "answer" and e.value.message


def test_the_bridge_judges_every_new_prediction_and_each_verdict_gives_the_gap():
    for name, judge in NEW.items():
        assert REGISTRY[name].predict is judge
        s = REGISTRY[name].function()
        p = s["prediction"]
        assert set(p.get("readouts", [])) <= set(s["readouts"])
        request = {"widget": name, "params": s["params"], "answer": "2"}
        out = json.loads(bridge.call("predict", json.dumps(request)))
        assert out["ok"], out
        said = r"your .+ (is spot on|times that|% (above|below) it)|times your"
        assert re.search(said, out["state"]["message"]), out
