"""DDP buckets against PyTorch's rule, and the timeline against an independent calculation."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from itertools import accumulate

import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api, nccl
from allreduce_explainer.catalog import models
from allreduce_explainer.errors import ParamError
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.training import ddp
from allreduce_explainer.widgets import buckets as B
from helpers import examples, field_of

MIB = 1 << 20


def pytorch_rule(sizes_model_order, limits, ready=None):
    """compute_bucket_assignment_by_size, written from reducer.cpp independently: indices are
    walked in ready order (by default reverse model order), the limit iterator advances after
    each bucket closes and stays on the last limit."""
    if ready is None:
        ready = list(reversed(range(len(sizes_model_order))))
    result, bucket, size, it = [], [], 0, 0
    for idx in ready:
        bucket.append(idx)
        size += sizes_model_order[idx]
        if size >= limits[it]:
            result.append(bucket)
            bucket, size = [], 0
            if it + 1 < len(limits):
                it += 1
    if bucket:
        result.append(bucket)
    return result


def test_hand_made_default_limits():
    # model order: 100 B, 2 MiB, 30e6 B, 5 B, 600 kB, 600 kB
    sizes = [100, 2 * MIB, 30_000_000, 5, 600_000, 600_000]
    # ready order 5, 4 (1.2e6 >= 1 MiB closes the first), 3, 2 (>= 25 MiB), then 1, 0 left over
    assert ddp.buckets(sizes) == [[5, 4], [3, 2], [1, 0]]


def test_tensor_larger_than_the_cap_sits_alone_and_explicit_cap_applies_to_the_first():
    sizes = [10, 10, 50 * MIB, 10, 10]
    # explicit cap 1 MiB: the first bucket uses it too; 4, 3 stay open until the big tensor
    assert ddp.buckets(sizes, 1) == [[4, 3, 2], [1, 0]]
    sizes = [10, 50 * MIB, 10]
    assert ddp.buckets(sizes, 25) == [[2, 1], [0]]
    sizes = [50 * MIB, 10 * MIB, 50 * MIB]
    assert ddp.buckets(sizes, 25) == [[2], [1, 0]]
    assert ddp.buckets([30 * MIB] * 3) == [[2], [1], [0]]


def test_limits_follow_pytorch_defaults():
    assert ddp.limits() == (MIB, 25 * MIB)
    assert ddp.limits(25) == (25 * MIB, 25 * MIB)
    assert ddp.limits(10) == (10 * MIB, 10 * MIB)
    assert ddp.limits(None, 2) == (2 * MIB, 25 * MIB)
    assert ddp.limits(10, 2) == (2 * MIB, 10 * MIB)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.integers(1, 40 * MIB), min_size=1, max_size=60),
    st.one_of(st.none(), st.floats(0.01, 64)),
    st.one_of(st.none(), st.floats(0.01, 64)),
)
def test_buckets_match_the_rule_and_cover_every_parameter_once(sizes, cap, first):
    got = ddp.buckets(sizes, cap, first)
    assert got == pytorch_rule(sizes, list(ddp.limits(cap, first)))
    flat = [i for b in got for i in b]
    assert flat == list(reversed(range(len(sizes))))  # ready order, each exactly once
    first_lim, cap_lim = ddp.limits(cap, first)
    for k, b in enumerate(got[:-1]):  # every closed bucket reached its limit ...
        lim = first_lim if k == 0 else cap_lim
        assert sum(sizes[i] for i in b) >= lim
        assert sum(sizes[i] for i in b[:-1]) < lim  # ... only with its last tensor


def independent_exposed(layer_times, tensor_layer, sizes, buckets, ar):
    """Event by event: layer i's backward ends at the sum of the times of layers i..end."""
    n = len(layer_times)
    end_of = {i: sum(layer_times[i:]) for i in range(n)}
    backward = sum(layer_times)
    comm = 0.0
    for b in buckets:
        ready = max(end_of[tensor_layer[i]] for i in b)
        comm = max(comm, ready) + ar(sum(sizes[i] for i in b))
    return max(0.0, comm - backward), comm


