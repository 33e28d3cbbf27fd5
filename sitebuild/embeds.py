"""Snippets for course authoring tools and oEmbed, for every page and every widget's embed.

The snippet templates are written once, here: the build fills them for the course page's
examples and for each `oembed.json`, and puts them in every live page as JSON
(`<script type="application/json" id="ae-snippets">`), where copytools.js fills the same
templates with the widget's address as shown (its state in the URL), so a reveal.js slide that
unloads its frame comes back where it was. Fields: {src} the embed's address, {page} the page's,
{title}, {w} and {h} the frame's aspect ratio, {image} the static placeholder for print and PDF
builds: `embed/<widget>/placeholder.png`, the widget in its default state at its frame's size,
copied from PLACEHOLDERS (made by buildtools/placeholders.py, `make placeholders`; committed, so
the build needs no browser). oembed.json names the same picture as its thumbnail.

An oEmbed response is useful only with absolute addresses (a consumer pastes its `html` into its
own page), so oembed.json files and their discovery links are written only when the build knows
the address the site is hosted at: `build.py --url`, or the environment variable SITE_URL_ENV.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import urlencode

from allreduce_explainer import widgets
from allreduce_explainer.widgets import views

from . import ROOT
from .prose import instance_function

PROVIDER = "All-reduce, explained"
SITE_URL_ENV = "AE_SITE_URL"  # the site's address for CI and hosting, read where --url is
NO_SITE_URL = (
    f"no site address (build.py --url or {SITE_URL_ENV}): no oEmbed files or discovery links; "
    "the teacher's sheet makes its question banks in the browser"
)
# a frame's size by the view it shows, in CSS pixels: the aspect ratio the snippets keep
SIZES = {
    views.STEPPER: (800, 640),
    views.CHART: (800, 560),
    views.PANEL: (800, 680),
    views.EXERCISE: (800, 520),
    views.SHEET: (800, 900),
}
PAGE_SIZE = (960, 720)
# each embed's picture, <instance name>.png, exactly its frame's size (tests/site holds that)
PLACEHOLDERS = ROOT / "sitebuild" / "placeholders"
PLACEHOLDER = "placeholder.png"  # its name in site/embed/<widget>/
MISSING = "{path} is missing: run `make placeholders` (buildtools/placeholders.py) and commit it"
STYLE = "width:100%;max-width:100%;aspect-ratio:{w}/{h};border:0"
IFRAME = (
    '<iframe src="{src}" title="{title}" loading="lazy" style="' + STYLE + '" '
    'allow="clipboard-write"></iframe>'
)
# format -> (label, template); the order is the copy menu's
SNIPPETS = {
    "html": ("HTML", IFRAME),
    "myst": (
        "MyST (Jupyter Book)",
        ":::{{iframe}} {src}\n:width: 100%\n:placeholder: {image}\n{title}\n:::",
    ),
    "quarto": (
        "Quarto",
        '::: {{.content-visible when-format="html"}}\n' + IFRAME + "\n:::\n\n"
        '::: {{.content-visible unless-format="html"}}\n![{title}]({image})\n:::',
    ),
    "revealjs": (
        "reveal.js",
        '<section>\n  <iframe data-src="{src}" data-preload title="{title}" style="'
        + STYLE
        + '"></iframe>\n  <noscript><img src="{image}" alt="{title}"></noscript>\n</section>',
    ),
    "canvas": (
        "Canvas",
        "Canvas: edit the page, Insert → Embed, paste the HTML snippet (its address is {src}); "
        "never upload the site's files to Canvas, which runs no script in uploaded HTML.",
    ),
    "moodle": (
        "Moodle",
        "Moodle: in a Page or Label, open the editor's HTML source view and paste the HTML "
        "snippet (its address is {src}), or add a URL resource for {page}.",
    ),
}


def frame_size(name: str) -> tuple[int, int]:
    """The frame's size for the embed of widget instance `name`, by the view it shows."""
    return SIZES[widgets.REGISTRY[instance_function(name)].view]


def placeholder_url(url: str, name: str) -> str:
    """The address of the embed's placeholder image (under the site's `url`, if any)."""
    return f"{url}embed/{name}/{PLACEHOLDER}"


def copy_placeholder(site: Path, name: str, required: bool = True) -> bool:
    """site/embed/<name>/placeholder.png from PLACEHOLDERS; False if there is none and it is not
    `required` (buildtools/placeholders.py builds the site it shoots that way)."""
    source = PLACEHOLDERS / f"{name}.png"
    if not source.exists():
        if required:
            shown = source.relative_to(ROOT) if source.is_relative_to(ROOT) else source
            raise SystemExit(MISSING.format(path=shown))
        return False
    dest = site / "embed" / name / PLACEHOLDER
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    return True


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def fill(fmt: str, src: str, page: str, title: str, size: tuple[int, int], image: str) -> str:
    """One snippet, its fields filled (the title escaped for an HTML attribute)."""
    w, h = size
    return SNIPPETS[fmt][1].format(
        src=src.replace('"', "%22"), page=page, title=escape(title), w=w, h=h, image=image
    )


def snippets_json() -> str:
    """The templates and sizes for copytools.js, safe inside a <script> element."""
    data = {
        "formats": [
            {"key": k, "label": label, "template": t} for k, (label, t) in SNIPPETS.items()
        ],
        "sizes": SIZES,
        "placeholder": PLACEHOLDER,
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def oembed(
    url: str,
    path: str,
    title: str,
    size: tuple[int, int],
    page_url: str,
    thumbnail: str | None = None,
) -> dict:
    """An oEmbed 1.0 response of type rich for the frame at `path` (under the site's `url`),
    with the embed `thumbnail`'s placeholder as its thumbnail (oEmbed's three fields)."""
    w, h = size
    image = placeholder_url(url, thumbnail) if thumbnail else ""
    response = {
        "version": "1.0",
        "type": "rich",
        "provider_name": PROVIDER,
        "provider_url": url or "./",
        "title": title,
        "html": fill("html", url + path, url + page_url, title, size, image),
        "width": w,
        "height": h,
        "cache_age": 86400,
    }
    if thumbnail:
        tw, th = frame_size(thumbnail)
        response |= {"thumbnail_url": image, "thumbnail_width": tw, "thumbnail_height": th}
    return response


def discovery(url: str, page: str) -> str:
    """The discovery link's href for the page or embed at `page` (a path under the site's `url`):
    its oembed.json's absolute address with the spec's query (oembed.com, 4. Discovery: `url`,
    `format`), which a static host ignores and a consumer such as oembedpy reads."""
    folder = page.rsplit("/", 1)[0]
    return f"{url}{folder}/oembed.json?" + urlencode({"url": url + page, "format": "json"})


def write_oembed(site: Path, folder: str, response: dict) -> None:
    """site/<folder>/oembed.json, which the page's <link rel="alternate"> names."""
    dest = site / folder / "oembed.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(response, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
