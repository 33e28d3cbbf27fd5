"""The CLI is a contract: flags, JSON keys, exit status 2 with one line on bad input."""

import json
import subprocess
import sys

import pytest

from allreduce_explainer.cli import main

SIMULATE_KEYS = {
    "algorithm",
    "gpus",
    "gpus_per_node",
    "dtype",
    "length",
    "inputs",
    "target",
    "results",
    "matches_target",
    "identical_on_all_gpus",
    "max_ulp_error",
    "steps",
    "messages",
    "bytes_sent_per_gpu",
    "bytes_inter_node",
    "bytes_per_nic_max",
    "network_steps",
}
COST_KEYS = {
    "time_s",
    "algbw_GBps",
    "busbw_GBps",
    "steps",
    "network_steps",
    "bytes_sent_per_gpu_max",
    "bytes_inter_node",
    "bytes_per_nic_max",
    "formula",
}


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "allreduce_explainer", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("algorithm", ["naive", "ring", "multi-ring", "tree", "hierarchical"])
def test_simulate_json_keys_and_exact_sum(algorithm):
    p = cli(
        "simulate", algorithm, "--gpus", "8", "--gpus-per-node", "4", "--length", "13", "--json"
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out.keys() >= SIMULATE_KEYS and "trace" not in out
    assert out["matches_target"] and all(r == out["target"] for r in out["results"])
    assert len(out["bytes_sent_per_gpu"]) == 8


def test_simulate_values_from_stdin_with_trace():
    values = json.dumps([[1, 2, 3], [10, 20, 30], [100, 200, 300]])
    ring = ("simulate", "ring", "--gpus", "3", "--values", "-", "--json")
    out = json.loads(cli(*ring, "--trace", stdin=values).stdout)
    assert out["target"] == [111, 222, 333]
    assert len(out["trace"]) == out["steps"] == 4
    assert out["trace"][-1]["buffers"] == [[111, 222, 333]] * 3
    # bf16 elements are 2 bytes: 2(n-1) chunks of one element each
    out = json.loads(cli(*ring, "--dtype", "bf16", stdin=values).stdout)
    assert sum(out["bytes_sent_per_gpu"]) == 2 * 2 * 3 * 2


def test_cost_json_headline_and_scientific_notation():
    p = cli("cost", "ring", "--gpus", "64", "--gpus-per-node", "8", "--bytes", "14e9", "--json")
    out = json.loads(p.stdout)
    assert out.keys() >= COST_KEYS
    assert out["time_s"] == pytest.approx(0.55125, rel=1e-3)
    assert out["busbw_GBps"] == pytest.approx(50.0)
    assert out["bytes_per_nic_max"] == pytest.approx(2 * 63 / 64 * 14e9)


def test_busbw_factors():
    p = cli("busbw", "--gpus", "8", "--bytes", "1e9", "--time-us", "1e4", "--json")
    out = json.loads(p.stdout)
    assert out["algbw_GBps"] == pytest.approx(100.0) and out["factor"] == pytest.approx(1.75)
    p = cli(
        "busbw",
        "--gpus",
        "8",
        "--bytes",
        "1e9",
        "--time-us",
        "1e4",
        "--collective",
        "allgather",
        "--json",
    )
    assert json.loads(p.stdout)["busbw_GBps"] == pytest.approx(87.5)


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["cost", "ring", "--gpus", "0", "--bytes", "1"], "--gpus"),
        (["cost", "ring", "--gpus", "8", "--bytes", "-5"], "--bytes"),
        (["cost", "ring", "--gpus", "8", "--bytes", "nan"], "--bytes"),
        (["cost", "ring", "--gpus", "10", "--gpus-per-node", "4", "--bytes", "1"], "--gpus"),
        (["cost", "fancy", "--gpus", "8", "--bytes", "1"], "algorithm"),
        (["simulate", "ring", "--gpus", "2.5"], "--gpus"),
        (["simulate", "ring", "--length", "0"], "--length"),
        (["simulate", "ring", "--values", "/nonexistent.json"], "--values"),
        (["simulate", "ring", "--gpus", "5000"], "--gpus"),
        (["simulate", "ring", "--gpus", "100", "--trace"], "--gpus"),
        (["simulate", "ring", "--intra-bw", "0"], "--intra-bw"),
        (["busbw", "--gpus", "8", "--bytes", "1", "--time-us", "0"], "--time-us"),
        (["cost", "ring", "--gpus", "8"], "--bytes"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, names):
    p = cli(*args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and names in lines[0] and "Traceback" not in p.stderr


@pytest.mark.parametrize(
    "payload", ["[[1,2],[3]]", "not json", '[[1, 2], [3, "x"]]', "[[2147483647], [1]]", "{}"]
)
def test_bad_values_exit_2(payload):
    p = cli("simulate", "ring", "--gpus", "2", "--values", "-", stdin=payload)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "--values" in p.stderr


def test_table_output_without_json(capsys, tmp_path):
    """The human view labels the exact sum, and prints it as the sum of the GPUs' values."""
    values = [[1000, 2, -3], [20, 4000, 5], [300, 6, 70000]]
    path = tmp_path / "v.json"
    path.write_text(json.dumps(values))
    assert main(["simulate", "ring", "--gpus", "3", "--values", str(path)]) == 0
    out = capsys.readouterr().out
    sums = [sum(col) for col in zip(*values, strict=True)]
    assert f"exact sum               {', '.join(f'{s:,}' for s in sums)}" in out
    assert "equals the exact sum    yes" in out


# ---- buckets and ddp (stage 7) ---------------------------------------------------------------


def test_buckets_json_follows_pytorch_defaults_and_explicit_cap():
    mib = 1 << 20
    sizes = ",".join(str(x) for x in [100, 2 * mib, 30_000_000, 5, 600_000, 600_000])
    p = cli("buckets", "--param-bytes", sizes, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["buckets"] == [[5, 4], [3, 2], [1, 0]]
    p = cli("buckets", "--param-bytes", "10,10,52428800,10,10", "--bucket-cap-mb", "1", "--json")
    out = json.loads(p.stdout)
    assert out["buckets"] == [[4, 3, 2], [1, 0]] and out["first_bucket_bytes"] == mib
    p = cli("buckets", "--param-bytes", "600000,600000", "--first-bucket-mb", "0.5", "--json")
    assert json.loads(p.stdout)["buckets"] == [[1], [0]]


def test_ddp_json_keys_and_sweep():
    p = cli("ddp", "--model", "gpt2", "--gpus", "8", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out.keys() >= {"backward_s", "allreduce_total_s", "exposed_s", "buckets"}
    assert "sweep" not in out
    assert sorted(i for b in out["buckets"] for i in b) == list(range(148))
    p = cli(
        "ddp",
        "--model",
        "resnet50",
        "--gpus",
        "16",
        "--gpus-per-node",
        "8",
        "--sweep",
        "--bucket-cap-mb",
        "10",
        "--json",
    )
    out = json.loads(p.stdout)
    assert out["best_bucket_mb"] > 0 and len(out["sweep"]) > 10
    assert out["bucket_cap_bytes"] == out["first_bucket_bytes"] == 10 << 20


def test_buckets_help_says_param_bytes_are_bytes():
    p = cli("buckets", "--help")
    assert "BYTES" in p.stdout and "MiB" in p.stdout


# ---- Stage 8: calc, presets, nccl-tests ---------------------------------------------------------

CALC_KEYS = {
    "gradient_bytes",
    "allreduce_s",
    "algbw_GBps",
    "busbw_GBps",
    "lower_bound_s",
    "compute_s",
    "share_no_overlap",
    "share_with_overlap",
    "algorithm",
}


def test_calc_reproduces_stage_one_and_accepts_any_spelling():
    p = cli("calc", "--params", "7e9", "--gpus", "64", "--algorithm", "ring", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out.keys() >= CALC_KEYS
    assert out["allreduce_s"] == pytest.approx(0.55125) and out["algorithm"] == "ring"
    a = json.loads(cli("calc", "--model", "llama-3-8b", "--gpus", "16", "--gpu", "h100",
                       "--json").stdout)  # fmt: skip
    b = json.loads(cli("calc", "--model", "Llama 3 8B", "--gpus", "16", "--json").stdout)
    assert a == b and a["params"] == 8_030_261_248
    auto = json.loads(
        cli(
            "calc",
            "--model",
            "gpt2-xl",
            "--gpus",
            "64",
            "--algorithm",
            "auto",
            "--nic-gbps",
            "200",
            "--grad-dtype",
            "fp32",
            "--json",
        ).stdout  # fmt: skip
    )
    assert auto["algorithm"] == "multi-ring" and auto["gradient_bytes"] == 4 * 1_557_611_200


def test_presets_list_models_gpus_and_networks_with_sources():
    out = json.loads(cli("presets", "--json").stdout)
    assert set(out) == {"models", "gpus", "networks"}
    for group in out.values():
        assert all(item["name"] and item["source"] for item in group)
    assert {m["name"] for m in out["models"]} >= {"GPT-2 XL", "Llama 3 405B", "Mistral 7B"}
    assert all(m["params"] == m["published"] for m in out["models"])
    h100 = next(g for g in out["gpus"] if g["name"] == "H100 SXM")
    assert h100["link_gbps"] == 450 and h100["peak_bf16_tflops"] == 989
    assert [n["gbits"] for n in out["networks"]] == [100, 200, 400, 800]


def test_ddp_model_accepts_any_spelling():
    p = cli("ddp", "--model", "GPT-2 small", "--gpus", "8", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["model"] == "gpt2"


def test_nccl_tests_reads_a_file_and_stdin():
    data = "tests/data/allreduce_mpirun.txt"
    out = json.loads(cli("nccl-tests", data, "--json").stdout)
    assert out["gpus"] == 16 and len(out["rows"]) == 21
    assert set(out["rows"][0]) >= {"size_bytes", "time_us", "algbw_GBps", "busbw_GBps", "in_place"}
    assert set(out["fit"]) >= {"latency_us", "busbw_GBps"}
    assert [s["line"] for s in out["skipped"] if s["kind"] == "unreadable"] == [41]
    with open(data) as f:
        piped = json.loads(cli("nccl-tests", "-", "--json", stdin=f.read()).stdout)
    assert piped == out
    two = json.loads(cli("nccl-tests", "tests/data/allreduce_two_runs.txt", "--json").stdout)
    assert len(two["runs"]) == 2 and two["rows"] == two["runs"][0]["rows"]


def test_nccl_tests_errors_exit_2():
    p = cli("nccl-tests", "tests/data/allreduce_rows_only.txt", "--json")
    assert p.returncode == 2 and "--gpus" in p.stderr and p.stderr.count("\n") == 1
    ok = cli("nccl-tests", "tests/data/allreduce_rows_only.txt", "--gpus", "32", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["gpus"] == 32
    big = cli("nccl-tests", "-", "--json", stdin="x" * 5_000_001)
    assert big.returncode == 2 and "1 MB" in big.stderr and big.stderr.count("\n") == 1
    missing = cli("nccl-tests", "/nonexistent/log.txt")
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_cli_busbw_prints_the_contract_keys(capsys):
    main(["busbw", "--gpus", "8", "--bytes", "14e9", "--time-us", "66216", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out.keys() >= {"algbw_GBps", "busbw_GBps", "factor"}
    assert out["busbw_GBps"] == pytest.approx(14e9 / 66216e-6 / 1e9 * 1.75)
    main(["busbw", "--gpus", "8", "--bytes", "8e9", "--time-us", "1e5", "--collective",
          "allgather", "--json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["busbw_GBps"] == pytest.approx(80 * 7 / 8)  # S is the total for all-gather


def test_calc_help_states_the_default_it_runs(capsys):
    """The help's sentence about the default algorithm names the one a bare call uses."""
    import re

    from allreduce_explainer import cli

    with pytest.raises(SystemExit):
        cli.main(["calc", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    said = re.search(r"--algorithm (\S+?):", text).group(1)
    assert cli.main(["calc", "--params", "7e9", "--gpus", "64", "--json"]) == 0
    ran = json.loads(capsys.readouterr().out)["algorithm"]
    assert said == ran == "nccl"
