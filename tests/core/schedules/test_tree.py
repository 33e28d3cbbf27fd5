"""NCCL's double binary tree as data: heights and depths from each tree's parents equal walking up
the tree, and the steps from the heights equal the edges' last offsets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer.schedules import tree
from helpers import examples


def _heights_depths_by_walking(parents):
    """Depth by walking up to the root from every node; heights deepest first."""
    n = len(parents)
    depth = [0] * n
    for v in range(n):
        d, u = 0, v
        while parents[u] >= 0:
            u, d = parents[u], d + 1
        depth[v] = d
    height = [0] * n
    for v in sorted(range(n), key=lambda v: -depth[v]):
        if parents[v] >= 0:
            height[parents[v]] = max(height[parents[v]], height[v] + 1)
    return height, depth


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 2000))
def test_tree_heights_and_depths_equal_walking_up(n):
    for parents in tree.dtree_parents(n):
        assert tree.heights_depths(parents) == _heights_depths_by_walking(parents)


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 3000), st.integers(1, 5))
def test_tree_steps_from_heights_equal_the_edges_last_offsets(n, k):
    edges = [e for e in tree.phases(n) if e]
    assert tree.steady_chunks(n) == max((max(o for *_, o in e) for e in edges), default=0) + 1
    if n > 1:
        assert tree.steps(n, k) == sum(max(o for *_, o in e) + k for e in edges)
