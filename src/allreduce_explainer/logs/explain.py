"""An all_reduce_perf log explained: one driver, `explain_run`, for the CLI's `nccl-tests` (through
`read_log`, every run) and the page's log view (one run, cached there).

A run's rows and alpha-beta line (alphabeta.py), the servers it ran on and the calculator settings
that line gives, and NCCL's model fitted to it (ncclfit.py) with what the reader's hardware says:
the links' line rate, what each card carried, and the calculator settings that make NCCL's model
give the fitted bus bandwidth.

Without `--gpu`, the system is guessed from the `#  Rank` lines' device names; a GPU the model
does not cover is stood in for by one of the same family (or the H100 SXM), which sets the
regimes' shapes only: their bandwidths and latencies are fitted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..catalog import hardware
from ..errors import ParamError
from ..nccl import NIC_GBPS, System, available, busbw_factor, choose_among, nearest
from ..records import BINARY, BYTES, COUNT, RATE, SHARE, TEXT, TIME, Quantity, Record
from ..schedules.ring import steps as ring_steps
from ..sources import FITTED
from ..training import calculator
from . import debug, findings, parse
from .alphabeta import fit, measured
from .ncclfit import EVERY, Allowed, nccl_fit, prediction

# Longer logs are refused. One nccl-tests run is a few kB, so this holds hundreds of runs; the page
# parses it in the browser, and 5 MB took 0.9 s there (bench/RESULTS.md, "Every input, first
# time"), over the quarter second an input may take.
MAX_LOG_BYTES = 1_000_000
MAX_LOG_TEXT = f"{MAX_LOG_BYTES / 1e6:g} MB ({MAX_LOG_BYTES:,} bytes)"
SETTINGS_TOLERANCE = 0.10
NO_ROWS = (
    "has no all_reduce_perf rows (lines that start with a size in bytes, under the "
    "'#  size  count  type ...' header): pass the output of nccl-tests' all_reduce_perf"
)
DEFAULT_GPU = hardware.H100_SXM.name
# Device names all_reduce_perf prints (`#  Rank ... device 0 [..] NAME`) -> the model's GPU.
# H20 and GH200 are Hopper parts the model has no entry for: the H100 SXM stands in.
DEVICE_NAMES = (
    ("GB200", "B200"),
    ("B200", "B200"),
    ("GH200", "H100 SXM"),
    ("H200", "H200 SXM"),
    ("H100", "H100 SXM"),
    ("H800", "H100 SXM"),
    ("H20", "H100 SXM"),
    ("A100", "A100 SXM"),
    ("A800", "A100 SXM"),
)
DEVICE_LINE = re.compile(r"#\s+Rank\s+\d+.*?\bdevice\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$", re.I)


# What `nccl-tests` and `nccl-debug` answer (records.py): a measured row as nccl-tests prints it
# (its time is measured: no model's), the alpha-beta line and NCCL's regimes fitted to the run,
# a row of that fit, NCCL's prediction at a size (the performance layer's: the fitted time's
# busbw), and the topology's counts a debug log prints.
MEASURED = Record("measured row", (
    Quantity("size_bytes", BYTES, "size"), Quantity("time_us", TIME, "time", scale=1e-6),
    Quantity("algbw_GBps", RATE, "algbw"), Quantity("busbw_GBps", RATE, "busbw"),
))  # fmt: skip
# the alpha-beta line fitted to every row (alphabeta.fit)
ALPHA_BETA = Record("alpha-beta fit", (
    Quantity("rms_rel_error", SHARE, "rms"), Quantity("latency_us", TIME, "latency", scale=1e-6),
    Quantity("algbw_GBps", RATE, "algbw"), Quantity("busbw_GBps", RATE, "busbw"),
))  # fmt: skip
# NCCL's regimes fitted to the rows from min_bytes (ncclfit.nccl_fit), and each row of it
NCCL_FIT = Record("NCCL model fit", (
    Quantity("rms_rel_error", SHARE, "rms"), Quantity("min_bytes", BINARY, "over rows from"),
    Quantity("alpha_beta_rms_rel_error", SHARE, "alpha-beta on the same rows: rms"),
    Quantity("busbw_GBps", RATE, "fitted busbw"),
    Quantity("latency_us", TIME, "latency", scale=1e-6),
))  # fmt: skip
FIT_ROW = Record("NCCL model fit's row", (
    Quantity("bytes", BYTES, "size"), Quantity("measured_busbw_GBps", RATE, "busbw"),
    Quantity("regime", TEXT, "regime"), Quantity("fitted_busbw_GBps", RATE, "NCCL fit"),
    Quantity("fitted_time_us", TIME, "NCCL fit", scale=1e-6),
))  # fmt: skip
# with --gpu: NCCL's pick at a row's size, its busbw the fitted time's (ncclfit.prediction)
PREDICTED = Record("NCCL's prediction", (
    Quantity("busbw_GBps", RATE, "predicted", FITTED), Quantity("ratio", COUNT, "ratio"),
))  # fmt: skip
LOG = Record("nccl-tests", (Quantity("gpus", COUNT, "GPUs"), Quantity("lines", COUNT, "lines")))
# what a NCCL_DEBUG=INFO log prints of its communicator
DEBUG = Record("nccl-debug", (
    Quantity("ranks", COUNT, "ranks"), Quantity("nodes", COUNT, "servers"),
    Quantity("gpus_per_node", COUNT, "GPUs per server"),
    Quantity("coll_channels", COUNT, "channels"),
))  # fmt: skip


@dataclass(frozen=True)
class Network:
    """What the reader says about the hardware (None: not said)."""

    gpu: str | None = None
    nic_Gbps: float | None = None
    nics_per_node: int | None = None
    gpus_per_node: int | None = None


# ---- the whole log and one run -----------------------------------------------------------------


class LogText(str):
    """A log's text that knows the file it came from and the byte length it was decoded from:
    bytes that are not UTF-8 decode to U+FFFD, three bytes each when encoded again, so the text
    alone overstates a binary file's size (800,000 random bytes encode back to about 1.45 MB)."""

    raw_bytes: int
    source: str

    def __new__(cls, text: str, raw_bytes: int, source: str = "") -> LogText:
        out = super().__new__(cls, text)
        out.raw_bytes, out.source = raw_bytes, source
        return out


