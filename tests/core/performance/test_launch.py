"""The launch mode (all_reduce_perf's -g, the GPUs one process drives): read from a log's header,
taken by `nccl` and `calc` as --gpus-per-process, and modelled as the published -g 8 runs show it:
one thread launching eight GPUs' kernels one after another cannot finish a small call sooner
than about 35 us, where one process per GPU can; at gigabytes the launch does not matter."""

from __future__ import annotations

import json
import re
import statistics

import pytest

from allreduce_explainer import nccl
from allreduce_explainer.cli import main
from allreduce_explainer.errors import ParamError
from allreduce_explainer.logs.parse import parse_runs
from helpers import DATA

SWEEPS = json.loads((DATA / "nccl-tests" / "SWEEPS.json").read_text())["sweeps"]
HEADER = re.compile(r"# nThread (\d+) nGpus (\d+)")
LOGS = [  # the logs published with their header
    s
    for s in SWEEPS
    if s["kind"] == "log" and HEADER.search((DATA / "nccl-tests" / s["file"]).read_text())
]


@pytest.mark.parametrize("sweep", LOGS, ids=[s["key"] for s in LOGS])
def test_the_log_reader_takes_g_from_the_header(sweep):
    """nccl-tests prints `# nThread T nGpus G`: G is the GPUs each thread drives (-g)."""
    text = (DATA / "nccl-tests" / sweep["file"]).read_text()
    g = int(HEADER.search(text).group(2))
    assert [r.gpus_per_thread for r in parse_runs(text).runs] == [g]
    assert g == sweep["gpus_per_thread"]


