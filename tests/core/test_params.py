"""The api's parameter specs: each function refuses a value outside its spec, naming the field,
and its signature's defaults are the spec's (the CLI takes its defaults from the spec)."""

import inspect
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api
from allreduce_explainer.errors import ParamError
from allreduce_explainer.params import (
    REQUIRED,
    Param,
    narrowed,
    signature_text,
    spec,
    takes,
    validated,
)

LOG = (Path(__file__).parents[1] / "data" / "allreduce_current.txt").read_text()

# Each api function, its spec and valid arguments for the ones it requires.
FUNCTIONS = {
    "simulate": (api.simulate, api.SIMULATE, {"algorithm": "ring"}),
    "estimate": (api.estimate, api.ESTIMATE, {"algorithm": "ring", "gpus": 8, "bytes": 1e6}),
    "busbw": (api.busbw, api.BUSBW, {"gpus": 8, "bytes": 1e6, "time_us": 100.0}),
    "buckets": (api.buckets, api.BUCKETS, {"param_bytes": [100, 200]}),
    "ddp": (api.ddp, api.DDP, {}),
    "calc": (api.calc, api.CALC, {"model": "gpt2"}),
    "shard": (api.shard, api.SHARD, {"model": "gpt2", "gpus": 8}),
    "nccl_tests": (api.nccl_tests, api.NCCL_TESTS, {"log": LOG}),
}


def call(name: str, **changes):
    fn, _, base = FUNCTIONS[name]
    return fn(**(base | changes))


def bounded() -> list[tuple[str, Param]]:
    """Every numeric parameter of every api function with a limit."""
    return [
        (name, p)
        for name, (_, s, _) in FUNCTIONS.items()
        for p in s.values()
        if p.kind in ("int", "float") and (p.lo is not None or p.hi is not None)
    ]


def outside(p: Param) -> st.SearchStrategy:
    """Values the spec refuses: below lo, above hi, not a number at all."""
    options = [st.text(max_size=5), st.just(float("nan")), st.just(True)]
    if p.kind == "int":
        options += [st.floats(0.1, 0.9).map(lambda f: (p.lo or 0) + 1 + f)]  # not whole
        if p.lo is not None:
            options.append(st.integers(max_value=int(p.lo) - 1))
        if p.hi is not None:
            options.append(st.integers(min_value=int(p.hi) + 1))
    else:
        if p.lo is not None:
            options.append(st.floats(max_value=p.lo, exclude_max=True, allow_nan=False))
        if p.hi is not None:
            options.append(
                st.floats(min_value=p.hi, exclude_min=True, allow_nan=False, allow_infinity=False)
            )
    return st.one_of(options)


@pytest.mark.parametrize(("function", "param"), bounded(), ids=lambda x: getattr(x, "name", x))
@settings(deadline=None)  # the first call of a function may warm caches on a busy machine
@given(data=st.data())
def test_the_api_refuses_values_outside_the_spec_naming_the_field(function, param, data):
    value = data.draw(outside(param))
    with pytest.raises(ParamError) as e:
        call(function, **{param.name: value})
    assert e.value.field == param.name


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_every_function_accepts_its_spec_limits(function):
    """The limits are inside: the lowest and highest value of each whole-number parameter pass
    the spec's own check (what the function does with them is its own business)."""
    _, s, base = FUNCTIONS[function]
    for p in s.values():
        if p.kind == "int" and p.lo is not None and p.hi is not None:
            for v in (p.lo, p.hi):
                assert validated(base | {p.name: v}, s)[p.name] == v


def test_takes_checks_the_typed_signature_against_the_spec_and_validates_the_keywords():
    """A function declared by its spec and a real signature: the spec's names in its order, its
    defaults and its kinds' types, the leading ones also by position; the body gets every
    parameter validated, one given twice or an unknown keyword is refused naming it."""
    s = spec(
        Param("a", REQUIRED, "int", lo=1, hi=9),
        Param("b", 2, "int", lo=0, hi=9),
        Param("c", None, "text", optional=True),
    )

    @takes(s)
    def f(a: int, b: int = 2, c: str | None = None) -> dict:
        return dict(locals())

    assert f(a=1, b=3, c="x") == {"a": 1, "b": 3, "c": "x"}
    assert f(1, 3) == {"a": 1, "b": 3, "c": None}
    assert str(inspect.signature(f)) == "(a: int, b: int = 2, c: str | None = None) -> dict"
    assert signature_text(s) == "(a: int, b: int = 2, c: str | None = None)"
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        f(1, a=2)
    with pytest.raises(ParamError, match="b: must be"):
        f(1, 10)
    with pytest.raises(ParamError, match="d: is not a parameter"):
        f(a=1, d=2)
    with pytest.raises(ParamError, match="a: must be"):
        f(a=0)
    with pytest.raises(ParamError, match="a: is required"):
        f()


