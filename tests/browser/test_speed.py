"""The speed levers keep the page right: rapid input draws only the newest answer, which is
Python's for the last value typed, and charts still take a new theme's colours. (Their speed is
bench/site.py's to measure: no timing is asserted here.)"""

from allreduce_explainer.widgets import WIDGETS
from helpers import open_page

SCALING = "[data-widget=scaling]"
# Five changes of the GPU count in one task, as fast as a reader can hold down a key: the first
# goes to Python, the others wait behind it, the latest winning. Resolves, once the widget is
# idle, with the number of answers drawn, the final parameters and readouts.
BURST_JS = """async (without) => {
  const w = document.querySelector('[data-widget="scaling"]');
  const c = w.querySelector('[data-param="gpus"]');
  const wo = AE.widgets.find((x) => x.el === w);
  AE.bench.without = new Set(without);
  const before = AE.bench.timings.length;
  const idle = new Promise((resolve) => {
    const on = () => {
      if (w.hasAttribute("aria-busy")) return;
      w.removeEventListener("ae:settled", on);
      resolve();
    };
    w.addEventListener("ae:settled", on);
  });
  for (const n of [16, 32, 128, 256, 512]) {
    c.value = String(n);
    c.dispatchEvent(new Event("change", { bubbles: true }));
  }
  await idle;
  AE.bench.without = new Set();
  const readouts = {};
  w.querySelectorAll("[data-readout]").forEach((o) => {
    readouts[o.getAttribute("data-readout")] = o.textContent;
  });
  return { drawn: AE.bench.timings.length - before, params: wo.state.params, readouts };
}"""


def test_rapid_input_draws_only_the_newest_answer(page, server):
    open_page(page, server, "why-allreduce", live=True)
    got = page.evaluate(BURST_JS, [])
    assert got["drawn"] == 1  # the first change's answer was stale when it came: not drawn
    assert got["params"]["gpus"] == 512
    expected = WIDGETS["scaling"](got["params"])["readouts"]  # CPython's, for the same inputs
    assert {k: got["readouts"][k] for k in expected if k in got["readouts"]} == {
        k: v for k, v in expected.items() if k in got["readouts"]
    }
    assert page.locator(f"{SCALING} [data-param=gpus]").input_value() == "512"
    # the bench's switch: without the lever, the stale answer is drawn too
    assert page.evaluate(BURST_JS, ["coalesce"])["drawn"] == 2
    page.watch.assert_clean()


def test_charts_take_the_new_theme_colours(page, server):
    open_page(page, server, "why-allreduce", live=True)
    chart = f"document.querySelector('{SCALING} [data-role=chart]')"
    page.wait_for_function(f"() => {chart}._fullLayout")
    colour = f"() => [{chart}._fullLayout.font.color, getComputedStyle({chart}).color]"
    drawn, css = page.evaluate(colour)
    assert drawn == css
    page.click("[data-action=theme]")
    page.wait_for_function(f"() => {chart}._fullLayout.font.color !== {drawn!r}")
    drawn2, css2 = page.evaluate(colour)
    assert drawn2 == css2 != css
    page.watch.assert_clean()