def test_timeline_small_case_by_hand():
    # three layers of 1 s backward each; tensors 0, 1 in layer 0; 2 in layer 1; 3 in layer 2
    times, layer, sizes = [1.0, 1.0, 1.0], [0, 0, 1, 2], [1, 1, 1, 1]
    # backward: layer 2 ends at 1, layer 1 at 2, layer 0 at 3
    t = ddp.timeline(times, layer, sizes, [[3], [2], [1, 0]], lambda b: 0.5 * b)
    assert [r["start_s"] for r in t["buckets"]] == [1.0, 2.0, 3.0]
    assert t["exposed_s"] == pytest.approx(1.0) and t["backward_s"] == 3.0
    t = ddp.timeline(times, layer, sizes, [[3, 2, 1, 0]], lambda b: 0.5 * b)
    assert t["exposed_s"] == pytest.approx(2.0)
    t = ddp.timeline(times, layer, sizes, [[3], [2], [1, 0]], lambda b: 1.5 * b)
    # 1 -> 2.5, 2.5 -> 4, 4 -> 7: exposed 4
    assert t["comm_end_s"] == pytest.approx(7.0) and t["exposed_s"] == pytest.approx(4.0)


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 10**9))
def test_timeline_equals_an_independent_calculation(seed):
    rng = random.Random(seed)
    n_layers = rng.randint(1, 12)
    times = [rng.choice([0.0, rng.random()]) for _ in range(n_layers)]
    layer = sorted(rng.randrange(n_layers) for _ in range(rng.randint(1, 30)))
    sizes = [rng.randint(1, 3 * MIB) for _ in layer]
    alpha = rng.random() * 1e-3
    ar = lambda b: alpha + b / 1e9  # noqa: E731
    buckets = ddp.buckets(sizes, rng.choice([None, 0.5, 2.0]))
    t = ddp.timeline(times, layer, sizes, buckets, ar)
    exposed, comm = independent_exposed(times, layer, sizes, buckets, ar)
    assert t["exposed_s"] == pytest.approx(exposed, abs=1e-12)
    assert t["comm_end_s"] == pytest.approx(comm, abs=1e-12)
    # the row-less version the calculator's sweeps use gives the very same figures
    ready = ddp.readiness(times, layer, sizes, buckets)
    assert ddp.comm_end(ready, ar) == (t["comm_end_s"], t["allreduce_total_s"])


@pytest.mark.parametrize("key", ["gpt2", "bert-base", "resnet50"])
@pytest.mark.parametrize("gpus", [8, 16])
def test_without_latency_one_bucket_per_tensor_is_never_worse(key, gpus):
    m = models.get(key)
    topo = Topology.make(gpus, 8)  # no latency: all-reduce time proportional to bytes
    per_tensor = ddp.run(
        m, ddp.lockstep_time(topo), 4, 3e14, 4, cap_mb=1e-6
    )  # every tensor closes its bucket
    assert len(per_tensor["bucket_indices"]) == len(m.tensors())
    for row in ddp.sweep(m, ddp.lockstep_time(topo), 4, 3e14, 4, points=25):
        assert per_tensor["exposed_s"] <= row["exposed_s"] + 1e-12
    default = ddp.run(m, ddp.lockstep_time(topo), 4, 3e14, 4)
    assert per_tensor["exposed_s"] <= default["exposed_s"] + 1e-12


@pytest.mark.parametrize("key", ["gpt2", "bert-base", "resnet50"])
def test_with_large_latency_tiny_buckets_lose_to_the_default(key):
    m = models.get(key)
    topo = Topology.make(16, 8, intra_latency_us=50.0, inter_latency_us=200.0)
    tiny = ddp.run(m, ddp.lockstep_time(topo), 4, 3e14, 4, cap_mb=0.1)
    default = ddp.run(m, ddp.lockstep_time(topo), 4, 3e14, 4)
    assert tiny["exposed_s"] > default["exposed_s"]


def test_sweep_spans_point_one_mib_to_the_whole_model_and_ends_in_one_bucket():
    r = api.ddp(
        model="gpt2", gpus=8, gpus_per_node=8, bucket_cap_mb=25, sweep=True
    )  # the first bucket at each cap
    caps = [row["bucket_mb"] for row in r["sweep"]]
    assert caps[0] == pytest.approx(0.1)
    assert caps[-1] == pytest.approx(r["gradient_bytes"] / MIB)
    assert caps == sorted(caps)
    assert r["sweep"][-1]["buckets"] == 1
    assert r["best_exposed_s"] == min(row["exposed_s"] for row in r["sweep"])
    json.dumps(r, allow_nan=False)


