"""The widgets in a real JupyterLab, opened in Chromium: a stepper and a chart render from the
kernel, a control change is recomputed by the kernel and redrawn, a stepper steps, and a chart's
parameters set in the browser reach the kernel's traits.

Marked `browser` (Chromium) and `notebook` (a JupyterLab server): `make test` runs them, the
edit-test loop does not.
"""

from __future__ import annotations

import nbformat
import pytest

from helpers import ROOT
from nbservers import jupyterlab

pytestmark = [pytest.mark.browser, pytest.mark.notebook]
WAIT_MS = 120_000  # a kernel's start and JupyterLab's first load on two busy cores
# the package's server extension, off unless asked for (README), asked for here: its test below
ON = "--ServerApp.jpserver_extensions=allreduce_explainer.notebook.server=True"

CELLS = [
    "from allreduce_explainer.notebook import show\ns = show('ring-reduce-scatter', gpus=4)\ns",
    "c = show('latency', gpus=64)\nc",
    # two widgets' GPUs linked in the browser: one's control moves the other, whose kernel answers
    "import ipywidgets\nfrom allreduce_explainer.notebook import Sends, Steps\n"
    "a, b = Sends(gpus=64), Steps(gpus=64)\nipywidgets.jslink((a, 'gpus'), (b, 'gpus'))\n"
    "display(a, b)",
    "k = show('cluster')\nk",
]


# every widget's box, in its shadow root
BOXES = (
    "[...document.querySelectorAll('.ae-notebook-host')]"
    ".map(h => h.shadowRoot.querySelector('.ae-notebook'))"
)


def write_notebook(folder, cells: list[str], name: str = "lab.ipynb") -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, folder / name)
    return name


def run_all(page, url: str) -> None:
    """Open the notebook, wait for its kernel, run every cell by JupyterLab's own command."""
    page.goto(url, timeout=WAIT_MS)
    page.wait_for_function(
        "window.jupyterapp && document.body.textContent.includes('Python 3 (ipykernel) | Idle')",
        timeout=WAIT_MS,
    )
    page.evaluate("jupyterapp.commands.execute('notebook:run-all-cells')")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("lab")


@pytest.fixture(scope="module")
def lab(browser, folder):
    name = write_notebook(folder, CELLS)
    with jupyterlab(folder, options=(ON,)) as url:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        run_all(page, url.format(path=name))
        yield page
        ctx.close()


def test_stepper_renders_steps_and_recomputes_in_the_kernel(lab):
    stepper = lab.locator('.ae-notebook [data-widget^="ring_reduce_scatter-"]')
    stepper.locator("text=Step 0 of 3").wait_for(timeout=WAIT_MS)  # n - 1 steps for 4 GPUs
    stepper.get_by_role("button", name="Next").click()
    stepper.locator("text=Step 1 of 3").wait_for()  # in the browser: no kernel asked
    stepper.locator('input[data-param="gpus"]').fill("6")
    stepper.locator('input[data-param="gpus"]').dispatch_event("change")
    stepper.locator("text=Step 0 of 5").wait_for()  # the kernel's new state: 6 GPUs, 5 steps
    assert stepper.locator("tbody tr", has_text="GPU 5").count() >= 1


def gpus_change_redraws(page, typed_in, redrawn, gpus: str) -> None:
    """`gpus` typed into the GPUs box of widget `typed_in` (a change event, as a user's Enter);
    returns once widget `redrawn`'s first readout differs from before: the kernel answered."""
    readout = redrawn.locator("[data-readout]").first
    before = readout.text_content()
    box = typed_in.locator('input[data-param="gpus"]')
    box.fill(gpus)
    box.dispatch_event("change")
    page.wait_for_function(
        "([el, t]) => el.textContent !== t",
        arg=[readout.element_handle(), before],
        timeout=WAIT_MS,
    )


def test_chart_renders_and_a_change_reaches_the_kernel(lab):
    chart = lab.locator('.ae-notebook [data-widget^="latency-"]')
    chart.locator(".main-svg").first.wait_for(timeout=WAIT_MS)  # Plotly, from the wheel's copy
    gpus_change_redraws(lab, chart, chart, "512")
    # the kernel's trait holds the browser's change: a cell prints it
    _kernel_prints(lab, 'print("gpus:", c.gpus)', "gpus: 512")


