"""Stages 2 and 3: paths, the search and the channels, held against NCCL's published graphs for
the presets' servers, and against oracles written here (a ring holds every rank once, a tree's
parents and children agree, the channels' booked bandwidth fits every link)."""

import re

import pytest

from allreduce_explainer.topology import preset_text, topology
from allreduce_explainer.topology import run as R
from allreduce_explainer.topology import system as S
from allreduce_explainer.topology.connect import btree, dtree


@pytest.fixture(scope="module")
def h100():
    return topology(preset_text("dgx-h100"))


def graph(r, name):
    g = r["graphs"][name]
    return g["pattern"], g["nChannels"], g["bwIntra"], g["bwInter"]


def test_h100_graphs_as_nccl_printed_them(h100):
    """NVIDIA/nccl#1197, 8 x H100 SXM: ring 12 x 30, tree 12 x 30, NVLS 8 x 40/60 GB/s."""
    assert graph(h100, "ring") == ("RING", 12, 30.0, 30.0)
    assert graph(h100, "tree") == ("BALANCED_TREE", 12, 30.0, 30.0)
    assert graph(h100, "nvls") == ("NVLS", 8, 40.0, 60.0)
    assert h100["nvls_heads"] == list(range(8))


def test_a100_channels_as_nccl_printed_them():
    """NVIDIA/nccl-tests#100, 8 x A100 on NVSwitch: 24 channels after NCCL's doubling."""
    r = topology(preset_text("dgx-a100"))
    assert graph(r, "ring") == ("RING", 12, 20.0, 20.0)
    assert r["coll_channels"] == 24
    assert r["graphs"]["nvls"] is None  # NVLS needs sm90 (search.cc:1124)


def test_h100_paths(h100):
    s = R.load(preset_text("dgx-h100"))
    types = {S.PATH_TYPE[p.type] for g in s.gpus for i, p in enumerate(g.paths[S.GPU]) if p.count}
    assert types == {"NVL"}
    g0 = s.gpus[0]
    assert g0.paths[S.GPU][1].bw == pytest.approx(18 * 20.6, rel=1e-6)
    # its own card under the same switch: PIX at PCIe Gen5 x16; another GPU's card through an
    # NVLink peer: PXN (paths.cc:815-840), not PHB through the CPU
    net_types = [S.PATH_TYPE[p.type] for p in g0.paths[S.NET]]
    assert net_types == ["PIX"] + ["PXN"] * 7
    assert g0.paths[S.NET][0].bw == 48.0


def test_a100_paths_pxb_between_sub_switches():
    s = R.load(preset_text("dgx-a100"))
    g0 = s.gpus[0]
    # GPU 0 and card 0 share a sub switch (PIX); card 1 hangs off the sibling sub switch (PXB)
    assert [S.PATH_TYPE[g0.paths[S.NET][n].type] for n in (0, 1)] == ["PIX", "PXB"]


@pytest.mark.parametrize("name", R.PRESETS)
def test_rings_and_trees_are_well_formed(name):
    r = topology(preset_text(name))
    n = r["ranks"]
    for c in r["channels"]:
        assert sorted(c["ring"]) == list(range(n))
        t = c["tree"]
        assert len(t["roots"]) == 1
        for rank, kids in t["children"].items():
            for k in kids:
                assert t["parent"][str(k)] == int(rank)


def test_links_booked_back_to_full():
    """Every search rewinds what it booked (search.cc:168-171): after the searches each link has
    its bandwidth again, to SUB_ROUND's thousandth."""
    s = R.load(preset_text("dgx-h100"))
    before = [lk.bw for nodes in s.nodes for n in nodes for lk in n.links]
    R.graphs(s)
    after = [lk.bw for nodes in s.nodes for n in nodes for lk in n.links]
    assert after == pytest.approx(before, abs=2e-3)


def test_search_is_deterministic(h100):
    """No clock, no random number: budgets are step counts (search.cc:332-335)."""
    assert topology(preset_text("dgx-h100")) == h100


# trees.cc:10-24's picture of the binary tree on 14 ranks
BTREE_14 = {8: 0, 4: 8, 12: 8, 2: 4, 6: 4, 10: 12, 13: 12, 1: 2, 3: 2, 5: 6, 7: 6, 9: 10, 11: 10}


def test_btree_is_the_picture_in_trees_cc():
    for rank in range(14):
        up, d0, d1, _ = btree(14, rank)
        assert up == BTREE_14.get(rank, -1)
        assert {d for d in (d0, d1) if d != -1} == {k for k, p in BTREE_14.items() if p == rank}


def test_dtree_second_tree_mirrors_on_even_counts():
    """trees.cc:68-112: the second tree is the first mirrored (rank r -> n-1-r) when n is even."""
    n = 12
    for rank in range(n):
        _, (u1, *_rest) = dtree(n, rank)
        u0 = btree(n, n - 1 - rank)[0]
        assert u1 == (-1 if u0 == -1 else n - 1 - u0)


def test_two_servers_ring_crosses_once_per_server():
    r = topology(preset_text("dgx-h100"), 2)
    assert graph(r, "ring") == ("RING", 8, 48.0, 48.0)
    assert (
        graph(r, "tree")[0] == "TREE"
    )  # Hopper falls back from BALANCED_TREE (search.cc:1215-1219)
    # doubled once (connect.cc:459-460) to 16; connect.cc:480-483 doubles again only below 16
    assert r["coll_channels"] == 16
    for c in r["channels"]:
        crossings = sum(
            1 for a, b in zip(c["ring"], c["ring"][1:] + c["ring"][:1]) if a // 8 != b // 8
        )
        assert crossings == 2
        assert c["nics"]["send"]["pxn_via"] in (None, *range(8))


def test_file_order_moves_rings_not_counts():
    """What the search decides from the server alone: the channel counts and bandwidths. Which
    GPU a channel starts from follows the GPUs' order in the file (search.cc:253-326 tries
    neighbours by index on an NVSwitch), so listing the second CPU first changes the rings."""
    text = preset_text("dgx-h100")
    cpus = re.findall(r"  <cpu .*?</cpu>\n", text, re.S)
    swapped = text.replace(cpus[0] + cpus[1], cpus[1] + cpus[0])
    a, b = topology(text, 2), topology(swapped, 2)
    for key in ("ring", "tree", "nvls"):
        assert graph(a, key) == graph(b, key)
    assert [c["ring"] for c in a["channels"]] != [c["ring"] for c in b["channels"]]