def nccl_json(capsys, *args) -> dict:
    assert main(["nccl", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def together_small_median() -> float:
    """together's -g 8 ring on one 8 x H100 server: its out-of-place times from 8 B to 64 KiB."""
    text = (DATA / "nccl-tests" / "together-8xh100-1node-ring.txt").read_text()
    rows = (
        re.match(r"^\s*(\d+)\s+\d+\s+float\s+sum\s+-1\s+([\d.]+)", x) for x in text.splitlines()
    )
    return statistics.median(float(m.group(2)) for m in rows if m and int(m.group(1)) <= 64 << 10)


def test_gpus_per_process_changes_the_prediction_as_the_runs_do(capsys):
    """One 8 x H100 server, the ring forced as in together's run: with --gpus-per-process 8 a
    1 KiB call takes the -g 8 run's small-message time (within 5 %); with 1 (the default) far
    less; at 1 GiB the two launches agree within 1 %, as the -g 8 and -g 1 runs of one H100
    server do at gigabytes (together's ring and xxrjun's, both within the layer's band there)."""
    base = ("--gpus", "8", "--gpu", "H100", "--algorithm", "Ring")
    small = {g: nccl_json(capsys, *base, "--bytes", "1K", "--gpus-per-process", g) for g in "18"}
    measured = together_small_median()
    assert small["8"]["rows"][0]["time_us"] == pytest.approx(measured, rel=0.05)
    assert small["1"]["rows"][0]["time_us"] < 0.6 * measured
    assert nccl_json(capsys, *base, "--bytes", "1K") == small["1"]  # the default is 1
    assert small["8"]["gpus_per_thread"] == 8
    big = {g: nccl_json(capsys, *base, "--bytes", "1G", "--gpus-per-process", g) for g in "18"}
    t1, t8 = (big[g]["rows"][0]["time_us"] for g in "18")
    assert t8 == pytest.approx(t1, rel=0.01) and t8 >= t1


def test_calc_takes_gpus_per_process(capsys):
    """The calculator's all-reduce under NCCL: one process per GPU by default; -g 8 never
    faster; more GPUs per process than a server holds is refused, naming the flag."""
    args = ["calc", "--model", "gpt2", "--gpus", "8", "--json"]
    assert main(args) == 0
    one = json.loads(capsys.readouterr().out)
    assert main([*args, "--gpus-per-process", "8"]) == 0
    eight = json.loads(capsys.readouterr().out)
    assert eight["allreduce_s"] > one["allreduce_s"]
    assert eight["nccl_band"]["class"].endswith("one process for several GPUs")
    assert one["nccl_band"]["class"].endswith("one process per GPU")
    with pytest.raises(SystemExit) as e:
        main([*args, "--gpus-per-node", "4", "--gpus-per-process", "8"])
    assert e.value.code == 2 and "--gpus-per-process" in capsys.readouterr().err


@pytest.mark.parametrize("g", ["0", "9", "2.5", "x"])
def test_a_bad_gpus_per_process_is_refused_naming_the_flag(capsys, g):
    """One process drives 1 to a server's GPUs (8 here): anything else exits 2 with the flag."""
    with pytest.raises(SystemExit) as e:
        main(["nccl", "--gpus", "8", "--bytes", "1M", "--gpus-per-process", g])
    assert e.value.code == 2 and "--gpus-per-process" in capsys.readouterr().err


@pytest.mark.parametrize("g", [0, 9, 2.0, True])
def test_the_library_refuses_a_bad_gpus_per_thread(g):

    with pytest.raises(ParamError) as e:
        nccl.sweep("AllReduce", [1024], nccl.System("H100 SXM", 8, 8), gpus_per_thread=g)
    assert e.value.field == "gpus_per_thread"


def test_nccls_source_changes_only_the_host_side_with_the_launch_mode():
    """What NCCL 2.30.7 does differently when one process drives several GPUs, from its source
    (verbatim excerpts, tests/data/nccl/): peers in one process are wired 'P2P/direct pointer',
    in two processes 'P2P/CUMEM' (or IPC) over the same NVLink loads and stores (p2p.cc:414-430);
    a collective's work is 'direct' only for CollNetDirect, whatever the process (enqueue.cc:
    2301-2306); the symmetric LL kernels one thread with several GPUs is refused on unregistered
    buffers are refused to every process by default too (symmetric_sched.cc:21, 161-163); and
    one thread prepares and launches each of its GPUs' kernels in turn (group.cc:320-323,
    356-376). So the pick, channels and NCCL's own time are the launch mode's alike, and the
    layer's times differ by no more than the launch floor."""
    from nccl_source import excerpt

    p2p = excerpt("p2p.cc")
    assert "P2P_SAME_PID(myInfo, peerInfo)" in p2p[414] and "P2P_DIRECT" in p2p[415]
    assert "P2P_CUMEM" in p2p[421] and "P2P_IPC" in p2p[428]
    enq = excerpt("enqueue.cc")
    assert "NCCL_ALGO_COLLNET_DIRECT" in enq[2302] and "*outDirectFlags = 0" in enq[2305]
    sym = excerpt("symmetric_sched.cc")
    assert '"SYM_NOWIN_ENABLE", 0)' in sym[21] and "comm->intraRanks > 1" in sym[148]
    assert "isOneThreadMultiGpus" in sym[161] and "!ncclParamSymNoWinEnable()" in sym[163]
    group = excerpt("group.cc")
    assert "cudaSetDevice" in group[322] and "ncclLaunchPrepare(comm)" in group[323]
    assert "ncclLaunchKernel(comm, plan)" in group[363] and "comm = next;" in group[376]

    from allreduce_explainer.performance import fitted

    sizes = [1 << k for k in range(10, 34, 2)]
    for s in (nccl.System("A100 SXM", 8, 8), nccl.System("H100 SXM", 16, 8)):
        one, eight = (nccl.sweep("AllReduce", sizes, s, gpus_per_thread=g)["rows"] for g in (1, 8))
        floor = 8 * fitted.PARAMETERS.launch_us_per_gpu
        for a, b in zip(one, eight, strict=True):
            same = ("algorithm", "protocol", "nccl_time_us")
            assert [a[k] for k in same] == [b[k] for k in same]
            assert a["time_us"] <= b["time_us"] <= a["time_us"] + floor


POINTS = [
    p
    for p in json.loads((DATA / "nccl-tests" / "SWEEPS.json").read_text())["points"]
    if p["about"] == "launch"
]


def test_one_server_launched_both_ways_is_predicted_both_ways():
    """One 8 x H200 node (stas00/ml-engineering, NCCL 2.27.7), a 16 GiB all-reduce launched as
    all_reduce_perf -g 8 and under torchrun (one process per GPU), NVLS on and off: the
    published pairs agree within 1 % (480.0 and 482.26 GB/s; 367.2 and 367.61), as NCCL's
    source says they should (only the host side differs). The layer predicts each launch for
    itself, the same at this size, within 3 % of NVLS's figures and 6 % of the rings'."""
    text = (DATA / "nccl-tests" / POINTS[0]["file"]).read_text()
    s = nccl.System(**POINTS[0]["system"])
    by = {}
    for p in POINTS:
        assert any(f"{p['busbw_GBps']:.{k}f}GBps" in text for k in (1, 2))
        assert ("-g 8 -z 1" if p["gpus_per_thread"] == 8 else "torchrun --nproc_per_node=8") in text
        c = nccl.choose(
            "AllReduce", p["size_bytes"], s, algorithm=p["algorithm"],
            gpus_per_thread=p["gpus_per_thread"],
        )  # fmt: skip
        assert (c.algorithm == "NVLS") is p["nvls"]
        assert abs(c.busbw_GBps / p["busbw_GBps"] - 1) <= (0.03 if p["nvls"] else 0.06)
        by.setdefault(p["nvls"], []).append((p["busbw_GBps"], c.busbw_GBps))
    for pairs in by.values():
        (m1, c1), (m2, c2) = pairs
        assert abs(m1 / m2 - 1) < 0.01 and c1 == pytest.approx(c2, rel=1e-3)
