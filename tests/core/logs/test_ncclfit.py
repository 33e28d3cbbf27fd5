"""NCCL's model fitted to all_reduce_perf logs (logs/ncclfit.py): the published logs of
tests/data/nccl-tests/, logs synthesised from the model itself, the calculator settings a fit
gives (applied to the model they were fitted with), and the `nccl-tests` CLI's keys and flags."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import servers

import helpers
from allreduce_explainer import api
from allreduce_explainer.logs import alphabeta as fit
from allreduce_explainer.logs import ncclfit as logfit
from allreduce_explainer.nccl import System, choose
from allreduce_explainer.nccl.model import performance_call
from allreduce_explainer.nccl.tuning import tables, terms
from allreduce_explainer.performance import layer
from allreduce_explainer.performance.fitted import PARAMETERS
from allreduce_explainer.training import calculator
from helpers import examples

DATA = helpers.DATA / "nccl-tests"
SOURCES = json.loads((DATA / "SOURCES.json").read_text())["logs"]


def _read(source: dict, **net) -> dict:
    per = source["hardware"]["gpus_per_node"]
    return api.nccl_tests(log=(DATA / source["file"]).read_text(), gpus=source["gpus"], **net) | {
        "_per": per
    }


def _clean(source: dict) -> bool:
    """An all-reduce run with at least three rows from 64 KiB (the rest are format samples)."""
    if source["collective"] != "all_reduce":
        return False
    out = api.nccl_tests(log=(DATA / source["file"]).read_text(), gpus=source["gpus"])
    return sum(r["size_bytes"] >= logfit.MIN_BYTES for r in out["rows"]) >= 3


CLEAN = [s for s in SOURCES if _clean(s)]
CLEAN_IDS = [s["file"] for s in CLEAN]
BY_FILE = {s["file"]: s for s in SOURCES}


def test_the_clean_logs_are_the_full_all_reduce_runs():
    left_out = {s["file"] for s in SOURCES} - set(CLEAN_IDS)
    assert left_out == {
        "nccl-1244-16xh20-2nodes-nvlstree-error-column.txt",  # rows 4 B to 512 B
        "dgx-spark-103-2xgb10-newest-header.txt",  # one row from 64 KiB
        "nccl-tests-44-2x2080ti-allreduce-old.txt",  # one row (8 B)
        "nccl-tests-44-2x2080ti-all-gather-oldest.txt",  # all_gather_perf
    }
    assert len(CLEAN) == 35  # the last six: held-out sweeps (SWEEPS.json 'holdout')


def _alpha_beta_rms(rows: list[dict]) -> float:
    """The alpha-beta line refitted on the same rows as the NCCL fit (from 64 KiB)."""
    big = [r for r in rows if r["size_bytes"] >= logfit.MIN_BYTES]
    f = fit.fit([r["size_bytes"] for r in big], [r["time_us"] for r in big])
    return f["rms_rel_error"]


@pytest.mark.parametrize("source", CLEAN, ids=CLEAN_IDS)
def test_nccl_fit_follows_each_clean_log_within_10_percent(source):
    out = api.nccl_tests(log=(DATA / source["file"]).read_text(), gpus=source["gpus"])
    nf = out["nccl_fit"]
    assert nf["min_bytes"] == 65536
    used = [r for r in nf["rows"] if r["in_rms"]]
    assert all(r["bytes"] >= 65536 for r in used)
    assert len(used) == nf["points"] == sum(r["size_bytes"] >= 65536 for r in out["rows"])
    rms = math.sqrt(sum(r["rel_error"] ** 2 for r in used) / len(used))
    assert nf["rms_rel_error"] == pytest.approx(rms)
    assert nf["rms_rel_error"] < 0.10
    for r in nf["rows"]:
        assert r["regime"] == f"{r['algorithm']}/{r['protocol']}"
        assert r["fitted_busbw_GBps"] > 0


def test_the_alpha_beta_fit_is_worse_on_most_logs_and_on_every_full_sweep():
    worse, full = 0, 0
    for s in CLEAN:
        out = api.nccl_tests(log=(DATA / s["file"]).read_text(), gpus=s["gpus"])
        ab, nf = _alpha_beta_rms(out["rows"]), out["nccl_fit"]["rms_rel_error"]
        worse += ab > nf + 1e-3
        used = [r["bytes"] for r in out["nccl_fit"]["rows"] if r["in_rms"]]
        if min(used) <= 8 << 20:  # a sweep through the protocol switches, not only plateau
            full += 1
            assert ab > nf, s["file"]
    assert worse > len(CLEAN) / 2 and full >= 9


@pytest.mark.parametrize(
    ("file", "algorithm"),
    [
        ("nccl-tests-290-8xh100-1node-nvls.txt", "NVLS"),  # maintainer: NVLink SHARP
        ("xxrjun-cluster01-8xh100-1node-double.txt", "NVLS"),  # 475 GB/s on 8 x H100
        ("together-8xh100-1node-ring.txt", "Ring"),  # NCCL_ALGO=RING
        ("nccl-tests-252-2nodes-ring.txt", "Ring"),  # NCCL_ALGO=RING
        ("nccl-tests-309-16xh100-2nodes-ib-ndr.txt", "NVLSTree"),  # maintainer: NVLSTree
    ],
)
def test_the_largest_rows_regime_is_the_one_the_source_states(file, algorithm):
    """Not asked of nccl-tests#290's forced ring on 2 x 8 H100: at 90 GB/s, a quarter of what
    the model gives any regime there, every regime needs a scale far from 1 and none is told."""
    s = BY_FILE[file]
    out = api.nccl_tests(
        log=(DATA / file).read_text(), gpus=s["gpus"], gpus_per_node=min(8, s["gpus"])
    )
    if file == "nccl-tests-252-2nodes-ring.txt":  # no device lines: 2 servers of 4, per SOURCES
        out = api.nccl_tests(log=(DATA / file).read_text(), gpus=8, gpus_per_node=4)
    last = out["nccl_fit"]["rows"][-1]
    assert last["algorithm"] == algorithm and last["protocol"] in ("Simple", "LL128")


def test_busbw_above_the_named_line_rate_is_flagged():
    s = BY_FILE["nccl-tests-309-16xh100-2nodes-ib-ndr.txt"]  # 8 x 400 Gb/s cards per server
    text = (DATA / s["file"]).read_text()
    nf = api.nccl_tests(log=text, gpus=16, nic_Gbps=400, nics_per_node=8)["nccl_fit"]
    assert nf["line_rate"]["GBps"] == 8 * 400 / 8
    above = [r["bytes"] for r in nf["rows"] if r["measured_busbw_GBps"] > 400]
    assert above and nf["line_rate"]["rows_above"] == above and nf["line_rate"]["why"]
    assert [r["bytes"] for r in nf["rows"] if r["above_line_rate"]] == above
    # one server of 8 x H100: NVLS's ~480 GB/s is above NVLink's 450 per direction
    one = api.nccl_tests(
        log=(DATA / "nccl-tests-290-8xh100-1node-nvls.txt").read_text(), gpu="h100"
    )
    assert one["nccl_fit"]["line_rate"]["GBps"] == 450.0
    assert one["nccl_fit"]["rows"][-1]["above_line_rate"]
    # not named: no yardstick, no flag
    quiet = api.nccl_tests(log=text, gpus=16)["nccl_fit"]
    assert quiet["line_rate"]["GBps"] is None and not quiet["line_rate"]["rows_above"]


def test_each_card_carries_a_rings_share_over_the_servers_cards():
    s = BY_FILE["nccl-tests-290-16xh100-2nodes-ndr-ring.txt"]
    nf = api.nccl_tests(log=(DATA / s["file"]).read_text(), gpus=16, nics_per_node=8)["nccl_fit"]
    for r in nf["rows"]:
        share = 2 * 15 / 16 if r["algorithm"] == "Ring" else 1.0
        assert r["per_card"]["bytes"] == pytest.approx(share * r["bytes"] / 8)
        assert r["per_card"]["GBps"] == pytest.approx(
            r["per_card"]["bytes"] / r["measured_time_us"] / 1e3
        )
    one = api.nccl_tests(log=(DATA / "nccl-tests-290-8xh100-1node-nvls.txt").read_text())
    assert all("per_card" not in r for r in one["nccl_fit"]["rows"])


def test_with_the_gpu_the_prediction_stands_beside_each_row():
    s = BY_FILE["nccl-tests-309-16xh100-2nodes-ib-ndr.txt"]
    text = (DATA / s["file"]).read_text()
    out = api.nccl_tests(log=text, gpus=16, gpu="H100", nic_Gbps=400, nics_per_node=8)
    p = out["prediction"]
    assert p["ratio_is"].startswith("measured / predicted")
    system = System("H100 SXM", 16, 8, 8, 400.0)
    assert len(p["rows"]) == len(out["rows"])
    for row, m in zip(p["rows"], out["rows"], strict=True):
        c = choose("AllReduce", m["size_bytes"], system)
        assert row["busbw_GBps"] == c.busbw_GBps and row["algorithm"] == c.algorithm
        measured = m["size_bytes"] / m["time_us"] / 1e3 * 2 * 15 / 16
        assert row["ratio"] == pytest.approx(measured / c.busbw_GBps)
        assert measured == pytest.approx(m["busbw_GBps"], rel=2e-3, abs=0.01)  # rounded
    assert 0.9 < p["rows"][-1]["ratio"] < 1.1  # 469 GB/s measured at 16 GiB
    assert "prediction" not in api.nccl_tests(log=text, gpus=16)


# ---- "use the fitted figures" applies them to the model they were fitted with ---


# Multi-server runs, and one-server runs where NCCL chose: the calculator's NCCL model has no
# NCCL_ALGO, and no NVLink domain beyond 8 GPUs (the NVL72 rack, said not to reproduce).
NVL72 = "coreweave-43-gb200-nvl72.txt"
REPRODUCIBLE = [
    s["file"]
    for s in CLEAN
    if s["file"] != NVL72
    and (
        s["hardware"]["nodes"] > 1
        or s["algorithm"].startswith("NCCL's choice")
        and "nvls-enabled" not in s["file"]
    )
]


# Runs no card rate reproduces: NCCL's busbw is a staircase in the card rate (the search's speed
# arrays), and with the plain tree pattern's x 0.85 (tuning.cc:336, nccl/topology.py) no step
# lies within 10 % of these runs: two forced to the ring (NCCL_ALGO=RING) where NCCL's model
# picks its tree, and H20s (modelled as H100s) with NVLS at 512 MB, whose fitted figure (2.6 %
# under the last row) the nearest step still reaches within 10 %. Their settings say which.
OFF_THE_STAIRCASE = {
    "nccl-tests-252-2nodes-ring.txt",
    "nccl-tests-290-16xh100-2nodes-ndr-ring.txt",
}
# Runs whose log prints no device line, so the settings take the default GPU (H100), not theirs
GPU_NOT_PRINTED = {  # 2 x 8 B200 per their pages
    "dstack-gcp-a4-16xb200-2nodes-roce.txt",
    "dstack-lambda-16xb200-2nodes-ib.txt",
}


def _settings(file: str) -> tuple[dict, dict]:
    s = BY_FILE[file]
    out = api.nccl_tests(log=(DATA / file).read_text(), gpus=s["gpus"])
    if file == "nccl-tests-252-2nodes-ring.txt":
        out = api.nccl_tests(log=(DATA / file).read_text(), gpus=8, gpus_per_node=4)
    return out, out["nccl_fit"]["calculator_settings"]


@pytest.mark.parametrize("file", sorted(OFF_THE_STAIRCASE))
def test_settings_say_when_no_card_rate_reproduces_the_run(file):
    out, sets = _settings(file)
    last = out["rows"][-1]
    r = calculator.calc(params=last["size_bytes"] / 2, **sets["calc_kwargs"])["busbw_GBps"]
    assert abs(r / last["busbw_GBps"] - 1) > 0.10  # the nearest step is more than 10 % off
    assert sets["reproduces"] == (abs(r / sets["fitted_busbw_GBps"] - 1) <= 0.10)
    assert sets["reproduces"] or "differs" in sets["note"]


@pytest.mark.parametrize(
    "file", [f for f in REPRODUCIBLE if f not in OFF_THE_STAIRCASE | GPU_NOT_PRINTED]
)
def test_the_fits_settings_make_the_calculators_nccl_model_reproduce_the_run(file):
    out, sets = _settings(file)
    assert sets["algorithm"] == "nccl"
    last = out["rows"][-1]
    kwargs = sets["calc_kwargs"]
    assert kwargs["algorithm"] == "nccl" and kwargs["nic_Gbps"] == sets.get("nic_gbps", 400.0)
    r = calculator.calc(params=last["size_bytes"] / 2, **kwargs)
    assert r["gradient_bytes"] == last["size_bytes"]
    if not sets["reproduces"]:
        # NCCL's search quantizes each channel's bandwidth (its speed arrays), so busbw jumps
        # with the card rate; a run between two steps, or beyond the layer's ceiling (a
        # platform-limited run), is said not to reproduce, and the nearest step is given
        assert sets["note"], file
        assert r["busbw_GBps"] == pytest.approx(last["busbw_GBps"], rel=0.25), file
        return
    assert r["busbw_GBps"] == pytest.approx(last["busbw_GBps"], rel=0.10), file


def test_the_nvl72_rack_is_said_not_to_reproduce():
    sets = api.nccl_tests(log=(DATA / NVL72).read_text(), gpus=72)["nccl_fit"][
        "calculator_settings"
    ]
    assert not sets["reproduces"] and sets["note"]


def test_a_forced_ring_on_one_server_is_said_not_to_reproduce():
    """The calculator's NCCL model picks NVLS on 8 x H100; a run forced to Ring is not it."""
    out = api.nccl_tests(log=(DATA / "together-8xh100-1node-ring.txt").read_text())
    sets = out["nccl_fit"]["calculator_settings"]
    assert not sets["reproduces"] and sets["note"]
    assert sets["model_busbw_GBps"] > 1.2 * sets["fitted_busbw_GBps"]


