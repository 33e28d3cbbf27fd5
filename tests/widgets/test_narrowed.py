"""A widget's parameter that narrows an api function's stays inside it: its range within the
api's, its choices among the api's, its unit and kind the api's, and its default one the api
accepts. No widget declares a quantity an api spec declares without narrowing it; the
calculator's and the sharding chart's parameters are the api's, narrowed."""

import pytest

from allreduce_explainer import api
from allreduce_explainer.errors import ParamError
from allreduce_explainer.params import Param, api_args, defaults, in_flag_unit, narrowed
from allreduce_explainer.widgets import SPECS, buckets, cluster, latency, servers, shards

NARROWING = [
    (widget, p) for widget, s in SPECS.items() for p in s.values() if p.narrows is not None
]


@pytest.mark.parametrize(("widget", "p"), NARROWING, ids=[f"{w}.{p.name}" for w, p in NARROWING])
def test_a_narrowing_stays_inside_the_api_parameter(widget, p):
    # a control may ask in the api's flag unit (the card in Gb/s): held to the flag's range
    base = p.narrows.on_flag() if in_flag_unit(p) else p.narrows
    assert p.unit == base.unit
    # a name the api resolves may be a choice among names on a page: its menu
    assert p.kind == base.kind or (base.kind, p.kind) == ("name", "choice")
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
    from_calc = [p for p in cluster.SPEC.values() if p.narrows is not None and _of(p, api.CALC)]
    narrowed_names = {p.narrows.name for p in from_calc}
    assert narrowed_names == set(api.CALC) - {"overlap_too"}
    renamed = {p.name: p.narrows.name for p in from_calc}
    assert {k: v for k, v in renamed.items() if k != v} == {
        "nic_gbps": "nic_Gbps",
        "link_gbps": "link_GBps",
    }


def test_the_sharding_chart_takes_the_api_parameters_it_shares():
    shared = {"model", "gpu", "gpus", "gpus_per_node", "comm_model", "tokens_per_gpu", "mfu"}
    assert {p.narrows.name for p in shards.MEMORY.values() if p.narrows} == shared
    assert shards.MEMORY["gpus"].narrows is api.SHARD["gpus"]


def _of(p: Param, api_spec: dict) -> bool:
    return api_spec.get(p.narrows.name) is p.narrows


def test_api_args_maps_the_page_names_to_the_api_keywords():
    args = api_args(defaults(cluster.SPEC), cluster.SPEC, api.CALC)
    assert args["nic_Gbps"] == cluster.SPEC["nic_gbps"].default == 400
    assert args["link_GBps"] == cluster.SPEC["link_gbps"].default
    assert "nic_gbps" not in args and "network" not in args and "log" not in args
    # without `to`, every narrowed parameter: the pasted log's too (api.nccl_tests's)
    assert api_args(defaults(cluster.SPEC), cluster.SPEC)["log"] == ""


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


# Every parameter the api's functions declare, by its name in lower case: nic_Gbps and a page's
# nic_gbps are one quantity, spelled once.
API_SPECS = {
    name: s
    for name, s in vars(api).items()
    if isinstance(s, dict) and s and all(isinstance(p, Param) for p in s.values())
}
API_NAMES = {p.name.lower() for s in API_SPECS.values() for p in s.values()}
# A widget's parameter named like an api one that is another quantity, or a form the api
# does not take, with the reason
NOT_THE_API_QUANTITY = {
    ("exercise", "kind"): "an exercise's kind, not api.orders' kind of drawn values",
    ("exercise", "seed"): "the seed of an exercise's problem, not of a gradient",
    ("exercise_sheet", "seed"): "the seed of a sheet of problems, not of a gradient",
    ("busbw_curve", "algorithm"): "'nccl' (NCCL's own pick) or NCCL_ALGO's 'Ring'; "
    "api.nccl_sweep says NCCL's own pick by giving no algorithm",
}
SHADOWS = [
    (widget, p)
    for widget, s in SPECS.items()
    for p in s.values()
    if p.name.lower() in API_NAMES and (widget, p.name) not in NOT_THE_API_QUANTITY
]


@pytest.mark.parametrize(("widget", "p"), SHADOWS, ids=[f"{w}.{p.name}" for w, p in SHADOWS])
def test_a_widget_parameter_named_like_an_api_one_narrows_it(widget, p):
    """Declared anew, its range, unit or default could drift from the api's unseen."""
    assert p.narrows is not None, f"{widget}.{p.name} repeats an api parameter: narrow it"
    # asked in its flag's unit, it takes the flag's name (inter_bw in Gb/s is --nic-gbps)
    named = p.narrows.cli_flag[2:].replace("-", "_") if in_flag_unit(p) else p.narrows.name
    assert named.lower() == p.name.lower()
    assert any(q is p.narrows for s in API_SPECS.values() for q in s.values())


