"""The presets' search results, computed once and shipped: the graphs NCCL's tuning reads.

NCCL's tuning model (src/graph/tuning.cc:243-541) reads each algorithm's graph: its channel
count, bwIntra, bwInter, typeIntra and typeInter. For the servers the calculator offers (the
DGX presets, presets/*.xml) these come from this package's search, as NCCL computes them
(init.cc:1173-1216, the ring and tree cut to the fewer of their channels, init.cc:1459). The
search takes up to seconds (four on two DGX B200 in CPython, more in the browser), and its
answer depends only on the file and on whether the job spans servers (`System.inter`, which
sets the speed array and the cards' part, search.cc:1087-1100), so it is run here once per
preset, one server and several, and the answers are shipped in presets/searched.json:
`python -m allreduce_explainer.topology.searched --write` writes it, and the tests hold it
against a live search.
"""

from __future__ import annotations

import argparse
import json
from functools import lru_cache
from importlib import resources

from . import run
from .search import PATTERN, Graph
from .system import PATH_TYPE

FILE = "searched.json"
# each preset's GPU, named as the catalog and the tuning model name it (catalog/hardware.py)
PRESET_GPU = {"dgx-a100": "A100 SXM", "dgx-h100": "H100 SXM", "dgx-h200": "H200 SXM",
              "dgx-b200": "B200"}  # fmt: skip
SPANS = {"one": 1, "several": 2}  # one server, or a job across servers (the search's `inter`)


def as_dict(g: Graph | None) -> dict | None:
    """What the tuning model reads of a graph, with nccl/topology.py's Graph's field names."""
    if g is None:
        return None
    return {
        "pattern": PATTERN[g.pattern],
        "n_channels": g.n_channels,
        "bw_intra": round(g.bw_intra, 3),
        "bw_inter": round(g.bw_inter, 3),
        "type_intra": PATH_TYPE[g.type_intra],
        "type_inter": PATH_TYPE[g.type_inter],
    }


def search(name: str, servers: int) -> dict:
    """One preset's server as its search sees it and the ring, tree and NVLS graphs it finds
    for a job on `servers` servers (the slow part: run.graphs)."""
    s = run.load(run.preset_text(name), servers)
    ring, tree, nvls = run.graphs(s)
    nets = s.nets
    return {
        "gpus": len(s.gpus),
        "nics": len(nets),
        "nic_Gbps": round(nets[0].bw * 8, 3) if nets else 0.0,
        "ring": as_dict(ring),
        "tree": as_dict(tree),
        "nvls": as_dict(nvls),
    }


def compute() -> dict:
    """Every preset's search, for one server and for several: what presets/searched.json holds."""
    return {
        name: {"gpu": gpu} | {span: search(name, n) for span, n in SPANS.items()}
        for name, gpu in PRESET_GPU.items()
    }


@lru_cache(maxsize=1)
def shipped() -> dict:
    """presets/searched.json, read once."""
    text = resources.files(__package__).joinpath("presets", FILE).read_text()
    return json.loads(text)


def find(gpu: str, gpus_per_server: int, nics: int, nic_Gbps: float, servers: int) -> dict | None:
    """The searched graphs of the preset that is this server (its GPU, GPUs, cards and card
    rate), for a job on `servers` of them; None when no preset is."""
    for entry in shipped().values():
        found = entry["several" if servers > 1 else "one"]
        server = (found["gpus"], found["nics"], found["nic_Gbps"])
        if entry["gpu"] == gpu and server == (gpus_per_server, nics, nic_Gbps):
            return found
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write presets/{FILE}")
    args = parser.parse_args(argv)
    text = json.dumps(compute(), indent=1) + "\n"
    if args.write:
        path = resources.files(__package__).joinpath("presets", FILE)
        with resources.as_file(path) as p:
            p.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
