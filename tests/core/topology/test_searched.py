"""The presets' search results shipped for the tuning model (topology/searched.py) against a live
search, and the tuning model reading them: the search's graphs on a preset's server, the closed
form's elsewhere, and the one figure where the two differ (one DGX B200's tree) reaching NCCL's
tree bandwidth."""

import pytest

from allreduce_explainer.nccl import System, tables, tuning
from allreduce_explainer.nccl import topology as nt
from allreduce_explainer.topology import run, searched
from helpers import FAST

SLOW = pytest.mark.skipif(FAST, reason="a two-server A100 or B200 search takes seconds")
CASES = [
    ("dgx-a100", "one"),
    pytest.param("dgx-a100", "several", marks=SLOW),
    ("dgx-h100", "one"),
    ("dgx-h100", "several"),
    ("dgx-h200", "one"),
    ("dgx-h200", "several"),
    ("dgx-b200", "one"),
    pytest.param("dgx-b200", "several", marks=SLOW),
]
GPU = {"dgx-a100": ("A100 SXM", 200), "dgx-h100": ("H100 SXM", 400),
       "dgx-h200": ("H200 SXM", 400), "dgx-b200": ("B200", 400)}  # fmt: skip


@pytest.mark.parametrize(("preset", "span"), CASES)
def test_shipped_is_the_live_search(preset, span):
    """presets/searched.json is what the search answers today (regenerate it with
    `python -m allreduce_explainer.topology.searched --write` when the search changes)."""
    shipped = searched.shipped()[preset]
    assert shipped["gpu"] == GPU[preset][0]
    assert shipped[span] == searched.search(preset, searched.SPANS[span])


def test_more_servers_search_alike():
    """The search reads only whether the job spans servers: three servers find two's graphs."""
    s2, s3 = (run.load(run.preset_text("dgx-h100"), n) for n in (2, 3))
    assert [searched.as_dict(g) for g in run.graphs(s2)] == [
        searched.as_dict(g) for g in run.graphs(s3)
    ]


@pytest.mark.parametrize(("preset", "span"), [c for c in CASES if not hasattr(c, "marks")])
def test_the_model_reads_the_search_on_a_preset(preset, span):
    gpu, nic = GPU[preset]
    servers = searched.SPANS[span]
    found = searched.shipped()[preset][span]
    g = nt.graphs(System(gpu, 8 * servers, 8, 8, nic))
    for key, name in (("ring", "Ring"), ("tree", "Tree"), ("nvls", "NVLS")):
        want = found[key]
        got = g.get(name)
        assert (got and vars(got)) == want, name
    if found["nvls"] and servers > 1:
        assert g["NVLSTree"] == g["NVLS"]


def test_no_preset_is_the_closed_form():
    """Cards of another rate, fewer GPUs or cards than the DGX: no topology, the closed form."""
    for s in (
        System("H100 SXM", 16, 8, 8, 800),
        System("A100 SXM", 16, 8, 8, 400),
        System("B200", 8, 8, 4),
        System("H100 SXM", 8, 4, 4),
    ):
        assert nt.graphs(s) == nt.closed_form(s)


def test_collnet_graphs_stay_the_closed_forms():
    s = System("H100 SXM", 16, 8, in_network_reduction=True)
    g, closed = nt.graphs(s), nt.closed_form(s)
    assert list(g) == ["Ring", "Tree", "CollNetChain", "CollNetDirect", "NVLS", "NVLSTree"]
    assert g["CollNetChain"] == closed["CollNetChain"]
    assert g["CollNetDirect"] == closed["CollNetDirect"]


def test_b200_tree_bandwidth_is_the_searchs():
    """One DGX B200: the search's tree is 16 x 45 GB/s (the closed form's 16 x 50); NCCL's tree
    all-reduce bandwidth is min(16 x 45 x 0.92, 16 x perChMaxTreeBw 70) / 2 (tuning.cc:324,
    331, 377-382; tuning.h's Blackwell one-server row)."""
    s = System("B200", 8, 8)
    assert tables(s)[("Tree", "Simple")].bw_GBps == pytest.approx(min(16 * 45 * 0.92, 16 * 70) / 2)
    assert nt.closed_form(s)["Tree"].bw_intra == 50.0


@pytest.fixture
def planted(monkeypatch):
    """The shipped H100 one-server entry with its ring's path types changed, caches cleared."""

    def plant(type_intra: str, type_inter: str) -> System:
        data = {k: dict(v) for k, v in searched.shipped().items()}
        one = dict(data["dgx-h100"]["one"])
        one["ring"] = one["ring"] | {"type_intra": type_intra, "type_inter": type_inter}
        data["dgx-h100"] = data["dgx-h100"] | {"one": one}
        monkeypatch.setattr(searched, "shipped", lambda: data)
        for f in (nt.graphs, tables, tuning._plateau_bytes):
            f.cache_clear()
        return System("H100 SXM", 8, 8)

    yield plant
    monkeypatch.undo()
    for f in (nt.graphs, tables, tuning._plateau_bytes):
        f.cache_clear()


def test_path_types_reach_ll128_and_latency(planted):
    """tuning.cc:522-531: LL128 only up to PXN across (Hopper) and NVB inside; tuning.cc:285:
    the intra latency is NVLink's only on an NVL graph, PCI's otherwise (tuning.cc:165-167)."""
    s = planted("NVL", "SYS")
    assert ("Ring", "LL128") not in tables(s) and ("Tree", "LL128") in tables(s)
    s = planted("PIX", "PIX")
    ring = tables(s)[("Ring", "LL")]
    assert ring.latency_us == pytest.approx(6.6 + 14 * 1.0)  # base + 2(n - 1) x PCI LL 1.0
