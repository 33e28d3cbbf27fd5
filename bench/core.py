"""Time the core under CPython and under Pyodide (Node), side by side, against the page's targets.

`measure` is the single definition of what is timed: this script calls it under CPython, and
bench/core_pyodide.mjs loads this very file into Pyodide and calls it there, so both interpreters
run exactly the same code. Usage, from the repo root: .venv/bin/python bench/core.py [--write]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## Core simulation speed"
TRACE_GPUS = (8, 16, 32)
# Pyodide targets in seconds: what a reader can wait for after moving a slider.
TARGETS = {
    "trace ring n=16, L=128": 0.020,
    "1,000 cost evaluations (ring, n=64)": 0.020,
    "summary ring n=1024, 8/server, L=1024": 2.0,
    "summary hierarchical n=1024, 8/server, L=1024": 2.0,
    # a page sweeps 30+ sizes per change through NCCL's model: within a change's 50 ms budget
    "NCCL model, 32 sizes, 8 x 8 H100": 0.050,
    "NCCL model, 32 sizes, a new cluster each call": 0.050,
}


def _median(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of `repeats` calls: robust to one cold or interrupted run."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def summary_repeats(repeats: int) -> int:
    """Fewer runs of the slow summary cases: each takes seconds under Pyodide."""
    return max(1, repeats // 2 + 1)


def measure(repeats: int = 5) -> dict[str, float]:
    """Median seconds per case; stdlib + core only, because it also runs inside Pyodide."""
    # imported here: this file's text also runs in Pyodide, which has only the core
    from allreduce_explainer import api

    # Warm up first: V8 compiles Pyodide's WebAssembly in tiers, so the first calls run slower.
    for algorithm in ("ring", "hierarchical"):
        api.simulate(algorithm=algorithm, gpus=16, gpus_per_node=8, length=128, trace=True)
    out = {}
    for n in TRACE_GPUS:
        out[f"trace ring n={n}, L={8 * n}"] = _median(
            lambda n=n: api.simulate(algorithm="ring", gpus=n, length=8 * n, seed=n, trace=True),
            repeats,
        )
    summary = {"gpus": 1024, "gpus_per_node": 8, "length": 1024, "seed": 1}  # int, no trace
    for algorithm in ("ring", "hierarchical"):
        out[f"summary {algorithm} n=1024, 8/server, L=1024"] = _median(
            lambda a=algorithm: api.simulate(algorithm=a, **summary), summary_repeats(repeats)
        )

    def costs() -> None:
        for i in range(1000):
            api.estimate(algorithm="ring", gpus=64, bytes=1024.0 * (i + 1), gpus_per_node=8)

    out["1,000 cost evaluations (ring, n=64)"] = _median(costs, repeats)
    out.update(_nccl(repeats))
    return out


def _nccl(repeats: int) -> dict[str, float]:
    """NCCL's model over the sizes a page sweeps: a cluster seen before (its channel search
    cached), and a new one each call (the search too)."""
    # imported here: this file's text also runs in Pyodide, which has only the core
    from allreduce_explainer import nccl

    sizes = [2**k for k in range(3, 35)]  # 8 B .. 16 GiB: 32 sizes

    def sweep(system) -> None:
        for b in sizes:
            nccl.predict("AllReduce", b, system)

    cached = nccl.System("H100 SXM", 64, 8, 8, 400.0)
    sweep(cached)
    rates = iter(range(100, 100 + 10 * repeats))
    return {
        "NCCL model, 32 sizes, 8 x 8 H100": _median(lambda: sweep(cached), repeats),
        "NCCL model, 32 sizes, a new cluster each call": _median(
            lambda: sweep(nccl.System("H100 SXM", 64, 8, 8, float(next(rates)))), repeats
        ),
    }


def run_in_pyodide(script: str, repeats: int, timeout_s: int = 1800) -> tuple[str, object]:
    """Run `measure` of `script` (a bench file's text) under Pyodide in Node, from the zip the
    site ships (bench/core_pyodide.mjs): Pyodide's Python version, and what `measure` returned."""
    # imported here: this file's text also runs in Pyodide, which has only the core
    import shutil
    import subprocess
    import tempfile

    sys.path.insert(0, str(ROOT))
    # imported here: this file's text also runs in Pyodide, which has only the core
    from sitebuild.python_assets import compiled_core

    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "pyodide").is_dir():
        sys.exit("Node.js and node_modules/pyodide are needed: install Node, then run `npm ci`")
    with tempfile.TemporaryDirectory() as tmp:
        zip_path = Path(tmp) / "core.zip"
        zip_path.write_bytes(compiled_core())
        source = Path(tmp) / "bench.py"
        source.write_text(script)
        proc = subprocess.run(
            [
                node,
                str(ROOT / "bench" / "core_pyodide.mjs"),
                str(zip_path),
                str(source),
                str(repeats),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    if proc.returncode != 0:
        sys.exit(f"Pyodide run failed:\n{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout)
    return out["python"], out["results"]


def run_pyodide(repeats: int) -> tuple[str, dict[str, float]]:
    """This file's `measure` under Pyodide."""
    return run_in_pyodide(Path(__file__).read_text(), repeats)


def table(cpython: dict[str, float], pyodide: dict[str, float]) -> str:
    """Markdown table: both interpreters in ms, their ratio, and each Pyodide target met or not."""
    rows = [
        "| Measurement | CPython (ms) | Pyodide (ms) | Pyodide/CPython | Target (Pyodide) |",
        "|---|---:|---:|---:|---|",
    ]
    for case, c in cpython.items():
        p = pyodide[case]
        limit = TARGETS.get(case)
        target = (
            "" if limit is None else (f"< {limit * 1e3:g} ms: {'PASS' if p < limit else 'FAIL'}")
        )
        rows.append(f"| {case} | {c * 1e3:.1f} | {p * 1e3:.1f} | {p / c:.2f} | {target} |")
    return "\n".join(rows)


def machine(pyodide_version: str, repeats: int) -> str:
    """Enough about the machine and interpreters to compare figures taken elsewhere."""
    # imported here: this file's text also runs in Pyodide, which has only the core
    import datetime
    import platform

    cpuinfo = Path("/proc/cpuinfo")
    models = [
        line.split(":", 1)[1].strip()
        for line in (cpuinfo.read_text().splitlines() if cpuinfo.exists() else [])
        if line.startswith("model name")
    ]
    return (
        f"Measured {datetime.date.today().isoformat()} on {models[0] if models else '?'}, "
        f"nproc = {_cmd('nproc')}; "
        f"CPython {platform.python_version()}, Pyodide's Python {pyodide_version.split()[0]} "
        f"(Node {_cmd('node', '--version')}). "
        f"Medians of {repeats} runs ({summary_repeats(repeats)} for the summary cases)."
    )


def _cmd(*args: str) -> str:
    """One line of a command's output, or '?' where the command is missing."""
    # imported here: this file's text also runs in Pyodide, which has only the core
    import subprocess

    try:
        return subprocess.run(args, capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def write_results(section: str) -> None:
    """Replace this script's section of bench/RESULTS.md in place, keeping every other section."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    new = [HEADING, "", section, ""]
    out: list[str] = []
    skipping = replaced = False
    for line in text.splitlines():
        if line.startswith("## "):
            skipping = line.strip() == HEADING
            if skipping and not replaced:
                out += new
                replaced = True
        if not skipping:
            out.append(line)
    if not replaced:
        out += ["", *new] if out and out[-1] else new
    RESULTS.write_text("\n".join(out).rstrip("\n") + "\n")


def main() -> None:
    # imported here: this file's text also runs in Pyodide, which has only the core
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="also update bench/RESULTS.md")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cpython = measure(args.repeats)
    pyodide_version, pyodide = run_pyodide(args.repeats)
    section = f"{machine(pyodide_version, args.repeats)}\n\n{table(cpython, pyodide)}"
    print(section)
    if args.write:
        write_results(section)
        print(f"\nwritten to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
