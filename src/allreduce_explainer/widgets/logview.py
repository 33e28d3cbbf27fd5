"""The log view of "your cluster": a pasted or opened `all_reduce_perf` log read by logs.explain,
drawn against the calculator's cluster (widgets/cluster.py, one widget with it): the measured
points, the alpha-beta line, NCCL's regimes fitted, and the calculator's algorithm on the measured
cluster.

This module keeps the page's caches (parsing, and NCCL's fit of one run) and the drawing; the
reading is logs.explain.explain_run's, the CLI's `nccl-tests` too.
"""

from __future__ import annotations

from functools import lru_cache

from .. import fmt, nccl, records
from ..collectives import ALLREDUCE
from ..errors import ParamError
from ..logs import debug, examples, explain, findings
from ..logs import parse as nccltests
from ..palette import NEUTRAL, SERIES
from ..sources import REFERENCE_DASH
from ..training import calculator
from ..validate import count
from . import debugview
from . import figures as fig

MAX_DRAWN_ROWS = 2000  # rows of one run drawn and tabulated (all are fitted)
MAX_LISTED = 50  # unreadable lines listed one by one; the rest are counted by reason


@lru_cache(maxsize=2)
def _parsed(text: str) -> nccltests.Log:
    """Parsing is the slow part (tens of µs a line): a calculator change should not redo it."""
    return nccltests.parse_runs(text)


# the fitted time's regimes (NCCL's algorithm and protocol by size), each scaled to the run
NCCL_FIT = "NCCL's regimes, fitted to the run"


def _log_text(p: dict) -> tuple[str, str]:
    """The text to read and the parameter it came from: a paste wins over an opened file.

    An opened file goes to `log_file`, not into the text box: a text box of millions of short
    lines takes Chromium minutes to lay out, which would freeze the page.
    """
    for field in ("log", "log_file"):
        text = p[field]
        if text is None or text == "":
            continue
        if not isinstance(text, str):
            raise ParamError(field, "must be text")
        explain.check_size(text, field, "; paste or open a shorter log")
        return text, field
    return "", ""


def with_example(p: dict) -> dict:
    """The parameters with the example chosen (`example`, in the URL) put in the text box, so
    the reader sees the log and the panel reads it as a paste. A paste that is no example's
    text wins over the menu, which goes back to none (so editing the box keeps the edit);
    choosing none leaves the text in the box, as a paste."""
    out, key, log = dict(p), p["example"], p["log"] or ""
    if key and log and log not in examples.TEXTS:
        out["example"] = ""
    elif key:
        out.update(log=examples.text(key), log_file="", run=1)
    return out


def pct(x: float) -> str:
    """A share as a percentage, two significant figures (the calculator view's too)."""
    return f"{fmt.sig(100 * x, 2)} %"


def read(p: dict, c: calculator.Cluster) -> dict | None:
    """The log in `p` (None without one), its run `p["run"]` explained on the calculator's GPU
    and card (logs.explain.explain_run), and the calculator's cluster with the run's layout."""
    text, field = _log_text(p)
    if not text:
        return None
    text = debug.decoded(text)[0]  # UTF-16 (PowerShell's >): read as the CLI reads it
    topo = _topology(text)
    log = _parsed(text)
    out = {"log": log, "fit": None, "apply": None, "run": None, "source": field}
    out["example"] = p["example"]
    out |= _debug_parts(p, topo, log.runs[0].gpus_per_thread if log.runs else None)
    if not log.runs:
        if p["run"] != 1:
            raise ParamError("run", "the log has no runs to choose from")
        return out
    k = count("run", p["run"], 1, len(log.runs))
    gpu = c.gpu.name if c.gpu.name in nccl.GPU_SPECS else None
    run = _explained(text, k, p["log_gpus"], c.gpus_per_node, gpu, c.nic_GBps * 8)
    n = run["gpus"]
    out.update(run=run, k=k, n=n, fit=run["fit"])
    out |= {key: run.get(key) for key in ("nccl_fit", "prediction", "nccl_error")}
    if not n:  # ask for the count, keeping the log (an error would drop the paste)
        return out
    per = run["gpus_per_node"]
    assumed = calculator.Cluster(n, per, c.gpu, c.nic_GBps, c.intra_latency_us, c.inter_latency_us)
    out.update(servers=run["servers"], per=per, assumed=assumed)
    if run["nccl_fit"]:
        out["apply"] = _apply(run["nccl_fit"]["calculator_settings"])
    if topo is not None:
        out["findings"] = findings.from_debug(topo) + findings.from_run(run, text)
    return out


