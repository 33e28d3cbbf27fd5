"""Stage 8 in Chromium: the shard stepper reaches DDP's parameters, a control recomputes through
Python, the chart draws every strategy and the GPU's memory; axe clean, no scroll at 360 px."""

from __future__ import annotations

from allreduce_explainer.widgets import shards
from helpers import (
    axe_clean,
    enter,
    expect_counter,
    no_scroll_at_360,
    open_page,
    open_widget,
    step_to_end,
)

SLUG = "sharded-data-parallel"


def test_stepper_steps_to_ddps_parameters_without_python(page, server):
    open_page(page, server, SLUG)
    w = page.locator("[data-widget=shard_stepper]")
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 0 of 7"
    assert w.locator("[data-role=phase]").inner_text() == "start"
    for _ in range(4):
        w.locator("[data-action=next]").click()
    assert w.locator("[data-role=phase]").inner_text() == "optimizer step"
    assert w.locator("[data-role=rows-show]").inner_text() == "parameters"
    step_to_end(w)
    verdict = w.locator("[data-role=verdict]")
    assert "hold exactly the parameters DDP gives" in verdict.inner_text()
    assert "ok" in verdict.get_attribute("class")
    marks = w.locator("[data-role=check] tr.marks td").all_inner_texts()
    assert marks and set(marks) == {"✓"}
    text = page.locator("main").inner_text()
    f = shards.facts()
    assert f["shard_ddp_gib"] + " GiB" in text and f["shard_big_fits"] in text
    page.watch.assert_clean()


def test_adam_in_bf16_recomputes_through_python_and_still_matches(page, server):
    w = open_widget(page, server, SLUG, "shard_stepper")
    w.locator("[data-param=dtype]").select_option("bf16")
    page.wait_for_selector("[data-widget=shard_stepper]:not([aria-busy])", state="attached")
    w.locator("[data-param=optimizer]").select_option("adam")
    w.locator("[data-readout=state]", has_text="3 value(s)").wait_for()
    expected = shards.shard_stepper({"dtype": "bf16", "optimizer": "adam"})
    assert w.locator("[data-readout=lr]").inner_text() == expected["readouts"]["lr"]
    for _ in range(4):
        w.locator("[data-action=next]").click()
    rows = w.locator("tr.extra th").all_inner_texts()
    assert any(r.startswith("Adam m") for r in rows) and any(
        r.startswith("FP32 master") for r in rows
    )
    step_to_end(w)
    assert "bit for bit" in w.locator("[data-role=verdict]").inner_text()
    enter(w, "gpus", "6")
    expect_counter(w, "Step 0 of 11")
    page.watch.assert_clean()


def test_chart_draws_every_strategy_and_recomputes(page, server):
    w = open_widget(page, server, SLUG, "shard_memory")
    names = (
        "() => document.querySelector('[data-widget=shard_memory] .chart').data.map(t => t.name)"
    )
    page.wait_for_function("() => document.querySelector('[data-widget=shard_memory] .chart').data")
    bars = page.evaluate(names)[:3]  # the parts of the model states, stacked per strategy
    assert bars == [name for _, name, _ in shards.PARTS]
    assert page.evaluate(
        "() => document.querySelector('[data-widget=shard_memory] .chart').data[0].x"
    ) == ["DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP", "HSDP"]
    time = "document.querySelector('[data-widget=shard_memory] [data-figure=time].chart')"
    page.wait_for_function(f"() => {time}.data")
    assert page.evaluate(f"() => {time}._fullLayout.xaxis.range[0]") == 0
    w.locator("[data-param=model]").select_option("llama3-70b")
    # the default's readout names ZeRO-3 too: wait for the recomputed text itself
    page.wait_for_function(
        "() => document.querySelector('[data-widget=shard_memory] [data-readout=fits]')"
        ".textContent.trim() === 'ZeRO-3 / FSDP'"
    )
    expected = shards.shard_memory({"model": "llama3-70b"})
    assert (
        w.locator("[data-readout=zero3_tokens]").inner_text()
        == expected["readouts"]["zero3_tokens"]
    )
    page.watch.assert_clean()


def test_axe_clean_and_embeds(browser, server):
    axe_clean(browser, server, SLUG, ("shard_stepper", "shard_memory"))


def test_no_horizontal_scroll_at_360px(browser, server):
    no_scroll_at_360(browser, server, SLUG)
