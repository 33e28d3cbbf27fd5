"""Each command's result as an engineer used to nccl-tests reads it: labelled values with their
units at a sensible precision (fmt's), and lists as tables with the unit in the header and numbers
right-aligned. The JSON (--json) keeps every figure at full precision; these views only read it.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable, Sequence

from .. import api, fmt, records
from ..catalog import hardware
from ..costs import cost as costs
from ..logs import explain
from ..performance import bands
from ..simulation import orders as orders_engine
from ..simulation import simulate as simulation
from ..sources import WHITEBOARD
from ..training import calculator, memory, shardcost
from ..training import ddp as ddp_engine
from ..widgets import REGISTRY

WIDTH = 80  # a terminal's columns: prose wraps there; tables are kept narrower
VECTOR_WIDTH = 44  # characters of a vector's values before "... (N values)"
NBSP = "\u00a0"  # a space textwrap never breaks at
# the space between a number and its unit ("448 GB/s", "8.9 µs", "4.2 %")
UNIT = re.compile(
    r"(?<=\d) (?=(?:[KMGTP]i?B|[KMGTP]B/s|[KMGT]b/s|[TP]FLOP/s|B|s|ms|µs|us|ns|%|ulp)(?![\w/]))"
)


# ---- the pieces ---------------------------------------------------------------------------------


def wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    """textwrap's lines, but a number keeps its unit ("448\nGB/s" reads as two figures), and a
    no-break space in `text` holds too."""
    lines = textwrap.wrap(
        UNIT.sub(NBSP, text), width, subsequent_indent=indent, break_on_hyphens=False
    )
    return [line.replace(NBSP, " ") for line in lines]


def title(text: str) -> str:
    """A sentence wrapped at the terminal's width."""
    return "\n".join(wrap(text))


def prose(text: str, indent: str = "") -> list[str]:
    """A note under a table, wrapped, its following lines indented."""
    return wrap(text, indent=indent + "  ")


def formula(text: str) -> str:
    """A formula that wraps only between its outermost arguments or terms: after the "," or ";"
    nearest the top, else the "+" nearest the top, never inside "S/(g N B_inter)"."""
    depth, spots = 0, []
    for i, c in enumerate(text):
        depth += (c in "([") - (c in ")]")
        if c == " " and text[i - 1 : i] in ("+", ",", ";"):
            spots.append((depth, text[i - 1] == "+", i))
    best = min(spots, default=(0, False, -1))[:2]
    keep = {i for d, plus, i in spots if (d, plus) == best}
    return "".join(NBSP if c == " " and i not in keep else c for i, c in enumerate(text))


def pairs(rows: Iterable[tuple[str, str]], indent: str = "  ") -> list[str]:
    """Labelled values, the labels padded to one column and each value wrapped beside it."""
    rows = [(k, v) for k, v in rows if v != ""]
    width = max((len(k) for k, _ in rows), default=0)
    room = max(24, WIDTH - len(indent) - width - 2)
    out = []
    for k, v in rows:
        first, *rest = wrap(v, room) or [""]
        out.append(f"{indent}{k:<{width}}  {first}")
        out += [f"{indent}{'':<{width}}  {line}" for line in rest]
    return out


def table(head: Sequence[str], rows: Iterable[Sequence[str]], align: str = "", sep: int = 2):
    """Columns as nccl-tests prints them: a header cell may hold its unit on a second line
    ("busbw\n(GB/s)"); numbers to the right, the columns `align` marks "<" to the left."""
    rows = [list(map(str, r)) for r in rows]
    heads = [h.split("\n") for h in head]
    depth = max(len(h) for h in heads)
    heads = [[""] * (depth - len(h)) + h for h in heads]  # units line up on the last line
    cols = list(zip(*rows)) if rows else [()] * len(heads)  # no rows: the header's widths
    widths = [max(len(x) for x in [*h, *col]) for h, col in zip(heads, cols, strict=True)]
    sides = (align + ">" * len(head))[: len(head)]

    def line(cells) -> str:
        out = [f"{c:{s}{w}}" for c, s, w in zip(cells, sides, widths, strict=True)]
        return (" " * sep).join(out).rstrip()

    return [line(h) for h in zip(*heads)] + [line(r) for r in rows]