def test_a_bad_value_is_named_next_to_its_box(lab):
    chart = lab.locator('.ae-notebook [data-widget^="latency-"]')
    box = chart.locator('input[data-param="gpus"]')
    box.fill("1")
    box.dispatch_event("change")
    chart.locator('[data-error-for="gpus"]', has_text="must be between").wait_for(timeout=WAIT_MS)


def test_readouts_lay_out_as_on_the_site_despite_jupyterlabs_list_styles(lab):
    """JupyterLab floats an output's dt and dd side by side (outputarea's base.css); the widget's
    headline stays the site's row of figures, each label above its value (site.css, .readouts)."""
    chart = lab.locator('.ae-notebook [data-widget^="latency-"]')
    headline = chart.locator(".readouts.headline").first
    headline.wait_for(timeout=WAIT_MS)
    got = headline.evaluate(
        """dl => [...dl.children].map(div => {
             const [dt, dd] = [div.querySelector('dt'), div.querySelector('dd')];
             const [a, b] = [dt.getBoundingClientRect(), dd.getBoundingClientRect()];
             return {display: getComputedStyle(dl).display, float: getComputedStyle(dt).float,
                     above: a.bottom <= b.top + 0.5, top: div.getBoundingClientRect().top};
           })"""
    )
    assert len(got) >= 2
    assert {g["display"] for g in got} == {"flex"} and {g["float"] for g in got} == {"none"}
    assert all(g["above"] for g in got), got  # each label above its figure
    assert len({round(g["top"]) for g in got}) == 1, got  # the figures side by side, in one row
    # the site's button rule (.widget button: the box's own background) reaches the − and +,
    # whose figure is the box's first child (so no element stands between them and the box)
    colours = chart.evaluate(
        """w => [w.closest('.ae-notebook'), w.querySelector('.spin > button')]
             .map(e => getComputedStyle(e).backgroundColor)"""
    )
    assert colours[0] == colours[1], colours


def test_the_widget_has_the_sites_sheet_in_its_shadow_root_and_the_page_none_of_it(lab):
    """Each widget's shadow root holds the site's stylesheet as the site serves it, rule for
    rule; the notebook's page has none of the site's rules (a site rule such as `body { margin:
    0 }` would restyle JupyterLab), and its own rules do not reach the widget (the readouts'
    layout, above)."""
    chart = lab.locator('.ae-notebook [data-widget^="latency-"]')
    chart.wait_for(timeout=WAIT_MS)
    site = (ROOT / "client" / "css" / "site.css").read_text()
    got = lab.evaluate(
        """site => {
          const h = document.querySelector('.ae-notebook-host');
          const mine = new CSSStyleSheet();
          mine.replaceSync(site);
          const text = (s) => [...s.cssRules].map((r) => r.cssText);
          const shadow = h.shadowRoot.adoptedStyleSheets.map(text);
          const page = [...document.styleSheets].flatMap((s) => {
            try { return text(s); } catch (e) { return []; }
          });
          return {same: shadow.some((rules) => JSON.stringify(rules) ===
                                      JSON.stringify(text(mine))),
                  leaked: page.filter((r) => r.startsWith('.readouts') || r.includes('--wide'))};
        }""",
        site,
    )
    assert got == {"same": True, "leaked": []}, got


def test_jslink_moves_a_linked_widget_whose_kernel_recomputes_it(lab):
    """`ipywidgets.jslink((a, "gpus"), (b, "gpus"))`: a's GPUs changed in a's box reach b in the
    browser, b's kernel computes b's new state, and b's view draws it (its box and figures)."""
    a = lab.locator('.ae-notebook [data-widget^="sends-"]')
    b = lab.locator('.ae-notebook [data-widget^="steps-"]')
    b.locator("[data-readout]").first.wait_for(timeout=WAIT_MS)
    gpus_change_redraws(lab, a, b, "256")
    assert b.locator('input[data-param="gpus"]').input_value() == "256"
    _kernel_prints(
        lab, 'print("linked:", a.gpus, b.gpus, b.state["params"]["gpus"])', "linked: 256 256 256"
    )


# the site's widget controller (AE.Widget) of the widget whose element is `el`
WIDGET = "AE.widgets.find((w) => w.el === el.closest('[data-widget]'))"


