"""Readouts with a hierarchy, in the built pages: after its controls, every chart, panel and
stepper leads with its headline (its record's one to three figures, before any other readout,
table, chart or step bar), shows each readout once, and the calculator folds its references.
The oracle is each widget's record read here and the pages' HTML parsed afresh."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from allreduce_explainer import widgets
from allreduce_explainer.widgets import views
from helpers import soup

pytestmark = pytest.mark.build
FIGURES = (views.STEPPER, views.CHART, views.PANEL)
# what a reader sees after the headline, never before it
LATER = "[data-readout], .chart, table, .stepper-bar, [data-role=grid]"


@pytest.fixture(scope="module")
def figures(built) -> dict[str, BeautifulSoup]:
    """Every widget's figure as the pages render it, by name (the first page that has it)."""
    found: dict[str, BeautifulSoup] = {}
    for path in sorted(built.glob("*/index.html")):
        page = soup(path)
        for fig in page.select("figure.widget[data-widget]"):
            found.setdefault(fig["data-widget"], fig)
    return found


@pytest.mark.parametrize("name", [n for n, w in widgets.REGISTRY.items() if w.view in FIGURES])
def test_each_widget_leads_with_its_headline(figures, name):
    fig = figures[name]
    record = widgets.REGISTRY[name]
    # a control's own echo (the calculator's "= 7 billion parameters") is part of the controls
    first = next(
        e for e in fig.select(f".readouts, {LATER}") if not e.find_parent(class_="controls")
    )
    assert first.name == "dl", name
    assert first["class"] == ["readouts", "headline"], (name, first)
    shown = [(d.find_previous_sibling("dt").get_text(), d["data-readout"]) for d in first("dd")]
    assert shown == [(label, key) for key, label in record.headline]
    state = record.function()
    assert [d.get_text() for d in first("dd")] == [state["readouts"][k] for k, _ in record.headline]
    assert len(fig.select(".readouts.headline")) == 1
    keys = [o["data-readout"] for o in fig.select("[data-readout]")]
    assert len(keys) == len(set(keys)), name  # each readout shown once


def test_the_calculator_answers_first_then_why_and_folds_its_references(figures):
    fig = figures["cluster"]
    order = [dl for dl in fig.select("dl.readouts")]
    keys = [[dd["data-readout"] for dd in dl("dd")] for dl in order]
    assert keys[:3] == [
        ["allreduce", "share_no_overlap", "share_with_overlap"],
        ["algorithm", "busbw", "band", "gradient", "cluster"],
        ["compute", "exposed", "params", "memory"],
    ]
    folded = fig.select("details.readouts-folded")
    assert len(folded) == 1 and not folded[0].has_attr("open")
    assert [dd["data-readout"] for dd in folded[0]("dd")] == ["ideal", "bound"]
    assert folded[0].summary.get_text().startswith("References")


def test_the_algorithm_menu_leads_with_three_and_groups_the_rest(figures):
    select = figures["cluster"].select_one("select[data-param=algorithm]")
    top = [o["value"] for o in select.find_all("option", recursive=False)]
    assert top == ["nccl", "ring", "multi-ring"]
    (group,) = select.find_all("optgroup")
    assert group["label"] == "more models"
    assert [o["value"] for o in group("option")] == [
        "nccl-ring", "nccl-tree", "tree", "hierarchical", "auto"
    ]  # fmt: skip