@lru_cache(maxsize=4)
def _topology(text: str) -> dict | None:
    """The log's NCCL_DEBUG=INFO lines read (None: it has none). Read only: it is shared."""
    explain.check_size(text)
    return explain.topology(text)


def _debug_parts(p: dict, topo: dict | None, gpus_per_process: int | None) -> dict:
    """The debug lines' keys of `read`'s answer: the drawing, and the topology as calculator
    settings (GPUs, GPUs per server, the GPU named by the device lines, the GPUs per process of
    the log's first all_reduce_perf run; never the card rate, which a log does not print)."""
    if topo is None:
        return {"topo": None}
    apply = explain.calculator_from(topo, explain.Network(), gpus_per_process=gpus_per_process)
    return {
        "topo": topo,
        "debug": debugview.state(topo, p["debug_channel"], p["debug_view"]),
        "topology_apply": {k: v for k, v in apply.items() if k != "algorithm"} or None,
        "findings": findings.from_debug(topo),
    }


@lru_cache(maxsize=4)
def _explained(text: str, k: int, gpus, gpus_per_node: int, gpu, nic_Gbps: float) -> dict:
    """Run k explained (NCCL's fit is the slow part: a calculator change should not redo it),
    on the calculator's GPU (None: not NVIDIA) and card, as the reader's cluster, with the
    topology its NCCL_DEBUG=INFO lines give (the rows' algorithms). A layout NCCL's model does
    not hold leaves the alpha-beta line standing. Read only: it is shared."""
    net = explain.Network(gpu=gpu, nic_Gbps=nic_Gbps)
    run = _parsed(text).runs[k - 1]
    device = explain.device_name(text)
    topo = _topology(text)
    return explain.explain_run(run, gpus, gpus_per_node, net, device, strict=False, topo=topo)


def _apply(settings: dict) -> dict:
    """The NCCL fit's calculator settings (the figures belong to the model they were
    fitted with): algorithm nccl, the NCCL release, the GPU and, across servers, the card rate
    that makes NCCL's model give the fitted busbw."""
    out = {"algorithm": "nccl", "gpu": settings["gpu"], "nccl_version": settings["nccl_version"]}
    out["gpus_per_process"] = settings["gpus_per_process"]  # the run's -g: the same launch
    if "nic_gbps" in settings:
        out |= {"network": "custom", "nic_gbps": settings["nic_gbps"]}
    return out


def _assumed_curve(log: dict, r: dict, sizes: list[float]) -> list[tuple[float, float, float]]:
    """(size, time µs, busbw) of the calculator's algorithm on the measured cluster."""
    out = []
    for s in sizes:
        a = calculator.allreduce(log["assumed"], r["algorithm_asked"], s)
        if a["time_s"] > 0:
            out.append((s, a["time_s"] * 1e6, a["busbw_GBps"]))
    return out


