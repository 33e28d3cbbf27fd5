"""The states the browser's views draw: a stepper's, a chart's and a panel's, each key spelled here.

`client/js/stepper.js`, `chart.js` and `widget.js`, and the partials under `templates/widgets/`,
read these states by key with no schema on their side; the TypedDicts below are that schema, and
the builders are the one way a widget makes such a state, so a key is never typed in a widget
module. `tests/site/test_view_keys.py` checks that every key the views read is one of these, and
that every one of these is read (or is listed there as Python's own).

A key given as None is left out of the state: the views test a key's presence (`state.check`,
`frame.rows`), so an absent one and a null one are not the same to them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypedDict

STEPPER, CHART, PANEL = "stepper", "chart", "panel"  # the views: AE.views.<kind> draws the state
EXERCISE, SHEET = "exercise", "sheet"  # views whose states the exercises package builds
# significant digits a reader needs to tell values apart: the grid prints `state.digits` of them
# (stepper.js), and common.value_text the narration's
DIGITS = {"int": 0, "fp32": 7, "bf16": 3}
FOLD = 20  # a long table's rows until the reader asks for all (params.ROWS): a screenful


class Frame(TypedDict, total=False):
    """One step of a stepper: the buffers after it, what moved, and what the page says."""

    buffers: list[list]  # one row of numbers per GPU
    complete: list[list[bool]]  # which cells hold their finished sum
    moves: list[list]  # [src, dst, start, stop, chunk]: src sent elements [start, stop)
    op: str  # "add" or "copy": what the receivers did (diagram.holders replays it)
    phase: str
    label: str  # the phase as the phase line names it
    rows_show: str  # what the GPU rows hold ("gradients", "parameters")
    rows: list[dict]  # rows below the GPUs for this step: {label, values[, key, move, digits]}
    narration: list[str]
    arrows: list[list]  # the diagram's arrows (diagram.arrows)
    holders: list[list[int]]  # whose numbers each cell holds, as runs


class Prediction(TypedDict, total=False):
    """A question the reader answers before the widget shows its answer (client/js/predict.js,
    templates/widgets/_predict.html): what it asks, and what stays hidden until then."""

    id: str  # the prediction's name in the ae:predicted event and a course's records
    question: str
    example: str  # an answer's form, for the box's placeholder ("such as 10 MB")
    last_step: int  # a stepper's last step shown before the reader predicts
    figures: list[str]  # a chart's figures hidden until then ("" the main one)
    readouts: list[str]  # readouts hidden until then


def prediction(
    *,
    id: str,
    question: str,
    example: str,
    last_step: int | None = None,
    figures: list[str] | None = None,
    readouts: list[str] | None = None,
) -> Prediction:
    """A widget's prediction: the question, and the step, figures and readouts that give its
    answer away."""
    return Prediction(
        id=id,
        question=question,
        example=example,
        **_given(last_step=last_step, figures=figures, readouts=readouts),
    )


class Stepper(TypedDict, total=False):
    kind: str
    params: dict
    gpus: int
    length: int
    dtype: str
    digits: int  # DIGITS[dtype]
    chunks: list  # [start, stop) of each column group
    inputs: list[list]  # the GPUs' gradients, which the grid edits at step 0
    target: list  # the exact sum the check holds the result against
    extra_rows: list[dict]  # rows below the GPUs in every step: {label, values[, digits]}
    editable: bool
    owned: list[int]  # the chunk each GPU owns at the end of a reduce-scatter
    frames: list[Frame]
    check: dict  # simulation.verify.check's shape: matches, all_match, verdict[, rows ...]
    readouts: dict[str, str]
    row_groups: list[list]  # [label, first GPU, past the last]: a server's rows
    prediction: Prediction
    # written by diagram.attach, which every stepper's state goes through:
    diagram: dict  # the layout diagram.js draws once
    symbols: list[str]  # the holders' sets of GPUs as text ("a+b")
    letters: str  # the key to the symbols


class Part(TypedDict):
    """One figure of a chart, with its text alternatives."""

    figure: dict | None  # Plotly JSON: data and layout; None where there is nothing to draw yet
    summary: str  # one line: the chart's aria-label and the text under it
    table: dict  # the data as {columns, rows[, total, fold]}: see table()


class Chart(TypedDict, total=False):
    kind: str
    params: dict
    figure: dict  # the main figure, with its summary and table (a Part's keys)
    summary: str
    table: dict
    figures: dict[str, Part]  # more figures, drawn into [data-figure=name]
    readouts: dict[str, str]
    prediction: Prediction


class Panel(TypedDict):
    kind: str
    params: dict
    readouts: dict[str, str]


def _given(**keys) -> dict:
    return {k: v for k, v in keys.items() if v is not None}


def frame(
    *,
    buffers: list[list],
    complete: list[list[bool]],
    moves: list[list],
    phase: str,
    narration: list[str],
    op: str | None = None,
    label: str | None = None,
    rows_show: str | None = None,
    rows: list[dict] | None = None,
) -> Frame:
    """A stepper's frame; diagram.attach adds its arrows and holders."""
    return Frame(
        **_given(
            buffers=buffers,
            complete=complete,
            moves=moves,
            op=op,
            phase=phase,
            label=label,
            rows_show=rows_show,
            rows=rows,
            narration=narration,
        )
    )


