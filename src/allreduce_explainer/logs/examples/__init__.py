"""Published all_reduce_perf logs that your-cluster's log panel can load, so that a class without
a cluster can do the lab path (one with the job's NCCL_DEBUG=INFO lines, so the reader of rings,
trees and the network has a real log too): each is a file of this folder, `<key>.log`, a verbatim
copy of a log of tests/data/; examples.json lists them in the menu's order with the menu's label,
the copy's name in tests/data/ and its source (the url and what was kept, as SOURCES.json there).

They are data files read by the package's loader (pkgutil.get_data), which finds them in a source
checkout, in the wheel and in the site's core zip (sitebuild/python_assets.py's CORE_DATA); not by
importlib.resources.files, whose zip reader opens the whole core zip again, which grew the site's
memory snapshot past what Pyodide restores (tests/pyodide). They are read once, on import: the
site's worker restores a memory snapshot of the imported core and fetches the core's zip only for
a module the snapshot lacks, never for a data file.
"""

from __future__ import annotations

import json
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """One published log: the menu's label, where it came from, and its text."""

    key: str  # the widget's `example` parameter, in the URL
    label: str
    file: str  # its copy in tests/data/
    source: str
    url: str
    where: str  # what of the published log was kept
    text: str


def _data(name: str) -> str:
    """A file of this folder, by its package's loader (a file, a wheel's, the core zip's)."""
    return pkgutil.get_data(__package__, name).decode("utf-8")


def _read() -> dict[str, Example]:
    """examples.json's entries, each with its log's text, in the file's order."""
    return {
        e["key"]: Example(**e, text=_data(f"{e['key']}.log"))
        for e in json.loads(_data("examples.json"))
    }


EXAMPLES = _read()  # key -> example, in the menu's order
TEXTS = frozenset(e.text for e in EXAMPLES.values())


def text(key: str) -> str:
    """The log of example `key`."""
    return EXAMPLES[key].text
