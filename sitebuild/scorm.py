"""site/scorm/: SCORM 1.2 packages, one per stage and one for the whole course.

A package is a zip a course platform imports: `imsmanifest.xml` and the site's files its pages
load, so that they work offline inside the platform (Python, the charts and the core are in it;
nothing comes from another origin). A stage's package launches its page as one SCO and carries
that page alone with the files it loads (`loads`): no other page, and none of the site's files a
page never fetches (NOT_LOADED). The course's package has one SCO per stage, in order, and every
page of the site, each file once. In a package's copy of a page, a link to a page the package
does not carry points at the public site when the build knows its address, and is otherwise
plain text saying where it is; the worked solutions are hidden (a `<meta name="ae-solutions">`
that exercise.js reads) unless the teacher's build asks for them (`build.py --scorm-solutions`).
When the platform provides the SCORM API, client/js/scorm.js draws each learner's problems,
scores and resumes. Zips are dated ZIP_TIME: the build stays byte-identical.
"""

from __future__ import annotations

import re
from html import escape, unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit
from xml.etree import ElementTree as ET

from allreduce_explainer.exercises.export import zip_bytes

from .page import Page

COURSE = "allreduce-explainer"  # the whole course's package: site/scorm/allreduce-explainer.zip
LEFT_OUT = ("embed/", "banks/", "scorm/")
TWINS = (".gz", ".br")
# What a live page's worker loads (client/js/worker.js, snapshot.js): the site's scripts and
# styles, Pyodide's files and the build's Python files, less the files below.
RUNTIME = ("static/", "vendor/pyodide/", "py/")
# Files of the site no page fetches: the worker hands Pyodide its standard library as
# py/stdlib-*.zip (stdLibURL) and the lock's info (lockFileContents), and has the manifest
# stamped in (python_assets.stamp_worker); the checksums are for whoever copies the site.
NOT_LOADED = (
    "vendor/pyodide/python_stdlib.zip",
    "vendor/pyodide/pyodide-lock.json",
    "vendor/SHA256SUMS",
    "py/build.json",
)
SOLUTIONS_META = '<meta name="ae-solutions" content="hidden">'
ELSEWHERE = "in the course package"  # said of a page a stage's package does not carry
CP = "http://www.imsproject.org/xsd/imscp_rootv1p1p2"
ADLCP = "http://www.adlnet.org/xsd/adlcp_rootv1p2"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMAS = (
    f"{CP} imscp_rootv1p1p2.xsd http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 "
    f"imsmd_rootv1p2p1.xsd {ADLCP} adlcp_rootv1p2.xsd"
)
ANCHOR = re.compile(r"<a\b([^>]*)>(.*?)</a>", re.S)  # anchors do not nest in HTML
# the header and the menus, whose titles stand in a row (the pager's one link has room to say it)
NAVIGATION = re.compile(r'<(header|nav)\b(?![^>]*class="pager").*?</\1>', re.S)
ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def packaged(site: Path) -> list[str]:
    """The site's files a package may carry, as sorted paths under the site."""
    out = []
    for path in site.rglob("*"):
        rel = path.relative_to(site).as_posix()
        if (
            path.is_file()
            and not rel.startswith(LEFT_OUT)
            and not rel.endswith(TWINS)
            and rel not in NOT_LOADED
        ):
            out.append(rel)
    return sorted(out)


def under(page: str, href: str) -> str | None:
    """The path under the site that `href` on `page` names (a folder's index.html), or None for
    another site, an e-mail address, data or a fragment of the page itself."""
    if not href or href.startswith(("#", "data:", "mailto:")) or urlsplit(href).scheme:
        return None
    path = urlsplit(urljoin("http://site/" + page, href)).path.lstrip("/")
    return path + "index.html" if path.endswith("/") or not path else path


