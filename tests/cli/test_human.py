"""What a reader at a terminal sees: every README example's human view reads as prose and tables
(no float in exponent form, no Python repr, no bare JSON key, 80 columns; its --json is held by
test_readme_golden.py); an error under --json is one JSON object; --version; a closed pipe is
quiet."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import readme_examples as ex

import allreduce_explainer
from allreduce_explainer import api
from allreduce_explainer.cli import COMMANDS, main
from allreduce_explainer.cli.views import table

EXPONENT = re.compile(r"\b\d+(\.\d+)?e[+-]?\d+\b", re.I)
# a Python dict, list, None or bool as repr prints them; "[N items]"; not "[collnet_off]" or a
# log line's "[1,0]" (a finding's code, verbatim evidence)
REPRS = re.compile(r"\{'|\['|\[[^\]\n]*, [^\]\n]*\]|\bNone\b|\bTrue\b|\bFalse\b|\d items\]")
# a figure at a line's end whose unit starts the next: "448\n  GB/s"
# a GPU's or a model's name torn at a line's end ("H100\nSXM"), each way it could be torn
NAMES = [n["name"] for group in ("gpus", "models") for n in api.presets()[group]]
TORN_NAMES = {n[:i] + "\n" + n[i + 1 :] for n in NAMES for i, c in enumerate(n) if c == " "}
TORN = re.compile(r"\d\n *(?:[KMGT]i?B|[KMGT]B/s|Gb/s|TFLOP/s|B|s|ms|µs|us|ns|%|ulp)(?![\w/])")
EXAMPLES = [line for line in ex.lines() if " --help" not in line]


def marks(line: str) -> list:
    return [pytest.mark.chromium] if " figure " in line else []  # Kaleido draws with Chromium


CASES = [pytest.param(line, marks=marks(line), id=line.split()[1]) for line in EXAMPLES]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def snake_keys(result: dict) -> set[str]:
    """The JSON's keys: a view that prints one bare has printed the JSON, not read it."""
    return {p.rsplit(".", 1)[-1].removesuffix("[]") for p in ex.key_paths(result)} - {""}


def reads_well(out: str) -> None:
    """No float in exponent form, no Python repr, no figure torn from its unit nor a name from
    its second word, nothing wider than 80 columns."""
    assert out.strip()
    assert not EXPONENT.search(out), EXPONENT.search(out).group()
    assert not REPRS.search(out), REPRS.search(out).group()
    assert not TORN.search(out), TORN.search(out).group()
    flat = re.sub(r"\n +", "\n", out)
    assert not [n for n in TORN_NAMES if n in flat]
    assert max(len(s) for s in out.splitlines()) <= 80, out


@pytest.mark.parametrize("line", CASES)
def test_a_readme_example_reads_as_prose_and_tables(line, tmp_path, capsys):
    argv = ex.argv(line, tmp_path)
    code, out, err = run([a for a in argv if a != "--json"], capsys)
    assert code == 0 and err == "", err
    reads_well(out.replace(str(tmp_path), ""))
    if "--json" in argv:
        code, text, _ = run(argv, capsys)
        keys = {k for k in snake_keys(json.loads(text)) if "_" in k}
        bare = sorted(k for k in keys if re.search(rf"(?<![\w-]){k}(?![\w-])", out))
        assert not bare, bare


OTHER_CASES = [  # the views' other branches: no prediction, no NCCL keys, a log that lacks most
    ["calc", "--params", "7e9", "--gpus", "64", "--algorithm", "ring"],
    ["calc", "--model", "gpt2", "--gpus", "8", "--algorithm", "auto", "--gpu", "mi300x"],
    ["nccl-tests", str(ex.DATA / "allreduce_mpirun.txt")],
    ["nccl-tests", str(ex.DATA / "allreduce_rows_only.txt"), "--gpus", "32"],
    ["nccl-tests", str(ex.DATA / "nccl-tests" / "dgx-spark-103-2xgb10-newest-header.txt")],
    ["nccl-debug", str(ex.DATA / "nccl-debug" / "nccl-1453-3x8xh100-tuning-lines.txt")],
    ["shard", "--model", "gpt2", "--gpus", "8", "--comm-model", "ring"],
    ["orders", "--gpus", "8", "--length", "40", "--kind", "wide"],
    ["cost", "tree", "--gpus", "16", "--bytes", "1e6"],
    ["ddp", "--model", "resnet50", "--gpus", "8"],
    ["nccl", "--gpus", "8", "--bytes", "1K", "--algorithm", "Ring"],
    ["simulate", "naive", "--gpus", "3", "--dtype", "fp32", "--trace"],
]


@pytest.mark.parametrize("argv", OTHER_CASES, ids=lambda a: a[0])
def test_other_cases_read_as_prose_and_tables(argv, capsys):
    code, out, err = run(argv, capsys)
    assert code == 0 and err == "", err
    reads_well(out)


@pytest.mark.parametrize("algorithm", ["naive", "ring", "multi-ring", "tree", "hierarchical"])
def test_a_formula_wraps_between_its_terms(algorithm, capsys):
    """cost's formula, wrapped at 80 columns, is the JSON's formula, each line but the last
    ending a term or an argument: never "S/(g N" above "B_inter)"."""
    argv = ["cost", algorithm, "--gpus", "64", "--gpus-per-node", "8", "--bytes", "14e9"]
    _, text, _ = run([*argv, "--json"], capsys)
    _, out, _ = run(argv, capsys)
    lines = out.split("formula", 1)[1].splitlines()
    lines = [line.strip() for line in lines[:1] + [x for x in lines[1:] if x.startswith("   ")]]
    assert " ".join(lines) == json.loads(text)["formula"]
    assert all(line.endswith(("+", ",", ";")) for line in lines[:-1]), lines


