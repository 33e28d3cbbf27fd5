"""Every kind over 300 seeds: varied enough that a class of 100 with student-number seeds rarely
share a problem, an answer a student cannot echo from the question or guess as the usual one, and
the right answer, typed as the worked solution gives it, accepted on every seed (issue 50)."""

from collections import Counter
from functools import cache

import pytest

from allreduce_explainer.exercises import KINDS, feedback, problem
from allreduce_explainer.exercises.kinds.common import CHOICE, VECTOR
from helpers import typed

SEEDS = range(300)
MIN_DISTINCT = 50
ECHO_SHARE = 0.1  # at most this share of seeds may have an answer equal to a drawn number
COMMONEST_SHARE = 1 / 3  # a count's commonest answer, at most (choice kinds: test_fairness)


@cache
def drawn(kind, seed):
    return problem(kind, seed)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_draws_at_least_50_distinct_problems_in_300_seeds(kind):
    prompts = {drawn(kind, seed).prompt for seed in SEEDS}
    assert len(prompts) >= MIN_DISTINCT, len(prompts)


def _numbers(given: dict) -> dict[str, float]:
    return {
        k: v for k, v in given.items() if isinstance(v, int | float) and not isinstance(v, bool)
    }


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_answer_is_a_guessable_echo(kind):
    """No drawn number (a GPU, a step, a size) is the answer on more than a tenth of the seeds,
    and a count's commonest answer is not most of them."""
    if drawn(kind, 0).dimension in (VECTOR, CHOICE):
        pytest.skip("a vector is not echoed; the choice kinds' balance is test_fairness's")
    echoes, answers = Counter(), Counter()
    for seed in SEEDS:
        p = drawn(kind, seed)
        answers[p.answer] += 1
        echoes.update(k for k, v in _numbers(p.given).items() if v == p.answer)
    assert all(c <= ECHO_SHARE * len(SEEDS) for c in echoes.values()), echoes
    assert answers.most_common(1)[0][1] <= COMMONEST_SHARE * len(SEEDS), answers.most_common(3)


def test_the_chunk_a_gpu_owns_is_never_its_own_number():
    """D10: the GPU in the question never owns the chunk of its number: the ring's order, not
    the rank, places it (NCCL's all_reduce.h:60, the reduce-scatter ends on chunk ringIx)."""
    for seed in SEEDS:
        g = drawn("rs_owner", seed).given
        assert drawn("rs_owner", seed).answer == g["order"].index(g["gpu"]) != g["gpu"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_worked_answer_is_accepted_and_every_named_mistake_refused_with_its_message(kind):
    for seed in SEEDS:
        p = drawn(kind, seed)
        assert feedback(p, p.answer_text())["correct"], (seed, p.answer_text())
        for wrong, message in p.mistakes:
            if p.dimension != VECTOR and wrong != p.answer:
                got = feedback(p, typed(p, wrong))
                assert not got["correct"] and got["message"] == message, (seed, wrong, got)