# ---- logs synthesised from the model ---------------------------------------------------------

SYSTEMS = servers([1, 2, 4, 16])
# Up to 16 GPUs, where the latency is a negligible part of an 8 GiB all-reduce
SMALL = servers([1, 2])
SWEEP = [1 << k for k in range(3, 34)]  # all_reduce_perf -b 8 -e 8G -f 2


@settings(max_examples=examples(60), deadline=None)
@given(SYSTEMS)
def test_a_noise_free_log_from_the_model_is_fitted_back_exactly(system):
    """To ~0: a regime at NCCL's own figures costs logfit.FIXED_COST, so a one-row regime may
    be merged into its neighbour when that misses the row by under 1 %."""
    times = [choose("AllReduce", n, system).time_us for n in SWEEP]
    nf = logfit.nccl_fit(SWEEP, times, system)
    assert nf["rms_rel_error"] < 0.005
    for n, row in zip(SWEEP, nf["rows"], strict=True):
        if n >= logfit.MIN_BYTES:
            c = choose("AllReduce", n, system)
            assert row["fitted_time_us"] == pytest.approx(c.time_us, rel=0.015)
    assert nf["bw_scale"] == pytest.approx(1, rel=0.01)


def _scaled(system: System, k: float) -> list[float]:
    """NCCL's pick at each size, timed as the performance layer times it with its bandwidth
    times k: NCCL's terms, then the layer's latency and transfer, the transfer over k."""
    out = []
    for n in SWEEP:
        c = choose("AllReduce", n, system)
        lat, bw = terms(system, "AllReduce", c.algorithm, c.protocol, _entry(system, c), n)
        call = performance_call(system, c.algorithm, c.protocol, lat, bw, n)
        latency, transfer = layer.split_us(PARAMETERS, call)
        out.append(latency + transfer / k)
    return out