def test_the_shadow_check_fails_on_a_parameter_declared_anew():
    """The rule above on a page parameter copied by hand from api.simulate's, and on one that
    narrows another quantity than its name says."""
    copied = Param("gpus", 4, "int", "GPUs", 2, 16)
    with pytest.raises(AssertionError, match="narrow it"):
        test_a_widget_parameter_named_like_an_api_one_narrows_it("ring", copied)
    with pytest.raises(AssertionError):
        test_a_widget_parameter_named_like_an_api_one_narrows_it(
            "ring", narrowed(api.SIMULATE["length"], "gpus")
        )


def test_the_exemptions_name_real_widget_parameters():
    for widget, name in NOT_THE_API_QUANTITY:
        assert name in SPECS[widget] and name.lower() in API_NAMES
        assert SPECS[widget][name].narrows is None


def test_every_widget_steps_through_simulate_with_simulates_parameters():
    """The steppers that call api.simulate narrow its GPUs, numbers, seed and values."""
    for widget in ("ring_reduce_scatter", "ring_all_gather", "naive", "tree_allreduce"):
        for name in ("gpus", "length", "seed", "values"):
            assert SPECS[widget][name].narrows is api.SIMULATE[name], (widget, name)
    assert SPECS["servers_stepper"]["method"].narrows is api.SIMULATE["algorithm"]


# One spelling per unit, in every spec a page, the library or the CLI reads (not "us" beside
# "µs", nor "GBps" beside "GB/s"); Gb/s (a card's rate as sold) and GB/s are two units.
UNITS = {"", "µs", "GB/s", "Gb/s", "GB", "MiB", "GiB", "TFLOP/s", "(billion parameters)"}


def test_every_parameter_spells_its_unit_one_way():
    specs = [*SPECS.values(), *API_SPECS.values()]
    units = {p.unit for s in specs for p in s.values()}
    assert units <= UNITS, units - UNITS


# Every page control for the network card, and the api keyword each hands the card to
CARDS = {
    "latency": latency.LATENCY, "busbw_curve": latency.CURVE, "servers_compare": servers.COMPARE,
    "ddp_buckets": buckets.SPEC, "cluster": cluster.SPEC,
}  # fmt: skip


def test_every_page_asks_the_network_card_in_gbit_as_nic_gbps():
    """Issue 46: one card, one unit and one name on every page, as on the command line
    (--nic-gbps): a page's number box for it is nic_gbps in Gb/s, 400 at the default, whether
    its api takes nic_Gbps or the model's inter_bw in GB/s; no control asks the card in GB/s."""
    for widget, s in CARDS.items():
        p = s["nic_gbps"]
        assert (p.unit, p.default, p.control) == ("Gb/s", 400, "number"), widget
        assert "Gb/s" in p.label and "GB/s" not in p.label, widget
    for widget, s in SPECS.items():
        for p in s.values():
            if p.narrows is not None and p.narrows.name in ("inter_bw", "nic_Gbps"):
                assert p.name == "nic_gbps" and p.unit == "Gb/s", (widget, p.name)


def test_api_args_hands_a_card_asked_in_gbit_to_the_model_in_gbyte():
    """The page's 400 Gb/s reaches api.estimate and api.ddp as inter_bw = 400 / 8 = 50 GB/s
    (8 bits a byte), and any rate R as R / 8; a card asked as sold (nic_Gbps) passes as is."""
    for s, to in ((servers.COMPARE, api.ESTIMATE), (buckets.SPEC, api.DDP)):
        for rate in (400, 100.0, 3.2, 1):
            p = defaults(s) | {"nic_gbps": rate}
            assert api_args(p, s, to)["inter_bw"] == rate / 8
            assert "nic_gbps" not in api_args(p, s, to)
    assert api_args(defaults(cluster.SPEC), cluster.SPEC, api.CALC)["nic_Gbps"] == 400


def test_narrowed_as_flag_takes_the_flags_unit_and_range():
    card = api.ESTIMATE["inter_bw"]
    w = narrowed(card, "nic_gbps", as_flag=True, label="card (Gb/s)", lo=1, hi=3200)
    assert (w.unit, w.default, w.lo, w.hi, w.narrows) == ("Gb/s", 400, 1, 3200, card)
    assert in_flag_unit(w) and not in_flag_unit(narrowed(card, label="card (GB/s)"))
    with pytest.raises(ValueError, match="no flag in another unit"):
        narrowed(api.CALC["nic_Gbps"], as_flag=True)
    with pytest.raises(ValueError, match="lo must be at least"):
        narrowed(card, "nic_gbps", as_flag=True, lo=0)