@pytest.mark.parametrize(
    "source, wrong",
    [
        ("def f(a: int, b: int = 3, c: str | None = None): ...", "b's default is 3"),
        ("def f(a: float, b: int = 2, c: str | None = None): ...", "a is annotated 'float'"),
        ("def f(a: int, *, b: int = 2, c: str | None = None): ...", "b is keyword-only, not"),
        ("def f(a: int, c: str | None = None, b: int = 2): ...", "not the spec's"),
        ("def f(a: int, b: int = 2): ...", "not the spec's"),
        ("def f(a: int, b: float = 2.0, c: str | None = None): ...", "b's default is 2.0"),
    ],
)
def test_takes_refuses_a_signature_that_drifts_from_its_spec(source, wrong):
    s = spec(
        Param("a", REQUIRED, "int", lo=1, hi=9),
        Param("b", 2, "int", lo=0, hi=9),
        Param("c", None, "text", optional=True),
    )
    scope: dict = {}
    exec("from __future__ import annotations\n" + source, scope)
    with pytest.raises(TypeError, match=re.escape(wrong)):
        takes(s)(scope["f"])


def test_a_required_parameter_left_out_is_named():
    with pytest.raises(ParamError, match="time_us: is required"):
        api.busbw(gpus=8, bytes=1e6, time_us=REQUIRED)


def test_a_switch_takes_true_or_false_only():
    s = spec(Param("trace", False, "bool"))
    assert validated({"trace": True}, s) == {"trace": True}
    with pytest.raises(ParamError, match="trace: must be true or false"):
        validated({"trace": 1}, s)


def test_a_choice_of_numbers():
    s = spec(Param("grad_bytes", 4, "choice", choices=((2, "BF16"), (4, "FP32"))))
    assert validated({"grad_bytes": 2}, s) == {"grad_bytes": 2}
    with pytest.raises(ParamError, match="grad_bytes: must be one of 2, 4"):
        validated({"grad_bytes": 3}, s)


@pytest.mark.parametrize(
    ("call_with", "field"),
    [
        (lambda: api.calc(model="gpt2", gpu_count=8), "gpu_count"),
        (lambda: api.simulate(algorithm="ring", intra_bandwidth=100), "intra_bandwidth"),
    ],
)
def test_an_unknown_keyword_is_refused(call_with, field):
    with pytest.raises(ParamError, match="is not a parameter") as e:
        call_with()
    assert e.value.field == field


def test_limits_print_in_full_up_to_ten_digits():
    p = Param("cap", 1, "float", lo=0, hi=2**30, unit="MiB")
    with pytest.raises(ParamError, match="must be at most 1,073,741,824 MiB"):
        p.check(2**31)
    q = Param("bytes", 1, "float", lo=1, hi=1e15)
    with pytest.raises(ParamError, match=r"must be at most 1e\+15"):
        q.check(1e16)


def test_a_menus_more_choices_are_its_last_ones():
    """A select's `more` group holds the last choices in their order (the page's <optgroup>),
    so the options' order stays the spec's and every value stays a choice."""
    choices = (("a", "A"), ("b", "B"), ("c", "C"))
    p = Param("x", "a", "choice", "X", choices=choices, more=("more", ("b", "c")))
    assert p.menu() == (("", (("a", "A"),)), ("more", (("b", "B"), ("c", "C"))))
    assert p.check("c") == "c"
    assert Param("x", "a", "choice", "X", choices=choices).menu() == (("", choices),)
    for bad in (("a",), ("c", "b"), ()):
        with pytest.raises(ValueError, match="last choices"):
            Param("x", "a", "choice", "X", choices=choices, more=("more", bad))


def test_a_flag_in_another_unit_scales_its_default_and_range_and_back():
    """The card: GB/s in the library (inter_bw), Gb/s on its flag (issue 46, item 2): the flag's
    Param has the default and limits times 8 (but lo "above 0" stays above 0), and its value
    comes back divided by 8; a widget narrowing it keeps the library's unit and no flag."""
    gone = ("--inter-bw", "use --nic-gbps")
    p = Param("inter_bw", 50.0, "float", "card", api.POSITIVE, 100.0, unit="GB/s",
              flag="--nic-gbps", flag_unit=("Gb/s", 8), gone=gone)  # fmt: skip
    f = p.on_flag()
    want = (400.0, api.POSITIVE, 800.0, "Gb/s", "--nic-gbps", gone)
    assert (f.default, f.lo, f.hi, f.unit, f.cli_flag, f.gone) == want
    assert p.from_flag(800.0) == 100.0 and p.from_flag(None) is None
    assert f.range_text() == "above 0, at most 800"
    assert Param("x", 1, "int", "x", 1, 2).range_text() == "1 to 2"
    card = api.ESTIMATE["inter_bw"]
    assert (card.cli_flag, card.flag_unit, card.unit) == ("--nic-gbps", ("Gb/s", 8), "GB/s")
    w = narrowed(card, label="Network card (GB/s)", lo=0.5)
    assert (w.flag_unit, w.gone, w.unit, w.cli_flag) == (None, None, "GB/s", "--inter-bw")
