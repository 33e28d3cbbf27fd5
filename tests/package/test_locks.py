"""`make serve` installs only what building the site needs: requirements-build.lock and npm's
non-dev packages. These tests hold that set against what the build really loads, and against the
full lock that `make test` installs on top of it.

- The build lock is a subset of the dev lock with the same pins and hashes, so installing the dev
  lock over the build layer reinstalls nothing.
- build.py and every sitebuild module import, in a fresh interpreter where a third-party package
  outside the build lock cannot be imported; every import in their source, those inside a
  function included, names the standard library, the project's own code or a build-lock package.
- Every file the build reads from node_modules, and every npm package its Node tools import,
  belongs to a package that package-lock.json does not mark dev (`npm ci --omit=dev` installs it).

Cheap (no Node, no build): the full build from the build lock alone is run by bench/serve.py.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from helpers import ROOT

BUILD_LOCK = ROOT / "requirements-build.lock"
DEV_LOCK = ROOT / "requirements-dev.lock"
BUILD_SOURCES = [ROOT / "build.py", *sorted((ROOT / "sitebuild").glob("*.py"))]
FIRST_PARTY = {"allreduce_explainer", "sitebuild", "build"}
PIN = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)")
HASH = re.compile(r"--hash=(sha256:[0-9a-f]{64})")


def normal(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """A hashed lock as {name: (version, hashes)}."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
    name = None
    for line in lock.read_text().splitlines():
        if m := PIN.match(line):
            name = normal(m[1])
            out[name] = (m[2], frozenset())
        elif name and (h := HASH.search(line)):
            out[name] = (out[name][0], out[name][1] | {h[1]})
        elif not line.startswith(" "):
            name = None
    return out


def import_names(lock: Path) -> set[str]:
    """The top-level modules the lock's distributions provide (read from this venv, which holds
    the dev lock, a superset)."""
    locked = set(pins(lock))
    return {
        mod for mod, dists in packages_distributions().items() if locked & set(map(normal, dists))
    }


def test_the_build_lock_is_the_dev_locks_own_pins():
    build, dev = pins(BUILD_LOCK), pins(DEV_LOCK)
    assert {"jinja2", "markdown", "pyyaml", "brotli"} <= set(build)
    assert all(hashes for _, hashes in build.values()), "every build pin carries its hashes"
    for name, pin in build.items():
        assert dev.get(name) == pin, (
            f"{name}: build lock {pin[0]}, dev lock {dev.get(name, ('-',))[0]}"
        )
    assert len(build) < len(dev) / 10, "the build lock is a small part of the dev lock"


# Run in a fresh interpreter: a finder ahead of the others refuses any top-level module found in
# site-packages whose name no build-lock distribution provides, then build.py and every sitebuild
# module are imported (build.py by its path: pypa's `build` is in site-packages too).
CHILD = """
import importlib, importlib.machinery, importlib.util, pkgutil, sys
allowed = set(sys.argv[1].split(","))
class BuildLockOnly:
    def find_spec(self, name, path=None, target=None):
        if path is not None or name in allowed or name in sys.stdlib_module_names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name)
        where = spec and (spec.origin or str(spec.submodule_search_locations))
        if where and "-packages" in where:
            raise ModuleNotFoundError(f"{name} is not in requirements-build.lock", name=name)
        return None
sys.meta_path.insert(0, BuildLockOnly())
spec = importlib.util.spec_from_file_location("site_build", sys.argv[2])
spec.loader.exec_module(importlib.util.module_from_spec(spec))
import sitebuild
for m in pkgutil.iter_modules(sitebuild.__path__):
    importlib.import_module(f"sitebuild.{m.name}")
print(sorted(n for n in sys.modules if n.split(".")[0] in allowed and "." not in n))
"""


def test_the_build_imports_with_only_the_build_lock():
    allowed = import_names(BUILD_LOCK)
    run = subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(sorted(allowed)), str(ROOT / "build.py")],
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    loaded = set(ast.literal_eval(run.stdout.strip().splitlines()[-1]))
    assert {"jinja2", "markdown", "yaml", "frontmatter", "brotli", "latex2mathml"} <= loaded


def imported(path: Path) -> set[str]:
    """The top-level names of every absolute import in a file, those in functions included."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_every_import_of_the_build_is_stdlib_own_or_build_locked():
    allowed = import_names(BUILD_LOCK) | FIRST_PARTY | set(sys.stdlib_module_names)
    stray = {p.name: sorted(imported(p) - allowed) for p in BUILD_SOURCES}
    assert not {k: v for k, v in stray.items() if v}


def test_what_the_build_reads_from_node_modules_is_not_dev():
    from sitebuild import NODE, python_assets, vendor

    lock = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    shipped = {p.removeprefix("node_modules/") for p, e in lock.items() if p and not e.get("dev")}
    read = [NODE / "pyodide" / f for f in vendor.PYODIDE_FILES] + [NODE / vendor.PLOTLY]
    read += [p for deps in python_assets.TOOL_DEPENDS.values() for p in deps if NODE in p.parents]
    packages = {p.relative_to(NODE).parts[0] for p in read}
    for tool in (ROOT / "buildtools").glob("*.mjs"):
        packages |= set(re.findall(r'^import .* from "([^".][^"]*)";', tool.read_text(), re.M))
    packages = {p for p in packages if not p.startswith("node:")}
    assert "pyodide" in packages and "plotly.js-basic-dist-min" in packages
    assert packages <= shipped, f"dev-only npm packages the build needs: {packages - shipped}"
    assert {"scorm-again", "vnu-jar"}.isdisjoint(shipped), "the test tools are devDependencies"
