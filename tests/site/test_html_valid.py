"""Every page is valid HTML by the W3C Nu checker (npm's vnu-jar, run by Debian's Java).

The checker runs once over every built page, embeds included, and the test lists each error with
its page and line, so a template's slip names the page where it shows.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
VNU = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


def checker_errors(files: list[Path], root: Path) -> list[str]:
    """The Nu checker's errors over `files`, as "page:line: message" (page relative to root)."""
    java = shutil.which("java")
    if java is None:
        pytest.fail("Java is missing: `make test` installs Debian's default-jre-headless")
    if not VNU.exists():
        pytest.fail(f"{VNU.relative_to(ROOT)} is missing: `make setup` installs the npm packages")
    run = subprocess.run(
        [java, "-jar", str(VNU), "--errors-only", "--format", "json", *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(run.stderr or run.stdout)  # vnu writes its report to stderr
    out = []
    for m in report["messages"]:
        page = Path(unquote(urlsplit(m.get("url", "")).path))
        where = page.relative_to(root) if page.is_relative_to(root) else page
        out.append(f"{where}:{m.get('lastLine', '?')}: {m['message']}")
    return out


def test_every_page_passes_the_nu_checker(built):
    pages = sorted(built.rglob("*.html"))
    assert len(pages) >= 30  # the stages, the extra pages and the embeds, not an empty folder
    errors = checker_errors(pages, built)
    assert errors == [], "\n".join(errors)


def test_the_checker_does_report_an_error(tmp_path):
    """The test above can fail: a div with an aria-label and no role, today's first error."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head>'
        '<body><div aria-label="x">y</div></body></html>',
        encoding="utf-8",
    )
    errors = checker_errors([bad], tmp_path)
    assert len(errors) == 1 and errors[0].startswith("bad.html:1: The “aria-label” attribute")