class _Refs(HTMLParser):
    """The files a page loads (scripts, styles, images, Plotly's address) and the files it
    links to that are not pages (the license)."""

    def __init__(self, page: str):
        super().__init__()
        self.page, self.loads, self.links, self.live = page, set(), set(), False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.live = self.live or "data-widget" in a
        ref = {"script": "src", "img": "src", "link": "href", "a": "href"}.get(tag)
        if tag == "meta" and a.get("name") == "ae-plotly":
            ref = "content"
        path = under(self.page, a.get(ref) or "") if ref else None
        if path and tag == "a":
            self.links.add(path)
        elif path:
            self.loads.add(path)


def loads(page: str, html: str, files: list[str]) -> set[str]:
    """What a package must carry for `page` (its path under the site) to work: the page, what
    it loads, a live page's worker and Python (RUNTIME), and the files it links that are not
    pages (the license and the citation)."""
    refs = _Refs(page)
    refs.feed(html)
    out = {page} | refs.loads | {f for f in refs.links if not f.endswith(".html")}
    if refs.live:
        out |= {f for f in files if f.startswith(RUNTIME)}
    return out & set(files)


def relink(html: str, page: str, carried: set[str], url: str) -> str:
    """`page`'s links to pages the package does not carry: to the public site at `url` if the
    build knows it, otherwise plain text. In the prose a page's link says the page is in the
    course package; in the header and the navigation, where the titles stand in a row, an anchor
    without an address (styled as the menu's, leading nowhere) says it in its title; a glossary
    term keeps its definition as its title."""
    prose = _relinker(page, carried, url, compact=False)
    menus = _relinker(page, carried, url, compact=True)
    return ANCHOR.sub(prose, NAVIGATION.sub(lambda m: ANCHOR.sub(menus, m[0]), html))


def _relinker(page: str, carried: set[str], url: str, compact: bool):
    """relink's replacement for one anchor."""

    def one(m: re.Match) -> str:
        attrs = dict(ATTR.findall(m[1]))
        href = unescape(attrs.get("href", ""))
        path = under(page, href)
        if path is None or path in carried:
            return m[0]
        parts = urlsplit(urljoin("http://site/" + page, href))
        if url:
            target = url + parts.path.lstrip("/") + (f"?{parts.query}" if parts.query else "")
            target += f"#{parts.fragment}" if parts.fragment else ""
            return m[0].replace(f'href="{attrs["href"]}"', f'href="{escape(target)}"', 1)
        if "glossary-term" in attrs.get("class", ""):
            return f'<span title="{attrs.get("title", "")}">{m[2]}</span>'
        if compact:  # a placeholder anchor (no href) keeps the menu's layout
            kept = "".join(f' {k}="{v}"' for k, v in attrs.items() if k in ("class", "id"))
            said = f'title="{ELSEWHERE.capitalize()}" data-role="elsewhere"'
            return f"<a{kept} {said}>{m[2]}</a>"
        return f'<span class="elsewhere">{m[2]} <small>({ELSEWHERE})</small></span>'

    return one


def packaged_page(html: str, page: str, carried: set[str], url: str, solutions: bool) -> bytes:
    """A package's copy of a page: relinked, and its worked solutions hidden unless asked for."""
    html = relink(html, page, carried, url)
    if not solutions:
        html = html.replace("</head>", f"{SOLUTIONS_META}\n</head>", 1)
    return html.encode("utf-8")


