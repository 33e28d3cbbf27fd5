"""Page 10 in Chromium: the calculator opens on page 1's case timed by NCCL's model, recomputes
through Python, reads a pasted, opened or example nccl-tests log, draws both fits and applies
NCCL's."""

from __future__ import annotations

from pathlib import Path

from allreduce_explainer.logs import examples as log_examples
from allreduce_explainer.widgets import WIDGETS
from helpers import enter, open_page, open_widget

SLUG = "your-cluster"
DATA = Path(__file__).parents[1] / "data"
LOG_309 = DATA / "nccl-tests" / "nccl-tests-309-16xh100-2nodes-ib-ndr.txt"
TRACES = (
    "() => document.querySelector('[data-widget=cluster] [data-figure=time]').data.map(t => t.name)"
)


def test_page_opens_on_stage_one_before_python(page, server):
    open_page(page, server, SLUG)
    w = page.locator("[data-widget=cluster]")

    want = WIDGETS["cluster"]()["readouts"]  # the build's state, as Python computes it
    assert w.locator("[data-readout=allreduce]").inner_text() == want["allreduce"]
    assert want["allreduce"].endswith(" s") and float(want["allreduce"].split()[0]) < 0.1
    assert "Ring with the Simple protocol" in w.locator("[data-readout=algorithm]").inner_text()
    busbw = w.locator("[data-readout=busbw]").inner_text()
    assert busbw.startswith(want["busbw"].split(" (")[0])
    assert float(busbw.split()[0]) <= 384.0  # 8 cards x 48 GB/s: NCCL's own ceiling (N4)
    assert "single ring 551 ms" in w.locator("[data-readout=ideal]").text_content()  # one unit
    bound = w.locator("[data-readout=bound]").text_content()
    assert "network cards" in bound and "SHARP" in bound
    assert w.locator("[data-readout=params_words]").inner_text() == "= 7 billion parameters"
    text = page.locator("main").inner_text()
    assert "0.55 s" in text and "370 GB/s" in text and "46–49" in text
    page.wait_for_function(
        "() => document.querySelector('[data-widget=cluster] .chart:not([data-figure])').data"
    )
    page.watch.assert_clean()


def test_model_gpu_and_algorithm_recompute_live(page, server):
    w = open_widget(page, server, SLUG, "cluster")
    w.locator("[data-param=model]").select_option("llama3-70b")
    w.locator("[data-readout=params]", has_text="70,553,706,496").wait_for()
    assert w.locator("[data-param=params]").input_value() == "70553706496"
    w.locator("[data-param=algorithm]").select_option("nccl-tree")
    w.locator("[data-readout=algorithm]", has_text="Tree with the").wait_for()
    w.locator("[data-param=gpu]").select_option("MI300X")
    w.locator("[data-readout=algorithm]", has_text="not MI300X").wait_for()
    w.locator("[data-readout=cluster]", has_text="MI300X").wait_for()
    assert w.locator("[data-param=link_gbps]").input_value() == "448"
    w.locator("[data-param-step='gpus:8']").click()
    w.locator("[data-readout=cluster]", has_text="72 × MI300X").wait_for()
    enter(w, "gpus", "60")
    w.locator("[data-error-for=gpus]", has_text="multiple of 8").wait_for()
    page.watch.assert_clean()


def test_pasting_a_log_draws_the_fit_and_the_button_applies_it(page, server):
    w = open_widget(page, server, SLUG, "cluster")
    box = w.locator("[data-param=log]")
    box.fill((DATA / "allreduce_current.txt").read_text())
    box.press("Tab")
    w.locator("[data-readout=log_fit]", has_text="latency 30 µs").wait_for()
    page.wait_for_function(f"() => ({TRACES})().includes('alpha-beta fit')")
    names = set(page.evaluate(TRACES))
    fitted = "NCCL's regimes, fitted to the run"
    assert {"measured (out-of-place)", "alpha-beta fit", fitted} <= names
    assert "calculator (NCCL's choice (its fitted time))" in names
    # a two-server log: applying NCCL's fit sets the card rate that reproduces its busbw
    box.fill(LOG_309.read_text())
    box.press("Tab")
    w.locator("[data-readout=log_status]", has_text="16 GPUs").wait_for()
    assert "NVLSTree/Simple" in w.locator("[data-readout=log_fit]").inner_text()
    assert "above it" in w.locator("[data-readout=log_line_rate]").inner_text()
    button = w.locator("[data-action=use-fit]")
    assert button.is_enabled()
    button.click()
    w.locator("[data-readout=cluster]", has_text="323 Gb/s (40.38 GB/s) per card").wait_for()
    assert w.locator("[data-param=network]").input_value() == "custom"
    assert w.locator("[data-param=nic_gbps]").input_value() == "323"
    assert w.locator("[data-param=algorithm]").input_value() == "nccl"
    # the log is kept in the browser's storage, not in the URL
    assert "log" not in page.url
    page.watch.assert_clean()


