"""The bundles' order comes from each client/js file's first line (sitebuild/scripts.py): every
file runs somewhere, each after what it needs, and the lines say what the code does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitebuild import CLIENT, ROOT, TEMPLATES
from sitebuild.scripts import HEAD, PAGE, bundle_order

JS = CLIENT / "js"
FILES = sorted(p for p in JS.iterdir() if p.suffix in (".js", ".mjs"))
# an assignment to a name on AE or to an AE global (AEProtocol), wherever it is made from
ASSIGN = re.compile(r"(?<![\w.])(?:(?:window|self|scope)\.)?(AE\w*(?:\.\w+)*)\s*=(?![=>])(.*)")
READ = re.compile(r"\bAE(?:\.\w+|[A-Z]\w*)")


def header(path: Path) -> dict[str, list[str]]:
    """The first line's groups, read here on their own: {"bundle": [...], "needs": [...], ...}."""
    line = path.read_text(encoding="utf-8").split("\n", 1)[0]
    assert line.startswith("// bundle: "), path
    return {
        key: value.split()
        for key, value in re.findall(r"([a-z-]+): (.*?)(?=\s+[a-z-]+: |$)", line[3:])
    }


def code(path: Path) -> str:
    """A file without its comments (the prose names AE's fields freely)."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"))
    return "\n".join(re.sub(r"(^|\s)//.*", "", line) for line in text.splitlines())


def assigned(path: Path) -> set[str]:
    """The names the file sets; `AE.views = AE.views || {}` only makes sure the namespace is."""
    return {
        name
        for name, rest in ASSIGN.findall(code(path))
        if name != "AE" and not rest.strip().startswith(f"{name} ||")
    }


def test_every_file_runs_from_a_bundle_a_page_or_a_loader():
    """Loaded, found without the first lines: in a bundle, named by a template's <script> or a
    script's worker, or imported by a module."""
    texts = [p.read_text(encoding="utf-8") for p in [*TEMPLATES.rglob("*.html"), *FILES]]
    texts += [p.read_text(encoding="utf-8") for p in (ROOT / "buildtools").glob("*.mjs")]
    named = {m for t in texts for m in re.findall(r"static/js/([\w.]+)", t)}
    imported = {m for t in texts for m in re.findall(r"""import [^;]*?["']\./([\w.]+)["']""", t)}
    for p in FILES:
        assert p.name in {*HEAD, *PAGE} | named | imported, f"{p.name}: nothing loads it"
    assert not set(HEAD) & set(PAGE)


def test_each_file_runs_after_what_it_needs():
    """Head, then page: every need is provided by a file that ran before it; the entry point
    ("*") runs after every other file of its bundle but those that need what it builds."""
    provides = {p.name: header(p).get("provides", []) for p in FILES}
    needs = {p.name: header(p).get("needs", []) for p in FILES}
    order = [*HEAD, *PAGE]
    for i, name in enumerate(order):
        earlier = order[:i]
        for need in needs[name]:
            if need == "*":
                continue
            givers = [
                n for n, ps in provides.items() if any(re.match(rf"{need}(\.|$)", p) for p in ps)
            ]
            assert givers and set(givers) <= set(earlier), (name, need)
    start = [n for n in PAGE if "*" in needs[n]]
    assert start == ["start.js"]
    built = set(provides["start.js"])
    for n in PAGE[PAGE.index("start.js") + 1 :]:
        assert set(needs[n]) & built, f"{n} runs after start.js and needs nothing of it"
    # projector mode links back to the widget by the id its copy tools give it as it is built
    assert PAGE.index("present.js") > PAGE.index("start.js")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_first_line_says_what_the_file_sets(path):
    """Its provides are what it assigns; a name it sets but does not provide (python.js empties
    AE.early, which boot.js provides) is one it declares as needed or used."""
    h = header(path)
    declared = set(h.get("needs", []) + h.get("uses", []))
    assert assigned(path) - declared == set(h.get("provides", []))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_first_line_names_everything_the_file_reads(path):
    h = header(path)
    names = h.get("provides", []) + h.get("needs", []) + h.get("uses", [])
    for read in set(READ.findall(code(path))):
        assert any(n == read or n.startswith(read + ".") for n in names), read


def test_the_headers_are_read_by_the_test_as_by_the_build():
    assert header(JS / "stepper.js") == {
        "bundle": ["page"],
        "provides": ["AE.views.stepper", "AE.formatValue"],
        "uses": ["AE.bench", "AE.diagram"],
    }


# A small client/js of its own, for what the build makes of declarations.
BASE = {
    "core.js": "// bundle: head  provides: AE.core",
    "start.js": "// bundle: page  provides: AE.widgets  needs: AE.core *",
    "after.js": "// bundle: page  needs: AE.widgets",
    "chart.js": "// bundle: page  provides: AE.views.chart  needs: AE.core  uses: AE.widgets",
    "theme.js": "// bundle: none  loaded-by: templates/base.html",
}


def tree(tmp_path: Path, extra: dict[str, str]) -> Path:
    js = tmp_path / "client" / "js"
    js.mkdir(parents=True)
    for name, first in {**BASE, **extra}.items():
        (js / name).write_text(first + "\n(function () {})();\n")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text('<script src="static/js/theme.js"></script>')
    return js


def test_a_new_view_is_one_file(tmp_path):
    """Whatever its name, a view runs before the entry point that builds the widgets."""
    js = tree(tmp_path, {"zview.js": "// bundle: page  provides: AE.views.z"})
    assert bundle_order(js, tmp_path) == {
        "head": ("core.js",),
        "page": ("chart.js", "zview.js", "start.js", "after.js"),
    }


@pytest.mark.parametrize(
    ("extra", "refused"),
    [
        (
            {"gauge.js": "// bundle: page  needs: AE.gauge"},
            r"gauge\.js: it needs AE\.gauge, which no",
        ),
        ({"gauge.js": "// bundle: page  uses: AE.gauge"}, r"gauge\.js: it uses AE\.gauge, which"),
        ({"gauge.js": "// bundle: none"}, r"gauge\.js: no bundle.*nothing loads it"),
        (
            {"gauge.js": "// bundle: none  loaded-by: templates/base.html"},
            r"gauge\.js: loaded-by templates/base\.html, which does not load it",
        ),
        ({"gauge.js": "// The gauge view."}, r"gauge\.js: its first line must declare it"),
        ({"gauge.js": "// bundle: later"}, r"gauge\.js: bundle must be one of"),
        (
            {"early.js": "// bundle: head  needs: AE.widgets"},
            r"early\.js: it needs AE\.widgets as it loads; start\.js runs after",
        ),
        (
            {
                "p.js": "// bundle: page  provides: AE.p  needs: AE.q",
                "q.js": "// bundle: page  provides: AE.q  needs: AE.p",
            },
            r"a cycle in the needs of .*p\.js.*q\.js",
        ),
        (
            {"twice.js": "// bundle: page  provides: AE.core"},
            r"twice\.js: it provides AE\.core, which core\.js provides",
        ),
    ],
)
def test_the_build_refuses(tmp_path, extra, refused):
    with pytest.raises(SystemExit, match=refused):
        bundle_order(tree(tmp_path, extra), tmp_path)
