"""Every command refuses a bad command line the same way: exit 2, nothing on stdout, one line on
stderr naming the flag (or what is wrong), no traceback and no file written. One table per
command: its bad flags and what the refusal must say."""

from __future__ import annotations

import json

import pytest

from allreduce_explainer import api
from allreduce_explainer.cli import COMMANDS, main
from helpers import refusal

BUCKETS_AND_DDP = [
    (["buckets", "--param-bytes", "1,x"], "--param-bytes"),
    (["buckets", "--param-bytes", "1,-2"], "--param-bytes"),
    (["buckets", "--param-bytes", ""], "--param-bytes"),
    (["buckets", "--param-bytes", "1", "--bucket-cap-mb", "-1"], "--bucket-cap-mb"),
    (["buckets", "--param-bytes", "1", "--first-bucket-mb", "nan"], "--first-bucket-mb"),
    (["buckets"], "--param-bytes"),
    (["ddp", "--model", "gpt3", "--gpus", "8"], "--model"),
    (["ddp", "--model", "gpt2", "--gpus", "0"], "--gpus"),
    (["ddp", "--model", "gpt2", "--gpus", "12", "--gpus-per-node", "8"], "--gpus"),
    (["ddp", "--model", "gpt2", "--gpus", "8", "--mfu", "2"], "--mfu"),
    (["ddp", "--model", "gpt2", "--gpus", "8", "--batch", "0"], "--batch"),
    (["ddp", "--model", "gpt2", "--gpus", "8", "--peak-tflops", "-1"], "--peak-tflops"),
    # a parameter the call cannot apply is refused, never ignored (issue 46, item 2): NCCL's
    # timing has its own latencies, so ddp offers none
    (["ddp", "--model", "gpt2", "--gpus", "16", "--gpus-per-node", "8", "--intra-latency", "1"],
     "unrecognized arguments: --intra-latency"),
    (["cost", "ring", "--gpus", "64", "--bytes", "1e3", "--inter-latency", "5"],
     "argument --inter-latency: applies between servers, and all 64 GPUs are in one server"),
    (["cost", "tree", "--gpus", "8", "--bytes", "1e3", "--nic-gbps", "80"], "argument --nic-gbps"),
    (["simulate", "ring", "--inter-latency", "5"], "argument --inter-latency"),
]  # fmt: skip

CALC = [
    (["--model", "llama3", "--gpus", "8"], "--model"),
    (["--params", "7e9", "--gpus", "60"], "--gpus"),
    (["--params", "7e9", "--gpus", "8", "--gpu", "v100"], "--gpu"),
    (["--params", "7e9", "--gpus", "8", "--mfu", "2"], "--mfu"),
    (["--params", "7e9", "--gpus", "8", "--nic-gbps", "0"], "--nic-gbps"),
    (
        ["--params", "7e9", "--gpus", "8", "--inter-latency", "5"],
        '"flag": "--inter-latency", "message": "applies between servers, and all 8 GPUs are in one',
    ),
    (["--params", "1", "--gpus", "8"], "--params"),
    (["--model", "gpt2", "--params", "7e9", "--gpus", "8"], "--params"),
]

NCCL = [
    (["--gpus", "8", "--gpu", "A100", "--bytes", "8G", "--algorithm", "NVLS"], "--algorithm"),
    (["--gpus", "8", "--bytes", "8G", "--protocol", "LL256"], "--protocol"),
    (["--gpus", "8", "--bytes", "1X"], "--bytes"),
    (["--gpus", "8", "--sizes", "1K:8"], "--sizes"),
    (["--gpus", "8", "--gpu", "MI300X", "--bytes", "8"], "--gpu"),
    (["--gpus", "12", "--gpus-per-node", "8", "--bytes", "8"], "--gpus"),
    (["--gpus", "8", "--bytes", "8", "--sizes", "8:16"], "--sizes"),
    (["--gpus", "16", "--bytes", "8", "--cpu", "arm"], "--cpu"),
]

SHARD = [
    (["--model", "gpt2", "--gpus", "0"], "--gpus"),
    (["--model", "gpt2", "--gpus", "12"], "--gpus"),
    (["--model", "nope", "--gpus", "8"], "--model"),
    (["--model", "resnet50", "--gpus", "8"], "--model"),
    (["--model", "gpt2", "--gpus", "8", "--nic-gbps", "fast"], "--nic-gbps"),
    (["--model", "gpt2", "--gpus", "8", "--nic-gbps", "0"], "--nic-gbps"),
    (["--model", "gpt2", "--gpus", "8", "--gpu", "tpu"], "--gpu"),
    (["--model", "gpt2", "--gpus", "8", "--gpus-per-node", "0"], "--gpus-per-node"),
    (["--model", "gpt2", "--gpus", "8", "--mfu", "2"], "--mfu"),
    (["--gpus", "8"], "--model"),
]

FIGURE = [
    (["nope", "--out", "x.svg"], "argument WIDGET: unknown widget"),
    (["ring_reduce_scatter", "--out", "x.svg"], "draws no chart"),
    (["scaling", "--out", "x.pdf"], "argument --out"),
    (["scaling", "--gpus", "7x", "--out", "x.svg"], "argument --gpus"),
    (["scaling", "--colour", "red", "--out", "x.svg"], "argument --colour"),
    (["scaling", "stray", "--out", "x.svg"], "argument WIDGET: unexpected 'stray'"),
    (["ddp_buckets", "--figure", "nope", "--out", "x.svg"], "argument --figure"),
    (["scaling", "--theme", "blue", "--out", "x.svg"], "argument --theme"),
    (["scaling"], "--out"),
]

