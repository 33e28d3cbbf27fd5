"""FSDP's and HSDP's overlap threshold T ≳ (m − 1)/m · F/B: one figure for the formula, the
widget, the CLI and page 8, each checked against an oracle written here (the ring's closed form,
NCCL's model called directly, the page's own printed F and B)."""

import json
import subprocess
import sys
from fractions import Fraction

import pytest

from allreduce_explainer import api, fmt, nccl
from allreduce_explainer.catalog import hardware, models
from allreduce_explainer.training import calculator, memory, shardcost
from allreduce_explainer.widgets import innetwork, shards

H100_F = 989e12 * 0.4  # an H100's dense BF16 peak at the default 40 % MFU


@pytest.mark.parametrize("gpus, g", [(8, 8), (64, 8), (512, 8), (32, 4)])
def test_zero3_threshold_with_the_ring_is_the_scaling_books_formula(gpus, g):
    # the lock-step ring without latency moves (n-1)/n·S per GPU at the slowest link's rate
    m = calculator.uniform_stack(7_000_000_000)
    c = calculator.cluster_for(gpus=gpus, gpus_per_node=g)
    o = shardcost.strategies(m, c)["overlap"]["zero3"]
    rate = 450e9 if gpus == g else 50e9
    assert o["bus_GBps"] * 1e9 == pytest.approx(rate, rel=1e-12)
    assert o["critical_tokens_per_gpu"] == pytest.approx((gpus - 1) / gpus * H100_F / rate)


@pytest.mark.parametrize("gpus, g", [(16, 8), (64, 8), (32, 4)])
def test_hsdp_threshold_adds_the_all_reduce_across_servers_to_the_backward(gpus, g):
    m = calculator.uniform_stack(7_000_000_000)
    c = calculator.cluster_for(gpus=gpus, gpus_per_node=g)
    o = shardcost.strategies(m, c)["overlap"]["hsdp"]
    nodes, size = gpus // g, 2.0 * o["block_params"]
    t_ag = (g - 1) / g * size / 450e9  # NVLink's ring, forward's all-gather
    t_ar = 2 * (nodes - 1) / nodes * (size / g) / 50e9  # the shard, one card per server
    t = max(t_ag, (2 * t_ag + t_ar) / 2)  # the backward has twice the compute
    assert o["critical_tokens_per_gpu"] == pytest.approx(H100_F * t / size, rel=1e-12)
    # and the same figure through the printed formula, n -> g
    assert o["critical_tokens_per_gpu"] == pytest.approx(
        (g - 1) / g * H100_F / (o["bus_GBps"] * 1e9)
    )


def test_page_8s_threshold_is_reproduced_from_its_printed_formula():
    f = shards.facts()
    n = f["shard_gpus"]
    flops = float(f["shard_flops_tflops"]) * 1e12
    bus = float(f["shard_bus"]) * 1e9
    by_hand = (n - 1) / n * flops / bus
    assert by_hand == pytest.approx(float(f["shard_tokens"].replace(",", "")), rel=0.01)
    # F is the peak times the MFU the page prints
    peak = float(f["shard_peak_tflops"]) * 1e12
    assert flops == pytest.approx(peak * float(f["shard_mfu_pct"]) / 100, rel=0.005)
    # B is NCCL's busbw for one block's all-gather over the 64 GPUs, asked of NCCL's model here
    p_b = sum(x.params for x in models.get("llama3-8b").layers if x.name.startswith("layers.0."))
    size = 2 * p_b
    assert fmt.nbytes(size) == f["shard_block_bytes"]
    t = nccl.choose("AllGather", size, nccl.System("H100 SXM", 64, 8, 8, 400.0)).time_us * 1e-6
    assert (n - 1) / n * size / t == pytest.approx(bus, rel=0.005)
    # below the ceiling of every card of a server: 8 cards at NCCL's per-card rate
    ceiling = float(f["shard_bus_ceiling"])
    assert ceiling * 1e9 > bus
    assert ceiling == f["shard_channels"] * float(f["shard_channel_GBps"])