def named(text: str, message: str) -> str:
    """A refusal's message, naming the file the text came from when it knows it."""
    return f"{text.source}: {message}" if isinstance(text, LogText) and text.source else message


def check_size(text: str, field: str = "log", advice: str = "") -> None:
    """Refuse a log over MAX_LOG_BYTES with a message, before any parsing: its bytes as read
    (LogText), else the text's UTF-8 length."""
    size = text.raw_bytes if isinstance(text, LogText) else len(text.encode("utf-8", "replace"))
    if size > MAX_LOG_BYTES:
        raise ParamError(field, f"is {size:,} bytes: at most {MAX_LOG_TEXT} is read{advice}")


def read_log(
    text: str,
    gpus: int | None = None,
    gpus_per_node: int = hardware.H100_SXM.gpus_per_node,
    net: Network | None = None,
) -> dict:
    """A whole `all_reduce_perf` log: the first run's rows and fit, every run, every line skipped.

    The GPU count comes from `gpus` if given, else from each run's `#  Rank` lines; the servers
    from its host lines, else servers of `gpus_per_node` (8, as an H100 SXM server). Each run
    also gets NCCL's model fitted (`nccl_fit`) and, when `net` names a GPU, NCCL's prediction
    (`prediction`): see explain_run.
    """
    net = net or Network()
    check_size(text)
    text0 = text
    text, encoding = debug.decoded(text)  # UTF-16 (PowerShell's >): its rows as the debug reader's
    device = device_name(text)
    log = parse.parse_runs(text)
    topo = topology(text)
    if topo and topo["gpus_per_node"] and net.gpus_per_node is None:
        gpus_per_node = min(topo["gpus_per_node"], 8)
    if not log.runs:
        raise ParamError("log", named(text0, NO_ROWS))
    runs = []
    for i, run in enumerate(log.runs, 1):
        r = explain_run(run, gpus, gpus_per_node, net, device, topo=topo)
        if not r["gpus"]:
            raise ParamError(
                "gpus",
                f"run {i} (line {run.first_line}) has no '#  Rank' lines giving the GPU count: "
                "pass the count",
            )
        runs.append(r)
    first = runs[0] if runs else {"rows": [], "gpus": gpus, "fit": None}
    return {
        "rows": first["rows"],
        "gpus": first["gpus"],
        "fit": first["fit"],
        "nccl_fit": first.get("nccl_fit"),
        **({"prediction": first["prediction"]} if "prediction" in first else {}),
        "runs": runs,
        "skipped": [{"line": i, "kind": k, "reason": r} for i, k, r in log.skipped],
        "blank_lines": log.blank,
        "lines": log.lines,
        "algorithm_basis": _algorithm_basis(topo),
        "encoding": encoding,
    }


