"""One driver for a log (logs.explain.explain_run) behind both doors, the CLI's `nccl-tests` and
stage 8's log view; the core records the calculator view and stage 5 draw (calculator.calculate,
nccl.best_by_algorithm), checked against the log's own rows and against direct calls."""

from __future__ import annotations

import json

import pytest

import helpers
from allreduce_explainer import fmt, nccl
from allreduce_explainer.cli import main
from allreduce_explainer.errors import ParamError
from allreduce_explainer.logs import explain, parse
from allreduce_explainer.training import calculator
from allreduce_explainer.widgets import cluster as widget
from allreduce_explainer.widgets import logview

LOG = helpers.DATA / "nccl-tests" / "nccl-tests-309-16xh100-2nodes-ib-ndr.txt"
TEXT = LOG.read_text()


def _largest_row(text: str) -> tuple[int, float]:
    """The log's largest size and its out-of-place busbw, read by hand: nccl-tests prints size,
    count, type, redop, root, time, algbw, busbw, #wrong, then the in-place half."""
    rows = [line.split() for line in text.splitlines() if line[:1] == " " and line.split()]
    rows = [r for r in rows if r[0].isdigit()]
    big = max(rows, key=lambda r: int(r[0]))
    return int(big[0]), float(big[7])


def test_the_cli_and_the_page_read_a_log_through_explain_run_alike(capsys, monkeypatch):
    calls = []
    real = explain.explain_run

    def spy(run, gpus, gpus_per_node, net, device, strict=True, topo=None):
        calls.append((gpus_per_node, net))
        return real(run, gpus, gpus_per_node, net, device, strict, topo)

    monkeypatch.setattr(explain, "explain_run", spy)
    logview._explained.cache_clear()
    assert main(["nccl-tests", str(LOG), "--gpu", "h100", "--nic-gbps", "400", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    page = widget.cluster({"log": TEXT})  # the page's defaults: H100 SXM, a 400 Gb/s card
    logview._explained.cache_clear()
    # one run, read once by each door, on the same hardware
    assert calls == [(8, explain.Network("H100 SXM", 400.0))] * 2
    size, busbw = _largest_row(TEXT)
    row = max(cli["rows"], key=lambda r: r["size_bytes"])
    assert (row["size_bytes"], row["busbw_GBps"]) == (size, busbw)
    table = page["figures"]["busbw"]["table"]
    drawn = next(r for r in table["rows"] if r[0] == fmt.nbytes(size))
    assert drawn[table["columns"].index("measured busbw (GB/s)")] == fmt.sig(busbw, 4)
    # the NCCL fit's settings, applied on the page, are the CLI's
    settings = cli["nccl_fit"]["calculator_settings"]
    assert page["fit_apply"] == {
        "algorithm": "nccl",
        "gpu": "H100 SXM",
        "network": "custom",
        "nic_gbps": settings["nic_gbps"],
        "nccl_version": "2.30.7",  # the log prints no NCCL version: the released model
        "gpus_per_process": 1,  # nGpus 1: one process per GPU
    }
    assert f"latency {fmt.sig(cli['fit']['latency_us'], 3)} µs" in page["readouts"]["log_fit"]
    assert (
        f"{cli['gpus']} GPUs (from the rank lines) in 2 servers" in page["readouts"]["log_status"]
    )


def test_explain_run_without_a_count_keeps_the_rows_and_the_line():
    run = parse.parse_runs(TEXT).runs[0]
    bare = parse.Run(run.rows, set(), set(), run.first_line, run.avg_busbw_GBps)
    out = explain.explain_run(bare, None, 8, explain.Network(), None)
    assert out["gpus"] is None and "nccl_fit" not in out and "servers" not in out
    assert [r["size_bytes"] for r in out["rows"]] == [r.size_bytes for r in run.rows]
    assert out["fit"] is not None and out["fit"]["busbw_GBps"] is None  # no count, no busbw


def test_explain_run_refuses_a_layout_nccl_cannot_hold_unless_told_to_keep_the_line():
    run = parse.parse_runs(TEXT).runs[0]
    net = explain.Network("H100 SXM", 5000.0)  # NCCL's model takes cards of 1-3200 Gb/s
    with pytest.raises(ParamError) as e:
        explain.explain_run(run, None, 8, net, None)
    kept = explain.explain_run(run, None, 8, net, None, strict=False)
    assert kept["nccl_fit"] is None and kept["nccl_error"] == e.value.message
    assert kept["fit"] == explain.explain_run(run, None, 8, explain.Network(), None)["fit"]


def test_calculate_hands_back_the_cluster_and_model_calc_worked_on():
    kw = {"model": "llama3-8b", "gpus": 32, "nic_Gbps": 200, "algorithm": "ring"}
    done = calculator.calculate(**kw)
    assert done.figures == calculator.calc(**kw)
    assert done.cluster == calculator.cluster_for(gpus=32, nic_Gbps=200)
    assert done.model is calculator.model_for("llama3-8b", None)


def test_nccl_on_a_gpu_it_does_not_cover_falls_back_on_the_page_only():
    kw = {"gpu": "MI300X", "gpus": 16, "params": 7e9}
    with pytest.raises(ParamError):
        calculator.calc(**kw)
    r = calculator.calculate(nccl_fallback=True, **kw).figures
    c = calculator.cluster_for(gpu="MI300X", gpus=16)
    fastest = min(calculator.CANDIDATES, key=lambda a: calculator.allreduce(c, a, 14e9)["time_s"])
    assert r["algorithm_asked"] == r["algorithm"] == fastest


def test_the_page_builds_its_cluster_once(monkeypatch):
    calls = []
    real = calculator.cluster_for
    monkeypatch.setattr(calculator, "cluster_for", lambda **kw: calls.append(kw) or real(**kw))
    widget.cluster({"gpu": "MI300X", "gpus": 16})
    assert len(calls) == 1


@pytest.mark.parametrize(("gpus", "per", "nic"), [(8, 8, 400.0), (64, 8, 400.0), (16, 1, 100.0)])
def test_best_by_algorithm_is_choose_per_algorithm_and_nccls_pick(gpus, per, nic):
    system = nccl.System("H100 SXM", gpus, per, per, nic)
    sizes = [1, 4096, 1 << 20, 123_456_789, 8 << 30]
    best = nccl.best_by_algorithm(system, sizes)
    algorithms = {a for a, _ in nccl.tables(system)}
    assert set(best.time_us) == set(best.protocol) == algorithms
    for i, n in enumerate(sizes):
        for a in algorithms:
            forced = nccl.choose("AllReduce", n, system, algorithm=a)
            assert (best.protocol[a][i], best.time_us[a][i]) == (
                forced.protocol,
                forced.nccl_time_us,
            )
        pick = nccl.choose("AllReduce", n, system)
        assert best.pick[i] == (pick.algorithm, pick.protocol, pick.nccl_time_us)


# ---- UTF-16 logs and the run's launch ----------------------------------------------------------

G8 = helpers.DATA / "nccl-tests" / "together-8xh100-1node-ring.txt"  # one process, -g 8


def _header_gpus_per_thread(text: str) -> int:
    """all_reduce_perf's header: '# nThread 1 nGpus 8 ...', read with string operations."""
    line = next(x for x in text.splitlines() if "nGpus" in x)
    words = line.split()
    return int(words[words.index("nGpus") + 1])


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_log_is_read_as_its_utf8(codec):
    """PowerShell's `>` writes UTF-16; the CLI and the page get its bytes decoded as UTF-8. The
    rows, the GPUs and the fit are the UTF-8 log's, on both doors, and the encoding is said."""
    arrived = TEXT.encode(codec).decode("utf-8", "replace")
    want, got = explain.read_log(TEXT), explain.read_log(arrived)
    assert (want["encoding"], got["encoding"]) == ("UTF-8", "UTF-16")
    assert got["rows"] == want["rows"] and got["gpus"] == want["gpus"] == 16
    assert got["nccl_fit"] == want["nccl_fit"]
    size, busbw = _largest_row(TEXT)
    assert max(got["rows"], key=lambda r: r["size_bytes"])["busbw_GBps"] == busbw
    logview._explained.cache_clear()
    page = widget.cluster({"log": arrived})
    table = page["figures"]["busbw"]["table"]
    drawn = next(r for r in table["rows"] if r[0] == fmt.nbytes(size))
    assert drawn[table["columns"].index("measured busbw (GB/s)")] == fmt.sig(busbw, 4)


@pytest.mark.parametrize("log", [LOG, G8], ids=["g1", "g8"])
def test_the_fits_settings_take_the_runs_gpus_per_process(log):
    """A run launched as one process for 8 GPUs (-g 8) is timed by the calculator as one: the
    settings the fit hands over (the CLI's and the page's button) carry the header's nGpus."""
    text = log.read_text()
    g = _header_gpus_per_thread(text)
    sets = explain.read_log(text)["nccl_fit"]["calculator_settings"]
    assert sets["gpus_per_process"] == sets["calc_kwargs"]["gpus_per_process"] == g
    last = max(explain.read_log(text)["rows"], key=lambda r: r["size_bytes"])["size_bytes"]
    got = calculator.calc(params=last / 2, **sets["calc_kwargs"])["busbw_GBps"]
    assert got == pytest.approx(sets["model_busbw_GBps"], rel=1e-9)
    logview._explained.cache_clear()
    assert widget.cluster({"log": text})["fit_apply"]["gpus_per_process"] == g
