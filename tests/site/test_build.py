"""The build: reproducible, every internal link and anchor resolves, vendored files as pinned."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import brotli
from bs4 import BeautifulSoup

from sitebuild.bundle import OWN, bundles
from sitebuild.pages import Builder
from sitebuild.python_assets import MANIFEST
from sitebuild.scorm import TWINS
from sitebuild.vendor import PYODIDE_FILES

ROOT = Path(__file__).resolve().parents[2]
NPM_NAME = {site: npm for npm, site in PYODIDE_FILES.items()}  # Pyodide's files by site name


def tree_hashes(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_two_builds_are_byte_identical(site, tmp_path):
    Builder(tmp_path / "again").build()
    assert tree_hashes(site) == tree_hashes(tmp_path / "again")


def test_every_internal_link_asset_and_anchor_resolves(site):
    ids: dict[Path, set[str]] = {}
    soups = {
        p: BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser") for p in site.rglob("*.html")
    }
    for p, soup in soups.items():
        ids[p] = {e["id"] for e in soup.find_all(id=True)}
    checked = 0
    for p, soup in soups.items():
        for tag, attr in (
            ("a", "href"),
            ("link", "href"),
            ("script", "src"),
            ("img", "src"),
            ("iframe", "src"),
        ):
            for e in soup.find_all(tag):
                url = e.get(attr)
                if not url or url.startswith(("data:", "mailto:")):
                    continue
                parts = urlsplit(url)
                if parts.scheme in ("http", "https"):
                    assert tag == "a", f"{p}: {tag} loads {url} from another site"
                    continue
                target = (p.parent / unquote(parts.path)).resolve() if parts.path else p
                if target.is_dir():
                    target = target / "index.html"
                assert target.is_file(), f"{p.relative_to(site)}: {url} does not resolve"
                if parts.fragment and target.suffix == ".html":
                    assert parts.fragment in ids[target], (
                        f"{p.relative_to(site)}: no #{parts.fragment}"
                    )
                checked += 1
    assert checked > 50


def test_the_manifest_names_the_python_files_with_their_hashes(site):
    manifest = json.loads((site / MANIFEST).read_text())
    for role, digest in manifest["sha256"].items():
        assert hashlib.sha256((site / manifest[role]).read_bytes()).hexdigest() == digest, role
    assert sorted(manifest["sha256"]) == ["core", "nostdlib", "snapshot", "stdlib"]
    assert (site / "static" / "js" / "worker.js").is_file()


def test_vendor_manifest_matches_the_files_and_the_lock(site):
    vendor = site / "vendor"
    lines = (vendor / "SHA256SUMS").read_text().splitlines()
    listed = {}
    for line in lines:
        digest, name = line.split("  ", 1)
        listed[name] = digest
    shipped = tree_hashes(vendor)
    # x.gz and x.br files are the build's compressed twins of listed files, not vendored files
    twins = {k for k in shipped if k.endswith((".gz", ".br")) and k[:-3] in listed}
    for twin in twins:
        unpack = gzip.decompress if twin.endswith(".gz") else brotli.decompress
        digest = hashlib.sha256(unpack((vendor / twin).read_bytes())).hexdigest()
        assert digest == listed[twin[:-3]], twin
    assert listed == {k: v for k, v in shipped.items() if k != "SHA256SUMS" and k not in twins}
    # the vendored files are the pinned npm packages (package-lock.json checks their integrity)
    lock = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    assert lock["node_modules/pyodide"]["version"] == "314.0.7"
    assert lock["node_modules/plotly.js-basic-dist-min"]["version"] == "4.1.1"
    for name in listed:
        src = (
            ROOT
            / "node_modules"
            / (
                "pyodide/" + NPM_NAME[name.split("/", 1)[1]]
                if name.startswith("pyodide/")
                else "plotly.js-basic-dist-min/plotly-basic.min.js"
            )
        )
        assert hashlib.sha256(src.read_bytes()).hexdigest() == listed[name], name


def test_plotly_is_left_to_the_charts(site):
    """No page loads Plotly by itself (it would run before the page's scripts); every live page
    names it for chart.js, which loads it when a chart is drawn (tests/browser/test_navigate.py)."""
    for p in site.rglob("index.html"):
        soup = BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser")
        assert not [s for s in soup.find_all("script", src=True) if "plotly" in s["src"]], p
        if soup.html.has_attr("data-python"):
            meta = soup.find("meta", attrs={"name": "ae-plotly"})
            assert (p.parent / meta["content"]).resolve().is_file(), p


def test_inline_state_cannot_close_its_script_tag(site):
    for p in site.rglob("index.html"):
        soup = BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser")
        for s in soup.find_all("script", attrs={"type": "application/json"}):
            json.loads(s.string)  # the whole JSON is inside one script element
        assert not soup.find_all("script", src=False, attrs={"type": None}), "inline script"


def test_a_live_page_loads_its_scripts_as_two_bundles(site):
    """A live page's scripts are esbuild's two bundles as the build wrote them, then the theme's
    and the print's own; site/static/js holds those and the worker's files, no other module."""
    for path, data in bundles().values():
        assert (site / path).read_bytes() == data
    written = {p.name for p in (site / "static" / "js").iterdir() if not p.name.endswith(TWINS)}
    assert written == {*OWN, *(Path(p).name for p, _ in bundles().values())}
    soup = BeautifulSoup((site / "why-allreduce/index.html").read_text(), "html.parser")
    srcs = [s["src"].removeprefix("../") for s in soup.find_all("script", src=True)]
    # the head's bundle first: a script after a stylesheet waits for it, and this one starts Python
    assert srcs == [*(p for p, _ in bundles().values()), "static/js/theme.js", "static/js/print.js"]