def manifest(identifier: str, title: str, scos: list[Page], files: list[str]) -> bytes:
    """imsmanifest.xml: one organization, one item and SCO resource per page in `scos`, and the
    files they share as one asset."""
    ET.register_namespace("", CP)
    ET.register_namespace("adlcp", ADLCP)
    ET.register_namespace("xsi", XSI)
    root = ET.Element(
        f"{{{CP}}}manifest",
        {"identifier": identifier, "version": "1.0", f"{{{XSI}}}schemaLocation": SCHEMAS},
    )
    meta = ET.SubElement(root, f"{{{CP}}}metadata")
    ET.SubElement(meta, f"{{{CP}}}schema").text = "ADL SCORM"
    ET.SubElement(meta, f"{{{CP}}}schemaversion").text = "1.2"
    orgs = ET.SubElement(root, f"{{{CP}}}organizations", default="course")
    org = ET.SubElement(orgs, f"{{{CP}}}organization", identifier="course")
    ET.SubElement(org, f"{{{CP}}}title").text = title
    resources = ET.SubElement(root, f"{{{CP}}}resources")
    for p in scos:
        item = ET.SubElement(
            org, f"{{{CP}}}item", identifier=f"item-{p.slug}", identifierref=f"sco-{p.slug}"
        )
        ET.SubElement(item, f"{{{CP}}}title").text = f"Stage {p.number}: {p.title}"
        href = f"{p.slug}/index.html"
        res = ET.SubElement(
            resources,
            f"{{{CP}}}resource",
            {
                "identifier": f"sco-{p.slug}",
                "type": "webcontent",
                f"{{{ADLCP}}}scormtype": "sco",
                "href": href,
            },
        )
        ET.SubElement(res, f"{{{CP}}}file", href=href)
        ET.SubElement(res, f"{{{CP}}}dependency", identifierref="site")
    shared = ET.SubElement(
        resources,
        f"{{{CP}}}resource",
        {"identifier": "site", "type": "webcontent", f"{{{ADLCP}}}scormtype": "asset"},
    )
    sco_files = {f"{p.slug}/index.html" for p in scos}
    for f in files:
        if f not in sco_files:
            ET.SubElement(shared, f"{{{CP}}}file", href=f)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def package(site: Path, carried: set[str], url: str, solutions: bool) -> dict[str, bytes]:
    """A package's files by path: the pages among `carried` as packaged_page makes them, the
    others as they are."""
    out = {}
    for f in sorted(carried):
        data = (site / f).read_bytes()
        if f.endswith(".html"):
            data = packaged_page(data.decode("utf-8"), f, carried, url, solutions)
        out[f] = data
    return out


def write_scorm(
    site: Path,
    stages: list[Page],
    url: str = "",
    solutions: bool = False,
    only: str | None = None,
) -> list[str]:
    """Every package (or the one named `only`); returns their paths under the site. `url` is the
    site's public address ("" if unknown); `solutions` keeps the worked solutions in the
    packages' pages."""
    files = packaged(site)
    dest = site / "scorm"
    dest.mkdir(parents=True, exist_ok=True)
    made = []
    packages = []
    for p in stages:
        path = f"{p.slug}/index.html"
        carried = loads(path, (site / path).read_text(encoding="utf-8"), files)
        packages.append((p.slug, p.title, [p], carried))
    packages.append((COURSE, "All-reduce, explained", stages, set(files)))
    for slug, title, scos, carried in packages:
        if only is not None and slug != only:
            continue
        ident = COURSE if slug == COURSE else f"{COURSE}-{slug}"
        head = {"imsmanifest.xml": manifest(ident, title, scos, sorted(carried))}
        body = package(site, carried, url, solutions)
        (dest / f"{slug}.zip").write_bytes(zip_bytes(head | body))
        made.append(f"scorm/{slug}.zip")
    return made


# The course page's figures of the packages (facts it quotes), before any package is written: the
# same number of words as the sizes that replace them, so the page's reading time is the same.
UNSIZED = "0.0 MB"


def mb(size: int) -> str:
    """A package's size as the course page prints it: MB (10^6 bytes) to a tenth."""
    return f"{size / 1e6:.1f} MB"


def package_sizes(site: Path | None, stages: list[Page]) -> dict[str, str]:
    """The facts the course page quotes about the packages in `site`/scorm (UNSIZED if None):
    the course's, a stage's least and most, and the stages' together."""
    if site is None:
        return dict.fromkeys(
            ("scorm_course", "scorm_stage_least", "scorm_stage_most", "scorm_stages"), UNSIZED
        )
    each = [(site / "scorm" / f"{p.slug}.zip").stat().st_size for p in stages]
    return {
        "scorm_course": mb((site / "scorm" / f"{COURSE}.zip").stat().st_size),
        "scorm_stage_least": mb(min(each)),
        "scorm_stage_most": mb(max(each)),
        "scorm_stages": mb(sum(each)),
    }
