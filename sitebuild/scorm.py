"""site/scorm/: SCORM 1.2 packages, one per stage and one for the whole course.

A package is a zip a course platform imports: `imsmanifest.xml` and the site's files, so that the
page works offline inside the platform (Python, the charts and the core are in it; nothing comes
from another origin). A stage's package launches its page as one SCO; the course's package has
one SCO per stage, in order. Every package holds every page (a link to the next stage still
works) but not the embeds, the banks, other packages or the compressed twins, which only a web
host uses. When the platform provides the SCORM API, client/js/scorm.js reports the page's
status and score. Zips are dated ZIP_TIME: the build stays byte-identical.
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

from allreduce_explainer.exercises.export import zip_bytes

from .page import Page

COURSE = "allreduce-explainer"  # the whole course's package: site/scorm/allreduce-explainer.zip
LEFT_OUT = ("embed/", "banks/", "scorm/")
TWINS = (".gz", ".br")
CP = "http://www.imsproject.org/xsd/imscp_rootv1p1p2"
ADLCP = "http://www.adlnet.org/xsd/adlcp_rootv1p2"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMAS = (
    f"{CP} imscp_rootv1p1p2.xsd http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 "
    f"imsmd_rootv1p2p1.xsd {ADLCP} adlcp_rootv1p2.xsd"
)


def packaged(site: Path) -> list[str]:
    """The site's files a package carries, as sorted paths under the site."""
    out = []
    for path in site.rglob("*"):
        rel = path.relative_to(site).as_posix()
        if path.is_file() and not rel.startswith(LEFT_OUT) and not rel.endswith(TWINS):
            out.append(rel)
    return sorted(out)


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
    for f in files:
        ET.SubElement(shared, f"{{{CP}}}file", href=f)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_scorm(site: Path, stages: list[Page]) -> list[str]:
    """Every package; returns their paths under the site."""
    files = packaged(site)
    data = {f: (site / f).read_bytes() for f in files}
    dest = site / "scorm"
    dest.mkdir(parents=True, exist_ok=True)
    made = []
    packages = [(p.slug, p.title, [p]) for p in stages]
    packages.append((COURSE, "All-reduce, explained", stages))
    for slug, title, scos in packages:
        ident = COURSE if slug == COURSE else f"{COURSE}-{slug}"
        head = {"imsmanifest.xml": manifest(ident, title, scos, files)}
        (dest / f"{slug}.zip").write_bytes(zip_bytes(head | data))
        made.append(f"scorm/{slug}.zip")
    return made
