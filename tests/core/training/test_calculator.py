"""Stage 8's calculator against hand calculations, published parameter counts and the widget's
parameter rules."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api
from allreduce_explainer.catalog import hardware, models
from allreduce_explainer.costs import cost
from allreduce_explainer.errors import ParamError
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.training import calculator
from allreduce_explainer.widgets import cluster as widget
from helpers import examples

# Published totals (Hugging Face hub safetensors counts; Meta's and Mistral's model cards).
PUBLISHED = {
    "gpt2-xl": 1_557_611_200,
    "mistral-7b": 7_241_732_096,
    "llama3-8b": 8_030_261_248,
    "llama3-70b": 70_553_706_496,
    "llama3-405b": 405_853_388_800,
}


@pytest.mark.parametrize("key,total", PUBLISHED.items())
def test_preset_parameter_counts_equal_the_published_totals(key, total):
    assert models.get(key).params == total
    r = calculator.calc(model=key, overlap_too=False)
    assert r["params"] == total and r["gradient_bytes"] == 2 * total
    assert calculator.PUBLISHED[key][0] == total


@pytest.mark.parametrize(
    "name,key",
    [
        ("llama-3-8b", "llama3-8b"),
        ("Llama 3 8B", "llama3-8b"),
        ("llama3-8b", "llama3-8b"),
        ("LLAMA_3_70B", "llama3-70b"),
        ("llama-3-405", "llama3-405b"),
        ("gpt2", "gpt2"),
        ("GPT-2 XL", "gpt2-xl"),
        ("gpt-2-x", "gpt2-xl"),
        ("mistral", "mistral-7b"),
        ("Mistral 7B", "mistral-7b"),
        ("resnet", "resnet50"),
    ],
)
def test_model_names_in_any_spelling_or_prefix(name, key):
    assert calculator.resolve_model(name) == key


@pytest.mark.parametrize("name,word", [("llama3", "ambiguous"), ("gpt-4", "unknown"), ("", "")])
def test_bad_or_ambiguous_model_names_name_the_field(name, word):
    with pytest.raises(ParamError) as e:
        calculator.resolve_model(name)
    assert e.value.field == "model" and word in e.value.message


def test_gpu_names_by_prefix_and_resnet_refused():
    assert hardware.find(hardware.GPUS, "h100", "gpu").name == "H100 SXM"
    assert hardware.find(hardware.GPUS, "mi300", "gpu").name == "MI300X"
    with pytest.raises(ParamError) as e:
        calculator.calc(model="resnet50")
    assert e.value.field == "model" and "6·P·T" in e.value.message


def test_the_single_ring_is_stage_one():
    """7e9 BF16 parameters, 64 H100 in 8 servers, 400 Gb/s, single ring: 0.55 s (stage 1)."""
    r = calculator.calc(algorithm="ring")
    assert r["gradient_bytes"] == 14e9
    assert r["allreduce_s"] == pytest.approx(2 * 63 / 64 * 14e9 / 50e9, rel=1e-12)  # 0.55125
    assert r["algorithm"] == "ring"
    assert r["busbw_GBps"] == pytest.approx(50.0)  # one card's rate
    assert r["algbw_GBps"] == pytest.approx(14e9 / 0.55125 / 1e9)
    assert widget.cluster({"algorithm": "ring"})["readouts"]["allreduce"] == "0.55 s"


def test_lower_bound_by_hand():
    # 64 GPUs, 8 servers: across = 2*7/8 * 14e9 / (8 * 50e9) = 0.06125; per GPU
    # 2*63/64 * 14e9 / 500e9 = 0.0551; the network term wins.
    r = calculator.calc()
    assert r["lower_bound_s"] == pytest.approx(2 * 7 / 8 * 14e9 / 400e9)
    assert "network" in r["lower_bound_limit"]
    # One server of 8: NVLink alone, 2*7/8 * 14e9 / 450e9
    one = calculator.calc(gpus=8)
    assert one["lower_bound_s"] == pytest.approx(2 * 7 / 8 * 14e9 / 450e9)
    # Every algorithm is at or above the bound.
    for t in one["times_s"].values():
        assert t >= one["lower_bound_s"] * (1 - 1e-12)
    for t in r["times_s"].values():
        assert t >= r["lower_bound_s"] * (1 - 1e-12)


def test_compute_and_shares_by_hand():
    # Llama 3 8B, 16 H100 in 2 servers, FP32 gradients, 8,192 tokens at 50 % MFU, multi-ring.
    r = calculator.calc(
        model="llama-3-8b", gpus=16, grad_dtype="fp32", tokens_per_gpu=8192, mfu=0.5,
        algorithm="multi-ring",
    )  # fmt: skip
    p = 8_030_261_248
    s = 4 * p
    compute = 6 * p * 8192 / (989e12 * 0.5)
    # multi-ring across servers: 2(n-1) steps of max((g-1) c / B_nvl, c / B_card), c = S/(g n)
    c = s / (8 * 16)
    t = 2 * 15 * max(7 * c / 450e9, c / 50e9)
    assert r["compute_s"] == pytest.approx(compute)
    assert r["allreduce_s"] == pytest.approx(t)
    assert r["share_no_overlap"] == pytest.approx(t / (compute + t))
    assert r["samples_per_gpu"] == 1.0  # 8,192 tokens = one sequence of 8,192
    assert r["backward_s"] == pytest.approx(2 / 3 * compute)
    assert 0 <= r["exposed_s"] <= t
    assert r["share_with_overlap"] == pytest.approx(r["exposed_s"] / (compute + r["exposed_s"]))
    assert r["share_with_overlap"] <= r["share_no_overlap"]


def test_auto_is_the_fastest_and_mesh_rings_get_one_link():
    r = calculator.calc(model="gpt2-xl", gpus=128, algorithm="auto")
    assert r["allreduce_s"] == min(r["times_s"].values())
    assert r["algorithm"] == min(r["times_s"], key=r["times_s"].get)
    # MI300X: one server of 8, single ring at 64 GB/s per step: 2*7/8 * 14e9 / 64e9
    mi = calculator.calc(gpu="MI300X", gpus=8, algorithm="ring")
    assert mi["allreduce_s"] == pytest.approx(2 * 7 / 8 * 14e9 / 64e9)
    assert mi["intra_GBps_used"] == 64.0
    # multi-ring on the mesh: all seven links, 8 rings of S/64 per step over 448 GB/s
    multi = calculator.calc(gpu="MI300X", gpus=8, algorithm="multi-ring")
    assert multi["allreduce_s"] == pytest.approx(2 * 7 * 8 * (14e9 / 64) / 448e9)


def test_memory_check_by_hand():
    r = calculator.calc(model="gpt2-xl", gpus=8)
    assert r["memory"]["bytes_per_gpu"] == 16 * 1_557_611_200
    assert r["memory"]["fits"]  # 24.9 GB in 80 GiB
    big = calculator.calc(model="llama3-70b", gpus=64)
    assert not big["memory"]["fits"]
    assert big["memory"]["sharded_bytes_per_gpu"] == pytest.approx(16 * 70_553_706_496 / 64)


@settings(max_examples=examples(25), deadline=None)
@given(
    n_log=st.integers(0, 12),
    size=st.floats(1e4, 1e11),
    lat=st.sampled_from([(0.0, 0.0), (3.4, 14.0), (1.0, 30.0)]),
)
def test_tree_shortcut_equals_the_closed_form(n_log, size, lat):
    """The tree's linear-in-chunks shortcut gives cost.py's time, for up to 4,096 GPUs."""
    n = 2**n_log + (3 if n_log > 3 else 0)
    g = 8 if n % 8 == 0 else n
    topo = Topology.make(n, g, 450.0, 50.0, *lat)
    exact = cost.cost("tree", topo, size)["time_s"]
    assert cost.tree_time_fast(topo, size) == pytest.approx(exact, rel=1e-9)


def test_custom_stack_has_exactly_the_parameters_and_the_aspect_rule():
    for p in (1e6, 7e9, 123_456_789_012, 1e13):
        m = calculator.uniform_stack(int(p))
        assert m.params == int(p)
        layers = len(m.layers)
        assert layers == max(1, round((p / (12 * 128**2)) ** (1 / 3)))
    assert len(calculator.uniform_stack(7_000_000_000).layers) == 33


@pytest.mark.parametrize(
    "kw,field,message",
    [
        ({"gpus": 0}, "gpus", "must be between 1 and 4096"),
        ({"gpus": 4097}, "gpus", "must be between 1 and 4096"),
        ({"gpus": 60}, "gpus", "60 GPUs do not fill servers of 8: use a multiple of 8"),
        ({"mfu": 1.5}, "mfu", "must be at most 1"),
        ({"mfu": float("nan")}, "mfu", "must be a finite number"),
        ({"params": 10}, "params", "must be at least 1,000,000"),
        ({"params": float("inf")}, "params", "must be a finite number"),
        ({"grad_dtype": "fp8"}, "grad_dtype", "must be one of bf16, fp32"),
        ({"algorithm": "naive"}, "algorithm", "must be one of nccl, nccl-ring, nccl-tree, ring, "
         "multi-ring, tree, hierarchical, auto"),
        ({"gpu": "V100"}, "gpu", "unknown gpu 'V100'"),
        ({"nic_Gbps": -1}, "nic_Gbps", "must be greater than 0"),
        ({"tokens_per_gpu": 0}, "tokens_per_gpu", "must be greater than 0"),
        ({"intra_latency_us": -1}, "intra_latency_us", "must be 0 or more"),
    ],
)  # fmt: skip
def test_bad_inputs_name_their_field(kw, field, message):
    """The calculator is asked through api.calc, whose spec checks each value; the engine
    trusts them (the page's and the CLI's doors are the spec's)."""
    with pytest.raises(ParamError) as e:
        api.calc(**({"params": 7e9} | kw))
    assert e.value.field == field and e.value.message.startswith(message)


@pytest.mark.parametrize(
    "kw,field",
    [
        ({"gpus": 0}, "gpus"),
        ({"gpus": 60}, "gpus"),  # not a multiple of 8
        ({"gpu": "V100"}, "gpu"),
        ({"nic_Gbps": -1}, "nic_Gbps"),  # the engine names its own keyword
        ({"intra_latency_us": -1}, "intra_latency_us"),
        ({"gpus_per_process": 9}, "gpus_per_process"),
    ],
)
def test_the_cluster_checks_what_a_log_gives_it(kw, field):
    """cluster_for is also built from a log's figures (logs/explain.py), unvalidated: it keeps
    its checks."""
    with pytest.raises(ParamError) as e:
        calculator.cluster_for(**kw)
    assert e.value.field == field


def test_widget_presets_write_their_figures_and_custom_keeps_them():
    s = widget.cluster({"gpu": "b200", "network": "800", "model": "Llama 3 70B"})
    p = s["params"]
    assert (p["gpu"], p["link_gbps"], p["peak_tflops"], p["memory_gb"]) == ("B200", 900, 2250, 180)
    assert (p["network"], p["nic_gbps"]) == ("800 Gb/s", 800)
    assert (p["model"], p["params"]) == ("llama3-70b", 70_553_706_496)
    # A preset wins over stale figures; custom uses them as they are.
    assert widget.cluster({"gpu": "H100 SXM", "link_gbps": 1})["params"]["link_gbps"] == 450
    c = widget.cluster(
        {
            "gpu": "custom",
            "link_gbps": 100,
            "network": "custom",
            "nic_gbps": 80,
            "algorithm": "ring",
        }
    )
    assert c["result"]["intra_GBps_used"] == 100 and c["result"]["nic_GBps"] == 10


def test_widget_state_is_json_and_small_and_unknown_params_are_refused():
    s = widget.cluster()
    text = json.dumps(s, allow_nan=False)
    assert len(text) < 100_000
    axis, shares = s["figure"]["layout"]["yaxis"], [y for t in s["figure"]["data"] for y in t["y"]]
    lo, hi = (10**x for x in axis["range"])  # a log axis in percent that fits the shares
    assert axis["type"] == "log" and lo <= min(shares) and max(shares) <= hi <= 100
    with pytest.raises(ParamError):
        widget.cluster({"bogus": 1})


def test_widget_share_curve_marks_the_current_count():
    s = widget.cluster({"gpus": 128})
    share = s
    xs = share["figure"]["data"][0]["x"]
    assert 128 in xs and xs == sorted(xs) and max(xs) <= calculator.MAX_GPUS
    marker = share["figure"]["data"][-1]
    assert marker["x"] == [128, 128]
    assert math.isclose(marker["y"][0], 100 * s["result"]["share_no_overlap"])
