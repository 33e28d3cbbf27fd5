"""The command line: `allreduce-explainer simulate|cost|busbw ...`, tables or --json.

A subcommand that calls an api function takes its flags from that function's spec (SPECS): the
flag, its type, default, choices and help come from each Param, so a ParamError names the flag
that set its field. Bad arguments end with status 2 and one line naming the argument, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from . import api
from .catalog import hardware
from .errors import ParamError
from .logs import explain
from .params import REQUIRED, Param
from .performance import bands
from .training import memory

ADAM_TEXT = " + ".join(map(str, memory.BYTES_PER_PARAM.values()))  # 2 + 2 + 12

SPECS = {  # each subcommand that calls an api function, and that function's spec
    "simulate": api.SIMULATE,
    "cost": api.ESTIMATE,
    "busbw": api.BUSBW,
    "buckets": api.BUCKETS,
    "ddp": api.DDP,
    "calc": api.CALC,
    "shard": api.SHARD,
    "nccl-tests": api.NCCL_TESTS,
    "nccl-debug": api.NCCL_DEBUG,
    "orders": api.ORDERS,
}

PROG = "allreduce-explainer"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, status 2
        self.exit(2, f"{PROG}: error: {message}\n")


def _number(text: str) -> float:
    """A number in any notation Python reads (14e9, 1.5, 8)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _whole(text: str) -> int:
    value = _number(text)
    if value != int(value):
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return int(value)


def _type(p: Param):
    """What argparse reads the flag's text as, from the kind (a choice of numbers: a number)."""
    if p.kind == "int" or (p.kind == "choice" and all(isinstance(v, int) for v in p.values())):
        return _whole
    return _number if p.kind == "float" else None


def _help(p: Param, required: bool = False) -> str:
    """The label, then the unit (unless the label says it) and the default: "GPUs (default 4)"."""
    notes = [p.unit] if p.unit not in p.label else []
    if not required and all(p.default is not v for v in (None, REQUIRED, False)):
        notes.append(f"default {_text(p.default)}")
    text = p.label + (f" ({'; '.join(notes)})" if notes else "")
    return text.replace("%", "%%")


def _text(value) -> str:
    """A default as the help prints it: 16,384, 0.4, gpt2."""
    if isinstance(value, float):
        return f"{value:g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _add(parser, p: Param, required: bool = False) -> None:
    """One flag (or positional argument) from its Param; the value lands under the Param's name."""
    kw: dict = {"help": _help(p, required)}
    if p.kind == "bool":  # a switch: off unless given
        assert p.default is False, p.name
        parser.add_argument(p.cli_flag, dest=p.name, action="store_true", **kw)
        return
    kw |= {"type": _type(p)}
    if p.choices:
        kw["choices"] = p.values()
    if p.metavar:
        kw["metavar"] = p.metavar
    if p.cli_flag.startswith("-"):
        kw |= {"dest": p.name, "default": None if p.default is REQUIRED else p.default}
        kw["required"] = required or p.default is REQUIRED
    parser.add_argument(p.cli_flag, **kw)


def _flags(parser, command: str, required=(), skip=()) -> None:
    """The subcommand's flags from its api spec, in the spec's order: all but `skip` and those
    only a caller of the library sets (a Param without a label: the edited values, timing)."""
    for p in SPECS[command].values():
        if p.name not in skip and p.label:
            _add(parser, p, p.name in required)