def test_a_log_without_rank_lines_asks_for_the_count_and_bad_lines_are_listed(page, server):
    w = open_widget(page, server, SLUG, "cluster")
    box = w.locator("[data-param=log]")
    rows = (DATA / "allreduce_rows_only.txt").read_text()
    box.fill(rows + "this is not a row\n")
    box.press("Tab")
    w.locator("[data-readout=log_status]", has_text="enter the count").wait_for()
    enter(w, "log_gpus", "32")
    w.locator("[data-readout=log_status]", has_text="32 GPUs (as entered)").wait_for()
    assert "not a data row" in w.locator("[data-readout=log_skipped]").inner_text()
    page.watch.assert_clean()


def test_opening_a_file_reads_it_in_the_browser_and_a_reload_keeps_it(page, server):
    w = open_widget(page, server, SLUG, "cluster")
    w.locator("[data-role=log-file]").set_input_files(str(DATA / "allreduce_two_runs.txt"))
    w.locator("[data-readout=log_status]", has_text="Run 1 of 2").wait_for()
    page.reload()
    page.wait_for_selector("html[data-python=ready]", state="attached")
    w.locator("[data-readout=log_status]", has_text="Run 1 of 2").wait_for()
    page.watch.assert_clean()


def test_an_opened_file_stays_through_other_changes_and_an_example_clears_it(page, server):
    """Python does not send an opened file back (views.unchanged_left_out); the page keeps the
    text it sent: a change of the GPU count still compares the same run, the stored copy stays,
    and choosing an example replaces the file."""
    w = open_widget(page, server, SLUG, "cluster")
    w.locator("[data-role=log-file]").set_input_files(str(DATA / "allreduce_two_runs.txt"))
    w.locator("[data-readout=log_status]", has_text="Run 1 of 2").wait_for()
    text = (DATA / "allreduce_two_runs.txt").read_text()
    answers = page.evaluate("""() => { const p = AE.python.call; window.__echoed = [];
      AE.python.call = (fn, ps) => p.call(AE.python, fn, ps).then((r) => { window.__echoed.push(
        r.response.ok && "log_file" in r.response.state.params); return r; }); }""")
    assert answers is None
    enter(w, "gpus", "32")
    w.locator("[data-readout=log_status]", has_text="Run 1 of 2").wait_for()
    idle = "!document.querySelector('[data-widget=cluster][aria-busy]')"
    page.wait_for_function(f"() => window.__echoed.length > 0 && {idle}")
    state = "() => AE.widgets.find(x => x.name === 'cluster').state.params.log_file"
    assert page.evaluate(state) == text
    assert page.evaluate("() => window.__echoed") == [False]  # not sent back
    stored = "() => JSON.parse(localStorage.getItem('allreduce-explainer:cluster:log_file')).value"
    assert page.evaluate(stored) == text
    w.locator("[data-param=example]").select_option("ib-2nodes")
    w.locator("[data-readout=log_status]", has_text="16 GPUs").wait_for()
    assert page.evaluate(state) == "" == page.evaluate(stored)
    page.watch.assert_clean()


