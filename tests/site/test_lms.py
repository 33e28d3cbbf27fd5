"""The build's course-platform files: SCORM packages that work offline, the question banks the
teacher's sheet links, the places they name from the pages' front matter."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import zipfile
from urllib.parse import parse_qs, urljoin, urlsplit
from xml.etree import ElementTree as ET

from bs4 import BeautifulSoup

from allreduce_explainer.exercises import KINDS
from allreduce_explainer.exercises.export import BANK_COUNT, BANK_FILES
from helpers import HOSTED, assert_no_file_twice, stages
from sitebuild import scorm
from sitebuild.embeds import SNIPPETS
from sitebuild.pages import Builder

CP = {"cp": scorm.CP}
ADL_SCORMTYPE = f"{{{scorm.ADLCP}}}scormtype"


def local_refs(html: str, page: str) -> set[str]:
    """Every file a page loads or links, as a path under the site's root."""
    soup = BeautifulSoup(html, "html.parser")
    out = set()
    for tag, attr in (("script", "src"), ("link", "href"), ("a", "href"), ("img", "src")):
        for e in soup.find_all(tag):
            url = e.get(attr)
            if not url or url.startswith(("data:", "mailto:", "#")) or urlsplit(url).scheme:
                continue  # a link to another site is not a file the page needs
            path = urlsplit(urljoin("http://x/" + page, url)).path.lstrip("/")
            out.add(path + "index.html" if path.endswith("/") or not path else path)
    for meta in soup.find_all("meta", attrs={"name": ("ae-plotly", "ae-page")}):
        out.add(urlsplit(urljoin("http://x/" + page, meta["content"])).path.lstrip("/"))
    return out


def test_a_package_per_stage_and_one_for_the_course(site):
    slugs = [p.slug for p in stages()]
    made = sorted(p.stem for p in (site / "scorm").glob("*.zip"))
    assert made == sorted([*slugs, scorm.COURSE])
    for slug in [*slugs, scorm.COURSE]:
        with zipfile.ZipFile(site / "scorm" / f"{slug}.zip") as z:
            names = set(z.namelist())
            root = ET.fromstring(z.read("imsmanifest.xml"))
            assert root.findtext("cp:metadata/cp:schemaversion", namespaces=CP) == "1.2"
            scos = [r for r in root.iterfind(".//cp:resource", CP) if r.get(ADL_SCORMTYPE) == "sco"]
            want = slugs if slug == scorm.COURSE else [slug]
            assert [r.get("href") for r in scos] == [f"{s}/index.html" for s in want]
            items = root.findall(".//cp:item", CP)
            assert [i.get("identifierref") for i in items] == [r.get("identifier") for r in scos]
            listed = {f.get("href") for f in root.iterfind(".//cp:file", CP)}
            assert listed == names - {"imsmanifest.xml"}
            assert not any(n.endswith((".gz", ".br")) or n.startswith("embed/") for n in names)
            for r in scos:  # offline: every file the launched page needs is in the package
                href = r.get("href")
                html = z.read(href).decode("utf-8")
                missing = {ref for ref in local_refs(html, href) if ref not in names}
                assert missing == set(), (slug, sorted(missing)[:5])


def test_packages_carry_the_worker_and_its_python(site):
    with zipfile.ZipFile(site / "scorm" / f"{stages()[0].slug}.zip") as z:
        names = set(z.namelist())
    manifest = json.loads((site / "py" / "build.json").read_text())
    roles = ("nostdlib", "stdlib", "core", "snapshot")  # the files the worker fetches
    assert {manifest[r] for r in roles} <= names
    assert any(n.startswith("vendor/pyodide/") for n in names)


