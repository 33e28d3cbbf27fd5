"""What the command line reads and writes besides its flags: the files a flag names (gradients,
logs, places) turned into the api's values, and the two commands whose answer is a file (a
widget's figure, a question bank), declared by specs as the api's functions are."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

from ..errors import ParamError
from ..exercises import export
from ..logs import explain
from ..params import REQUIRED, Param, spec, takes
from ..topology import PRESETS, preset_text
from ..topology.xml import MAX_TOPO_BYTES


class Unavailable(Exception):
    """What a command needs and this machine lacks (Plotly, Kaleido, a browser): no flag is
    wrong, so the message names what to install."""


def read_values(source: str):
    """A JSON array of per-GPU arrays from a file, or stdin for -."""
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        raise ParamError("values", f"cannot read {source}: {e.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise ParamError("values", f"not valid JSON ({e.msg}, line {e.lineno})") from None


def read_log(source: str) -> str:
    """At most explain.MAX_LOG_BYTES and one byte is read: enough to refuse a longer log unread."""
    limit = explain.MAX_LOG_BYTES + 1
    try:
        if source == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with open(source, "rb") as f:
                data = f.read(limit)
    except OSError as e:
        raise ParamError("log", f"cannot read {source}: {e.strerror}") from None
    if len(data) >= limit:
        raise ParamError("log", f"is larger than {explain.MAX_LOG_TEXT}: keep the runs you need")
    name = "stdin" if source == "-" else source
    return explain.LogText(data.decode("utf-8", "replace"), len(data), name)


def values_flag(what: str, then: str = "") -> Param:
    """--values FILE|-: the per-GPU values, read from a file or stdin."""
    return Param("values", None, "text", f"JSON array of N arrays, the per-GPU {what} (- reads "
                 f"stdin){then}", optional=True, metavar="FILE|-")  # fmt: skip


def read_topology(source: str) -> str:
    """A topology file (NCCL_TOPO_DUMP_FILE's) or a log with GRAPH lines, stdin for -, or a
    preset's name (dgx-h100)."""
    if source in PRESETS:
        return preset_text(source)
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_TOPO_BYTES + 1)
        else:
            with open(source, "rb") as f:
                data = f.read(MAX_TOPO_BYTES + 1)
    except OSError as e:
        raise ParamError("topology", f"cannot read {source}: {e.strerror}") from None
    return data.decode("utf-8", "replace")


TOPOLOGY_FLAG = Param(
    "topology", REQUIRED, "text",
    f"a topology file as NCCL_TOPO_DUMP_FILE writes it, or a log with the system "
    f"NCCL_DEBUG_SUBSYS=GRAPH prints (- reads stdin), or a preset: "
    f"{', '.join(PRESETS)}",
    flag="topology", metavar="FILE|PRESET",
)  # fmt: skip


LOG_FLAG = Param(
    "log", REQUIRED, "text",
    f"the output (- reads stdin); at most {explain.MAX_LOG_BYTES / 1e6:g} MB",
    flag="log", metavar="FILE|-",
)  # fmt: skip


def write(path: str, data: bytes, field: str = "out") -> None:
    """The answer's bytes to a file, or to stdout for -."""
    if path == "-":
        sys.stdout.buffer.write(data)
        return
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise ParamError(field, f"cannot write {path}: {e.strerror}") from None


# ---- figure: a widget's chart as SVG or PNG ---------------------------------------------------

FIGURE = spec(
    Param("widget", REQUIRED, "text", "a chart widget, e.g. scaling, latency", flag="widget",
          metavar="WIDGET"),
    Param("out", REQUIRED, "text", "the file to write", metavar="FILE.svg|FILE.png"),
    Param("theme", "light", "choice", "the site's theme",
          choices=(("light", "light"), ("dark", "dark"))),
    Param("figure", None, "text", "which chart, for a widget with several", optional=True,
          metavar="NAME"),
    Param("title", None, "text", "the title (default: the y axis against the x axis)",
          optional=True),
    Param("width", 960, "int", "width in pixels", 16, 8000, unit="pixels"),
    Param("height", 540, "int", "height in pixels", 16, 8000, unit="pixels"),
    Param("params", None, "data", optional=True),  # the widget's own, from --name value pairs
)  # fmt: skip


