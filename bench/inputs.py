"""Time every widget at its defaults and at every input's extremes, the first time, under CPython
and under Pyodide (Node), against the pages' budgets: 250 ms for any input, 20 ms for a usual
change.

"The first time" is the state a reader's page is in: the site's Python snapshot
(buildtools/snapshot.mjs) has made its calls (widgets.SNAPSHOT_CALLS: most widgets at their
defaults, the widgets' WARM calls), nothing else. Before each case `fresh()` rebuilds that
state: it empties every cache of the core and makes the snapshot's calls again. Then the case is
timed once (`first`), and again right after (`again`: what an identical second call costs, its
caches warm).

`measure` is the single definition of what is timed: this script runs it under CPython, and
bench/core_pyodide.mjs loads this very file into Pyodide and runs it there. Usage, from the repo
root: .venv/bin/python bench/inputs.py [--write] [--only WIDGET[,WIDGET]] [--cpython-only]
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADING = "## Every input, first time"
FIRST_MS = 250.0  # any input, the first time (the bound)
USUAL_MS = 20.0  # Python's share of a usual change's 50 ms p95 (rendering takes 15-25 ms)
ONLY: tuple[str, ...] = ()  # widgets to run; empty: all (set by main)
CASES: list | None = None  # the cases, as CPython made them: set in the copy Pyodide runs

# Parameters whose extremes compound: every combination of the values listed ("ext": lo and hi,
# or every choice) is a case, besides each parameter's extremes alone.
BIGGEST = "llama3-405b"
INTERACT: dict[str, list[dict[str, object]]] = {
    "cluster": [
        {"model": [BIGGEST], "algorithm": "ext", "gpus": "ext", "gpus_per_node": "ext"},
        {"model": "ext", "algorithm": ["auto", "nccl", "tree"]},
        {"gpus": [4096], "gpus_per_node": [8], "algorithm": "ext", "gpu": ["MI300X", "custom"]},
    ],
    "shard_memory": [
        {"model": [BIGGEST], "comm_model": "ext", "gpus": "ext", "gpus_per_node": "ext"},
        {"model": "ext", "gpu": "ext", "network": ["100 Gb/s"], "gpus": [1024]},
    ],
    "ddp_buckets": [
        {"model": [BIGGEST], "bucket_cap_mb": "ext", "gpus": "ext", "gpus_per_node": "ext"},
        {"model": "ext", "first_bucket": "ext", "bucket_cap_mb": [0.001]},
    ],
    "servers_compare": [{"servers": "ext", "gpus_per_node": "ext", "inter_latency": "ext"}],
    "servers_stepper": [
        {"method": "ext", "servers": "ext", "gpus_per_node": "ext", "length": "ext"}
    ],
    "latency": [{"gpus": "ext", "gpus_per_node": "ext", "latency_us": "ext"}],
    "tree_allreduce": [{"gpus": "ext", "length": "ext", "chunks": "ext", "dtype": ["bf16"]}],
    "innetwork_bandwidth": [{"gpus": "ext", "servers": "ext", "gpu": "ext"}],
    "innetwork_stepper": [{"gpus": "ext", "length": "ext", "dtype": ["bf16"]}],
    "ring_reduce_scatter": [{"gpus": "ext", "length": "ext", "dtype": "ext"}],
    "ring_all_gather": [{"gpus": "ext", "length": "ext", "dtype": "ext"}],
    "shard_stepper": [{"gpus": "ext", "length": "ext", "optimizer": "ext", "reference": "ext"}],
    "naive": [{"gpus": "ext", "length": "ext"}],
    "busbw_curve": [{"servers": "ext", "gpus_per_node": "ext", "algorithm": "ext", "gpu": "ext"}],
    "sends": [{"gpus": "ext", "gradient_gb": "ext"}],
    "scaling": [{"gpus": "ext", "params_b": "ext"}],
}


def extremes(p) -> list:
    """lo and hi of a number, every choice of a select; nothing for free text and data."""
    if p.kind in ("choice", "name"):
        return list(p.values())
    if p.kind in ("int", "float") and p.lo is not None and p.hi is not None:
        return [p.lo if p.kind == "float" else int(p.lo), p.hi if p.kind == "float" else int(p.hi)]
    return []


def cases() -> list[tuple[str, dict]]:
    """(widget, params): the defaults, each input at its extremes, and INTERACT's combinations;
    each distinct call once."""
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    from allreduce_explainer.widgets import SPECS

    out: list[tuple[str, dict]] = []
    seen: set[str] = set()

    def add(name: str, params: dict) -> None:
        key = name + json.dumps(params, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append((name, params))

    for name, spec in SPECS.items():
        if ONLY and name not in ONLY:
            continue
        add(name, {})
        for p in spec.values():
            for v in extremes(p):
                if v != p.default:
                    add(name, {p.name: v})
        for group in INTERACT.get(name, []):
            axes = [
                [(k, v) for v in (extremes(spec[k]) if vals == "ext" else vals)]
                for k, vals in group.items()
            ]
            for combo in itertools.product(*axes):
                add(name, dict(combo))
        for params in _logs(name):
            add(name, params)
    return out


def _logs(name: str) -> list[dict]:
    """The calculator's pasted log: a real one, and one at the size limit."""
    if name != "cluster":
        return []
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    from allreduce_explainer.logs import explain

    log = (ROOT / "tests" / "data" / "allreduce_current.txt").read_text()
    big = log
    while len(big) + len(log) <= explain.MAX_LOG_BYTES:
        big += log
    return [{"log": log}, {"log_file": big}]


