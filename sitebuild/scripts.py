"""A live page's scripts, bundled: one file for the <head> (it starts the worker), one deferred
file for the rest, each named by its content. Twenty requests become two, so a page's steppers
and controls answer sooner, and the names let browsers cache the bundles for ever."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from . import CLIENT

# In the order they run. Each file is an IIFE; protocol.js is also the worker's module.
HEAD = ("protocol.js", "boot.js")
PAGE = (
    "python.js",
    "widget.js",
    "stored.js",
    "urlstate.js",
    "copytools.js",
    "embedheight.js",
    "diagram.js",
    "stepper.js",
    "chart.js",
    "exercise.js",
    "sheet.js",
    "download.js",
    "logpanel.js",
    "navigate.js",
    "start.js",
    "present.js",
)


@cache
def bundles() -> dict[str, tuple[str, bytes]]:
    """{"head" | "page": (its path in the site, its bytes)}."""
    out = {}
    for role, names in (("head", HEAD), ("page", PAGE)):
        data = b"\n;\n".join((CLIENT / "js" / n).read_bytes() for n in names)
        digest = hashlib.sha256(data).hexdigest()[:16]
        out[role] = (f"static/js/{role}-{digest}.js", data)
    return out


WORKER_IMPORTS = {"protocol.js"}  # kept as a file of its own too: the worker imports it


def write_bundles(site: Path) -> None:
    """The bundles, in place of the files they hold (site/static/js is a copy of client/js)."""
    for path, data in bundles().values():
        (site / path).write_bytes(data)
    for name in set(HEAD + PAGE) - WORKER_IMPORTS:
        (site / "static" / "js" / name).unlink()
