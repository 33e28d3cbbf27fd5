"""The doors onto one result, each opened as its reader opens it: the page's widget through the
bridge the browser's worker calls, the command line through `main(argv)` (its --json and its
human view), the notebook's widget through `show(name, **params).state`.

`disagreements(door, params)` asks every door the same question and returns, as sentences, each
figure on which one door differs from another at the precision it prints; the tests assert the
list is empty, and that a planted error makes it not.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from allreduce_explainer import bridge
from allreduce_explainer.cli import main
from allreduce_explainer.widgets import REGISTRY

from .reading import Reading, read, read_all

NONE = "—"  # what a page prints for a figure with nothing to show (no bytes cross a network)
VALUES = "values"  # a Figure's quantity for a vector of numbers (a stepper's inputs), not a text


@dataclass(frozen=True)
class Figure:
    """One figure the page shows and the command line gives: where each door prints it.

    `page` finds its text in the widget's state (a readout, a summary, a table cell); `index`
    and `quantity` pick the figure in that text. `json` is the value under the command's --json
    key, in SI units (seconds, bytes, bytes/s, a share as a fraction). `human` is the label the
    human view prints it beside (a regular expression; the figure is the first of that quantity
    after it on its line), or None when the human view does not print it."""

    name: str
    page: Callable[[dict], str]
    json: Callable[[dict], float | None]
    quantity: str
    human: str | Callable[[str], str] | None = None
    index: int = 0
    human_index: int = 0
    command: str = ""  # which of the door's command lines prints it, where it has several
    up: bool = False  # a threshold, printed rounded up by every door (the least that suffices)


@dataclass(frozen=True)
class Door:
    """A page widget and the command that asks its question: `argv` maps the widget's
    parameters (as its state echoes them, every one given) to that command line."""

    widget: str
    argv: Callable[[dict], list[str] | dict[str, list[str]]]  # one command line, or several
    figures: tuple[Figure, ...]
    # the values a random state draws from, per parameter, where the spec's range is too wide
    # for a fast test (a 4,096-GPU DDP sweep) or a choice's values are not what the CLI has
    draws: Mapping[str, Callable[[random.Random], object]] = field(default_factory=dict)
    id: str = ""  # the door's name where a widget has two (its widget's name by default)
    vary: tuple[str, ...] = ()  # draw only these parameters (the rest at their defaults)

    @property
    def name(self) -> str:
        return self.id or self.widget


def widget_state(name: str, params: dict) -> dict | None:
    """The page's state, as the worker gets it (bridge.call); None where the page refuses the
    parameters (a random draw that breaks a rule between two of them)."""
    answer = json.loads(bridge.call(name, json.dumps(params)))
    return answer["state"] if answer["ok"] else None


def cli(argv: list[str]) -> str | None:
    """What `allreduce-explainer ARGV` prints, run in this process."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main(argv) == 0
    except SystemExit:  # refused, naming the flag (what the page says "not available" to)
        return None
    return out.getvalue()


def human_figure(text: str, label, quantity: str, index: int = 0) -> Reading:
    """The figure a human view prints beside `label`: the `index`-th of its quantity after the
    label, on the label's line (or in the text `label` finds, a table's cell)."""
    if callable(label):
        return read(label(text), quantity, index)
    m = re.search(label, text)
    assert m, f"the human view prints no {label!r}:\n{text}"
    return read(text[m.end() :].split("\n")[0], quantity, index)


def table_cell(row: str, column: int, unit: str = "") -> Callable[[str], str]:
    """A human table's cell: the `column`-th value (0 the first after the row's label) of the
    line that starts with `row` (a regular expression), with the unit its header names."""

    def text(out: str) -> str:
        m = re.search(rf"^ *{row} ", out, re.M)
        assert m, f"the human view has no row {row!r}:\n{out}"
        cells = out[m.end() :].split("\n")[0].split()
        return f"{cells[column]} {unit}"

    return text