def test_ddp_exposed_is_backward_remainder():
    r = api.ddp(model="resnet50", gpus=8, gpus_per_node=8)
    assert r["exposed_s"] == pytest.approx(max(0.0, r["comm_end_s"] - r["backward_s"]))
    # backward = 2 x forward FLOPs x batch / (peak x MFU)
    m = models.get("resnet50")
    expected = 2 * m.forward_flops * r["batch"] / (989e12 * 0.4)
    assert r["backward_s"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"model": "gpt3"}, "model"),
        ({"bucket_cap_mb": -0.5}, "bucket_cap_mb"),
        ({"bucket_cap_mb": float("nan")}, "bucket_cap_mb"),
        ({"timing": "exact"}, "timing"),
        ({"gpus": 16, "gpus_per_node": 16}, "gpus_per_node"),
        ({"gpus": 16, "gpus_per_node": 8, "inter_bw": 1000}, "inter_bw"),
        ({"first_bucket_mb": -1}, "first_bucket_mb"),
        ({"mfu": 1.5}, "mfu"),
        ({"batch": 0}, "batch"),
        ({"grad_bytes": 3}, "grad_bytes"),
        ({"gpus": 12, "gpus_per_node": 8}, "gpus"),
    ],
)
def test_bad_ddp_parameters_name_their_field(kwargs, field):
    args = {"model": "gpt2", "gpus": 8, **kwargs}
    with pytest.raises(ParamError) as e:
        api.ddp(**args)
    assert e.value.field == field


@pytest.mark.parametrize("value", [[], "", "1,x", [-1], [1.5], "1,,-2", [True]])
def test_bad_param_bytes(value):
    assert field_of(api.buckets, param_bytes=value) == "param_bytes"


def test_ddp_widget_default_state_and_figures():

    s = B.ddp_buckets()
    json.dumps(s, allow_nan=False)
    for part in [s, s["figures"]["sweep"]]:
        fig = go.Figure(part["figure"])
        assert {t.type for t in fig.data} <= {"scatter", "bar", "pie"}
        assert part["summary"] and part["table"]["rows"]
    assert s["readouts"]["buckets"] == str(len(s["table"]["rows"]))
    # moving the cap moves only a marker: the sweep's axes stay put
    t = B.ddp_buckets({"bucket_cap_mb": 5})
    a, b = s["figures"]["sweep"]["figure"], t["figures"]["sweep"]["figure"]
    assert a["layout"]["xaxis"]["range"] == b["layout"]["xaxis"]["range"]
    assert a["data"][0] == b["data"][0]
    assert b["data"][-1]["x"] == [5]


def test_ddp_widget_new_model_resets_the_batch_to_its_default():

    s = B.ddp_buckets()
    t = B.ddp_buckets({**s["params"], "model": "resnet50"})
    assert t["params"]["batch"] == ddp.DEFAULT_BATCH["resnet50"]
    u = B.ddp_buckets({**t["params"], "batch": 7})
    assert u["params"]["batch"] == 7


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"model": "nope"}, "model"),
        ({"batch": 0}, "batch"),
        ({"gpus": 1}, "gpus"),
        ({"bucket_cap_mb": 0}, "bucket_cap_mb"),
        ({"first_bucket": "2.4"}, "first_bucket"),
        ({"gpu": "MI300X"}, "gpu"),
        ({"mfu": 0}, "mfu"),
        ({"grad_dtype": "fp8"}, "grad_dtype"),
        ({"inter_bw": 1000}, "inter_bw"),
        ({"gpus_per_node": 16}, "gpus_per_node"),
        ({"gpus": 12}, "gpus"),
    ],
)
def test_ddp_widget_bad_parameters(params, field):

    with pytest.raises(ParamError) as e:
        B.ddp_buckets(params)
    assert e.value.field == field


# ---- Zero-size tensors, cap 0, ready order, NCCL timing ---------------------------


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.one_of(st.just(0), st.integers(0, 40 * MIB)), min_size=1, max_size=60),
    st.one_of(st.none(), st.just(0.0), st.floats(0.0, 64)),
    st.one_of(st.none(), st.just(0.0), st.floats(0.0, 64)),
    st.randoms(use_true_random=False),
)
def test_zero_sizes_cap_zero_and_any_ready_order_follow_the_rule(sizes, cap, first, rng):
    order = list(range(len(sizes)))
    rng.shuffle(order)
    # limits written out from torch/nn/parallel/distributed.py independently: int(MiB x 2^20),
    # first = cap if set
    cap_b = int((25 if cap is None else cap) * MIB)
    first_b = int((1 if cap is None else cap) * MIB) if first is None else int(first * MIB)
    got = ddp.buckets(sizes, cap, first, order)
    assert got == pytorch_rule(sizes, [first_b, cap_b], order)
    assert [i for b in got for i in b] == order
    if cap == 0 and first in (None, 0):
        assert got == [[i] for i in order]  # every tensor its own bucket, as PyTorch does


