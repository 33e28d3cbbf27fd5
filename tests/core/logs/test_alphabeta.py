"""The alpha-beta fit, the nccl-tests log reader for stage 8 (fixtures in tests/data, written
for these tests from an alpha-beta model, in every format all_reduce_perf prints), and the
widget's handling of a pasted log."""

from __future__ import annotations

import random

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers
from allreduce_explainer.errors import ParamError
from allreduce_explainer.logs import alphabeta as fit
from allreduce_explainer.logs import explain
from allreduce_explainer.logs import parse as nccltests
from allreduce_explainer.widgets import cluster as widget
from helpers import examples, field_of

DATA = helpers.DATA


def sizes(lo=8, hi=1 << 30):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= 2
    return out


@settings(max_examples=examples(60), deadline=None)
@given(
    lat=st.floats(1.0, 500.0),
    algbw=st.floats(1.0, 2000.0),
    noise=st.sampled_from([0.0, 0.01, 0.03]),
    seed=st.integers(0, 2**32 - 1),
)
def test_fit_recovers_latency_and_bandwidth_from_noisy_points(lat, algbw, noise, seed):
    rng = random.Random(seed)
    s = sizes()
    t = [(lat + x / (algbw * 1e3)) * (1 + rng.gauss(0, noise)) for x in s]
    f = fit.fit(s, t)
    assert f is not None and f["points"] == len(s)
    tol = 1e-9 + 4 * noise
    assert f["algbw_GBps"] == pytest.approx(algbw, rel=tol)
    assert f["latency_us"] == pytest.approx(lat, rel=tol + 1e-9)
    assert f["rms_rel_error"] <= 2 * noise + 1e-9


def test_fit_equals_numpy_weighted_least_squares():
    rng = np.random.default_rng(3)
    s = np.array(sizes(1 << 10, 1 << 28), dtype=float)
    t = (25 + s / 150e3) * (1 + 0.05 * rng.standard_normal(len(s)))
    a = np.stack([np.ones_like(s), s], axis=1) / t[:, None]
    (alpha, x), *_ = np.linalg.lstsq(a, np.ones_like(s), rcond=None)  # minimise |(a+xs-t)/t|
    f = fit.fit(list(s), list(t))
    assert f["latency_us"] == pytest.approx(alpha, rel=1e-9)
    assert f["algbw_GBps"] == pytest.approx(1 / x / 1e3, rel=1e-9)


def test_fit_edge_cases():
    assert fit.fit([8], [10.0]) is None  # one size
    assert fit.fit([8, 8], [10.0, 11.0]) is None
    assert fit.fit([8, 16, 32], [30.0, 20.0, 10.0]) is None  # no bandwidth to fit
    f = fit.fit([1e6, 2e6, 4e6], [10.0, 20.0, 40.0])  # pure bandwidth
    assert f["latency_us"] == pytest.approx(0, abs=1e-9) and f["algbw_GBps"] == pytest.approx(100.0)
    f = fit.fit([1e6, 2e6, 4e6], [9.0, 20.0, 41.0])  # a negative intercept is pinned at 0
    assert f["latency_us"] == 0 and f["algbw_GBps"] == pytest.approx(100.0, rel=0.05)
    assert fit.fit([0, 8, 16], [0.0, 0.0, 0.0]) is None


# ---- The fixtures, every format ----------------------------------------------------------------


def read(name, gpus=None):
    return explain.read_log((DATA / name).read_text(), gpus)


def test_current_format_with_root_and_wrong():
    r = read("allreduce_current.txt")
    assert r["gpus"] == 8 and len(r["rows"]) == 28 and len(r["runs"]) == 1
    assert r["fit"]["latency_us"] == pytest.approx(30.0, rel=1e-3)
    assert r["fit"]["algbw_GBps"] == pytest.approx(200.0, rel=1e-3)
    assert r["fit"]["busbw_GBps"] == pytest.approx(200.0 * 2 * 7 / 8, rel=1e-3)
    row = r["rows"][-1]
    assert row["size_bytes"] == 1 << 30 and row["in_place"]["time_us"] > 0
    assert {s["kind"] for s in r["skipped"]} == {"header", "summary"}
    assert r["runs"][0]["avg_busbw_GBps"] == pytest.approx(123.4567)


def test_old_format_without_root_and_with_error():
    r = read("allreduce_old.txt")
    assert r["gpus"] == 4 and len(r["rows"]) == 26
    assert r["fit"]["algbw_GBps"] == pytest.approx(100.0, rel=1e-3)
    assert r["fit"]["latency_us"] == pytest.approx(12.0, rel=1e-2)


