"""What tests share besides fixtures: where things are, one timeout, the page helpers."""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from allreduce_explainer.cli import main as cli_main
from allreduce_explainer.errors import ParamError
from allreduce_explainer.exercises.kinds.common import CHOICE
from allreduce_explainer.exercises.units import parse

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
ARTIFACTS = ROOT / "test-artifacts"
PY_READY = "html[data-python=ready]"
# Every Playwright wait in the tests: Python's boot in a cold page on a loaded 2-core machine can
# take most of it; a wait that should be quick still ends as soon as its condition holds.
TIMEOUT_MS = 90_000
# `make test-fast` sets this: properties then try a tenth of their examples (the edit-test loop);
# `make test` and CI try them all.
FAST = os.environ.get("AE_TESTS_FAST") == "1"
# the public address the `hosted` fixture builds the site for (build.py --url)
HOSTED = "https://example.org/allreduce/"
# the SCORM 1.2 run-time (npm's scorm-again) the course-platform tests host a package under
SCORM_AGAIN = ROOT / "node_modules" / "scorm-again" / "dist" / "scorm12.min.js"


def site_pages() -> list:
    """The site's pages in order, read as the build reads them (`sitebuild.page.load_pages`):
    tests take the stages' count, slugs and exercise kinds from here, not from typed numbers."""
    from sitebuild.page import load_pages  # conftest puts the repository on the path

    return load_pages()


def stages() -> list:
    """The pages that are stages, numbered 1 to n."""
    return [p for p in site_pages() if p.number is not None]


def field_of(call, *args, **kwargs) -> str:
    """The field named by the ParamError that call(*args, **kwargs) raises (fails if none)."""
    with pytest.raises(ParamError) as e:
        call(*args, **kwargs)
    return e.value.field


def typed(p, value) -> str:
    """`value` (base units) as a student types it into problem `p`'s box: the word, the integer,
    or 6 figures in `p`'s unit."""
    if p.dimension == CHOICE:
        return value
    if p.tolerance == 0:
        return str(int(value))
    scale = parse(f"1 {p.unit}").base(None) if p.unit else 1.0
    return f"{value / scale:.6g} {p.unit}".strip()


def refusal(capsys, argv: list[str]) -> str:
    """The command line, run in-process on `argv`, refuses it as it should: exit 2, nothing on
    stdout, one line on stderr and no traceback. That line, for the test to read the flag in."""
    with pytest.raises(SystemExit) as e:
        cli_main(argv)
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def soup(path: Path):
    """A built page's HTML, parsed."""
    from bs4 import BeautifulSoup  # a test dependency the core's tests do not need

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def course_platform(root: Path, package: Path, host_html: str, host_js: str) -> None:
    """Lay out a course platform's origin in `root`: its host page and script, scorm-again, and
    the SCORM `package` unzipped into pkg/, as a platform unpacks an uploaded one."""
    with zipfile.ZipFile(package) as z:
        z.extractall(root / "pkg")
    shutil.copyfile(SCORM_AGAIN, root / "scorm12.min.js")
    (root / "host.html").write_text(host_html)
    (root / "host.js").write_text(host_js)