def test_api_accepts_zero_size_parameters_and_cap_zero():
    r = api.buckets(param_bytes=[0, 5, 0, 7], bucket_cap_mb=0)
    assert r["buckets"] == [[3], [2], [1], [0]] and r["bucket_bytes"] == [7, 0, 5, 0]
    assert r["first_bucket_bytes"] == r["bucket_cap_bytes"] == 0
    assert api.buckets(param_bytes=[0, 0, 3])["buckets"] == [[2, 1, 0]]


def test_ready_order_puts_a_norms_weight_before_its_bias():
    m = models.get("gpt2")
    names = [n for n, *_ in m.tensors()]
    ready = [names[i] for i in ddp.ready_order(m)]
    assert sorted(ready) == sorted(names)
    for norm in ("final_norm", "layers.0.norm1", "layers.11.norm2"):
        assert ready.index(f"{norm}.weight") + 1 == ready.index(f"{norm}.bias")
    for linear in ("layers.0.attn.qkv", "layers.5.mlp.fc"):  # reverse model order elsewhere
        assert ready.index(f"{linear}.bias") + 1 == ready.index(f"{linear}.weight")
    bert = models.get("bert-base")
    ready = [bert.tensors()[i][0] for i in ddp.ready_order(bert)]
    assert ready[-5:] == [
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
        "token_type_embeddings.weight",
        "embed_positions.weight",
        "embed_tokens.weight",
    ]
    llama = models.get("llama3-8b")  # RMSNorm: a weight only, nothing to swap
    assert ddp.ready_order(llama) == list(reversed(range(len(llama.tensors()))))
    # bucket bytes are the same as with reverse model order; the run uses the ready order
    sizes = [e * 4 for _, e, _ in m.tensors()]
    a, b = ddp.buckets(sizes), ddp.buckets(sizes, order=ddp.ready_order(m))
    assert [sum(sizes[i] for i in x) for x in a] == [sum(sizes[i] for i in x) for x in b]
    assert api.ddp(model="gpt2", gpus=8, gpus_per_node=8)["buckets"] == b


@pytest.mark.parametrize(("gpus", "gpn", "card"), [(8, 8, 50.0), (16, 8, 50.0), (64, 4, 12.5)])
def test_each_bucket_is_timed_by_nccls_choice(gpus, gpn, card):

    r = api.ddp(model="gpt2", gpus=gpus, gpus_per_node=gpn, inter_bw=card, grad_bytes=2)
    system = nccl.System("H100 SXM", gpus, gpn, gpn, card * 8)
    for row in r["bucket_timeline"]:
        pick = nccl.choose("AllReduce", row["bytes"], system)
        assert row["end_s"] - row["start_s"] == pytest.approx(pick.time_us * 1e-6, rel=1e-12)
        assert (row["algorithm"], row["protocol"]) == (pick.algorithm, pick.protocol)


def test_nccl_timing_refuses_the_lock_step_latencies_it_cannot_apply():
    """NVLink latency 0 changes the lock-step figures; NCCL's timing has its own latencies, so
    it refuses the whiteboard model's, naming each, rather than ignore them (issue 46, item 2)."""
    for name in ("intra_latency", "inter_latency", "intra_bw"):
        with pytest.raises(ParamError) as e:
            api.ddp(model="gpt2", gpus=16, gpus_per_node=8, **{name: 0.5})
        assert e.value.field == name and "lock-step" in e.value.message
    c = api.ddp(model="gpt2", gpus=16, gpus_per_node=8, intra_latency=0.0, timing="lock-step")
    d = api.ddp(model="gpt2", gpus=16, gpus_per_node=8, timing="lock-step")
    assert c["exposed_s"] < d["exposed_s"]


