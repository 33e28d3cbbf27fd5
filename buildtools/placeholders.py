"""Each embed's static placeholder image: the widget in its default state, as its frame shows it.

Usage: python buildtools/placeholders.py [NAME ...] [--site DIR] [--out DIR]   (`make placeholders`)

The snippets for authoring tools (MyST's `:placeholder:`, Quarto's print branch, reveal.js's
<noscript>) and each embed's oembed.json name `embed/<widget>/placeholder.png`, which PDF and
print builds show instead of the live frame. This script makes them: it builds the site (or takes
a built one with --site), serves it on 127.0.0.1, opens each embed page in Chromium at its frame's
size (sitebuild/embeds.py SIZES, by the widget's view), light theme, reduced motion, device scale
1, waits until every chart is drawn by Plotly (a stepper shows step 0 from its inline state),
hides the line that says whether Python is loading, scrolls to the first chart if it is not wholly
in the frame (a chart's picture is its figure), and screenshots the frame. The pictures are
re-encoded smaller (`smaller`, by Pillow) and written to sitebuild/placeholders/<widget>.png,
which is committed: the build copies them and needs no browser. Run it again after changing how
a widget looks; a widget with no picture stops the build, naming this command.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from sitebuild import browser, serve  # noqa: E402
from sitebuild.embeds import PLACEHOLDERS, frame_size  # noqa: E402
from sitebuild.pages import Builder  # noqa: E402

# every chart of the widget drawn (a hidden one has no figure to draw), and the fonts loaded
DRAWN = """() => document.fonts.status === "loaded" &&
  [...document.querySelectorAll('[data-role="chart"]')].every(
    c => c.closest("[hidden]") || c.querySelector(".main-svg"))"""
# a chart that does not fit the frame below the controls is scrolled to: the figure is the picture
TO_CHART = """() => {
  const c = [...document.querySelectorAll('[data-role="chart"]')].find(c => !c.closest("[hidden]"));
  const r = c && c.getBoundingClientRect();
  if (!r || r.bottom <= innerHeight) return;
  const fits = r.height + 32 <= innerHeight;  // then its bottom at the frame's, what is above too
  window.scrollTo(0, Math.max(0, scrollY + (fits ? r.bottom + 16 - innerHeight : r.top - 16)));
}"""
PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
QUIET = '[data-role="python-status"] { visibility: hidden !important; }'


def embeds(site: Path) -> list[str]:
    """The names of the site's embeds, sorted."""
    return sorted(p.parent.name for p in (site / "embed").glob("*/index.html"))


def shoot(browser, base_url: str, name: str) -> bytes:
    """One embed's picture at its frame's size, as Chromium writes it."""
    w, h = frame_size(name)
    ctx = browser.new_context(
        viewport={"width": w, "height": h},
        device_scale_factor=1,
        color_scheme="light",
        reduced_motion="reduce",
    )
    try:
        page = ctx.new_page()
        page.goto(f"{base_url}/embed/{name}/", wait_until="load")
        page.add_style_tag(content=QUIET)
        page.wait_for_function(DRAWN, timeout=60_000)
        page.evaluate(TO_CHART)
        page.evaluate(PAINTED)
        return page.screenshot(animations="disabled", caret="hide")
    finally:
        ctx.close()


def smaller(png: bytes) -> bytes:
    """A screenshot re-encoded as an 8-bit palette PNG, or as it was if that is not smaller.

    A widget's picture is opaque and mostly flat colour: a few hundred colours cover nearly every
    pixel, the rest are the anti-aliased edges of text and lines, so a palette of the 256 most
    frequent (median cut, no dithering: lossy only at those edges) is a third of the bytes of RGB.
    """
    image = Image.open(io.BytesIO(png)).convert("RGB")
    quantised = image.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    quantised.save(out, "PNG", optimize=True, compress_level=9)
    return out.getvalue() if out.tell() < len(png) else png


def write_all(browser, base_url: str, names: list[str], out: Path) -> list[Path]:
    """Shoot each embed in `names` and write out/<name>.png, smaller; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for name in names:
        dest = out / f"{name}.png"
        dest.write_bytes(smaller(shoot(browser, base_url, name)))
        made.append(dest)
    return made


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="the embeds to shoot (default: every one)")
    ap.add_argument("--site", type=Path, help="a built site to shoot (default: build one)")
    ap.add_argument("--out", type=Path, default=PLACEHOLDERS, help="where the PNGs go")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright  # only when a browser is launched

    site = a.site
    if site is None:
        site = Path(tempfile.mkdtemp())
        Builder(site, placeholders=False).build()
    names = a.names or embeds(site)
    unknown = sorted(set(names) - set(embeds(site)))
    if unknown:
        raise SystemExit(f"no embed named {', '.join(unknown)} in {site}/embed")
    url, httpd = serve.in_background(site)
    try:
        with sync_playwright() as p:
            b = browser.launch(p)
            made = write_all(b, url, names, a.out)
            b.close()
    finally:
        httpd.shutdown()
    total = sum(f.stat().st_size for f in made)
    print(f"{len(made)} placeholders in {a.out}, {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
