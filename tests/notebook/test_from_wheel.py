"""The widgets drawn from the installed wheel, not the checkout: the wheel `make dist` builds,
installed with no index into a fresh venv that sees the dev venv's JupyterLab, marimo and anywidget
(a .pth line) but no allreduce_explainer of theirs (the dev venv's editable install is a .pth file
of its site-packages, which a path added by a .pth line does not run). A stepper and a chart render
in JupyterLab and in marimo run by that venv's Python, and the kernel says where the package and
its views came from.

Marked `build` (it builds the wheel), `browser` and `notebook`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from test_jupyterlab import WAIT_MS, gpus_change_redraws, run_all, write_notebook

from helpers import ROOT
from nbservers import jupyterlab, marimo

pytestmark = [pytest.mark.build, pytest.mark.browser, pytest.mark.notebook]

WHERE = (
    "import allreduce_explainer.notebook as nb\n"
    "from allreduce_explainer.notebook import assets, show\n"
    "where = (f'package: {nb.__file__} | views: {assets.path(\"notebook.js\")} | '\n"
    "         f'plotly: {assets.path(\"plotly\")}')"
)


def _run(cmd: list) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{cmd} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv with the wheel alone installed (no index, no dependencies from anywhere) and the dev
    venv's other packages on its path."""
    tmp = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-I", "-m", "build", "--no-isolation", "--wheel", "--outdir", str(tmp),
          str(ROOT)])  # fmt: skip
    wheel = next(tmp.glob("*.whl"))
    venv = tmp / "venv"
    _run([sys.executable, "-I", "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "--isolated", "install",
          "--no-index", "--no-deps", "--quiet", str(wheel)])  # fmt: skip
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "dev-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


EXTENSION = "allreduce_explainer.notebook.server"


def _jupyter(venv: Path, config: Path, *args: str) -> str:
    """`jupyter server ...` (`python -m jupyter_server ...`: the venv has no scripts of the
    dev venv's) as the venv's user runs it (its own sys.prefix, an empty user config
    folder), the output of both streams: `extension list` writes to stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHONPATH"))}
    env["JUPYTER_CONFIG_DIR"] = str(config)
    r = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "jupyter_server", *args],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert r.returncode == 0, f"jupyter server {args} exited {r.returncode}:\n{r.stderr}"
    return r.stdout + r.stderr


def _listed(listing: str) -> list[str]:
    """This package's states in `jupyter server extension list`, its colours taken off."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", listing)
    return re.findall(rf"^\s*{re.escape(EXTENSION)} (enabled|disabled)\s*$", plain, re.M)


def test_installing_the_wheel_turns_no_server_extension_on_until_the_documented_line(
    venv, tmp_path
):
    """After `pip install` of the wheel, nothing of this package is enabled in the venv's Jupyter
    server (its extension is listed, off); the README's one line turns it on, `disable` off."""
    config = tmp_path / "user-config"
    config.mkdir()
    listing = _jupyter(venv, config, "extension", "list")
    assert f"Config dir: {venv / 'etc' / 'jupyter'}" in listing, listing  # the venv's, read
    assert _listed(listing) == ["disabled"], listing
    readme = (ROOT / "README.md").read_text()
    assert f"jupyter server extension enable {EXTENSION}" in readme
    try:
        _jupyter(venv, config, "extension", "enable", EXTENSION)
        on = _jupyter(venv, config, "extension", "list")
        assert _listed(on) == ["enabled"], on
    finally:
        _jupyter(venv, config, "extension", "disable", EXTENSION)
    off = _jupyter(venv, config, "extension", "list")
    assert _listed(off) == ["disabled"], off
    # (jupyter_core may leave its `migrated` mark there; no config file)
    assert list(config.rglob("*.json")) == [], "the line wrote to the user's config, not the venv's"


def _where(text: str, venv: Path) -> None:
    """The kernel's package, views and Plotly are the venv's installed copies, not the
    checkout's."""
    line = next(x for x in text.splitlines() if x.startswith("package: "))
    paths = [Path(part.split(": ", 1)[1].strip()) for part in line.split(" | ")]
    assert len(paths) == 3, line
    for path in paths:
        assert path.is_relative_to(venv) and not path.is_relative_to(ROOT), line
    assert (
        paths[1].parts[-2:] == ("static", "notebook.js") and paths[2].name == "plotly-basic.min.js"
    ), line


def _drawn(page) -> None:
    """The stepper renders and steps; the chart is drawn by the wheel's Plotly and a change is
    answered by the kernel."""
    stepper = page.locator('.ae-notebook [data-widget^="ring_reduce_scatter-"]')
    stepper.locator("text=Step 0 of 3").wait_for(timeout=WAIT_MS)
    stepper.get_by_role("button", name="Next").click()
    stepper.locator("text=Step 1 of 3").wait_for()
    chart = page.locator('.ae-notebook [data-widget^="latency-"]')
    chart.locator(".main-svg").first.wait_for(timeout=WAIT_MS)
    gpus_change_redraws(page, chart, chart, "512")
    assert chart.locator('[data-error-for="gpus"]').text_content() == ""


def test_jupyterlab_draws_the_widgets_from_the_wheel(venv, browser, tmp_path):
    cells = [
        WHERE + "\nprint(where)",
        "show('ring-reduce-scatter', gpus=4)",
        "show('latency', gpus=64)",
    ]
    name = write_notebook(tmp_path, cells)
    with jupyterlab(tmp_path, python=str(venv / "bin" / "python")) as url:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        run_all(page, url.format(path=name))
        page.locator("text=package: ").first.wait_for(timeout=WAIT_MS)
        _where(page.locator(".jp-OutputArea-output", has_text="package: ").inner_text(), venv)
        _drawn(page)
        ctx.close()
    log = (tmp_path.parent / f"{tmp_path.name}-server.log").read_text()
    assert "TCP_NODELAY" not in log, "the server ran the extension nobody turned on"


APP = f"""import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

{"".join("    " + line + chr(10) for line in WHERE.splitlines())}
    mo.vstack([mo.plain_text(where), mo.ui.anywidget(show("ring-reduce-scatter", gpus=4)),
               mo.ui.anywidget(show("latency", gpus=64))])
    return


if __name__ == "__main__":
    app.run()
"""


def test_marimo_draws_the_widgets_from_the_wheel(venv, browser, tmp_path):
    path = tmp_path / "lab.py"
    path.write_text(APP)
    with marimo(path, python=str(venv / "bin" / "python")) as url:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        page.goto(url, timeout=WAIT_MS)
        page.locator("text=package: ").first.wait_for(timeout=WAIT_MS)
        _where(page.locator("pre", has_text="package: ").first.inner_text(), venv)
        _drawn(page)
        ctx.close()