def _until(widget, condition: str, arg=None) -> None:
    """Wait until `condition` (JavaScript, of `w` the widget's controller and `arg`) holds."""
    widget.evaluate(
        "(el, [condition, arg]) => new Promise((done) => {"
        f" const w = {WIDGET}; const holds = new Function('w', 'arg', 'return ' + condition);"
        " const check = () => holds(w, arg) ? done() : setTimeout(check, 100); check(); })",
        [condition, arg],
    )


def _kernel_prints(lab, code: str, expect: str) -> None:
    """A new cell below runs `code` in the kernel; its output has `expect`."""
    lab.evaluate(
        "([code]) => jupyterapp.commands.execute('notebook:insert-cell-below')"
        ".then(() => jupyterapp.commands.execute('notebook:replace-selection', {text: code}))"
        ".then(() => jupyterapp.commands.execute('notebook:run-cell'))",
        [code],
    )
    lab.locator(f"text={expect}").first.wait_for(timeout=WAIT_MS)


def test_the_clusters_log_panel_works_in_the_notebook(lab, tmp_path):
    """The cluster's log panel (logpanel.js) among the notebook's views: an example's button
    loads its log (the kernel's `example` follows, the examples give way to the log's charts,
    the debug log's ring is drawn), "use the fitted figures" applies the fit, and a file opened
    from disk reaches the kernel as `log_file`."""
    k = lab.locator('.ae-notebook [data-widget^="cluster-"]')
    examples = k.locator('[data-role="log-examples"]')
    examples.wait_for(timeout=WAIT_MS)
    k.locator('[data-example="debug-2nodes"]').click()
    examples.wait_for(state="hidden", timeout=WAIT_MS)
    k.locator('[data-role="debug-view"]').wait_for(timeout=WAIT_MS)  # shown for a debug log
    drawn = k.locator('[data-role="debug-diagram"]').evaluate(
        "svg => svg.querySelectorAll('*').length"
    )
    assert drawn > 16, drawn  # the ring's 16 GPUs and their links, beside the bare title
    _kernel_prints(lab, "print('example:', k.example, bool(k.state['figures']['time']['figure']))",
                   "example: debug-2nodes True")  # fmt: skip
    fit = k.locator('[data-action="use-fit"]')
    assert fit.is_enabled()
    want = k.evaluate(f"el => {WIDGET}.state.fit_apply")
    fit.click()
    # the view has the kernel's answer (the kernel kept it as it answered), then the kernel says
    _until(k, "Object.entries(arg).every(([p, v]) => w.state.params[p] === v)", want)
    _kernel_prints(
        lab,
        f"print('fitted:', {{p: k.state['params'][p] for p in {sorted(want)!r}}} == {want!r})",
        "fitted: True",
    )
    log = ROOT / "tests" / "data" / "allreduce_current.txt"
    k.locator('[data-role="log-file"]').set_input_files(str(log))
    _until(k, "w.state.params.log_file !== ''")
    _kernel_prints(
        lab,
        f"print('file:', k.log_file == open({str(log)!r}).read(), repr(k.example))",
        "file: True ''",
    )


def test_the_packages_server_extension_sets_nodelay_on_the_kernels_websocket(lab, folder):
    """The package's Jupyter server extension, turned on for this server (ON), has set
    TCP_NODELAY on the notebook's kernel websocket: the server's log has the option as read back
    from the socket itself. Off by default: test_from_wheel.py."""
    lab.locator('.ae-notebook [data-widget^="latency-"]').wait_for(timeout=WAIT_MS)
    log = (folder.parent / f"{folder.name}-server.log").read_text()
    assert "allreduce_explainer: kernel websockets send with TCP_NODELAY" in log
    assert "allreduce_explainer: kernel websocket TCP_NODELAY=1" in log, log[-2000:]


def test_the_widgets_follow_jupyterlabs_dark_theme(lab):
    """The site's dark background (site.css: --bg light-dark(#ffffff, #16171b)) once JupyterLab
    turns dark; run last, as it leaves the page dark."""
    bg = f"{BOXES}.map(b => getComputedStyle(b).backgroundColor)"
    assert set(lab.evaluate(bg)) == {"rgb(255, 255, 255)"}
    lab.evaluate("jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    lab.wait_for_function(f"new Set({bg}).size === 1 && {bg}[0] === 'rgb(22, 23, 27)'")
