"""The steppers' shared helpers: each number printed once per value and type, as working it out
gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer.widgets import common
from helpers import examples


@settings(max_examples=examples(200), deadline=None)
@given(
    st.one_of(st.integers(-(10**30), 10**30), st.floats(-1e30, 1e30)),  # gradients lie within
    st.sampled_from(sorted(common.DIGITS)),
)
def test_value_text_once_per_value_equals_working_it_out(v, dtype):
    assert common.value_text(v, dtype) == common._value_text.__wrapped__(type(v), v, dtype)


def test_value_text_tells_equal_numbers_of_two_types_apart():
    """10**22 == 1e22 in Python; a memo keyed by the value alone would print one as the other."""
    assert common.value_text(1e22, "fp32") == "1e+22"
    assert common.value_text(10**22, "int") == "10000000000000000000000"
    assert common.value_text(True, "int") == common._value_text.__wrapped__(bool, True, "int")
