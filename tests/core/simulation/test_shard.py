"""Sharded data parallel: the stepper against DDP and numpy, and ZeRO's memory and bytes."""

import json
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api
from allreduce_explainer.catalog import models
from allreduce_explainer.costs import cost
from allreduce_explainer.errors import ParamError
from allreduce_explainer.schedules.schedule import split
from allreduce_explainer.simulation import shard
from allreduce_explainer.training import calculator, memory, shardcost
from helpers import examples

BF16 = ml_dtypes.bfloat16


def _ring_sum(grads, j: int, c: int, add):
    """Element j of chunk c as the ring's reduce-scatter adds it: from GPU c + 1 onwards (NCCL's
    runRing, src/device/all_reduce.h:43: chunk c is started by GPU c + 1)."""
    n = len(grads)
    acc = grads[(c + 1) % n][j]
    for k in range(2, n + 1):
        acc = add(acc, grads[(c + k) % n][j])
    return acc


def _chunk_of(n: int, length: int, j: int) -> int:
    return next(c for c, (a, b) in enumerate(split(0, length, n)) if a <= j < b)


@st.composite
def int_case(draw):
    n = draw(st.integers(1, 8))
    length = draw(st.integers(1, 20))
    grads = draw(st.lists(st.lists(st.integers(-1000, 1000), min_size=length, max_size=length),
                          min_size=n, max_size=n))  # fmt: skip
    params = draw(st.lists(st.integers(-1000, 1000), min_size=length, max_size=length))
    lr = draw(st.integers(-50, 50))
    return n, grads, params, lr


@settings(max_examples=examples(60), deadline=None)
@given(int_case(), st.sampled_from(["ring", "tree"]))
def test_int_sgd_equals_ddp_exactly_on_every_gpu(case, reference):
    n, grads, params, lr = case
    r = shard.run(n, dtype="int", grads=grads, params=params, lr=lr, reference=reference)
    expected = (np.array(params, np.int64) - lr * np.array(grads, np.int64).sum(axis=0)).tolist()
    assert r["final_params"] == [expected] * n
    assert r["ddp_params"] == [expected] * n
    assert r["check"]["all_equal"] and r["check"]["identical_on_all_gpus"]


finite32 = st.floats(-1e3, 1e3, allow_nan=False, width=32)


@st.composite
def float_case(draw):
    n = draw(st.integers(2, 8))
    length = draw(st.integers(1, 12))
    grads = draw(st.lists(st.lists(finite32, min_size=length, max_size=length),
                          min_size=n, max_size=n))  # fmt: skip
    params = draw(st.lists(finite32, min_size=length, max_size=length))
    return n, grads, params


@settings(max_examples=examples(60), deadline=None)
@given(float_case(), st.floats(0.0625, 10, width=32))
def test_fp32_sgd_is_numpys_ring_order_bit_for_bit(case, lr):
    n, grads, params = case
    r = shard.run(n, dtype="fp32", grads=grads, params=params, lr=lr)
    f32 = np.float32
    length = len(params)
    for j in range(length):
        g = _ring_sum(grads, j, _chunk_of(n, length, j), lambda a, b: f32(f32(a) + f32(b)))
        want = f32(params[j]) - f32(lr) * f32(g)
        for gpu in range(n):
            assert np.float32(r["final_params"][gpu][j]).tobytes() == np.float32(want).tobytes()
    assert r["check"]["all_equal"]  # same order as DDP's ring all-reduce: bit for bit


def _adam_np(p, g, lr):
    f = np.float32
    b1, b2, eps = f(0.9), f(0.999), f(1e-8)
    m = b1 * f(0) + (f(1) - b1) * f(g)
    v = b2 * f(0) + (f(1) - b2) * (f(g) * f(g))
    m_hat = m / (f(1) - b1)
    v_hat = v / (f(1) - b2)
    return f(p) - (f(lr) * m_hat) / (np.sqrt(v_hat) + eps), m, v


