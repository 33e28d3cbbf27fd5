"""A live page's scripts, bundled: one file for the <head> (it starts the worker), one deferred
file for the rest, each named by its content. Twenty requests become two, so a page's steppers
and controls answer sooner, and the names let browsers cache the bundles for ever.

The bundles' order is derived, not kept by hand: each file of client/js opens with one line that
declares its place, so that a new view is one file. The line is `// bundle: ...` and more
`key: names` groups:

    // bundle: page  provides: AE.views.stepper AE.formatValue  uses: AE.bench AE.diagram

- `bundle`: `head` (run in <head>, in order), `page` (the deferred bundle, after the head's) or
  `none` (a file of its own, which `loaded-by` must name a loader for).
- `provides`: the names it defines: `AE.x` on the shared `window.AE`, or a global (`AEProtocol`).
- `needs`: the names it reads while it loads. Only these order the bundles: each file runs after
  the files that provide what it needs. A need of a page file may come from the head; a need of
  a file of its own comes from the files it loads. A need of `AE.views` is every `AE.views.x`.
  `*` is the entry point's need (start.js builds every widget as it loads, so it needs whatever a
  widget calls and every AE.onPage hook): it runs after every other file of its bundle that does
  not need it.
- `uses`: the names it reads only when called, after every script has run: they must exist on the
  page, in any order.
- `loaded-by`: the files, from the repository's root, that load it by its path (a template, or a
  module that imports it); it is then kept in the site as a file of its own as well.

The build refuses a file that declares nothing, a file nothing loads, a name nothing provides or
two provide, a need that cannot run first, and a cycle, naming the file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import CLIENT, ROOT

KEYS = ("bundle", "provides", "needs", "uses", "loaded-by")
BUNDLES = ("head", "page")  # in the order they run
EVERYTHING = "*"


@dataclass(frozen=True)
class Script:
    """One file of client/js, as its first line declares it."""

    name: str
    bundle: str
    provides: tuple[str, ...]
    needs: tuple[str, ...]
    uses: tuple[str, ...]
    loaded_by: tuple[str, ...]

    def offers(self, name: str) -> bool:
        """Whether it provides `name`, or a name under it (`AE.views` for `AE.views.chart`)."""
        return any(p == name or p.startswith(name + ".") for p in self.provides)


def declared(path: Path) -> Script:
    """A file's declaration, read from its first line."""
    words = path.read_text(encoding="utf-8").split("\n", 1)[0].split()
    if words[:2] != ["//", "bundle:"]:
        raise SystemExit(f"{path}: its first line must declare it: '// bundle: ...' ({__name__})")
    groups: dict[str, list[str]] = {}
    key = ""
    for word in words[1:]:
        if word.endswith(":"):
            key = word[:-1]
            if key not in KEYS or key in groups:
                raise SystemExit(f"{path}: unknown or repeated key {word!r} in its first line")
            groups[key] = []
        else:
            groups[key].append(word)
    bundle = groups["bundle"]
    if len(bundle) != 1 or bundle[0] not in (*BUNDLES, "none"):
        raise SystemExit(f"{path}: bundle must be one of head, page, none, not {bundle}")
    return Script(
        name=path.name,
        bundle=bundle[0],
        provides=tuple(groups.get("provides", ())),
        needs=tuple(groups.get("needs", ())),
        uses=tuple(groups.get("uses", ())),
        loaded_by=tuple(groups.get("loaded-by", ())),
    )


def check_loaded(s: Script, js: Path, root: Path) -> None:
    """Refuse a file that nothing loads, or whose loaders do not name it."""
    if s.bundle == "none" and not s.loaded_by:
        raise SystemExit(f"{js / s.name}: no bundle, and loaded-by names nothing: nothing loads it")
    for loader in s.loaded_by:
        path = root / loader
        if not path.is_file() or f"/{s.name}" not in path.read_text(encoding="utf-8"):
            raise SystemExit(f"{js / s.name}: loaded-by {loader}, which does not load it")


def check_once(scripts: list[Script], js: Path) -> None:
    """Refuse a name that two files provide: which one a need waits for would be a guess."""
    by: dict[str, str] = {}
    for s in scripts:
        for name in s.provides:
            if name in by:
                raise SystemExit(f"{js / s.name}: it provides {name}, which {by[name]} provides")
            by[name] = s.name