def figures(log: dict | None, r: dict, calculator_text: str) -> dict:
    """The time and busbw figures, their summary and table; `calculator_text` names the
    calculator's algorithm. With no run to draw, no figure at all (None): chart.js then shows
    no chart, and the panel its examples (templates/widgets/cluster.html), not two empty axes."""
    if not log or not log["run"]:
        why = "Paste all_reduce_perf output, open a file or load an example to compare it."
        empty = {"columns": ["size", "measured"], "rows": []}
        return {
            "time": {"figure": None, "summary": why, "table": empty},
            "busbw": {"figure": None, "summary": why, "table": empty},
        }
    m, f = log["run"], log["fit"]
    rows = [x for x in m["rows"] if x["time_us"] and x["size_bytes"] > 0][:MAX_DRAWN_ROWS]
    sizes = [x["size_bytes"] for x in rows]
    time_fig: dict = {"data": []}
    bus_fig: dict = {"data": []}
    assumed = _assumed_curve(log, r, sizes) if log["n"] else []
    calc = f"calculator ({calculator_text})"
    in_place = [x for x in rows if x["in_place"] and x["in_place"]["time_us"]]
    time_fig["data"] = [
        _dots("measured (out-of-place)", sizes, [x["time_us"] for x in rows]),
        _dots(
            "measured (in-place)",
            [x["size_bytes"] for x in in_place],
            [x["in_place"]["time_us"] for x in in_place],
            hollow=True,
        ),
        _line(calc, [a[0] for a in assumed], [a[1] for a in assumed], NEUTRAL, "dot"),
    ]
    bus_fig["data"] = [
        _dots("measured (out-of-place)", sizes, [x["busbw_GBps"] for x in rows]),
        _line(calc, [a[0] for a in assumed], [a[2] for a in assumed], NEUTRAL, "dot"),
    ]
    fitted_t = []
    if f:
        fitted_t = [f["latency_us"] + s / (f["algbw_GBps"] * 1e3) for s in sizes]
        time_fig["data"].insert(2, _line("alpha-beta fit", sizes, fitted_t, SERIES["ring"], "dash"))
    if f and log["n"] and log["n"] > 1:
        factor = ALLREDUCE.busbw_factor(log["n"])
        fitted_bus = [s / t / 1e3 * factor for s, t in zip(sizes, fitted_t, strict=True)]
        bus_fig["data"].insert(
            1, _line("alpha-beta fit", sizes, fitted_bus, SERIES["ring"], "dash")
        )
    nf = log.get("nccl_fit")
    if nf:
        xs = [x["bytes"] for x in nf["rows"]]
        colour = SERIES["tree"]
        t_nccl = [x["fitted_time_us"] for x in nf["rows"]]
        b_nccl = [x["fitted_busbw_GBps"] for x in nf["rows"]]
        time_fig["data"].insert(2, _line(NCCL_FIT, xs, t_nccl, colour, "solid"))
        bus_fig["data"].insert(1, _line(NCCL_FIT, xs, b_nccl, colour, "solid"))
        rate = nf["line_rate"]["GBps"]
        if rate:
            ends = [xs[0], xs[-1]]
            bus_fig["data"].append(_line("line rate", ends, [rate, rate], NEUTRAL, REFERENCE_DASH))
    time_fig["layout"] = _size_layout(time_fig["data"], "time (µs)")
    bus_fig["layout"] = _size_layout(bus_fig["data"], "busbw (GB/s)")
    if any(x.get("algorithm") for x in rows):
        bus_fig["layout"]["shapes"] = _band_shapes(rows)
    summary = _fit_text(log)
    table = _log_table(log, rows, fitted_t, assumed)
    return {
        "time": {"figure": time_fig, "summary": summary, "table": table},
        "busbw": {"figure": bus_fig, "summary": summary, "table": table},
    }


US = {"unit": "µs", "decimals": 2}  # a time column as nccl-tests prints it


def _log_table(log: dict, rows: list, fitted_t: list, assumed: list) -> dict:
    """One row per measured size: both fits, NCCL's likely regime, its prediction and the
    ratio, and (across servers) what each card carried; the records' columns (logs/explain),
    each unit once in its head, as the CLI's nccl-tests prints them."""
    nf = log.get("nccl_fit")
    by_size = {x["bytes"]: x for x in nf["rows"]} if nf else {}
    pred = {x["bytes"]: x for x in (log.get("prediction") or {"rows": []})["rows"]}
    calc = {a[0]: a[2] for a in assumed}
    items = [
        {
            "row": x,
            "alpha_beta_s": fitted_t[i] * 1e-6 if fitted_t else None,
            "fit": by_size.get(x["size_bytes"], records.NOTHING),
            "pred": pred.get(x["size_bytes"], records.NOTHING),
            "calculator_GBps": calc.get(x["size_bytes"]),
        }
        for i, x in enumerate(rows)
    ]
    measured, fit, predicted, of = (
        explain.MEASURED,
        explain.FIT_ROW,
        explain.PREDICTED,
        records.Column.of,
    )
    cols = [
        of(measured, "size_bytes").on(lambda it: it["row"]),
        of(measured, "time_us", "measured", **US).on(lambda it: it["row"]),
        records.Column("alpha-beta", records.TIME, lambda it: it["alpha_beta_s"], **US),
        of(fit, "fitted_time_us", **US).on(lambda it: it["fit"]),
        records.Column("likely regime", records.TEXT, lambda it: _regime(it["fit"])),
        records.Column("NCCL picks", records.TEXT, lambda it: _pick_text(it["row"])),
        of(measured, "busbw_GBps", "measured busbw", unit="GB/s").on(lambda it: it["row"]),
        of(predicted, "busbw_GBps", unit="GB/s").on(lambda it: it["pred"]),
        of(predicted, "ratio", "measured / predicted", decimals=2).on(lambda it: it["pred"]),
    ]
    if log.get("servers", 1) > 1:
        cols.append(records.Column("per card", records.RATE, _per_card, "GB/s"))
    cols.append(
        records.Column("calculator busbw", records.RATE, lambda it: it["calculator_GBps"], "GB/s")
    )
    heads, cells = records.columns(cols, items, " ")
    return {"columns": heads, "rows": cells}