def test_widget_first_bucket_follows_the_cap_or_the_version_and_marker_is_on_the_curve():

    for version, first in (("cap", 5 * MIB), ("1mib", MIB)):
        s = B.ddp_buckets({"gpus": 8, "bucket_cap_mb": 5, "first_bucket": version})
        r = api.ddp(
            model="gpt2", gpus=8, gpus_per_node=8, bucket_cap_mb=5, first_bucket_mb=first / MIB
        )
        assert s["readouts"]["buckets"] == str(len(r["buckets"]))
        assert s["readouts"]["first"] == f"{first // MIB} MiB"
        # the sweep point at the same cap, computed the same way, is where the marker sits
        swept = ddp.sweep(
            models.get("gpt2"),
            ddp.nccl_time(__import__("allreduce_explainer").nccl.System()),
            8,
            989e12 * 0.4,
            4,
            first_mb=first / MIB if version == "1mib" else None,
        )
        marker = s["figures"]["sweep"]["figure"]["data"][-1]
        assert marker["y"] == [pytest.approx(r["exposed_s"] * 1e3)]
        curve = s["figures"]["sweep"]["figure"]["data"][0]
        best = s["figures"]["sweep"]["figure"]["data"][1]  # the best cap, drawn on the curve
        drawn = sorted([(row["bucket_mb"], row["exposed_s"] * 1e3) for row in swept]
                       + [(best["x"][0], best["y"][0])])  # fmt: skip
        assert curve["x"] == [x for x, _ in drawn]
        assert curve["y"] == [pytest.approx(y) for _, y in drawn]


def _assign_one_by_one(sizes, limits):
    """PyTorch's loop: add each tensor, close the bucket once it holds at least the limit."""
    out, current, size, which = [], [], 0, 0
    for i, s in enumerate(sizes):
        current.append(i)
        size += s
        if size >= limits[which]:
            out.append(current)
            current, size = [], 0
            which = min(which + 1, len(limits) - 1)
    return out + [current] if current else out


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from([0, 1, 2, 7, 100, 4096, 10**6]), max_size=60),
    st.lists(st.integers(0, 5000), min_size=1, max_size=3),
)
def test_buckets_by_bisection_equal_adding_one_tensor_at_a_time(sizes, limits):
    assert ddp.assign(sizes, limits) == _assign_one_by_one(sizes, limits)


@pytest.mark.parametrize("key", models.MODELS)
@pytest.mark.parametrize("first_mb", [None, 1.0])
def test_sweep_equals_a_timeline_per_cap(key, first_mb):
    """ddp.sweep's figures are timeline()'s for each cap's buckets."""
    m, system = models.get(key), nccl.System("H100 SXM", 16, 8, 8, 400.0)
    timed, batch, flops, grad = ddp.nccl_time(system), 2, 4e14, 2
    sizes, layer_of, back, order = ddp._inputs(m, batch, flops, grad)
    rows = ddp.sweep(m, timed, batch, flops, grad, points=17, first_mb=first_mb)
    caps = ddp.sweep_caps(sum(sizes), 17)
    assert [r["bucket_mb"] for r in rows] == caps
    for r, cap in zip(rows, caps, strict=True):
        t = ddp.timeline(back, layer_of, sizes, ddp.buckets(sizes, cap, first_mb, order), timed)
        assert r["buckets"] == len(t["buckets"])
        assert r["exposed_s"] == t["exposed_s"]
        assert r["allreduce_total_s"] == t["allreduce_total_s"]


@pytest.mark.parametrize("key", ["gpt2", "llama3-405b"])
def test_run_equals_a_timeline_of_its_buckets_on_every_call(key):
    """run() keeps a model's buckets and their readiness between calls (the network changes
    only their schedule): each call, at either GPU count, after a caller changed the last
    result, unset or explicit cap, equals timeline() of buckets() computed afresh."""
    m, batch, flops, grad = models.get(key), 1, 4e14, 4
    sizes, layer_of, back, order = ddp._inputs(m, batch, flops, grad)
    for gpus, cap, first in [(16, None, None), (64, 25.0, 1.0), (16, 25.0, 1.0), (64, 3.0, None)]:
        timed = ddp.nccl_time(nccl.System("H100 SXM", gpus, 8, 8, 400.0))
        fresh = ddp.buckets(sizes, cap, first, order)
        want = ddp.timeline(back, layer_of, sizes, fresh, timed)
        got = ddp.run(m, timed, batch, flops, grad, cap, first)
        assert got["bucket_indices"] == fresh
        assert got["buckets"] == want["buckets"]
        assert got["layer_done_s"] == want["layer_done_s"]
        for k in ("backward_s", "allreduce_total_s", "comm_end_s", "exposed_s"):
            assert got[k] == want[k]
        assert got["gradient_bytes"] == sum(sizes)
        got["bucket_indices"][0].append(-1)  # a caller's change stays in its own copy
        got["layer_done_s"][0] = -1.0


