"""Build the explainer into site/ (and serve it on 127.0.0.1 with --serve).

Pages come from content/*.md (prose with front matter) and templates/ (Jinja2); every widget's
default state is computed here by the same Python functions the browser's worker runs.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "src" / "allreduce_explainer"
SITE = ROOT / "site"
FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # zip entries carry no build time, so builds are reproducible
BROWSER_EXCLUDES = {"cli.py", "__main__.py"}  # the worker never parses a command line


def core_zip() -> bytes:
    """The core package as a deterministic zip for Pyodide to unpack into its file system."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(PACKAGE.glob("*.py")):
            if path.name in BROWSER_EXCLUDES:
                continue
            info = zipfile.ZipInfo(f"allreduce_explainer/{path.name}", FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, path.read_bytes())
    return out.getvalue()


def write_core_zip(site: Path = SITE) -> Path:
    """Write site/py/<hash>.zip (the hash in the name lets it be cached for ever)."""
    data = core_zip()
    dest = site / "py" / f"core-{hashlib.sha256(data).hexdigest()[:16]}.zip"
    dest.parent.mkdir(parents=True, exist_ok=True)
    for old in dest.parent.glob("core-*.zip"):
        old.unlink()
    dest.write_bytes(data)
    return dest


def main() -> None:
    write_core_zip()


if __name__ == "__main__":
    main()
