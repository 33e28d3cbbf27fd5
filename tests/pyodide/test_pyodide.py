"""The core under real Pyodide (Python 3.14 in WebAssembly, in Node), from the zip the site ships.

A difference between CPython and Pyodide (float formatting, int width, a missing stdlib module)
would otherwise first show up in a reader's browser.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from allreduce_explainer import selfcheck

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "pyodide" / "pyodide_selfcheck.mjs"


def differences(a: object, b: object, path: str = "$") -> list[str]:
    """Every JSON path where a and b differ, so a failure names the values, not just 'unequal'."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d
            for k in sorted(a.keys() | b.keys(), key=str)
            for d in differences(a.get(k), b.get(k), f"{path}.{k}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b and type(a) is type(b) else [f"{path}: CPython {a!r} != Pyodide {b!r}"]


def run_in_pyodide(site: Path, mode: str) -> dict:
    """Run the selfcheck in Node; fail (never skip) if Node or the npm package is missing."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "pyodide" / "package.json").exists():
        pytest.fail("Node.js and node_modules/pyodide are needed: install Node, then run `npm ci`")
    proc = subprocess.run(
        [node, str(SCRIPT), str(site), mode], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"Pyodide selfcheck failed:\n{proc.stderr[-4000:]}"
    result, asked = proc.stdout.splitlines()
    return {**json.loads(result), "zips_asked_for": json.loads(asked)}


@pytest.mark.parametrize("mode", ["boot", "snapshot"])
def test_core_gives_identical_results_under_pyodide(site: Path, mode: str) -> None:
    """Both ways the worker starts Python: booted, and restored from the build's snapshot."""
    out = run_in_pyodide(site, mode)
    assert out["python"].startswith("3.14"), out["python"]
    expected = json.loads(json.dumps(selfcheck.run(), sort_keys=True))
    diffs = differences(expected, out["selfcheck"])
    assert not diffs, "CPython and Pyodide differ:\n" + "\n".join(diffs[:50])
    # the snapshot holds every module the core uses: readers never wait for the stdlib's 4 MB
    # (the core's zip is written for the selfcheck module, which no page imports)
    assert "stdlib" not in out["zips_asked_for"], out["zips_asked_for"]