EXPORT = [
    (["--format", "pdf", "--kinds", "faster"], "argument --format"),
    (["--format", "gift", "--kinds", "nope"], "argument --kinds"),
    (["--format", "gift", "--kinds", "faster", "--count", "0"], "argument --count"),
    (["--format", "gift", "--kinds", "faster", "--seed", "-3"], "argument --seed"),
    (["--format", "gift", "--kinds", "faster", "--seed", "1.5"], "argument --seed"),
    (["--format", "gift", "--kinds", "faster", "--places", "/no/such.json"], "argument --places"),
]


def command_lines(command: list[str], table: list, tail: tuple[str, ...] = ()) -> list:
    """Each row of a command's table as (the whole command line, what its refusal says)."""
    return [([*command, *args, *tail], said) for args, said in table]


@pytest.mark.parametrize(
    ("argv", "said"),
    command_lines([], BUCKETS_AND_DDP)
    + command_lines(["calc"], CALC, ("--json",))
    + command_lines(["nccl"], NCCL)
    + command_lines(["shard"], SHARD, ("--json",))
    + command_lines(["figure"], FIGURE)
    + command_lines(["exercises", "export"], EXPORT, ("--out", "x")),
)
def test_a_bad_command_line_exits_2_with_one_line_naming_it(
    argv, said, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert said in refusal(capsys, argv)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("command", ["nccl-tests", "nccl-debug"])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_log_without_what_the_command_reads_is_refused_naming_the_file(
    command, json_flag, capsys, tmp_path
):
    """A file with no all_reduce_perf rows (nccl-tests) or no NCCL_DEBUG=INFO lines
    (nccl-debug): exit 2 and a line that names the file, in either mode (nccl-tests used to end
    in a traceback, or exit 0 under --json)."""
    log = tmp_path / "notes.log"
    log.write_text("# a header\nnothing NCCL printed\n")
    err = refusal(capsys, [command, str(log), *json_flag])
    assert str(log) in err
    assert ("all_reduce_perf rows" if command == "nccl-tests" else "NCCL_DEBUG=INFO") in err


def test_a_binary_file_under_the_limit_is_not_called_too_large(capsys, tmp_path):
    """800,000 bytes that are not UTF-8: read (they decode to 800,000 U+FFFD, 2.4 MB as UTF-8),
    then refused for what they lack, not for a size they do not have."""
    log = tmp_path / "core.bin"
    log.write_bytes(bytes(range(128, 256)) * 6250)
    err = refusal(capsys, ["nccl-debug", str(log)])
    assert "has no NCCL_DEBUG=INFO lines" in err and "bytes" not in err


GONE = "--inter-bw is gone: give the card's rate in Gb/s with --nic-gbps (8 × GB/s)"
CARD_COMMANDS = [c for c in COMMANDS if any(p.cli_flag == "--nic-gbps" for p in c.flags())]


def test_every_command_with_a_network_card_takes_it_as_nic_gbps_in_gbit():
    """One flag and one unit for the card (issue 46, item 2): each command that offers it, the
    three whose library keyword is inter_bw in GB/s among them, calls it --nic-gbps, in Gb/s."""
    names = {c.name for c in CARD_COMMANDS}
    assert {"simulate", "cost", "ddp", "calc", "shard", "nccl", "nccl-tests", "nccl-debug"} <= names
    for c in CARD_COMMANDS:
        (card,) = [p for p in c.flags() if p.cli_flag == "--nic-gbps"]
        assert card.unit == "Gb/s", c.name
        assert not [p for p in c.flags() if p.cli_flag == "--inter-bw"], c.name


@pytest.mark.parametrize("command", CARD_COMMANDS, ids=lambda c: c.name)
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_the_old_card_flag_is_refused_naming_the_new_one(command, json_flag, capsys):
    """--inter-bw (GB/s) is gone from every command: exit 2 and how to give the card now, even
    where the rest of the line would be refused too."""
    err = refusal(capsys, [*command.name.split(), "--inter-bw", "50", *json_flag])
    if json_flag:
        e = json.loads(err)["error"]
        assert e["flag"] == "--inter-bw" and f"--inter-bw {e['message']}" == GONE
    else:
        assert err == f"allreduce-explainer: error: {GONE}\n"


@pytest.mark.parametrize(
    ("argv", "inter_bw"),
    [
        (["cost", "ring", "--gpus", "16", "--gpus-per-node", "8", "--bytes", "1e9"], 50.0),
        (["cost", "ring", "--gpus", "16", "--gpus-per-node", "8", "--bytes", "1e9",
          "--nic-gbps", "800"], 100.0),
        (["cost", "ring", "--gpus", "16", "--gpus-per-node", "8", "--bytes", "1e9",
          "--nic-gbps", "1"], 0.125),
    ],
)  # fmt: skip
def test_the_card_in_gbit_is_the_librarys_inter_bw_in_gbyte(argv, inter_bw, capsys):
    """--nic-gbps R runs the library with inter_bw = R / 8 GB/s: the CLI's --json is the
    library's answer for that keyword."""
    assert main([*argv, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    args = dict(zip(argv[2::2], argv[3::2]))
    want = api.estimate(
        algorithm="ring", gpus=int(args["--gpus"]), bytes=float(args["--bytes"]),
        gpus_per_node=int(args["--gpus-per-node"]), inter_bw=inter_bw,
    )  # fmt: skip
    assert got == json.loads(json.dumps(want))
    n = int(args["--gpus"])  # the ring across servers: 2(n-1) steps of S/n over the card
    assert got["time_s"] == pytest.approx(
        2 * (n - 1) * float(args["--bytes"]) / n / (inter_bw * 1e9)
    )
