"""One name per source of time through every door, not only the pages: the command line's help
(the top level and every command's), its human output for given command lines, the labs'
cells (source and any kept output) and the README. The pages' prose, lesson texts and widgets
are checked where they are rendered (claims.refuse_retired_names); the build calls
`refuse_retired_in_doors` once for the rest, and the tests run the command lines.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from allreduce_explainer import cli
from allreduce_explainer.sources import SOURCES, retired

ROOT = Path(__file__).parents[1]
NOTEBOOKS = ROOT / "labs" / "source"  # each lab's teacher's version, the one source


def refuse_retired(texts: Iterable[tuple[str, str]]) -> None:
    """Fails with the place and the names when any (place, text) names a source of time by a
    retired name (allreduce_explainer/sources.py)."""
    for where, text in texts:
        found = retired(text)
        if found:
            names = ", ".join(repr(s.name) for s in SOURCES)
            raise SystemExit(f"{where}: names a source of time as {found}; its names are {names}")


def cli_help() -> Iterator[tuple[str, str]]:
    """The top-level help and every command's, as `--help` prints them."""
    top = cli.parser()
    yield "allreduce-explainer --help", top.format_help()
    yield from _subcommands(top, "allreduce-explainer")


def _subcommands(p: argparse.ArgumentParser, prog: str) -> Iterator[tuple[str, str]]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prog} {name} --help", sub.format_help()
                yield from _subcommands(sub, f"{prog} {name}")


def cli_output(argv: list[str]) -> tuple[str, str]:
    """(the command line, what it prints for a reader) for one command line."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(argv)
    return "allreduce-explainer " + " ".join(argv), out.getvalue()


def notebook_cells(folder: Path = NOTEBOOKS) -> Iterator[tuple[str, str]]:
    """Each cell of each notebook: its source and the text of any output it keeps."""
    for path in sorted(folder.rglob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for k, cell in enumerate(nb["cells"], 1):
            text = "".join(cell.get("source", []))
            for o in cell.get("outputs", []):
                text += "".join(o.get("text", [])) + "".join(
                    o.get("data", {}).get("text/plain", [])
                )
            name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            yield f"{name}, cell {k}", text


def refuse_retired_in_doors() -> None:
    """The build's check of the doors beside the pages: the CLI's help, the notebooks and the
    README (the library's and the command line's front page)."""
    readme = ("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))
    refuse_retired([*cli_help(), *notebook_cells(), readme])