def test_mpirun_prefixes_na_two_servers_and_every_bad_line_listed():
    r = read("allreduce_mpirun.txt")
    assert r["gpus"] == 16 and r["runs"][0]["servers_in_file"] == 2
    assert len(r["rows"]) == 21
    assert r["fit"]["algbw_GBps"] == pytest.approx(45.0, rel=0.05)
    assert r["fit"]["latency_us"] == pytest.approx(60.0, rel=0.1)
    bad = [s for s in r["skipped"] if s["kind"] not in ("header", "summary")]
    assert [(s["line"], s["kind"]) for s in bad] == [(41, "unreadable"), (43, "duplicate")]
    assert "6 columns" in bad[0]["reason"] and "rank 1" in bad[1]["reason"]


def test_several_runs_first_described_all_listed():
    r = read("allreduce_two_runs.txt")
    assert len(r["runs"]) == 2
    assert r["rows"] == r["runs"][0]["rows"] and r["fit"] == r["runs"][0]["fit"]
    assert r["runs"][0]["fit"]["algbw_GBps"] == pytest.approx(200.0, rel=1e-3)
    assert r["runs"][1]["fit"]["algbw_GBps"] == pytest.approx(300.0, rel=1e-3)
    assert r["runs"][1]["rows"][0]["size_bytes"] == 1 << 20
    assert any("not a data row" in s["reason"] for s in r["skipped"])


def test_rows_only_need_the_gpu_count():
    assert field_of(read, "allreduce_rows_only.txt") == "gpus"
    r = read("allreduce_rows_only.txt", gpus=32)
    assert r["gpus"] == 32
    assert r["fit"]["busbw_GBps"] == pytest.approx(40.0 * 2 * 31 / 32, rel=1e-2)


def test_a_new_run_starts_where_sizes_stop_growing():
    text = (DATA / "allreduce_rows_only.txt").read_text()
    log = nccltests.parse_runs(text + text)
    assert len(log.runs) == 2 and len(log.runs[0].rows) == len(log.runs[1].rows)


def test_size_limit_and_line_limits():
    with pytest.raises(ParamError) as e:
        explain.read_log("x" * 5_000_001)
    assert e.value.field == "log" and "1 MB" in e.value.message
    log = nccltests.parse_runs("\n" * 4_000_000)
    assert log.blank >= nccltests.MAX_LINES - 1
    assert log.skipped[-1][1] == "unread"  # the rest is reported, not dropped
    log = nccltests.parse_runs("not a row\n" * 400_000)
    assert log.skipped[-1][1] == "unread" and "not read" in log.skipped[-1][2]


# ---- The widget with a log -----------------------------------------------------------------------

# the page fits NCCL's model on the calculator's GPU and card (its defaults: H100, 400 Gb/s)
_NET = explain.Network(gpu="H100 SXM", nic_Gbps=400.0)


def test_widget_reads_a_log_fits_it_and_offers_the_fit():
    s = widget.cluster({"log": (DATA / "allreduce_current.txt").read_text()})
    assert "8 GPUs (from the rank lines)" in s["readouts"]["log_status"]
    assert "latency 30 µs" in s["readouts"]["log_fit"]
    names = [t["name"] for t in s["figures"]["time"]["figure"]["data"]]
    assert names[:2] == ["measured (out-of-place)", "measured (in-place)"]
    assert {"NCCL's regimes, fitted to the run", "alpha-beta fit"} <= set(names)
    # NCCL's fit, applied to the model it was fitted with (one server: the GPU alone)
    apply = s["fit_apply"]
    # the model the fit was made with: 2.30.7 for a log that prints no NCCL version
    assert apply == {
        "algorithm": "nccl",
        "gpu": "H100 SXM",
        "nccl_version": "2.30.7",
        "gpus_per_process": 1,  # the header's nGpus 1
    }
    after = widget.cluster({**s["params"], **apply})
    assert after["params"]["algorithm"] == "nccl" and after["result"]["nccl_algorithm"]


def test_widget_fit_across_servers_sets_the_card():
    s = widget.cluster({"log": (DATA / "allreduce_mpirun.txt").read_text()})
    apply = s["fit_apply"]
    nf = explain.read_log((DATA / "allreduce_mpirun.txt").read_text(), net=_NET)["nccl_fit"]
    assert apply["network"] == "custom" and apply["algorithm"] == "nccl"
    assert apply["nic_gbps"] == nf["calculator_settings"]["nic_gbps"]
    assert "line 41" in s["readouts"]["log_skipped"] and "line 43" in s["readouts"]["log_skipped"]


