"""Bytes: what the server writes for each request, counted by the site's own handler wrapped
(`counting_handler`), by content encoding and uncompressed; the tables of a cold page's bytes and
of its requests one by one."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

from sitebuild import serve

from .harness import PAGE_BYTES, REFERENCES, kb, verdict


class Traffic:
    """Bytes the server wrote, per request, so a page's transfer is counted where it is sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[dict] = []

    def take(self) -> list[dict]:
        with self.lock:
            out, self.entries = self.entries, []
        return out


def summarize(entries: list[dict]) -> dict:
    """A page's requests: bytes written (headers included), the same with each encoded body
    counted at its file's size, and the bytes written under each content encoding."""
    by_encoding: dict[str, int] = {}
    for e in entries:
        key = e["encoding"] or "identity"
        by_encoding[key] = by_encoding.get(key, 0) + e["bytes"]
    return {
        "sent": sum(e["bytes"] for e in entries),
        "identity": sum(e["identity"] if e["encoding"] else e["bytes"] for e in entries),
        "requests": len(entries),
        "encodings": by_encoding,
    }


class CountingWriter:
    def __init__(self, raw, counter: list[int]):
        self.raw, self.counter = raw, counter

    def write(self, data) -> int:
        self.counter[0] += len(data)
        return self.raw.write(data)

    def __getattr__(self, name):
        return getattr(self.raw, name)


def counting_handler(traffic: Traffic, site: Path):
    class Counting(serve.Handler):
        def setup(self) -> None:
            super().setup()
            self.sent = [0]
            self.encoding = None
            self.wfile = CountingWriter(self.wfile, self.sent)

        def send_header(self, keyword: str, value: str) -> None:
            if keyword.lower() == "content-encoding":
                self.encoding = value
            super().send_header(keyword, value)

        def finish(self) -> None:
            super().finish()
            path = getattr(self, "path", "").split("?")[0]
            # the file itself, not the .gz (or .br) twin the handler may have sent instead
            plain = http.server.SimpleHTTPRequestHandler.translate_path
            local = Path(plain(self, path)) if path else None
            if local is not None and local.is_dir():
                local = local / "index.html"
            identity = local.stat().st_size if local is not None and local.is_file() else 0
            with traffic.lock:
                traffic.entries.append(
                    {
                        "path": path,
                        "bytes": self.sent[0],
                        "encoding": self.encoding,
                        "identity": identity,
                        "status": getattr(self, "_status", None),
                    }
                )

        def send_response(self, code, message=None) -> None:
            self._status = code
            super().send_response(code, message)

    return functools.partial(Counting, directory=str(site))


def bytes_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Requests | Transferred (compressed, kB) | Uncompressed (kB) "
        f"| By encoding (kB) | ≤ {PAGE_BYTES / 1e6:g} MB |",
        "|---|---:|---:|---:|---|---|",
    ]
    for slug, b in r["bytes"].items():
        enc = ", ".join(f"{k} {kb(v)}" for k, v in sorted(b.get("encodings", {}).items()))
        ok = "" if slug in REFERENCES else verdict(b["sent"] <= PAGE_BYTES)
        rows.append(
            f"| {titles.get(slug, slug)} | {b['requests']} | {kb(b['sent'])} "
            f"| {kb(b['identity'])} | {enc} | {ok} |"
        )
    return rows


def requests_table(r: dict) -> list[str]:
    rows = [
        "| Request | Status | Content-Encoding | Transferred (kB) | File (kB) |",
        "|---|---:|---|---:|---:|",
    ]
    entries = sorted(r["requests"]["entries"], key=lambda e: -e["bytes"])
    for e in entries:
        rows.append(
            f"| `{e['path']}` | {e['status']} | {e['encoding'] or 'identity'} "
            f"| {e['bytes'] / 1e3:,.1f} | {e['identity'] / 1e3:,.1f} |"
        )
    return rows
