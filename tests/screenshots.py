"""Screenshots of every page at phone and desktop widths, light and dark, for a person to look at.

Usage: python tests/screenshots.py [OUT_DIR] [--wait-python]  (builds and serves the site itself)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from sitebuild import browser, serve
from sitebuild.pages import Builder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

WIDTHS = {"phone": 390, "desktop": 1280}  # the browser tests hold 360 px apart


def pages(site: Path) -> list[str]:
    return sorted(
        str(p.parent.relative_to(site)).replace(".", "") + "/"
        for p in site.glob("**/index.html")
        if "embed" not in p.parts
    )


def shoot(browser, base_url: str, site: Path, out: Path, wait_python: bool = False) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    shots = []
    for path in pages(site):
        for scheme in ("light", "dark"):
            for label, width in WIDTHS.items():
                ctx = browser.new_context(
                    viewport={"width": width, "height": 900}, color_scheme=scheme
                )
                page = ctx.new_page()
                page.goto(base_url + "/" + path.lstrip("/"))
                if wait_python and page.locator("html[data-python]").count():
                    page.wait_for_selector("html:not([data-python=loading])", state="attached")
                page.wait_for_timeout(300)
                name = (path.strip("/").replace("/", "_") or "home") + f"-{label}-{scheme}.png"
                page.screenshot(path=str(out / name), full_page=True)
                shots.append(out / name)
                ctx.close()
    return shots


def main() -> None:
    from playwright.sync_api import sync_playwright  # only when a browser is launched

    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1 and not sys.argv[1].startswith("--")
        else ROOT / "test-artifacts" / "screens"
    )
    site = Path(tempfile.mkdtemp())
    Builder(site).build()
    url, httpd = serve.in_background(site)
    with sync_playwright() as p:
        b = browser.launch(p)
        for s in shoot(b, url, site, out, "--wait-python" in sys.argv):
            print(s)
        b.close()
    httpd.shutdown()


if __name__ == "__main__":
    main()