def fresh() -> None:
    """The page's state right after the snapshot: every cache of the core emptied (each module's
    functools caches: the core keeps no other state), then the snapshot's calls made
    (widgets.SNAPSHOT_CALLS)."""
    import allreduce_explainer.widgets  # noqa: F401 - imports every module of the core

    for mod in [m for n, m in sys.modules.items() if n.split(".")[0] == "allreduce_explainer"]:
        for obj in list(vars(mod).values()):
            if callable(getattr(obj, "cache_clear", None)):
                obj.cache_clear()
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    from allreduce_explainer import bridge
    from allreduce_explainer.widgets import SNAPSHOT_CALLS

    for name, params in SNAPSHOT_CALLS:
        assert json.loads(bridge.call(name, json.dumps(params)))["ok"], (name, params)


def _call(name: str, params: dict) -> tuple[float, str]:
    """Seconds for one call through the bridge, as the worker makes it, and its outcome."""
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    from allreduce_explainer import bridge

    text = json.dumps(params)
    t = time.perf_counter()
    out = json.loads(bridge.call(name, text))
    dt = time.perf_counter() - t
    return dt, "ok" if out["ok"] else f"refused: {out['error']['field']}"


def measure(repeats: int = 3) -> list[dict]:
    """Every case: first-call seconds, a second identical call, and the outcome. A first call
    over USUAL_MS is made again from fresh states, up to `repeats` times in all, and the least
    kept: the 2-core machine is shared, and a cold call can only be slowed by the others."""
    out = []
    for name, params in CASES if CASES is not None else cases():
        firsts: list[float] = []
        while not firsts or (min(firsts) > USUAL_MS / 1e3 and len(firsts) < max(1, repeats)):
            fresh()
            dt, outcome = _call(name, params)
            firsts.append(dt)
            again, _ = _call(name, params)
        row = {"widget": name, "params": label(params), "outcome": outcome}
        out.append(row | {"first": min(firsts), "again": again, "tries": len(firsts)})
    return out


def label(params: dict) -> str:
    """The parameters as the table shows them: a pasted log by its size, not its text."""
    shown = {
        k: f"<{len(v.splitlines()):,} lines>" if isinstance(v, str) and len(v) > 60 else v
        for k, v in params.items()
    }
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "(defaults)"


def run_pyodide(cases_: list, repeats: int) -> tuple[str, list[dict]]:
    """Run `measure` under Pyodide in Node over the same cases: a copy of this file whose CASES
    holds them (bench/core.py's runner)."""
    sys.path.insert(0, str(ROOT / "bench"))
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    import core

    script = Path(__file__).read_text() + f"\n\nCASES = json.loads({json.dumps(cases_)!r})\n"
    return core.run_in_pyodide(script, repeats, timeout_s=3600)


