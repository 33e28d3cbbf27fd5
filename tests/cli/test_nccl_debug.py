"""`allreduce-explainer nccl-debug FILE --json`: the contract's keys, a real log's
rings, trees and findings, the table, bad input exiting 2 with the argument named; and
`nccl-tests` rows naming NCCL's model's algorithm and protocol."""

from __future__ import annotations

import json

import pytest

import helpers
from allreduce_explainer.cli import main

DATA = helpers.DATA / "nccl-debug"
P5 = str(DATA / "aws-p5-2x8xh100-efa-nccl-2.22.3.log")
KEYS = {"nccl_version", "ranks", "nodes", "gpus_per_node", "network", "nvls", "collnet",
        "channels", "calls", "findings"}  # fmt: skip


def run(capsys, *args):
    code = main(["nccl-debug", *args])
    return code, capsys.readouterr()


def test_the_json_keys_are_the_contract(capsys):
    code, out = run(capsys, P5, "--nic-gbps", "400", "--json")
    assert code == 0
    r = json.loads(out.out)
    assert set(r) >= KEYS
    assert (r["nccl_version"], r["ranks"], r["nodes"], r["gpus_per_node"]) == ("2.22.3", 16, 2, 8)
    assert r["network"]["transport"] == "AWS Libfabric (EFA)"
    assert r["nvls"]["supported"] is True and r["collnet"]["supported"] is False
    ch = r["channels"][0]
    assert set(ch) >= {"channel", "ring", "tree"} and ch["ring"][:3] == [0, 7, 6]
    assert all(set(f) == {"code", "message", "evidence"} for f in r["findings"])
    assert [row["algorithm"] for row in r["rows"]][-1] == "NVLSTree"


def test_tuning_lines_become_calls(capsys):
    code, out = run(capsys, str(DATA / "nccl-1453-3x8xh100-tuning-lines.txt"), "--json")
    assert code == 0
    calls = json.loads(out.out)["calls"]
    assert [(c["bytes"], c["algorithm"], c["protocol"]) for c in calls] == [
        (65536, "Tree", "LL"),
        (131072, "Tree", "LL128"),
    ]
    assert {"collective", "bytes", "algorithm", "protocol"} <= set(calls[0])


def test_the_table_shows_rings_rows_and_findings(capsys):
    code, out = run(capsys, P5, "--nic-gbps", "400")
    assert code == 0
    text = out.out
    assert "channel  0: ring 0 7 6 5 4 3 2 1 9 10 11 12 13 14 15 8" in text
    assert "NVLSTree/Simple" in text and "[busbw_above_line_rate]" in text


@pytest.mark.parametrize(
    "args,flag",
    [
        (["--nic-gbps", "-1"], "--nic-gbps"),
        (["--gpu", "tpu"], "--gpu"),
        (["--gpus", "0"], "--gpus"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(capsys, args, flag):
    with pytest.raises(SystemExit) as e:
        run(capsys, P5, *args)
    assert e.value.code == 2 and flag in capsys.readouterr().err


def test_a_file_that_is_not_nccl_output_exits_2(capsys, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello\nworld\n")
    with pytest.raises(SystemExit) as e:
        run(capsys, str(f))
    err = capsys.readouterr().err
    assert e.value.code == 2 and "NCCL_DEBUG=INFO" in err and "Traceback" not in err


def test_nccl_tests_rows_name_the_model_s_algorithm(capsys):
    assert main(["nccl-tests", P5, "--nic-gbps", "400", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert all(row["algorithm"] and row["protocol"] for row in r["rows"])
    assert r["rows"][-1]["algorithm"] == "NVLSTree"
    assert "NCCL 2.22.3" in r["algorithm_basis"]


RDMA = DATA / "nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt"


def test_nccl_algo_names_every_row_s_algorithm(capsys):
    """A run made with NCCL_ALGO=RING: every row Ring, and the finding quotes the line."""
    code, out = run(capsys, str(RDMA), "--json")
    assert code == 0
    r = json.loads(out.out)
    assert r["tuning_env"]["algorithms"] == ["Ring"]
    assert {row["algorithm"] for row in r["rows"]} == {"Ring"}
    forced = next(f for f in r["findings"] if f["code"] == "tuning_forced")
    assert "NCCL_ALGO set by environment to RING" in forced["evidence"]
    assert (r["nodes"], r["gpus_per_node"], r["network"]["transport"]) == (2, 8, "IB")


def test_a_utf16_file_reads_as_its_utf8(capsys, tmp_path):
    """PowerShell's `>` writes UTF-16 with a byte-order mark: the same reading as UTF-8."""
    f = tmp_path / "job.log"
    f.write_bytes(RDMA.read_text().encode("utf-16"))
    code, out = run(capsys, str(f), "--json")
    assert code == 0
    got = json.loads(out.out)
    assert main(["nccl-debug", str(RDMA), "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert got["encoding"] == "UTF-16"
    assert {k: got[k] for k in ("ranks", "channels", "rows")} == {
        k: want[k] for k in ("ranks", "channels", "rows")
    }


def test_a_line_too_long_to_read_exits_2_saying_so(capsys, tmp_path):
    f = tmp_path / "joined.log"
    f.write_text("x:1:1 [0] NCCL INFO Channel 00/02 :" + " 1" * 3000 + "\n")
    with pytest.raises(SystemExit) as e:
        run(capsys, str(f))
    err = capsys.readouterr().err
    assert e.value.code == 2 and "6,035 characters" in err and "Traceback" not in err


def test_nccl_tests_rows_keep_to_what_nccl_algo_leaves(capsys):
    assert main(["nccl-tests", str(RDMA), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert {row["algorithm"] for row in r["rows"]} == {"Ring"}
    assert "NCCL_ALGO=RING in the log" in r["algorithm_basis"]


EFA28 = DATA / "aws-efa-eks-2x8xa100-nccl-2.8.3.log"  # NCCL 2.8.3: before NVLS (2.17)


def test_the_table_says_nvls_is_absent_before_its_release(capsys):
    """A 2.8.3 log: NVLS did not exist yet, so the table says absent, not False or unknown."""
    code, out = run(capsys, str(EFA28))
    assert code == 0
    flat = " ".join(out.out.split())  # the view wraps its prose at 80 columns
    assert "NCCL 2.8.3" in flat and "; NVLS absent;" in flat


def test_a_log_of_two_communicators_reads_as_two(capsys, tmp_path):
    """Two published jobs' lines in one file (nccl-tests#319's 16 ranks with its rows, nccl#1453's
    24): the JSON's `communicators` lists both with their own ranks, channels and rows, the
    human view names each, and a finding says so."""
    log = tmp_path / "two.log"
    log.write_text(
        (DATA / "nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt").read_text()
        + (DATA / "nccl-1453-3x8xh100-ib-nvls-heads.txt").read_text()
    )
    code, out = run(capsys, str(log), "--json")
    r = json.loads(out.out)
    assert code == 0 and [c["ranks"] for c in r["communicators"]] == [16, 24]
    assert [len(c["rows"]) for c in r["communicators"]] == [32, 0] and r["run"]["gpus"] == 16
    assert "communicators" in [f["code"] for f in r["findings"]]
    code, out = run(capsys, str(log))
    assert "communicator of 16 ranks: 2 servers, 16 channels" in out.out
    assert "communicator of 24 ranks: 3 servers" in out.out