def _json(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _flag_of(command: str, field: str) -> str:
    """The flag that set a ParamError's field: the spec's, else --field (the hand-written ones)."""
    s = SPECS.get(command, {})
    return s[field].cli_flag if field in s else "--" + field.replace("_", "-")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="All-reduce simulated on real vectors, and its cost.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("simulate", help="run an all-reduce message by message on real vectors")
    _flags(s, "simulate")
    s.add_argument(
        "--values",
        metavar="FILE|-",
        help="JSON array of N arrays, the per-GPU gradients (- reads stdin)",
    )
    _json(s)

    c = sub.add_parser("cost", help="closed-form alpha-beta time of one all-reduce")
    _flags(c, "cost")
    _json(c)

    b = sub.add_parser("busbw", help="nccl-tests' algbw and busbw from one measured time")
    _flags(b, "busbw")
    _json(b)
    _ddp_parsers(sub)
    _cluster_parsers(sub)
    _shard_parser(sub)
    _orders_parser(sub)
    _figure_parser(sub)
    _nccl_parser(sub)
    _exercises_parser(sub)
    return p


# ---- exercises export: question banks for course platforms ------------------------------------


def _exercises_parser(sub) -> None:
    from .exercises import export

    e = sub.add_parser("exercises", help="the generated exercises, for course platforms")
    esub = e.add_subparsers(dest="action", required=True, parser_class=_Parser)
    x = esub.add_parser(
        "export",
        help="a question bank: Moodle XML, QTI (a .zip Canvas imports), GIFT or CSV",
        description="COUNT problems of each kind, seeds SEED, SEED+1, ...; each with its answer "
        "and tolerance as the site checks them, the worked solution as feedback and its link.",
    )
    x.add_argument("--format", required=True, choices=export.FORMATS)
    x.add_argument("--kinds", required=True, help="exercise kinds, comma-separated")
    x.add_argument("--seed", type=_whole, default=0, help="the first seed (default 0)")
    x.add_argument("--count", type=_whole, default=1, help="problems per kind (default 1)")
    x.add_argument("--out", required=True, metavar="FILE", help="the file to write (- for stdout)")
    x.add_argument("--site", default="", metavar="URL", help="the site's address, for the links")
    x.add_argument(
        "--places",
        metavar="FILE",
        help="the site's banks/places.json (built with the site): each kind's page and objective",
    )


def _read_places(source: str | None) -> dict:
    from .exercises.export import Place

    if not source:
        return {}
    try:
        with open(source, encoding="utf-8") as f:
            data = json.load(f)
        return {k: Place(**v) for k, v in data.items()}
    except OSError as e:
        raise ParamError("places", f"cannot read {source}: {e.strerror}") from None
    except (ValueError, TypeError, AttributeError):
        raise ParamError(
            "places", "must be a JSON object: kind -> {page, slug, objective}"
        ) from None


def _export(a) -> int:
    from .exercises import export

    site = a.site if not a.site or a.site.endswith("/") else a.site + "/"
    qs = export.questions(a.kinds, a.seed, a.count, _read_places(a.places), site)
    data = export.export(a.format, qs)
    if a.out == "-":
        sys.stdout.buffer.write(data)
        return 0
    try:
        with open(a.out, "wb") as f:
            f.write(data)
    except OSError as e:
        raise ParamError("out", f"cannot write {a.out}: {e.strerror}") from None
    print(f"{len(qs)} questions written to {a.out}")
    return 0


# ---- figure: a widget's chart as SVG or PNG ---------------------------------------------------


def _figure_parser(sub) -> None:
    f = sub.add_parser(
        "figure",
        help="write a widget's chart as SVG or PNG, in the site's theme (needs the [figures] "
        "extra and a Chrome or Chromium)",
        description="Any other --name value is the widget's parameter (e.g. --gpus 64); values "
        "are read as JSON when they can be (numbers, true, lists), else as text.",
    )
    f.add_argument("widget", metavar="WIDGET", help="a chart widget, e.g. scaling, latency")
    f.add_argument("--out", required=True, metavar="FILE.svg|FILE.png")
    f.add_argument("--theme", choices=("light", "dark"), default="light")
    f.add_argument("--figure", metavar="NAME", help="which chart, for a widget with several")
    f.add_argument("--title", help="the title (default: the y axis against the x axis)")
    f.add_argument("--width", type=_whole, default=960, help="pixels (default 960)")
    f.add_argument("--height", type=_whole, default=540, help="pixels (default 540)")


def _widget_params(extra: list[str]) -> dict:
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


def _figure(p: argparse.ArgumentParser, a, extra: list[str]) -> int:
    from . import figures

    fmt = a.out.rsplit(".", 1)[-1].lower() if "." in a.out else ""
    try:
        if fmt not in figures.FORMATS:
            raise ParamError("out", "must end in .svg or .png")
        if not 16 <= a.width <= 8000 or not 16 <= a.height <= 8000:
            raise ParamError("width" if not 16 <= a.width <= 8000 else "height",
                             "must be between 16 and 8000 pixels")  # fmt: skip
        fig = figures.widget_figure(a.widget, _widget_params(extra), a.figure)
        data = figures.render(figures.themed(fig, a.theme, a.title), fmt, a.width, a.height)
    except ParamError as e:
        flag = {"widget": "WIDGET", "figure": "--figure", "out": "--out"}.get(e.field)
        p.exit(2, f"{PROG}: error: argument {flag or '--' + e.field.replace('_', '-')}: "
                  f"{e.message}\n")  # fmt: skip
    except ImportError:
        p.exit(2, f"{PROG}: error: figure needs Plotly and Kaleido: pip install "
                  "'allreduce-explainer[figures]'\n")  # fmt: skip
    except Exception as e:  # Kaleido: no browser found, or the browser failed
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        p.exit(2, f"{PROG}: error: figure could not be drawn ({type(e).__name__}: {first}); "
                  "Kaleido needs Chrome or Chromium (apt-get install chromium)\n")  # fmt: skip
    try:
        with open(a.out, "wb") as out:
            out.write(data)
    except OSError as e:
        p.exit(2, f"{PROG}: error: argument --out: cannot write {a.out}: {e.strerror}\n")
    return 0


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size(text: str) -> int:
    """A size as all_reduce_perf's -b/-e read it: a number, or with K, M, G (powers of 1024)."""
    t = text.strip().upper().removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] else ""
    try:
        value = float(t[: len(t) - len(unit)]) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (8, 1K, 64M, 8G)") from None
    if not math.isfinite(value) or value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of bytes >= 1: {text!r}")
    return int(value)