# ---- NCCL_DEBUG=INFO: the reader's topology ----------------------------------------------------


def topology(text: str) -> dict | None:
    """The NCCL_DEBUG=INFO lines of a log, read (logs/debug.py); None if it has none."""
    try:
        return debug.read(text)
    except ParamError:
        return None


def allowed(topo: dict | None) -> tuple[list[str], list[str]]:
    """The algorithms and protocols NCCL's model may pick for this log: the release's (the
    version read, else every one), less NVLS and NVLSTree where the log says NVLS is off, less
    CollNet where it built no CollNet channel, and only those NCCL_ALGO / NCCL_PROTO (or the
    algorithm matrix NCCL printed) leave an all-reduce."""
    a = (topo or {}).get("available") or available(None)
    algos, protos = list(a["algorithms"]), list(a["protocols"])
    if topo and topo["nvls"]["supported"] is False:
        algos = [x for x in algos if not x.startswith("NVLS")]
    if topo and topo["collnet"]["supported"] is False:
        algos = [x for x in algos if not x.startswith("CollNet")]
    env = (topo or {}).get("tuning_env") or {}
    if env.get("algorithms") is not None:
        algos = [x for x in algos if x in env["algorithms"]]
    if env.get("protocols") is not None:
        protos = [x for x in protos if x in env["protocols"]]
    return algos, protos


def _algorithm_basis(topo: dict | None) -> str:
    algos, protos = allowed(topo)
    version = topo["nccl_version"] if topo and topo["nccl_version"] else None
    head = f"NCCL {version}" if version else "no NCCL version in the log: every algorithm"
    env = (topo or {}).get("tuning_env") or {}
    said = [f"{k}={env[k]}" for k in ("NCCL_ALGO", "NCCL_PROTO") if env.get(k)]
    head += f"; {' '.join(said)} in the log" if said else ""
    model = nearest(version).version
    return (
        f"each row's algorithm and protocol: NCCL's choice (NCCL {model}'s "
        f"tuning code) among {', '.join(algos)} x {', '.join(protos)} ({head})"
    )


def read_debug(text: str, gpus: int | None = None, net: Network | None = None) -> dict:
    """`nccl-debug`: a NCCL_DEBUG=INFO log (alone or mixed with all_reduce_perf output) read:
    version, ranks, servers, network, NVLS, CollNet, each channel's ring and tree, the tuning
    lines' calls, the findings and, when the log has all_reduce_perf rows, each row's algorithm
    and protocol on that topology and the calculator settings the topology gives."""
    check_size(text)
    try:
        topo = debug.read(text)
    except ParamError as e:
        raise ParamError(e.field, named(text, e.message)) from None
    text = debug.decoded(text)[0]  # UTF-16: the rows too
    net = net or Network()
    out = {k: topo[k] for k in ("nccl_version", "ranks", "nodes", "gpus_per_node")}
    out |= {k: topo[k] for k in ("network", "nvls", "collnet", "channels", "calls")}
    out |= {k: topo[k] for k in ("tuning_env", "long_lines", "encoding")}
    out |= {
        "coll_channels": topo["coll_channels"],
        "device": topo["device"],
        "available": topo["available"],
        "evidence": {
            "version": topo["version_evidence"],
            "channels": topo["channels_evidence"],
            "nodes": topo["nodes_evidence"],
        },
    }
    found = findings.from_debug(topo)
    out["rows"], out["run"] = [], None
    log = parse.parse_runs(text)
    per_process = log.runs[0].gpus_per_thread if log.runs else None
    if net.nics_per_node is None and net.nic_Gbps and topo["network"]["cards"]:
        net = Network(net.gpu, net.nic_Gbps, topo["network"]["cards"], net.gpus_per_node)
    if log.runs:
        # the run's own '#  Rank' lines give its GPUs: with several communicators in the log the
        # largest is not necessarily the run's
        n = gpus or len(log.runs[0].ranks) or topo["ranks"]
        per = min(topo["gpus_per_node"] or 8, 8)
        run = explain_run(log.runs[0], n, per, net, device_name(text), strict=False, topo=topo)
        out["rows"] = run["rows"]
        out["run"] = {k: run.get(k) for k in ("gpus", "servers", "gpus_per_node", "fit")}
        out["run"]["nccl_fit_busbw_GBps"] = (run.get("nccl_fit") or {}).get("busbw_GBps")
        found += findings.from_run(run, text)
    out["communicators"] = _communicators(topo, log, net, text)
    out["calculator"] = calculator_from(topo, net, gpus, per_process)
    out["algorithm_basis"] = _algorithm_basis(topo)
    out["findings"] = found
    return out