@settings(max_examples=examples(40), deadline=None)
@given(float_case(), st.sampled_from(["fp32", "bf16"]))
def test_adam_per_shard_is_numpys_adam_bit_for_bit(case, dtype):
    n, grads, params = case
    if dtype == "bf16":  # BF16 gradients and weights on the wire; FP32 master and moments
        grads = [[float(BF16(np.float32(x))) for x in row] for row in grads]
        params = [float(BF16(np.float32(x))) for x in params]
        add = lambda a, b: float(BF16(a) + BF16(b))  # noqa: E731
    else:
        add = lambda a, b: float(np.float32(a) + np.float32(b))  # noqa: E731
    lr = 1e-3
    r = shard.run(n, dtype=dtype, optimizer="adam", grads=grads, params=params, lr=lr)
    length = len(params)
    for j in range(length):
        c = _chunk_of(n, length, j)
        g = _ring_sum(grads, j, c, add)
        new, m, v = _adam_np(params[j], g, np.float32(lr))
        if dtype == "bf16":
            new = BF16(new)
        for gpu in range(n):
            assert r["final_params"][gpu][j] == float(new)
        state = r["optimizer_state"][c]  # GPU c finishes chunk c (all_reduce.h:60)
        assert state["m"][j - state["start"]] == float(m)
        assert state["v"][j - state["start"]] == float(v)
    assert r["check"]["all_equal"]


def test_tree_reference_differs_in_order_and_says_so():
    r = shard.run(5, 13, dtype="fp32", reference="tree")
    assert not r["check"]["same_order"]
    assert not r["check"]["all_equal"] and r["check"]["max_ulp_vs_ddp"] > 0
    assert "another order" in r["check"]["verdict"]
    assert r["check"]["identical_on_all_gpus"]  # the sharded result itself agrees everywhere


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 16])
def test_frames_state_and_each_gpu_owns_one_shard(n):
    length = 3 * n
    r = shard.run(n, length, dtype="int")
    frames = r["frames"]
    assert [f["phase"] for f in frames] == (
        ["start"] + ["reduce-scatter"] * (n - 1) + ["update"] + ["all-gather"] * (n - 1)
    )
    assert all(all(row) for row in frames[-1]["complete"])
    assert frames[-1]["buffers"] == r["final_params"] and frames[-1]["shows"] == "params"
    assert frames[n - 1]["buffers"] == r["reduce_scatter_result"]
    states = r["optimizer_state"]
    assert sorted((s["start"], s["stop"]) for s in states) == split(0, length, n)
    for f in frames[1:]:
        for src, dst, a, b, c in f["moves"]:
            assert dst == (src + 1) % n and (a, b) == r["chunks"][c]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 12, 16])
@pytest.mark.parametrize("dtype", ["int", "bf16"])
def test_bytes_of_reduce_scatter_and_all_gather_equal_ddp(n, dtype):
    length = 4 * n
    r = shard.run(n, length, dtype=dtype)
    size = length * (4 if dtype == "int" else 2)
    b = r["bytes_sent_per_gpu"]
    assert b["reduce_scatter"] == [(n - 1) * size // n] * n
    assert b["all_gather"] == [(n - 1) * size // n] * n
    assert b["total"] == b["ddp_allreduce"] == [2 * (n - 1) * size // n] * n


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"optimizer": "adam"}, "optimizer"),
        ({"optimizer": "lamb", "dtype": "fp32"}, "optimizer"),
        ({"lr": 0.5}, "lr"),
        ({"lr": 10**9}, "lr"),
        ({"dtype": "fp32", "lr": -1}, "lr"),
        ({"gpus": 0}, "gpus"),
        ({"reference": "nvls"}, "reference"),
        ({"params": [1, 2]}, "params"),
        ({"params": "1, 2"}, "params"),
        ({"grads": [[1]]}, "grads"),
        ({"dtype": "fp64"}, "dtype"),
    ],
)
def test_bad_parameters_name_the_field(kwargs, field):
    with pytest.raises(ParamError) as e:
        api.shard_step(**kwargs)
    assert e.value.field == field


# ---- bytes and time per strategy (their memory: test_memory.py) ------------------------------


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 64), st.sampled_from([1, 2, 4, 8]), st.integers(10**6, 10**12))
def test_bytes_per_gpu_against_the_formulas(servers, g, psi):
    n = servers * g
    c = calculator.cluster_for(gpus=n, gpus_per_node=g)
    groups = shardcost.Groups.of(c)
    s = 2.0 * psi
    comm = {
        k: shardcost.communication(k, psi, groups, shardcost.ring_time)["comm_bytes_per_gpu"]
        for k in shardcost.STRATEGIES
    }
    assert comm["ddp"] == pytest.approx(2 * (n - 1) / n * s, rel=1e-12, abs=1e-6)
    assert comm["zero1"] == comm["zero2"] == pytest.approx(comm["ddp"], rel=1e-12, abs=1e-6)
    assert comm["zero3"] == pytest.approx(1.5 * comm["ddp"], rel=1e-12, abs=1e-6)
    across = 2 * (servers - 1) / servers * s / g
    assert comm["hsdp"] == pytest.approx(3 * (g - 1) / g * s + across, rel=1e-12, abs=1e-6)
    nic = {
        k: shardcost.communication(k, psi, groups, shardcost.ring_time)["comm_bytes_per_nic_max"]
        for k in shardcost.STRATEGIES
    }
    assert nic["hsdp"] == pytest.approx(across, rel=1e-12, abs=1e-6)  # only the shard crosses
    for k in ("ddp", "zero1", "zero2", "zero3"):  # a flat ring: a boundary GPU's whole share
        assert nic[k] == (comm[k] if servers > 1 and n > 1 else 0.0)