def table(cpython: list[dict], pyodide: list[dict] | None) -> str:
    """Markdown: one row per case, both interpreters' first call in ms, and the flags."""
    rows = [
        "| Widget | Parameters | Outcome | CPython first (ms) | Pyodide first (ms) "
        "| Pyodide again (ms) | Flag |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for i, c in enumerate(cpython):
        p = pyodide[i] if pyodide else None
        ms = (p or c)["first"] * 1e3
        flag = (
            f"> {FIRST_MS:g} ms"
            if ms > FIRST_MS
            else (f"> {USUAL_MS:g} ms" if ms > USUAL_MS else "")
        )
        pf = f"{p['first'] * 1e3:.1f}" if p else "–"
        pa = f"{p['again'] * 1e3:.1f}" if p else "–"
        rows.append(
            f"| {c['widget']} | {c['params']} | {(p or c)['outcome']} | {c['first'] * 1e3:.1f} "
            f"| {pf} | {pa} | {flag} |"
        )
    return "\n".join(rows)


def worst(cpython: list[dict], pyodide: list[dict] | None, before: dict | None = None) -> str:
    """Markdown: each widget's slowest first call, and how many of its cases pass each budget;
    with `before` (widget -> slowest Pyodide ms of an earlier run), that figure beside it."""
    before = before or {}
    rows = [
        "| Widget | Cases | Slowest first call | CPython (ms) | Pyodide (ms) "
        f"| over {FIRST_MS:g} ms | over {USUAL_MS:g} ms |"
        + (" Pyodide before (ms) |" if before else ""),
        "|---|---:|---|---:|---:|---:|---:|" + ("---:|" if before else ""),
    ]
    by: dict[str, list[int]] = {}
    for i, c in enumerate(cpython):
        by.setdefault(c["widget"], []).append(i)
    ref = pyodide or cpython
    for name, idx in sorted(by.items(), key=lambda kv: -max(ref[i]["first"] for i in kv[1])):
        i = max(idx, key=lambda i: ref[i]["first"])
        over = sum(ref[j]["first"] * 1e3 > FIRST_MS for j in idx)
        usual = sum(ref[j]["first"] * 1e3 > USUAL_MS for j in idx)
        pf = f"{pyodide[i]['first'] * 1e3:.1f}" if pyodide else "–"
        rows.append(
            f"| {name} | {len(idx)} | {cpython[i]['params']} | {cpython[i]['first'] * 1e3:.1f} "
            f"| {pf} | {over} | {usual} |" + (f" {before.get(name, '–')} |" if before else "")
        )
    return "\n".join(rows)


def _untimed(todo: list) -> list[dict]:
    """The cases' rows without CPython's timings (--pyodide-only)."""
    nan = float("nan")
    return [{"widget": n, "params": label(p), "outcome": "", "first": nan} for n, p in todo]


def read_before(path: str) -> dict[str, str]:
    """Each widget's slowest Pyodide first call from an earlier run's printed output."""
    out = {}
    for line in Path(path).read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 7 and cells[1].isdigit():  # the summary table: widget, cases, ...
            out[cells[0]] = cells[4]
    return out


def write_results(section: str) -> None:
    """Replace this script's section of bench/RESULTS.md, keeping every other section."""
    sys.path.insert(0, str(ROOT / "bench"))
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    import core

    core.HEADING = HEADING
    core.write_results(section)


def main() -> None:
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    import argparse

    global ONLY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="also update bench/RESULTS.md")
    parser.add_argument("--only", default="", help="comma-separated widgets (default: all)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh states per slow case (the least is kept)"
    )
    parser.add_argument("--cpython-only", action="store_true", help="skip Pyodide")
    parser.add_argument("--pyodide-only", action="store_true", help="skip CPython's timings")
    parser.add_argument("--before", help="an earlier run's output: its slowest calls beside")
    parser.add_argument("--before-note", default="", help="what the earlier run measured")
    args = parser.parse_args()
    ONLY = tuple(w for w in args.only.split(",") if w)
    todo = cases()
    cpython = measure(args.repeats) if not args.pyodide_only else _untimed(todo)
    pyodide = None
    version = ""
    if not args.cpython_only:
        version, pyodide = run_pyodide(todo, args.repeats)
    sys.path.insert(0, str(ROOT / "bench"))
    # imported here: a copy of this file runs in Pyodide, and the first import is timed
    import core

    head = core.machine(version or "? (not run)", args.repeats).rsplit(" Medians", 1)[0]
    load = "load average {:.1f}, {:.1f}, {:.1f} at the end".format(*os.getloadavg())
    before = read_before(args.before) if args.before else None
    note = f"Pyodide before: {args.before_note}" if before else ""
    summary = worst(cpython, pyodide, before)
    parts = [f"{head.rstrip('.')}; {load}.", METHOD, *([note] if note else []), summary]
    parts.append(table(cpython, pyodide))
    section = "\n\n".join(parts)
    print(section)
    if args.write:
        write_results(section)
        print(f"\nwritten to {(ROOT / 'bench' / 'RESULTS.md').relative_to(ROOT)}")


METHOD = (
    "`.venv/bin/python bench/inputs.py --write`: every widget at its defaults, each input at its "
    "extremes (lo, hi, every choice) and the combinations that compound (bench/inputs.py, "
    "INTERACT), each the first time: before each case every cache of the core is emptied and "
    "the calls the site's Python snapshot made are made again (each widget at its defaults, the "
    "WARM calls). Then the case is timed once, through `bridge.call` as the page's worker calls "
    f"it, and again right after; a first call over {USUAL_MS:g} ms is measured up to three times "
    "from fresh states and the least kept (the machine is shared). "
    f"Budgets: {FIRST_MS:g} ms for any input the first time; "
    f"{USUAL_MS:g} ms of Python for a usual change (a change's p95 is 50 ms with 15-25 ms of "
    "rendering). Pyodide's interpreter here has run the cases before it (V8 has optimised it), "
    "as a page's worker has after its warm-up; a page's very first change can be 2-4 times "
    "slower (see above)."
)


if __name__ == "__main__":
    main()
