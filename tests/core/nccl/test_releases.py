"""NCCL 2.31.0a7 beside 2.30.7: each branch that differs against 2.31's verbatim source lines
(tests/data/nccl/2.31.0a7/) and 2.30.7's (tests/data/nccl/), with the figures worked out here from
those lines; the constants both share; the default; a log's version to its model."""

from __future__ import annotations

import re

import pytest
from nccl_source import bandwidth_tables_from, excerpt, groups, numbers

import helpers
from allreduce_explainer import api, nccl
from allreduce_explainer.errors import ParamError
from allreduce_explainer.nccl import System, choose, tables
from allreduce_explainer.nccl import constants as K
from allreduce_explainer.nccl.model import _least
from allreduce_explainer.nccl.releases import (
    DEFAULT,
    RELEASES,
    V2_27_7,
    V2_30_7,
    V2_31_0A7,
    nearest,
)
from allreduce_explainer.nccl.topology import Graph
from allreduce_explainer.nccl.tuning import _graph_bw

OLD, NEW = V2_30_7.version, V2_31_0A7.version


def src(name: str) -> dict[int, str]:
    return excerpt(name, NEW)


def old_src(name: str) -> dict[int, str]:
    return excerpt(name, OLD)


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_version_is_the_one_ported():
    v = src("version.mk")
    parts = [re.search(r":=\s*(\w+)", v[n]).group(1) for n in (9, 10, 11, 12)]
    assert "{}.{}.{}{}".format(*parts) == NEW == "2.31.0a7"


def test_the_newest_tagged_release_is_the_default_everywhere():
    """A pre-release (a suffix such as a7, no tag) is offered, not assumed."""
    tagged = [r for r in RELEASES if re.fullmatch(r"\d+\.\d+\.\d+", r.version)]
    assert DEFAULT is max(tagged, key=lambda r: r.key) is V2_30_7
    assert System().nccl_version == nccl.NCCL_VERSION == "2.30.7"
    assert nccl.sweep("AllReduce", [1 << 20], System())["nccl_version"] == "2.30.7"


def test_an_unported_version_names_its_field():
    with pytest.raises(ParamError) as e:
        System(nccl_version="2.29.7")
    assert e.value.field == "nccl_version" and "2.30.7" in str(e.value)


# --- the constants did not change: 2.31's cost_model.cc against constants.py ----------------


def test_base_latencies_unchanged():
    rows = [groups(src("cost_model.cc")[n])[0] for n in range(144, 150)]
    assert dict(zip(K.ALGORITHMS, rows, strict=True)) == K.BASE_LATENCY_US
    assert groups(src("cost_model.cc")[150])[0] == (8.0, 8.0, 8.0)  # PAT, not modelled


@pytest.mark.parametrize("link,first", [("NVLink", 156), ("PCI", 166), ("Network", 176)])
def test_hw_latencies_unchanged(link, first):
    c = src("cost_model.cc")
    rows = [groups(c[n])[0] for n in range(first, first + 6)]
    assert dict(zip(K.ALGORITHMS, rows, strict=True)) == K.HW_LATENCY_US[link]


@pytest.mark.parametrize("table,first", bandwidth_tables_from(187))
def test_bandwidth_tables_unchanged(table, first):
    c = src("cost_model.cc")
    assert tuple(groups(c[n])[0] for n in range(first, first + 4)) == table


def test_tree_correction_unchanged():
    c = src("cost_model.cc")
    assert tuple(tuple(numbers(c[n])) for n in (223, 224, 225)) == K.TREE_CORRECTION_FACTOR


def test_ring_and_tree_factors_unchanged():
    ring, tree = _squeeze(" ".join(src("ring.cc").values())), src("tree.cc")
    assert "busBw * .5" in ring and K.RING_LL_FACTOR == 0.5
    assert "busBw * (0.92" in ring and K.RING_LL128_FACTOR == 0.92
    assert "busBw * .92" in tree[29] and "1.0 / 3.8" in tree[31]
    assert "7.0 / 9.0 : 120.0 / 128.0" in tree[34] and "busBw *= .85" in tree[36]


