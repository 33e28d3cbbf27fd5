"""A PNG re-encoded smaller with the standard library alone.

Chromium writes its screenshots as RGB(A) with fast compression. A widget's picture is opaque and
mostly flat colour: a few hundred colours cover nearly every pixel, the rest are the anti-aliased
edges of text and lines. So it is re-encoded as an 8-bit palette (a third of the bytes before
compression): the 256 most frequent colours are kept and every other pixel takes the nearest of
them (lossy only at those edges; `encode(..., lossless=True)` keeps RGB instead), deflated at
level 9. Only what Chromium writes is read: 8-bit RGB or RGBA, not interlaced.
"""

from __future__ import annotations

import struct
import zlib
from collections import Counter

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel (8-bit RGB, RGBA)


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The file's chunks as (type, body)."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    out, i = [], len(SIGNATURE)
    while i < len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        out.append((data[i + 4 : i + 8], data[i + 8 : i + 8 + n]))
        i += 12 + n
    return out


def size(data: bytes) -> tuple[int, int]:
    """(width, height) from the header."""
    kind, body = chunks(data)[0]
    if kind != b"IHDR":
        raise ValueError("a PNG starts with IHDR")
    return struct.unpack(">II", body[:8])


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _unfilter(kind: int, line: bytearray, prev: bytes, bpp: int) -> bytearray:
    if kind == 1:
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 255
    elif kind == 2:
        line = bytearray((x + y) & 255 for x, y in zip(line, prev))
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
    elif kind == 4:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            up_left = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 255
    elif kind != 0:
        raise ValueError(f"unknown PNG filter {kind}")
    return line


def decode(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """(width, height, bytes per pixel, rows of raw pixels)."""
    parts = chunks(data)
    w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError("only 8-bit RGB or RGBA, not interlaced, is read")
    bpp = CHANNELS[colour]
    raw = zlib.decompress(b"".join(body for kind, body in parts if kind == b"IDAT"))
    stride = w * bpp
    rows, prev = [], bytes(stride)
    for y in range(h):
        start = y * (stride + 1)
        line = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), prev, bpp)
        rows.append(bytes(line))
        prev = rows[-1]
    return w, h, bpp, rows


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _filtered(line: bytes, prev: bytes, bpp: int) -> bytes:
    """The row with filter None, Sub or Up, whichever's bytes (as signed) sum smallest."""
    sub = bytes((x - y) & 255 for x, y in zip(line, bytes(bpp) + line[:-bpp]))
    up = bytes((x - y) & 255 for x, y in zip(line, prev))
    options = [(0, line), (1, sub), (2, up)]

    def cost(option: tuple[int, bytes]) -> int:
        return sum(b if b < 128 else 256 - b for b in option[1])

    kind, body = min(options, key=cost)
    return bytes([kind]) + body


def palette(counts: Counter) -> tuple[list[bytes], dict[bytes, int]]:
    """A palette of the 256 most frequent colours (ties by colour, so the result is
    deterministic), and each colour's index in it: a rarer colour's is its nearest kept one's."""
    ranked = sorted(counts, key=lambda c: (-counts[c], c))
    kept = sorted(ranked[:256])
    index = {c: i for i, c in enumerate(kept)}
    for c in ranked[256:]:
        near = min(kept, key=lambda k: sum((x - y) ** 2 for x, y in zip(c[:3], k[:3])))
        index[c] = index[near]
    return kept, index


def encode(w: int, h: int, bpp: int, rows: list[bytes], lossless: bool = False) -> bytes:
    """These pixels as a palette PNG (or RGB/RGBA if `lossless` and they have too many colours,
    or any pixel is not opaque)."""
    pixels = [[row[i : i + bpp] for i in range(0, len(row), bpp)] for row in rows]
    opaque = bpp == 3 or all(p[3] == 255 for row in pixels for p in row)
    counts = Counter(p for row in pixels for p in row)
    if opaque and (len(counts) <= 256 or not lossless):
        colours, index = palette(counts)
        body = b"".join(b"\x00" + bytes(index[p] for p in row) for row in pixels)
        head = struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)
        extra = _chunk(b"PLTE", b"".join(c[:3] for c in colours))
    else:
        out_bpp = 3 if opaque else 4
        lines = [b"".join(p[:out_bpp] for p in row) for row in pixels]
        prev, parts = bytes(w * out_bpp), []
        for line in lines:
            parts.append(_filtered(line, prev, out_bpp))
            prev = line
        body = b"".join(parts)
        head = struct.pack(">IIBBBBB", w, h, 8, 2 if opaque else 6, 0, 0, 0)
        extra = b""
    return (
        SIGNATURE
        + _chunk(b"IHDR", head)
        + extra
        + _chunk(b"IDAT", zlib.compress(body, 9))
        + _chunk(b"IEND", b"")
    )


def smaller(data: bytes) -> bytes:
    """The PNG re-encoded, or as it was if that is not smaller."""
    out = encode(*decode(data))
    return out if len(out) < len(data) else data
