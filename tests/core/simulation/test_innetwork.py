"""In-network reduction: the switch's sum against numpy, the ring beside it, bytes and busbw."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import gradients

from allreduce_explainer import api
from allreduce_explainer.dtypes import BF16
from allreduce_explainer.errors import ParamError
from allreduce_explainer.simulation import innetwork
from allreduce_explainer.simulation.innetwork import SWITCH
from helpers import examples


@settings(max_examples=examples(60), deadline=None)
@given(gradients(st.integers(-(10**6), 10**6)))
def test_int_switch_and_ring_both_give_the_exact_sum(values):
    r = innetwork.run(len(values), dtype="int", values=values)
    exact = np.array(values, np.int64).sum(axis=0).tolist()
    assert r["switch_result"] == r["ring_result"] == exact
    assert r["frames"][-1]["buffers"] == [exact] * len(values)


bf16_values = st.floats(-100, 100, width=16).map(lambda x: BF16.round(x))


@settings(max_examples=examples(80), deadline=None)
@given(gradients(bf16_values))
def test_bf16_switch_accumulates_in_fp32_and_rounds_once(values):
    r = innetwork.run(len(values), dtype="bf16", values=values)
    columns = np.array(values, np.float32)
    for j, got in enumerate(r["switch_result"]):
        acc = np.float32(0)
        for x in columns[:, j]:  # multimem.ld_reduce ... .acc::f32: FP32 partial sums
            acc = np.float32(acc + x)
        assert got == float(acc.astype(ml_dtypes.bfloat16))
        if r["switch"]["fp32_exact"][j]:  # no partial sum rounded: one rounding of the exact sum
            exact = sum(map(Fraction, values_column(values, j)), Fraction(0))
            assert got == BF16.round_exact(exact) == r["target"][j]
            assert r["switch"]["ulps"][j] == 0


def values_column(values, j):
    return [row[j] for row in values]


@settings(max_examples=examples(40), deadline=None)
@given(gradients(bf16_values))
def test_bf16_ring_rounds_at_every_hop(values):
    r = innetwork.run(len(values), dtype="bf16", values=values)
    n = len(values)
    chunks = r["chunks"]
    for j, got in enumerate(r["ring_result"]):
        c = next(k for k, (a, b) in enumerate(chunks) if a <= j < b)
        # NCCL's runRing: chunk c is started by GPU c + 1 (src/device/all_reduce.h:43)
        acc = ml_dtypes.bfloat16(values[(c + 1) % n][j])
        for k in range(2, n + 1):
            acc = acc + ml_dtypes.bfloat16(values[(c + k) % n][j])
        assert got == float(acc)


def test_the_default_run_shows_the_switch_exact_where_the_ring_is_not():
    r = api.innetwork()  # 8 GPUs, 16 BF16 elements, seed 1
    assert r["accumulate"] == "fp32"
    assert r["switch"]["all_match"] and r["switch"]["max_ulp"] == 0
    assert r["ring"]["max_ulp"] > 0


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16, 32, 64])
@pytest.mark.parametrize("dtype, size", [("int", 4), ("bf16", 2)])
def test_bytes_each_gpu_sends_and_receives(n, dtype, size):
    length = 2 * n
    r = innetwork.run(n, length, dtype)
    s = length * size
    assert r["bytes"]["ring"]["sent_per_gpu"] == 2 * (n - 1) * s // n
    assert r["bytes"]["ring"]["steps"] == 2 * (n - 1)
    nvls = r["bytes"]["nvls"]
    assert nvls["sent_per_gpu"] == nvls["received_per_gpu"] == s + s / n
    # the frames' moves carry the same bytes: count them per GPU, each way
    sent, received = [0] * n, [0] * n
    for f in r["frames"]:
        for src, dst, a, b, _ in f["moves"]:
            if src != SWITCH:
                sent[src] += (b - a) * size
            if dst != SWITCH:
                received[dst] += (b - a) * size
    assert sent == received == [s + s // n] * n


@pytest.mark.parametrize("n", [2, 4, 8, 16, 64])
def test_busbw_above_the_line_rate_only_for_nvls(n):
    b = innetwork.bandwidth(n, 1e9, 450)
    assert b["ring"]["busbw_GBps"] == pytest.approx(450)
    assert b["nvls"]["busbw_GBps"] == pytest.approx(2 * (n - 1) / (n + 1) * 450)
    assert b["ring"]["wire_GBps"] == pytest.approx(450)
    assert b["nvls"]["wire_GBps"] == pytest.approx(450)
    assert b["busbw_gain"] == pytest.approx(2 * (n - 1) / (n + 1))
    assert (b["busbw_gain"] > 1) == (n > 3)  # two GPUs: the ring moves less (S against 3S/2)
    assert b["ring"]["time_s"] == pytest.approx(b["lower_bound_s"])
    assert b["nvls_beats_bound"] == (n > 3)


def test_sharp_halves_the_cards_bytes_as_servers_grow():
    a = innetwork.across_servers(64, 8, 8e9)
    assert a["sharp_bytes_per_card"] == 1e9
    assert a["ring_bytes_per_card"] == pytest.approx(2 * 63 / 64 * 1e9)
    assert a["tree_bytes_per_card_max"] == 2e9


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: innetwork.run(1), "gpus"),
        (lambda: innetwork.run(4, dtype="fp8"), "dtype"),
        (lambda: innetwork.run(4, values=[[1]]), "values"),
        (lambda: innetwork.bandwidth(8, 0), "bytes"),
        (lambda: innetwork.across_servers(1, 8, 1e9), "servers"),
    ],
)
def test_bad_input_names_the_field(call, field):
    with pytest.raises(ParamError) as e:
        call()
    assert e.value.field == field


def test_published_h100_runs_imply_a_steady_nvls_wire_rate():
    rows = {r["gpus"]: r for r in innetwork.measured_h100()}
    assert rows[8]["nvls_busbw_GBps"] == 480 and rows[8]["ring_busbw_GBps"] == 370
    assert rows[8]["nvls_algbw_GBps"] == pytest.approx(480 * 8 / 14)
    for n in range(5, 9):  # about 308 GB/s of the 450: NVIDIA/nccl issue 2140's 68.7 %
        assert rows[n]["nvls_wire_GBps"] == pytest.approx(308, abs=8)
        assert rows[n]["ideal_nvls_busbw_GBps"] > rows[n]["nvls_busbw_GBps"]
    assert rows[2]["exceeds_link"] and not rows[8]["exceeds_link"]
