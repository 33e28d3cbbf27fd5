"""The widgets in marimo (`marimo run`, a real server) opened in Chromium: a stepper and a chart
render, the stepper steps, and a control change is recomputed by the kernel, redrawn, and reaches
marimo's reactive value (a cell that reads `c.value["gpus"]` runs again); the cluster's log panel
loads an example.

Marked `browser` (Chromium) and `notebook` (a marimo server).
"""

from __future__ import annotations

import pytest

from nbservers import marimo

pytestmark = [pytest.mark.browser, pytest.mark.notebook]
WAIT_MS = 120_000

APP = """import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

    from allreduce_explainer.notebook import show

    s = mo.ui.anywidget(show("ring-reduce-scatter", gpus=4))
    s
    return mo, s, show


@app.cell
def _(mo, show):
    c = mo.ui.anywidget(show("latency", gpus=64))
    c
    return (c,)


@app.cell
def _(c, mo):
    mo.md(f"kernel gpus: {c.value['gpus']}")
    return


@app.cell
def _(mo):
    from allreduce_explainer.notebook import Cluster

    k = mo.ui.anywidget(Cluster())
    k
    return (k,)


@app.cell
def _(k, mo):
    mo.md(f"kernel example: {k.value['example'] or 'none'}")
    return


if __name__ == "__main__":
    app.run()
"""


@pytest.fixture(scope="module")
def app(browser, tmp_path_factory):
    path = tmp_path_factory.mktemp("marimo") / "lab.py"
    path.write_text(APP)
    with marimo(path) as url:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        page.goto(url, timeout=WAIT_MS)
        yield page
        ctx.close()


def test_stepper_renders_and_steps(app):
    stepper = app.locator('.ae-notebook [data-widget^="ring_reduce_scatter-"]')
    stepper.locator("text=Step 0 of 3").wait_for(timeout=WAIT_MS)
    stepper.get_by_role("button", name="Next").click()
    stepper.locator("text=Step 1 of 3").wait_for()


def test_chart_change_recomputes_and_reaches_marimo(app):
    chart = app.locator('.ae-notebook [data-widget^="latency-"]')
    chart.locator(".main-svg").first.wait_for(timeout=WAIT_MS)
    app.locator("text=kernel gpus: 64").wait_for(timeout=WAIT_MS)
    box = chart.locator('input[data-param="gpus"]')
    box.fill("256")
    box.dispatch_event("change")
    app.locator("text=kernel gpus: 256").wait_for(timeout=WAIT_MS)


def test_the_clusters_example_button_loads_its_log_and_reaches_marimo(app):
    """The log panel's example buttons (logpanel.js) work in marimo too: the example's log is
    drawn in place of the examples, and marimo's value of the trait follows."""
    k = app.locator('.ae-notebook [data-widget^="cluster-"]')
    app.locator("text=kernel example: none").wait_for(timeout=WAIT_MS)
    k.locator('[data-example="nvls-1node"]').click()
    k.locator('[data-role="log-examples"]').wait_for(state="hidden", timeout=WAIT_MS)
    app.locator("text=kernel example: nvls-1node").wait_for(timeout=WAIT_MS)
