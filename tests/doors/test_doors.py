"""Every door agrees (issue 46, item 3): for each page widget at its defaults and at random valid
states, the figures the page shows equal what the command line prints for the same question,
under --json at full precision and in its human view, at the precision each prints; and the
notebook's widget has the page's state."""

from __future__ import annotations

import pytest

from allreduce_explainer.widgets import REGISTRY

from .doors import disagreements, draw
from .table import DOORS, NO_COMMAND, rng_for

STATES = 12  # random states per widget, besides the defaults: a few hundred in all


def test_every_widget_has_a_door_or_a_reason_it_has_none():
    widgets = {d.widget for d in DOORS.values()}
    assert widgets | set(NO_COMMAND) == set(REGISTRY)
    assert not widgets & set(NO_COMMAND)


@pytest.mark.parametrize("name", sorted(DOORS))
def test_the_page_and_the_command_line_agree_at_the_defaults(name):
    assert disagreements(DOORS[name], {}) == []


@pytest.mark.parametrize("name", sorted(DOORS))
def test_the_page_and_the_command_line_agree_at_random_states(name):
    door, rng, found, tried = DOORS[name], rng_for(name), [], 0
    while tried < STATES:
        out = disagreements(door, draw(door, rng))
        if out is None:  # the page refused the draw (two parameters together): draw again
            continue
        tried += 1
        found += out
    assert found == []
