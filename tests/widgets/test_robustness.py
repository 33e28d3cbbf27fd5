"""Every widget answers any JSON with a state or a structured error: no exception, small.

How fast each answer comes is measured by the benchmarks (bench/), not asserted here: a timed
test flakes on a shared machine."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allreduce_explainer import bridge
from allreduce_explainer.catalog import models
from allreduce_explainer.logs import examples as logs
from allreduce_explainer.widgets import WIDGETS
from helpers import examples

MAX_BYTES = 4_000_000

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from([0, -1, 1, 2, 7, 16, 64, 1e9, 1e308, -0.0, "", "7", "int", "bf16"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)
NAMES = sorted(WIDGETS)


def defaults(name: str) -> dict:
    return WIDGETS[name]()["params"]


def answer(name: str, params) -> dict:
    text = json.dumps(params)
    out = bridge.call(name, text)
    assert len(out) < MAX_BYTES, f"{name} built {len(out)} bytes on {text[:200]}"
    result = json.loads(out)
    if result["ok"]:
        assert isinstance(result["state"], dict) and "params" in result["state"]
    else:
        err = result["error"]
        assert err["field"] is not None, f"{name}: unexpected failure {err} on {text[:200]}"
        assert isinstance(err["message"], str) and err["message"]
    return result


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(NAMES), st.data())
def test_any_value_for_any_parameter(name, data):
    params = dict(defaults(name))
    keys = data.draw(st.lists(st.sampled_from(sorted(params)), min_size=1, max_size=3, unique=True))
    for k in keys:
        params[k] = data.draw(json_values)
    answer(name, params)


@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from(NAMES), json_values)
def test_any_json_at_all(name, params):
    answer(name, params)


@pytest.mark.parametrize("name", NAMES)
def test_numeric_extremes(name):
    for k, v in defaults(name).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            for bad in (-1, 0, 10**12, 1e308, -1e308, 0.5, 2**63):
                answer(name, {**defaults(name), k: bad})


@pytest.mark.parametrize("name", NAMES)
def test_defaults_round_trip(name):
    """The normalised params a state reports give the same state back (links reproduce it)."""
    first = answer(name, {})["state"]
    again = answer(name, first["params"])["state"]
    assert again == first


def test_a_kept_text_stands_where_a_call_names_it():
    """bridge.keep: a call naming a kept text ({"kept": name}) gets the answer it would get with
    the text itself; a name nothing was kept under, or a marker under another parameter, is
    read as the value it is (and refused by the widget's own checks)."""

    text = sorted(logs.TEXTS)[0]
    with_text = json.loads(bridge.call("cluster", json.dumps({"example": "", "log_file": text})))
    bridge.keep("log_file", text)
    marker = {"example": "", "log_file": {"kept": "log_file"}}
    named = json.loads(bridge.call("cluster", json.dumps(marker)))
    assert named == with_text and named["ok"]
    elsewhere = json.loads(bridge.call("cluster", json.dumps({"log": {"kept": "log_file"}})))
    assert not elsewhere["ok"] and elsewhere["error"]["field"] == "log"
    bridge._KEPT.clear()
    unknown = json.loads(bridge.call("cluster", json.dumps({"log_file": {"kept": "log_file"}})))
    assert not unknown["ok"] and unknown["error"]["field"] == "log_file"


def test_the_warm_up_makes_each_model_s_first_call_on_stage_7_then_the_defaults():
    """bridge.warm_calls: the worker's warm-up for a page's widgets is each widget's own slow
    first calls (stage 7, whose defaults the snapshot does not make: its defaults, then one call
    per model of the catalogue, each a valid call), then the widgets by name for their defaults;
    a name no widget has is left out, not an error."""

    plan = json.loads(bridge.warm_calls(json.dumps(["ddp_buckets", "latency", "nothing"])))
    assert plan["again"] == ["ddp_buckets", "latency"]
    assert [name for name, _ in plan["first"]] == ["ddp_buckets"] * (1 + len(models.MODELS))
    assert json.loads(plan["first"][0][1]) == {}
    asked = [json.loads(params)["model"] for _, params in plan["first"][1:]]
    assert sorted(asked) == sorted(models.MODELS)
    for name, params in plan["first"]:
        answer = json.loads(bridge.call(name, params))
        asked = json.loads(params)
        assert answer["ok"] and answer["state"]["params"]["model"] == asked.get("model", "gpt2")


def test_every_widget_s_defaults_are_made_before_a_reader_asks():
    """Each widget's defaults are made either before the snapshot (widgets.SNAPSHOT_CALLS) or,
    first of all, by the warm-up of a page that shows it, never both and never neither; the
    widgets left out of the snapshot are the ones whose defaults keep large caches."""
    from allreduce_explainer.widgets import REGISTRY, SNAPSHOT_CALLS

    in_snapshot = {name for name, params in SNAPSHOT_CALLS if params == {}}
    for name in REGISTRY:
        first = json.loads(bridge.warm_calls(json.dumps([name])))["first"]
        by_page = bool(first) and first[0] == [name, "{}"]
        assert (name in in_snapshot) != by_page, name
    assert set(REGISTRY) - in_snapshot == {"ddp_buckets", "exercise_sheet", "steps"}
