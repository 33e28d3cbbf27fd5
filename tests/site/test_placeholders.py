"""Each embed's static placeholder image (for the snippets' print branches and oEmbed's
thumbnail): built for every embed, a valid PNG exactly its frame's size, and every snippet and
oembed.json names a picture the site has."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from bs4 import BeautifulSoup

from helpers import HOSTED, png_size, site_pages
from sitebuild import embeds
from sitebuild.embeds import PLACEHOLDER, PLACEHOLDERS, frame_size
from sitebuild.pages import Builder


def test_every_embed_has_its_placeholder_at_its_frames_size(site):
    names = sorted(p.name for p in (site / "embed").iterdir())
    assert names
    for name in names:
        assert png_size((site / "embed" / name / PLACEHOLDER).read_bytes()) == frame_size(name)
    # and the committed pictures are exactly the embeds' (none left from a removed widget)
    assert sorted(p.stem for p in PLACEHOLDERS.glob("*.png")) == names


def site_file(site: Path, address: str) -> Path:
    """The file an address names: one relative to the site's root (the snippets of a build
    without --url), or one under HOSTED (the `hosted` build's)."""
    address = address.removeprefix(HOSTED)
    return site / urlsplit(urljoin("http://x/", address)).path.lstrip("/")


def test_every_oembed_thumbnail_is_the_embeds_picture(hosted):
    site, pages_with = hosted, 0
    for path in sorted(site.rglob("oembed.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        folder = path.parent.relative_to(site).as_posix()
        if folder.startswith("embed/"):
            assert data["thumbnail_url"] == f"{HOSTED}{folder}/{PLACEHOLDER}"
        if "thumbnail_url" not in data:
            assert not any(k.startswith("thumbnail") for k in data)  # oEmbed: all three or none
            continue
        pages_with += not folder.startswith("embed/")
        image = site_file(site, data["thumbnail_url"])
        size = png_size(image.read_bytes())
        assert size == (data["thumbnail_width"], data["thumbnail_height"])
    assert pages_with > 0  # a page with widgets has its first widget's picture


def test_page_thumbnail_is_its_first_widgets(hosted):
    html = (hosted / "latency-ring-vs-tree" / "index.html").read_text(encoding="utf-8")
    first = BeautifulSoup(html, "html.parser").select_one("main [data-widget]")["data-widget"]
    data = json.loads((hosted / "latency-ring-vs-tree" / "oembed.json").read_text())
    assert data["thumbnail_url"] == f"{HOSTED}embed/{first}/{PLACEHOLDER}"


def test_the_course_pages_snippets_name_existing_pictures(site):
    (course,) = [p for p in site_pages() if p.path.name == "course.md"]
    html = (site / course.slug / "index.html").read_text(encoding="utf-8")
    named = set(re.findall(r"[\w/.:-]+/" + re.escape(PLACEHOLDER), html))
    assert named == {f"embed/latency/{PLACEHOLDER}"}
    for address in named:
        assert png_size(site_file(site, address).read_bytes()) == frame_size("latency")


def test_thumbnails_are_absolute_with_the_sites_url(tmp_path):

    Builder(tmp_path, "https://example.org/ae").build_pages()
    data = json.loads((tmp_path / "embed" / "latency" / "oembed.json").read_text())
    assert data["thumbnail_url"] == f"https://example.org/ae/embed/latency/{PLACEHOLDER}"
    assert (data["thumbnail_width"], data["thumbnail_height"]) == frame_size("latency")


def test_a_missing_picture_stops_the_build_naming_the_command(tmp_path, monkeypatch):
    """Unless the build is the placeholder script's own, which then names no thumbnail."""

    monkeypatch.setattr(embeds, "PLACEHOLDERS", tmp_path / "none")
    with pytest.raises(SystemExit, match="make placeholders"):
        Builder(tmp_path / "a").build_pages()
    Builder(tmp_path / "b", HOSTED, placeholders=False).build_pages()
    data = json.loads((tmp_path / "b" / "embed" / "latency" / "oembed.json").read_text())
    assert "thumbnail_url" not in data
    assert not (tmp_path / "b" / "embed" / "latency" / PLACEHOLDER).exists()