def _entry(system: System, c):
    return tables(system, "AllReduce")[(c.algorithm, c.protocol)]


@settings(max_examples=examples(60), deadline=None)
@given(SMALL, st.floats(0.3, 3.0))
def test_a_log_with_scaled_bandwidth_yields_the_scale(system, k):
    times = _scaled(system, k)
    nf = logfit.nccl_fit(SWEEP, times, system)
    # where NCCL's pick leaves a regime for a row or two and comes back (2 x 8 B200 with
    # 800 Gb/s cards: NVLSTree, Ring at 512 MiB alone, NVLSTree), that row is
    # shorter than a fitted regime (MIN_SEGMENT_ROWS) and keeps NCCL's own figure, so the
    # scale is found within 10 %, as the contract on any clean log is
    tol = 0.10 if _returns(system) else 0.03
    assert nf["bw_scale"] == pytest.approx(k, rel=tol)
    # the contract on any clean log (below): hypothesis found 5.47 % on 2 x 8 B200 at k = 0.375,
    # where the 64-128 KiB rows fit several regimes alike
    assert nf["rms_rel_error"] < 0.10


def _returns(system: System) -> bool:
    """Whether NCCL's pick, from 256 MiB (where the transfer, and so the scale, sets the time),
    runs an algorithm for fewer rows than a fitted regime needs, then returns to the one before
    or ends the sweep: those rows keep NCCL's own figure, whatever the log's scale."""
    picks = [choose("AllReduce", n, system).algorithm for n in SWEEP if n >= logfit.MIN_BYTES]
    runs, at = [], logfit.MIN_BYTES
    for a, group in itertools.groupby(picks):
        n = len(list(group))
        runs.append((a, n, at))
        at <<= n
    return any(
        n < logfit.MIN_SEGMENT_ROWS
        and start >= 256 << 20
        and (i == len(runs) - 1 or runs[i - 1][0] == runs[i + 1][0])
        for i, (_, n, start) in enumerate(runs)
        if i > 0
    )