# --- each branch that changed ----------------------------------------------------------------


def test_ring_bandwidth_is_bwinter_from_two_servers():
    new = _squeeze(src("ring.cc")[35] + src("ring.cc")[36])
    assert "(comm->nNodes > 1 ? comm->graphs[algo].bwInter : comm->graphs[algo].bwIntra)" in new
    assert (
        "nNodes <= 2 || collnet ? graphs[a]->bwIntra : graphs[a]->bwInter"
        in old_src("tuning.cc")[306]
    )
    g = Graph(8, 40.0, 25.0, "RING")  # a graph whose two figures differ
    two = {v: System(gpus=16, nccl_version=v) for v in (OLD, NEW)}
    assert _graph_bw(two[NEW], "Ring", g, False) == 25.0  # bwInter
    assert _graph_bw(two[OLD], "Ring", g, False) == 40.0  # bwIntra up to 2 servers
    three = System(gpus=24, nccl_version=OLD)
    assert _graph_bw(three, "Ring", g, False) == 25.0
    assert _graph_bw(System(gpus=8, nccl_version=NEW), "Ring", g, False) == 40.0


def test_tree_bandwidth_is_the_least_of_intra_and_inter():
    assert "std::min(comm->graphs[algo].bwInter, comm->graphs[algo].bwIntra)" in src("tree.cc")[28]
    # 2 x 8 A100 with 200 Gb/s cards: the tree graph is 8 channels of 30 GB/s inside, 24 across
    figures = {}
    for v in (OLD, NEW):
        s = System("A100 SXM", 16, 8, 8, 200.0, nccl_version=v)
        g = nccl.graphs(s)["Tree"]
        assert (g.n_channels, g.bw_intra, g.bw_inter) == (8, 30.0, 24.0)
        figures[v] = tables(s)[("Tree", "Simple")].bw_GBps
    cap = 8 * K.PER_CH_MAX_TREE_BW_GBPS[1][1]  # Ampere, two servers: 8 x 23.6
    assert figures[OLD] == pytest.approx(min(8 * 30.0 * 0.92, cap) * 0.5)  # 94.4
    assert figures[NEW] == pytest.approx(min(8 * 24.0 * 0.92, cap) * 0.5)  # 88.32


def test_one_gpu_per_server_pays_each_algorithms_own_network_latency():
    assert "hwLatencies[interHw][algo][proto]" in src("ring.cc")[53]
    assert "[NCCL_HW_NET][NCCL_ALGO_TREE][p]" in old_src("tuning.cc")[387]
    nsteps = 2 * (4 - 1)  # 4 servers of one GPU: every step crosses the network
    for v, net in ((OLD, "Tree"), (NEW, "Ring")):
        t = tables(System(gpus=4, gpus_per_node=1, nccl_version=v))
        for pi, p in enumerate(K.PROTOCOLS):
            want = K.BASE_LATENCY_US["Ring"][pi] + nsteps * K.HW_LATENCY_US["Network"][net][pi]
            assert t[("Ring", p)].latency_us == pytest.approx(want), (v, p)


