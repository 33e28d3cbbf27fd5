"""The command line: `allreduce-explainer simulate|cost|busbw ...`, a human view or --json.

Every command is a record in registry.COMMANDS; generate.py builds the parser from those records'
specs, views.py prints each result for a reader. A refused flag ends with status 2 and one line
naming it (under --json, one JSON object on stderr), never a traceback; a closed pipe (`| head`)
ends quietly with status 0.
"""

from __future__ import annotations

import json
import os
import sys

from ..errors import ParamError
from .files import Unavailable, widget_params
from .generate import PROG, Refused, command_of, given, parser
from .registry import BY_NAME, COMMANDS, Command

__all__ = ["BY_NAME", "COMMANDS", "Command", "main", "parser"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in argv
    try:
        try:
            _run(argv, as_json)
        except Refused as e:
            _refuse(e, as_json)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader closed the pipe: Python's documented way to end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


def _run(argv: list[str], as_json: bool) -> None:
    """Parse, call the command's function, print its view or its JSON."""
    p = parser()
    known = p.parse_known_args(argv) if argv[:1] == ["figure"] else (p.parse_args(argv), [])
    a, extra = known
    c = command_of(a)
    args = given(a, c)
    try:
        if c.widget_params:  # the widget's own parameters follow as --name value
            args["params"] = widget_params(extra)
        result = c.call(args)
    except ParamError as e:
        raise Refused(c.flag_of(e.field), e.message) from None
    except Unavailable as e:
        raise Refused(None, str(e)) from None
    text = json.dumps(result) if as_json and c.json else c.view(result)
    if text:  # a view of a file written to stdout says nothing after it
        print(text)


def _refuse(e: Refused, as_json: bool):
    """One line on stderr, status 2: the flag and why, as text or as one JSON object."""
    if as_json:
        print(json.dumps({"error": {"flag": e.flag, "message": e.message}}), file=sys.stderr)
    else:
        print(f"{PROG}: error: {e.line}", file=sys.stderr)
    raise SystemExit(2)
