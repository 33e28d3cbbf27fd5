"""The course page prints the SCORM packages' sizes the build wrote (facts from the zips, never
typed): held here against the zips' own sizes on disk, in the page, its Brotli twin and the copy
of the page inside the course package, which carries the page that states its size."""

from __future__ import annotations

import zipfile
from pathlib import Path

import brotli
from bs4 import BeautifulSoup

COURSE_PAGE = "use-in-your-course/index.html"
COURSE_ZIP = "allreduce-explainer.zip"


def printed(html: str) -> dict[str, float]:
    """The page's SCORM figures as it prints them, in bytes: "15.2 MB" -> 15.2e6."""
    soup = BeautifulSoup(html, "html.parser")
    out = {}
    for d in soup.select('data.fact[data-fact^="scorm_"]'):
        number, unit = d.get_text().split()
        assert unit == "MB", d
        out[d["data-fact"]] = float(number) * 1e6
    return out


def near(shown: float, size: int) -> bool:
    """A size printed to a tenth of a MB is within half a tenth of the bytes."""
    return abs(shown - size) <= 0.05e6 + 1


def test_the_course_page_prints_the_built_packages_sizes(site: Path):
    zips = {p.name: p.stat().st_size for p in (site / "scorm").glob("*.zip")}
    course = zips.pop(COURSE_ZIP)
    stages = list(zips.values())
    assert stages
    page = (site / COURSE_PAGE).read_text(encoding="utf-8")
    shown = printed(page)
    # the least and the most, or one size "each" when they print the same
    assert {"scorm_course", "scorm_stage_least", "scorm_stages"} <= set(shown)
    assert set(shown) <= {"scorm_course", "scorm_stage_least", "scorm_stage_most", "scorm_stages"}
    assert near(shown["scorm_course"], course), (shown, course)
    assert near(shown["scorm_stage_least"], min(stages))
    assert near(shown.get("scorm_stage_most", shown["scorm_stage_least"]), max(stages))
    assert near(shown["scorm_stages"], sum(stages))
    # the recommended package carries Python once: smaller than the stages' copies together
    assert shown["scorm_course"] < shown["scorm_stages"]
    # the page served compressed is the same page
    twin = (site / f"{COURSE_PAGE}.br").read_bytes()
    assert brotli.decompress(twin).decode("utf-8") == page
    # the course package's copy of the page prints its own size too
    with zipfile.ZipFile(site / "scorm" / COURSE_ZIP) as z:
        inside = z.read(COURSE_PAGE).decode("utf-8")
    assert printed(inside) == shown
