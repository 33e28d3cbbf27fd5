"""One name and one line style per source of time: every chart of every widget, at its
defaults, draws a line of the whiteboard model dashed, NCCL's estimate dotted and the fitted
time solid, and no legend, readout or summary uses a retired name for any of them."""

from __future__ import annotations

import json

import pytest

from allreduce_explainer import sources, widgets
from allreduce_explainer.widgets import servers, views

STYLES = {s.legend: s.dash for s in sources.SOURCES}
CHARTS = sorted(n for n, w in widgets.REGISTRY.items() if w.view == views.CHART)


def traces(state: dict) -> list[dict]:
    figures = [state.get("figure")] + [p.get("figure") for p in state.get("figures", {}).values()]
    return [t for f in figures if f for t in f["data"]]


def source_of(name: str) -> str | None:
    found = [legend for legend in STYLES if legend in name]
    assert len(found) <= 1, name  # a line is of one source
    return found[0] if found else None


def test_the_three_sources_have_three_names_and_three_styles():
    assert len({s.name for s in sources.SOURCES}) == len({s.dash for s in sources.SOURCES}) == 3
    assert sources.REFERENCE_DASH not in STYLES.values()


@pytest.mark.parametrize("name", CHARTS)
def test_each_source_is_drawn_in_its_style(name):
    state = widgets.WIDGETS[name](None)
    for t in traces(state):
        legend = source_of(t.get("name", ""))
        if legend and t.get("mode", "lines") != "markers":
            assert t["line"].get("dash", "solid") == STYLES[legend], (name, t["name"])


@pytest.mark.parametrize("name", sorted(widgets.REGISTRY))
def test_no_retired_name_in_a_widget_s_state(name):
    if widgets.REGISTRY[name].view == views.EXERCISE:
        pytest.skip("an exercise's state is its problem")
    text = json.dumps(widgets.WIDGETS[name](None), ensure_ascii=False)
    assert sources.retired(text) == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("timed by NCCL's model", "NCCL's model"),
        ("NCCL's cost model (page 5)", "NCCL's cost model"),
        ("NCCL 2.30.7's own cost model", "NCCL 2.30.7's own cost model"),
        ("NCCL 2.31.0a7's cost model", "NCCL 2.31.0a7's cost model"),
        ("NCCL 2.30.7's own time model", "NCCL 2.30.7's own time model"),
        ("NCCL's choice (its own cost model)", "its own cost model"),
        ("NCCL&#39;s model&#39;s time is above", "NCCL's model"),
        ("NCCL’s own\n estimate", "NCCL's own estimate"),
        ("NCCL's own choice and time", "NCCL's own choice and time"),
    ],
)
def test_each_retired_name_is_found(text, found):
    assert sources.retired(text.replace("\\n", "\n")) == [found]


def test_the_three_names_and_the_whiteboard_s_cost_model_are_not_retired():
    text = " ".join(s.name for s in sources.SOURCES) + " the cost model T = α + m/B"
    assert sources.retired(text + " NCCL's tuning code, NCCL's choice, NCCL picks") == []


def test_the_fitted_time_is_solid_where_it_was_dotted_before():
    """Page 6's chart drew the fitted time dotted, the style page 5 gives NCCL's estimate."""

    line = next(t for t in traces(servers.servers_compare(None)) if t["name"] == servers.NCCL_LABEL)
    assert line["line"].get("dash", "solid") == "solid"


def test_every_source_is_drawn_somewhere():
    drawn = {source_of(t.get("name", "")) for n in CHARTS for t in traces(widgets.WIDGETS[n](None))}
    assert set(STYLES) <= drawn


def figures_of(state: dict) -> list[dict]:
    return [
        f
        for f in [state.get("figure")]
        + [p.get("figure") for p in state.get("figures", {}).values()]
        if f
    ]


def misstyled(figure: dict) -> list[tuple[str, str]]:
    """(name, dash) of every line of a figure whose dash is not its source's: a line of a source
    in another style, or a line of no source (a link's rate, a limit, a count) in a source's
    style (dashed is the whiteboard model, dotted NCCL's estimate), unless a legend key of the
    same figure names that source with that dash (the byte formulas of page 4)."""
    lines = [
        (t.get("name", ""), (t.get("line") or {}).get("dash", "solid"))
        for t in figure["data"]
        if t.get("type", "scatter") == "scatter" and "lines" in t.get("mode", "lines")
    ]
    lines += [
        (s.get("name", "shape"), (s.get("line") or {}).get("dash", "solid"))
        for s in figure.get("layout", {}).get("shapes", [])
        if s.get("type") == "line"
    ]
    keyed = {dash for name, dash in lines if source_of(name) and STYLES[source_of(name)] == dash}
    allowed = ("solid", sources.REFERENCE_DASH, *keyed)  # for a line of no source
    return [
        (name, dash)
        for name, dash in lines
        if (dash != STYLES[source_of(name)] if source_of(name) else dash not in allowed)
    ]


def test_the_style_check_fails_on_counter_examples():
    dotted_limit = {"data": [], "layout": {"shapes": [{"type": "line", "line": {"dash": "dot"}}]}}
    assert misstyled(dotted_limit) == [("shape", "dot")]
    dashed = {"data": [{"name": "two gradients", "mode": "lines", "line": {"dash": "dash"}}]}
    assert misstyled(dashed) == [("two gradients", "dash")]
    solid_estimate = {"data": [{"name": "ring, NCCL's estimate", "line": {"dash": "solid"}}]}
    assert misstyled(solid_estimate) == [("ring, NCCL's estimate", "solid")]
    keyed = {"data": dashed["data"] + [{"name": "formula (whiteboard model)", "mode": "lines",
                                          "line": {"dash": "dash"}}]}  # fmt: skip
    assert misstyled(keyed) == []


@pytest.mark.parametrize("name", CHARTS)
def test_every_line_of_every_chart_takes_its_dash_from_its_source(name):
    """sources.py is the one home of the styles: a line of no source is solid or the reference
    dash-dot (page 4's two gradients, page 8's memory limit, page 7's end of the backward)."""
    for figure in figures_of(widgets.WIDGETS[name](None)):
        assert misstyled(figure) == [], name