def _size_range(text: str) -> list[int]:
    """MIN:MAX stepped by powers of two, as all_reduce_perf -b MIN -e MAX -f 2."""
    lo, sep, hi = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected MIN:MAX, got {text!r}")
    a, b = _size(lo), _size(hi)
    if a > b:
        raise argparse.ArgumentTypeError(f"MIN {a} is above MAX {b}")
    sizes = [a]
    while sizes[-1] * 2 <= b:
        sizes.append(sizes[-1] * 2)
    if len(sizes) > 64:
        raise argparse.ArgumentTypeError("more than 64 sizes")
    return sizes


def _nccl_parser(sub) -> None:
    from .nccl import ALGORITHMS, COLLECTIVES, NCCL_VERSION, PROTOCOLS
    from .nccl.constants import NET_OVERHEAD_US

    n = sub.add_parser(
        "nccl",
        help=f"NCCL {NCCL_VERSION}'s own time model: its algorithm and protocol, and the time",
        description="Every (algorithm, protocol) NCCL weighs for a call, the one it picks, NCCL's "
        "own time and the time published all_reduce_perf runs measure (the performance layer).",
    )
    n.add_argument("--gpus", type=_whole, required=True, metavar="N")
    n.add_argument("--gpus-per-node", type=_whole, metavar="G", help="default: min(N, 8)")
    n.add_argument(
        "--gpu", default=hardware.H100_SXM.name, metavar="NAME", help="A100, H100, H200 or B200"
    )
    n.add_argument(
        "--nic-gbps", type=_number, default=400.0, metavar="R", help="card rate (default 400)"
    )
    n.add_argument(
        "--nics-per-node", type=_whole, metavar="K", help="cards per server (default: one per GPU)"
    )
    n.add_argument(
        "--in-network-reduction",
        action="store_true",
        help="the network reduces (InfiniBand SHARP): NCCL's CollNet algorithms",
    )
    n.add_argument(
        "--cpu",
        default="intel",
        metavar="VENDOR",
        help=f"host CPU, {' or '.join(NET_OVERHEAD_US)} (default intel): across servers NCCL's "
        "LL limit and its network overhead per step differ",
    )
    size = n.add_mutually_exclusive_group(required=True)
    size.add_argument("--bytes", type=_size, metavar="B", help="one size: 8, 1K, 64M, 8G")
    size.add_argument("--sizes", type=_size_range, metavar="MIN:MAX", help="e.g. 8:8G, x2 steps")
    n.add_argument(
        "--algorithm", metavar="ALGO", help=f"force one, as NCCL_ALGO: {', '.join(ALGORITHMS)}"
    )
    n.add_argument(
        "--protocol", metavar="PROTO", help=f"force one, as NCCL_PROTO: {', '.join(PROTOCOLS)}"
    )
    n.add_argument("--collective", default="AllReduce", choices=COLLECTIVES)
    _add(n, api.NCCL_RELEASE)
    _add(n, api.GPUS_PER_PROCESS)
    _json(n)