def _communicators(topo: dict, log: parse.Log, net: Network, text: str) -> list[dict]:
    """Each communicator of a log that holds several, read on its own: its ranks, servers,
    channels (rings and trees) and the rows of the all_reduce_perf run of as many ranks (the
    first such run; none if no run's '#  Rank' lines match). Empty for a log of one."""
    out, used = [], set()
    for c in topo["communicators"]:
        k = next((i for i, r in enumerate(log.runs)
                  if i not in used and len(r.ranks) == c["ranks"]), None)  # fmt: skip
        rows = []
        if k is not None:
            used.add(k)
            per = min(c["gpus_per_node"] or topo["gpus_per_node"] or 8, 8)
            run = explain_run(log.runs[k], c["ranks"], per, net, device_name(text), False, topo)
            rows = run["rows"]
        out.append(c | {"rows": rows, "run": None if k is None else k + 1})
    return out


def calculator_from(
    topo: dict, net: Network, gpus: int | None = None, gpus_per_process: int | None = None
) -> dict:
    """The calculator's parameters the topology gives (widgets/cluster.py's names): GPUs and
    GPUs per server from the comm line, the GPU from the device names, the GPUs each process
    drives where all_reduce_perf's header gives them (-g: one process launching for several
    GPUs is slower on small messages), the card rate only when given (a log does not print
    it)."""
    out: dict = {}
    n = gpus or topo["ranks"]
    if n:
        out["gpus"] = n
    if topo["gpus_per_node"]:
        out["gpus_per_node"] = topo["gpus_per_node"]
    if gpus_per_process:
        out["gpus_per_process"] = min(gpus_per_process, topo["gpus_per_node"] or gpus_per_process)
    gpu, basis = model_gpu(topo["device"])
    if topo["device"] or net.gpu:
        out["gpu"] = net.gpu or gpu
    if net.nic_Gbps:
        out |= {"network": "custom", "nic_gbps": net.nic_Gbps}
    out["algorithm"] = "nccl"
    return out


def explain_run(
    run: parse.Run,
    gpus: int | None,
    gpus_per_node: int,
    net: Network,
    device: str | None,
    strict: bool = True,
    topo: dict | None = None,
) -> dict:
    """One run, explained: alphabeta.measured's keys; then, given a GPU count (`gpus`, else the
    run's `#  Rank` lines), its servers and the line's calculator settings (applied) and NCCL's
    model fitted (nccl_fit and, when `net` names a GPU, prediction).

    Without a count only the rows and the line come back ("gpus" None): the page asks for it
    and keeps the log. A layout NCCL's model does not hold raises ParamError; with
    `strict=False` it leaves `nccl_fit` None and says why in `nccl_error` (the line stands).
    """
    n = gpus or len(run.ranks)
    m = measured(run, n or None)
    if not n:
        return m
    a = applied(run, m, n, gpus_per_node)
    try:
        nf = _nccl_explained(
            m["rows"], n, a["servers"], a["gpus_per_node"], net, device, run.gpus_per_thread, topo
        )
    except ParamError as e:
        if strict:
            raise
        nf = {"nccl_fit": None, "nccl_error": e.message}
    return {**m, **a, **nf, "gpus_per_thread": run.gpus_per_thread}


