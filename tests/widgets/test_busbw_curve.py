"""Page 5's bus bandwidth against size: NCCL's model (direct nccl calls), the measured curves
(their log files row by row), and NCCL's model within 12 % of each run at its largest size."""

from __future__ import annotations

import json

import pytest

import helpers
from allreduce_explainer import bridge, nccl
from allreduce_explainer.catalog import measured
from allreduce_explainer.logs import parse as nccltests
from allreduce_explainer.sources import ESTIMATE, FITTED
from allreduce_explainer.widgets import latency

DATA = helpers.DATA / "nccl-tests"
SOURCES = {e["file"]: e for e in json.loads((DATA / "SOURCES.json").read_text())["logs"]}


@pytest.mark.parametrize("curve", measured.CURVES, ids=lambda c: c.key)
def test_measured_curve_is_its_log_files_rows(curve):
    log = nccltests.parse_runs((DATA / curve.file).read_text())
    (run,) = log.runs
    want = [(r.size_bytes, r.out_of_place.busbw_GBps) for r in run.rows if r.size_bytes >= 1024]
    assert list(curve.rows) == want
    src = SOURCES[curve.file]
    assert src["gpus"] == curve.gpus
    assert src["hardware"]["gpus_per_node"] == curve.gpus_per_node
    assert ("RING" in src["algorithm"].upper()) == (curve.algorithm == "Ring")


PARAMS = [
    {},
    {"algorithm": "Ring"},
    {"gpu": "A100 SXM"},
    {"gpu": "H200 SXM", "gpus_per_node": 4},
    {"gpu": "B200", "servers": 4, "nic_gbps": 800},
    {"servers": 2},
    {"servers": 32, "algorithm": "Ring", "nic_gbps": 200},
]


@pytest.mark.parametrize("params", PARAMS)
def test_curve_is_nccls_choice_at_every_size(params):
    s = latency.busbw_curve(params)
    p = s["params"]
    g = p["gpus_per_node"]
    system = nccl.System(p["gpu"], g * p["servers"], g, g, float(p["nic_gbps"]))
    algo = None if p["algorithm"] == "nccl" else "Ring"
    data = {t["name"]: t for t in s["figure"]["data"]}
    model, own = data[f"NCCL's choice, {FITTED.legend}"], data[ESTIMATE.legend]
    assert model["x"] == latency.CURVE_SIZES and len(latency.CURVE_SIZES) >= 30
    for i, n in enumerate(latency.CURVE_SIZES):
        c = nccl.choose("AllReduce", n, system, algorithm=algo)
        assert model["y"][i] == c.busbw_GBps and own["y"][i] == c.nccl_busbw_GBps
        assert model["customdata"][i] == f"{c.algorithm} {c.protocol}"
        if algo:
            assert c.algorithm == "Ring"


def test_measured_dots_only_on_their_own_system():
    def dots(params):
        return [t for t in latency.busbw_curve(params)["figure"]["data"] if t["mode"] == "markers"]

    (nvls,) = dots({})
    assert list(zip(nvls["x"], nvls["y"], strict=True)) == list(measured.CURVES[0].rows)
    assert dots({"algorithm": "Ring"})[0]["y"][-1] == 368.09
    assert dots({"servers": 2})[0]["y"][-1] == 469.21
    assert dots({"servers": 2, "nic_gbps": 200}) == []  # another network: not that run
    assert dots({"gpu": "H200 SXM"}) == [] and dots({"gpus_per_node": 4}) == []
    assert "no published run" in latency.busbw_curve({"gpu": "B200"})["readouts"]["measured"]


@pytest.mark.parametrize("curve", measured.CURVES, ids=lambda c: c.key)
def test_model_is_within_12_percent_of_each_run_at_its_largest_size(curve):
    size, got = curve.rows[-1]
    g = curve.gpus_per_node
    system = nccl.System(curve.gpu, curve.gpus, g, g, curve.nic_Gbps or 400.0)
    algo = None if curve.algorithm == "nccl" else "Ring"
    c = nccl.choose("AllReduce", size, system, algorithm=algo)
    assert c.busbw_GBps == pytest.approx(got, rel=0.12)


def test_yardstick_is_nvlink_on_one_server_and_the_cards_across_servers():
    assert latency.busbw_curve()["readouts"]["yardstick"] == "NVLink line rate, 450 GB/s"
    r = latency.busbw_curve({"servers": 8, "gpus_per_node": 4, "nic_gbps": 200})["readouts"]
    assert r["yardstick"] == "4 cards of 200 Gb/s (25 GB/s each) = 100 GB/s"
    f = latency.facts()
    assert f["curve_h100_ring_measured"] == "368.1 GB/s"  # together's log, 8 GiB, Ring forced
    model = float(f["curve_h100_ring_model"].split()[0])
    assert abs(model / 368.1 - 1) < 0.06  # the performance layer, fitted on whole sweeps


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"gpu": "MI300X"}, "gpu"),
        ({"gpus_per_node": 9}, "gpus_per_node"),
        ({"servers": 0}, "servers"),
        ({"nic_gbps": 0}, "nic_gbps"),
        ({"algorithm": "Tree"}, "algorithm"),
    ],
)
def test_bad_parameters_name_their_field(params, field):
    out = json.loads(bridge.call("busbw_curve", json.dumps(params)))
    assert out["ok"] is False and out["error"]["field"] == field, out


def test_the_prose_miss_of_nccls_own_figures_is_the_largest_over_the_cited_runs():
    """Page 5 says how far NCCL's own (uncalibrated) figures are from the cited runs, at the
    runs' largest sizes: worked out here from each log's last row and NCCL's model directly."""
    misses = []
    for curve in measured.CURVES:
        size, got = curve.rows[-1]
        g = curve.gpus_per_node
        system = nccl.System(curve.gpu, curve.gpus, g, g, curve.nic_Gbps or 400.0)
        algo = None if curve.algorithm == "nccl" else "Ring"
        own = nccl.choose("AllReduce", size, system, algorithm=algo).nccl_busbw_GBps
        misses.append(abs(own / got - 1))
    f = latency.facts()
    assert f["curve_own_miss"] == f"{100 * max(misses):.0f} %" and max(misses) < 0.05
    assert f["curve_smallest_size"] == "1.07 GB"  # the A100 run's last row, 2^30 bytes