def _regime(n: dict) -> str:
    if n["regime"] is None:
        return records.NONE
    return n["regime"] + (" (above line rate)" * n["above_line_rate"])


def _per_card(item: dict) -> float | None:
    """What each card carried at the row's size (across servers), GB/s."""
    return (item["fit"].get("per_card") or {}).get("GBps")


def _pick_text(row: dict) -> str:
    """NCCL's model's pick at the row's size, and what NCCL says it ran where a tuning line
    names the call."""
    if not row.get("algorithm"):
        return records.NONE
    text = f"{row['algorithm']}/{row['protocol']}"
    ran = row.get("nccl_ran")
    if ran:
        said = f"{ran['algorithm']}/{ran['protocol']}"
        text += " (NCCL ran it)" if ran["agrees"] else f" (NCCL ran {said})"
    return text


def bands(rows: list[dict]) -> list[tuple[str, float, float]]:
    """The sizes over which NCCL's model keeps one pick: (algorithm/protocol, from, to), the
    edges halfway (in log size) between neighbouring rows."""
    picked = [(r["size_bytes"], f"{r['algorithm']}/{r['protocol']}") for r in rows
              if r.get("algorithm") and r["size_bytes"] > 0]  # fmt: skip
    out: list[list] = []
    for i, (s, name) in enumerate(picked):
        lo = s if i == 0 else (picked[i - 1][0] * s) ** 0.5
        if out and out[-1][0] == name:
            continue
        if out:
            out[-1][2] = lo
        out.append([name, lo, s])
    if out:
        out[-1][2] = picked[-1][0]
    return [(a, b, c) for a, b, c in out]


def _band_shapes(rows: list[dict]) -> list[dict]:
    """Bands behind the busbw chart, one per pick, labelled (Plotly shapes in data units)."""
    shapes = []
    for k, (name, lo, hi) in enumerate(bands(rows)):
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": lo,
                "x1": hi,
                "y0": 0,
                "y1": 1,
                "layer": "below",
                "line": {"width": 0},
                "fillcolor": NEUTRAL,
                "opacity": 0.06 if k % 2 else 0.14,
                "label": {"text": name, "textposition": "top center", "font": {"size": 10}},
            }
        )
    return shapes


def _fit_text(log: dict) -> str:
    """Both fits in words, each figure as its record (logs/explain) prints it, the CLI's too."""
    f, ab = log["fit"], explain.ALPHA_BETA
    if not f:
        return "Too few measured sizes, or times that do not grow with size: nothing to fit."
    figures = records.line(ab, f, ["latency_us", "algbw_GBps", "busbw_GBps"])
    gpus = f" of {log['n']} GPUs" if log["n"] else ""
    text = (
        f"Alpha-beta line fitted to {f['points']} {f['times']} times{gpus}: {figures}; "
        f"rms relative error {records.text(ab, f, 'rms_rel_error')}."
    )
    nf = log.get("nccl_fit")
    if not nf:
        return text
    regimes = ", ".join(
        f"{g['regime']} {fmt.nbytes(g['from_bytes'])}–{fmt.nbytes(g['to_bytes'])}"
        for g in nf["regimes"]
    )
    rec = explain.NCCL_FIT
    got = records.block(rec, nf, [q.key for q in rec.fields])
    same = got.get("alpha_beta_rms_rel_error")
    return (
        f"{text} NCCL's regimes fitted to the {nf['points']} sizes from "
        f"{got['min_bytes'][1]}: rms relative error {got['rms_rel_error'][1]}"
        + ("" if same is None else f" (the alpha-beta line on the same sizes: {same[1]})")
        + f"; likely regimes {regimes}; busbw {got['busbw_GBps'][1]} at the "
        f"largest size, latency {got['latency_us'][1]}."
    )


def _size_layout(data: list[dict], title: str) -> dict:
    """Both axes log, over every point drawn (measured, fitted, predicted) with a margin."""
    xs = [x for t in data for x in t["x"]]
    ys = [y for t in data for y in t["y"]]
    return fig.layout(
        fig.log_axis("size", fig.around(xs), fig.BYTES), fig.log_axis(title, fig.around(ys))
    )