# ---- the alpha-beta line's servers and settings ------------------------------------------------


def layout(n: int, hosts: int, gpus_per_node: int) -> tuple[int, int]:
    """(servers, GPUs per server) of a run of n GPUs: from its host lines when they divide n,
    else servers of `gpus_per_node` (one server if n fits in one, or if they do not divide n)."""
    if hosts and n % hosts == 0:
        servers = hosts
    else:
        servers = 1 if n <= gpus_per_node else max(1, n // gpus_per_node)
    per = n // servers if n % servers == 0 else n
    return n // per, per


def line_settings(f: dict, n: int, servers: int, per: int) -> dict:
    """The calculator parameters the alpha-beta line sets (what a fit can and cannot say).

    Inside one server the run was limited by the GPU links: the fitted busbw becomes the link
    rate (GB/s). Across servers the cards limit it: the busbw spread over a server's cards becomes
    the card rate (Gb/s, as sold). The fitted latency is spread over the ring's 2(n − 1) steps as
    a per-message latency of that link class.
    """
    step_us = _round(f["latency_us"] / ring_steps(n))
    if servers == 1:
        return {"link_gbps": _round(f["busbw_GBps"]), "intra_latency_us": step_us}
    return {"nic_gbps": _round(8 * f["busbw_GBps"] / per), "inter_latency_us": step_us}


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def applied(run: parse.Run, m: dict, n: int, gpus_per_node: int) -> dict:
    """A run's servers and the calculator settings its line gives (None without a busbw)."""
    servers, per = layout(n, len(run.hosts), gpus_per_node)
    f = m["fit"]
    sets = line_settings(f, n, servers, per) if f and f["busbw_GBps"] else None
    return {"servers": servers, "gpus_per_node": per, "calculator_settings": sets}


# ---- NCCL's model on the reader's hardware -----------------------------------------------------


def device_name(text: str) -> str | None:
    """The first device name printed on a `#  Rank` line, if any."""
    for line in text.splitlines():
        m = DEVICE_LINE.search(line)
        if m:
            return m.group(1)
    return None


def model_gpu(device: str | None) -> tuple[str, str]:
    """(the model's GPU, how it was chosen) for a printed device name."""
    if device:
        up = device.upper()
        for key, gpu in DEVICE_NAMES:
            if key in up:
                same = gpu.split()[0] in up
                return gpu, "from the log" if same else f"stands in for {device!r} (same family)"
    what = f"{device!r} is not modelled" if device else "no device name in the log"
    return DEFAULT_GPU, f"assumed: {what}; only the regimes' shapes come from it"


def system_for(
    n: int, per: int, net: Network, device: str | None, version: str | None = None
) -> dict:
    """The System the fit uses, and where each figure came from; NCCL's model is the ported
    release nearest the version the log printed (nccl.nearest)."""
    if net.gpu is not None:
        gpu, gpu_basis = net.gpu, "--gpu"
    else:
        gpu, gpu_basis = model_gpu(device)
    per = min(per, 8)
    while n % per:  # the model holds servers of up to 8 GPUs (HGX/DGX)
        per -= 1
    nics = net.nics_per_node or per
    nic = net.nic_Gbps or 400.0
    return {
        "system": System(gpu, n, per, nics, nic, nccl_version=nearest(version).version),
        "gpu_basis": gpu_basis,
        "network_basis": "given" if net.nic_Gbps else "assumed: 400 Gb/s, one card per GPU",
    }


def line_rate(servers: int, per: int, net: Network) -> dict:
    """The yardstick for busbw from the links the reader names: inside one server the GPU's
    NVLink rate per direction; across servers the cards per server times a card's rate (NCCL's
    rings spread over every card: each carries 2(n-1)/n x S / cards). None if not named."""
    if servers == 1 and net.gpu is not None:
        g = hardware.find(hardware.GPUS, net.gpu, "gpu")
        return {"GBps": g.link_GBps, "basis": f"{g.name} NVLink, per GPU per direction"}
    if servers > 1 and net.nic_Gbps:
        k = net.nics_per_node or per
        return {
            "GBps": k * net.nic_Gbps / 8,
            "basis": f"{k} cards x {net.nic_Gbps:g} Gb/s per server",
        }
    return {"GBps": None, "basis": "not named: pass --gpu (one server) or --nic-gbps"}


def per_card(row: dict, n: int, nics: int) -> dict:
    """Bytes each network card sends per direction for one row, and at what rate: a ring's
    2(n-1)/n x S over the server's cards; a tree, NVLSTree or CollNet about S (exact for two
    servers: each tree carries half the data each way)."""
    share = busbw_factor("AllReduce", n) if row["algorithm"] == "Ring" else 1.0
    nbytes = share * row["bytes"] / nics
    return {"bytes": nbytes, "GBps": nbytes / (row["measured_time_us"] * 1e3)}


def _nccl_explained(
    run_rows: list[dict],
    n: int,
    servers: int,
    per: int,
    net: Network,
    device: str | None,
    per_thread: int = 1,
    topo: dict | None = None,
) -> dict:
    """The keys `nccl-tests` adds for one run: nccl_fit (with line rate, per-card figures and
    the calculator settings) and, given --gpu, prediction; and each row's algorithm and
    protocol, NCCL's model's pick on that system among what `allowed(topo)` leaves (with, where
    the log has tuning lines, what NCCL says it ran)."""
    out: dict = {"nccl_fit": None}
    sizes = [r["size_bytes"] for r in run_rows if r.get("time_us")]
    times = [r["time_us"] for r in run_rows if r.get("time_us")]
    if n < 2 or not sizes:
        return out
    try:
        basis = system_for(n, per, net, device, (topo or {}).get("nccl_version"))
    except ParamError:
        if net.gpu is not None or net.nic_Gbps is not None:
            raise
        return out
    s = basis["system"]
    label_rows(run_rows, s, per_thread, topo)
    only = allowed_regimes(topo)
    nf = nccl_fit(sizes, times, s, per_thread, only)
    if nf is None:
        return out | (
            {"prediction": prediction(sizes, times, s, per_thread, only)} if net.gpu else {}
        )
    rate = line_rate(servers, per, net)
    for row in nf["rows"]:
        row["above_line_rate"] = bool(rate["GBps"] and row["measured_busbw_GBps"] > rate["GBps"])
        if servers > 1:
            row["per_card"] = per_card(row, n, net.nics_per_node or per)
    above = [r["bytes"] for r in nf["rows"] if r["above_line_rate"]]
    nf["line_rate"] = rate | {
        "rows_above": above,
        "why": "busbw above the links' line rate: in-network reduction (NVLS, SHARP) or a "
        "two-server tree, which send about S per GPU where busbw assumes a ring's 2(n-1)/n x S"
        if above
        else None,
    }
    nf["system"] = {
        "gpu": s.gpu,
        "gpus": s.gpus,
        "gpus_per_node": s.gpus_per_node,
        "nics_per_node": s.nics_per_node,
        "nic_gbps": s.nic_Gbps,
        "gpu_basis": basis["gpu_basis"],
        "network_basis": basis["network_basis"],
    }
    nf["alpha_beta_rms_rel_error"] = _alpha_beta_rms(nf["rows"])
    nf["calculator_settings"] = nccl_settings(nf, s, per_thread)
    out["nccl_fit"] = nf
    if net.gpu is not None:
        out["prediction"] = prediction(sizes, times, s, per_thread, only)
    return out


def allowed_regimes(topo: dict | None) -> Allowed:
    """`allowed(topo)` for the fit and the prediction: every pair when the log restricts
    nothing (so a log without debug lines is fitted as before), else only those it allows."""
    if topo is None:
        return EVERY
    algos, protos = allowed(topo)
    every_a, every_p = allowed(None)
    return Allowed(
        None if algos == every_a else tuple(algos), None if protos == every_p else tuple(protos)
    )


def label_rows(rows: list[dict], s: System, per_thread: int, topo: dict | None) -> None:
    """Each row's `algorithm`/`protocol`: NCCL's model's pick at its size on system s, among the
    pairs the log's release and switches allow; `nccl_ran` where a tuning line names the call."""
    algos, protos = allowed(topo)
    ran = {}
    for c in (topo or {}).get("calls") or []:
        if c["collective"] in (None, "AllReduce"):
            ran.setdefault(c["bytes"], c)
    for r in rows:
        n = r["size_bytes"]
        c = choose_among("AllReduce", n, s, algos, protos, per_thread) if n > 0 else None
        r["algorithm"] = c.algorithm if c else None
        r["protocol"] = c.protocol if c else None
        if n in ran:
            t = ran[n]
            agrees = (t["algorithm"], t["protocol"]) == (r["algorithm"], r["protocol"])
            r["nccl_ran"] = {
                "algorithm": t["algorithm"],
                "protocol": t["protocol"],
                "agrees": agrees,
                "evidence": t["evidence"],
            }


def _alpha_beta_rms(rows: list[dict]) -> float | None:
    """The alpha-beta line refitted on the rows the NCCL fit's rms counts: like for like."""
    used = [r for r in rows if r["in_rms"]]
    f = fit([r["bytes"] for r in used], [r["measured_time_us"] for r in used])
    return f["rms_rel_error"] if f else None


# ---- the fitted figures, for the model they were fitted with ------------------------


def nccl_settings(nf: dict, system: System, per_thread: int = 1) -> dict:
    """The calculator parameters that make `calc(..., algorithm="nccl")` give NCCL's fitted
    busbw at the largest size measured: across servers, the card rate (Gb/s) at which NCCL's
    model predicts it; inside one server NCCL's model depends on the GPU alone, so only the GPU
    is set, and `reproduces` says whether that is enough. The GPUs each process drives are the
    run's (-g), so the calculator times the same launch. `calc_kwargs` are calculator.calc's
    own keyword arguments: calc(params=..., **calc_kwargs)."""
    target, nbytes = nf["rows"][-1]["fitted_busbw_GBps"], nf["rows"][-1]["bytes"]
    per = system.gpus_per_node
    g = min(per_thread, per)
    base = {"algorithm": "nccl", "gpu": system.gpu, "gpus": system.gpus, "gpus_per_node": per}
    base["nccl_version"] = v = system.nccl_version  # the model the fit was made with
    base["gpus_per_process"] = g

    def busbw(nic_Gbps: float) -> float:
        c = calculator.cluster_for(
            system.gpu, system.gpus, per, nic_Gbps, nccl_version=v, gpus_per_process=g
        )
        return calculator.allreduce(c, "nccl", nbytes)["busbw_GBps"]

    if system.nodes == 1:
        kwargs = base | {"nic_Gbps": system.nic_Gbps}  # cards unused on one server
        return base | {"calc_kwargs": kwargs} | _check(target, busbw(system.nic_Gbps))
    lo, hi = NIC_GBPS
    reach = min(target, busbw(hi))  # the model's busbw stops growing with the card rate
    while hi - lo > 0.01 * lo:  # it grows with the card rate: bisect for the least that reaches
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if busbw(mid) < reach * (1 - 1e-9) else (lo, mid)
    step = 10.0 ** (math.floor(math.log10(lo)) - 2)  # three significant figures, rounded
    ends = (math.floor(lo / step) * step, math.ceil(hi / step) * step)  # away from the step
    nic = float(f"{min(ends, key=lambda x: abs(busbw(x) - target)):.4g}")
    kwargs = base | {"nic_Gbps": nic}
    return base | {"nic_gbps": nic, "calc_kwargs": kwargs} | _check(target, busbw(nic))


def _check(target: float, model: float) -> dict:
    """Whether the settings reproduce the fitted busbw within SETTINGS_TOLERANCE."""
    ok = abs(model / target - 1) <= SETTINGS_TOLERANCE
    return {
        "fitted_busbw_GBps": target,
        "model_busbw_GBps": model,
        "reproduces": ok,
        "note": None
        if ok
        else "NCCL's choice on this hardware is a regime this run did not reach (a forced "
        "NCCL_ALGO, NVLS off, or another fabric): the calculator's NCCL figure differs",
    }
