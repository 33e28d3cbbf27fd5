"""A learner's seeds: SHA-256 of the student id and the exercise's name, into the banks' range,
never a seed a page or the teacher's sheet shows with its solution."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from allreduce_explainer import bridge
from allreduce_explainer.exercises import MAX_SEED, MAX_SHEET, problem
from allreduce_explainer.exercises.learners import learner_seed

ids = st.text(max_size=255)
names = st.text(min_size=1, max_size=100)


def oracle(student: str, name: str) -> int:
    """The rule as the module states it, written out again: 2**53 seeds, the first 40 shown."""
    h = int(hashlib.sha256((student + "\x00" + name).encode("utf-8")).hexdigest()[:16], 16)
    return 40 + h % (2**53 - 40)


@given(ids, names)
def test_the_seed_is_the_stated_hash_in_the_banks_range(student, name):
    seed = learner_seed(student, name)
    assert seed == oracle(student, name)
    assert MAX_SHEET <= seed < MAX_SEED
    problem("ring_time", seed)  # a seed the exercises take


def test_two_learners_two_problems_one_learner_the_same_again():
    a = learner_seed("student-a", "exercise-ring_time")
    b = learner_seed("student-b", "exercise-ring_time")
    assert a != b
    assert problem("ring_time", a).prompt != problem("ring_time", b).prompt
    assert learner_seed("student-a", "exercise-ring_time") == a
    assert learner_seed("student-a", "exercise-faster") != a
    # the separator keeps ("ab", "c") and ("a", "bc") apart
    assert learner_seed("ab", "c") != learner_seed("a", "bc")


def call(params) -> dict:
    return json.loads(bridge.call("learner_seeds", json.dumps(params)))


def test_the_bridge_gives_a_page_its_seeds_and_names_a_bad_field():
    got = call({"student": "s1", "names": ["exercise-ring_time", "exercise-faster"]})
    assert got["ok"]
    assert got["state"]["seeds"] == {
        n: oracle("s1", n) for n in ("exercise-ring_time", "exercise-faster")
    }
    for params, field in (
        ({"student": 7, "names": []}, "student"),
        ({"student": "x" * 256, "names": []}, "student"),
        ({"student": "s", "names": "exercise-faster"}, "names"),
        ({"student": "s", "names": [3]}, "names"),
        ({"student": "s", "names": ["n"] * 51}, "names"),
    ):
        got = call(params)
        assert not got["ok"] and got["error"]["field"] == field, params
