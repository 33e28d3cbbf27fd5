"""A topology NCCL dumped (NCCL_TOPO_DUMP_FILE) held against the graphs NCCL dumped for it
(NCCL_GRAPH_DUMP_FILE): the port's ring and tree searches on the topology file give every field
and every channel of the graph file (tests/data/topology/SOURCES.json, graph_dumps).

The graph file is read here with the standard library, as ncclTopoGetXmlFromGraph writes it
(search.cc:1002-1022 in 2.30.7): a <graph> per search with its pattern, crossnic, nchannels,
speedintra/speedinter, typeintra/typeinter and samechannels, and a <channel> per channel listing
the GPUs by their CUDA device (`dev`, hex since 2.21) between the NETs when the job crossed
servers. The port's channels list ranks; the topology file's <gpu dev rank> maps one to the other.
"""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from allreduce_explainer.errors import ParamError
from allreduce_explainer.topology import logcheck, run
from allreduce_explainer.topology.system import PATH_TYPE

DATA = Path(__file__).parents[2] / "data" / "topology"
DUMPS = json.loads((DATA / "SOURCES.json").read_text())["graph_dumps"]
PATTERN = {4: "RING", 1: "BALANCED_TREE", 2: "SPLIT_TREE", 3: "TREE"}  # graph.h NCCL_TOPO_PATTERN_*


def dumped(graph: ET.Element, rank_of_dev: dict[int, int]) -> dict:
    """One <graph> as the port's graph JSON spells it."""
    a = graph.attrib
    return {
        "pattern": PATTERN[int(a["pattern"])],
        "crossNic": int(a["crossnic"]),
        "nChannels": int(a["nchannels"]),
        "bwIntra": float(a["speedintra"]),
        "bwInter": float(a["speedinter"]),
        "typeIntra": a["typeintra"],
        "typeInter": a["typeinter"],
        "sameChannels": int(a["samechannels"]),
        "gpus": [[rank_of_dev[int(g.get("dev"), 0)] for g in c.iter("gpu")] for c in graph],
    }


def ported(g: dict) -> dict:
    keys = ("pattern", "crossNic", "nChannels", "bwIntra", "bwInter", "typeIntra", "typeInter",
            "sameChannels")  # fmt: skip
    return {**{k: g[k] for k in keys}, "gpus": [c["gpus"] for c in g["channels"]]}


def p2p_level(pair: dict) -> int | None:
    """The P2P level the source's machine ran at where NCCL's default was not it (SOURCES.json
    says why: NVML's P2P status is not in a dump)."""
    return PATH_TYPE.index(pair["p2p_level"]) if "p2p_level" in pair else None


@pytest.mark.parametrize("pair", DUMPS, ids=[p["graphs"] for p in DUMPS])
def test_ring_and_tree_equal_the_dumped_graphs(pair):
    topo = (DATA / pair["topology"]).read_text()
    rank_of_dev = {int(g.get("dev")): int(g.get("rank")) for g in ET.fromstring(topo).iter("gpu")}
    graphs = {int(g.get("id")): g for g in ET.fromstring((DATA / pair["graphs"]).read_text())}
    mine = run.topology(topo, pair["servers"], p2p_level(pair))["graphs"]
    assert ported(mine["ring"]) == dumped(graphs[0], rank_of_dev)
    assert ported(mine["tree"]) == dumped(graphs[1], rank_of_dev)
    assert mine["ring"]["nChannels"] >= 1  # a search that found nothing would match nothing


@pytest.mark.parametrize("pair", DUMPS, ids=[p["graphs"] for p in DUMPS])
def test_the_ports_dump_reader_agrees(pair):
    """logcheck.check_dump (what bench/graph_pairs.py reports) finds what the test above does."""
    r = logcheck.check_dump((DATA / pair["topology"]).read_text(),
                            (DATA / pair["graphs"]).read_text(), pair["servers"],
                            p2p_level(pair))  # fmt: skip
    assert (r["fields"], r["fields_equal"], r["differences"]) == (16, 16, [])
    assert r["channels"] == r["channels_equal"] >= 2


def test_a_graph_file_that_is_not_xml_is_named():
    topo = (DATA / DUMPS[0]["topology"]).read_text()
    with pytest.raises(ParamError) as e:
        logcheck.check_dump(topo, "<graphs><graph")
    assert e.value.field == "graphs"


def test_geforce_pair_depends_on_p2p_more_than_on_the_topology():
    """What the dump does not decide: with NCCL's default P2P level (PXB) the port lets the
    four GPUs under a switch talk through it and reaches the card's 7 GB/s; NCCL searched 4 GB/s.
    Routing every GPU pair through its CPU (paths.cc:762-777) loads each switch's link to its
    CPU several times per channel, the GPU hops at 6/5 (INTEL_P2P_OVERHEAD, search.cc), and 4 is
    the first speed that fits."""
    pair = next(p for p in DUMPS if "p2p_level" in p)
    topo = (DATA / pair["topology"]).read_text()
    default = run.topology(topo, pair["servers"])["graphs"]["ring"]
    off = run.topology(topo, pair["servers"], PATH_TYPE.index("LOC"))["graphs"]["ring"]
    assert (default["bwIntra"], off["bwIntra"]) == (7.0, 4.0)
    assert default["nChannels"] == off["nChannels"] == 1