def _dots(name, x, y, hollow=False) -> dict:
    return fig.dots(name, x, y, SERIES["measured"], outline=1.5, hollow=hollow)


def _line(name, x, y, colour, dash) -> dict:
    return fig.line(name, x, y, colour, dash, 2)


def readouts(log: dict | None) -> dict:
    if not log:
        return {
            "log_status": "No log yet: paste the output of all_reduce_perf, open a file, or load "
            "an example.",
            "log_fit": "—",
            "log_line_rate": "—",
            "log_apply": "—",
            "log_debug": "—",
            "log_findings": "—",
            "log_skipped": "",
        }
    parsed = log["log"]
    kinds: dict[str, int] = {}
    listed = []
    for line, kind, reason in parsed.skipped:
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind in ("unreadable", "duplicate", "unread") and len(listed) < MAX_LISTED:
            listed.append(f"line {line}: {reason}")
    extra = sum(kinds.get(k, 0) for k in ("unreadable", "duplicate", "unread")) - len(listed)
    if extra > 0:
        listed.append(f"… and {extra:,} more lines that could not be read")
    counted = [f"{v:,} {k}" for k, v in sorted(kinds.items())] + [f"{parsed.blank:,} blank"]
    runs = len(parsed.runs)
    source = "the opened file" if log["source"] == "log_file" else "the pasted text"
    if log["example"]:
        ex = examples.EXAMPLES[log["example"]]
        source = f"the example ({ex.source}, {ex.url})"
    if not log["run"]:
        status = f"No all_reduce_perf rows found in {parsed.lines:,} lines of {source}."
    else:
        m = log["run"]
        status = (
            f"Run {log['k']} of {runs} in {source}: {len(m['rows'])} rows from line "
            f"{m['first_line']}. "
            "How many GPUs ran it? The log has no '#  Rank' lines: enter the count above "
            "for the bus bandwidth."
        )
    if log["run"] and log["n"]:
        m = log["run"]
        status = (
            f"Run {log['k']} of {runs} in {source}: {len(m['rows'])} rows from line "
            f"{m['first_line']}, "
            f"{log['n']} GPUs"
            + (" (from the rank lines)" if m["gpus_in_file"] == log["n"] else " (as entered)")
            + f" in {log['servers']} server"
            + ("s" if log["servers"] > 1 else "")
            + (
                ""
                if m["avg_busbw_GBps"] is None
                else f"; its summary: avg busbw {fmt.sig(m['avg_busbw_GBps'], 4)} GB/s"
            )  # fmt: skip
            + "."
        )
    apply_text = _apply_text(log)
    return {
        "log_status": status,
        "log_fit": _fit_text(log) if log["run"] else "—",
        "log_line_rate": _line_rate_text(log),
        "log_apply": apply_text,
        "log_debug": debugview.summary(log.get("topo")),
        "log_findings": debugview.findings_text(log["findings"]) if log.get("topo") else "—",
        "log_skipped": "Lines not read as rows: "
        + ", ".join(counted)
        + (".\n" + "\n".join(listed) if listed else "."),
    }


def _line_rate_text(log: dict) -> str:
    nf = log.get("nccl_fit")
    if not nf:
        return log.get("nccl_error") or "—"
    rate = nf["line_rate"]
    if rate["GBps"] is None:
        return rate["basis"]
    text = f"{fmt.sig(rate['GBps'], 4)} GB/s ({rate['basis']}, the calculator's)"
    if rate["rows_above"]:
        first = fmt.nbytes(min(rate["rows_above"]))
        text += f"; {len(rate['rows_above'])} sizes from {first} measured above it: {rate['why']}"
    return text + "."


def _apply_text(log: dict) -> str:
    nf = log.get("nccl_fit")
    if not nf:
        return "— (no fit)"
    st = nf["calculator_settings"]
    card = f", a {fmt.sig(st['nic_gbps'], 4)} Gb/s card per GPU" if "nic_gbps" in st else ""
    g = st["gpus_per_process"]
    card += f", {g} GPUs per process (the run's -g {g})" if g > 1 else ""
    text = (
        f"algorithm NCCL's choice on {st['gpu']}{card}: its fitted time then gives "
        f"{fmt.sig(st['model_busbw_GBps'], 4)} GB/s busbw at the largest size, against "
        f"{fmt.sig(st['fitted_busbw_GBps'], 4)} GB/s fitted"
    )
    return text + ("." if st["reproduces"] else f"; {st['note']}.")
