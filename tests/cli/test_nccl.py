"""`allreduce-explainer nccl` and `calc --algorithm nccl`: the JSON rows and their keys, sizes as
all_reduce_perf takes them, forcing an algorithm, bad flags exiting 2 with the flag named, and the
calculator's default against NCCL's own choice."""

from __future__ import annotations

import json

import pytest

from allreduce_explainer.cli import main
from allreduce_explainer.nccl import System, choose, tables

ROW_KEYS = {
    "bytes",
    "algorithm",
    "protocol",
    "time_us",
    "algbw_GBps",
    "busbw_GBps",
    "nccl_time_us",
    "nccl_busbw_GBps",
    "band",
    "candidates",
}


def run(capsys, *args):
    code = main(["nccl", *args])
    return code, capsys.readouterr()


def test_cli_json_rows(capsys):
    code, out = run(capsys, "--gpus", "8", "--gpu", "h100", "--sizes", "8:1K", "--json")
    assert code == 0
    r = json.loads(out.out)
    assert r["nccl_version"] == "2.30.7" == r["system"]["nccl_version"]  # the newest tagged
    assert r["nccl_commit"] == "5067397c2676d5aed50042fc39e5c8ee96eb0027"  # tag v2.30.7-1
    assert [row["bytes"] for row in r["rows"]] == [8, 16, 32, 64, 128, 256, 512, 1024]
    for row in r["rows"]:
        assert set(row) == ROW_KEYS
        assert {"algorithm", "protocol", "time_us"} <= set(row["candidates"][0])
        assert len(row["candidates"]) == len(tables(System("H100 SXM", 8, 8)))


@pytest.mark.parametrize("text,n", [("8", 8), ("1K", 1024), ("64M", 64 << 20), ("8G", 8 << 30)])
def test_cli_sizes_like_all_reduce_perf(capsys, text, n):
    code, out = run(capsys, "--gpus", "16", "--bytes", text, "--json")
    assert code == 0 and json.loads(out.out)["rows"][0]["bytes"] == n


def test_cli_forcing_and_human_table(capsys):
    code, out = run(capsys, "--gpus", "8", "--bytes", "8G", "--algorithm", "Ring", "--json")
    row = json.loads(out.out)["rows"][0]
    assert (row["algorithm"], row["protocol"]) == ("Ring", "Simple")
    assert {c["algorithm"] for c in row["candidates"]} == {"Ring"}
    code, out = run(capsys, "--gpus", "8", "--bytes", "8G")
    assert code == 0 and "NVLS" in out.out and "NCCL 2.30.7 model" in out.out


def test_cli_nccl_version_picks_the_release(capsys):
    """Four servers of one GPU at 1 KiB: 2.30.7 charges the ring the tree's network latency
    (tuning.cc:387-388) and picks the tree; 2.31.0a7 charges the ring its own (ring.cc:52-53),
    2.7 against 5.0 us a step with LL, and picks the ring."""
    picks = {}
    for v in ("2.30.7", "2.31.0a7"):
        args = ("--gpus", "4", "--gpus-per-node", "1", "--bytes", "1K", "--json")
        code, out = run(capsys, *args, "--nccl-version", v)
        r = json.loads(out.out)
        assert code == 0 and r["nccl_version"] == v
        row = r["rows"][0]
        picks[v] = (row["algorithm"], row["protocol"], row["nccl_time_us"])
    base, steps, size = 6.6, 2 * (4 - 1), 1024  # Ring LL: base latency, 2(n-1) network steps
    ring_ll_bw = 13.6  # min(llMaxBw[0][2] = 20.4, 8 x 48 x 0.5) x 4/6, GB/s
    assert picks["2.31.0a7"][:2] == ("Ring", "LL")
    assert picks["2.31.0a7"][2] == pytest.approx(base + steps * 2.7 + size / (1000 * ring_ll_bw))
    assert picks["2.30.7"][:2] == ("Tree", "LL")


def test_cli_nccl_version_refused(capsys):
    with pytest.raises(SystemExit) as e:
        main(["nccl", "--gpus", "8", "--bytes", "1K", "--nccl-version", "2.29.7"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--nccl-version" in err and "2.31.0a7" in err


@pytest.mark.parametrize("cpu,ll_max", [("intel", 39.0), ("amd", 22.5), ("AMD", 22.5)])
def test_cli_cpu_sets_the_ll_limit_across_servers(capsys, cpu, ll_max):
    """tuning.cc:179-182 and 269-271: across servers llMaxBws is indexed by the host CPU, Intel
    row 0, AMD row 1; two servers are column 1: 39.0 against 22.5 GB/s. At 8 GiB the ring's LL
    (min(llMaxBw, 8 x 48 x 0.5), tuning.cc:327) is that limit to 0.1 %."""
    code, out = run(
        capsys, "--gpus", "16", "--bytes", "8G", "--cpu", cpu, "--algorithm", "Ring",
        "--protocol", "LL", "--json",
    )  # fmt: skip
    r = json.loads(out.out)
    assert code == 0 and r["system"]["cpu"] == cpu.lower()
    assert r["rows"][0]["nccl_busbw_GBps"] == pytest.approx(ll_max, rel=1e-3)


def test_cli_bad_cpu_names_the_choices(capsys):
    with pytest.raises(SystemExit) as e:
        main(["nccl", "--gpus", "16", "--bytes", "8", "--cpu", "arm"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--cpu" in err and "intel or amd" in err and "'arm'" in err


# --- calc --algorithm nccl ------------------------------------------------------------------


def test_calc_defaults_to_nccl(capsys):
    from allreduce_explainer.training import calculator

    code = main(["calc", "--model", "llama3-70b", "--gpus", "256", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["algorithm"] == "nccl" and out["nccl_algorithm"] == "Ring"
    s = System("H100 SXM", 256, 8)
    pick = choose("AllReduce", round(out["gradient_bytes"]), s)
    assert out["allreduce_s"] == pytest.approx(pick.time_us * 1e-6)
    assert out["nccl_time_s"] == pytest.approx(pick.nccl_time_us * 1e-6)
    assert 0.6 < out["allreduce_s"] < 0.8  # NVIDIA's own model: about 0.77 s, not the ring's 5.6
    # the teaching models keep their meaning
    assert calculator.calc(algorithm="ring")["allreduce_s"] == pytest.approx(0.55125)


def test_calc_nccl_refuses_amd(capsys):
    with pytest.raises(SystemExit) as e:
        main(["calc", "--params", "7e9", "--gpus", "8", "--gpu", "mi300x"])
    assert e.value.code == 2 and "--gpu" in capsys.readouterr().err
