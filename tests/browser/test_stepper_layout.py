"""Every stepper laid out for the screen: at 1280 × 800, once the widget is scrolled to, its
diagram, its grid, the step's narration and the Next button are all inside the one viewport (a
reader sees the arrows, the numbers and the words of a step together); at 360 px the page never
scrolls sideways, the diagram sits above the grid and the grid scrolls in its own box.

The steppers are every widget whose view is the stepper, found on the pages that place them.
Works from the pre-rendered states (no Python needed in the page); measured at step 2, where
the narration of a step is longest on most steppers, and at the last step for the phone."""

from __future__ import annotations

import re

import pytest

from allreduce_explainer import widgets
from allreduce_explainer.widgets import views
from helpers import PY_READY, ROOT, skip_prediction, step_to_end

PLACED = re.compile(r'\{\{\s*widget\("(\w+)"\)\s*\}\}')


def steppers() -> list[tuple[str, str]]:
    """(page slug, widget name) for every stepper a page places, read from content/."""
    found = []
    for md in sorted((ROOT / "content").glob("*.md")):
        slug = re.search(r"^slug:\s*(\S+)", md.read_text(), re.M)
        for name in PLACED.findall(md.read_text()):
            if widgets.REGISTRY[name].view == views.STEPPER:
                found.append((slug.group(1), name))
    return found


STEPPERS = steppers()
PARTS = {
    "diagram": "svg[data-role=diagram]",
    "grid": "[data-role=grid]",
    "narration": "[data-role=narration]",
    "next": "[data-action=next]",
}


def test_every_stepper_is_found():
    """An oracle for the finder: the steppers of the registry, each placed once."""
    registered = {n for n, w in widgets.REGISTRY.items() if w.view == views.STEPPER}
    assert sorted(name for _, name in STEPPERS) == sorted(registered)
    assert len(registered) >= 7


@pytest.fixture(scope="module")
def desktop(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    yield ctx.new_page()
    ctx.close()


def stepper_on(page, server, slug: str, name: str):
    """Stepper `name` on `slug`'s page, its prediction (if it asks one) skipped."""
    page.goto(f"{server}/{slug}/")
    w = page.locator(f"[data-widget={name}]")
    skip_prediction(w)
    return w


@pytest.fixture(scope="module")
def phone(browser):
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    yield ctx.new_page()
    ctx.close()


# steppers whose drawing is a whole server, as wide as the figure (templates/widgets/
# nccl_topology.html): the drawing above the grid, the step buttons beside the grid and the
# narration under both. Their controls (a topology file's box among them) sit above the drawing,
# so the one viewport is held from the drawing down to the narration's end.
ABOVE = {"nccl_topology"}


@pytest.mark.parametrize(("slug", "name"), STEPPERS)
def test_diagram_grid_narration_and_next_in_one_viewport(desktop, server, slug, name):
    page = desktop
    w = stepper_on(page, server, slug, name)
    for _ in range(2):
        w.locator("[data-action=next]").click()
    top = w.locator(PARTS["diagram"]) if name in ABOVE else w
    top.evaluate("e => e.scrollIntoView({block: 'start'})")
    boxes = {part: w.locator(sel).bounding_box() for part, sel in PARTS.items()}
    for part, b in boxes.items():
        assert b is not None, f"{name}: no {part}"
        assert b["x"] >= 0 and b["x"] + b["width"] <= 1280, f"{name}: {part} {b}"
        assert b["y"] >= 0 and b["y"] + b["height"] <= 800, f"{name}: {part} {b}"
    d, g = boxes["diagram"], boxes["grid"]
    if name in ABOVE:
        assert d["y"] + d["height"] <= g["y"], f"{name}: the server is not drawn above the grid"
        assert boxes["next"]["x"] >= g["x"] + g["width"], f"{name}: Next is not beside the grid"
    else:
        assert d["x"] + d["width"] <= g["x"], f"{name}: the diagram is not beside the grid"
        assert g["y"] < d["y"] + d["height"], f"{name}: the grid starts below the diagram"
    # the diagram is as large as what it draws: its box is the layout's, not a wide empty one
    view_w = float(page.locator(f"[data-widget={name}] svg[data-role=diagram]").get_attribute(
        "viewBox").split()[2])  # fmt: skip
    assert abs(d["width"] - view_w) <= 1, f"{name}: diagram {d['width']} px for {view_w}"


@pytest.mark.parametrize(("slug", "name"), STEPPERS)
def test_no_sideways_page_scroll_at_360px(phone, server, slug, name):
    page = phone
    w = stepper_on(page, server, slug, name)
    step_to_end(w)  # the widest frame is the last
    assert page.evaluate("document.documentElement.scrollWidth") <= 360, name
    d = w.locator(".diagram-scroll").bounding_box()
    g = w.locator("[data-role=grid]").bounding_box()
    assert d["y"] + d["height"] <= g["y"], f"{name}: the diagram is not above the grid"
    assert g["x"] >= 0 and g["x"] + g["width"] <= 360, f"{name}: grid {g}"
    overflow = w.locator("[data-role=grid]").evaluate("e => getComputedStyle(e).overflowX")
    assert overflow == "auto"


def test_a_new_state_draws_the_diagram_at_its_own_size(desktop, server):
    """The tree stepper recomputed for 5 GPUs (a smaller layout than the page's first state's):
    the diagram's box is the new layout's size, not the first one's aspect ratio with the new
    drawing shrunk inside it."""
    page = desktop
    page.goto(f"{server}/latency-ring-vs-tree/?tree_allreduce.gpus=5")
    page.wait_for_selector(PY_READY, state="attached")
    svg = page.locator("[data-widget=tree_allreduce] svg[data-role=diagram]")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-widget=tree_allreduce] .node').length === 10"
    )
    _, _, w, h = map(float, svg.get_attribute("viewBox").split())
    box = svg.bounding_box()
    assert abs(box["width"] - w) <= 1 and abs(box["height"] - h) <= 1, (box, w, h)