def examples(n: int) -> int:
    """How many examples a property with n examples tries in this run."""
    return max(5, n // 10) if FAST else n


class Watch:
    """Console errors, page errors and requests that leave 127.0.0.1, for one page."""

    def __init__(self, page, base_url: str):
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on(
            "request",
            lambda r: r.url.startswith((base_url, "data:", "blob:")) or self.foreign.append(r.url),
        )
        page.on(
            "worker",
            lambda w: w.on("console", lambda m: m.type == "error" and self.errors.append(m.text)),
        )

    def assert_clean(self):
        assert self.errors == [], self.errors
        assert self.foreign == [], self.foreign


def open_page(page, server, slug: str, live: bool = False):
    page.goto(f"{server}/{slug}/")
    if live:
        page.wait_for_selector(PY_READY, state="attached")


def open_widget(page, server, slug: str, name: str):
    """Open stage `slug` and wait for Python: its widget `name`, ready to change."""
    open_page(page, server, slug, live=True)
    return page.locator(f"[data-widget={name}]")


def enter(widget, param: str, value: str) -> None:
    """Type `value` into the widget's control for `param` and press Enter, as a reader does."""
    box = widget.locator(f"[data-param={param}]")
    box.fill(value)
    box.press("Enter")


def refused(widget, param: str, value: str) -> str:
    """Enter a value the control's spec refuses; the message shown next to the control."""
    enter(widget, param, value)
    error = widget.locator(f"[data-error-for={param}]")
    error.wait_for(state="visible")
    return error.inner_text()


def computed_not_typed(page, server, slug: str, typed, shown, where: str = "article") -> str:
    """None of the figures `typed` is in stage `slug`'s Markdown, yet each of `shown` is in its
    built page's `where`: the build computed them. That text, for a test's further checks."""
    source = next((ROOT / "content").glob(f"*-{slug}.md")).read_text()
    for figure in typed:
        assert figure not in source, f"{figure} is typed into the prose"
    open_page(page, server, slug)
    text = page.locator(where).inner_text()
    for figure in shown:
        assert figure in text
    return text


def skip_prediction(widget):
    """Skip the widget's prediction if it asks one (predict.js): its later steps, charts or
    readouts are out of reach until then, as for a reader."""
    skip = widget.locator("[data-action=predict-skip]:visible")
    if skip.count():
        skip.click()


def step_to_end(widget):
    skip_prediction(widget)
    nxt = widget.locator("[data-action=next]")
    while nxt.is_enabled():
        nxt.click()
    counter = widget.locator("[data-role=step-counter]").inner_text()
    k, total = map(int, re.findall(r"\d+", counter))
    assert k == total


def expect_counter(widget, text):
    widget.locator("[data-role=step-counter]", has_text=text).wait_for()


def expect_url(page, *parts: str) -> None:
    """Wait until the page's URL holds every one of `parts`: widget.js writes it once the
    change is on screen (after the next paint), not in the same task."""
    page.wait_for_function("ps => ps.every(p => location.href.includes(p))", arg=list(parts))


def axe_clean(browser, server, slug: str, embeds: tuple[str, ...]) -> None:
    """No serious or critical axe violation on a page and its embeds, light and dark, before and
    after Python."""
    from axe_playwright_python.sync_playwright import Axe  # only when a page is checked

    axe = Axe()
    for scheme in ("light", "dark"):
        ctx = browser.new_context(color_scheme=scheme)
        page = ctx.new_page()
        for path in (f"{slug}/", *(f"embed/{w}/" for w in embeds)):
            page.goto(f"{server}/{path}")
            for when in ("before", "after"):
                if when == "after":
                    page.wait_for_selector(PY_READY, state="attached")
                bad = axe_violations(axe, page)
                assert bad == [], f"{path} ({scheme}, {when} Python): {bad}"
        ctx.close()


def axe_each(browser, server, scheme: str, paths, prepare=None) -> None:
    """No serious or critical axe violation on any of `paths` in one colour scheme, each checked
    once `prepare(page, path)` (if given) has put it in the state to check."""
    from axe_playwright_python.sync_playwright import Axe  # only when a page is checked

    axe = Axe()
    ctx = browser.new_context(color_scheme=scheme)
    page = ctx.new_page()
    for path in paths:
        page.goto(f"{server}/{path}")
        if prepare:
            prepare(page, path)
        bad = axe_violations(axe, page)
        assert bad == [], f"{path} ({scheme}): {bad}"
    ctx.close()


def axe_violations(axe, page) -> list[tuple[str, list]]:
    """axe-core's serious and critical violations on the page as it is now: (rule, the first
    three elements it names). The one filter every accessibility test applies."""
    return [
        (v["id"], [n["target"] for n in v["nodes"]][:3])
        for v in axe.run(page).response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def no_scroll_at_360(browser, server, slug: str) -> None:
    """A phone-width page, every stepper at its widest (last) frame, scrolls only vertically."""
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    page = ctx.new_page()
    page.goto(f"{server}/{slug}/")
    for w in page.locator("[data-kind=stepper]").all():  # the widest frame is the last
        skip_prediction(w)
        nxt = w.locator("[data-action=next]")
        while nxt.is_enabled():
            nxt.click()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    ctx.close()


BYTES_PER_PIXEL = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # 8-bit samples, by PNG colour type


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG, checked as the format says: signature, every chunk's CRC, IHDR
    first, IEND last, and the IDAT stream inflating to one filter byte plus a row per line."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, kinds, idat = 8, [], b""
    while i < len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        kind, body = data[i + 4 : i + 8], data[i + 8 : i + 8 + n]
        (crc,) = struct.unpack(">I", data[i + 8 + n : i + 12 + n])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        if kind == b"IDAT":
            idat += body
        kinds.append(kind)
        i += 12 + n
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    assert depth == 8 and interlace == 0
    assert len(zlib.decompress(idat)) == h * (1 + w * BYTES_PER_PIXEL[colour])
    return w, h


def zip_modules(data: bytes) -> set[str]:
    """An archive's Python modules, by name (a .py and its .pyc are one module)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n.removesuffix("c").removesuffix(".py") for n in z.namelist()}


def assert_no_file_twice(files: dict[str, bytes]) -> None:
    """No two files of a package (path -> bytes) alike, and no Python module in two of its zips
    (the standard library once)."""
    digests = [hashlib.sha256(d).hexdigest() for d in files.values()]
    assert len(digests) == len(set(digests)), sorted(files)
    archives = [zip_modules(d) for n, d in files.items() if n.endswith(".zip")]
    seen: set[str] = set()
    for names in archives:  # the standard library travels in one archive
        assert not names & seen, sorted(names & seen)
        seen |= names
