"""Each widget's parameters are declared once (params.py): the page's controls, the checks
and the URL table all follow that spec."""

from __future__ import annotations

import json

import pytest
from bs4 import BeautifulSoup

from allreduce_explainer import bridge, dtypes, params
from allreduce_explainer.catalog import models
from allreduce_explainer.collectives import COLLECTIVES
from allreduce_explainer.errors import ParamError
from allreduce_explainer.params import Param, defaults, spec, validated
from allreduce_explainer.training import calculator
from allreduce_explainer.widgets import SPECS, WIDGETS, servers
from sitebuild.page import load_pages
from sitebuild.pages import Builder
from sitebuild.prose import render_prose, widget_docs
from sitebuild.stageref import stage_references

NAMES = sorted(WIDGETS)


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    return Builder(tmp_path_factory.mktemp("site"))


def rendered(builder, name: str) -> BeautifulSoup:
    html = builder.widget_html(name, WIDGETS[name](), "../")
    return BeautifulSoup(html, "html.parser")


def error_of(name: str, change: dict) -> dict:
    out = json.loads(bridge.call(name, json.dumps(change)))
    assert out["ok"] is False, (name, change)
    return out["error"]


def test_every_widget_has_a_spec_and_its_defaults_are_the_state():
    assert sorted(SPECS) == NAMES
    for name in NAMES:
        assert json.dumps(WIDGETS[name]()["params"]) == json.dumps(defaults(SPECS[name])), name


@pytest.mark.parametrize("name", NAMES)
def test_controls_are_the_spec(builder, name):
    """Every box and select: its limits, step, label, options and value are the spec's, and every
    parameter with a control has exactly one."""
    s, state = SPECS[name], WIDGETS[name]()
    soup = rendered(builder, name)
    seen = []
    for c in soup.select("[data-param]"):
        p = s[c["data-param"]]
        seen.append(p.name)
        if c.name == "textarea":
            assert p.kind == "text", p.name
            continue
        label = soup.find("label", attrs={"for": c["id"]})
        assert label.get_text() == p.label, p.name
        assert c["id"] == f"{name}-{p.name}"
        if c.name == "select":
            assert p.control == "select", p.name
            options = [(o["value"], o.get_text()) for o in c.find_all("option")]
            assert options == list(p.choices), p.name
            assert [o["value"] for o in c.find_all("option") if o.has_attr("selected")] == [
                state["params"][p.name]
            ]
            continue
        assert c.name == "input" and c["type"] == "number" and p.control == "number", p.name
        assert float(c["min"]) == p.lo and float(c["max"]) == p.hi, p.name
        assert c["step"] == str(p.box_step), p.name
        value = state["params"][p.name]
        assert c["value"] == ("" if value is None else str(value)), p.name
    assert sorted(seen) == sorted(k for k, p in s.items() if p.control or p.kind == "text")
    # − / + buttons: by the spec's nudge, else by the box's step for a count up to 4,096 (GPUs,
    # servers, numbers per GPU); a wider count (a seed, a run of a log) and a float are typed
    steps = sorted(b["data-param-step"] for b in soup.select("[data-param-step]"))
    stepped = [
        (k, p.nudge[0] if p.nudge else p.box_step)
        for k, p in s.items()
        if p.control == "number" and (p.nudge or (p.kind == "int" and p.hi <= 4096))
    ]
    assert steps == sorted(f"{k}:{sign}{n}" for k, n in stepped for sign in ("", "-"))
    for k, n in stepped:  # either side of its box, named for what they do
        minus, box, plus = soup.select_one(f"[data-param-step='{k}:-{n}']").parent.find_all(
            ["button", "input"]
        )
        assert box["data-param"] == k and plus["data-param-step"] == f"{k}:{n}", k
        assert minus["aria-label"] and plus["aria-label"], k