def unit_cell(row: str, column: int = 0) -> Callable[[str], str]:
    """A human table's cell whose unit is its column's, printed once in the head as nccl-tests
    does ("comm\n(ms)"): the head's "(unit)" that ends where the right-aligned cell ends."""

    def text(out: str) -> str:
        m = re.search(rf"^ *{row} ", out, re.M)
        assert m, f"the human view has no row {row!r}:\n{out}"
        line = out[m.start() :].split("\n")[0]
        cells = list(re.finditer(r"\S+", line[m.end() - m.start() :]))
        end = m.end() - m.start() + cells[column].end()
        above = reversed(out[: m.start()].split("\n"))
        unit = next((u.group(1) for head in above
                     for u in re.finditer(r"\((\S+)\)", head) if u.end() == end), "")  # fmt: skip
        return f"{cells[column].group()} {unit}"

    return text


def disagreements(door: Door, params: dict) -> list[str] | None:
    """Each figure on which the page, the command's --json and its human view differ, as a
    sentence naming the door, the figure, the state and both values; None if the page refuses
    the parameters."""
    state = widget_state(door.widget, params)
    if state is None:
        return None
    lines = door.argv(state["params"])
    lines = lines if isinstance(lines, dict) else {"": lines}
    texts = {k: cli(argv) for k, argv in lines.items()}
    data = {k: texts[k] and json.loads(cli([*argv, "--json"])) for k, argv in lines.items()}
    out = []
    for f in door.figures:
        if f.command not in data:  # a command asked for some states only
            continue
        if data[f.command] is None:  # the command refuses the question: so must the page
            shown = f.page(state)
            if read_all(shown) if isinstance(shown, str) else shown:
                out.append(f"page {shown!r} but the command refuses: {' '.join(lines[f.command])}")
            continue
        exact = f.json(data[f.command])
        if exact is None:  # a figure of some states only (NCCL's estimate, for NCCL's choice)
            continue
        text = texts[f.command]
        where = f"{door.widget} {f.name} at {state['params']} ({' '.join(lines[f.command])})"
        if f.quantity == VALUES:  # the numbers themselves: the same list, element for element
            shown = f.page(state)
            if isinstance(shown, str):  # printed: each at the precision it is printed with
                readings = read_all(shown)
                same = len(readings) == len(exact) and all(
                    r.holds(x) for r, x in zip(readings, exact, strict=True)
                )
            else:
                same = shown == exact
            if not same:
                out.append(f"page {shown} but --json {exact}: {where}")
            continue
        if f.page(state).strip() == NONE:  # the page prints none of it: the CLI has nothing
            if exact:
                out.append(f"page {NONE} but --json {exact:.6g}: {where}")
            continue
        shown = read(f.page(state), f.quantity, f.index)
        if not shown.holds(exact, up=f.up):
            out.append(f"page {shown.text!r} but --json {exact:.6g}: {where}")
        if f.human is not None:
            printed = human_figure(text, f.human, f.quantity, f.human_index)
            if not printed.holds(exact, up=f.up):
                out.append(f"human view {printed.text!r} but --json {exact:.6g}: {where}")
    return out


def draw(door: Door, rng: random.Random) -> dict:
    """A random state within the widget's declared parameters: each labelled control drawn
    from its spec's range or choices (log-uniform over a wide range), or from `door.draws`."""
    params = {}
    for p in REGISTRY[door.widget].spec.values():
        if door.vary and p.name not in door.vary:
            continue
        if p.name in door.draws:
            params[p.name] = door.draws[p.name](rng)
        elif not p.label:
            continue
        elif p.choices:
            params[p.name] = rng.choice(p.choices)[0]
        elif p.kind == "int":
            params[p.name] = rng.randint(p.lo, p.hi)
        elif p.kind == "float":
            params[p.name] = log_uniform(rng, p.lo, p.hi)
    return params


def log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    """A float between lo and hi, as likely in each decade (0 stands for a small positive)."""
    lo = max(lo, hi * 1e-9)
    return float(f"{math.exp(rng.uniform(math.log(lo), math.log(hi))):.4g}")
