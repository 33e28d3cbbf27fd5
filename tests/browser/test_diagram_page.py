"""The steppers' diagrams in Chromium: present in every stepper, arrows change with the step and
match the state, the contributions toggle shows the state's symbols, axe clean, no page scroll at
360 px. Works from the pre-rendered state (no Python needed in the page)."""

from __future__ import annotations

import json

import pytest
from axe_playwright_python.sync_playwright import Axe

from helpers import axe_violations, skip_prediction

STEPPERS = [
    ("why-allreduce", "naive"),
    ("ring-reduce-scatter", "ring_reduce_scatter"),
    ("ring-all-gather", "ring_all_gather"),
    ("latency-ring-vs-tree", "tree_allreduce"),
    ("across-servers", "servers_stepper"),
]


def _state(widget) -> dict:
    return json.loads(widget.locator("script[data-role=state]").text_content())


def _cells(runs):
    return [x for x, k in zip(runs[::2], runs[1::2], strict=True) for _ in range(k)]


@pytest.mark.parametrize(("slug", "name"), STEPPERS)
def test_diagram_arrows_follow_the_steps(page, server, slug, name):
    page.goto(f"{server}/{slug}/")
    w = page.locator(f"[data-widget={name}]")
    skip_prediction(w)
    svg = w.locator("svg[data-role=diagram]")
    assert svg.count() == 1
    state = _state(w)
    copies = 2 if name == "tree_allreduce" else 1  # each GPU once in each of the two trees
    assert svg.locator(".node").count() == state["gpus"] * copies
    assert svg.locator(".arrow").count() == 0
    seen = set()
    for k in range(1, min(4, len(state["frames"]))):
        w.locator("[data-action=next]").click()
        want = [[a[0], a[1], a[4]] for a in state["frames"][k]["arrows"]]
        got = svg.locator(".arrow").evaluate_all(
            "els => els.map(e => [+e.dataset.from, +e.dataset.to, e.querySelector('text')"
            ".textContent])"
        )
        assert got == want
        marked = svg.locator(".node.sending").evaluate_all("els => els.map(e => +e.dataset.node)")
        assert sorted(marked) == sorted({a[7] for a in state["frames"][k]["arrows"]})
        assert f"step {k}" in svg.get_attribute("aria-label")
        seen.add(json.dumps(got))
    assert len(seen) > 1  # the arrows (their ends or values) change from step to step


@pytest.mark.parametrize(("slug", "name"), STEPPERS)
def test_contributions_toggle_shows_the_states_symbols(page, server, slug, name):
    page.goto(f"{server}/{slug}/")
    w = page.locator(f"[data-widget={name}]")
    skip_prediction(w)
    state = _state(w)
    assert w.locator("[data-role=holders]").count() == 0
    toggle = w.locator("[data-action=contributions]")
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert w.locator("[data-role=letters]").is_visible()
    k = len(state["frames"]) - 1
    w.locator("[data-action=next]").click()
    w.locator("[data-action=reset]").click()
    for _ in range(k):
        w.locator("[data-action=next]").click()
    want = [state["symbols"][i] for row in state["frames"][k]["holders"] for i in _cells(row)]
    assert w.locator("[data-role=holders]").all_inner_texts() == want
    toggle.click()
    assert w.locator("[data-role=holders]").count() == 0


def test_servers_grid_is_grouped_by_server(page, server):
    page.goto(f"{server}/across-servers/")
    w = page.locator("[data-widget=servers_stepper]")
    heads = w.locator("tbody.row-group tr.group-head th").all_inner_texts()
    assert heads == ["server 0", "server 1"]
    assert w.locator("tbody.row-group").nth(1).locator("tr[data-gpu]").count() == 4


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_clean_with_diagram_and_contributions_at_360px(browser, server, scheme):
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, color_scheme=scheme)
    page = ctx.new_page()
    axe = Axe()
    for slug, name in STEPPERS:
        page.goto(f"{server}/{slug}/")
        w = page.locator(f"[data-widget={name}]")
        skip_prediction(w)
        w.locator("[data-action=next]").click()
        w.locator("[data-action=contributions]").click()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360, slug
        box = w.locator("svg[data-role=diagram]").bounding_box()
        assert box["width"] > 200, slug
        bad = axe_violations(axe, page)
        assert bad == [], f"{slug} ({scheme}): {bad}"
    ctx.close()
