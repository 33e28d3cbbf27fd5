"""The widgets in a real Notebook 7 (the classic interface rebuilt on JupyterLab's parts), opened
in Chromium: the stepper steps and its kernel recomputes it, and the cluster's log panel loads
an example, applies its fit and reads a file, by the same tests as JupyterLab's, on one server.

Marked `browser` (Chromium) and `notebook` (a Notebook 7 server).
"""

from __future__ import annotations

import pytest
from test_jupyterlab import (  # noqa: F401  (pytest collects them again, on this server)
    CELLS,
    WAIT_MS,
    test_stepper_renders_steps_and_recomputes_in_the_kernel,
    test_the_clusters_log_panel_works_in_the_notebook,
    write_notebook,
)

from nbservers import notebook7

pytestmark = [pytest.mark.browser, pytest.mark.notebook]
# the kernel of the notebook's page, idle: Notebook 7 has no status bar saying "| Idle" to wait for
IDLE = (
    "window.jupyterapp && jupyterapp.shell.currentWidget &&"
    " jupyterapp.shell.currentWidget.sessionContext?.session?.kernel?.status === 'idle'"
)


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):
    """The notebook of test_jupyterlab.py, its cells run in Notebook 7 (named `lab` so that the
    tests imported above run here as they are)."""
    folder = tmp_path_factory.mktemp("nb7")
    name = write_notebook(folder, CELLS)
    with notebook7(folder) as url:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        page.goto(url.format(path=name), timeout=WAIT_MS)
        page.wait_for_function(IDLE, timeout=WAIT_MS)
        page.evaluate("jupyterapp.commands.execute('notebook:run-all-cells')")
        yield page
        ctx.close()
