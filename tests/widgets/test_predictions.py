"""The first three predictions (stage 2's ring stepper, stage 5's latency chart, stage 7's bucket
sweep; the others in test_predictions_pages.py): the question each state asks, and the verdict
each judge gives, against answers worked out here independently: the ring's cell summed with
numpy along the schedule's rule, the crossing found by a dense scan of NCCL's curves, the best
cap by calling api.ddp cap by cap."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from allreduce_explainer import api, bridge, nccl
from allreduce_explainer.costs.latency_model import whole
from allreduce_explainer.errors import ParamError
from allreduce_explainer.training import ddp
from allreduce_explainer.widgets import REGISTRY, buckets, latency, ring

MIB = 2**20


def _asked(state: dict) -> tuple[int, int, int]:
    """(step, GPU, chunk) as the question names them."""
    m = re.fullmatch(
        r"After step (\d+), what will GPU (\d+) hold in the first cell of chunk (\d+)\?",
        state["prediction"]["question"],
    )
    assert m, state["prediction"]["question"]
    return int(m[1]), int(m[2]), int(m[3])


@pytest.mark.parametrize(("gpus", "length", "seed"), [(3, 6, 1), (4, 8, 1), (5, 13, 7), (8, 8, 3),
                                                       (16, 64, 11), (2, 4, 2)])  # fmt: skip
def test_ring_cell_is_the_sum_the_schedule_carries(gpus, length, seed):
    """In rank order GPU g receives chunk (g - 1 - s) mod n at step s, and then holds the sum of
    GPUs g, g - 1, ..., g - s (NCCL's ring, prims in ring order); chunks as numpy splits them."""
    params = {"gpus": gpus, "length": length, "seed": seed}
    state = ring.ring_reduce_scatter(params)
    step, gpu, chunk = _asked(state)
    assert step == min(2, gpus - 1) and gpu == min(2, gpus - 1)
    assert state["prediction"]["last_step"] == step - 1
    assert chunk == (gpu - 1 - step) % gpus
    x = np.array(state["inputs"], dtype=np.int64)
    start = [len(a) for a in np.array_split(np.arange(length), gpus)][:chunk]
    cell = sum(start)
    want = int(sum(x[(gpu - j) % gpus, cell] for j in range(step + 1)))
    right = ring.predict_reduce_scatter(params, str(want))
    assert right["correct"] is True and str(want).replace("-", "−") in right["message"]
    assert ring.predict_reduce_scatter(params, f"≈ {want}.")["correct"] is True
    assert ring.predict_reduce_scatter(params, str(want + 1))["correct"] is False
    far = ring.predict_reduce_scatter(params, str(want + 1000))  # no misconception gives it
    assert far["correct"] is False and far["message"].startswith("Not quite.")


def test_ring_names_the_misconceptions():
    """GPU 2's own number, what GPU 1 sends, and the whole sum each get their own message."""
    params = {"gpus": 4, "length": 8, "seed": 1}
    s = ring.ring_reduce_scatter(params)
    x = np.array(s["inputs"])
    own, sent, total = x[2, 6], x[0, 6] + x[1, 6], x[:, 6].sum()
    assert len({own, sent, total}) == 3
    for value, words in ((own, "own number"), (sent, "what GPU 1 sends"), (total, "all 4 GPUs")):
        v = ring.predict_reduce_scatter(params, str(value))
        assert v["correct"] is False and words in v["message"], v


def test_ring_fp32_accepts_the_sum_of_the_shown_numbers():
    """A reader adds the two numbers the grid shows at step 1 (GPU 1's cell, which it sends, and
    GPU 2's own, seven digits each) and types the sum to three digits: right, even where the
    sum nearly cancels."""
    for seed in range(1, 30):
        params = {"dtype": "fp32", "seed": seed}
        s = ring.ring_reduce_scatter(params)
        step, gpu, chunk = _asked(s)
        shown = s["frames"][step - 1]["buffers"]
        cell = 2 * chunk  # 8 numbers on 4 GPUs: two per chunk
        total = float(f"{shown[gpu - 1][cell]:.7g}") + float(f"{shown[gpu][cell]:.7g}")
        assert ring.predict_reduce_scatter(params, f"{total:.3g}")["correct"] is True, seed
        assert ring.predict_reduce_scatter(params, f"{total + 0.5:.3g}")["correct"] is False


def test_ring_with_fewer_numbers_than_gpus_asks_about_a_chunk_that_moves():
    s = ring.ring_reduce_scatter({"gpus": 4, "length": 3})
    step, gpu, chunk = _asked(s)
    bounds = np.array_split(np.arange(3), 4)
    assert len(bounds[chunk]) > 0


@pytest.mark.parametrize("answer", ["abc", "3 s", "", None])
def test_an_unreadable_answer_is_refused_naming_the_box(answer):
    for judge, params in ((ring.predict_reduce_scatter, None), (latency.predict_latency, None),
                          (buckets.predict_buckets, None)):  # fmt: skip
        with pytest.raises(ParamError) as e:
            judge(params, answer)
        assert e.value.field == "answer" and e.value.message


def _dense_crossing(gpus: int, per: int) -> float | None:
    """The first size, 64 points an octave from 8 B to 8 GiB, at which NCCL's ring (best
    protocol) is no slower than its tree, having been slower below it."""
    sizes = whole([8 * 2 ** (i / 64) for i in range(64 * 30 + 1)])
    t = nccl.best_by_algorithm(latency.nccl_system(gpus, per, card_Gbps=400), sizes).time_us
    for i in range(1, len(sizes)):
        if t["Ring"][i - 1] > t["Tree"][i - 1] and t["Ring"][i] <= t["Tree"][i]:
            return sizes[i]
    return None


@pytest.mark.parametrize(("gpus", "per"), [(64, 8), (64, 1), (1024, 8), (8, 1)])
def test_latency_crossing_is_judged_within_a_factor_of_two(gpus, per):
    x = _dense_crossing(gpus, per)
    assert x is not None
    params = {"gpus": gpus, "gpus_per_node": per}
    judge = latency.predict_latency
    board = latency.latency(params)["crossover_bytes"]  # the whiteboard's, named when guessed
    for factor, right in ((1, True), (1.9, True), (1 / 1.9, True), (2.2, False), (1 / 2.2, False)):
        v = judge(params, f"{x * factor / 1e6:.6g} MB")
        if board and abs(x * factor / board - 1) <= 0.1:
            assert v["correct"] is False and "whiteboard model's curves cross." in v["message"]
        else:
            assert v["correct"] is right, (factor, v)
    assert judge(params, f"{x:.0f} B")["correct"] is True
    assert judge(params, "never")["correct"] is False


def test_latency_never_is_right_where_the_curves_do_not_cross():
    assert _dense_crossing(8, 8) is None
    assert latency.predict_latency({"gpus": 8, "gpus_per_node": 8}, "never")["correct"] is True
    assert latency.predict_latency({"gpus": 8, "gpus_per_node": 8}, "1 MB")["correct"] is False


def test_latency_hides_the_crossings_until_predicted():
    s = latency.latency()
    p = s["prediction"]
    assert set(p["readouts"]) == {"crossover_nccl", "crossover"}
    assert p["figures"] == ["", "whiteboard"] and "whiteboard" in s["figures"]


def _exposed(cap: float) -> float:
    return api.ddp(model="gpt2", gpus=512, gpus_per_node=8, bucket_cap_mb=cap, first_bucket_mb=1)[
        "exposed_s"
    ]


def test_buckets_side_is_judged_against_a_brute_force_sweep():
    """The least exposed time of the caps a reader types (every 0.1 MiB to 200 MiB, and a
    grid beyond, found cap by cap) is no less than the page's best, and that cap's side of
    PyTorch's 25 MiB is the right answer, as a word or as any cap on that side."""
    total = api.ddp(model="gpt2", gpus=512, gpus_per_node=8)["gradient_bytes"]
    caps = [k / 10 for k in range(1, 2001)] + [0.1 * (total / MIB / 0.1) ** (k / 40)
                                                for k in range(41)]  # fmt: skip
    best = api.ddp(model="gpt2", gpus=512, gpus_per_node=8, sweep=True)
    least = best["best_exposed_s"]
    exposed = {c: _exposed(c) for c in caps}
    assert min(exposed.values()) >= least
    brute = min(caps, key=exposed.get)
    side = "above" if brute > 25 else "below"
    assert buckets.predict_buckets(None, side)["correct"] is True
    assert (
        buckets.predict_buckets(None, {"above": "below", "below": "above"}[side])["correct"]
        is False
    )
    for cap in (1, 10, 50, 110, 500):
        v = buckets.predict_buckets(None, f"{cap} MiB")
        assert v["correct"] is ((cap > 25) == (side == "above")), (cap, v)
    assert "default is not the best" in buckets.predict_buckets(None, "25")["message"]
    assert (
        buckets.predict_buckets(None, "104.857600 MB")["message"]
        == (buckets.predict_buckets(None, "100 MiB")["message"])
    )


def test_buckets_refuses_a_cap_outside_the_controls_limits():
    with pytest.raises(ParamError, match="between"):
        buckets.predict_buckets(None, "0")


def test_buckets_hides_the_sweep_until_predicted():
    s = buckets.ddp_buckets()
    assert s["prediction"]["figures"] == ["sweep"]
    assert set(s["prediction"]["readouts"]) == {"best", "best_exposed", "default_exposed", "advice"}
    assert ddp.DEFAULT_CAP_MB == 25  # the default the misconception's message names


def test_every_prediction_names_what_it_hides_and_the_bridge_judges_it():
    asking = {name: w for name, w in REGISTRY.items() if w.predict}
    assert set(asking) == {"ring_reduce_scatter", "ring_all_gather", "latency", "servers_compare",
                           "ddp_buckets", "shard_memory", "innetwork_bandwidth"}  # fmt: skip
    for name, w in asking.items():
        s = w.function()
        p = s["prediction"]
        assert p["id"] and "?" in p["question"] and p["example"]
        assert set(p.get("readouts", [])) <= set(s["readouts"])
        assert set(p.get("figures", [])) - {""} <= set(s.get("figures", {}))
        request = {"widget": name, "params": s["params"], "answer": "1"}
        out = json.loads(bridge.call("predict", json.dumps(request)))
        assert out["ok"] and set(out["state"]) == {"correct", "message"}
        request["answer"] = "one"
        out = json.loads(bridge.call("predict", json.dumps(request)))
        assert out["error"]["field"] == "answer"
    out = json.loads(bridge.call("predict", json.dumps({"widget": "steps", "answer": "1"})))
    assert out["error"]["field"] == "widget"
