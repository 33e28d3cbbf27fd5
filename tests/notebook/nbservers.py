"""A real JupyterLab, Notebook 7 or marimo server on a free port of 127.0.0.1, started for a test
or a bench run and stopped after it, its kernel importing this checkout's code, or, run by a
venv's Python, the package installed there."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from helpers import ROOT

START_S = 120  # a cold JupyterLab on two busy cores takes tens of seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(cwd: Path, python: str) -> dict:
    """The servers' environment: this checkout's code first on the kernel's path (unless the
    server runs another venv's Python, which imports the package installed there), and
    JupyterLab's settings and workspaces kept beside the served folder (a theme a test
    switches to is not the user's next default)."""
    env = dict(os.environ)
    env["JUPYTERLAB_SETTINGS_DIR"] = str(cwd.parent / f"{cwd.name}-lab-settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(cwd.parent / f"{cwd.name}-lab-workspaces")
    if python == sys.executable:
        path = [str(ROOT / "src"), env.get("PYTHONPATH")]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, path))
    else:  # the lab's and the widgets' front-end files stay this venv's (sys.prefix's share/)
        env.pop("PYTHONPATH", None)
        env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
        env["JUPYTERLAB_DIR"] = str(Path(sys.prefix) / "share" / "jupyter" / "lab")
    env.pop("JUPYTER_CONFIG_DIR", None)
    return env


def _wait(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the server exited {process.returncode}:\n{log.read_text()[-3000:]}"
            )
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(
        f"the server did not answer {url} in {START_S} s:\n{log.read_text()[-3000:]}"
    )


@contextlib.contextmanager
def _running(cmd: list[str], cwd: Path, ready: str) -> Iterator[subprocess.Popen]:
    log = cwd.parent / f"{cwd.name}-server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            cmd, cwd=cwd, env=_env(cwd, cmd[0]), stdout=out, stderr=subprocess.STDOUT
        )
    try:
        _wait(ready, process, log)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def jupyterlab(
    root: Path, python: str = sys.executable, options: tuple[str, ...] = ()
) -> Iterator[str]:
    """JupyterLab serving `root`, run by `python` with the server's command-line `options`;
    yields its address with the token, the app exposed to tests as window.jupyterapp (to run a
    notebook's cells by command, not by menus)."""
    port, token = free_port(), secrets.token_hex(16)
    cmd = [
        python, "-m", "jupyterlab", "--no-browser", f"--port={port}",
        "--ip=127.0.0.1", "--allow-root", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True",
        "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *options,
    ]  # fmt: skip
    with _running(cmd, root, f"http://127.0.0.1:{port}/api/status?token={token}"):
        yield f"http://127.0.0.1:{port}/lab/tree/{{path}}?token={token}"


@contextlib.contextmanager
def notebook7(root: Path, options: tuple[str, ...] = ()) -> Iterator[str]:
    """Notebook 7 serving `root`, as jupyterlab() does (its app too exposed as window.jupyterapp);
    yields the address of a notebook's own page."""
    port, token = free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable, "-m", "notebook", "--no-browser", f"--port={port}",
        "--ip=127.0.0.1", "--allow-root", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--JupyterNotebookApp.expose_app_in_browser=True",
        "--ServerApp.disable_check_xsrf=True", *options,
    ]  # fmt: skip
    with _running(cmd, root, f"http://127.0.0.1:{port}/api/status?token={token}"):
        yield f"http://127.0.0.1:{port}/notebooks/{{path}}?token={token}"


@contextlib.contextmanager
def marimo(notebook: Path, *, edit: bool = False, python: str = sys.executable) -> Iterator[str]:
    """marimo serving `notebook` as an app (`marimo run`), or in its editor with `edit`, run by
    `python`."""
    port = free_port()
    cmd = [
        python, "-m", "marimo", "edit" if edit else "run", str(notebook),
        "--headless", "--host", "127.0.0.1", "--port", str(port), "--no-token",
    ]  # fmt: skip
    with _running(cmd, notebook.parent, f"http://127.0.0.1:{port}/"):
        yield f"http://127.0.0.1:{port}/"