HELPS = [[], *(c.name.split() for c in COMMANDS)]


@pytest.mark.parametrize("argv", HELPS, ids=lambda a: " ".join(a) or "main")
def test_every_help_fits_80_columns(argv, capsys, monkeypatch):
    """argparse wraps the prose at the terminal's width, but not a usage line's "{a,b,...}" nor
    a word longer than a line: those are the CLI's to keep short."""
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80, out


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (
            ["calc", "--params", "7e9", "--gpus", "60"],
            "--gpus",
        ),  # the api refuses: not whole servers
        (["calc", "--params", "7e9", "--gpus", "x"], "--gpus"),  # argparse refuses: not a number
        (["nccl", "--gpus", "8"], "--bytes"),  # one of --bytes, --sizes is required
        (["cost", "fancy", "--gpus", "8", "--bytes", "1"], "algorithm"),
        (["nccl-tests", "/nonexistent/log.txt"], "FILE|-"),
    ],
)
def test_under_json_an_error_is_one_json_object_naming_the_flag(argv, flag, capsys):
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    error = json.loads(err)["error"]
    assert error["flag"] == flag and error["message"] and "Traceback" not in err
    code, _, text = run(argv, capsys)  # the same error as text names the same flag
    assert code == 2 and text.startswith("allreduce-explainer: error: ") and flag in text


def test_the_help_states_the_exit_statuses(capsys):
    for argv in (["--help"], ["calc", "--help"], ["exercises", "export", "--help"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        text = " ".join(capsys.readouterr().out.split())
        assert e.value.code == 0 and "exit status: 0 done; 2 " in text and '"error"' in text


def test_version_is_the_packages():
    p = subprocess.run(
        [sys.executable, "-m", "allreduce_explainer", "--version"], capture_output=True, text=True
    )
    assert p.returncode == 0
    assert p.stdout.strip() == f"allreduce-explainer {allreduce_explainer.__version__}"


@pytest.mark.parametrize("json_flag", [["--json"], []])
def test_a_closed_pipe_ends_quietly_with_status_0(json_flag):
    """The reader has gone before the first line is written, as `| head -1` leaves a long
    output: Python's EPIPE on the first write, never a traceback."""
    argv = ["simulate", "ring", "--gpus", "64", *json_flag]
    p = subprocess.Popen(
        [sys.executable, "-m", "allreduce_explainer", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()  # before the interpreter has started: its writes meet a closed pipe
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and err == ""


def test_a_table_without_rows_is_its_header():
    """A table of no rows prints its header at the header's widths (it raised ValueError)."""
    assert table(["size\n(B)", "busbw\n(GB/s)"], []) == ["size   busbw", " (B)  (GB/s)"]


NUM = r"\d[\d,.^e+]*\d|\d"  # 4,096 0.38 1e+13 2^63
RANGE = re.compile(rf"(above 0|0 or more|at least ({NUM})|at most ({NUM})|({NUM}) to ({NUM}))")


def _read(number: str) -> float:
    """A limit as the help writes it: 4,096, 0.38, 1e+13, 2^63."""
    base, _, power = number.replace(",", "").partition("^")
    return float(base) ** int(power) if power else float(base)


def _option_help(out: str, flag: str) -> str:
    """One option's help in a rendered --help, its lines joined: from "  --flag" to the next
    option (a word torn at a hyphen rejoined)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(flag + " "))
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"\s*-", lines[i])), len(lines))
    text = " ".join(line.strip() for line in lines[start:end])
    return text.replace("- ", "-")


NUMBER_FLAGS = [
    (c, p)
    for c in COMMANDS
    for p in c.flags()
    if p.kind in ("int", "float") and p.cli_flag.startswith("-") and p.label
]


@pytest.mark.parametrize(
    ("command", "param"), NUMBER_FLAGS, ids=lambda x: getattr(x, "name", getattr(x, "cli_flag", ""))
)
def test_every_number_flag_shows_its_range_in_its_unit(command, param, capsys, monkeypatch):
    """--help shows each number's range as its Param states it (issue 46, item 2), in the flag's
    unit: the library's lo and hi, times the flag's factor where the flag takes another unit
    (the card: Gb/s on the command line, GB/s in the library), within 80 columns."""
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main([*command.name.split(), "--help"])
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80
    text = _option_help(out, param.cli_flag)
    base = command.spec[param.name]
    unit, k = base.flag_unit or (base.unit, 1)
    lo = None if base.lo is None else base.lo if base.lo <= 1e-300 else base.lo * k
    hi = None if base.hi is None else base.hi * k
    if lo is None and hi is None:
        assert not RANGE.search(text.rsplit("(", 1)[-1]), text
        return
    found = RANGE.findall(text)
    assert found, text
    whole, at_least, at_most, a, b = found[-1]
    if whole == "above 0":
        assert 0 < lo <= 1e-300 and hi is None, text
    elif whole == "0 or more":
        assert lo == 0 and hi is None, text
    elif at_least:
        assert _read(at_least) == lo and hi is None, text
    elif at_most:  # "above 0, at most H"
        assert "above 0, at most" in text and 0 < lo <= 1e-300, text
        assert _read(at_most) == pytest.approx(hi, rel=1e-12), text
    else:
        assert (_read(a), _read(b)) == pytest.approx((lo, hi), rel=1e-12), text
    if unit and unit not in base.label:
        assert re.search(rf"{re.escape(whole)}\S* {re.escape(unit)}", text), text
