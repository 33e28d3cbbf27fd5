"""The in-network reduction page's widgets against the core they wrap: the stepper and the
bandwidth panel against simulation/innetwork.py's formulas and the cited measurements."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import nccl
from allreduce_explainer.catalog import measured
from allreduce_explainer.simulation import innetwork
from allreduce_explainer.widgets import innetwork as inw
from helpers import examples

# ---- the in-network stepper ----


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(2, 16), st.integers(1, 24), st.sampled_from(["int", "fp32", "bf16"]))
def test_innetwork_stepper_is_the_core_run(n, length, dtype):
    s = inw.innetwork_stepper({"gpus": n, "length": length, "dtype": dtype})
    core = innetwork.run(gpus=n, dtype=dtype, values=s["inputs"])
    assert [f["buffers"] for f in s["frames"]] == [f["buffers"] for f in core["frames"]]
    assert s["frames"][-1]["buffers"] == [core["switch_result"]] * n
    switch_rows = [f["rows"][0] for f in s["frames"]]
    assert all(r["key"] == innetwork.SWITCH for r in switch_rows)
    assert switch_rows[-1]["values"] == core["switch_result"]
    ring = next(r for r in s["check"]["rows"] if r["label"].startswith("ring"))
    assert ring["values"] == core["ring_result"]
    if dtype == "int":
        assert s["check"]["all_match"]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 12, 16])
def test_innetwork_bytes_are_the_formulas(n):
    length = 4 * n
    s = inw.innetwork_stepper({"gpus": n, "length": length, "dtype": "fp32"})
    size = 4 * length
    assert s["readouts"]["nvls_sent"] == f"{size + size // n:g} B"
    assert s["readouts"]["ring_sent"] == f"{2 * (n - 1) * size // n:g} B"
    assert s["readouts"]["steps"] == f"2 (switch) against {2 * (n - 1)} (ring)"


def test_innetwork_default_shows_the_switch_exact_where_the_ring_is_not():
    s = inw.innetwork_stepper()
    assert s["check"]["switch_max_ulp"] == 0 < s["check"]["ring_max_ulp"]
    assert "exactly rounded" in s["check"]["verdict"]


# ---- the bandwidth panel ----


@pytest.mark.parametrize("n", range(2, 9))
def test_innetwork_panel_is_the_core_and_nccls_model(n):
    s = inw.innetwork_bandwidth({"gpus": n, "size_mb": 1024})
    size = 1024 * (1 << 20)
    ideal = innetwork.bandwidth(n, size)
    assert s["ideal"] == ideal
    assert ideal["ring"]["bytes_per_link_each_way"] == pytest.approx(2 * (n - 1) / n * size)
    assert ideal["nvls"]["bytes_per_link_each_way"] == pytest.approx((n + 1) / n * size)
    system = nccl.System("H100 SXM", n, n, n, 400.0)
    for a in ("Ring", "NVLS"):
        c = nccl.choose("AllReduce", size, system, algorithm=a)
        assert s["nccl"][a]["time_us"] == c.time_us


def test_innetwork_chart_carries_the_cited_measurements():
    s = inw.innetwork_bandwidth()
    data = {d["name"]: d for d in s["figures"]["gpus"]["figure"]["data"]}
    nvls = data["NVLS, measured (8 × H100)"]
    assert dict(zip(nvls["x"], nvls["y"])) == measured.MEASURED_H100_BUSBW_GBPS["nvls"]
    ring = data["ring, measured (8 × H100)"]
    assert ring["y"][-1] == 370.0 and nvls["y"][-1] == 480.0
    # and the ring's is the effective NVLink rate NCCL's maintainers give (nccl-tests#212)
    assert ring["y"][-1] == measured.H100_RING_BUSBW


@pytest.mark.parametrize("servers", [2, 3, 4, 16, 100])
def test_innetwork_across_servers_bytes(servers):
    s = inw.innetwork_bandwidth({"servers": servers, "size_mb": 64})
    size = 64 * (1 << 20)
    a = s["across"]
    assert a["ring_bytes_per_card"] == pytest.approx(2 * (servers - 1) / servers * size / 8)
    assert a["sharp_bytes_per_card"] == pytest.approx(size / 8)
    system = nccl.System("H100 SXM", servers * 8, 8, 8, 400.0, in_network_reduction=True)
    assert a["nccl_pick"] == nccl.choose("AllReduce", size, system).algorithm


def test_facts_are_computed():
    f = inw.facts()
    assert f["nvls_busbw"] == "480" and f["nvls_ring_busbw"] == "370"
    assert f["nvls_ring_steps"] == 14
