"""A topology file as NCCL writes it (NCCL_TOPO_DUMP_FILE), read into NCCL's XML tree.

NCCL 2.30.7 reads its own hand-written parser (src/graph/xml.cc:38-260) into `ncclXmlNode`s:
a name, attributes as strings, children in file order and a parent (src/graph/xml.h:31-42).
This module reads the same file with the standard library's parser into the same shape, so
the system builder (system.py) can follow topo.cc line for line. The root is `<system
version="1">`: 2.30.7 writes and accepts version 1 only (xml.h:50, xml.cc:391-395), as every
release since 2.7 has; a file of another version is refused as NCCL refuses it.

A bad file is refused with a message that names the element (its tag and its `busid` or
`dev` where it has one) and what is wrong, as the log readers do.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ..errors import ParamError

TOPO_XML_VERSION = 1  # src/graph/xml.h:50
MAX_TOPO_BYTES = 4_000_000  # a dump of a 72-GPU NVL rack is about 200 kB
FIELD = "topology"


@dataclass(eq=False)
class XmlNode:
    """One element: ncclXmlNode (xml.h:31-42) with its attributes as strings."""

    name: str
    attrs: dict[str, str]
    subs: list[XmlNode] = field(default_factory=list)
    parent: XmlNode | None = None

    def get(self, key: str) -> str | None:
        return self.attrs.get(key)

    def label(self) -> str:
        """`<pci busid="0000:07:00.0">`: the element as a message names it."""
        for key in ("busid", "dev", "numaid", "target"):
            if key in self.attrs:
                return f'<{self.name} {key}="{self.attrs[key]}">'
        return f"<{self.name}>"

    def where(self) -> str:
        """The element and its nearest ancestor that has a bus id, for a message."""
        up = self.parent
        while up is not None and "busid" not in up.attrs:
            up = up.parent
        return self.label() + (f" under {up.label()}" if up is not None else "")

    def text(self, key: str) -> str:
        """xmlGetAttrStr (xml.h:104-111): a required attribute."""
        value = self.attrs.get(key)
        if value is None:
            raise bad(f'{self.where()} has no "{key}" attribute')
        return value

    def int(self, key: str, default: int | None = None) -> int:
        """xmlGetAttrInt / xmlGetAttrIntDefault (xml.h:112-124): strtol(str, NULL, 0)."""
        value = self.attrs.get(key)
        if value is None:
            if default is None:
                raise bad(f'{self.where()} has no "{key}" attribute')
            return default
        return c_int(value, f'{self.where()} attribute {key}="{value}"')

    def float(self, key: str) -> float:
        value = self.text(key)
        try:
            return float(value)
        except ValueError:
            raise bad(f'{self.where()} attribute {key}="{value}" is not a number') from None

    def sub(self, name: str) -> XmlNode | None:
        """xmlGetSub (xml.h:318-327): the first child of that name."""
        return next((s for s in self.subs if s.name == name), None)


def bad(message: str) -> ParamError:
    return ParamError(FIELD, message)


def c_int(text: str, what: str) -> int:
    """strtol(text, NULL, 0): decimal, 0x hex or 0 octal; what C reads of a leading number."""
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    try:
        if s[:2].lower() == "0x":
            return sign * int(s[2:], 16)
        if len(s) > 1 and s.startswith("0"):
            return sign * int(s, 8)
        return sign * int(s)
    except ValueError:
        raise bad(f"{what} is not an integer") from None


def bus_id(text: str) -> int:
    """busIdToInt64 (src/misc/utils.cc:33-48): the hex digits of "0000:07:00.0" as one number,
    skipping ':' and '.', stopping at the first other character, 16 digits at most."""
    digits = ""
    for ch in text:
        if ch in ".:":
            continue
        if ch not in "0123456789abcdefABCDEF" or len(digits) == 16:
            break
        digits += ch
    return int(digits, 16) if digits else 0


def _convert(element: ET.Element, parent: XmlNode | None) -> XmlNode:
    node = XmlNode(element.tag, dict(element.attrib), parent=parent)
    node.subs = [_convert(child, node) for child in element]
    return node


def parse(text: str) -> XmlNode:
    """The `<system>` element of a topology file, checked as ncclTopoXmlLoadSystem checks it
    (xml.cc:390-404)."""
    if len(text) > MAX_TOPO_BYTES:
        raise bad(f"is larger than {MAX_TOPO_BYTES / 1e6:g} MB; a topology dump is far smaller")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        line, column = e.position
        raise bad(f"is not well-formed XML at line {line}, column {column + 1}") from None
    top = _convert(root, None)
    if top.name != "system":
        raise bad(f"the root element is <{top.name}>, NCCL's topology file starts with <system>")
    version = top.int("version")
    if version != TOPO_XML_VERSION:
        raise bad(
            f'<system version="{version}">: NCCL 2.30.7 reads topology files of version '
            f"{TOPO_XML_VERSION} only (src/graph/xml.cc:393)"
        )
    if not any(s.name == "cpu" for s in top.subs):
        raise bad("<system> has no <cpu> element: nothing NCCL could place a GPU under")
    return top