def _nccl_run(a) -> dict:
    from . import nccl

    per_node = a.gpus_per_node or min(a.gpus, 8)
    system = nccl.System(
        a.gpu,
        a.gpus,
        per_node,
        a.nics_per_node or per_node,
        a.nic_gbps,
        a.in_network_reduction,
        a.cpu.lower(),
        a.nccl_version,
    )
    per_process = api.GPUS_PER_PROCESS.check(a.gpus_per_process)
    if per_process > per_node:
        raise ParamError(
            "gpus_per_process", f"one process drives GPUs of one server: at most {per_node}"
        )
    return nccl.sweep(
        a.collective, a.sizes or [a.bytes], system, a.algorithm, a.protocol, per_process
    )


def _nccl_table(result: dict) -> str:
    s = result["system"]
    head = (
        f"NCCL {result['nccl_version']} model, {result['collective']} on {s['gpus']} x {s['gpu']} "
        f"({s['nodes']} server(s) of {s['gpus_per_node']}, {s['nics_per_node']} x "
        f"{s['nic_Gbps']:g} Gb/s cards, {s['cpu']} hosts)"
    )
    lines = [
        head,
        f"{'bytes':>14} {'algorithm':<9} {'proto':<6} {'time_us':>11} {'busbw':>8}"
        f" {'nccl_time_us':>13} {'nccl_busbw':>10}  band",
    ]
    for r in result["rows"]:
        lines.append(
            f"{r['bytes']:>14} {r['algorithm']:<9} {r['protocol']:<6} {r['time_us']:>11.2f} "
            f"{r['busbw_GBps']:>8.1f} {r['nccl_time_us']:>13.2f} {r['nccl_busbw_GBps']:>10.1f}"
            f"  {bands.short(r['band'])}"
        )
    lines.append(
        "busbw in GB/s (nccl-tests' definition); time_us the fitted time (as published runs of "
        "that size measure), nccl_* NCCL's estimate (its tuning code's, which it picks on)"
    )
    klass = result["rows"][0]["band"]["class"]
    lines.append(
        f"band: how far published runs of this class ({klass}) come from time_us at that size, "
        f"median (worst), each cluster predicted by a fit on the others; unchecked: "
        f"{bands.UNCHECKED}"
    )
    return "\n".join(lines)


def _ddp_parsers(sub) -> None:
    k = sub.add_parser(
        "buckets",
        help="PyTorch DDP's steady-state gradient buckets for given parameter sizes",
        description="Gradients become ready in reverse model order; buckets are filled in that "
        "order and printed in the order they are all-reduced, as lists of parameter indices "
        "numbered in model order.",
    )
    _flags(k, "buckets")
    _json(k)

    d = sub.add_parser(
        "ddp",
        help="a real model under DDP: buckets, backward pass and exposed communication",
    )
    _flags(d, "ddp", required=("model", "gpus"))
    _json(d)


def _cluster_parsers(sub) -> None:
    """Your cluster: calc, presets, nccl-tests."""
    c = sub.add_parser(
        "calc",
        help="all-reduce time per step, bus bandwidth and share of a step for a model on a cluster",
        description="Defaults are stage 1's case: a BF16 gradient, H100 SXM servers of 8, one "
        f"{api.NIC_GBPS.default:g} Gb/s card per GPU, timed as NCCL would run it "
        f"(--algorithm {api.CALC['algorithm'].default}: "
        "NCCL's choice and its fitted time); --algorithm ring gives stage 1's single ring, "
        "bandwidth only (no latency).",
    )
    which = c.add_mutually_exclusive_group(required=True)
    _add(which, api.CALC["model"])
    _add(which, api.CALC["params"])
    _flags(c, "calc", required=("gpus",), skip=("model", "params"))
    _json(c)

    p = sub.add_parser("presets", help="the calculator's models, GPUs and network cards")
    _json(p)

    n = sub.add_parser(
        "nccl-tests",
        help="read all_reduce_perf output and fit latency and bus bandwidth to it",
    )
    _log_file(n)
    _flags(n, "nccl-tests", skip=("log",))
    _json(n)

    d = sub.add_parser(
        "nccl-debug",
        help="read NCCL_DEBUG=INFO output: version, servers, rings, trees, network, findings",
        description="Reads what NCCL prints at start-up under NCCL_DEBUG=INFO (and the tuning "
        "lines under NCCL_DEBUG_SUBSYS=INIT,TUNING), alone or mixed with all_reduce_perf "
        "output: nccl_version, ranks, nodes, gpus_per_node, network, nvls, collnet, channels "
        "[{channel, ring, tree}], calls [{collective, bytes, algorithm, protocol}], findings "
        "[{code, message, evidence}] and, with rows, each row's algorithm and protocol.",
    )
    _log_file(d)
    _flags(d, "nccl-debug", skip=("log",))
    _json(d)