def number(x: float) -> str:
    """A value as a reader reads it: whole numbers with separators, others to 4 digits."""
    if isinstance(x, bool):
        return yes(x)
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{x:,.0f}"
    return fmt.sig(x, 4)


def vector(xs: Sequence[float], width: int = VECTOR_WIDTH) -> str:
    """The values of a vector that fit `width`, and how many there are: "1, 2, ... (13 values)"."""
    texts = [number(x) for x in xs]
    shown, used = 0, 0
    while shown < len(texts) and used + len(texts[shown]) + 2 <= width:
        used += len(texts[shown]) + 2
        shown += 1
    if shown == len(texts):
        return ", ".join(texts)
    return ", ".join(texts[: max(shown, 1)]) + f", ... ({len(texts):,} values)"


def yes(flag: bool | None) -> str:
    return "not printed" if flag is None else ("yes" if flag else "no")


def known(value) -> str:
    """A figure a log may not print."""
    return "?" if value is None else str(value)


def rate(gbps: float | None) -> str:
    """A bandwidth in GB/s (1e9 B/s), as nccl-tests prints it."""
    return "-" if gbps is None else f"{gbps:,.1f} GB/s"


def us(x: float) -> str:
    """A time in µs to two decimals, a table's cell."""
    return f"{x:,.2f}"


def servers(gpus: int, per: int) -> str:
    """ "8 GPUs (2 servers of 4)", or "4 GPUs in one server"."""
    n = gpus // per if per else 1
    return f"{gpus:,} GPUs in one server" if n == 1 else f"{gpus:,} GPUs ({n:,} servers of {per})"


def unbroken(text: str) -> str:
    """A name kept on one line when wrapped ("H100 SXM")."""
    return text.replace(" ", NBSP)


def model(key: str) -> str:
    """A model by its name, as calc and presets show it ("GPT-2 small" for gpt2)."""
    return key if key == "custom" else unbroken(calculator.model_label(key))


def labels(widget: str) -> dict[str, str]:
    """The readouts' labels a widget declares, by key: one wording on the page and here."""
    w = REGISTRY[widget]
    out = dict(w.headline)
    for group in w.readouts.values():
        out |= dict(group)
    return out


# ---- the teaching models: simulate, cost, busbw --------------------------------------------------


def simulate(r: dict) -> str:
    per = r["gpus_per_node"]
    sent, links = r["bytes_sent_per_gpu"], r["bytes_sent_per_gpu_by_link"]
    lines = [
        title(
            f"{r['algorithm']} all-reduce of {r['length']:,} {_dtype(r['dtype'])} elements on "
            f"{servers(r['gpus'], per)}, message by message"
        ),
        *pairs(
            [
                ("exact sum", vector(r["target"])),
                ("GPU 0's result", vector(r["results"][0])),
                ("equals the exact sum", _exact(r)),
                ("same bits on every GPU", yes(r["identical_on_all_gpus"])),
                ("steps", f"{r['steps']:,} ({r['network_steps']:,} across servers)"),
                ("messages", f"{r['messages']:,}"),
                *records.block(simulation.RECORD, r, ["time_s"]).values(),
                (
                    "across servers",
                    f"{number(r['bytes_inter_node'])} B in all; "
                    f"{number(r['bytes_per_nic_max'])} B through the busiest card",
                ),  # fmt: skip
                ("trace", f"{len(r['trace'])} steps, with --json" if "trace" in r else ""),
            ]
        ),
        "",
        *table(
            ["GPU", "sent\n(B)", "in a server\n(B)", "across servers\n(B)"],
            (
                [str(g), number(s), number(k["intra"]), number(k["inter"])]
                for g, (s, k) in enumerate(zip(sent, links, strict=True))
            ),  # fmt: skip
        ),
    ]
    return "\n".join(lines)


def _dtype(name: str) -> str:
    return "int32" if name == "int" else name


def _exact(r: dict) -> str:
    if r["matches_target"]:
        return "yes"
    return f"no: at most {number(r['max_ulp_error'])} ulp off"


