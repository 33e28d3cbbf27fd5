"""The CLI's subcommands are generated from the api's specs: walking each spec, a value the spec
refuses ends with status 2 and one line naming a flag of that subcommand, the one given; and an
unset flag has the api function's own default."""

import argparse
import inspect
from pathlib import Path

import pytest

from allreduce_explainer import api, cli
from allreduce_explainer.params import POSITIVE, REQUIRED, Param
from allreduce_explainer.training import calculator

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
}


def subparser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def flags(command: str) -> set[str]:
    """Every flag of the subcommand, and its positional arguments by name."""
    actions = subparser(command)._actions
    return {s for a in actions for s in a.option_strings} | {
        a.dest for a in actions if not a.option_strings
    }


def exposed() -> list[tuple[str, Param]]:
    """Every parameter a subcommand sets from its command line."""
    return [
        (command, p)
        for command, s in cli.SPECS.items()
        for p in s.values()
        if any(p.name == a.dest for a in subparser(command)._actions)
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
        argv = [command, *base, flag, value]
    else:  # a positional argument: the algorithm
        argv = [command, value, *BASE[command][1:]]
    line = error_line(argv, capsys)
    named = line.split("argument ", 1)[1].split(":", 1)[0]
    assert named == flag and named in flags(command), line


def test_every_subcommand_sets_some_of_its_spec():
    assert {c for c, _ in exposed()} == set(cli.SPECS)
    assert len(exposed()) > 50


def api_defaults(command: str) -> dict:
    """The api function's own defaults, from its signature (and the functions it passes its
    keywords to), by the spec's names."""
    fns = {
        "simulate": [api.simulate, api.topology],
        "cost": [api.estimate, api.topology],
        "busbw": [api.busbw],
        "buckets": [api.buckets],
        "ddp": [api.ddp],
        "calc": [api.calc, calculator.calculate, calculator.cluster_for],
        "shard": [api.shard],
        "nccl-tests": [api.nccl_tests],
        "nccl-debug": [api.nccl_debug],
        "orders": [api.orders],
    }[command]
    out: dict = {}
    for f in reversed(fns):
        for k, p in inspect.signature(f).parameters.items():
            if p.default is not inspect.Parameter.empty:
                out[k] = p.default
    return out


@pytest.mark.parametrize("command", sorted(cli.SPECS))
def test_unset_flags_take_the_api_defaults(command):
    a = cli.parser().parse_args([command, *BASE[command]])
    given = {arg.lstrip("-").replace("-", "_") for arg in BASE[command]}
    defaults = api_defaults(command)
    checked = 0
    for _, p in (x for x in exposed() if x[0] == command):
        if p.name in given or p.default is REQUIRED:
            continue
        assert getattr(a, p.name) == defaults[p.name], p.name
        checked += 1
    assert checked >= 1


def test_required_flags_stay_required(capsys):
    """Some flags the api defaults are required on the command line, as they always were."""
    assert "--model" in error_line(["ddp", "--gpus", "8"], capsys)
    assert "--gpus" in error_line(["ddp", "--model", "gpt2"], capsys)
    assert "--gpus" in error_line(["calc", "--model", "gpt2"], capsys)


def test_a_cross_check_names_the_flag_too(capsys):
    """Whole servers: a check after the spec's names --gpus."""
    line = error_line(["shard", "--model", "gpt2", "--gpus", "12", "--gpus-per-node", "8"], capsys)
    assert line.startswith("allreduce-explainer: error: argument --gpus: 12 GPUs do not fill")
