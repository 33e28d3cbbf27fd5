"""Stage 3's order lab: its state against api.orders and against numpy sums in the stated
orders; the sweep's BF16 and FP32 reductions against numpy; the cost from NCCL's model."""

import ml_dtypes
import numpy as np
import pytest

from allreduce_explainer import api, nccl
from allreduce_explainer.dtypes import BF16
from allreduce_explainer.simulation import orders as engine
from allreduce_explainer.widgets import orders as w
from helpers import field_of


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
    assert field_of(w.orders, {"gpus": 1}) == "gpus"
    assert field_of(w.orders, {"bucket_mb": "3"}) == "bucket_mb"


def test_facts_are_the_widgets_numbers_at_its_default():
    """The page's answers quote the lab as it opens: its GPU count, bucket and picks."""
    f = w.facts()
    s = w.orders()
    assert f["orders_gpus"] == str(s["params"]["gpus"])
    assert f["orders_changed"] == str(s["changed"])
    assert f["orders_agree"] == s["readouts"]["agree"]
    assert f["orders_alone_pick"] == " ".join(
        s["alone"]["nccl"][k] for k in ("algorithm", "protocol")
    )
    assert f"{f['orders_bucket']}: NCCL picks {f['orders_bucket_pick']}" in s["readouts"]["bucket"]
    assert f["orders_cost_bf16"] in s["readouts"]["cost"]
    assert f["orders_cost_fp32"] in s["readouts"]["cost"]
    assert f"on {f['orders_sweep_gpus']} GPUs" in s["figures"]["precision"]["summary"]


def probe_oracle(n: int) -> dict[str, list[float]]:
    """The default's four methods on the probe, in BF16 with ml_dtypes: GPU i holds
    (1e8, 1, -1e8, 1)[(i + j) % 4] in element j; one server, so the ring starts every element
    of this 16-byte message at GPU 1 (one chunk, all_reduce.h:38, 43) and the tree is the chain
    0 <- 1 <- ... <- n - 1 (connect.cc:53-62)."""
    bf = ml_dtypes.bfloat16
    probe = [1e8, 1.0, -1e8, 1.0]
    out = {m: [] for m in w.METHODS}
    for j in range(w.LENGTH):
        col = [bf(probe[(i + j) % 4]) for i in range(n)]
        acc = col[0]
        for x in col[1:]:
            acc = bf(acc + x)
        out["serial"].append(float(acc))
        acc = col[1]
        for k in range(2, n + 1):
            acc = bf(acc + col[k % n])
        out["ring"].append(float(acc))
        acc = col[n - 1]
        for x in reversed(col[:-1]):
            acc = bf(x + acc)
        out["tree"].append(float(acc))
        acc = np.float32(col[0])
        for x in col[1:]:
            acc = np.float32(acc + np.float32(x))
        out["nvls"].append(float(bf(acc)))
    return out


def test_the_default_shows_where_the_methods_differ_element_by_element():
    """Not four tied summaries: each method's result on every element is shown, the methods
    differ on some elements, and the headline counts those elements and spells one out."""
    s = w.orders()
    want = probe_oracle(s["params"]["gpus"])
    for m in w.METHODS:
        assert s["alone"]["methods"][m]["result"] == want[m]
        shown = s["readouts"][f"values_{m}"].split(" (")[0].split(", ")
        assert [float(x) for x in shown] == want[m]
    differ = [j for j in range(w.LENGTH) if len({want[m][j] for m in w.METHODS}) > 1]
    assert differ  # the point of the default
    assert s["readouts"]["differ"].startswith(f"{len(differ)} of {w.LENGTH} elements")
    j = differ[0]
    assert f"element {j}: serial {w.fmt.sig(want['serial'][j], 4)}, " in s["readouts"]["differ"]
    assert w.facts()["orders_differ"] == str(len(differ))


def test_the_readouts_tell_apart_any_two_fp32_results():
    """Two results that differ in one bit must not print alike."""
    s = w.orders({"dtype": "fp32", "kind": "wide", "gpus": 8, "seed": 2})
    shown = {m: s["readouts"][f"values_{m}"].split(" (")[0].split(", ") for m in w.METHODS}
    for m in w.METHODS:
        for n in w.METHODS:
            for j in range(w.LENGTH):
                a = s["alone"]["methods"][m]["result"][j]
                b = s["alone"]["methods"][n]["result"][j]
                assert (np.float32(a) == np.float32(b)) == (shown[m][j] == shown[n][j])


def test_the_agree_readout_names_a_method_whose_gpus_disagree(monkeypatch):
    """The check can fail: if a method left different bits on two GPUs, the headline says no
    and names it."""
    real = api.orders

    def split_ring(**kw):
        r = real(**kw)
        r["methods"]["ring"]["ranks_agree"] = False
        return r

    monkeypatch.setattr(w.api, "orders", split_ring)
    assert w.orders()["readouts"]["agree"] == "no: NCCL ring"
