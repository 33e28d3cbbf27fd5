"""The browser's code as ES modules bundled by esbuild (sitebuild/bundle.py): the site's two
bundles are classic scripts (a page from file:// or a course platform runs no module script), the
test entry's levers are in none of the site's files, and the notebook's module comes from the
same graph."""

from __future__ import annotations

import re
import subprocess

import pytest

from allreduce_explainer.notebook import esm
from sitebuild import CLIENT
from sitebuild.bundle import ENTRIES, OWN, TEST_ENTRY, bundles

JS = CLIENT / "js"
MODULES = sorted(p for p in JS.iterdir() if p.name not in OWN and p.name != TEST_ENTRY)
# what only the test entry defines: the store of timings, and the lever set itself
TEST_ONLY = ("timings", "new Set()", "AE.bench =")


def imported(path) -> set[str]:
    """The client/js files `path` imports, read from its import lines."""
    return set(re.findall(r'^import (?:.* from )?"\./([\w.]+)";', path.read_text(), re.M))


def reached(entries: list[str]) -> set[str]:
    """Every module the entries import, directly or not."""
    seen, todo = set(), list(entries)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += imported(JS / name)
    return seen


def test_every_module_is_in_a_bundle():
    """No module of client/js is dead: each is reached from the site's entries or the
    notebook's."""
    assert {p.name for p in MODULES} <= reached([*ENTRIES.values(), "notebook.js"])


@pytest.mark.parametrize("role", ENTRIES)
def test_the_bundles_are_classic_scripts(role, tmp_path):
    """Node parses each bundle as a classic script (.cjs): an import or export left in it would
    not run from file:// or under a course platform's .js type."""
    path = tmp_path / f"{role}.cjs"
    path.write_bytes(bundles()[role][1])
    done = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("role", ENTRIES)
def test_the_shipped_bundles_lack_the_test_levers(role):
    """What the test entry defines (AE.bench, its timings, its lever set) is in no bundle the site
    ships: the bundles only ask for it (probe.js). The test entry does define it."""
    text = bundles()[role][1].decode()
    assert not [s for s in TEST_ONLY if s in text]
    assert all(s in (JS / TEST_ENTRY).read_text() for s in TEST_ONLY)


def test_the_worker_files_are_what_it_imports():
    """The files kept of their own in site/static/js for the worker are the ones it imports."""
    assert imported(JS / "worker.js") == {"protocol.js", "snapshot.js"}
    assert {"worker.js", *imported(JS / "worker.js")} <= set(OWN)


def test_the_notebook_module_is_the_same_graph():
    """The notebook's module is an ES module with one default export, holding the site's
    controller and views (their code bundled, not a copy of the files)."""
    code = esm.module()
    assert len(re.findall(r"export\s*\{[^}]*\bas default\b", code)) == 1
    assert "data-kind" in code and "ae:settled" in code
    assert "AE.bench =" not in code
