"""What a SCORM package carries, on a small site made here (no Node, no Chromium): a stage's
package holds its page alone and the files it loads, no file twice (the standard library in one
archive); the course's, every page once. A link to a page a package leaves out goes to the public
site when the build has its address, and is otherwise plain text naming the course package; the
worked solutions are hidden unless the build asks for them. The real build's packages are checked
the same way in test_lms.py."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from helpers import assert_no_file_twice
from sitebuild import scorm
from sitebuild.page import Page

STAGES = ("one", "two")


def inner_zip(names: list[str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n in names:
            z.writestr(n, n)
    return out.getvalue()


def page_html(slug: str, other: str) -> str:
    return f"""<!doctype html><html><head><meta name="ae-base" content="../">
<meta name="ae-plotly" content="../vendor/plotly.js">
<link rel="stylesheet" href="../static/site.css"><script src="../static/page.js"></script></head>
<body><nav><a href="../index.html">Home</a> <a href="../{other}/index.html">Stage {other}</a>
<a href="../{slug}/index.html" aria-current="page">This</a></nav>
<p>See <a href="../{other}/index.html?exercise-x.seed=3#exercise-x">stage {other}</a> and the
<a class="glossary-term" href="../glossary/#ring" title="A loop of GPUs.">ring</a>, or
<a href="https://example.org/paper">a paper</a>.</p>
<figure data-widget="exercise-x"></figure>
<nav class="pager"><a rel="next" href="../{other}/index.html">Next →</a></nav>
<footer><a href="../LICENSE.txt" rel="license">license</a></footer></body></html>"""


@pytest.fixture
def site(tmp_path) -> Path:
    """A site's shape: two stages, a glossary and home page, the shared scripts, Pyodide with
    its own standard library beside the build's, the build's Python and its manifest."""
    stdlib = ["json/__init__.py", "random.py"]
    files = {
        "index.html": "<!doctype html><title>home</title><a href='one/index.html'>one</a>",
        "glossary/index.html": "<!doctype html><title>glossary</title>",
        "LICENSE.txt": "MIT",
        "static/site.css": "body{}",
        "static/page.js": "// page",
        "static/js/worker.js": "// worker",
        "vendor/plotly.js": "// plotly",
        "vendor/pyodide/pyodide.esm.js": "// pyodide",
        "vendor/pyodide/pyodide.asm.wasm": "wasm",
        "vendor/pyodide/pyodide-lock.json": "{}",
        "vendor/SHA256SUMS": "sums",
        "py/build.json": "{}",
        "embed/x/index.html": "<!doctype html><title>embed</title>",
        "banks/places.json": "{}",
        "index.html.gz": "twin",
    }
    for slug, other in zip(STAGES, reversed(STAGES)):
        files[f"{slug}/index.html"] = page_html(slug, other)
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / "vendor/pyodide/python_stdlib.zip").write_bytes(inner_zip(stdlib))
    (tmp_path / "py/stdlib-0123.zip").write_bytes(inner_zip([n + "c" for n in stdlib]))
    return tmp_path


def stages() -> list[Page]:
    return [
        Page(title=s, slug=s, order=i, summary="", source="", path=Path(), number=i + 1)
        for i, s in enumerate(STAGES)
    ]


def package(site: Path, slug: str, **kwargs) -> dict[str, bytes]:
    scorm.write_scorm(site, stages(), **kwargs)
    with zipfile.ZipFile(site / "scorm" / f"{slug}.zip") as z:
        return {n: z.read(n) for n in z.namelist()}


def test_a_stages_package_carries_its_page_and_what_it_loads(site):
    files = package(site, "one")
    assert set(files) == {
        "imsmanifest.xml",
        "one/index.html",
        "LICENSE.txt",
        "static/site.css",
        "static/page.js",
        "static/js/worker.js",
        "vendor/plotly.js",
        "vendor/pyodide/pyodide.esm.js",
        "vendor/pyodide/pyodide.asm.wasm",
        "py/stdlib-0123.zip",
    }
    assert_no_file_twice(files)


def test_the_course_package_holds_every_page_once(site):
    files = package(site, scorm.COURSE)
    pages = {n for n in files if n.endswith(".html")}
    assert pages == {"index.html", "glossary/index.html", "one/index.html", "two/index.html"}
    assert not {n for n in files if n.startswith(("embed/", "banks/", "scorm/"))}
    assert not set(scorm.NOT_LOADED) & set(files)
    assert_no_file_twice(files)


def links(html: bytes) -> tuple[BeautifulSoup, set[str]]:
    soup = BeautifulSoup(html, "html.parser")
    return soup, {a["href"] for a in soup.find_all("a", href=True)}


def test_without_an_address_a_left_out_page_is_plain_text_naming_the_course_package(site):
    soup, hrefs = links(package(site, "one")["one/index.html"])
    assert hrefs == {"../one/index.html", "https://example.org/paper", "../LICENSE.txt"}
    elsewhere = [s.get_text(" ", strip=True) for s in soup.select("span.elsewhere")]
    assert elsewhere == ["stage two (in the course package)", "Next → (in the course package)"]
    menu = soup.select("nav [data-role=elsewhere]")  # the menu's titles, each saying where
    assert [(a.name, a.get_text(), a.get("title")) for a in menu] == [
        ("a", "Home", "In the course package"),
        ("a", "Stage two", "In the course package"),
    ]
    term = soup.find("span", title="A loop of GPUs.")
    assert term.get_text() == "ring"
    # the course package carries every page: its links stay
    _, hrefs = links(package(site, scorm.COURSE)["one/index.html"])
    assert "../two/index.html?exercise-x.seed=3#exercise-x" in hrefs


def test_with_an_address_a_left_out_page_is_linked_on_the_public_site(site):
    url = "https://host.example/ae/"
    _, hrefs = links(package(site, "one", url=url)["one/index.html"])
    assert hrefs == {
        "../one/index.html",
        "https://example.org/paper",
        "../LICENSE.txt",
        f"{url}index.html",
        f"{url}two/index.html",
        f"{url}two/index.html?exercise-x.seed=3#exercise-x",
        f"{url}glossary/#ring",
    }


def test_solutions_are_hidden_unless_the_build_asks(site):
    meta = {"name": "ae-solutions", "content": "hidden"}
    for slug in ("one", scorm.COURSE):
        soup = BeautifulSoup(package(site, slug)["one/index.html"], "html.parser")
        assert soup.head.find("meta", attrs=meta)
        soup = BeautifulSoup(package(site, slug, solutions=True)["one/index.html"], "html.parser")
        assert not soup.find("meta", attrs=meta)
