"""The wheel and the sdist, built as `make dist` builds them, are the product: the CLI, the library,
py.typed and the browser's files (views, styles, widget partials, Plotly), with nothing of the
tests or the site; the wheel installs into a clean venv with no network and runs from there.

Marked `build` (it needs node_modules for Plotly, and takes some seconds), so `make test` runs it
and the edit-test loop does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT

pytestmark = pytest.mark.build

PACKAGE = "allreduce_explainer"
# Where each browser file lives in git, and where the wheel must hold it: written out here, not
# read from hatch_build.py, so a wrong table there fails this test.
STATIC_DIRS = {
    "client/css": f"{PACKAGE}/static/css",
    "templates/widgets": f"{PACKAGE}/static/templates/widgets",
}
PLOTLY_IN_WHEEL = f"{PACKAGE}/static/plotly/plotly-basic.min.js"
NOTEBOOK_IN_WHEEL = f"{PACKAGE}/static/notebook.js"  # esbuild's bundle of client/js/notebook.js


def _run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    """Run a command, failing the test with its output when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)
    assert r.returncode == 0, f"{cmd} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """The sdist, then the wheel built from it, by `make dist`'s command, run at the root where
    the site's build.py would shadow pypa's build without -I."""
    out = tmp_path_factory.mktemp("dist")
    _run(
        [sys.executable, "-I", "-m", "build", "--no-isolation", "--outdir", str(out), "."], cwd=ROOT
    )
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


def test_twine_check_passes_both(dist):
    r = _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.values())])
    assert r.stdout.count("PASSED") == 2, r.stdout


def test_wheel_holds_the_core_typed_and_nothing_else(dist):
    with zipfile.ZipFile(dist["wheel"]) as z:
        names = set(z.namelist())
    core = {  # its modules and the data files they read (the presets, example logs, curves)
        p.relative_to(ROOT / "src").as_posix()
        for p in (ROOT / "src" / PACKAGE).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert core <= names, sorted(core - names)
    assert f"{PACKAGE}/py.typed" in names
    tops = {n.split("/")[0] for n in names}
    data = f"{PACKAGE}-{_version()}.data"  # the notebook's Jupyter server extension, listed off
    assert tops == {PACKAGE, f"{PACKAGE}-{_version()}.dist-info", data}, tops
    extension = f"{PACKAGE}.notebook.server"
    config = f"{data}/data/etc/jupyter/jupyter_server_config.d/{extension}.json"
    assert [n for n in names if n.startswith(data)] == [config]
    assert json.loads(_read(dist["wheel"], config)) == {
        "ServerApp": {"jpserver_extensions": {extension: False}}
    }
    assert not [n for n in names if "/tests/" in n or "/site/" in n or "__pycache__" in n]


def test_wheel_holds_the_browser_files_byte_for_byte(dist):
    with zipfile.ZipFile(dist["wheel"]) as z:
        for source, target in STATIC_DIRS.items():
            files = [p for p in (ROOT / source).rglob("*") if p.is_file()]
            assert files, source
            for p in files:
                name = f"{target}/{p.relative_to(ROOT / source).as_posix()}"
                assert z.read(name) == p.read_bytes(), name
        # the very file the site vendors (sitebuild/vendor.py), with its license beside it
        from sitebuild.vendor import NODE, PLOTLY

        assert z.read(PLOTLY_IN_WHEEL) == (NODE / PLOTLY).read_bytes()
        assert b"MIT" in z.read(f"{PACKAGE}/static/plotly/LICENSE")
        # the notebook's module as esbuild bundles it from the checkout, and no module of client/js
        from allreduce_explainer.notebook.assets import bundle

        assert z.read(NOTEBOOK_IN_WHEEL) == bundle("notebook.js", "esm")
        assert not [n for n in z.namelist() if n.startswith(f"{PACKAGE}/static/js/")]


def test_metadata_has_classifiers_and_no_exact_pins(dist):
    info = f"{PACKAGE}-{_version()}.dist-info"
    with zipfile.ZipFile(dist["wheel"]) as z:
        meta = Parser().parsestr(z.read(f"{info}/METADATA").decode())
        scripts = z.read(f"{info}/entry_points.txt").decode()
    assert meta["Version"] == _version()
    assert meta["License-Expression"] == "MIT"
    classifiers = meta.get_all("Classifier")
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    requires = meta.get_all("Requires-Dist")
    assert requires and all("extra ==" in r for r in requires), requires  # the core: stdlib only
    assert not [r for r in requires if "==" in r.split(";")[0]], requires
    assert f"allreduce-explainer = {PACKAGE}.cli:main" in scripts


def test_sdist_can_build_the_wheel_alone(dist):
    """The wheel above was built from this sdist: it carries what the hook stages, Plotly too."""
    with tarfile.open(dist["sdist"]) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for needed in [
        "pyproject.toml",
        "hatch_build.py",
        "client/js/widget.js",
        "client/notebook.bundle.js",
        "client/css/site.css",
        "templates/widgets/stepper.html",
        "node_modules/plotly.js-basic-dist-min/plotly-basic.min.js",
        f"src/{PACKAGE}/py.typed",
    ]:
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("site/", ".venv/", "dist/"))]
    assert not [n for n in names if n.startswith("node_modules/pyodide")]


def test_wheel_runs_in_a_clean_venv_without_network(dist, tmp_path):
    """A venv with nothing but the wheel, made and used in a network namespace of its own."""
    venv, bin_ = tmp_path / "venv", tmp_path / "venv" / "bin"
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "PIP_CONFIG_FILE": os.devnull, "HOME": str(tmp_path)}
    offline = ["unshare", "--map-root-user", "--net", "--"]
    _run([*offline, sys.executable, "-I", "-m", "venv", str(venv)], env=env)
    pip = [str(bin_ / "python"), "-m", "pip", "--isolated", "--disable-pip-version-check"]
    _run([*offline, *pip, "install", "--no-index", "--quiet", str(dist["wheel"])], env=env)
    run = {"env": env, "cwd": tmp_path}  # not the checkout: its src/ must not be found

    help_ = _run([*offline, str(bin_ / "allreduce-explainer"), "--help"], **run).stdout
    assert "simulate" in help_ and "nccl-debug" in help_
    out = _run(
        [*offline, str(bin_ / "allreduce-explainer"), "busbw", "--gpus", "8", "--bytes", "1e9"]
        + ["--time-us", "5000", "--json"],
        **run,
    ).stdout
    algbw = 1e9 / 5000e-6 / 1e9  # GB/s: bytes over time
    assert json.loads(out)["busbw_GBps"] == pytest.approx(algbw * 2 * 7 / 8)  # nccl-tests' factor

    probe = (
        "import json, allreduce_explainer as ae; from allreduce_explainer import bridge;"
        "from importlib.resources import files; from allreduce_explainer.logs import examples;"
        "print(json.dumps({'file': ae.__file__,"
        " 'views': (files(ae) / 'static/notebook.js').is_file(),"
        " 'log': examples.text('nvls-1node'),"
        " 'r': json.loads(bridge.call('ring_reduce_scatter', json.dumps({'gpus': 8})))}))"
    )
    got = json.loads(_run([*offline, str(bin_ / "python"), "-I", "-c", probe], **run).stdout)
    assert Path(got["file"]).is_relative_to(venv), got["file"]
    assert got["views"]
    # a data file the core reads (logs/examples/), as the wheel installed it: the published log
    published = ROOT / "tests/data/nccl-tests/nccl-tests-290-8xh100-1node-nvls.txt"
    assert got["log"] == published.read_text()
    _check_reduce_scatter(got["r"])
    # the server extension is listed off in the venv's Jupyter config (the user turns it on),
    # and loads without anywidget
    config = venv / f"etc/jupyter/jupyter_server_config.d/{PACKAGE}.notebook.server.json"
    extensions = json.loads(config.read_text())["ServerApp"]["jpserver_extensions"]
    assert extensions == {f"{PACKAGE}.notebook.server": False}
    probe = "from allreduce_explainer.notebook import server; print(server.__name__)"
    loaded = _run([*offline, str(bin_ / "python"), "-I", "-c", probe], **run).stdout
    assert loaded.strip() == f"{PACKAGE}.notebook.server"


def _read(wheel: Path, name: str) -> bytes:
    with zipfile.ZipFile(wheel) as z:
        return z.read(name)


def _check_reduce_scatter(response: dict) -> None:
    """After the reduce-scatter each GPU holds the sum over all GPUs of the chunk it owns."""
    assert response["ok"], response
    s = response["state"]
    total = np.sum(np.array(s["inputs"]), axis=0)
    assert s["target"] == total.tolist()
    final = s["frames"][-1]["buffers"]
    assert len(final) == 8
    for gpu, chunk in enumerate(s["owned"]):
        a, b = s["chunks"][chunk]
        assert final[gpu][a:b] == total[a:b].tolist(), gpu


def _version() -> str:
    """The one version, read from the package as hatch reads it."""
    text = (ROOT / "src" / PACKAGE / "__init__.py").read_text()
    return next(line.split('"')[1] for line in text.splitlines() if line.startswith("__version__"))


def test_build_system_backend_is_in_the_lock():
    """`make dist` builds without isolation, from the backend the hashed lock installs."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    lock = (ROOT / "requirements-dev.lock").read_text()
    for req in requires:
        name = req.split(">")[0].split("=")[0].strip().lower()
        assert f"\n{name}==" in lock, name