def cost(r: dict) -> str:
    """The whiteboard model's answer: its record's block, then the steps, bytes and formula."""
    got = records.block(costs.RECORD, r, [q.key for q in costs.RECORD.fields])
    head = (
        f"{r['algorithm']} all-reduce of {fmt.nbytes(r['bytes'])} per GPU on "
        f"{servers(r['gpus'], r['gpus_per_node'])}, teaching model (alpha-beta)"
    )
    across = (
        f"{fmt.nbytes(r['bytes_inter_node'])} in all; "
        f"{fmt.nbytes(r['bytes_per_nic_max'])} through the busiest card"
    )
    rows = [
        # a bandwidth is None where nothing is sent: "-", as nccl-tests prints it
        *(got.get(k, (costs.RECORD.label(k), "-")) for k in ("time_s", "algbw_GBps", "busbw_GBps")),
        ("steps", f"{r['steps']:,} ({r['network_steps']:,} across servers)"),
        *(got[k] for k in ("bytes_sent_per_gpu_max",) if k in got),
        ("across servers", across),
        ("formula", formula(r["formula"])),
    ]
    return "\n".join([title(head), *pairs(rows)])


def busbw(r: dict) -> str:
    """nccl-tests' two bandwidths, from busbw's record, each with how it is counted."""
    rec, c, n = costs.BANDWIDTHS, r["collective"], r["gpus"]
    got = records.block(rec, r, ["algbw_GBps", "busbw_GBps"], {
        "algbw_GBps": "  (size / time)",
        "busbw_GBps": f"  (algbw x {records.text(rec, r, 'factor')}, nccl-tests' factor for {c} "
                      f"on {n:,} GPUs)",
    })  # fmt: skip
    head = (
        f"{c} of {records.text(rec, r, 'bytes')} on {n:,} GPUs in "
        f"{records.text(rec, r, 'time_us')}, as nccl-tests counts it"
    )
    return "\n".join([title(head), *pairs(got.values())])


# ---- DDP: buckets, ddp -------------------------------------------------------------------------


def buckets(r: dict) -> str:
    lines = [
        title(
            "DDP's buckets, in the order they are all-reduced (parameters numbered in model order)"
        ),
        *pairs(
            [
                ("first bucket's cap", fmt.binary_bytes(r["first_bucket_bytes"])),
                ("cap of the others", fmt.binary_bytes(r["bucket_cap_bytes"])),
            ]
        ),
        "",
        *table(
            ["bucket", "size", "parameters"],
            (
                [str(i + 1), fmt.binary_bytes(b), vector(ids, 60)]
                for i, (ids, b) in enumerate(zip(r["buckets"], r["bucket_bytes"], strict=True))
            ),
            align=">><",
        ),  # fmt: skip
    ]
    return "\n".join(lines)


def ddp(r: dict) -> str:
    """DDP's record as one block (one time unit, each time with its source), its buckets'
    timeline and the sweep as tables, each time column in one unit named in its head."""
    rec = ddp_engine.RECORD
    got = records.block(rec, r, [q.key for q in rec.fields])
    lines = [
        title(
            f"{model(r['model'])} ({r['params']:,} parameters) under DDP on "
            f"{servers(r['gpus'], r['gpus_per_node'])}, {unbroken(r['gpu'])}; "
            f"{r['batch']:,} samples per GPU ({r['sample']})"
        ),
        *pairs(
            [
                *(got[k] for k in ("gradient_bytes", "first_bucket_bytes", "bucket_cap_bytes")),
                ("buckets", f"{len(r['buckets']):,}"),
                (
                    "all-reduces timed by",
                    f"{records.named(ddp_engine._timed_by(r))}: {r['algorithm']}",
                ),
                *(got[k] for k in ("backward_s", "allreduce_total_s", "comm_end_s", "exposed_s")),
                *_best(r, got),
            ]
        ),
        "",
    ]
    heads, cells = records.columns(
        [records.Column("bucket", records.AS_IS, lambda ib: str(ib[0] + 1)),
         records.Column("tensors", records.AS_IS, lambda ib: str(ib[1]["tensors"])),
         records.Column("size", records.BINARY, lambda ib: ib[1]["bytes"]),
         *(records.Column(head, records.TIME, lambda ib, k=k: ib[1][k])
           for head, k in (("ready", "ready_s"), ("start", "start_s"), ("end", "end_s"))),
         records.Column("algorithm", records.AS_IS, lambda ib: _algo(ib[1]))],
        list(enumerate(r["bucket_timeline"])),
    )  # fmt: skip
    lines += table(heads, cells, align=">>>>>><")
    if "sweep" in r:
        heads, cells = records.columns(
            [records.Column("cap\n(MiB)", records.AS_IS, lambda s: fmt.sig(s["bucket_mb"], 3)),
             records.Column("buckets", records.AS_IS, lambda s: str(s["buckets"])),
             records.Column("exposed", records.TIME, lambda s: s["exposed_s"]),
             records.Column("all-reduces", records.TIME, lambda s: s["allreduce_total_s"])],
            r["sweep"],
        )  # fmt: skip
        lines += ["", _swept_first(r), *table(heads, cells)]
    return "\n".join(lines)