def test_ddp_labels_each_bucket_with_nccl_s_pick():
    r = api.ddp(model="llama3-8b", gpus=16, gpus_per_node=8)
    system = nccl.System("H100 SXM", 16, 8, 8, 400.0)
    for row in r["bucket_timeline"]:
        pick = nccl.choose("AllReduce", row["bytes"], system)
        assert (row["algorithm"], row["protocol"]) == (pick.algorithm, pick.protocol)


def test_widget_opens_where_both_ends_of_the_trade_off_show():
    """The default layout, 64 servers of 8: tiny buckets expose clearly more than PyTorch's
    default and one bucket clearly more than the best cap, each figure from api.ddp directly."""

    s = B.ddp_buckets()
    assert (s["params"]["gpus"], s["params"]["gpus_per_node"]) == (512, 8)
    r = api.ddp(
        model="gpt2", gpus=512, gpus_per_node=8, sweep=True
    )  # the cap unset: the sweep's first bucket 1 MiB
    tiny, whole = r["sweep"][0]["exposed_s"], r["sweep"][-1]["exposed_s"]
    best = min(x["exposed_s"] for x in r["sweep"])
    assert tiny > 2 * r["exposed_s"] and whole > 1.3 * best
    assert s["readouts"]["default_exposed"] == B.ms(r["exposed_s"])  # three digits: 5.69 ms
    one = api.ddp(model="gpt2", gpus=8, gpus_per_node=8, sweep=True)
    assert one["sweep"][0]["exposed_s"] < 1.1 * one["exposed_s"]  # one server hides tiny buckets


def test_page_7_facts_are_ms_and_nccl_timed():

    f = B.facts()
    times = {k: v for k, v in f.items() if k.endswith(("_backward", "_exposed", "_tiny", "_whole"))}
    assert times and all(v.endswith(" ms") for v in times.values())
    assert not [k for k in f if k.startswith(("ddp_lock_", "ddp_small"))]  # no lock-step times
    r = api.ddp(model="gpt2", gpus=8, gpus_per_node=8)

    def three(seconds: float) -> str:  # three significant digits, no trailing zeros
        return "{:g} ms".format(float(f"{seconds * 1e3:.3g}"))

    assert f["ddp_one_backward"] == three(r["backward_s"])
    assert f["ddp_one_exposed"] == three(r["exposed_s"])


# ---- the best cap: the least exposed time of every cap a reader can enter ---------------------


def _breakpoints(key: str, grad: int = 4) -> list[int]:
    """Every limit in bytes at which some bucketing may change, found apart from the engine's
    walk: one byte above the size of any run of consecutive tensors in ready order (a bucket
    that closed at a size d keeps its tensors for every limit up to d), and 0."""
    m = models.get(key)
    sizes = [e * grad for _, e, _ in m.tensors()]
    total = [0, *accumulate(sizes[i] for i in ddp.ready_order(m))]
    runs = {total[j] - total[i] for i in range(len(total)) for j in range(i + 1, len(total))}
    return [0, *sorted(d + 1 for d in runs)]


BEST_CASES = [("gpt2", 512, 1.0), ("gpt2", 512, None), ("gpt2", 16, 1.0), ("resnet50", 64, None)]


