"""The published GRAPH-line pairs: the port's search on the system each log printed, held
against the search the same log printed, field by field and channel line by channel line.

A pair is a log that prints both the system NCCL detected (`=== System ...`, NCCL_DEBUG_SUBSYS
=GRAPH) and the ring and tree search's results for it (`Pattern ...` and its channel lines), or
a topology dump (NCCL_TOPO_DUMP_FILE) beside the graph dump NCCL wrote for it
(NCCL_GRAPH_DUMP_FILE); tests/data/topology/SOURCES.json (`graph_pairs`, `graph_dumps`) lists
them with their URLs, and tests/core/topology/test_graphlog.py and test_graph_dumps.py hold
every match and every listed difference.
Usage, from the repo root: PYTHONPATH=src .venv/bin/python bench/graph_pairs.py [--json]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from allreduce_explainer.topology import logcheck
from allreduce_explainer.topology.system import PATH_TYPE

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "topology"


def rows() -> list[dict]:
    sources = json.loads((DATA / "SOURCES.json").read_text())
    out = []
    for p in sources["graph_pairs"]:
        r = logcheck.check((DATA / p["file"]).read_text())
        out.append(_row(p["file"], p, r, r["nccl_version"] or p["nccl"], p["url"]))
    for p in sources["graph_dumps"]:
        level = PATH_TYPE.index(p["p2p_level"]) if "p2p_level" in p else None
        r = logcheck.check_dump((DATA / p["topology"]).read_text(),
                                (DATA / p["graphs"]).read_text(), p["servers"], level)  # fmt: skip
        out.append(_row(p["graphs"], p, r, p["nccl"], p["graphs_url"]))
    return out


def _row(file: str, p: dict, r: dict, nccl: str, url: str) -> dict:
    return {"file": file, "kind": p["kind"], "nccl": nccl, "servers": r["servers"],
            "fields": r["fields"], "fields_equal": r["fields_equal"],
            "channels": r["channels"], "channels_equal": r["channels_equal"],
            "differences": r["differences"], "url": url}  # fmt: skip


def main() -> None:
    rs = rows()
    if "--json" in sys.argv:
        print(json.dumps(rs, indent=1))
        return
    print(f"{'pair':48} {'kind':13} {'NCCL':11} {'fields':>7} {'channel lines':>14}  differences")
    for r in rs:
        print(f"{Path(r['file']).name:48} {r['kind']:13} {r['nccl']:11} "
              f"{r['fields_equal']:>3}/{r['fields']:<3} {r['channels_equal']:>6}/{r['channels']:<7}"
              f"  {', '.join(r['differences']) or '-'}")  # fmt: skip
    kinds = Counter(r["kind"] for r in rs)
    print(f"\n{len(rs)} pairs ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}): "
          f"{sum(r['fields_equal'] for r in rs)} of {sum(r['fields'] for r in rs)} fields and "
          f"{sum(r['channels_equal'] for r in rs)} of {sum(r['channels'] for r in rs)} channel "
          "lines equal")  # fmt: skip


if __name__ == "__main__":
    main()
