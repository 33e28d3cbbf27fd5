"""What `build.py --serve` sends: Brotli or gzip twins only to those who accept them, caching
headers."""

from __future__ import annotations

import email.utils
import gzip
import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
import zipfile

import brotli
import pytest

from sitebuild import NODE
from sitebuild.python_assets import MANIFEST, worker_stamp
from sitebuild.serve import HASHED_NAME, accepts


def get(server: str, path: str, **headers: str):
    req = urllib.request.Request(server + path, headers=headers)
    try:
        with urllib.request.urlopen(req) as r:  # urllib never decompresses by itself
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def test_gzip_twin_goes_to_a_browser_that_accepts_gzip(site, server):
    status, headers, body = get(server, "/static/js/worker.js", **{"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Content-Type"] == "text/javascript"
    assert "Accept-Encoding" in headers["Vary"]
    assert int(headers["Content-Length"]) == len(body)
    assert gzip.decompress(body) == (site / "static/js/worker.js").read_bytes()


def test_brotli_twin_goes_first_to_a_browser_that_accepts_it(site, server):
    for accept in ("gzip, deflate, br, zstd", "br", "br;q=0.5, gzip"):
        status, headers, body = get(server, "/static/js/worker.js", **{"Accept-Encoding": accept})
        assert status == 200 and headers["Content-Encoding"] == "br", accept
        assert headers["Content-Type"] == "text/javascript"
        assert brotli.decompress(body) == (site / "static/js/worker.js").read_bytes()
    _, headers, body = get(server, "/static/js/worker.js", **{"Accept-Encoding": "br;q=0, gzip"})
    assert headers["Content-Encoding"] == "gzip"


@pytest.mark.parametrize("accept", [None, "identity", "gzip;q=0", "zstd", "*;q=0"])
def test_the_original_goes_to_everyone_else(site, server, accept):
    headers = {"Accept-Encoding": accept} if accept else {}
    status, got, body = get(server, "/static/js/worker.js", **headers)
    assert status == 200
    assert got["Content-Encoding"] is None
    assert body == (site / "static/js/worker.js").read_bytes()


def test_a_folder_url_gets_its_index_compressed_as_html(site, server):
    status, headers, body = get(server, "/why-allreduce/", **{"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    assert gzip.decompress(body) == (site / "why-allreduce/index.html").read_bytes()
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(server).netloc)
    conn.request("GET", "/why-allreduce", headers={"Accept-Encoding": "gzip"})
    assert conn.getresponse().status == 301  # the folder redirect still works
    conn.close()


def test_wasm_keeps_its_type_when_compressed(server):
    status, headers, _ = get(
        server, "/vendor/pyodide/pyodide.asm.wasm", **{"Accept-Encoding": "gzip"}
    )
    assert status == 200
    assert headers["Content-Type"] == "application/wasm"
    assert headers["Content-Encoding"] == "gzip"


def test_hashed_names_are_cached_for_ever_the_rest_revalidated(site, server):
    core = next((site / "py").glob("core-*.zip")).name
    assert "immutable" in get(server, f"/py/{core}")[1]["Cache-Control"]
    for path in ("/why-allreduce/index.html", "/vendor/pyodide/pyodide.asm.wasm"):
        assert get(server, path)[1]["Cache-Control"] == "no-cache"
    status, headers, _ = get(server, "/py/core-0123456789abcdef.zip")
    assert status == 404 and "immutable" not in (headers["Cache-Control"] or "")


def test_revalidation_answers_304(site, server):
    _, headers, _ = get(server, "/static/js/worker.js", **{"Accept-Encoding": "gzip"})
    since = headers["Last-Modified"]
    assert email.utils.parsedate_to_datetime(since)
    status, headers, body = get(
        server, "/static/js/worker.js", **{"Accept-Encoding": "gzip", "If-Modified-Since": since}
    )
    assert status == 304 and body == b""


@pytest.mark.parametrize(("suffix", "decompress"), [(".gz", gzip.decompress), (".br", None)])
def test_every_twin_is_its_original_compressed(site, suffix, decompress):
    decompress = decompress or brotli.decompress
    twins = list(site.rglob("*" + suffix))
    assert any(t.name == "pyodide.asm.wasm" + suffix for t in twins)
    for twin in twins:
        original = twin.with_name(twin.name[: -len(suffix)])
        assert decompress(twin.read_bytes()) == original.read_bytes(), twin


def test_brotli_pays_on_the_big_files(site):
    """The snapshot and the WebAssembly: most of a cold page's bytes."""
    for path in [*site.glob("py/snapshot-*.bin"), site / "vendor/pyodide/pyodide.asm.wasm"]:
        br, gz = (path.with_name(path.name + s).stat().st_size for s in (".br", ".gz"))
        assert br < 0.8 * gz, (path.name, br, gz)


def test_the_worker_is_told_its_python_files_and_the_lock_info(site):
    manifest = json.loads((site / MANIFEST).read_text())
    for role in ("core", "nostdlib", "snapshot", "stdlib"):
        path = site / manifest[role]
        assert path.is_file() and HASHED_NAME.search(path.name), role
    assert zipfile.ZipFile(site / manifest["nostdlib"]).namelist() == []
    assert "allreduce_explainer/bridge.pyc" in zipfile.ZipFile(site / manifest["core"]).namelist()
    lock = json.loads((NODE / "pyodide" / "pyodide-lock.json").read_text())
    assert manifest["lock"] == lock["info"]
    # the worker is told the same, less the hashes
    assert (site / "static/js/worker.js").read_text().count(worker_stamp(manifest) + "\n") == 1


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        ("gzip", True),
        ("gzip, deflate, br, zstd", True),
        ("br;q=1.0, gzip;q=0.5", True),
        ("*", True),
        ("gzip;q=0", False),
        ("gzip;q=0.0, *", False),
        ("identity", False),
        ("", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_accepts_gzip(header, ok):
    assert accepts(header, "gzip") is ok


@pytest.mark.parametrize(
    ("header", "ok"), [("gzip, deflate, br, zstd", True), ("gzip", False), ("br;q=0", False)]
)
def test_accepts_brotli(header, ok):
    assert accepts(header, "br") is ok