def test_times_come_from_the_ring_and_zero3_takes_one_and_a_half_ddp():
    m = models.get("llama3-8b")
    c = calculator.cluster_for(gpus=64)
    out = shardcost.strategies(m, c)["strategies"]
    ring = cost.cost("ring", c.topology("ring"), 2.0 * m.params)["time_s"]
    assert out["ddp"]["comm_s"] == pytest.approx(ring, rel=1e-12)
    assert out["zero1"]["comm_s"] == pytest.approx(ring, rel=1e-12)
    assert out["zero3"]["comm_s"] == pytest.approx(1.5 * ring, rel=1e-12)
    inside = cost.cost("ring", shardcost.Groups.of(c).server, 2.0 * m.params)["time_s"]
    across = cost.cost("ring", shardcost.Groups.of(c).across, 2.0 * m.params / 8)["time_s"]
    assert out["hsdp"]["comm_s"] == pytest.approx(1.5 * inside + across, rel=1e-12)


def test_a_time_function_plugs_in():
    calls = []

    def fake(collective, nbytes, group):
        calls.append((collective, nbytes, group.gpus))
        return 1.0

    m = models.get("gpt2")
    c = calculator.cluster_for(gpus=16)
    out = shardcost.strategies(m, c, comm_time=fake)["strategies"]
    assert [out[s]["comm_s"] for s in shardcost.STRATEGIES] == [1.0, 2.0, 2.0, 3.0, 4.0]
    assert ("allreduce", 2.0 * m.params / 8, 2) in calls  # HSDP: the shard across 2 servers


def test_fits_compares_with_gib():
    m = models.get("llama3-8b")
    c = calculator.cluster_for(gpus=8, gpu="H100")
    r = shardcost.strategies(m, c)
    assert r["gpu_memory_bytes"] == 80 * 2**30
    for s in r["strategies"].values():
        assert s["fits"] == (s["memory_bytes_per_gpu"]["total"] <= 80 * 2**30)
    # ZeRO-2 on 8 GPUs: 2Ψ + 14Ψ/8 = 30.1e9 bytes fit; DDP's 128.5e9 do not
    assert r["strategies"]["zero2"]["fits"] and not r["strategies"]["ddp"]["fits"]


# The overlap threshold's tests are in tests/core/training/test_shardcost.py.


# ---- CLI ---------------------------------------------------------------------------------------


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "allreduce_explainer", *args], capture_output=True, text=True
    )


def test_shard_cli_json_contract():
    p = cli("shard", "--model", "llama3-70b", "--gpus", "256", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out["strategies"]) == {"ddp", "zero1", "zero2", "zero3", "hsdp"}
    psi = models.get("llama3-70b").params
    for name, s in out["strategies"].items():
        assert set(s["memory_bytes_per_gpu"]) == {"params", "grads", "optimizer", "total"}
        assert s["memory_bytes_per_gpu"] == memory.per_gpu(name, psi, 256, 8)
        assert {"comm_bytes_per_gpu", "comm_s", "fits"} <= set(s)
        assert isinstance(s["fits"], bool)
    ddp, zero3 = out["strategies"]["ddp"], out["strategies"]["zero3"]
    assert zero3["comm_bytes_per_gpu"] == pytest.approx(1.5 * ddp["comm_bytes_per_gpu"])
    assert out["gpus_per_node"] == 8 and out["servers"] == 32


def test_shard_cli_flags_and_table():
    p = cli("shard", "--model", "gpt2", "--gpus", "16", "--gpus-per-node", "4", "--gpu", "a100",
            "--nic-gbps", "200", "--json")  # fmt: skip
    out = json.loads(p.stdout)
    assert (out["gpu"], out["gpus_per_node"], out["nic_GBps"]) == ("A100 SXM", 4, 25.0)
    p = cli("shard", "--model", "gpt2", "--gpus", "8")
    assert p.returncode == 0 and "ZeRO-3 / FSDP" in p.stdout