@pytest.mark.parametrize(("key", "gpus", "first"), BEST_CASES)
def test_no_cap_a_reader_can_enter_beats_the_best_cap(key, gpus, first):
    """Every cap the widget's box (0.001 MiB up, any step) or the CLI (0 up) takes gives the
    buckets of one of the breakpoints' limits, so api.ddp called at each, cap by cap, is the
    oracle: none leaves less exposed than the best cap, and the best cap as printed, typed
    back, leaves exactly the best exposed time."""
    r = api.ddp(model=key, gpus=gpus, gpus_per_node=8, first_bucket_mb=first,
                bucket_cap_mb=None if first else 25.0, sweep=True)  # fmt: skip
    least = min(
        api.ddp(
            model=key, gpus=gpus, gpus_per_node=8, bucket_cap_mb=limit / MIB, first_bucket_mb=first
        )["exposed_s"]
        for limit in _breakpoints(key)
    )
    assert r["best_exposed_s"] == pytest.approx(least, rel=1e-12, abs=1e-15)
    assert r["best_exposed_s"] <= min(row["exposed_s"] for row in r["sweep"])
    printed = float(B.cap_text(r["best_bucket_mb"]).removesuffix(" MiB").replace(",", ""))
    typed = api.ddp(
        model=key, gpus=gpus, gpus_per_node=8, bucket_cap_mb=printed, first_bucket_mb=first
    )["exposed_s"]
    assert typed == pytest.approx(least, rel=1e-12, abs=1e-15)


def test_the_best_cap_is_the_shortest_decimal_of_its_buckets():
    """A digit fewer moves the cap out of its buckets: both roundings of the printed cap to one
    significant digit less give another exposed time, or the cap has one digit."""
    r = api.ddp(model="gpt2", gpus=512, gpus_per_node=8, sweep=True)
    text = B.cap_text(r["best_bucket_mb"]).removesuffix(" MiB")
    digits = len(text.replace(".", "").replace(",", "").strip("0"))
    if digits > 1:
        for rounding in (math.floor, math.ceil):
            scale = 10 ** (digits - 2 - math.floor(math.log10(r["best_bucket_mb"])))
            shorter = rounding(r["best_bucket_mb"] * scale) / scale
            other = api.ddp(
                model="gpt2", gpus=512, gpus_per_node=8, bucket_cap_mb=shorter, first_bucket_mb=1
            )
            assert other["exposed_s"] != r["best_exposed_s"], shorter


@pytest.mark.parametrize(("low", "high"), [(0, 5), (1000, 1001), (66155000, 66158000),
                                           (3 << 20, None), (1, 2)])  # fmt: skip
def test_shortest_cap_gives_a_limit_inside_its_span(low, high):
    cap = ddp.shortest_cap(low, high)
    assert low <= int(cap * MIB) and (high is None or int(cap * MIB) < high)


def test_the_page_and_the_cli_name_one_best_cap():
    """Page 7 at its defaults and `ddp --sweep` on the same cluster: one best cap and time."""
    s = B.ddp_buckets()
    out = json.loads(
        subprocess.run(
            [sys.executable, "-m", "allreduce_explainer", "ddp", "--model", "gpt2", "--gpus",
             "512", "--gpus-per-node", "8", "--sweep", "--json"],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    assert s["readouts"]["best"] == B.cap_text(out["best_bucket_mb"])
    assert s["readouts"]["best_exposed"] == B.ms(out["best_exposed_s"])
    assert out["sweep_first_bucket_bytes"] == MIB
    assert B.facts()["ddp_many_best"] == s["readouts"]["best"]
    verdict = B.predict_buckets(None, "above")["message"]
    best, exposed = s["readouts"]["best"], s["readouts"]["best_exposed"]
    assert f"The best cap is {best}, leaving {exposed} exposed" in verdict


def test_the_cli_sweep_honours_the_first_bucket(capsys):
    """`ddp --sweep --first-bucket-mb 1` sweeps with a 1 MiB first bucket, and says so."""
    from allreduce_explainer.cli import main

    line = ["ddp", "--model", "gpt2", "--gpus", "16", "--gpus-per-node", "8", "--sweep",
            "--bucket-cap-mb", "10"]  # fmt: skip
    assert main([*line, "--first-bucket-mb", "1", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main([*line, "--json"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert main([*line, "--first-bucket-mb", "1"]) == 0
    assert "the bucket cap swept, the first bucket 1 MiB" in capsys.readouterr().out
    assert a["sweep_first_bucket_bytes"] == MIB and b["sweep_first_bucket_bytes"] is None
    for row in a["sweep"][:3]:  # small caps: the first bucket 1 MiB, not the cap
        at = api.ddp(
            model="gpt2",
            gpus=16,
            gpus_per_node=8,
            bucket_cap_mb=row["bucket_mb"],
            first_bucket_mb=1,
        )
        assert (row["buckets"], row["exposed_s"]) == (len(at["buckets"]), at["exposed_s"])
    assert a["sweep"] != b["sweep"]