def stepper(
    *,
    params: dict,
    dtype: str,
    chunks: list,
    inputs: list[list],
    target: list,
    frames: list[Frame],
    extra_rows: list[dict] | None = None,
    editable: bool | None = None,
    owned: list[int] | None = None,
    check: dict | None = None,
    readouts: dict[str, str] | None = None,
    row_groups: list[list] | None = None,
    prediction: Prediction | None = None,
) -> Stepper:
    """A stepper's state, for `diagram.attach` to add its diagram to: GPUs and length are the
    inputs', the grid's digits the dtype's."""
    return Stepper(
        kind=STEPPER,
        **_given(
            params=params,
            gpus=len(inputs),
            length=len(inputs[0]),
            dtype=dtype,
            digits=DIGITS[dtype],
            chunks=chunks,
            inputs=inputs,
            target=target,
            extra_rows=extra_rows,
            editable=editable,
            owned=owned,
            frames=frames,
            check=check,
            readouts=readouts,
            row_groups=row_groups,
            prediction=prediction,
        ),
    )


def part(*, figure: dict | None, summary: str, table: dict) -> Part:
    """One figure, its summary and its data as a table: a chart's main one or one of `figures`."""
    return Part(figure=figure, summary=summary, table=table)


def table(columns: list[str], items: Sequence, row: Callable[..., list], every: bool) -> dict:
    """A part's table of one row per item: the first FOLD rows only unless `every` (the reader
    asked for all, params.ROWS), with `total` the number of items. Hundreds of rows (Llama 3
    405B's 884 buckets) are formatted, sent and laid out on every change only for a reader who
    opened them; chart.js's "show all" asks for the rest."""
    shown = items if every or len(items) <= FOLD else items[:FOLD]
    out = {"columns": columns, "rows": [row(x) for x in shown]}
    if len(items) > FOLD:
        out.update(total=len(items), fold=FOLD)
    return out


def unchanged_left_out(params: dict, asked, names: tuple[str, ...]) -> dict:
    """`params` without those of `names` that hold a non-empty value exactly as the page asked
    for it: widget.js keeps what it sent for a parameter missing from the answer, so a long
    text (an opened log of up to a megabyte) does not travel back on every change. A value the
    widget changed (a log cleared by an example) is sent back."""
    asked = asked if isinstance(asked, dict) else {}
    return {k: v for k, v in params.items() if not (k in names and v and asked.get(k) == v)}


def partials(name: str, view: str) -> list[str]:
    """The templates that may draw a widget, first found wins: its own partial
    (templates/widgets/<name>.html), else the stepper's or the chart's, which its record fills.
    The site's build and the notebook's widgets both ask here."""
    generic = "stepper" if view == STEPPER else "chart"
    return [f"widgets/{name}.html", f"widgets/{generic}.html"]


def state_json(state: dict) -> str:
    """A state as JSON for a partial's inline <script type="application/json"> (the site's build
    and a notebook's widget): nothing in it can close the tag."""
    text = json.dumps(state, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def chart(
    *,
    params: dict,
    main: Part | None = None,
    figures: dict[str, Part] | None = None,
    readouts: dict[str, str] | None = None,
    data: dict | None = None,
    prediction: Prediction | None = None,
) -> Chart:
    """A chart's state: its main figure (`main`, drawn into the chart with no data-figure) and
    any more under `figures`; the readouts the partial's slots show; `data`, keys no view reads,
    for the module's facts() and the tests (the core's answers the chart was drawn from)."""
    given = _given(figures=figures, readouts=readouts, prediction=prediction)
    return Chart(kind=CHART, params=params, **(main or {}), **given, **(data or {}))


def result(answer: dict) -> dict:
    """What a state keeps of an api answer under "result": its single figures and words (the
    fields its record renders, and those a field's source is read from), not its lists or maps,
    which the state draws as charts and tables."""
    return {k: v for k, v in answer.items() if not isinstance(v, list | dict)}


def panel(*, params: dict, readouts: dict[str, str]) -> Panel:
    """A panel's state: controls and readouts, no chart."""
    return Panel(kind=PANEL, params=params, readouts=readouts)