def test_widget_cli_and_page_give_one_threshold():
    f = shards.facts()
    readout = shards.shard_memory()["readouts"]["zero3_tokens"]
    assert readout.startswith(f"{f['shard_tokens']} tokens per GPU (B = {f['shard_bus']} GB/s)")
    p = subprocess.run(
        [sys.executable, "-m", "allreduce_explainer", "shard", "--model", "llama3-8b",
         "--gpus", "64", "--json"], capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["comm_model"] == "nccl"
    tokens = {k: o["critical_tokens_per_gpu"] for k, o in out["overlap"].items()}
    assert fmt.sig_up(tokens["zero3"], 3) == f["shard_tokens"]  # thresholds: rounded up
    assert fmt.sig_up(tokens["hsdp"], 3) == f["shard_hsdp_tokens"]
    assert fmt.seconds(out["strategies"]["zero3"]["comm_s"]) == f["shard_zero3_comm"]


def test_the_api_times_by_nccls_model_unless_asked_for_the_ring():
    psi = models.get("llama3-8b").params
    r = api.shard(model="llama3-8b", gpus=64)
    system = nccl.System("H100 SXM", 64, 8, 8, 400.0)
    want = nccl.choose("AllReduce", 2 * psi, system).time_us * 1e-6
    assert r["strategies"]["ddp"]["comm_s"] == pytest.approx(want, rel=1e-12)
    ring = api.shard(model="llama3-8b", gpus=64, comm_model="ring")
    assert ring["comm_model"] == "ring"
    # the flat ring: 2(n-1)/n · 2Ψ at one card's 50 GB/s
    assert ring["strategies"]["ddp"]["comm_s"] == pytest.approx(2 * 63 / 64 * 2 * psi / 50e9)
    with pytest.raises(api.ParamError) as e:
        api.shard(model="llama3-8b", gpus=64, gpu="MI300X")
    assert e.value.field == "gpu"
    assert api.shard(model="llama3-8b", gpus=64, gpu="MI300X", comm_model="ring")["gpu"] == "MI300X"


def test_hsdp_sends_ddps_bytes_across_servers_per_server():
    m = models.get("llama3-8b")
    c = calculator.cluster_for(gpus=64, gpus_per_node=8)
    hsdp = shardcost.strategies(m, c)["strategies"]["hsdp"]["collectives"]
    across = next(x for x in hsdp if x["group"] == "across")
    nodes, grad = 8, memory.BYTES_PER_PARAM["grads"] * m.params
    per_server = 8 * across["bytes_sent_per_gpu"]
    assert per_server == pytest.approx(2 * (nodes - 1) / nodes * grad)
    assert shards.facts()["shard_hsdp_cross"] == fmt.nbytes(per_server)


def test_running_example_under_ddp_is_104_gib_from_the_memory_module():
    f = shards.facts()
    assert f["shard_example_ddp_gb"] == fmt.sig(16 * 7e9 / 1e9, 3)
    assert f["shard_example_ddp_gib"] == fmt.sig(16 * 7e9 / hardware.GIB, 3)
    assert f["shard_example_zero2_gib"] == fmt.sig((2 * 7e9 + 14 * 7e9 / 64) / hardware.GIB, 3)


@pytest.mark.parametrize("servers", [2, 4, 16])
def test_sharp_against_ring_and_tree_is_the_formulas_ratio(servers):
    b = innetwork.innetwork_bandwidth({"servers": servers})
    a = b["across"]
    want_ring = Fraction(servers, 2 * (servers - 1))  # S/g against 2(N-1)/N · S/g
    ratio = Fraction(a["sharp_bytes_per_card"] / a["ring_bytes_per_card"]).limit_denominator(1024)
    assert ratio == want_ring
    tree = Fraction(a["sharp_bytes_per_card"] / a["tree_bytes_per_card_max"]).limit_denominator(
        1024
    )
    # the tree's busiest server sends 2S/g per card from 3 servers on; on 2 each sends S/g once
    assert tree == (Fraction(1, 2) if servers > 2 else 1)


def test_page_9s_sharp_shares_and_pick_text():
    f = innetwork.facts()
    assert f["nvls_sharp_vs_ring"] == "2/3" and f["nvls_servers"] == 4
    assert f["nvls_sharp_vs_tree"] == "1/2"
    pick = innetwork.innetwork_bandwidth()["readouts"]["across_pick"]
    assert pick.startswith(f["nvls_across_pick"]) and "SHARP between" in pick


def test_page_8s_memory_figures_are_the_zero_papers_formulas():
    f = shards.facts()
    psi, n, g = models.get("llama3-8b").params, 64, 8
    want = {"ddp": 16 * psi, "zero3": 16 * psi / n, "hsdp": 16 * psi / g}
    for s, b in want.items():
        assert f[f"shard_{s}_gib"] == fmt.sig(b / hardware.GIB, 3), s
