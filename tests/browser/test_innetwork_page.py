"""Stage 9 in Chromium: the switch stepper with its switch row reaches the same sum on every GPU,
a control recomputes through Python, the panel and charts carry the cited runs; axe clean, no
scroll at 360 px."""

from __future__ import annotations

import math

import pytest

from allreduce_explainer.widgets import innetwork as inw
from helpers import axe_clean, enter, no_scroll_at_360, open_page, open_widget, step_to_end

SLUG = "in-network-reduction"


def test_switch_stepper_steps_to_the_sum_without_python(page, server):
    open_page(page, server, SLUG)
    w = page.locator("[data-widget=innetwork_stepper]")
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 0 of 2"
    assert w.locator("tbody tr[data-gpu]").count() == 8
    w.locator("[data-action=next]").click()
    assert w.locator("[data-role=phase]").inner_text() == "the switch adds"
    moves = w.locator("tr[data-gpu] td.move").all_inner_texts()
    assert moves == ["all chunks → switch"] * 8
    switch = w.locator("tr.node")
    assert switch.locator("th").inner_text() == "switch"
    step_to_end(w)
    verdict = w.locator("[data-role=verdict]").inner_text()
    assert "All 8 GPUs hold the same sum" in verdict and "exactly rounded" in verdict
    marks = w.locator("[data-role=check] tr.marks td").all_inner_texts()
    assert set(marks) == {"✓"}
    text = page.locator("main").inner_text()
    f = inw.facts()
    assert f"{f['nvls_wire']} GB/s" in text and f"{f['nvls_algbw']} GB/s" in text
    page.watch.assert_clean()


def test_gpu_count_recomputes_through_python(page, server):
    w = open_widget(page, server, SLUG, "innetwork_stepper")
    w.locator("[data-param=dtype]").select_option("int")
    page.wait_for_selector("[data-widget=innetwork_stepper]:not([aria-busy])", state="attached")
    enter(w, "gpus", "5")
    expected = inw.innetwork_stepper({"gpus": 5, "dtype": "int"})["readouts"]
    w.locator("[data-readout=ring_sent]", has_text=expected["ring_sent"]).wait_for()
    assert w.locator("[data-readout=steps]").inner_text() == "2 (switch) against 8 (ring)"
    step_to_end(w)
    assert w.locator("tbody tr[data-gpu]").count() == 5
    assert "exactly rounded sum too" in w.locator("[data-role=verdict]").inner_text()
    page.watch.assert_clean()


def test_panel_holds_the_measurements_and_recomputes(page, server):
    w = open_widget(page, server, SLUG, "innetwork_bandwidth")
    data = (
        "() => document.querySelector('[data-widget=innetwork_bandwidth] "
        "[data-figure=gpus]').data.map(t => [t.name, t.y.at(-1)])"
    )
    page.wait_for_function(
        "() => document.querySelector('[data-widget=innetwork_bandwidth] [data-figure=gpus]').data"
    )
    last = dict(page.evaluate(data))
    assert last["NVLS, measured (8 × H100)"] == 480 and last["ring, measured (8 × H100)"] == 370
    nvls = float(w.locator("[data-readout=nvls_nccl]").inner_text().split()[0])
    assert abs(nvls / 480 - 1) < 0.03  # NCCL's pick as runs measure it, against the ~480 cited
    enter(w, "servers", "16")
    expected = inw.innetwork_bandwidth({"servers": 16})["readouts"]
    w.locator("[data-readout=card_ring]", has_text=expected["card_ring"]).wait_for()
    assert w.locator("[data-readout=across_pick]").inner_text() == expected["across_pick"]
    page.watch.assert_clean()


def test_axe_clean_and_embeds(browser, server):
    axe_clean(browser, server, SLUG, ("innetwork_stepper", "innetwork_bandwidth"))


def test_no_horizontal_scroll_at_360px(browser, server):
    no_scroll_at_360(browser, server, SLUG)


# every cell of the grid, and every box at step 0, whose text is wider than the cell shows
CUT_CELLS = """w => [...w.querySelectorAll('[data-role=grid] :is(th, td, input)')]
    .filter(c => c.scrollWidth > c.clientWidth).map(c => c.value || c.textContent)"""


@pytest.mark.parametrize("width", [1280, 390])
def test_every_cell_of_the_switch_stepper_shows_its_whole_number(browser, server, width):
    """The default bf16 grid at each step: no cell's text is wider than its cell (the grid may
    scroll in its box instead), and the boxes of step 0 show each GPU's number to bf16's three
    significant digits, read against the state Python builds."""
    ctx = browser.new_context(viewport={"width": width, "height": 800})
    page = ctx.new_page()
    open_page(page, server, SLUG)
    w = page.locator("[data-widget=innetwork_stepper]")
    inputs = inw.innetwork_stepper({})["inputs"]
    boxes = w.locator("tr[data-gpu] td input")
    assert boxes.count() == sum(map(len, inputs))
    for v, text in zip(
        [v for row in inputs for v in row],
        boxes.evaluate_all("es => es.map(e => e.value)"),
        strict=True,
    ):
        shown = float(text.replace("−", "-"))
        half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(v))) - 2)  # of the third digit
        assert abs(shown - v) <= half_unit * (1 + 1e-9), (v, text)
    nxt = w.locator("[data-action=next]")
    while True:
        assert w.evaluate(CUT_CELLS) == [], f"step {w.get_attribute('data-step')}"
        if not nxt.is_enabled():
            break
        nxt.click()
    ctx.close()