def _best(r: dict, got: dict) -> list[tuple[str, str]]:
    """The least exposed time over every cap, under the record's label, after the cap with every
    digit it holds (the shortest decimal that gives its buckets: one digit fewer may give
    others), when the answer has a sweep."""
    if "best_bucket_mb" not in r:
        return []
    cap = f"{fmt.sig(r['best_bucket_mb'], 12)} MiB (the least exposed of every cap)"
    return [(ddp_engine.BEST_CAP, cap), got["best_exposed_s"]]


def _swept_first(r: dict) -> str:
    first = r["sweep_first_bucket_bytes"]
    if first is None:
        return "the bucket cap swept, the first bucket at each cap (PyTorch 2.4 and later)"
    return f"the bucket cap swept, the first bucket {fmt.binary_bytes(first)}"


def _algo(b: dict) -> str:
    return f"{b['algorithm']}/{b['protocol']}" if "algorithm" in b else "ring"


# ---- your cluster: calc, presets ---------------------------------------------------------------


def calc(r: dict) -> str:
    """The calculator's record as one block (every time in one unit, each with its source), then
    the teaching models as a column in one unit (records: the page's readouts read the same)."""
    rec, mem = calculator.RECORD, r["memory"]
    got = records.block(rec, r, [q.key for q in rec.fields], {
        "lower_bound_s": f", set by {r['lower_bound_limit']}",
        "tokens_per_gpu": " (assumed)",
        "mfu": f" of {number(r['peak_tflops'])} TFLOP/s (assumed)",
    })  # fmt: skip
    rows = [
        *(got[k] for k in ("allreduce_s", "share_no_overlap", "share_with_overlap") if k in got),
        ("algorithm and protocol", _calc_algorithm(r)),
        *(got[k] for k in ("nccl_time_s",) if k in got),
        ("how close published runs come", _band(r.get("nccl_band"))),
        *(got[k] for k in ("algbw_GBps", "busbw_GBps", "gradient_bytes", "lower_bound_s",
                           "compute_s", "backward_s", "exposed_s", "buckets", "tokens_per_gpu",
                           "mfu", "nic_GBps", "intra_GBps_used") if k in got),
        (memory.MODEL_STATES, _memory(mem["bytes_per_gpu"], mem["gpu_bytes"], mem["fits"])),
        ("sharded over the GPUs",
         _memory(mem["sharded_bytes_per_gpu"], mem["gpu_bytes"], mem["sharded_fits"])),
    ]  # fmt: skip
    lines = [
        title(
            f"{unbroken(r['model_label'])} ({r['params']:,} parameters) on "
            f"{servers(r['gpus'], r['gpus_per_node'])}, {unbroken(r['gpu'])}; {r['grad_dtype']} "
            "gradient"
        ),
        *pairs(rows),
    ]
    times = r.get("algorithm_times_s") or {}
    if times:
        heads, cells = records.columns(
            [records.Column("algorithm", records.TEXT, lambda kv: kv[0]),
             records.Column(rec.label("algorithm_times_s"), records.TIME, lambda kv: kv[1])],
            list(times.items()),
        )  # fmt: skip
        lines += [
            "",
            f"the teaching models ({records.named(WHITEBOARD)}), at line rate with no latency",
        ]
        lines += table(heads, cells, align="<")
    return "\n".join(lines)