def _log_file(p) -> None:
    """The log a command reads: a file's path, or - for stdin, within the size the page reads."""
    p.add_argument(
        "file",
        metavar="FILE|-",
        help=f"the output (- reads stdin); at most {explain.MAX_LOG_BYTES / 1e6:g} MB",
    )


def _shard_parser(sub) -> None:
    """Issue 14: memory, bytes and time per GPU of DDP, ZeRO-1/2/3 and HSDP."""
    s = sub.add_parser(
        "shard",
        help="memory and communication per GPU of DDP, ZeRO-1, ZeRO-2, ZeRO-3/FSDP and HSDP",
        description=f"Mixed-precision Adam: {ADAM_TEXT} bytes per parameter (ZeRO paper). "
        "memory_bytes_per_gpu is an object {params, grads, optimizer, total} in bytes; "
        "comm_bytes_per_gpu the bytes each GPU sends per step; comm_s NCCL's model's time "
        "(--comm-model ring: a single flat ring); overlap.zero3/hsdp.critical_tokens_per_gpu "
        "the tokens per GPU from which the collectives hide behind compute; fits "
        "compares the model states (no activations) with the GPU's memory in GiB.",
    )
    _flags(s, "shard", skip=("intra_latency_us", "inter_latency_us"))
    _json(s)


def _orders_parser(sub) -> None:
    o = sub.add_parser(
        "orders",
        help="the same sum in each method's order: serial, NCCL's ring and trees, NVLS",
        description="Each method's result per element, whether every GPU holds the same bits, "
        "and its distance in ulps from the exactly rounded sum (exact).",
    )
    _flags(o, "orders")
    o.add_argument(
        "--values",
        metavar="FILE|-",
        help="JSON array of N arrays, the per-GPU values (- reads stdin); else drawn from --seed",
    )
    _json(o)


def _read_values(source: str):
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


def _args(a, command: str) -> dict:
    """The api function's keyword arguments: the namespace's values of its spec's parameters."""
    return {name: getattr(a, name) for name in SPECS[command] if hasattr(a, name)}


def run(a) -> dict:
    if a.command in ("cost", "busbw"):
        return (api.estimate if a.command == "cost" else api.busbw)(**_args(a, a.command))
    if a.command == "simulate":
        values = _read_values(a.values) if a.values else None
        return api.simulate(**_args(a, "simulate") | {"values": values})
    if a.command == "orders":
        values = _read_values(a.values) if a.values else None
        return api.orders(**_args(a, "orders") | {"values": values})
    if a.command == "nccl-tests":
        return api.nccl_tests(_read_log(a.file), **_args(a, "nccl-tests"))
    if a.command == "nccl-debug":
        return api.nccl_debug(_read_log(a.file), **_args(a, "nccl-debug"))
    if a.command == "presets":
        return api.presets()
    if a.command == "nccl":
        return _nccl_run(a)
    calls = {"buckets": api.buckets, "ddp": api.ddp, "calc": api.calc, "shard": api.shard}
    return calls[a.command](**_args(a, a.command))


def _read_log(source: str) -> str:
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
    return data.decode("utf-8", "replace")