def test_collnet_allreduce_starts_from_the_reduce_scatter_figure():
    c = src("collnet.cc")
    assert "float busBw = 0.0;" in c[35]  # outside the loop over collectives
    assert "ppn * std::min(comm->graphs[algo].bwIntra, comm->graphs[algo].bwInter * 0.9f)" in c[50]
    assert "busBw /= factor" in c[55] and "compCapIndex >= 90" in c[56]  # an index, 0 to 3
    order = src("nccl_common.h")  # the loop runs ReduceScatter (3) just before AllReduce (4)
    assert "ncclFuncReduceScatter = 3" in order[77] and "ncclFuncAllReduce = 4" in order[78]
    old = {v: System(gpus=16, in_network_reduction=True, nccl_version=v) for v in (OLD, NEW)}
    g = nccl.graphs(old[NEW])["CollNetDirect"]
    ppn = 8
    factor = ppn / g.n_channels
    factor -= (factor - 1) / 2
    rs = ppn * min(g.bw_intra, g.bw_inter * 0.9)
    assert tables(old[NEW])[("CollNetDirect", "Simple")].bw_GBps == pytest.approx(rs / factor * 0.5)
    want_old = g.n_channels * g.bw_intra / factor * 0.85 * 0.5  # tuning.cc:306, 345-348
    assert tables(old[OLD])[("CollNetDirect", "Simple")].bw_GBps == pytest.approx(want_old)
    chain = nccl.graphs(old[NEW])["CollNetChain"]
    rs_chain = ppn * min(chain.bw_intra, chain.bw_inter * 0.9)
    f_chain = ppn / chain.n_channels
    f_chain -= (f_chain - 1) / 2
    assert tables(old[NEW])[("CollNetChain", "Simple")].bw_GBps == pytest.approx(
        rs_chain / f_chain * 0.5
    )
    assert tables(old[OLD])[("CollNetChain", "Simple")].bw_GBps == pytest.approx(
        chain.n_channels * chain.bw_intra * 0.5
    )


def test_collnet_allreduce_needs_every_gpu_a_head():
    c = _squeeze(" ".join(src("collnet.cc")[n] for n in range(75, 84)))
    assert "if (comm->nodeRanks[node].localRanks > nHeads) {" in c and "enabled[c] = 0" in c
    # 8 GPUs a server, 4 cards: 4 heads (the cards with a GPU beside them)
    got = {
        v: {a for a, _ in tables(System(gpus=16, nics_per_node=4, in_network_reduction=True,
                                        nccl_version=v))}
        for v in (OLD, NEW)
    }  # fmt: skip
    assert {"CollNetDirect", "CollNetChain"} <= got[OLD]
    assert not {"CollNetDirect", "CollNetChain"} & got[NEW]


def _nccl_2_31_pick(timed):
    """tuning.cc:130-141 pushes each valid pair on the list's front, in table order; 153-165 walks
    the list from its head and keeps a pair whose time is strictly less."""
    pushed = []
    for t in timed:
        pushed.insert(0, t)
    best = None
    for t in pushed:
        if best is None or t[0] < best[0]:
            best = t
    return best


def test_equal_times_go_to_the_last_pair_in_2_31():
    assert "node->next = list->head;" in src("tuning.cc")[36]
    assert (
        "PushFront" in src("tuning.cc")[141]
        and "tuning.timeUs < bestTuning" in src("tuning.cc")[161]
    )
    timed = [(5.0, "Tree", "LL", 1.0, 1.0), (5.0, "Ring", "LL", 1.0, 1.0),
             (7.0, "Ring", "Simple", 1.0, 1.0)]  # fmt: skip
    assert _least(System(nccl_version=NEW), timed) == _nccl_2_31_pick(timed) == timed[1]
    assert _least(System(nccl_version=OLD), timed) == timed[0]  # enqueue.cc:2038, the first


# --- what did not change gives the same figures -----------------------------------------------


@pytest.mark.parametrize("gpu", ["A100 SXM", "H100 SXM", "B200"])
def test_one_server_is_the_same_in_both(gpu):
    """Inside one server no changed branch applies (one node: bwInter = bwIntra in every graph)."""
    for n in (1 << 10, 1 << 20, 1 << 30):
        a, b = (choose("AllReduce", n, System(gpu, 8, 8, nccl_version=v)) for v in (OLD, NEW))
        assert (a.algorithm, a.protocol, a.nccl_time_us) == (
            b.algorithm,
            b.protocol,
            b.nccl_time_us,
        )


