"""The development server: site/ on 127.0.0.1, with the MIME types Pyodide needs, the build's
Brotli and gzip twins and caching headers."""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import threading
from pathlib import Path

from . import CSP

HASHED_NAME = re.compile(r"-[0-9a-f]{16}\.\w+$")  # core-<hash>.zip, snapshot-<hash>.bin, …
IMMUTABLE = "public, max-age=31536000, immutable"


def accepts(header: str, coding: str) -> bool:
    """Whether an Accept-Encoding header allows `coding` (named, or `*`, with a q-value over 0)."""
    codings = {}
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        codings[name.strip().lower()] = q
    return codings.get(coding, codings.get("*", 0.0)) > 0


TWINS = (("br", ".br"), ("gzip", ".gz"))  # content coding, twin's suffix: the first accepted goes


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs (.wasm, .mjs), the build's .br or .gz twin
    to browsers that accept Brotli or gzip, and caching headers: for ever for content-hashed
    names, else revalidate (304) on every use, as a rebuilt page or a new Pyodide keeps its name."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
    }

    twin: tuple[str, str] | None = None  # (coding, suffix) of the twin being sent
    twin_type: str | None = None  # the original's type, while its twin is sent
    vary = False
    immutable = False

    def send_head(self):
        self.twin, self.twin_type, self.vary = None, None, False
        url_path = self.path.split("?", 1)[0].split("#", 1)[0]
        local = Path(super().translate_path(self.path))
        if local.is_dir() and url_path.endswith("/"):
            local = local / "index.html"
        self.immutable = local.is_file() and bool(HASHED_NAME.search(local.name))
        accept = self.headers.get("Accept-Encoding", "")
        for coding, suffix in TWINS:
            if local.is_file() and local.with_name(local.name + suffix).is_file():
                self.vary = True
                if self.twin is None and accepts(accept, coding):
                    self.twin, self.twin_type = (coding, suffix), super().guess_type(str(local))
        return super().send_head()

    def translate_path(self, path: str) -> str:
        local = super().translate_path(path)
        if self.twin is None:
            return local
        if Path(local).is_dir():
            local = str(Path(local) / "index.html")
        return local + self.twin[1]

    def guess_type(self, path) -> str:
        return self.twin_type or super().guess_type(path)

    def end_headers(self) -> None:
        # The pages carry the policy in a <meta> tag too; a header is what applies to the worker.
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", IMMUTABLE if self.immutable else "no-cache")
        if self.twin is not None:
            self.send_header("Content-Encoding", self.twin[0])
        if self.vary:
            self.send_header("Vary", "Accept-Encoding")
        super().end_headers()

    def copyfile(self, source, outputfile) -> None:
        # the browser went away mid-file: not our error, and not worth a traceback
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            super().copyfile(source, outputfile)

    def log_message(self, format: str, *args) -> None:  # quiet, but for errors
        if len(args) > 1 and str(args[1]).startswith(("4", "5")):
            super().log_message(format, *args)


def server(site: Path, port: int = 0, handler: type = Handler) -> http.server.ThreadingHTTPServer:
    """A server for site/ on 127.0.0.1 only (a classroom laptop needs no network); port 0: any."""
    bound = functools.partial(handler, directory=str(site))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), bound)


def in_background(site: Path, handler: type = Handler) -> tuple[str, http.server.HTTPServer]:
    """Serve site/ from a daemon thread on a free port, for tests and benchmarks: its base URL,
    and the server (to `shutdown()`)."""
    httpd = server(site, 0, handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}", httpd


def serve(site: Path, port: int) -> None:
    """Serve site/ until Ctrl-C."""
    with server(site, port) as httpd:
        print(f"Serving {site} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            httpd.serve_forever()
