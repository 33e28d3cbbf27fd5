"""The course's progress on every stage page: the stages in order, the core path apart as the
front matter marks it, the page itself the one current; no such nav on a page that is not a stage.
"""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from helpers import soup

ROOT = Path(__file__).resolve().parents[2]


def front_matter() -> list[dict]:
    """content/*.md's front matter, read apart from the build: the stages (order below 90) by
    order, each with its slug and whether it is on the core path."""
    pages = [frontmatter.load(p).metadata for p in sorted((ROOT / "content").glob("*.md"))]
    return sorted((m for m in pages if m["order"] < 90), key=lambda m: m["order"])


STAGES = front_matter()


def nav_of(built: Path, slug: str):
    return soup(built / slug / "index.html").select("nav.course-nav")


@pytest.mark.parametrize("here", [m["slug"] for m in STAGES])
def test_every_stage_page_shows_the_course_with_itself_current(built, here):
    (nav,) = nav_of(built, here)
    links = nav.select("a")
    assert [a["href"] for a in links] == [f"../{m['slug']}/index.html" for m in STAGES]
    numbers = [a.get_text().split(":")[0] for a in links]
    assert numbers == [f"Stage {n}" for n in range(1, len(STAGES) + 1)]
    assert [a["href"] for a in links if a.get("aria-current") == "page"] == [
        f"../{here}/index.html"
    ]
    core = [a["href"] for a in nav.select(".course-core a")]
    further = [a["href"] for a in nav.select(".course-further a")]
    assert core == [f"../{m['slug']}/index.html" for m in STAGES if m.get("core")]
    assert further == [f"../{m['slug']}/index.html" for m in STAGES if not m.get("core")]
    assert nav.select_one(".course-core .course-part-name").get_text() == "Core path"


@pytest.mark.parametrize("slug", ["glossary", "quick-reference", "further-reading"])
def test_a_page_that_is_no_stage_has_no_course_nav(built, slug):
    assert nav_of(built, slug) == []
