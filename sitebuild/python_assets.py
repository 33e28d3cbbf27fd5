"""The worker's Python files, made by Node tools on the shipped Pyodide, and the manifest naming
them: the standard library and the core compiled to bytecode, the memory snapshot of a Pyodide
that has booted, imported the core and called every widget, and an empty zip that stands in for
the standard library until Python asks for a module the snapshot does not hold."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

from . import CLIENT, NODE, PACKAGE, ROOT, TOOL_CACHE

FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # zip entries carry no build time, so builds are reproducible
BROWSER_EXCLUDES = {"cli", "__main__.py"}  # the worker never parses a command line
# data files the core reads (importlib.resources, pkgutil.get_data), shipped beside the .py
# files: the topology presets, which a page's server menu offers, and their searches, which the
# tuning model reads; the published logs the log panel loads and their sources; the measured
# busbw curves
CORE_DATA = (
    "*.py",
    "topology/presets/*.xml",
    "topology/presets/*.json",
    "logs/examples/*.log",
    "logs/examples/examples.json",
    "catalog/measured.json",
)
EMPTY_ZIP = b"PK\x05\x06" + bytes(18)  # a zip's end record, and nothing before it
# Tools run under Node with the shipped Pyodide: one compiles Python to bytecode (the standard
# library, the core), one writes the memory snapshot the worker restores. Their outputs are cached
# by content, as each starts Pyodide, which takes seconds.
STDLIB_TOOL = ROOT / "buildtools" / "compile_stdlib.mjs"
SNAPSHOT_TOOL = ROOT / "buildtools" / "snapshot.mjs"
# what a tool's output depends on besides the tool and its inputs: Pyodide, and the modules the
# tool imports from the site
PYODIDE_VERSION = NODE / "pyodide" / "package.json"
TOOL_DEPENDS = {
    STDLIB_TOOL: [PYODIDE_VERSION, NODE / "pyodide" / "python_stdlib.zip"],
    SNAPSHOT_TOOL: [PYODIDE_VERSION, CLIENT / "js" / "snapshot.js"],
}
# The manifest, in the site: each Python file's path by role, its SHA-256, and the `info` of
# Pyodide's lock file. Tests read it; the worker gets the part it needs stamped in (below).
MANIFEST = "py/build.json"
WORKER = "static/js/worker.js"
WORKER_STAMP = "const BUILD = null;"


def core_zip() -> bytes:
    """The core package as a deterministic zip for Pyodide to unpack into its file system: its
    modules and the data files they read (CORE_DATA)."""
    out = io.BytesIO()
    files = {
        p
        for pattern in CORE_DATA
        for p in PACKAGE.glob(pattern if "/" in pattern else f"**/{pattern}")
    }
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(files):
            name = path.relative_to(PACKAGE).as_posix()
            if name.split("/")[0] in BROWSER_EXCLUDES:
                continue
            info = zipfile.ZipInfo(f"allreduce_explainer/{name}", FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, path.read_bytes())
    return out.getvalue()


def node_tool(tool: Path, *inputs: bytes) -> bytes:
    """What a build tool writes when run under Node on the vendored Pyodide (`node tool out
    in...`), cached by the content of the tool, Pyodide and the inputs: starting Pyodide takes
    seconds, and the tools write the same bytes for the same inputs."""
    digests = [hashlib.sha256(p.read_bytes()).digest() for p in (tool, *TOOL_DEPENDS[tool])]
    digests += [hashlib.sha256(data).digest() for data in inputs]
    key = hashlib.sha256(b"".join(digests)).hexdigest()[:16]
    cached = TOOL_CACHE / f"{tool.stem}-{key}.out"
    if not cached.exists():
        node = shutil.which("node")
        if node is None:
            raise SystemExit("Node.js is missing: the build runs Pyodide with it")
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")  # other builds may run at the same time
        sources = [tmp.with_suffix(f".in{i}") for i in range(len(inputs))]
        for path, data in zip(sources, inputs):
            path.write_bytes(data)
        try:
            subprocess.run([node, str(tool), str(tmp), *map(str, sources)], cwd=ROOT, check=True)
        finally:
            for path in sources:
                path.unlink()
        os.replace(tmp, cached)
    return cached.read_bytes()


def versioned(site: Path, stem: str, data: bytes, suffix: str) -> Path:
    """Write site/py/<stem>-<hash><suffix>: the hash in the name lets browsers cache it for ever."""
    dest = site / "py" / f"{stem}-{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    for old in dest.parent.glob(f"{stem}-*{suffix}"):
        old.unlink()
    dest.write_bytes(data)
    return dest


def compiled_core() -> bytes:
    """The core's zip, its modules compiled to bytecode by the shipped Pyodide."""
    return node_tool(STDLIB_TOOL, core_zip())


def write_python(site: Path) -> dict:
    """Write the worker's Python files and the manifest (MANIFEST) that names them; return it."""
    stdlib = node_tool(STDLIB_TOOL)
    core = compiled_core()
    snapshot = node_tool(SNAPSHOT_TOOL, stdlib, core)
    contents = {"nostdlib": EMPTY_ZIP, "stdlib": stdlib, "core": core, "snapshot": snapshot}
    suffixes = {"snapshot": ".bin"}
    files = {
        role: versioned(site, role, data, suffixes.get(role, ".zip")).relative_to(site).as_posix()
        for role, data in contents.items()
    }
    lock = json.loads((NODE / "pyodide" / "pyodide-lock.json").read_text())
    manifest = {
        **files,
        "lock": lock["info"],
        "sha256": {role: hashlib.sha256(data).hexdigest() for role, data in contents.items()},
        "bytes": {role: len(data) for role, data in contents.items()},
    }
    (site / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def worker_stamp(manifest: dict) -> str:
    """The line that tells the worker its files, their sizes (a file that arrives shorter was cut
    short on the way) and the lock's info, in place of WORKER_STAMP."""
    build = {k: v for k, v in manifest.items() if k != "sha256"}
    return f"const BUILD = {json.dumps(build, sort_keys=True)};"


def stamp_worker(site: Path, manifest: dict) -> None:
    """Fill in the copied worker's manifest, so that it starts booting as soon as it is loaded,
    fetching neither the manifest, the .py standard library nor the lock file."""
    worker = site / WORKER
    text = worker.read_text()
    if text.count(WORKER_STAMP) != 1:
        raise SystemExit(f"{worker}: expected one line {WORKER_STAMP!r} to fill in")
    worker.write_text(text.replace(WORKER_STAMP, worker_stamp(manifest)))
