"""The gzip twins: x.gz next to each file that gzip shrinks, sent to browsers that accept it."""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

from . import TOOL_CACHE

COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".wasm", ".zip", ".bin", ".svg", ".txt"}


def gzipped(data: bytes) -> bytes:
    """gzip at level 9 with no time or name in the header, so builds stay byte-identical; big
    files (Pyodide) are compressed once and cached by content, as compressing them takes seconds."""
    if len(data) < 1 << 18:
        return gzip.compress(data, compresslevel=9, mtime=0)
    cached = TOOL_CACHE / "gz" / f"{hashlib.sha256(data).hexdigest()}.gz"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        os.replace(tmp, cached)
    return cached.read_bytes()


def compress_site(site: Path) -> None:
    """Write x.gz next to every text, WebAssembly or stored-zip file that gzip shrinks by a tenth
    or more; the server sends it to browsers that accept gzip, and a host that ignores .gz files
    still serves the originals."""
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in COMPRESSIBLE:
            continue
        data = path.read_bytes()
        packed = gzipped(data)
        if len(packed) <= 0.9 * len(data):
            path.with_name(path.name + ".gz").write_bytes(packed)
