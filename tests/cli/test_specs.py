"""The CLI's subcommands are generated from the registry's records and their specs: walking each
spec, a value the spec refuses ends with status 2 and one line naming a flag of that subcommand,
the one given."""

import argparse
import re
from pathlib import Path

import pytest

from allreduce_explainer import cli
from allreduce_explainer.params import POSITIVE, Param

LOG = str(Path(__file__).parents[1] / "data" / "allreduce_current.txt")
DEBUG_LOG = str(
    Path(__file__).parents[1] / "data" / "nccl-debug" / "nccl-tests-188-2x8-2channels-no-nvls.txt"
)
BASE = {  # the least valid command line of each subcommand
    "simulate": ["ring"],
    "cost": ["ring", "--gpus", "8", "--bytes", "1e6"],
    "busbw": ["--gpus", "8", "--bytes", "1e6", "--time-us", "100"],
    "buckets": ["--param-bytes", "100,200"],
    "ddp": ["--model", "gpt2", "--gpus", "8"],
    "calc": ["--model", "gpt2", "--gpus", "8"],
    "shard": ["--model", "gpt2", "--gpus", "8"],
    "nccl-tests": [LOG],
    "nccl-debug": [DEBUG_LOG],
    "orders": [],
    "nccl": ["--gpus", "8", "--bytes", "1K"],
    "figure": ["latency", "--out", "never-written.svg"],
    "exercises export": ["--format", "csv", "--kinds", "ring_time", "--out", "-"],
    "presets": [],
    "topology": ["dgx-a100"],
}


def subparser(command: str) -> argparse.ArgumentParser:
    """The parser of a command, "exercises export" inside its group's."""
    p = cli.parser()
    for word in command.split():
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        p = sub.choices[word]
    return p


def flags(command: str) -> set[str]:
    """Every flag of the subcommand, and its positional arguments by name."""
    actions = subparser(command)._actions
    return {s for a in actions for s in a.option_strings} | {
        a.dest for a in actions if not a.option_strings
    }


def exposed() -> list[tuple[str, Param]]:
    """Every parameter a subcommand sets from its command line."""
    return [
        (c.name, p)
        for c in cli.COMMANDS
        for p in c.spec.values()
        if any(p.name == a.dest for a in subparser(c.name)._actions)
    ]


def refused(p: Param) -> list[str]:
    """Texts of values the spec refuses: below lo, above hi, not one of the choices."""
    if p.choices:
        return ["3" if isinstance(p.values()[0], int) else "nope"]
    out = []
    if p.lo is not None:
        out.append("0" if p.lo == POSITIVE else str(p.lo - 1))
    if p.hi is not None:
        out.append(str(int(p.hi) * 2))
    return out


def error_line(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


CASES = [(c, p, v) for c, p in exposed() for v in refused(p)]


@pytest.mark.parametrize(
    ("command", "param", "value"), CASES, ids=[f"{c}-{p.name}-{v}" for c, p, v in CASES]
)
def test_a_refused_value_names_its_flag(command, param, value, capsys):
    flag = param.cli_flag
    if flag.startswith("-"):
        base = ["--gpus", "8"] if param.name == "params" else BASE[command]  # --model or --params
        argv = [*command.split(), *base, flag, value]
    else:  # a positional argument: the algorithm
        argv = [*command.split(), value, *BASE[command][1:]]
    line = error_line(argv, capsys)
    named = line.split("argument ", 1)[1].split(":", 1)[0]
    assert named == flag and named in flags(command), line


def test_every_command_of_the_registry_is_a_subcommand_with_its_least_command_line(capsys):
    """The registry is the command list: each record is a subcommand, and BASE (the least valid
    command line of each) covers them all."""
    assert set(BASE) == {c.name for c in cli.COMMANDS}
    for c in cli.COMMANDS:
        assert subparser(c.name).prog == f"allreduce-explainer {c.name}"
    assert {c for c, _ in exposed()} == {c.name for c in cli.COMMANDS if c.flags()}
    assert len(exposed()) > 70


def test_only_the_generator_calls_add_argument():
    """Every flag comes from a Param: no module of the CLI writes one by hand."""
    package = Path(cli.__file__).parent
    calls = {
        f.name: len(re.findall(r"\badd_argument\(", f.read_text())) for f in package.glob("*.py")
    }
    assert {name for name, n in calls.items() if n} == {"generate.py"}
    assert calls["generate.py"] <= 6


def test_required_flags_stay_required(capsys):
    """Some flags the api defaults are required on the command line, as they always were."""
    assert "--model" in error_line(["ddp", "--gpus", "8"], capsys)
    assert "--gpus" in error_line(["ddp", "--model", "gpt2"], capsys)
    assert "--gpus" in error_line(["calc", "--model", "gpt2"], capsys)


def test_a_cross_check_names_the_flag_too(capsys):
    """Whole servers: a check after the spec's names --gpus."""
    line = error_line(["shard", "--model", "gpt2", "--gpus", "12", "--gpus-per-node", "8"], capsys)
    assert line.startswith("allreduce-explainer: error: argument --gpus: 12 GPUs do not fill")
