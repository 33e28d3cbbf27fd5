"""Stage 6 in Chromium: stepping to the exact sum, live method changes, counts and the chart."""

from allreduce_explainer.widgets import servers
from helpers import (
    computed_not_typed,
    enter,
    expect_counter,
    open_page,
    open_widget,
    refused,
    step_to_end,
)


def test_default_stepper_reaches_exact_match_without_python(page, server):
    open_page(page, server, "across-servers")
    w = page.locator("[data-widget=servers_stepper]")
    assert w.locator("[data-role=step-counter]").inner_text() == "Step 0 of 8"
    assert w.locator("tbody tr[data-gpu]").count() == 8
    for _ in range(4):  # 3 steps inside the servers, then the first across them
        w.locator("[data-action=next]").click()
    narration = w.locator("[data-role=narration]").inner_text()
    assert "across servers" in narration and "Network bytes this step" in narration
    step_to_end(w)
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    assert w.locator("[data-readout=network_steps]").inner_text() == "2 of 8"
    page.watch.assert_clean()


def test_switching_to_the_flat_ring_recomputes_counts_and_still_matches(page, server):
    w = open_widget(page, server, "across-servers", "servers_stepper")
    before = w.locator("[data-readout=per_card]").inner_text()
    w.locator("[data-param=method]").select_option("ring")
    expect_counter(w, "Step 0 of 14")
    assert w.locator("[data-readout=network_steps]").inner_text() == "14 of 14"
    assert w.locator("[data-readout=per_card]").inner_text() != before
    step_to_end(w)
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    w.locator("[data-param=method]").select_option("multi-ring")
    expect_counter(w, "Step 0 of 14")
    enter(w, "servers", "3")
    expect_counter(w, "Step 0 of 22")
    step_to_end(w)
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    page.watch.assert_clean()


def test_compare_table_counts_and_chart_follow_the_servers(page, server):
    w = open_widget(page, server, "across-servers", "servers_compare")
    assert w.locator("[data-readout=hierarchical_total]").inner_text() == "196 GB"
    assert "one ring per card" in w.locator("[data-readout=verdict]").inner_text()
    marker = "() => document.querySelector('[data-widget=servers_compare] .chart').data.at(-1).x[0]"
    assert page.evaluate(marker) == 8
    w.locator("[data-param-step='servers:-1']").click()
    page.wait_for_function(f"() => ({marker})() === 7")
    assert w.locator("[data-readout=hierarchical_total]").inner_text() == "168 GB"  # 2*6*14
    # a tiny message with NCCL's latencies: the hierarchical method wins
    for key, value in (("gradient_gb", "0.001"), ("intra_latency", "3.4"), ("inter_latency", "14")):
        enter(w, key, value)
        # one change at a time: a change made while another is computing can be lost (widget.js)
        page.wait_for_selector("[data-widget=servers_compare]:not([aria-busy])", state="attached")
    page.wait_for_function(
        "() => document.querySelector('[data-widget=servers_compare] [data-readout=verdict]')"
        ".textContent.includes('fastest is hierarchical')"
    )
    page.watch.assert_clean()


def test_bad_server_count_is_shown_next_to_its_control(page, server):
    w = open_widget(page, server, "across-servers", "servers_compare")
    assert "between 1 and 64" in refused(w, "servers", "65")
    page.watch.assert_clean()


def test_stage6_numbers_are_computed_not_typed(page, server):
    typed, shown = (
        ("196 GB", "220 GB", "0.069", "3.45 GB"),
        ("196 GB", "220 GB", "0.069 s", "3.45 GB"),
    )
    text = computed_not_typed(page, server, "across-servers", typed, shown)
    # the small message is timed by NCCL's model only, not by lock-step figures retracted later
    f = servers.facts()
    assert f"picks {f['srv_nccl_small_pick']} and takes {f['srv_nccl_small']}" in text
    assert "lock-step model's, and it is pessimistic" not in text
    assert "sum of shard p (one g-th" in text and "mod g" not in text


def test_nudge_buttons_stop_at_the_limits_of_their_box(page, server):
    """At 1 server the − button is disabled (the spec's minimum), and + is live; one step up
    turns − back on. The limits are the spec's, read from the rendered box."""
    w = open_widget(page, server, "across-servers", "servers_compare")
    lowest = servers.COMPARE["servers"].lo
    minus, plus = (
        w.locator("[data-param-step='servers:-1']"),
        w.locator("[data-param-step='servers:1']"),
    )
    assert not minus.is_disabled() and not plus.is_disabled()
    box = w.locator("[data-param=servers]")
    assert box.get_attribute("min") == str(lowest)
    enter(w, "servers", str(lowest))
    minus_js = (
        "document.querySelector(\"[data-widget=servers_compare] [data-param-step='servers:-1']\")"
    )
    page.wait_for_function(f"() => {minus_js}.disabled")
    assert not plus.is_disabled()
    plus.click()
    page.wait_for_function(f"() => !{minus_js}.disabled")
    assert box.input_value() == str(lowest + 1)
    page.watch.assert_clean()


def test_the_card_is_asked_in_gbit_and_python_converts_it(page, server):
    """Issue 46: the card's box reads 400 Gb/s, as on page 8 and the CLI; typing 200 shows
    what Python computes for a 200 Gb/s card (25 GB/s in the closed forms), and the URL
    records the card under its one name."""
    w = open_widget(page, server, "across-servers", "servers_compare")
    label = w.locator("label[for$=-nic_gbps]").inner_text()
    assert "Gb/s" in label and "GB/s" not in label
    assert w.locator("[data-param=nic_gbps]").input_value() == "400"
    want = servers.servers_compare({"nic_gbps": 200})["readouts"]
    enter(w, "nic_gbps", "200")
    w.locator("[data-readout=ring_time]", has_text=want["ring_time"]).wait_for()
    assert w.locator("[data-readout=multi_ring_time]").inner_text() == want["multi_ring_time"]
    assert "one 200 Gb/s card per GPU" in w.locator("[data-readout=nccl_note]").inner_text()
    assert "servers_compare.nic_gbps=200" in page.url
    page.watch.assert_clean()
