"""`allreduce-explainer orders`: the JSON contract (exact, methods with serial, ring, tree, nvls,
each {result, ranks_agree, max_ulp, mean_ulp}) and the flag named on bad input (status 2)."""

import json
from fractions import Fraction

import pytest

from allreduce_explainer import cli

METHODS = {"serial", "ring", "tree", "nvls"}
FIGURES = {"result", "ranks_agree", "max_ulp", "mean_ulp"}


def run(argv, capsys) -> dict:
    assert cli.main(["orders", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def refused(argv, capsys) -> str:
    """The flag a refusal names: under --json, the one JSON line on stderr."""
    with pytest.raises(SystemExit) as e:
        cli.main(["orders", *argv, "--json"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return json.loads(err[0])["error"]["flag"]


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_the_contract_keys(dtype, capsys):
    r = run(["--gpus", "6", "--dtype", dtype, "--seed", "3", "--length", "10"], capsys)
    assert len(r["exact"]) == 10
    assert set(r["methods"]) == METHODS
    for m in r["methods"].values():
        assert set(m) == FIGURES
        assert len(m["result"]) == 10 and m["ranks_agree"] is True
        assert 0 <= m["mean_ulp"] <= m["max_ulp"]


def test_values_from_a_file_give_the_probe(tmp_path, capsys):
    f = tmp_path / "v.json"
    f.write_text(json.dumps([[1e8], [1], [-1e8], [1]]))
    r = run(["--gpus", "4", "--dtype", "fp32", "--values", str(f)], capsys)
    assert r["exact"] == [2.0]
    got = {k: m["result"][0] for k, m in r["methods"].items()}
    assert got == {"serial": 1.0, "ring": 0.0, "tree": 0.0, "nvls": 1.0}
    ulp = float(Fraction(2) ** (1 - 23))  # FP32's ulp at 2
    assert r["methods"]["ring"]["max_ulp"] == 2 / ulp


def test_a_bigger_bucket_changes_nccl_pick(capsys):
    alone = run(["--gpus", "8", "--length", "64"], capsys)
    bucket = run(["--gpus", "8", "--length", "64", "--bytes", str(64 << 20)], capsys)
    assert alone["nccl"]["ring"]["channels"] < bucket["nccl"]["ring"]["channels"]
    assert alone["exact"] == bucket["exact"]


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--gpus", "1"], "--gpus"),
        (["--dtype", "int"], "--dtype"),
        (["--length", "0"], "--length"),
        (["--gpus", "512", "--length", "4096"], "--length"),
        (["--length", "8", "--bytes", "15"], "--bytes"),
        (["--values", "/nonexistent/v.json"], "--values"),
    ],
)
def test_bad_input_names_the_flag(argv, flag, capsys):
    assert refused(argv, capsys) == flag


def test_values_of_the_wrong_shape_name_values(tmp_path, capsys):
    f = tmp_path / "v.json"
    f.write_text("[[1, 2], [3, 4]]")
    assert refused(["--gpus", "4", "--values", str(f)], capsys) == "--values"


def test_rings_from_a_debug_log_are_checked_per_ring(capsys):
    assert refused(["--gpus", "4", "--rings", "0 1 2 3;0 1 3"], capsys) == "--rings"
    r = run(["--gpus", "4", "--rings", "0 1 2 3;1 0 3 2", "--bytes", "1048576"], capsys)
    assert set(r["methods"]) == METHODS


def test_the_same_ring_from_another_start_gives_the_same_sums(capsys):
    """The review's case: --rings 0,1,2,3 and 1,2,3,0 are one ring (NCCL numbers it from GPU 0,
    src/init.cc:797-802), so one answer."""
    base = ["--gpus", "4", "--kind", "probe", "--length", "4"]
    answers = [run([*base, "--rings", r], capsys) for r in ("0,1,2,3", "1,2,3,0", "3,0,1,2")]
    assert all(a["methods"] == answers[0]["methods"] for a in answers)
    assert all(a["ring_first"] == answers[0]["ring_first"] for a in answers)


def test_chains_are_one_servers_and_checked_per_chain(capsys):
    assert refused(["--gpus", "4", "--chains", "0,3,2,1;0,1,3"], capsys) == "--chains"
    assert refused(["--gpus", "16", "--chains", ",".join(map(str, range(16)))], capsys) == (
        "--chains"
    )
    r = run(["--gpus", "4", "--chains", "0,3,2,1;1,2,3,0", "--bytes", "1048576"], capsys)
    assert set(r["methods"]) == METHODS and r["methods"]["tree"]["ranks_agree"]