def bad_values(p: Param) -> list:
    """Values the spec refuses: below its lower limit, above its upper one, not a choice."""
    if p.kind == "int":
        return [p.lo - 1, p.hi + 1, p.lo + 0.5, "7", None if not p.optional else True]
    if p.kind == "float":
        below = -1 if p.lo == 0 else p.lo / 2
        return [below, p.hi * 2, float("inf"), "7", True]
    if p.kind in ("choice", "name"):
        return ["no such choice", 7]
    if p.kind == "text":
        return [7]
    return []


CASES = [(name, k) for name in NAMES for k, p in SPECS[name].items() if bad_values(p)]


@pytest.mark.parametrize(("name", "field"), CASES)
def test_out_of_spec_values_are_refused_naming_the_field(name, field):
    for bad in bad_values(SPECS[name][field]):
        err = error_of(name, {field: bad})
        assert err["field"] == field and err["message"], (field, bad, err)


@pytest.mark.parametrize("name", NAMES)
def test_the_limits_themselves_pass(name):
    s = SPECS[name]
    for k, p in s.items():
        if p.kind in ("int", "float"):
            assert validated({k: p.lo}, s)[k] == p.lo
            assert validated({k: p.hi}, s)[k] == p.hi


def test_messages_name_the_limit_and_unit():
    s = spec(
        Param("x", 1.0, "float", "X", 0.001, 100000, unit="GB/s"), Param("n", 2, "int", "N", 2, 16)
    )
    cases = [
        ({"x": 0}, "must be greater than 0"),
        ({"x": 0.0005}, "must be at least 0.001 GB/s"),
        ({"x": 1e6}, "must be at most 100,000 GB/s"),
        ({"n": 17}, "must be between 2 and 16"),
        ({"n": 2.5}, "must be a whole number"),
        ({"y": 1}, "is not a parameter of this widget"),
    ]
    for change, message in cases:
        with pytest.raises(ParamError) as e:
            validated(change, s)
        assert e.value.field == next(iter(change)) and e.value.message == message


def test_choices_come_from_the_core():
    """One list of values each: number types, models, algorithms, collectives, methods."""
    assert params.DTYPE.values() == tuple(dtypes.DTYPES)
    assert SPECS["ddp_buckets"]["model"].values() == models.MODELS
    cluster = SPECS["cluster"]
    assert cluster["model"].values() == ("custom", *calculator.PRESET_MODELS)
    # every algorithm, NCCL's choice first (the menu's order: the rest under "more models")
    assert sorted(cluster["algorithm"].values()) == sorted(calculator.ALGORITHMS)
    assert cluster["algorithm"].values()[0] == "nccl"
    for name in ("cluster", "ddp_buckets"):
        assert set(SPECS[name]["grad_dtype"].values()) == set(calculator.GRAD_BYTES)
    for name in ("busbw", "nccl_line"):
        assert SPECS[name]["collective"].values() == tuple(COLLECTIVES)
    assert SPECS["servers_stepper"]["method"].values() == servers.METHODS


def test_the_url_table_lists_step_for_every_stepper(builder):
    """The course page's contract: every parameter with its default, and `step` for each widget
    that steps (share.js records it for every stepper)."""
    pages = load_pages()
    course = next(p for p in pages if p.slug == "use-in-your-course")
    context = {"f": builder.facts, "widget_docs": widget_docs(pages), "stages": [], "base": "../"}
    context["snippet_examples"] = []  # the course page's snippets need the built embeds
    context |= stage_references(pages)
    body, _ = render_prose(course, lambda n, s: builder.widget_html(n, s, "../"), context)
    rows = {
        tr.find("td").get_text(): tr.find_all("td")[2].get_text()
        for table in BeautifulSoup(body, "html.parser").select("table")
        if table.find("th").get_text() == "widget"  # the URL contract, not the teacher's guide
        for tr in table.select("tbody tr")
    }
    assert sorted(rows) == NAMES
    for name, text in rows.items():
        listed = [part.split(" = ")[0] for part in text.split(", ")]
        wants_step = WIDGETS[name]()["kind"] == "stepper"
        assert listed == [*SPECS[name], *(["step"] if wants_step else [])], name
