"""The build's course-platform files: SCORM packages that work offline, the question banks the
teacher's sheet links, the places they name from the pages' front matter."""

from __future__ import annotations

import json
import zipfile
from urllib.parse import urljoin, urlsplit
from xml.etree import ElementTree as ET

from bs4 import BeautifulSoup

from allreduce_explainer.exercises import KINDS
from helpers import stages
from sitebuild import scorm
from sitebuild.banks import BANK_COUNT, FILES

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
    shipped = {str(p.relative_to(site)) for p in (site / "py").iterdir() if p.suffix != ".gz"}
    shipped = {s for s in shipped if not s.endswith(".br")}
    assert shipped <= names, sorted(shipped - names)
    assert manifest  # the worker's own list of its files is packaged with it
    assert any(n.startswith("vendor/pyodide/") for n in names)


def test_banks_are_built_and_linked_from_the_teachers_sheet(site):
    html = (site / "teachers-sheet" / "index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    links = {a["href"] for a in soup.select("#question-banks a[download]")}
    assert links == {f"../banks/{name}" for name, _ in FILES.values()}
    places = json.loads((site / "banks" / "places.json").read_text(encoding="utf-8"))
    drilled = {k: p for p in stages() for k in p.exercises}
    assert set(places) == set(drilled) <= set(KINDS)
    for kind, place in places.items():
        page = drilled[kind]
        assert place["slug"] == page.slug and place["objective"] in page.objectives
        assert place["page"].endswith(page.title)
    root = ET.parse(site / "banks" / FILES["moodle"][0]).getroot()
    items = [q for q in root.findall("question") if q.get("type") != "category"]
    assert len(items) == len(places) * BANK_COUNT


def test_oembed_is_discovered_from_every_page_and_embed(site):
    """Each page's and embed's <link rel=alternate type=application/json+oembed> names a file
    that is an oEmbed 1.0 rich response whose iframe shows that page or embed."""
    found = 0
    for html_path in sorted(site.rglob("index.html")):
        rel = html_path.relative_to(site).as_posix()
        if rel in ("index.html", "glossary/index.html"):
            continue
        soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser")
        (link,) = soup.find_all("link", rel="alternate", type="application/json+oembed")
        target = html_path.parent / link["href"]
        data = json.loads(target.read_text(encoding="utf-8"))
        assert data["version"] == "1.0" and data["type"] == "rich"
        assert isinstance(data["width"], int) and isinstance(data["height"], int)
        frame = BeautifulSoup(data["html"], "html.parser").iframe
        assert frame["src"] == rel and frame["loading"] == "lazy" and frame["title"]
        assert f"aspect-ratio:{data['width']}/{data['height']}" in frame["style"]
        found += 1
    embeds = len(list((site / "embed").iterdir()))
    assert found == embeds + len([p for p in (site).iterdir() if (p / "oembed.json").exists()])


def test_oembed_addresses_are_absolute_with_the_sites_url(tmp_path):
    from sitebuild.pages import Builder

    Builder(tmp_path, "https://example.org/ae").build_pages()
    data = json.loads((tmp_path / "embed" / "latency" / "oembed.json").read_text())
    src = BeautifulSoup(data["html"], "html.parser").iframe["src"]
    assert src == "https://example.org/ae/embed/latency/index.html"
    assert data["provider_url"] == "https://example.org/ae/"
