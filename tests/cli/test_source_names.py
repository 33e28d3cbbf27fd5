"""One name per source of time through the doors beside the pages (sitebuild/doors.py): the
command line's help and human output, and the notebooks. Each door as it is holds no retired
name, and a retired name planted in each is refused, naming where it is."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
import readme_examples as ex
from cli.test_specs import BASE  # noqa: E402  (tests/ is on the path)

from allreduce_explainer.cli import registry, views
from sitebuild import doors

PLANT = "NCCL's model"  # the fitted time's old name on pages 7-10 and in `ddp` and `shard`


def _refused(texts) -> str:
    with pytest.raises(SystemExit) as e:
        doors.refuse_retired(texts)
    return str(e.value)


def test_the_build_s_doors_hold_no_retired_name():
    doors.refuse_retired_in_doors()  # every command's --help, every notebook cell


def _readers_lines(tmp: Path) -> list[list[str]]:
    """Every README example as a reader reads it at a terminal (without --json), and each
    command's least line."""
    out = []
    for line in ex.lines():
        argv = [a for a in ex.argv(line, tmp) if a != "--json"]
        if not {"--help", "figure", "export"} & set(argv):
            out.append(argv)
    skip = ("figure", "exercises export")  # a drawing; a bank written to a file
    return out + [[*c.split(), *b] for c, b in BASE.items() if c not in skip]


def test_no_human_output_names_a_source_by_a_retired_name(tmp_path):
    lines = _readers_lines(tmp_path)
    assert len(lines) > 15
    doors.refuse_retired(doors.cli_output(argv) for argv in lines)


def _planted(monkeypatch, **changes) -> None:
    """The `ddp` command with `changes`, wherever the command line reads its records."""
    from allreduce_explainer.cli import generate

    old = registry.BY_NAME["ddp"]
    new = replace(old, **changes)
    commands = tuple(new if c is old else c for c in generate.COMMANDS)
    monkeypatch.setattr(generate, "COMMANDS", commands)
    monkeypatch.setitem(generate.BY_NAME, "ddp", new)


def test_a_retired_name_in_a_command_s_help_is_refused(monkeypatch):
    _planted(monkeypatch, description=f"All-reduces timed by {PLANT}.")
    message = _refused(doors.cli_help())
    assert message.startswith("allreduce-explainer ddp --help") and PLANT in message


def test_a_retired_name_in_a_command_s_output_is_refused(monkeypatch):
    _planted(monkeypatch, view=lambda r: views.ddp(r) + f"\n{PLANT}")
    message = _refused([doors.cli_output(["ddp", "--model", "gpt2", "--gpus", "8"])])
    assert message.startswith("allreduce-explainer ddp --model gpt2") and PLANT in message


@pytest.mark.parametrize("where", ["markdown", "code", "output"])
def test_a_retired_name_in_a_notebook_is_refused(where):
    cell = {"cell_type": "markdown" if where == "markdown" else "code", "source": ["x = 1\n"]}
    if where == "output":
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [f"{PLANT}\n"]}]
    else:
        cell["source"].append(f"# timed by {PLANT}\n")
    nb = {"cells": [{"cell_type": "markdown", "source": ["# A lab\n"]}, cell], "metadata": {},
          "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "lab.ipynb").write_text(json.dumps(nb), encoding="utf-8")
        message = _refused(doors.notebook_cells(Path(folder)))
    assert "lab.ipynb, cell 2" in message and PLANT in message