def providers(name: str, scripts: list[Script], who: Path) -> list[Script]:
    """The files that provide `name` (or names under it): refused if none does."""
    found = [s for s in scripts if s.offers(name)]
    if not found:
        raise SystemExit(f"{who}: it needs {name}, which no file of client/js provides")
    return found


def after(s: Script, scripts: list[Script], js: Path, root: Path) -> set[str]:
    """The files of its own bundle that must run before `s` for what it needs ("*" aside)."""
    if s.bundle == "none":  # what it reads comes from what it loads
        ran = on_page = [t for t in scripts if f"{js.relative_to(root) / s.name}" in t.loaded_by]
    else:
        ran = [t for t in scripts if t.bundle in BUNDLES[: BUNDLES.index(s.bundle) + 1]]
        on_page = [t for t in scripts if t.bundle in BUNDLES]
    out = set()
    for name in s.needs:
        if name == EVERYTHING:
            continue
        for p in providers(name, scripts, js / s.name):
            if p not in ran:
                raise SystemExit(f"{js / s.name}: it needs {name} as it loads; {p.name} runs after")
            if p.bundle == s.bundle:
                out.add(p.name)
    for name in s.uses:
        if not any(t.offers(name) for t in [*on_page, s]):
            raise SystemExit(f"{js / s.name}: it uses {name}, which nothing on its page provides")
    return out


def ordered(names: list[str], before: dict[str, set[str]], where: Path) -> tuple[str, ...]:
    """`names` so that each comes after those in `before[name]`; ties by name, so stable."""
    out: list[str] = []
    left = sorted(names)
    while left:
        ready = [n for n in left if before[n] <= set(out)]
        if not ready:
            raise SystemExit(f"{where}: a cycle in the needs of {', '.join(left)}")
        out.append(ready[0])
        left.remove(ready[0])
    return tuple(out)


def dependents(name: str, before: dict[str, set[str]]) -> set[str]:
    """The files that need `name`'s file, directly or through others."""
    out: set[str] = set()
    grew = True
    while grew:
        new = {n for n, b in before.items() if b & (out | {name})} - out
        out |= new
        grew = bool(new)
    return out


def declarations(js: Path) -> list[Script]:
    """Every script of `js`, declared."""
    return [declared(p) for p in sorted(js.iterdir()) if p.suffix in (".js", ".mjs")]


def bundle_order(js: Path, root: Path = ROOT) -> dict[str, tuple[str, ...]]:
    """{"head" | "page": its files in the order they run}, from the files' declarations."""
    scripts = declarations(js)
    check_once(scripts, js)
    for s in scripts:
        check_loaded(s, js, root)
    before = {s.name: after(s, scripts, js, root) for s in scripts}
    for s in scripts:
        if EVERYTHING in s.needs:
            mine = {t.name for t in scripts if t.bundle == s.bundle} - {s.name}
            before[s.name] |= mine - dependents(s.name, before)
    return {
        bundle: ordered([s.name for s in scripts if s.bundle == bundle], before, js)
        for bundle in BUNDLES
    }


ORDER = bundle_order(CLIENT / "js")
HEAD, PAGE = ORDER["head"], ORDER["page"]
# kept as files of their own too: a loader names them (the worker imports protocol.js)
LOADED = {s.name for s in declarations(CLIENT / "js") if s.loaded_by}


@cache
def bundles() -> dict[str, tuple[str, bytes]]:
    """{"head" | "page": (its path in the site, its bytes)}."""
    out = {}
    for role, names in ORDER.items():
        data = b"\n;\n".join((CLIENT / "js" / n).read_bytes() for n in names)
        digest = hashlib.sha256(data).hexdigest()[:16]
        out[role] = (f"static/js/{role}-{digest}.js", data)
    return out


def write_bundles(site: Path) -> None:
    """The bundles, in place of the files they hold (site/static/js is a copy of client/js)."""
    for path, data in bundles().values():
        (site / path).write_bytes(data)
    for name in set(HEAD + PAGE) - LOADED:
        (site / "static" / "js" / name).unlink()
