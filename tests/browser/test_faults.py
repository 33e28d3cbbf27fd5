"""Faults in the browser: a dead worker, Pyodide that cannot load, bad values in every control."""

from __future__ import annotations

from pathlib import Path

from helpers import PY_READY, expect_counter, open_page, skip_prediction
from screenshots import pages

ROOT = Path(__file__).resolve().parents[2]


BAD_NUMBERS = ["-1", "0", "1e12", "2.5", "-0", "99999999999999999999", ""]
BAD_TEXT = ["<script>window.__pwned=1</script>", "ü" * 300, "1,2,x", '{"a": [}']


def test_killed_worker_is_restarted_and_the_change_replayed(page, server):
    open_page(page, server, "ring-reduce-scatter", live=True)
    page.evaluate("() => AE.python.worker.terminate()")  # dies silently, like a crashed tab
    w = page.locator("[data-widget=ring_reduce_scatter]")
    w.locator("[data-param=gpus]").fill("6")
    w.locator("[data-param=gpus]").press("Enter")
    page.locator("[data-role=python-status]", has_text="restarting").wait_for()
    expect_counter(w, "Step 0 of 5")  # the same request, answered by the new worker
    page.wait_for_selector(PY_READY, state="attached")
    assert "restarted" in page.locator("[data-role=python-status]").inner_text()
    page.watch.assert_clean()


def test_blocked_pyodide_leaves_a_readable_steppable_page(browser, server):
    ctx = browser.new_context()
    ctx.route("**/vendor/pyodide/**", lambda route: route.abort())
    page = ctx.new_page()
    page.goto(f"{server}/ring-all-gather/")
    page.wait_for_selector("html[data-python=failed]", state="attached")
    assert "precomputed" in page.locator("[data-role=python-status]").inner_text()
    w = page.locator("[data-widget=ring_all_gather]")
    skip_prediction(w)  # a reader skips the question Python would judge
    for _ in range(3):
        w.locator("[data-action=next]").click()
    assert "exact match" in w.locator("[data-role=verdict]").inner_text().lower()
    w.locator("[data-param=gpus]").fill("5")
    w.locator("[data-param=gpus]").press("Enter")
    assert w.locator("[data-error-for=_]").inner_text()  # says why nothing recomputed
    assert w.locator("tbody tr[data-gpu]").count() == 4
    ctx.close()


def test_a_snapshot_that_does_not_load_falls_back_to_booting_python(page, server):
    """A host that loses or mangles the snapshot costs a slower start, not live recomputation."""
    warnings = []
    page.on("worker", lambda w: w.on("console", lambda m: warnings.append(m.text)))
    page.context.route("**/py/snapshot-*.bin", lambda r: r.fulfill(status=200, body=b"garbage"))
    open_page(page, server, "ring-reduce-scatter", live=True)
    w = page.locator("[data-widget=ring_reduce_scatter]")
    w.locator("[data-param=gpus]").fill("6")
    w.locator("[data-param=gpus]").press("Enter")
    expect_counter(w, "Step 0 of 5")
    assert any("snapshot did not load" in m for m in warnings), warnings
    page.watch.assert_clean()


def settle(page, widget_name: str, action) -> None:
    """Run `action` and wait until the widget has handled the resulting request."""
    page.evaluate(
        """name => { const el = document.querySelector(`[data-widget=${name}]`);
        el.__settled = false; el.addEventListener('ae:settled', () => el.__settled = true,
        {once: true}); }""",
        widget_name,
    )
    action()
    page.wait_for_function(
        f"() => document.querySelector('[data-widget={widget_name}]').__settled === true"
    )


def test_bad_values_in_every_control_of_every_page(page, server, site):
    for path in pages(site):
        if not (site / path.strip("/") / "index.html").read_text().count("data-param"):
            continue
        page.goto(f"{server}/{path}")
        page.wait_for_selector(PY_READY, state="attached")
        for widget in page.locator("[data-widget]").all():
            name = widget.get_attribute("data-widget")
            for control in widget.locator("input[data-param], textarea[data-param]").all():
                if not control.is_visible():
                    continue
                param = control.get_attribute("data-param")
                kind = control.get_attribute("type")
                values = BAD_NUMBERS if kind == "number" else BAD_TEXT
                for value in values:
                    if control.input_value() == value:
                        continue  # no change, no request
                    # leaving the field is what makes a text box (and any input) report a change
                    settle(
                        page,
                        name,
                        lambda c=control, v=value: (c.fill(v), c.evaluate("e => e.blur()")),
                    )
                    error = widget.locator(f"[data-error-for='{param}']").inner_text()
                    if error:  # said next to the control, which still shows what was typed
                        shown = control.input_value()
                        if kind == "number" and value:
                            assert shown and float(shown) == float(value), (path, param, value)
                        else:
                            assert shown == value
                        continue
                    if value == "":  # an emptied field may stand for the default
                        continue
                    # no message: then Python accepted exactly this value
                    accepted = page.evaluate(
                        "([n, p]) => AE.widgets.find(w => w.name === n).state.params[p]",
                        [name, param],
                    )
                    typed = float(value) if kind == "number" else value
                    assert accepted == typed, (path, name, param, value, accepted)
            assert page.evaluate("() => window.__pwned") is None
        page.watch.assert_clean()


def test_pasted_log_survives_a_reload_after_other_changes(page, server):
    open_page(page, server, "your-cluster", live=True)
    w = page.locator("[data-widget=cluster]")
    box = w.locator("[data-param=log]")
    box.fill((ROOT / "tests" / "data" / "allreduce_current.txt").read_text())
    box.press("Tab")
    w.locator("[data-readout=log_fit]", has_text="latency").wait_for()
    settle(
        page,
        "cluster",
        lambda: (
            w.locator("[data-param=mfu]").fill("0.5"),
            w.locator("[data-param=mfu]").press("Enter"),
        ),
    )
    # the URL is written once the change is on screen (widget.js's record, after the next paint)
    page.wait_for_function("() => location.search.includes('cluster.mfu=0.5')")
    assert "log" not in page.url.split("?", 1)[1]
    page.reload()
    page.wait_for_selector(PY_READY, state="attached")
    w.locator("[data-readout=log_fit]", has_text="latency").wait_for()
    assert w.locator("[data-param=mfu]").input_value() == "0.5"
    page.watch.assert_clean()


def test_corrupted_stored_value_is_dropped_with_a_notice(page, server):
    page.context.add_init_script(
        "try { localStorage.setItem('allreduce-explainer:cluster:log', '{not json'); } catch (e) {}"
    )
    open_page(page, server, "your-cluster", live=True)
    w = page.locator("[data-widget=cluster]")
    assert "discarded" in w.locator("[data-error-for=_]").inner_text()
    assert page.evaluate("() => localStorage.getItem('allreduce-explainer:cluster:log')") in (
        None,
        '{"v":1,"value":""}',
    )
    page.watch.assert_clean()


def test_pasted_markup_is_shown_as_text(page, server):
    open_page(page, server, "your-cluster", live=True)
    w = page.locator("[data-widget=cluster]")
    box = w.locator("[data-param=log]")
    hostile = (
        "<img src=x onerror=window.__pwned=1>\n<script>window.__pwned=2</script>\n"
        "# Rank  0 Group  0 Pid 1 on <b>host</b> device  0\n"
    )
    box.fill(hostile)
    box.press("Tab")
    w.locator("[data-readout=log_skipped]", has_text="not a data row").wait_for()
    assert page.evaluate("() => window.__pwned") is None
    assert w.locator("img[src=x], b").count() == 0
    page.watch.assert_clean()
