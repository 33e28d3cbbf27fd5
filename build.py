"""Build the explainer into site/ (and serve it on 127.0.0.1 with --serve).

Pages come from content/*.md (front matter and prose) and templates/ (Jinja2). Every widget's
default state is computed here by the same Python function that the browser's worker runs later,
and inlined, so a page reads, steps and draws before Python has started in the browser.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "src"))

import frontmatter  # noqa: E402
import jinja2  # noqa: E402
import latex2mathml.converter  # noqa: E402
import markdown  # noqa: E402

from allreduce_explainer import facts, palette, widgets  # noqa: E402

PACKAGE = ROOT / "src" / "allreduce_explainer"
CONTENT = ROOT / "content"
TEMPLATES = ROOT / "templates"
NODE = ROOT / "node_modules"
SITE = ROOT / "site"
FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # zip entries carry no build time, so builds are reproducible
BROWSER_EXCLUDES = {"cli.py", "__main__.py"}  # the worker never parses a command line
PYODIDE_FILES = [
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
]
PLOTLY = "plotly.js-basic-dist-min/plotly-basic.min.js"
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
    SNAPSHOT_TOOL: [PYODIDE_VERSION, TEMPLATES / "static" / "js" / "snapshot.mjs"],
}
TOOL_CACHE = NODE / ".cache" / "allreduce-explainer"
WORKER_STAMP = "const BUILD = null;"
EMPTY_ZIP = b"PK\x05\x06" + bytes(18)  # a zip's end record, and nothing before it
COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".wasm", ".zip", ".bin", ".svg", ".txt"}
HASHED_NAME = re.compile(r"-[0-9a-f]{16}\.\w+$")  # core-<hash>.zip, snapshot-<hash>.bin, …
IMMUTABLE = "public, max-age=31536000, immutable"
# Scripts only from the site itself, plus WebAssembly compilation for Pyodide. Inline styles are
# allowed because Plotly.js writes its own <style> element and style attributes on its SVG.
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'"
)
EXTRA_ORDER = 90  # pages ordered from 90 up are not stages (course use, further reading)
WIDGET_CALL = re.compile(r"""widget\(\s*["'](\w+)["']\s*\)""")
MARKDOWN_EXTENSIONS = [
    "tables",
    "footnotes",
    "attr_list",
    "def_list",
    "toc",
    "fenced_code",
    "md_in_html",
]


def core_zip() -> bytes:
    """The core package as a deterministic zip for Pyodide to unpack into its file system."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(PACKAGE.rglob("*.py")):
            if path.name in BROWSER_EXCLUDES:
                continue
            name = path.relative_to(PACKAGE).as_posix()
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


def write_python(site: Path) -> dict[str, str]:
    """The worker's Python files, made by the shipped Pyodide so the browser compiles and imports
    nothing: the standard library and the core as bytecode, the memory snapshot of a Pyodide that
    has booted, imported the core and called every widget, and the empty zip that stands in for
    the standard library until Python asks for a module it has not loaded. Returns their paths in
    the site, by role."""
    stdlib = node_tool(STDLIB_TOOL)
    core = compiled_core()
    snapshot = node_tool(SNAPSHOT_TOOL, stdlib, core)
    files = {
        "nostdlib": versioned(site, "nostdlib", EMPTY_ZIP, ".zip"),
        "stdlib": versioned(site, "stdlib", stdlib, ".zip"),
        "core": versioned(site, "core", core, ".zip"),
        "snapshot": versioned(site, "snapshot", snapshot, ".bin"),
    }
    return {role: path.relative_to(site).as_posix() for role, path in files.items()}


def stamp_worker(site: Path, files: dict[str, str]) -> None:
    """Tell the copied worker the names of its files and the lock's info: it starts booting as
    soon as it is loaded, fetching neither the .py stdlib nor the lock file."""
    lock = json.loads((NODE / "pyodide" / "pyodide-lock.json").read_text())
    build = {**files, "lock": lock["info"]}
    worker = site / "static" / "js" / "worker.mjs"
    text = worker.read_text()
    if text.count(WORKER_STAMP) != 1:
        raise SystemExit(f"{worker}: expected one line {WORKER_STAMP!r} to fill in")
    stamp = f"const BUILD = {json.dumps(build, sort_keys=True)};"
    worker.write_text(text.replace(WORKER_STAMP, stamp))


def write_manifest(folder: Path) -> None:
    """SHA256SUMS of every vendored file, in `sha256sum -c` format, to check what is shipped."""
    lines = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(folder).as_posix()}\n"
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "SHA256SUMS"
    ]
    (folder / "SHA256SUMS").write_text("".join(lines))


class Stash:
    """Holds finished HTML (MathML, widgets) out of Markdown's reach, behind plain tokens."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def put(self, fragment: str) -> str:
        self.items.append(fragment)
        return f"STASH{len(self.items) - 1}X"

    def restore(self, text: str) -> str:
        text = re.sub(r"<p>\s*(STASH\d+X)\s*</p>", r"\1", text)
        return re.sub(r"STASH(\d+)X", lambda m: self.items[int(m.group(1))], text)


MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def math_to_mathml(text: str, stash: Stash) -> str:
    """$...$ and $$...$$ become MathML at build time: no math library is downloaded."""

    def convert(m: re.Match) -> str:
        display = m.group(1) is not None
        tex = m.group(1) if display else m.group(2)
        mathml = latex2mathml.converter.convert(
            tex.strip(), display="block" if display else "inline"
        )
        if display:  # a wide formula scrolls in its own box, which keyboards can reach
            mathml = f'<div class="formula" tabindex="0">{mathml}</div>'
        return stash.put(mathml)

    return MATH.sub(convert, text)


def load_pages() -> list[dict]:
    pages = []
    for path in sorted(CONTENT.glob("*.md")):
        post = frontmatter.load(path)
        meta = dict(post.metadata)
        for key in ("title", "slug", "order"):
            if key not in meta:
                raise SystemExit(f"{path}: front matter needs {key!r}")
        pages.append({**meta, "source": post.content, "path": path})
    pages.sort(key=lambda p: p["order"])
    return pages


def state_json(state: dict) -> str:
    """JSON for an inline <script type="application/json">: nothing in it can close the tag."""
    text = json.dumps(state, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def widget_docs(pages: list[dict]) -> list[dict]:
    """Every widget, the page it is on and its URL parameters with their defaults (a contract),
    from its spec; a stepper's URL also takes `step`."""
    docs = []
    for page in pages:
        for name in WIDGET_CALL.findall(page["source"]):
            spec = widgets.SPECS[name]
            stepper = widgets.WIDGETS[name]()["kind"] == "stepper"
            params = {k: p.default for k, p in spec.items()}
            docs.append({"name": name, "page": page, "params": params, "stepper": stepper})
    return docs


class Builder:
    def __init__(self, site: Path):
        self.site = site
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=jinja2.select_autoescape(["html"]),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals["embed"] = False
        self.env.globals["csp"] = CSP
        self.facts = facts.all_facts()
        self.assets: dict[str, str] = {}

    def widget_html(self, name: str, state: dict, base: str) -> str:
        return self.env.get_template(f"widgets/{name}.html").render(
            name=name,
            spec=widgets.SPECS[name],
            state=state,
            state_json=state_json(state),
            base=base,
        )

    def render_prose(self, page: dict, base: str) -> tuple[str, list[tuple[str, dict]]]:
        """The page's HTML, and the default state of every widget placed in it."""
        stash, states = Stash(), []

        def widget(name: str) -> str:
            if name not in widgets.WIDGETS:
                raise SystemExit(f"{page['path']}: unknown widget {name!r}")
            states.append((name, widgets.WIDGETS[name]()))
            return stash.put(self.widget_html(name, states[-1][1], base))

        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
        text = env.from_string(page["source"]).render(
            f=self.facts, widget=widget, widget_docs=self.widget_docs
        )
        text = math_to_mathml(text, stash)
        body = markdown.markdown(text, extensions=MARKDOWN_EXTENSIONS, output_format="html")
        # a wide table scrolls in its own box, which keyboards can reach (widgets are stashed)
        body = body.replace("<table>", '<div class="table-scroll" tabindex="0"><table>')
        body = body.replace("</table>", "</table></div>").replace("<pre>", '<pre tabindex="0">')
        return stash.restore(body), states

    def copy_static(self) -> None:
        dest = self.site / "static"
        shutil.copytree(TEMPLATES / "static", dest)
        (dest / "gpu-colours.css").write_text(
            ":root {\n"
            + "".join(f"  --gpu-{i}: {c};\n" for i, c in enumerate(palette.GPU_COLOURS))
            + "}\n"
        )

    def copy_vendor(self) -> None:
        missing = [f for f in PYODIDE_FILES if not (NODE / "pyodide" / f).exists()]
        if missing or not (NODE / PLOTLY).exists():
            raise SystemExit("node_modules is missing pyodide or plotly.js: run `npm ci` first")
        for f in PYODIDE_FILES:
            dest = self.site / "vendor" / "pyodide" / f
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(NODE / "pyodide" / f, dest)
        shutil.copyfile(NODE / PLOTLY, self.site / "vendor" / "plotly-basic.min.js")
        write_manifest(self.site / "vendor")

    def write_embeds(self, page: dict, states: list[tuple[str, dict]], core: str) -> None:
        """site/embed/<widget>/: the widget alone, for a course page's iframe."""
        base = "../../"
        for name, state in states:
            out = self.env.get_template("embed.html").render(
                page=page,
                base=base,
                core=core,
                live=True,
                embed=True,
                stages=[],
                charts=state["kind"] == "chart",
                widget=self.widget_html(name, state, base),
            )
            dest = self.site / "embed" / name / "index.html"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(out, encoding="utf-8")

    def build(self) -> None:
        if self.site.exists():
            shutil.rmtree(self.site)
        self.site.mkdir(parents=True)
        self.copy_static()
        self.copy_vendor()
        python = write_python(self.site)
        stamp_worker(self.site, python)
        core = python["core"]
        pages = load_pages()
        stages = [p for p in pages if p["order"] < EXTRA_ORDER]
        self.widget_docs = widget_docs(pages)
        for page in pages:
            base = "../"
            body, states = self.render_prose(page, base)
            charts = any(s["kind"] == "chart" for _, s in states)
            in_stages = page in stages
            index = stages.index(page) if in_stages else None
            out = self.env.get_template("page.html").render(
                page=page,
                body=body,
                base=base,
                pages=pages,
                stages=stages,
                core=core,
                charts=charts,
                live=bool(states),
                prev=stages[index - 1] if in_stages and index > 0 else None,
                next=stages[index + 1] if in_stages and index + 1 < len(stages) else None,
            )
            self.write_embeds(page, states, core)
            dest = self.site / page["slug"] / "index.html"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(out, encoding="utf-8")
        home = self.env.get_template("home.html").render(
            base="",
            pages=pages,
            stages=stages,
            core=core,
            charts=False,
            live=False,
            page={"title": "All-reduce, explained", "slug": "", "summary": ""},
        )
        (self.site / "index.html").write_text(home, encoding="utf-8")
        compress_site(self.site)


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
    or more; the handler sends it to browsers that accept gzip, and a host that ignores .gz files
    still serves the originals."""
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in COMPRESSIBLE:
            continue
        data = path.read_bytes()
        packed = gzipped(data)
        if len(packed) <= 0.9 * len(data):
            path.with_name(path.name + ".gz").write_bytes(packed)


def accepts_gzip(header: str) -> bool:
    """Whether an Accept-Encoding header allows gzip (`gzip`, or `*`, with a q-value above 0)."""
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
    return codings.get("gzip", codings.get("*", 0.0)) > 0


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs (.wasm, .mjs), the build's .gz twins to
    browsers that accept gzip, and caching headers: for ever for content-hashed names, else
    revalidate (304) on every use, as a rebuilt page or a new Pyodide keeps its name."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
    }

    gz_type: str | None = None  # the original's type while its .gz twin is being sent
    vary = False
    immutable = False

    def send_head(self):
        self.gz_type, self.vary = None, False
        url_path = self.path.split("?", 1)[0].split("#", 1)[0]
        local = Path(super().translate_path(self.path))
        if local.is_dir() and url_path.endswith("/"):
            local = local / "index.html"
        self.immutable = local.is_file() and bool(HASHED_NAME.search(local.name))
        twin = local.with_name(local.name + ".gz")
        if local.is_file() and twin.is_file():
            self.vary = True
            if accepts_gzip(self.headers.get("Accept-Encoding", "")):
                self.gz_type = super().guess_type(str(local))
        return super().send_head()

    def translate_path(self, path: str) -> str:
        local = super().translate_path(path)
        if self.gz_type is None:
            return local
        if Path(local).is_dir():
            local = str(Path(local) / "index.html")
        return local + ".gz"

    def guess_type(self, path) -> str:
        return self.gz_type or super().guess_type(path)

    def end_headers(self) -> None:
        # The pages carry the policy in a <meta> tag too; a header is what applies to the worker.
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", IMMUTABLE if self.immutable else "no-cache")
        if self.gz_type is not None:
            self.send_header("Content-Encoding", "gzip")
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


def serve(site: Path, port: int) -> None:
    """Serve site/ on 127.0.0.1 only: a classroom laptop needs no network."""
    handler = functools.partial(Handler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"Serving {site} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            httpd.serve_forever()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serve", action="store_true", help="serve the site after building it")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--out", type=Path, default=SITE, help="output folder (default site/)")
    a = ap.parse_args(argv)
    Builder(a.out).build()
    print(f"Built {a.out}")
    if a.serve:
        serve(a.out, a.port)


if __name__ == "__main__":
    main()