def _calc_algorithm(r: dict) -> str:
    if r["algorithm"] == "nccl":
        return f"NCCL {r['nccl_version']} picks {r['nccl_algorithm']}/{r['nccl_protocol']}"
    return r["algorithm"] + ("" if r["algorithm"] == r["algorithm_asked"] else " (auto)")


def _band(b: dict | None) -> str:
    if not b:
        return ""
    return bands.sentence(b)


def _memory(need: float, have: float, fits: bool) -> str:
    verdict = "fits" if fits else "does not fit"
    return f"{records.gib(need)} of {records.gib(have)}: {verdict}"


def presets(r: dict) -> str:
    """Each kind of preset as a table of its record's columns, each unit named in its head."""
    gpu, of = calculator.PRESET_GPU, records.Column.of
    name = records.Column("name", records.TEXT, lambda x: x["name"])
    lines = ["models"]
    lines += table(*records.columns([
        name,
        records.Column("key", records.TEXT, lambda m: m["key"]),
        of(calculator.PRESET_MODEL, "params"),
    ], r["models"]), align="<<")  # fmt: skip
    lines += ["", "GPUs"]
    lines += table(*records.columns([
        name,
        of(gpu, "link_gbps", unit="GB/s"),
        of(gpu, "peak_bf16_tflops", unit="TFLOP/s"),
        of(gpu, "memory_gb", unit="GiB"),
        of(gpu, "gpus_per_node"),
    ], r["gpus"]), align="<")  # fmt: skip
    lines += ["", "network cards"]
    lines += table(
        *records.columns([name, of(calculator.PRESET_NETWORK, "GBps", unit="GB/s")], r["networks"]),
        align="<",
    )
    lines += ["", "sources"]
    for group in ("models", "gpus", "networks"):
        for item in r[group]:
            lines += prose(f"  {item['name']}: {item['source']}", "  ")
    return "\n".join(lines)


# ---- NCCL: nccl, nccl-tests, nccl-debug ---------------------------------------------------------


def nccl(result: dict) -> str:
    """nccl-tests' columns for NCCL's pick at each size: the fitted time and NCCL's own."""
    s, row = result["system"], api.NCCL_ROW
    lines = [
        title(f"NCCL {result['nccl_version']} model, {result['collective']} on "
              f"{servers(s['gpus'], s['gpus_per_node'])}, {unbroken(s['gpu'])}; "
              f"{s['nics_per_node']} x {s['nic_Gbps']:g} Gb/s cards per server, {s['cpu']} hosts"),
        *table(*records.columns([
            records.Column("size\n(B)", records.AS_IS, lambda r: str(r["bytes"])),
            records.Column("algorithm", records.AS_IS, lambda r: r["algorithm"]),
            records.Column("proto", records.AS_IS, lambda r: r["protocol"]),
            records.Column.of(row, "time_us", unit="us", decimals=2),
            records.Column("busbw\n(GB/s)", records.AS_IS, lambda r: f"{r['busbw_GBps']:.1f}"),
            records.Column.of(row, "nccl_time_us", unit="us", decimals=2),
            records.Column("NCCL\nbusbw\n(GB/s)", records.AS_IS,
                           lambda r: f"{r['nccl_busbw_GBps']:.1f}"),
            records.Column("band", records.AS_IS, lambda r: bands.short(r["band"])),
        ], result["rows"]), align="><<>>>><", sep=1),
    ]  # fmt: skip
    klass = result["rows"][0]["band"]["class"]
    lines += prose(
        "busbw as nccl-tests defines it; time: the fitted time, as published runs of that size "
        "measure it; NCCL time and busbw: NCCL's estimate, which its tuning code picks on."
    )
    lines += prose(
        f"band: how far published runs of this class ({klass}) come from the time at that "
        f"size, each cluster predicted by a fit on the others: the figure nine rows in ten "
        f"come within, and their median; unchecked: {bands.UNCHECKED} (with one cluster of "
        f"its kind, what that cluster did)."
    )
    return "\n".join(lines)