def test_long_opened_files_are_read_after_changes_and_a_new_one_replaces_the_old(
    page, server, tmp_path
):
    """A log over 64 KiB goes to Python once and later calls name it (worker.js, bridge.keep):
    after a change of the GPU count the page shows what Python computes from the whole text at
    the new count, and a second long file replaces the first, not the first kept one."""

    logs = []
    for k, source in enumerate((LOG_309, DATA / "allreduce_two_runs.txt")):
        text = source.read_text()
        text = text * (70_000 // len(text) + 1)
        assert len(text) > 1 << 16
        logs.append(tmp_path / f"long-{k}.log")
        logs[-1].write_text(text)
    w = open_widget(page, server, SLUG, "cluster")
    idle = "() => !document.querySelector('[data-widget=cluster][aria-busy]')"
    params = "() => AE.widgets.find(x => x.name === 'cluster').state.params"
    for k, log in enumerate(logs):
        w.locator("[data-role=log-file]").set_input_files(str(log))
        page.wait_for_function(f"() => ({params})().log_file.length === {len(log.read_text())}")
        enter(w, "gpus", ("32", "64")[k])
        page.wait_for_function(f"() => ({params})().gpus === {(32, 64)[k]}")
        page.wait_for_function(idle)
        shown = page.evaluate(params)
        assert shown["log_file"] == log.read_text()
        want = WIDGETS["cluster"](shown)["readouts"]
        keys = [x for x in want if x.startswith("log_") and want[x]]
        assert "log_status" in keys
        for key in keys:
            got = w.locator(f"[data-readout={key}]").text_content()
            assert got == want[key], key
    page.watch.assert_clean()


def test_a_file_over_the_limit_is_refused_with_a_message(page, server, tmp_path):
    big = tmp_path / "big.log"
    big.write_text("#\n" * 2_600_000)
    w = open_widget(page, server, SLUG, "cluster")
    w.locator("[data-role=log-file]").set_input_files(str(big))
    w.locator("[data-error-for=log_file]", has_text="1 MB").wait_for()
    page.watch.assert_clean()


def test_typing_a_figure_makes_that_choice_custom(page, server):
    w = open_widget(page, server, SLUG, "cluster")
    enter(w, "link_gbps", "300")
    w.locator("[data-param=gpu]").locator("option:checked", has_text="custom").wait_for(
        state="attached"
    )
    assert w.locator("[data-param=link_gbps]").input_value() == "300"
    w.locator("[data-param=gpu]").select_option("B200")
    w.locator("[data-readout=cluster]", has_text="B200").wait_for()
    state = "() => AE.widgets.find(x => x.name === 'cluster').state.params.link_gbps"
    assert page.evaluate(state) == 900  # the field shows it once it loses focus
    enter(w, "params", "1e9")
    w.locator("[data-readout=params]", has_text="1,000,000,000").wait_for()
    assert w.locator("[data-param=model]").input_value() == "custom"
    page.watch.assert_clean()


def test_an_example_fills_the_box_is_in_the_url_and_a_file_replaces_it(page, server):
    w = open_widget(page, server, SLUG, "cluster")
    w.locator("[data-param=example]").select_option("ib-2nodes")
    w.locator("[data-readout=log_status]", has_text="16 GPUs").wait_for()
    assert w.locator("[data-param=log]").input_value() == LOG_309.read_text()
    assert "NVLSTree/Simple" in w.locator("[data-readout=log_fit]").inner_text()
    assert "cluster.example=ib-2nodes" in page.url
    # a link to another example opens on it
    page.goto(f"{server}/{SLUG}/?cluster.example=ring-1node")
    page.wait_for_selector("html[data-python=ready]", state="attached")
    w.locator("[data-readout=log_status]", has_text="together-nccl-tests").wait_for()
    ring = DATA / "nccl-tests" / "together-8xh100-1node-ring.txt"
    assert w.locator("[data-param=log]").input_value() == ring.read_text()
    # an opened file takes over and the menu goes back to none
    w.locator("[data-role=log-file]").set_input_files(str(DATA / "allreduce_two_runs.txt"))
    w.locator("[data-readout=log_status]", has_text="Run 1 of 2").wait_for()
    assert w.locator("[data-param=example]").input_value() == ""
    page.watch.assert_clean()


def test_log_panel_shows_its_examples_not_empty_charts_until_a_log_loads(page, server):
    """Before a log: no chart drawn (both hidden, no Plotly in them), the examples and their
    sentence in their place; an example's button loads it and both charts are drawn."""
    w = open_widget(page, server, SLUG, "cluster")
    examples = w.locator("[data-role=log-examples]")
    assert examples.is_visible() and "No log yet" in examples.inner_text()
    for name in ("time", "busbw"):
        chart = w.locator(f"[data-role=chart][data-figure={name}]")
        assert chart.is_hidden()
        assert chart.evaluate("el => !el.data && !el.querySelector('svg')")
        assert chart.locator("xpath=following-sibling::*[1]").is_hidden()  # its Save SVG / PNG
    assert w.locator("[data-example]").count() == len(log_examples.EXAMPLES)
    w.locator("[data-example=ib-2nodes]").click()
    page.wait_for_function(
        "() => ['time', 'busbw'].every(n => (document.querySelector("
        "`[data-widget=cluster] [data-figure=${n}][data-role=chart]`).data || []).length)"
    )
    assert examples.is_hidden()
    assert w.locator("[data-role=chart][data-figure=time]").is_visible()
    tools = w.locator("[data-role=chart][data-figure=time] + .figure-tools")
    assert tools.is_visible() and "Save SVG" in tools.inner_text()
    assert "measured (out-of-place)" in page.evaluate(TRACES)
    assert w.locator("[data-param=example]").input_value() == "ib-2nodes"
    page.watch.assert_clean()