def test_a_stages_package_holds_no_other_page_and_no_file_twice(site):
    slugs = [p.slug for p in stages()]
    for slug in [*slugs, scorm.COURSE]:
        with zipfile.ZipFile(site / "scorm" / f"{slug}.zip") as z:
            files = {n: z.read(n) for n in z.namelist()}
        assert_no_file_twice(files)
        pages = {n for n in files if n.endswith(".html")}
        if slug != scorm.COURSE:
            assert pages == {f"{slug}/index.html"}
        else:
            assert {f"{s}/index.html" for s in slugs} <= pages


def sheet_soup(site) -> BeautifulSoup:
    html = (site / "teachers-sheet" / "index.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, "html.parser")


def check_places(site) -> dict:
    places = json.loads((site / "banks" / "places.json").read_text(encoding="utf-8"))
    drilled = {k: p for p in stages() for k in p.exercises}
    assert set(places) == set(drilled) <= set(KINDS)
    for kind, place in places.items():
        page = drilled[kind]
        assert place["slug"] == page.slug and place["objective"] in page.objectives
        assert place["page"].endswith(page.title)
    return places


def test_without_an_address_no_bank_file_and_no_oembed(site):
    """A bank's or an oEmbed response's relative links are dead inside a course platform: a build
    without the site's address writes neither, and the sheet offers each bank made in the
    browser instead."""
    check_places(site)
    written = {p.name for p in (site / "banks").iterdir() if p.suffix not in (".gz", ".br")}
    assert written == {"places.json"}
    assert not list(site.rglob("oembed.json"))
    for html_path in site.rglob("index.html"):
        soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser")
        assert not soup.find_all("link", type="application/json+oembed"), html_path
    soup = sheet_soup(site)
    assert not soup.select("#question-banks a[download]")
    made = [b["data-format"] for b in soup.select('#question-banks [data-action="make-bank"]')]
    assert made == list(BANK_FILES)


def test_with_an_address_the_banks_are_written_and_linked(hosted):
    soup = sheet_soup(hosted)
    links = {a["href"] for a in soup.select("#question-banks a[download]")}
    assert links == {f"../banks/{name}" for name, _ in BANK_FILES.values()}
    assert not soup.select('[data-action="make-bank"]')
    places = check_places(hosted)
    for href in links:
        assert (hosted / "teachers-sheet" / href).resolve().is_file()
    root = ET.parse(hosted / "banks" / BANK_FILES["moodle"][0]).getroot()
    items = [q for q in root.findall("question") if q.get("type") != "category"]
    assert len(items) == len(places) * BANK_COUNT


def in_site(site, address: str):
    """The file an absolute address under HOSTED names in the built folder, or None if it is not
    under HOSTED (a folder's address names its index.html)."""
    if not address.startswith(HOSTED):
        return None
    path = urlsplit(address).path[len(urlsplit(HOSTED).path) :]
    return site / (path + "index.html" if path.endswith("/") or not path else path)


def bank_links(hosted) -> list[str]:
    """Every address in every bank file: the HTML links of Moodle XML and QTI, the GIFT's and
    CSV's "Open it on the site" and link column."""
    out = []
    for name, _ in BANK_FILES.values():
        data = (hosted / "banks" / name).read_bytes()
        if name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                data = z.read("bank.xml")  # the manifest names only its own files
        text = data.decode("utf-8")
        if name.endswith(".csv"):
            out += [row["link"] for row in csv.DictReader(io.StringIO(text))]
        text = html.unescape(text.replace("\\", ""))  # GIFT escapes : = # with a backslash
        out += re.findall(r'href="([^"]+)"', text)
        out += re.findall(r"Open it on the site: (\S+)", text)
    return out


def test_every_link_of_a_hosted_build_is_absolute_and_resolves(hosted):
    """Banks, oEmbed files, discovery links and the course page's snippets: every address is under
    the site's public address and names a file the build wrote."""
    links = bank_links(hosted)
    assert len(links) > 4 * len(KINDS)
    for path in hosted.rglob("oembed.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        frame = BeautifulSoup(data["html"], "html.parser").iframe
        links += [data["provider_url"], frame["src"], data.get("thumbnail_url", HOSTED)]
    for html_path in hosted.rglob("index.html"):
        soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser")
        for link in soup.find_all("link", type="application/json+oembed"):
            links += [link["href"], parse_qs(urlsplit(link["href"]).query)["url"][0]]
    course = (hosted / "use-in-your-course" / "index.html").read_text(encoding="utf-8")
    # the snippets filled for the example widget, one per format (the events' example is not)
    blocks = [p.get_text() for p in BeautifulSoup(course, "html.parser").select("#platforms pre")]
    snippets = [b for b in blocks if "embed/latency/" in b]
    assert len(snippets) == len(SNIPPETS)
    found = re.findall(r"https?://[^\s\"')\]]+", " ".join(snippets))
    links += [a.rstrip(".,") for a in found]  # a sentence's full stop is not the address's
    for address in links:
        target = in_site(hosted, address)
        assert target is not None and target.is_file(), address


def test_oembed_is_discovered_from_every_page_and_embed(hosted):
    """Each page's and embed's discovery link (oEmbed 1.0, 4: the endpoint with `url` and
    `format`) names its oembed.json, an oEmbed 1.0 rich response whose iframe shows that page."""
    found = 0
    for html_path in sorted(hosted.rglob("index.html")):
        rel = html_path.relative_to(hosted).as_posix()
        if rel in ("index.html", "glossary/index.html"):
            continue
        soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser")
        (link,) = soup.find_all("link", rel="alternate", type="application/json+oembed")
        query = parse_qs(urlsplit(link["href"]).query)
        assert query == {"url": [HOSTED + rel], "format": ["json"]}
        target = in_site(hosted, link["href"].split("?")[0])
        assert target == html_path.parent / "oembed.json"
        data = json.loads(target.read_text(encoding="utf-8"))
        assert data["version"] == "1.0" and data["type"] == "rich"
        assert isinstance(data["width"], int) and isinstance(data["height"], int)
        frame = BeautifulSoup(data["html"], "html.parser").iframe
        assert frame["src"] == HOSTED + rel and frame["loading"] == "lazy" and frame["title"]
        assert f"aspect-ratio:{data['width']}/{data['height']}" in frame["style"]
        assert data["provider_url"] == HOSTED
        found += 1
    assert found == len(list(hosted.rglob("oembed.json"))) > len(stages())


def shown_with_solutions(site) -> set[tuple[str, int]]:
    """Every (kind, seed) a built page carries with its worked solution, read from the states the
    pages inline: each exercise's, and each problem of each teacher's sheet's key."""
    out = set()
    for html_path in site.rglob("index.html"):
        soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser")
        for script in soup.select('script[data-role="state"]'):
            state = json.loads(script.string)
            if state.get("kind") == "exercise" and state["solution_steps"]:
                out.add((state["exercise"], state["seed"]))
            if state.get("kind") == "sheet":
                out |= {(a["kind"], a["seed"]) for a in state["answers"] if a["solution_steps"]}
    return out


def test_bank_seeds_are_never_shown_with_their_solution(hosted):
    shown = shown_with_solutions(hosted)
    assert {k for k, _ in shown} >= {k for p in stages() for k in p.exercises}
    root = ET.parse(hosted / "banks" / BANK_FILES["moodle"][0]).getroot()
    banked = {
        (ident.rsplit("-", 1)[0], int(ident.rsplit("-", 1)[1]))
        for ident in (q.findtext("idnumber") for q in root.findall("question"))
        if ident
    }
    assert banked and not banked & shown


def test_oembed_addresses_are_absolute_with_the_sites_url(tmp_path):

    Builder(tmp_path, "https://example.org/ae").build_pages()
    data = json.loads((tmp_path / "embed" / "latency" / "oembed.json").read_text())
    src = BeautifulSoup(data["html"], "html.parser").iframe["src"]
    assert src == "https://example.org/ae/embed/latency/index.html"
    assert data["provider_url"] == "https://example.org/ae/"
