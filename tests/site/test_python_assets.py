"""The core's zip, which the worker puts on Pyodide's sys.path: every file of the package the
browser runs, data files too (CORE_DATA), and a core imported from that zip alone reads its data
files (the topology presets, the published example logs, the measured curves) as the checkout does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

from helpers import DATA, ROOT
from sitebuild.python_assets import BROWSER_EXCLUDES, core_zip

PACKAGE = ROOT / "src" / "allreduce_explainer"
# py.typed is for type checkers; the browser never runs one
NOT_IN_BROWSER = {"py.typed"}


def test_core_zip_holds_every_file_of_the_package_the_browser_runs(tmp_path):
    path = tmp_path / "core.zip"
    path.write_bytes(core_zip())
    names = set(zipfile.ZipFile(path).namelist())
    want = {
        f"allreduce_explainer/{p.relative_to(PACKAGE).as_posix()}"
        for p in PACKAGE.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.relative_to(PACKAGE).parts[0] not in BROWSER_EXCLUDES
        and p.name not in NOT_IN_BROWSER
    }
    assert names == want, (sorted(want - names), sorted(names - want))


# Run in a Python that has nothing but the zip on its path (-I: no PYTHONPATH, no site-packages
# of the user; cwd away from src/), as Pyodide imports the core from it.
PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from allreduce_explainer.catalog import measured
from allreduce_explainer.logs import examples
from allreduce_explainer.topology import PRESETS, preset_text
print(json.dumps({
    "file": examples.__file__,
    "texts": {k: examples.text(k) for k in examples.EXAMPLES},
    "files": {k: e.file for k, e in examples.EXAMPLES.items()},
    "curves": [[c.key, c.file, c.rows] for c in measured.CURVES],
    "presets": {k: preset_text(k) for k in PRESETS},
}))
"""


def test_a_core_imported_from_the_zip_alone_reads_its_data_files(tmp_path):
    path = tmp_path / "core.zip"
    path.write_bytes(core_zip())
    r = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, str(path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["file"].startswith(str(path)), got["file"]
    # the oracle: the logs kept in tests/data, read directly
    logs = {p.name: p for folder in ("nccl-tests", "nccl-debug") for p in (DATA / folder).glob("*")}
    assert len(got["texts"]) == 4
    for key, text in got["texts"].items():
        assert text == logs[got["files"][key]].read_text(), key
    # the curves: the rows of their logs as tests/widgets/test_busbw_curve.py reads them
    from allreduce_explainer.logs import parse

    for key, file, rows in got["curves"]:
        (run,) = parse.parse_runs(logs[file].read_text()).runs
        want = [[r.size_bytes, r.out_of_place.busbw_GBps] for r in run.rows if r.size_bytes >= 1024]
        assert rows == want, key
    assert len(got["curves"]) == 4
    presets = PACKAGE / "topology" / "presets"
    assert got["presets"] == {p.stem: p.read_text() for p in presets.glob("*.xml")}
