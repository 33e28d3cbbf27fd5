"""The compressed twins: x.br (Brotli) and x.gz (gzip) next to each file they shrink, sent to
browsers that accept them (`serve.py`), as static hosts that serve precompressed files do."""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import brotli

from . import TOOL_CACHE

COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".wasm", ".zip", ".bin", ".svg", ".txt"}
PAYS = 0.9  # a twin is written if it is at most this share of the original


def _gzip(data: bytes) -> bytes:
    """Level 9, no time or name in the header, so builds stay byte-identical."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def _brotli(data: bytes) -> bytes:
    """Brotli's best (quality 11) with a 16 MB window, the most a browser accepts: the snapshot
    and Pyodide's WebAssembly come out 30 % smaller than gzip's."""
    return brotli.compress(data, quality=11, lgwin=24)


CODINGS: dict[str, Callable[[bytes], bytes]] = {".br": _brotli, ".gz": _gzip}


def compressed(data: bytes, suffix: str) -> bytes:
    """`data` compressed for the twin x<suffix>; big files (Pyodide, the snapshot) are compressed
    once and cached by content, as that takes seconds to a minute."""
    if len(data) < 1 << 18:
        return CODINGS[suffix](data)
    cached = TOOL_CACHE / suffix[1:] / f"{hashlib.sha256(data).hexdigest()}{suffix}"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(CODINGS[suffix](data))
        os.replace(tmp, cached)
    return cached.read_bytes()


def compress_site(site: Path) -> None:
    """Write x.br and x.gz next to every text, WebAssembly or stored-zip file that they shrink by
    a tenth or more; a host that ignores them still serves the originals."""
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in COMPRESSIBLE:
            continue
        compress_file(path)


def compress_file(path: Path) -> None:
    """Write (or rewrite) the twins of the file `path` that shrink it by a tenth or more."""
    data = path.read_bytes()
    for suffix in CODINGS:
        packed = compressed(data, suffix)
        twin = path.with_name(path.name + suffix)
        if len(packed) <= PAYS * len(data):
            twin.write_bytes(packed)
        else:
            twin.unlink(missing_ok=True)
