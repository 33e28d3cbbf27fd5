"""Snippets for course authoring tools and oEmbed, for every page and every widget's embed.

The snippet templates are written once, here: the build fills them for the course page's
examples and for each `oembed.json`, and puts them in every live page as JSON
(`<script type="application/json" id="ae-snippets">`), where copytools.js fills the same
templates with the widget's address as shown (its state in the URL), so a reveal.js slide that
unloads its frame comes back where it was. Fields: {src} the embed's address, {page} the page's,
{title}, {w} and {h} the frame's aspect ratio, {image} the static placeholder for print and PDF
builds: the widget's figure (Save PNG beside a chart, or `allreduce-explainer figure`).
"""

from __future__ import annotations

import json
from pathlib import Path

from allreduce_explainer.widgets import views

PROVIDER = "All-reduce, explained"
# a frame's size by the view it shows, in CSS pixels: the aspect ratio the snippets keep
SIZES = {
    views.STEPPER: (800, 640),
    views.CHART: (800, 560),
    views.PANEL: (800, 680),
    views.EXERCISE: (800, 520),
    views.SHEET: (800, 900),
}
PAGE_SIZE = (960, 720)
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
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def oembed(url: str, path: str, title: str, size: tuple[int, int], page_url: str) -> dict:
    """An oEmbed 1.0 response of type rich for the frame at `path` (under the site's `url`)."""
    w, h = size
    return {
        "version": "1.0",
        "type": "rich",
        "provider_name": PROVIDER,
        "provider_url": url or "./",
        "title": title,
        "html": fill("html", url + path, url + page_url, title, size, ""),
        "width": w,
        "height": h,
        "cache_age": 86400,
    }


def write_oembed(site: Path, folder: str, response: dict) -> None:
    """site/<folder>/oembed.json, which the page's <link rel="alternate"> names."""
    dest = site / folder / "oembed.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(response, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