def test_widget_asks_for_the_gpu_count_and_chooses_runs():
    rows = (DATA / "allreduce_rows_only.txt").read_text()
    ask = widget.cluster({"log": rows})  # kept, and the count asked for
    assert "enter the count" in ask["readouts"]["log_status"] and "fit_apply" not in ask
    assert "busbw" not in ask["readouts"]["log_fit"] and "latency 80" in ask["readouts"]["log_fit"]
    s = widget.cluster({"log": rows, "log_gpus": 32})
    assert "(as entered)" in s["readouts"]["log_status"]
    two = (DATA / "allreduce_two_runs.txt").read_text()
    s = widget.cluster({"log": two, "run": 2})
    assert s["readouts"]["log_status"].startswith("Run 2 of 2")
    assert field_of(widget.cluster, {"log": two, "run": 3}) == "run"


def test_widget_refuses_big_logs_and_survives_rubbish():
    with pytest.raises(ParamError) as e:
        widget.cluster({"log": "a" * 5_000_001})
    assert e.value.field == "log" and "1 MB" in e.value.message
    s = widget.cluster({"log": "hello\n\x00\x01 world\n" * 1000})
    assert "No all_reduce_perf rows" in s["readouts"]["log_status"]
    assert "more lines that could not be read" in s["readouts"]["log_skipped"]
    assert "fit_apply" not in s
    with pytest.raises(ParamError):
        widget.cluster({"log": 12})


def test_an_opened_file_is_read_unless_text_is_pasted():
    current = (DATA / "allreduce_current.txt").read_text()
    old = (DATA / "allreduce_old.txt").read_text()
    s = widget.cluster({"log_file": current})
    assert "in the opened file" in s["readouts"]["log_status"]
    s = widget.cluster({"log_file": current, "log": old})
    assert (
        "in the pasted text" in s["readouts"]["log_status"]
        and "4 GPUs" in s["readouts"]["log_status"]
    )
    assert field_of(widget.cluster, {"log_file": "\n" * 5_000_001}) == "log_file"


def test_log_figures_are_valid_plotly_with_basic_traces():

    s = widget.cluster({"log": (DATA / "allreduce_mpirun.txt").read_text()})
    for name in ("time", "busbw"):
        fig = go.Figure(s["figures"][name]["figure"])
        assert {t.type for t in fig.data} <= {"scatter"} and len(fig.data) >= 3


@pytest.mark.parametrize(
    ("n", "hosts", "per_node", "layout"),
    [
        (16, 2, 8, (2, 8)),  # the host lines decide
        (24, 3, 4, (3, 8)),  # ... over the calculator's server size
        (16, 0, 8, (2, 8)),  # no host lines: servers of the calculator's size
        (8, 0, 8, (1, 8)),
        (12, 0, 8, (1, 12)),  # 12 GPUs do not fill servers of 8: one server
        (12, 5, 8, (1, 12)),  # 5 hosts do not divide 12: as without host lines
    ],
)
def test_layout_of_a_run(n, hosts, per_node, layout):
    assert explain.layout(n, hosts, per_node) == layout


def test_the_cli_reports_the_settings_the_page_applies():
    """read_log gives every run its servers and the calculator settings of its fit, by the
    page's rule: one server sets the GPU link rate, several servers the card's rate."""
    one = explain.read_log((DATA / "allreduce_current.txt").read_text())["runs"][0]
    assert (one["servers"], one["gpus_per_node"]) == (1, 8)
    assert one["calculator_settings"] == {"link_gbps": 350.0, "intra_latency_us": 2.143}
    for name in ("allreduce_current.txt", "allreduce_mpirun.txt", "allreduce_old.txt"):
        text = (DATA / name).read_text()
        want = explain.read_log(text, net=_NET)["runs"][0]["nccl_fit"]["calculator_settings"]
        page = widget.cluster({"log": text})["fit_apply"]  # the page applies NCCL's fit
        assert page["gpu"] == want["gpu"] and page.get("nic_gbps") == want.get("nic_gbps"), name
    two = explain.read_log((DATA / "allreduce_mpirun.txt").read_text())["runs"][0]
    assert (two["servers"], two["gpus_per_node"]) == (2, 8)
    assert set(two["calculator_settings"]) == {"nic_gbps", "inter_latency_us"}