@takes(FIGURE)
def figure(
    widget: str,
    out: str,
    theme: str = "light",
    figure: str | None = None,
    title: str | None = None,
    width: int = 960,
    height: int = 540,
    params: object = None,
) -> dict:
    """The widget's chart drawn by Plotly and Kaleido, written to `out`."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    from .. import figures  # imports every widget: only this command pays for it

    kind = p["out"].rsplit(".", 1)[-1].lower() if "." in p["out"] else ""
    if kind not in figures.FORMATS:
        raise ParamError("out", "must end in .svg or .png")
    fig = figures.widget_figure(p["widget"], p["params"] or {}, p["figure"])
    themed = figures.themed(fig, p["theme"], p["title"])
    try:
        data = figures.render(themed, kind, p["width"], p["height"])
    except ImportError:
        raise Unavailable(
            "figure needs Plotly and Kaleido: pip install 'allreduce-explainer[figures]'"
        ) from None
    except Exception as e:  # Kaleido: no browser found, or the browser failed
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise Unavailable(
            f"figure could not be drawn ({type(e).__name__}: {first}); Kaleido needs Chrome or "
            "Chromium (apt-get install chromium)"
        ) from None
    write(p["out"], data)
    return {"out": p["out"], "format": kind, "bytes": len(data), "title": themed_title(themed)}


def themed_title(fig: dict) -> str:
    title = fig.get("layout", {}).get("title", "")
    return title.get("text", "") if isinstance(title, dict) else str(title)


def widget_params(extra: list[str]) -> dict:
    """--name value pairs (a flag with no value is true), values read as JSON if they can be."""
    params, i = {}, 0
    while i < len(extra):
        flag = extra[i]
        if not flag.startswith("--") or len(flag) < 3:
            raise ParamError("widget", f"unexpected {flag!r}: its parameters are --name value")
        name, _, value = flag[2:].partition("=")
        if not value and (i + 1 == len(extra) or extra[i + 1].startswith("--")):
            value, i = "true", i + 1
        elif not value:
            value, i = extra[i + 1], i + 2
        else:
            i += 1
        try:
            params[name.replace("-", "_")] = json.loads(value)
        except ValueError:
            params[name.replace("-", "_")] = value
    return params


# ---- exercises export: question banks for course platforms ------------------------------------


EXPORT = spec(
    Param("format", REQUIRED, "choice", "the bank's format",
          choices=tuple((f, f) for f in export.FORMATS)),
    Param("kinds", REQUIRED, "text", "exercise kinds, comma-separated"),
    replace(export.SEED, default=0, label="the first seed"),
    replace(export.COUNT, label="problems per kind"),
    Param("out", REQUIRED, "text", "the file to write (- for stdout)", metavar="FILE"),
    Param("site", "", "text", "the site's address, for the links", metavar="URL"),
    Param("places", None, "text", "the site's banks/places.json (built with the site): each "
          "kind's page and objective", optional=True, metavar="FILE"),
)  # fmt: skip


@takes(EXPORT)
def export_bank(
    format: str,
    kinds: str,
    seed: int = 0,
    count: int = 1,
    *,
    out: str,
    site: str = "",
    places: str | None = None,
) -> dict:
    """COUNT problems of each kind as a question bank, written to `out`."""
    p = dict(locals())  # the validated arguments by name (a copy: a tracer refreshes locals())
    site = p["site"] if not p["site"] or p["site"].endswith("/") else p["site"] + "/"
    qs = export.questions(p["kinds"], p["seed"], p["count"], _read_places(p["places"]), site)
    data = export.export(p["format"], qs)
    write(p["out"], data)
    kinds = sorted({q.kind for q in qs})
    return {"out": p["out"], "format": p["format"], "questions": len(qs), "kinds": kinds,
            "bytes": len(data)}  # fmt: skip


def _read_places(source: str | None) -> dict:
    if not source:
        return {}
    try:
        with open(source, encoding="utf-8") as f:
            data = json.load(f)
        return {k: export.Place(**v) for k, v in data.items()}
    except OSError as e:
        raise ParamError("places", f"cannot read {source}: {e.strerror}") from None
    except (ValueError, TypeError, AttributeError):
        raise ParamError(
            "places", "must be a JSON object: kind -> {page, slug, objective}"
        ) from None