def test_log_versions_select_the_model_in_force():
    assert nearest("2.31.2+cuda13.0") is V2_31_0A7
    assert nearest("2.31.0a7") is V2_31_0A7
    assert nearest("2.30.7") is V2_30_7
    assert nearest("2.28.9+cuda12.9") is nearest("2.28.3") is V2_30_7  # 2.28.3's NVLS branch
    assert nearest("2.27.7") is nearest("2.27.5+cuda12.9") is V2_27_7
    assert nearest("2.27.3") is nearest("2.26.2") is nearest("2.18.5") is V2_30_7  # the default
    assert nearest(None) is nearest("not a version") is V2_30_7  # a published run: a release


@pytest.mark.parametrize(
    "printed,model", [("2.26.2", OLD), ("2.27.7", V2_27_7.version), ("2.31.2", NEW)]
)
def test_a_logs_printed_version_picks_the_model_of_its_rows(printed, model):
    """A published 2 x 8 H100 log (NCCL 2.26.2) read as printed, and with its version line
    changed to a 2.31 release: the rows' picks, the fit and its calculator settings come from
    that release's model."""
    text = (helpers.DATA / "nccl-tests" / "nccl-tests-309-16xh100-2nodes-ib-ndr.txt").read_text()
    assert "NCCL version 2.26.2+cuda12.8" in text
    out = api.nccl_tests(log=text.replace("NCCL version 2.26.2", f"NCCL version {printed}"))
    assert out["nccl_fit"]["calculator_settings"]["nccl_version"] == model
    assert f"(NCCL {model}'s tuning code)" in out["algorithm_basis"]
    s = System("H100 SXM", 16, 8, 8, 400.0, nccl_version=model)
    for row in out["rows"]:
        assert (row["algorithm"], row["protocol"]) == _pick(row["size_bytes"], s), row


def _pick(n: int, s: System) -> tuple[str, str]:
    c = choose("AllReduce", n, s)
    return c.algorithm, c.protocol


# ---- the releases that exist, and which are ported (issue 47, item 4) ---------------------------


def _words(text: str) -> str:
    return " ".join(text.replace("**", "").split())


def test_the_readme_says_what_releases_py_says():
    """One place: the README's paragraph on NCCL's releases is releases.status(), word for word,
    and nothing calls a release "the newest tagged release" any more (2.31.2 to 2.32.6 exist)."""
    from allreduce_explainer.nccl import releases

    readme = (helpers.ROOT / "README.md").read_text(encoding="utf-8")
    assert _words(releases.status()) in _words(readme)
    assert "newest tagged release" not in readme


def test_every_known_release_is_ported_or_said_not_to_be():
    from allreduce_explainer.nccl import releases

    known = {p.version: p for p in releases.PUBLISHED}
    assert {v for v, p in known.items() if p.ported} == set(nccl.VERSIONS)
    for p in known.values():
        # a ported release names its source and the day it was read; an unported one has none
        assert bool(p.source and p.read) is p.ported
        assert p.version in releases.status()
    text = releases.status()
    for v in ("2.31.2", "2.32.3", "2.32.6"):
        assert v in text and v in releases.help_text() and v not in nccl.VERSIONS
    assert releases.FETCHED in text and releases.FETCHED in releases.help_text()
    assert f"newest tag is {releases.NEWEST_TAG}" in text


def test_the_flag_and_the_quick_reference_say_it_too():
    from allreduce_explainer import facts
    from allreduce_explainer.nccl import releases

    assert api.NCCL_RELEASE.label == releases.help_text()
    brief = str(facts.quick_reference()["qr_nccl_releases"])
    assert brief == releases.brief()
    for v in ("2.31.2", "2.32.3", "2.32.6"):  # the unported releases, as status() names them
        assert v in brief and v in releases.status()
    assert releases.FETCHED in brief and len(brief) < len(releases.status()) / 2
