"""Time NCCL's topology search (allreduce_explainer.topology) on each preset, on 1 and 4 servers,
under CPython and under Pyodide (Node), side by side, against issue 48's targets.

`measure` is the single definition of what is timed: this script calls it under CPython, and
bench/core_pyodide.mjs loads this file's text into Pyodide and calls it there. The site's core zip
ships Python files only, so the presets' topology files travel inside that text (PRESET_TEXTS).
Usage, from the repo root: .venv/bin/python bench/topology.py [--repeats N] [--no-pyodide]
[--write]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "bench" / "TOPOLOGY.md"
SERVERS = (1, 4)
# Issue 48's Pyodide targets in seconds: an 8-GPU server, and 4 of them
TARGETS = {1: 0.200, 4: 1.0}
PRESET_TEXTS: dict[str, str] = {}  # filled in the text Pyodide runs (see run_pyodide)


def _texts() -> dict[str, str]:
    """The presets' topology files: from the package under CPython, from this text in Pyodide."""
    if PRESET_TEXTS:
        return PRESET_TEXTS
    from allreduce_explainer.topology import PRESETS, preset_text

    return {name: preset_text(name) for name in PRESETS}


def measure(repeats: int = 1) -> dict[str, float]:
    """Median seconds of `topology(preset, servers)` per case; stdlib + core only, because it
    also runs inside Pyodide."""
    # imported here: this file's text also runs in Pyodide, which has only the core
    from allreduce_explainer.topology import topology

    texts = _texts()
    topology(texts[next(iter(texts))], 1)  # warm up: V8 compiles Pyodide's WebAssembly in tiers
    out = {}
    for name, text in texts.items():
        for servers in SERVERS:
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                topology(text, servers)
                times.append(time.perf_counter() - t)
            out[f"{name} x{servers}"] = statistics.median(times)
    return out


def run_pyodide(repeats: int) -> tuple[str, dict[str, float]]:
    """This file's `measure` under Pyodide, the presets' files carried in its text."""
    sys.path.insert(0, str(ROOT / "bench"))
    from core import run_in_pyodide

    script = Path(__file__).read_text() + f"\nPRESET_TEXTS.update({_texts()!r})\n"
    return run_in_pyodide(script, repeats)


def table(cpython: dict[str, float], pyodide: dict[str, float] | None) -> str:
    """Markdown: both interpreters in ms, their ratio, and each Pyodide target met or not."""
    if pyodide is None:
        rows = ["| Search | CPython (ms) |", "|---|---:|"]
        rows += [f"| {case} | {c * 1e3:.0f} |" for case, c in cpython.items()]
        return "\n".join(rows)
    rows = [
        "| Search | CPython (ms) | Pyodide (ms) | Pyodide/CPython | Target (Pyodide) |",
        "|---|---:|---:|---:|---|",
    ]
    for case, c in cpython.items():
        p = pyodide[case]
        limit = TARGETS[int(case.rsplit("x", 1)[1])]
        verdict = "PASS" if p < limit else "FAIL"
        rows.append(
            f"| {case} | {c * 1e3:.0f} | {p * 1e3:.0f} | {p / c:.2f} | "
            f"< {limit * 1e3:g} ms: {verdict} |"
        )
    return "\n".join(rows)


def main() -> None:
    import argparse
    import platform

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-pyodide", action="store_true", help="CPython only")
    parser.add_argument("--write", action="store_true", help=f"also write {REPORT.name}")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    cpython = measure(args.repeats)
    version, pyodide = (None, None) if args.no_pyodide else run_pyodide(args.repeats)
    head = (
        f"CPython {platform.python_version()}"
        + (f", Pyodide's Python {version.split()[0]}" if version else "")
        + f"; medians of {args.repeats} run(s); x1 is one 8-GPU server, x4 four of them. "
        + "Wall times, on a machine whose load average was "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg())
        + f" on {os.cpu_count()} CPUs when the run ended: under load the ratio is noisy."
    )
    section = f"{head}\n\n{table(cpython, pyodide)}"
    print(section)
    if args.write:
        title = "# Topology search speed (bench/topology.py)"
        REPORT.write_text(f"{title}\n\n{section}\n")
    print(json.dumps({"cpython": cpython, "pyodide": pyodide}), file=sys.stderr)


if __name__ == "__main__":
    main()
