"""Read the output of nccl-tests' `all_reduce_perf` (and its siblings), line by line or whole.

A data row is `size count type redop root`, then `time algbw busbw #wrong` for the out-of-place
run and again for the in-place run (NVIDIA/nccl-tests `src/util.cu`, writeBenchmarkLine*). The
formats met in the wild, all read here:

- versions before 2.13 have no `root` column and call the last column of each half `error`
  (a float); newer ones print `#wrong` (a count), or `N/A` when checking is off (`-c 0`);
- the siblings' oldest rows lack `redop` too: all_gather_perf prints `size count type time algbw
  busbw error ...`, 11 columns (NVIDIA/nccl-tests#44), and broadcast_perf `size count type root
  ...` (NVIDIA/nccl-tests#82), told from `redop` by the number in the fourth column.
  all_reduce_perf always printed `redop` (nccl-tests' first commit, b188a15, all_reduce.cu:17);
- under mpirun each printf may carry a rank tag, `[0]` or OpenMPI's `[1,0]<stdout>:`, even in
  the middle of a row (`... sum -1[0]  1626.5 ...`); under `srun --label` each line starts with
  the task number and a colon, `0:  8  2  float ...` (aws-samples/awsome-distributed-training,
  micro-benchmarks/nccl-tests/README.md);
- per-iteration timing (`-I`) adds `i_min i_max i_p99 i_cv%` to each half; `-T` appends a
  timestamp; trace replay prints the in-place half only;
- header (`#`), blank and summary lines (`# Avg bus bandwidth : X`) are skipped, the summary
  kept.

parse_line() returns a Row or a Skip that says why the line is not a row; parse_text() reads a
whole file and also counts the `#  Rank  k ...` device lines, which give the GPU count that
busbw needs and the rows do not carry. parse_runs() also reads the JSON document that `-J FILE`
writes (added to nccl-tests in October 2025, commit 00f5281; see parse_json).
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import asdict, dataclass, replace

from .debug import INFO

RANK_TAG = re.compile(r"\[\d+(?:,\d+)*\](?:<std(?:out|err)>)?:?")
SRUN_LABEL = re.compile(r"^(\d+):(?=\s)")
TIMESTAMP = re.compile(r"\s(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)$")
SUMMARY = re.compile(r"^#\s*(Avg bus bandwidth|Out of bounds values)\s*:\s*(\S+)", re.I)
RANK_LINE = re.compile(r"^#\s+Rank\s+(\d+)\b", re.I)
WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HALF = 4  # time algbw busbw #wrong
PER_ITER = 4  # i_min i_max i_p99 i_cv%
MAX_LINE = 4000


@dataclass(frozen=True)
class Half:
    """One run of a row: average time per iteration (µs), algbw and busbw (GB/s = 1e9 B/s).

    `wrong` is the #wrong count (or the old `error` value); None where nccl-tests printed N/A,
    as it does when data checking is off. `text` keeps the printed tokens, whose decimals tell
    how finely nccl-tests rounded them.
    """

    time_us: float | None
    algbw_GBps: float | None
    busbw_GBps: float | None
    wrong: float | None
    text: tuple[str, ...]
    per_iter_us: tuple[float | None, ...] | None = None


@dataclass(frozen=True)
class Row:
    size_bytes: int
    count: int
    type: str
    redop: str | None  # None: the oldest rows, without the redop column
    root: int | None  # None: a version without the root column
    out_of_place: Half | None  # None: trace replay prints the in-place half only
    in_place: Half
    rank: int | None = None  # the MPI rank tag the line carried, if any
    timestamp: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Skip:
    """A line that is not a data row: kind is blank, header, summary, debug (NCCL_DEBUG=INFO's)
    or unreadable."""

    kind: str
    reason: str
    name: str | None = None  # for a summary line: what it reports
    value: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Report:
    rows: list[Row]
    skipped: list[tuple[int, Skip]]  # (line number from 1, why)
    ranks: int  # `#  Rank k ...` device lines seen: the GPU count, when the header is there
    avg_busbw_GBps: float | None
    wrong_column: str | None  # "#wrong" or "error", from the header

    def to_dict(self) -> dict:
        return {
            "rows": [r.to_dict() for r in self.rows],
            "skipped": [[i, s.to_dict()] for i, s in self.skipped],
            "ranks": self.ranks,
            "avg_busbw_GBps": self.avg_busbw_GBps,
            "wrong_column": self.wrong_column,
        }


def _strip_tags(line: str) -> tuple[str, int | None]:
    """Remove rank tags wherever mpirun put them; the first one names the rank."""
    label = SRUN_LABEL.match(line)
    if label:
        return RANK_TAG.sub(" ", line[label.end() :]), int(label.group(1))
    m = RANK_TAG.search(line)
    rank = int(m.group(0)[1:].split("]")[0].split(",")[-1]) if m else None
    return RANK_TAG.sub(" ", line), rank


def _value(token: str, field: str) -> float | None:
    if token.upper() == "N/A":
        return None
    try:
        v = float(token)
    except ValueError:
        raise _Bad(f"{field} is {token!r}, not a number") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise _Bad(f"{field} is {token!r}, not a finite number")
    return v


def _whole(token: str, field: str) -> int:
    if not re.fullmatch(r"-?\d+", token):
        raise _Bad(f"{field} is {token!r}, not a whole number")
    return int(token)


class _Bad(ValueError):
    pass


def _half(tokens: list[str], per_iter: bool) -> Half:
    time_us, algbw, busbw = (
        _value(t, f) for t, f in zip(tokens[:3], ("time", "algbw", "busbw"), strict=True)
    )
    for v, f in ((time_us, "time"), (algbw, "algbw"), (busbw, "busbw")):
        if v is not None and v < 0:
            raise _Bad(f"{f} is negative")
    extra = tuple(_value(t, "per-iteration time") for t in tokens[4:]) if per_iter else None
    return Half(time_us, algbw, busbw, _value(tokens[3], "#wrong"), tuple(tokens[:4]), extra)


# Columns in a row -> (columns before the timings, halves printed, per-iteration timing).
LAYOUTS = {
    5 + 2 * HALF: (5, 2, False),  # size count type redop root | out-of-place | in-place
    5 + 2 * (HALF + PER_ITER): (5, 2, True),  # -I: i_min i_max i_p99 i_cv% after each half
    5 + HALF: (5, 1, False),  # trace replay: the in-place half only
    4 + 2 * HALF: (4, 2, False),  # no root (redop), or the oldest broadcast (root, no redop)
    3 + 2 * HALF: (3, 2, False),  # the oldest all-reduce: neither redop nor root
}

# a row of the algorithm matrix NCCL prints under "Enabled NCCL Func/Proto/Algo Matrix:"
MATRIX_ROW = re.compile(r"(Function|Broadcast|Reduce|AllGather|ReduceScatter|AllReduce)\s+\|")


def parse_line(line: str) -> Row | Skip:
    """One line of nccl-tests output: a Row, or a Skip saying why it is not one."""
    if not isinstance(line, str):
        return Skip("unreadable", "not text")
    if len(line) > MAX_LINE:
        return Skip("unreadable", f"longer than {MAX_LINE} characters: not an nccl-tests row")
    text, rank = _strip_tags(line.strip())
    text = text.strip()
    if not text:
        return Skip("blank", "an empty line")
    if INFO in text or MATRIX_ROW.match(text):  # the job's log, interleaved: logs/debug.py's
        return Skip("debug", "an NCCL_DEBUG=INFO line, read by the NCCL_DEBUG reader")
    if text.startswith("#"):
        m = SUMMARY.match(text)
        if m:
            return Skip("summary", "a summary line", m.group(1).lower(), m.group(2))
        return Skip("header", "a header or comment line (starts with #)")
    stamp = TIMESTAMP.search(text)
    if stamp:
        text = text[: stamp.start()]
    tokens = text.split()
    try:
        return _row(tokens, rank, stamp.group(1) if stamp else None)
    except _Bad as e:
        return Skip("unreadable", str(e))


def _row(tokens: list[str], rank: int | None, stamp: str | None) -> Row:
    if len(tokens) < 2 or not re.fullmatch(r"\d+", tokens[0]):
        raise _Bad("does not start with a size in bytes: not a data row")
    layout = LAYOUTS.get(len(tokens))
    if layout is None:
        raise _Bad(
            f"has {len(tokens)} columns; a row has 13, 12 (no root column), 11 (no redop or root "
            "column), 21 (per-iteration timing) or 9 (in-place only)"
        )
    pre, halves, per_iter = layout
    size, count, dtype = _whole(tokens[0], "size"), _whole(tokens[1], "count"), tokens[2]
    redop, root = _redop_root(tokens[3:pre])
    for word, field in ((dtype, "type"), (redop, "redop")):
        if word is not None and not WORD.match(word):
            raise _Bad(f"{field} is {word!r}, not a name")
    if size < 0 or count < 0:
        raise _Bad("size and count must not be negative")
    width = (len(tokens) - pre) // halves
    parts = [tokens[pre + i * width : pre + (i + 1) * width] for i in range(halves)]
    runs = [_half(p, per_iter) for p in parts]
    out_of_place = runs[0] if halves == 2 else None
    return Row(size, count, dtype, redop, root, out_of_place, runs[-1], rank, stamp)


def _redop_root(tokens: list[str]) -> tuple[str | None, int | None]:
    """The columns between type and the timings: redop and root, redop alone, root alone (the
    oldest broadcast rows) or neither (the oldest all-reduce rows)."""
    if len(tokens) == 2:
        return tokens[0], _whole(tokens[1], "root")
    if len(tokens) == 1 and re.fullmatch(r"-?\d+", tokens[0]):
        return None, int(tokens[0])
    return (tokens[0], None) if tokens else (None, None)


def parse_text(text: str) -> Report:
    """A whole output file: its rows, what was skipped and why, the GPU count and the summary."""
    rows, skipped, ranks, avg, wrong_column = [], [], set(), None, None
    for i, line in enumerate(text.splitlines(), 1):
        item = parse_line(line)
        if isinstance(item, Row):
            rows.append(item)
            continue
        skipped.append((i, item))
        bare = _strip_tags(line.strip())[0].strip()
        m = RANK_LINE.match(bare)
        if m:
            ranks.add(int(m.group(1)))
        if item.name == "avg bus bandwidth":
            try:
                avg = float(item.value)
            except ValueError:
                avg = None
        if item.kind == "header" and re.search(r"\bsize\b.*\bbusbw\b", bare):
            wrong_column = "#wrong" if "#wrong" in bare else "error" if "error" in bare else None
    return Report(rows, skipped, len(ranks), avg, wrong_column)


def decimals(token: str) -> int:
    """Digits after the point in a printed number (how finely nccl-tests rounded it)."""
    if "e" in token.lower() or "." not in token:
        return 0
    return len(token.split(".")[1])


def resolution(token: str) -> float:
    """Half a unit in the last printed place: the rounding error the printed number carries."""
    t = token.lower()
    if "e" in t:
        mant, exp = t.split("e")
        d = len(mant.split(".")[1]) if "." in mant else 0
        return 0.5 * 10.0 ** (int(exp) - d)
    return 0.5 * 10.0 ** -decimals(token)


def agrees(derived: float, printed: float | None, token: str, rel: float = 0.0) -> bool:
    """Is a printed figure the one derived from other printed figures, within nccl-tests' rounding?

    nccl-tests computes algbw and busbw from the unrounded time and prints each rounded, so a
    bandwidth derived from the printed time carries that time's relative rounding `rel`
    (resolution(time) / time), and the printed bandwidth is off by up to half its last place.
    """
    return printed is not None and abs(derived - printed) <= derived * rel + resolution(token)


# ---- A whole log split into runs (your cluster) -----------------------------------------------

HOST = re.compile(r"\bon\s+(\S+)\s+device\b", re.I)
PID = re.compile(r"\bPid\s+(\d+)\b", re.I)
THREADS = re.compile(r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\b", re.I)
RUN_START = re.compile(r"^#\s*(nThread|Collective test starting|Using devices)\b", re.I)
MAX_LINES = 200_000  # lines looked at; beyond, the rest is reported as not read
MAX_READ = 20_000  # non-blank lines parsed; each costs tens of microseconds (more in Pyodide)


@dataclass
class Run:
    """One `all_reduce_perf` invocation: its rows, and the ranks and hosts its header lists."""

    rows: list[Row]
    ranks: set[int]
    hosts: set[str]
    first_line: int
    avg_busbw_GBps: float | None = None
    threads_gpus: tuple[int, int] | None = None  # the header's `nThread T nGpus G`
    processes: dict[tuple[str, str], int] = dataclasses.field(
        default_factory=dict
    )  # (host, Pid) -> ranks

    @property
    def gpus_per_thread(self) -> int:
        """How many GPUs one thread drove (all_reduce_perf -g): the header's nGpus, else the
        most `#  Rank` lines sharing one host and Pid (nccl-tests runs -g G GPUs per thread in
        one process); 1 when the log says neither. NCCL's kernels for those GPUs are launched
        one after another by that thread, which sets a floor under the time of a small call."""
        if self.threads_gpus:
            return max(1, self.threads_gpus[1])
        return max(self.processes.values(), default=1)


@dataclass
class Log:
    runs: list[Run]
    skipped: list[tuple[int, str, str]]  # (line number from 1, kind, reason); blanks counted only
    blank: int
    lines: int


def parse_runs(text: str) -> Log:
    """Every run in a log, in order. A run starts at a `# nThread ...` header or a `#  Rank`
    line after rows, or where the size stops growing (nccl-tests sweeps sizes upwards). Rows of
    a second MPI rank (a tag other than the first row's) are skipped, with that reason, as are
    lines past the reading limits: nothing is dropped without a line that says so.
    """
    if text.lstrip().startswith("{"):
        return parse_json(text)
    runs: list[Run] = []
    skipped: list[tuple[int, str, str]] = []
    blank = read = 0
    lines = text.splitlines()
    cur: Run | None = None
    rank_of_rows: int | None = None

    def fresh(i: int) -> Run:
        runs.append(Run([], set(), set(), i))
        return runs[-1]

    for i, line in enumerate(lines, 1):
        if i > MAX_LINES or read >= MAX_READ:
            why = f"not read: at most {MAX_READ:,} non-blank lines or {MAX_LINES:,} lines are read"
            skipped.append((i, "unread", f"lines {i:,}–{len(lines):,} {why}"))
            break
        if not line.strip():
            blank += 1
            continue
        read += 1
        item = parse_line(line)
        if isinstance(item, Row):
            if rank_of_rows is None:
                rank_of_rows = item.rank
            if item.rank != rank_of_rows:
                reason = f"a row printed by rank {item.rank}; rank {rank_of_rows}'s rows are used"
                skipped.append((i, "duplicate", reason))
                continue
            if cur is None or (cur.rows and item.size_bytes <= cur.rows[-1].size_bytes):
                cur = fresh(i)
            cur.rows.append(item)
            continue
        skipped.append((i, item.kind, item.reason))
        bare = _strip_tags(line.strip())[0].strip()
        rank = RANK_LINE.match(bare)
        if (RUN_START.match(bare) or rank) and (cur is None or cur.rows):
            cur = fresh(i)
        threads = THREADS.match(bare)
        if threads and cur is not None:
            cur.threads_gpus = (int(threads.group(1)), int(threads.group(2)))
        if rank and cur is not None:
            cur.ranks.add(int(rank.group(1)))
            host, pid = HOST.search(bare), PID.search(bare)
            if host:
                cur.hosts.add(host.group(1))
            if pid:
                key = (host.group(1) if host else "", pid.group(1))
                cur.processes[key] = cur.processes.get(key, 0) + 1
        if item.name == "avg bus bandwidth" and cur is not None:
            cur.avg_busbw_GBps = _float_or_none(item.value)
    return Log([r for r in runs if r.rows], skipped, blank, len(lines))


def _split_runs(rows: list[Row], first_line: int) -> list[Run]:
    """A new run wherever the size stops growing (another type, op or -N cycle)."""
    runs: list[Run] = []
    for row in rows:
        if not runs or row.size_bytes <= runs[-1].rows[-1].size_bytes:
            runs.append(Run([], set(), set(), first_line))
        runs[-1].rows.append(row)
    return runs


# ---- The JSON document of `-J FILE` ------------------------------------------------------------
#
# Written by NVIDIA/nccl-tests src/util.cu (version 2.19.6, commit a0b82b2): one object, on one
# line, with `config` (nthreads, ngpus, devices: writeDeviceReport, lines 643-731), `results` (one
# object per row: writeBenchmarkLinePreamble 461-465, writeBenchmarkLineBody 516-522,
# writePerIterReport 571-602, writeBenchmarkLineTerminator) and `average_bus_bandwidth` (788-790;
# spelled `average_bus_bandwidith` / `bandwidith` before commit 85ca91d, February 2026). Numbers
# are printed with "%lf" (line 296); `root` is the row's root as text ("%6i", line 456); `nwrong`
# is null when checking is off; the time key is `cpu_time` under -C; `out_of_place` is null in
# trace replay (line 483).
JSON_AVERAGE = (("average_bus_bandwidth", "bandwidth"), ("average_bus_bandwidith", "bandwidith"))


def parse_json(text: str) -> Log:
    """The runs of a `-J` JSON document, read as parse_runs reads the printed table.

    The GPU count is devices × nthreads × ngpus: each process reports one device entry, parsed
    from the first `#  Rank` line of its block (util.cu parseRankInfo, line 428, called once per
    process at lines 705-709 and 723), while a process drives nthreads × ngpus GPUs.
    """
    lines = text.count("\n") + 1
    try:
        doc = json.loads(text, parse_float=str)  # keep each number as printed, for resolution()
    except (json.JSONDecodeError, RecursionError) as e:
        msg = e.msg if isinstance(e, json.JSONDecodeError) else "nested too deep"
        why = f"starts like nccl-tests' -J JSON output but is not JSON: {msg}"
        return Log([], [(getattr(e, "lineno", 1), "unreadable", why)], 0, lines)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        return Log([], [(1, "unreadable", "a JSON document without a 'results' list")], 0, lines)
    rows, skipped = [], []
    for i, result in enumerate(doc["results"], 1):
        try:
            rows.append(_json_row(result))
        except (_Bad, TypeError, ValueError, KeyError) as e:
            skipped.append((1, "unreadable", f"result {i}: {_why(e)}"))
    runs = _split_runs(rows, 1)
    ranks, hosts = _json_devices(doc.get("config"))
    for run in runs:
        run.ranks, run.hosts = set(range(ranks)), set(hosts)
    if runs:
        runs[-1].avg_busbw_GBps = _json_average(doc)
    return Log(runs, skipped, 0, lines)


def _why(e: Exception) -> str:
    if isinstance(e, KeyError):
        return f"no {e.args[0]!r} field"
    return str(e) if isinstance(e, _Bad) else f"not a result row ({e})"


def _json_row(r: dict) -> Row:
    if not isinstance(r, dict):
        raise _Bad("not an object")
    size, count = r["size"], r["count"]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (size, count)):
        raise _Bad("size and count must be whole numbers, not negative")
    dtype, redop = r["type"], r["redop"]
    for word, field in ((dtype, "type"), (redop, "redop")):
        if not isinstance(word, str) or not WORD.match(word):
            raise _Bad(f"{field} is {word!r}, not a name")
    root = _whole(str(r["root"]).strip(), "root")
    out_of_place = _json_half(r, "out_of_place")
    in_place = _json_half(r, "in_place")
    if in_place is None:
        raise _Bad("no in-place result")
    return Row(size, count, dtype, redop, root, out_of_place, in_place)


def _json_half(r: dict, key: str) -> Half | None:
    h = r.get(key)
    if h is None:
        return None
    if not isinstance(h, dict):
        raise _Bad(f"{key} is not an object")
    fields = ("cpu_time" if "cpu_time" in h else "time", "alg_bw", "bus_bw")
    tokens = [_json_token(h[f]) for f in fields] + [_json_token(h.get("nwrong"))]
    half = _half(tokens, per_iter=False)
    it = r.get(f"{key}_per_iter")
    if isinstance(it, dict):
        keys = ("min_us", "max_us", "p99_us", "cv_pct")  # the text columns i_min i_max i_p99 i_cv%
        per_iter = tuple(_value(_json_token(it.get(k)), f"{key} {k}") for k in keys)
        half = replace(half, per_iter_us=per_iter)
    return half


def _json_token(v) -> str:
    """A JSON value as the text token the table would show: numbers as printed, null as N/A."""
    if v is None:
        return "N/A"
    if isinstance(v, bool) or not isinstance(v, str | int):
        raise _Bad(f"{v!r} is not a number")
    return str(v)


def _json_devices(config) -> tuple[int, list[str]]:
    if not isinstance(config, dict) or not isinstance(config.get("devices"), list):
        return 0, []
    per_process = 1
    for key in ("nthreads", "ngpus"):
        v = config.get(key)
        per_process *= v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1
    devices = [d for d in config["devices"] if isinstance(d, dict)]
    hosts = [d["hostname"] for d in devices if isinstance(d.get("hostname"), str)]
    return len(devices) * per_process, hosts


def _json_average(doc: dict) -> float | None:
    for outer, inner in JSON_AVERAGE:
        v = doc.get(outer)
        if isinstance(v, dict) and inner in v:
            return _float_or_none(v[inner])
    return None


def _float_or_none(text: str | None) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def agreement(size: int, half: Half, factor: float) -> dict | None:
    """Do a half's printed algbw and busbw follow from the printed size and time, with busbw =
    algbw × factor (None when its time or algbw is N/A or 0)?

    nccl-tests computes them from the unrounded time and prints each rounded, so
    allow for the rounding of the time, and of the bandwidths themselves, before calling them
    different.
    """
    if half.time_us is None or half.time_us == 0 or half.algbw_GBps is None:
        return None
    algbw = size / half.time_us / 1e3
    busbw = algbw * factor
    rel = resolution(half.text[0]) / half.time_us
    ok_alg = abs(algbw - half.algbw_GBps) <= algbw * rel + resolution(half.text[1])
    ok_bus = half.busbw_GBps is not None and abs(busbw - half.busbw_GBps) <= busbw * rel + (
        resolution(half.text[2])
    )
    return {
        "algbw_GBps": algbw,
        "busbw_GBps": busbw,
        "algbw_agrees": ok_alg,
        "busbw_agrees": ok_bus,
    }
