"""Stage 3's order lab: its state against api.orders and against numpy sums in the stated
orders; the sweep's BF16 and FP32 reductions against numpy; the cost from NCCL's model."""

import ml_dtypes
import numpy as np
import pytest

from allreduce_explainer import api, nccl
from allreduce_explainer.errors import ParamError
from allreduce_explainer.widgets import orders as w


def test_the_default_is_the_probe_and_every_gpu_agrees():
    s = w.orders()
    assert s["params"]["kind"] == "probe"
    assert s["readouts"]["agree"].startswith("yes")
    r = api.orders(gpus=4, dtype="bf16", kind="probe", length=w.LENGTH)
    assert s["alone"]["methods"] == r["methods"]
    assert s["alone"]["exact"] == [2.0] * w.LENGTH


def test_the_table_shows_each_methods_result_per_element():
    s = w.orders({"gpus": 6, "dtype": "fp32", "kind": "wide", "seed": 5})
    rows = s["table"]["rows"]
    assert len(rows) == w.LENGTH
    ring = s["alone"]["methods"]["ring"]["result"]
    assert [float(r[3].split(" ")[0]) for r in rows] == pytest.approx(ring, rel=1e-6)


def test_the_bucket_readout_counts_changed_bits_of_nccls_pick():
    s = w.orders({"gpus": 8, "kind": "random", "bucket_mb": "25"})
    a, b = s["alone"], s["inside"]
    pa = a["methods"][a["nccl"]["method"]]["result"]
    pb = b["methods"][b["nccl"]["method"]]["result"]
    assert s["changed"] == sum(x != y for x, y in zip(pa, pb))
    assert f"{s['changed']} of {w.LENGTH}" in s["readouts"]["bucket"]


def test_the_sweep_against_numpy():
    """BF16 ring: each partial sum rounded to BF16; FP32: in float32, one rounding to BF16."""
    rows = {r["gpus"]: r for r in w.precision_sweep(1)["rows"]}
    from allreduce_explainer.dtypes import BF16
    from allreduce_explainer.simulation import orders as engine

    for n in (4, 64):
        inputs = engine.draw("random", n, w.SWEEP_LENGTH, BF16, 1)
        exact = engine.exact(inputs, BF16)
        per = -(-w.SWEEP_LENGTH // n)
        bf, f32 = [], []
        for j in range(w.SWEEP_LENGTH):
            # alignUp(divUp(L, n), 16 / size): 8 BF16 or 4 FP32 elements (all_reduce.h:38)
            c16, c32 = (-(-per // k) * k for k in (8, 4))
            o16 = [(j // c16 + 1 + k) % n for k in range(n)]
            o32 = [(j // c32 + 1 + k) % n for k in range(n)]
            a = ml_dtypes.bfloat16(inputs[o16[0]][j])
            b = np.float32(inputs[o32[0]][j])
            for r16, r32 in zip(o16[1:], o32[1:]):
                a = ml_dtypes.bfloat16(a + ml_dtypes.bfloat16(inputs[r16][j]))
                b = np.float32(b + np.float32(inputs[r32][j]))
            bf.append(float(a))
            f32.append(float(ml_dtypes.bfloat16(b)))
        for name, got in (("bf16", bf), ("fp32", f32)):
            errs = [engine.ulps(x, t, BF16) for x, t in zip(got, exact)]
            assert rows[n][name]["max"] == max(errs)
            assert rows[n][name]["mean"] == pytest.approx(sum(errs) / len(errs))


def test_fp32_reduction_costs_nccls_time_for_twice_the_bytes():
    c = w.fp32_cost(8, 25 << 20)
    system = nccl.System("H100 SXM", 8, 8, 8)
    assert c["fp32_us"] == nccl.choose("AllReduce", 50 << 20, system).time_us
    assert c["fp32_us"] > c["bf16_us"]


def test_bad_params_name_their_field():
    with pytest.raises(ParamError) as e:
        w.orders({"gpus": 1})
    assert e.value.field == "gpus"
    with pytest.raises(ParamError) as e:
        w.orders({"bucket_mb": "3"})
    assert e.value.field == "bucket_mb"


def test_facts_are_the_widgets_numbers():
    f = w.facts()
    s = w.orders({"gpus": 8, "kind": "random", "bucket_mb": "25"})
    assert f["orders_changed"] == str(s["changed"])
    assert f["orders_alone_pick"].startswith(s["alone"]["nccl"]["algorithm"])
