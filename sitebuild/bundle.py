"""A live page's scripts, bundled by esbuild from client/js's ES modules: one file for the <head>
(boot.js: it starts the worker), one deferred file for the rest (start.js and what it imports),
each a classic script (IIFE: a page opened from file:// or served by a course platform runs no
module script) named by its content, so browsers cache it for ever. The worker (worker.js, with
protocol.js and snapshot.js, which it imports) and the two small head scripts a template names
(theme.js, print.js) stay files of their own; client/js's other modules are only in the bundles,
and testing.js (the test entry) is in none of the site's files.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from allreduce_explainer.notebook.assets import bundle

ENTRIES = {"head": "boot.js", "page": "start.js"}  # in the order they run
OWN = ("worker.js", "protocol.js", "snapshot.js", "theme.js", "print.js")
TEST_ENTRY = "testing.js"


@cache
def bundles() -> dict[str, tuple[str, bytes]]:
    """{"head" | "page": (its path in the site, its bytes)}."""
    out = {}
    for role, entry in ENTRIES.items():
        data = bundle(entry, "iife")
        digest = hashlib.sha256(data).hexdigest()[:16]
        out[role] = (f"static/js/{role}-{digest}.js", data)
    return out


def write_bundles(site: Path) -> None:
    """The bundles, in place of the modules they hold (site/static/js is a copy of client/js)."""
    for path in (site / "static" / "js").iterdir():
        if path.name not in OWN:
            path.unlink()
    for path, data in bundles().values():
        (site / path).write_bytes(data)
