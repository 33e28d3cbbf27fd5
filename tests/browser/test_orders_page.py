"""Stage 3's order lab in Chromium: readable before Python starts (the pre-rendered readouts and
summary are Python's defaults), a control recomputes through Python, the page's answers quote
the widget's facts; the methods' results per element in view at the default; axe clean, no
horizontal scroll at 360 px."""

from __future__ import annotations

from allreduce_explainer.widgets import orders as w
from helpers import axe_clean, no_scroll_at_360, open_page

SLUG = "ring-all-gather"
SEL = "[data-widget=orders]"


def test_readable_before_python(page, server):
    open_page(page, server, SLUG)
    lab = page.locator(SEL)
    state = w.orders()
    assert lab.locator("[data-readout=agree]").inner_text().startswith("yes, all 4 GPUs")
    assert lab.locator("[data-readout=bucket]").inner_text() == state["readouts"]["bucket"]
    assert lab.locator("[data-readout=differ]").inner_text() == state["readouts"]["differ"]
    for m in w.METHODS:  # each method's result per element, in view, not behind a toggle
        readout = lab.locator(f"[data-readout=values_{m}]")
        assert readout.is_visible() and readout.inner_text() == state["readouts"][f"values_{m}"]
    assert lab.locator("[data-role=chart-summary]").first.inner_text() == state["summary"]
    text = page.locator("main").inner_text()
    f = w.facts()
    assert f"{f['orders_changed']} of its {f['orders_length']} elements change bits" in text
    assert f"{f['orders_cost_bf16']} in BF16" in text
    page.watch.assert_clean()


def test_dtype_and_gpus_recompute_through_python(page, server):
    open_page(page, server, SLUG, live=True)
    lab = page.locator(SEL)
    lab.locator("[data-param=dtype]").select_option("fp32")
    page.wait_for_selector(f"{SEL}:not([aria-busy])", state="attached")
    lab.locator("[data-param=gpus]").fill("6")
    lab.locator("[data-param=gpus]").press("Enter")
    want = w.orders({"dtype": "fp32", "gpus": 6})["readouts"]
    lab.locator("[data-readout=agree]", has_text="all 6 GPUs").wait_for()
    assert lab.locator("[data-readout=values_ring]").inner_text() == want["values_ring"]
    assert lab.locator("[data-readout=cost]").inner_text() == want["cost"]
    page.watch.assert_clean()


def test_axe_clean_and_embeds(browser, server):
    axe_clean(browser, server, SLUG, ("orders",))


def test_no_horizontal_scroll_at_360px(browser, server):
    no_scroll_at_360(browser, server, SLUG)
