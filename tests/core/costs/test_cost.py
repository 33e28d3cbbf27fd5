"""The teaching cost model's fast paths give what the direct computations give, to the bit: the
tree's busiest-queue profile read from a window table (cost._tree_profile) against counting every
queue of every step."""

from __future__ import annotations

from collections import Counter
from itertools import chain

from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer.costs import cost
from allreduce_explainer.schedules import tree
from helpers import examples


def _profile_by_counting(n: int, g: int, k: int):
    """The profile as the cost model first computed it: every queue of every step counted."""
    profile: dict[tuple[int, int], int] = {}
    sends, inter_sends = [0] * n, [0] * n
    for edges in tree.phases(n):
        last = max(off for *_, off in edges)
        keys: list[tuple[list[int], list[int]]] = [([], []) for _ in range(last + 1)]
        for _, src, dst, off in edges:
            keys[off][int(src // g != dst // g)].extend((2 * src, 2 * dst + 1))
        steady = range(last, k)
        explicit = chain(range(last), range(k, last + k)) if steady else range(last + k)
        for t in chain(explicit, [last] if steady else []):
            live = range(max(0, t - k + 1), min(t, last) + 1)
            ms = tuple(
                max(Counter(chain.from_iterable(keys[o][cls] for o in live)).values(), default=0)
                for cls in (0, 1)
            )
            profile[ms] = profile.get(ms, 0) + (len(steady) if steady and t == last else 1)
        for _, src, dst, _ in edges:
            sends[src] += 1
            inter_sends[src] += src // g != dst // g
    return tuple(profile.items()), max(sends), sum(inter_sends), max(inter_sends)


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(2, 300), st.sampled_from([1, 2, 3, 4, 8, 16]), st.integers(1, 40))
def test_tree_profile_equals_counting_every_queue(n, g, k):
    g = min(g, n)
    assert cost._tree_profile(n, g, k) == _profile_by_counting(n, g, k)


def test_tree_profile_at_the_largest_layouts():
    for n, g in ((1024, 1), (1024, 8), (4096, 8), (4095, 1)):
        for k in (1, 2, tree.steady_chunks(n) + 1):
            assert cost._tree_profile(n, g, k) == _profile_by_counting(n, g, k)
