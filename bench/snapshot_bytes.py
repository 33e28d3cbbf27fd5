"""The site's Python snapshot against the bare one, in bytes: what every cold page downloads for
Python above a Pyodide restored from a snapshot that imported nothing of ours (the floor of
bench/site.py). Both are made by the build's own tool (buildtools/snapshot.mjs, through
sitebuild.python_assets, cached by content) and compressed as the build compresses them
(sitebuild.compress: Brotli at quality 11, which takes a minute or two for each the first time).

    .venv/bin/python bench/snapshot_bytes.py

A page's other parts (Pyodide's WebAssembly and scripts, the same for both; Plotly on chart pages;
the HTML, scripts and styles) are in bench/site.py's table of a cold visit's requests."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitebuild import compress, python_assets  # noqa: E402


def figures(snapshot: bytes) -> dict:
    """A packed snapshot's memory, its stored pages and its sizes before and after Brotli."""
    _, memory, pages = struct.unpack_from("<III", snapshot)
    return {
        "memory": memory,
        "pages": pages,
        "packed": len(snapshot),
        "br": len(compress.compressed(snapshot, ".br")),
    }


def main() -> None:
    stdlib = python_assets.node_tool(python_assets.STDLIB_TOOL)
    bare = figures(python_assets.node_tool(python_assets.SNAPSHOT_TOOL, stdlib))
    core = python_assets.compiled_core()
    site = figures(python_assets.node_tool(python_assets.SNAPSHOT_TOOL, stdlib, core))
    print("| Snapshot | 64 KiB pages stored | Packed (kB) | Brotli q11 (kB) |")
    print("|---|---:|---:|---:|")
    for label, f in (("bare (the floor)", bare), ("the site's", site)):
        print(f"| {label} | {f['pages']} | {f['packed'] / 1e3:,.0f} | {f['br'] / 1e3:,.0f} |")
    above = (site["br"] - bare["br"]) / 1e3
    print(f"\nThe site's snapshot above the bare one: {above:,.0f} kB with Brotli.")


if __name__ == "__main__":
    main()