@settings(max_examples=examples(50), deadline=None)
@given(SYSTEMS, st.floats(0.3, 3.0))
def test_bw_scale_is_the_fit_against_nccls_pick_at_the_largest_size(system, k):
    times = _scaled(system, k)
    nf = logfit.nccl_fit(SWEEP, times, system)
    model = choose("AllReduce", SWEEP[-1], system).busbw_GBps
    assert nf["model_busbw_GBps"] == model
    assert nf["bw_scale"] == pytest.approx(nf["rows"][-1]["fitted_busbw_GBps"] / model)
    # the penalties that keep scales near 1 can leave a few per cent on a scaled log (hypothesis
    # found 5.02 %); the contract is 10 % on any clean log, 15 % where NCCL's pick runs a regime
    # too short to fit, whose rows keep NCCL's figure whatever the scale (16 x 8 B200: Ring at
    # 4-8 GiB alone with 800 Gb/s cards, 10.2 %; Tree LL at 64-128 KiB with 100 Gb/s, 11.0 %)
    assert nf["rms_rel_error"] < (0.15 if _short_regime(system) else 0.10)


def _short_regime(system: System) -> bool:
    """Whether NCCL's pick, from MIN_BYTES, runs some algorithm and protocol for fewer rows than
    a fitted regime needs."""
    picks = [
        (c.algorithm, c.protocol)
        for c in (choose("AllReduce", n, system) for n in SWEEP if n >= logfit.MIN_BYTES)
    ]
    return any(len(list(g)) < logfit.MIN_SEGMENT_ROWS for _, g in itertools.groupby(picks))


