"""The parser, generated from the registry: each command's flags from its Params (the flag, its
type, default, choices and help), the only place that calls add_argument. A bad flag raises
Refused naming it, which main prints as one line or, under --json, as one JSON object."""

from __future__ import annotations

import argparse
import math
import re
import sys
from importlib import metadata

from ..params import REQUIRED, Param
from .registry import BY_NAME, COMMANDS, GROUPS, Command

PROG = "allreduce-explainer"
LONG = 24  # characters of a choice's values past which --help names it by a metavar
EXIT_STATUS = (
    "exit status: 0 done; 2 a flag, file or log refused (one line on stderr naming the flag: "
    'with --json, one JSON object {"error": {"flag": ..., "message": ...}}) or a figure that '
    "cannot be drawn; 1 anything else, a bug worth reporting."
)


class Refused(Exception):
    """A flag the command line refuses: its name (None if no one flag is at fault), why, and the
    line a reader sees ("argument --gpus: must be ...", or argparse's own sentence)."""

    def __init__(self, flag: str | None, message: str, line: str = ""):
        super().__init__(message)
        self.flag, self.message = flag, message
        self.line = line or (f"argument {flag}: {message}" if flag else message)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise Refused(*_blame(message), line=message)


def _blame(message: str) -> tuple[str | None, str]:
    """argparse's message split into the flag it names and the rest."""
    m = re.match(r"argument ([^:]+): (.*)", message, re.S)
    if m:
        return m.group(1).split("/")[0], m.group(2)
    m = re.search(r"(?:required|unrecognized arguments|one of the arguments):? (\S+)", message)
    return (m.group(1).rstrip(","), message) if m else (None, message)


def version() -> str:
    """The installed package's version, else the source's (run from a checkout)."""
    try:
        return metadata.version(PROG)
    except metadata.PackageNotFoundError:  # the package's __init__, loaded before any module
        return sys.modules[__package__.split(".")[0]].__version__


def _number(text: str) -> float:
    """A number in any notation Python reads (14e9, 1.5, 8)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _whole(text: str) -> int:
    value = _number(text)
    if value != int(value):
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return int(value)


def _type(p: Param):
    """What argparse reads the flag's text as, from the kind (a choice of numbers: a number)."""
    if p.kind == "int" or (p.kind == "choice" and all(isinstance(v, int) for v in p.values())):
        return _whole
    return _number if p.kind == "float" else None


def _help(p: Param, required: bool = False) -> str:
    """The label, then the range, the unit (unless the label says it) and the default:
    "GPUs (1 to 4,096; default 4)"; a long choice's values too, which the usage line names only
    by its metavar."""
    notes = [f"one of {', '.join(map(str, p.values()))}"] if _long(p) else []
    unit = p.unit if p.unit not in p.label else ""
    notes += [" ".join(filter(None, (p.range_text(), unit)))] if p.range_text() or unit else []
    if not required and all(p.default is not v for v in (None, REQUIRED, False, "")):
        notes.append(f"default {_text(p.default)}")
    if not notes:
        text = p.label
    elif p.label.endswith(")"):  # one parenthesis, not two: "(default: min(N, 8); 1 to 64)"
        text = f"{p.label[:-1]}; {'; '.join(notes)})"
    else:
        text = f"{p.label} ({'; '.join(notes)})"
    return text.replace("%", "%%")


def _long(p: Param) -> bool:
    """A flag's choice whose "{a,b,...}" would stretch the usage line past a terminal's 80
    columns (a positional argument keeps its choices: a refusal names it by its metavar)."""
    if not p.choices or p.metavar or not p.cli_flag.startswith("-"):
        return False
    return len(",".join(map(str, p.values()))) > LONG


def _text(value) -> str:
    """A default as the help prints it: 16,384, 0.4, gpt2."""
    if isinstance(value, float):
        return f"{value:g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


class _Gone(argparse.Action):
    """A flag a Param no longer has: refused, saying how to give the value now."""

    def __call__(self, parser, namespace, values, option_string=None):
        old, how = self.const
        raise Refused(old, f"is gone: {how}", line=f"{old} is gone: {how}")


def _add(parser, p: Param, required: bool = False, grouped: bool = False) -> None:
    """One flag (or positional argument) from its Param; the value lands under the Param's name."""
    if p.gone:  # hidden from --help; given, it is refused before any value is read
        parser.add_argument(p.gone[0], action=_Gone, const=p.gone, nargs="?",
                            dest=argparse.SUPPRESS, help=argparse.SUPPRESS)  # fmt: skip
    kw: dict = {"help": _help(p, required or grouped)}
    if p.kind == "bool":  # a switch: off unless given
        assert p.default is False, p.name
        parser.add_argument(p.cli_flag, dest=p.name, action="store_true", **kw)
        return
    kw |= {"type": _type(p)}
    if p.choices:
        kw["choices"] = p.values()
    if p.metavar or _long(p):
        kw["metavar"] = p.metavar or p.name.upper()
    if not p.cli_flag.startswith("-"):  # positional: named by the Param, shown by its metavar
        parser.add_argument(p.name, **kw)
        return
    kw |= {"dest": p.name, "default": None if p.default is REQUIRED else p.default}
    if not grouped:
        kw["required"] = required or p.default is REQUIRED
    parser.add_argument(p.cli_flag, **kw)


def _command(sub, c: Command) -> None:
    """One subcommand: its flags in the spec's order, `one_of` as a required exclusive group."""
    s = sub.add_parser(
        c.name.split()[-1], help=c.help, description=c.description or None, epilog=EXIT_STATUS
    )
    group = s.add_mutually_exclusive_group(required=True) if c.one_of else None
    for p in c.flags():
        if p.name in c.one_of:
            _add(group, p, grouped=True)
        else:
            _add(s, p, p.name in c.required)
    if c.json:
        s.add_argument("--json", action="store_true", help="print one JSON object")


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="All-reduce simulated on real vectors, and its cost.",
        epilog=EXIT_STATUS,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    groups: dict[str, argparse._SubParsersAction] = {}
    for c in COMMANDS:
        *group, _ = c.name.split()
        if not group:
            _command(sub, c)
            continue
        if group[0] not in groups:
            g = sub.add_parser(group[0], help=GROUPS[group[0]], epilog=EXIT_STATUS)
            groups[group[0]] = g.add_subparsers(dest="action", required=True, parser_class=_Parser)
        _command(groups[group[0]], c)
    return p


def command_of(a: argparse.Namespace) -> Command:
    """The record of the command a parsed command line runs."""
    name = a.command if getattr(a, "action", None) is None else f"{a.command} {a.action}"
    return BY_NAME[name]


def given(a: argparse.Namespace, c: Command) -> dict:
    """The function's arguments: the namespace's value of each of the command's flags, in the
    library's unit."""
    return {p.name: c.spec.get(p.name, p).from_flag(getattr(a, p.name)) for p in c.flags()}