def table(result: dict) -> str:
    """A readable two-column table of the scalar results (lists are summarised)."""
    rows = []
    for key, value in result.items():
        if key == "trace":
            continue
        if isinstance(value, list):
            value = value if len(str(value)) <= 60 else f"[{len(value)} items]"
        elif isinstance(value, float):
            value = f"{value:.6g}"
        rows.append((key, str(value)))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _nccl_tests_table(result: dict) -> str:
    """Both fits' rms, then per row: measured busbw, the regime and NCCL fit's busbw, and with
    --gpu NCCL's prediction and measured / predicted."""
    nf, ab = result.get("nccl_fit"), result.get("fit")
    if not nf:
        return table(result)
    lines = [
        f"alpha-beta fit: rms {ab['rms_rel_error']:.1%} over all rows" if ab else "",
        f"NCCL model fit: rms {nf['rms_rel_error']:.1%} over rows from {nf['min_bytes']:,} B "
        f"(alpha-beta over the same rows: {nf['alpha_beta_rms_rel_error']:.1%}); "
        f"busbw {nf['busbw_GBps']:.1f} GB/s, latency {nf['latency_us']:.1f} us",
    ]
    pred = {r["bytes"]: r for r in (result.get("prediction") or {}).get("rows", [])}
    head = f"{'bytes':>12} {'busbw':>8} {'regime':<16} {'fitted':>8}"
    lines.append(head + (f" {'NCCL':>8} {'ratio':>6}" if pred else ""))
    for r in nf["rows"]:
        line = (
            f"{r['bytes']:>12} {r['measured_busbw_GBps']:>8.2f} {r['regime']:<16} "
            f"{r['fitted_busbw_GBps'] or 0:>8.2f}"
        )
        if r["bytes"] in pred:
            p = pred[r["bytes"]]
            line += f" {p['busbw_GBps']:>8.2f} {p['ratio']:>6.2f}"
        lines.append(line + (" above line rate" if r.get("above_line_rate") else ""))
    lines.append("busbw in GB/s; ratio = measured / NCCL's predicted busbw")
    return "\n".join(x for x in lines if x)


def nccl_debug_table(result: dict) -> str:
    """The topology, a few rings and trees, each row's algorithm, then the findings."""
    r, net = result, result["network"]
    lines = [
        f"NCCL {r['nccl_version'] or '(version not printed)'}: {r['ranks']} ranks, "
        f"{r['nodes']} servers of {r['gpus_per_node']} GPUs",
        f"network: {net['transport']}, {net['cards']} devices per server, GPUDirect RDMA "
        f"{net['gpudirect_rdma']}; NVLS {r['nvls']['supported']}; CollNet "
        f"{r['collnet']['supported']}; {r['coll_channels']} channels",
    ]
    for c in r["channels"][:4]:
        ring = " ".join(map(str, c["ring"])) if c["ring"] else "(not printed)"
        tree = f"; tree roots {c['tree']['roots']}" if c["tree"] else ""
        lines.append(f"channel {c['channel']:>2}: ring {ring}{tree}")
    for row in r["rows"]:
        if row.get("algorithm"):
            ran = row.get("nccl_ran")
            said = f"  (NCCL ran {ran['algorithm']}/{ran['protocol']})" if ran else ""
            lines.append(
                f"{row['size_bytes']:>12} B  busbw {row['busbw_GBps']:>8.2f}  "
                f"{row['algorithm']}/{row['protocol']}{said}"
            )
    for c in r["calls"][:20]:
        who = c["collective"] or "?"
        lines.append(f"call {who} {c['bytes']} B: {c['algorithm']}/{c['protocol']}")
    for f in r["findings"]:
        lines.append(f"[{f['code']}] {f['message']}")
        if f["evidence"]:
            lines.append(f"    evidence: {f['evidence']}")
    return "\n".join(lines)


def shard_table(result: dict) -> str:
    """One row per strategy: memory per GPU (GiB), bytes sent (GB), time (s), fits."""
    rows = [f"{result['model']} on {result['gpus']} x {result['gpu']}"]
    rows.append(f"{'strategy':<14} {'memory GiB':>10} {'sent GB':>9} {'comm s':>9}  fits")
    for s in result["strategies"].values():
        rows.append(
            f"{s['label']:<14} {s['memory_bytes_per_gpu']['total'] / hardware.GIB:>10.2f} "
            f"{s['comm_bytes_per_gpu'] / 1e9:>9.2f} {s['comm_s']:>9.4f}  {s['fits']}"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["figure"]:  # the widget's own parameters follow as --name value
        return _figure(p, *p.parse_known_args(argv))
    a = p.parse_args(argv)
    try:
        if a.command == "exercises":
            return _export(a)
        result = run(a)
    except ParamError as e:
        p.exit(2, f"{PROG}: error: argument {_flag_of(a.command, e.field)}: {e.message}\n")
    if a.json:
        print(json.dumps(result))
    else:
        tables = {"shard": shard_table, "nccl": _nccl_table, "nccl-tests": _nccl_tests_table}
        tables["nccl-debug"] = nccl_debug_table
        print(tables.get(a.command, table)(result))
    return 0