# ---- the CLI ---------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "allreduce_explainer", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_cli_prints_both_fits_and_the_prediction():
    log = str(DATA / "nccl-tests-309-16xh100-2nodes-ib-ndr.txt")
    args = ("nccl-tests", log, "--gpu", "H100", "--nic-gbps", "400", "--nics-per-node", "8")
    r = _cli(*args, "--gpus-per-node", "8", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"fit", "nccl_fit", "prediction"} <= set(out)
    assert {"latency_us", "algbw_GBps", "rms_rel_error"} <= set(out["fit"])
    nf = out["nccl_fit"]
    assert {"rms_rel_error", "busbw_GBps", "latency_us", "min_bytes", "rows"} <= set(nf)
    row = nf["rows"][-1]
    assert {"bytes", "regime", "measured_busbw_GBps", "fitted_busbw_GBps"} <= set(row)
    assert {"busbw_GBps", "ratio"} <= set(out["prediction"]["rows"][-1])
    assert out["prediction"]["ratio_is"]


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--gpu", "MI300X"),
        ("--gpu", "nonsense"),
        ("--nic-gbps", "-3"),
        ("--nic-gbps", "5000"),
        ("--nics-per-node", "0"),
        ("--gpus-per-node", "9"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(flag, value):
    r = _cli("nccl-tests", str(DATA / "together-8xh100-1node-ring.txt"), flag, value, "--json")
    assert r.returncode == 2
    assert flag in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_cli_table_shows_both_fits_and_each_rows_regime():
    log = str(DATA / "nccl-tests-290-8xh100-1node-nvls.txt")
    r = _cli("nccl-tests", log, "--gpu", "H100")
    assert r.returncode == 0, r.stderr
    out = api.nccl_tests(
        log=(DATA / "nccl-tests-290-8xh100-1node-nvls.txt").read_text(), gpu="H100"
    )
    # a share to two significant figures, the rows' first size in KiB (records' SHARE, BINARY)
    assert f"rms {100 * out['fit']['rms_rel_error']:.2g} % over all rows" in r.stdout
    assert f"rms {100 * out['nccl_fit']['rms_rel_error']:.2g} % over rows from 64 KiB" in r.stdout
    rows = [line.split() for line in r.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert [int(x[0]) for x in rows] == [row["bytes"] for row in out["nccl_fit"]["rows"]]
    assert all(x[2] == "NVLS/Simple" for x in rows)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 1 << 36), st.floats(0.01, 1e7)), min_size=1, max_size=40),
    st.sampled_from([System("H100 SXM", 16, 8, 8, 400.0), System("B200", 2, 1, 1, 400.0)]),
)
def test_any_rows_get_a_finite_fit_or_none_without_a_row_from_64_kib(rows, system):
    nf = logfit.nccl_fit([n for n, _ in rows], [t for _, t in rows], system)
    if nf is None:
        assert all(n < logfit.MIN_BYTES for n, _ in rows)
        return
    assert math.isfinite(nf["rms_rel_error"]) and math.isfinite(nf["busbw_GBps"])
    assert len(nf["rows"]) == len(rows) and nf["points"] >= 1