def nccl_tests(result: dict) -> str:
    """Both fits' rms, then per row: measured busbw, the regime and NCCL fit's busbw, and with
    --gpu NCCL's prediction and measured / predicted (logs/explain's records, nccl-tests'
    columns: the unit in the head, bandwidths to two decimals)."""
    nf, ab = result.get("nccl_fit"), result.get("fit")
    lines = [f"all_reduce_perf on {result['gpus']} GPUs: {len(result['rows'])} rows"]
    if ab:
        lines.append(f"alpha-beta fit: rms {_rms(explain.ALPHA_BETA, ab)} over all rows")
    if not nf:
        m = explain.MEASURED
        lines += table(*records.columns([
            records.Column.of(m, "size_bytes", unit="B", decimals=0),
            records.Column.of(m, "time_us", unit="us", decimals=2),
            *(records.Column.of(m, k, unit="GB/s", decimals=2)
              for k in ("algbw_GBps", "busbw_GBps")),
        ], result["rows"]))  # fmt: skip
        return "\n".join(lines)
    rec = explain.NCCL_FIT
    fit = records.block(rec, nf, [q.key for q in rec.fields])
    lines += [
        f"NCCL model fit: rms {fit['rms_rel_error'][1]} over rows from {fit['min_bytes'][1]}",
        f"  {rec.label('alpha_beta_rms_rel_error')} {_rms(rec, nf, 'alpha_beta_rms_rel_error')}",
        "  " + ", ".join(f"{label} {value}" for label, value in
                         (fit["busbw_GBps"], fit["latency_us"])),
    ]  # fmt: skip
    pred = {r["bytes"]: r for r in (result.get("prediction") or {}).get("rows", [])}
    row, predicted = explain.FIT_ROW, explain.PREDICTED
    cols = [
        records.Column.of(row, "bytes", unit="B", decimals=0),
        records.Column.of(row, "measured_busbw_GBps", unit="GB/s", decimals=2),
        records.Column.of(row, "regime"),
        records.Column.of(row, "fitted_busbw_GBps", unit="GB/s", decimals=2),
    ]
    if pred:
        cols += [
            records.Column.of(predicted, "busbw_GBps", unit="GB/s", decimals=2),
            records.Column.of(predicted, "ratio", decimals=2),
        ]
        cols[-2:] = [c.on(lambda r: pred.get(r["bytes"], records.NOTHING)) for c in cols[-2:]]
    above = records.Column("", records.TEXT, lambda r: "above line rate" * r["above_line_rate"])
    lines += table(*records.columns([*cols, above], nf["rows"]),
                   align=">><>" + ">" * (len(cols) - 4) + "<")  # fmt: skip
    if pred:
        lines += prose(
            f"{predicted.label('busbw_GBps')}: NCCL's pick, its busbw by the "
            f"{predicted['busbw_GBps'].source.name}; ratio: measured / predicted busbw"
        )
    return "\n".join(lines)


def _rms(rec: records.Record, fit: dict, key: str = "rms_rel_error") -> str:
    """A fit's rms error; none when too few rows to fit."""
    return "none (too few rows)" if fit[key] is None else records.text(rec, fit, key)


