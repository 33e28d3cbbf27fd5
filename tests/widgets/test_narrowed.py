"""A widget's parameter that narrows an api function's stays inside it: its range within the
api's, its choices among the api's, its unit and kind the api's, and its default one the api
accepts. The calculator's and the sharding chart's parameters are the api's, narrowed."""

import pytest

from allreduce_explainer import api
from allreduce_explainer.errors import ParamError
from allreduce_explainer.params import Param, api_args, defaults, narrowed
from allreduce_explainer.widgets import SPECS, cluster, shards

NARROWING = [
    (widget, p) for widget, s in SPECS.items() for p in s.values() if p.narrows is not None
]


@pytest.mark.parametrize(("widget", "p"), NARROWING, ids=[f"{w}.{p.name}" for w, p in NARROWING])
def test_a_narrowing_stays_inside_the_api_parameter(widget, p):
    base = p.narrows
    assert (p.kind, p.unit) == (base.kind, base.unit)
    if base.lo is not None:
        assert p.lo >= base.lo
    if base.hi is not None:
        assert p.hi <= base.hi
    assert {v for v, _ in p.choices} <= ({v for v, _ in base.choices} or {v for v, _ in p.choices})
    if p.default != base.default:
        base.check(p.default)  # a default of the page's own: one the api accepts
    if p.kind in ("int", "float"):
        assert p.lo <= p.default <= p.hi


def test_the_calculator_widget_takes_every_calc_parameter_from_the_api():
    """All but overlap_too (the page always draws both steps); the page's URL names stay."""
    narrowed_names = {p.narrows.name for p in cluster.SPEC.values() if p.narrows is not None}
    assert narrowed_names == set(api.CALC) - {"overlap_too"}
    renamed = {p.name: p.narrows.name for p in cluster.SPEC.values() if p.narrows is not None}
    assert {k: v for k, v in renamed.items() if k != v} == {
        "nic_gbps": "nic_Gbps",
        "link_gbps": "link_GBps",
    }


def test_the_sharding_chart_takes_the_api_parameters_it_shares():
    shared = {"model", "gpu", "gpus", "gpus_per_node", "comm_model", "tokens_per_gpu", "mfu"}
    assert {p.narrows.name for p in shards.MEMORY.values() if p.narrows} == shared
    assert shards.MEMORY["gpus"].narrows is api.SHARD["gpus"]


def test_api_args_maps_the_page_names_to_the_api_keywords():
    args = api_args(defaults(cluster.SPEC), cluster.SPEC)
    assert args["nic_Gbps"] == cluster.SPEC["nic_gbps"].default == 400
    assert args["link_GBps"] == cluster.SPEC["link_gbps"].default
    assert "nic_gbps" not in args and "network" not in args and "log" not in args


@pytest.mark.parametrize(
    "changes",
    [
        {"hi": 1e7},  # wider than the api's 1e6
        {"lo": 0},  # the api refuses 0 Gb/s
        {"default": -1.0},
        {"unit": "GB/s"},  # a unit of its own
        {"kind": "int"},
    ],
)
def test_narrowed_refuses_what_is_not_a_narrowing(changes):
    with pytest.raises(ValueError, match="nic_gbps narrows nic_Gbps"):
        narrowed(api.CALC["nic_Gbps"], "nic_gbps", **changes)


def test_narrowed_refuses_a_choice_the_api_lacks():
    with pytest.raises(ValueError, match="choices"):
        narrowed(api.CALC["algorithm"], choices=(("ring", "ring"), ("butterfly", "butterfly")))


def test_a_narrowed_parameter_checks_with_its_own_range_and_the_page_name():
    p = narrowed(api.CALC["gpus"], lo=2, hi=16, label="GPUs")
    assert isinstance(p, Param) and p.flag == "" and p.label == "GPUs"
    with pytest.raises(ParamError, match="between 2 and 16") as e:
        p.check(17)
    assert e.value.field == "gpus"