def topology(r: dict) -> str:
    """The system, each graph's search result, then the first channels' rings and trees."""
    sy = r["system"]
    lines = [
        f"{r['servers']} server{'s' if r['servers'] > 1 else ''} of {r['gpus_per_server']} GPUs: "
        f"{sy['cpus']} CPUs, {sy['pci_switches']} PCI switches, {len(sy['nets'])} network "
        f"devices, NVSwitch {yes(sy['nvswitch'])}",
        f"{r['coll_channels']} channels after NCCL's duplication",
        "",
    ]
    graphs = [(name, g) for name, g in r["graphs"].items() if g]
    lines += table(
        ["graph", "pattern", "channels", "bw intra\n(GB/s)", "bw inter\n(GB/s)", "type",
         "same\nchannels"],
        ([name, g["pattern"], str(g["nChannels"]), f"{g['bwIntra']:g}", f"{g['bwInter']:g}",
          f"{g['typeIntra']}/{g['typeInter']}", yes(bool(g["sameChannels"]))]
         for name, g in graphs),
        align="<<>>><<",
    )  # fmt: skip
    lines.append("")
    for c in r["channels"][:4]:
        ring = " ".join(map(str, c["ring"]))
        if len(ring) > 60:
            ring = ring[:56].rsplit(" ", 1)[0] + " ..."
        lines.append(f"channel {c['channel']:>2}: ring {ring}")
        lines.append(f"            tree roots {', '.join(map(str, c['tree']['roots']))}")
        if c.get("nics"):
            recv, send = c["nics"]["recv"], c["nics"]["send"]
            via = f" via GPU {send['pxn_via']} (PXN)" if send["pxn_via"] is not None else ""
            lines.append(
                f"            in by {recv['name'] or recv['net']} at rank {recv['rank']}, out by "
                f"{send['name'] or send['net']} at rank {send['rank']}{via}"
            )
    if len(r["channels"]) > 4:
        lines.append(f"... {len(r['channels']) - 4} more channels (--json has them all)")
    if r.get("reasons"):  # the search's reasons (topology/explain.py), channel 0's path
        lines += ["", "why:"]
        for text in [*r["reasons"], *r["channels"][0].get("why", [])]:
            lines += prose(f"- {text}")
    if r.get("log"):
        lg = r["log"]
        lines += ["", *prose(
            f"the log's own search (NCCL {lg['nccl_version'] or 'version not printed'}, "
            f"{lg['servers']} server{'s' if lg['servers'] > 1 else ''}): "
            f"{lg['fields_equal']} of {lg['fields']} fields and {lg['channels_equal']} of "
            f"{lg['channels']} channel lines equal to the port's"
            + (f"; differ: {', '.join(lg['differences'])}" if lg["differences"] else "")
        )]  # fmt: skip
    return "\n".join(lines)


def nccl_debug(result: dict) -> str:
    """The topology, a few rings and trees, each row's algorithm, then the findings."""
    r, net = result, result["network"]
    lines = [
        f"NCCL {r['nccl_version'] or '(version not printed)'}: {known(r['ranks'])} ranks, "
        f"{known(r['nodes'])} servers of {known(r['gpus_per_node'])} GPUs",
        *prose(
            f"network: {net['transport'] or 'not printed'}, {known(net['cards'])} devices per "
            f"server, GPUDirect RDMA {yes(net['gpudirect_rdma'])}; NVLS "
            f"{r['nvls']['state']}; CollNet {r['collnet']['state']}; "
            f"{known(r['coll_channels'])} channels"
        ),
    ]
    for c in r.get("communicators") or []:  # a log of several: each one on its own
        run = f", all_reduce_perf run {c['run']} ({len(c['rows'])} rows)" if c["run"] else ""
        lines.append(
            f"communicator of {known(c['ranks'])} ranks: {known(c['nodes'])} servers, "
            f"{known(c['coll_channels'])} channels{run}"
        )
    for c in r["channels"][:4]:
        ring = " ".join(map(str, c["ring"])) if c["ring"] else "(not printed)"
        ring += " ... (cut)" if c["ring_truncated"] else ""
        roots = c["tree"]["roots"] if c["tree"] else None
        tree = f"; tree roots {', '.join(map(str, roots))}" if roots else ""
        lines.append(f"channel {c['channel']:>2}: ring {ring}{tree}")
    rows = [row for row in r["rows"] if row.get("algorithm")]
    ran = any(row.get("nccl_ran") for row in rows)  # the column only when a log printed it
    if rows:
        m = explain.MEASURED
        lines.append("")
        lines += table(*records.columns([
            records.Column.of(m, "size_bytes", unit="B", decimals=0),
            records.Column.of(m, "busbw_GBps", unit="GB/s", decimals=2),
            records.Column("NCCL's pick", records.TEXT,
                           lambda row: f"{row['algorithm']}/{row['protocol']}"),
            *([records.Column("NCCL ran", records.TEXT, _ran)] if ran else []),
        ], rows), align=">><<")  # fmt: skip
    if r["calls"] or r["findings"]:
        lines.append("")
    for c in r["calls"][:20]:
        who = c["collective"] or "?"
        lines.append(f"call {who} {c['bytes']:,} B: {c['algorithm']}/{c['protocol']}")
    for f in r["findings"]:
        lines += prose(f"[{f['code']}] {f['message']}")
        if f["evidence"]:
            lines += prose(f"    evidence: {f['evidence']}", "    ")
    return "\n".join(lines)


def _ran(row: dict) -> str:
    ran = row.get("nccl_ran")
    return f"{ran['algorithm']}/{ran['protocol']}" if ran else "-"


# ---- shards, orders ----------------------------------------------------------------------------


def shard(result: dict) -> str:
    """One row per strategy: memory per GPU, bytes sent, time, whether it fits."""
    r = result
    lines = [
        title(
            f"{model(r['model'])} ({r['params']:,} parameters) on "
            f"{servers(r['gpus'], r['gpus_per_node'])}, {unbroken(r['gpu'])}; collectives timed by "
            f"{_comm(r['comm_model'])}"
        ),
        *table(
            *records.columns(
                [
                    records.Column("strategy", records.AS_IS, lambda s: s["label"]),
                    records.Column(
                        "memory\n(GiB)",
                        records.AS_IS,
                        lambda s: f"{s['memory_bytes_per_gpu']['total'] / hardware.GIB:,.2f}",
                    ),
                    records.Column(
                        "sent\n(GB)",
                        records.AS_IS,
                        lambda s: f"{s['comm_bytes_per_gpu'] / 1e9:,.2f}",
                    ),
                    records.Column("comm", records.TIME, lambda s: s["comm_s"]),
                    records.Column("fits", records.AS_IS, lambda s: yes(s["fits"])),
                ],
                list(r["strategies"].values()),
            ),
            align="<",
        ),  # fmt: skip
        *prose(
            "memory: model states per GPU against the GPU's "
            f"{fmt.binary_bytes(r['gpu_memory_bytes'])} (no activations); sent: bytes each GPU "
            "sends per step"
        ),
    ]
    for name, o in r.get("overlap", {}).items():
        lines += prose(
            f"{shardcost.hides(name)} "
            f"{number(math.ceil(o['critical_tokens_per_gpu']))} tokens per GPU per step"
        )
    return "\n".join(lines)


def _comm(model: str) -> str:
    return (
        "the fitted time of NCCL's choice"
        if model == "nccl"
        else "a single flat ring (the whiteboard model)"
    )


def orders(r: dict) -> str:
    """The bucket and NCCL's pick (its time the fitted time), then each method's figures as
    columns of its record, the ulps under their unit."""
    n, rec, method = r["nccl"], orders_engine.RECORD, orders_engine.METHOD
    pick = records.block(orders_engine.PICK, n, ["time_us"])["time_us"][1]
    bucket = records.text(rec, r, "bytes")
    lines = [
        title(
            f"the same {r['dtype']} sum on {r['gpus']} GPUs, {r['length']:,} elements, in "
            "each method's order"
        ),
        *pairs(
            [
                (rec.label("bytes"), f"{bucket}, the gradient at element {r['offset']:,}"),
                ("NCCL's pick", f"{n['algorithm']}/{n['protocol']} (NCCL {n['version']}), {pick}"),
                ("summed in", f"the {n['method'] or 'unmodelled'} order"),
                ("exact sum, rounded", vector(r["exact"])),
            ]
        ),  # fmt: skip
        "",
        *table(*records.columns([
            records.Column("method", records.TEXT, lambda m: m["name"]),
            records.Column.of(method, "ranks_agree", "same on\nevery GPU"),
            records.Column.of(method, "max_ulp", unit="ulp"),
            records.Column.of(method, "mean_ulp", unit="ulp"),
            records.Column("GPU 0's\nresult", records.TEXT, lambda m: vector(m["result"], 24)),
        ], [m | {"name": k} for k, m in r["methods"].items()]), align="<"),
    ]  # fmt: skip
    return "\n".join(lines)


# ---- files: figure, exercises export -----------------------------------------------------------


def figure(r: dict) -> str:
    return f"{r['out']} written: {r['format'].upper()}, {fmt.binary_bytes(r['bytes'])}"


def export(r: dict) -> str:
    """Nothing when the bank went to stdout: a line after it would corrupt the file."""
    return "" if r["out"] == "-" else f"{r['questions']} questions written to {r['out']}"
