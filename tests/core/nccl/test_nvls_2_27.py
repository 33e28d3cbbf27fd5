"""NCCL 2.27.7's NVLS bandwidth against the published picks on 4 to 8 GPUs of one server.

stas00/ml-engineering's network/README.md (lines 921-943, copied to
tests/data/nccl-tests/stas00-8xh200-8xb200-gpu-count-nvls.md, SWEEPS.json's 'gpu count' points)
ran an 8 GiB all-reduce on 4 to 8 GPUs of one H200 and one B200 server, NVLS on and off: NCCL
picked NVLS from 5 H200 GPUs and from 6 B200 GPUs (NCCL 2.27.7 on the B200 server). 2.30.7's
model picks Ring on 5 H200 and 6-7 B200 GPUs: its NVLS bandwidth, bwIntra x nvlsEfficiency x
(n - 1)/n x 2 capped by bwInter, x nRanks/nsteps, came with 2.28.3; 2.27.7's is min(bwIntra,
bwInter) x 5/6 (tuning.cc:267-276, 324 at v2.27.7, in tests/data/nccl/2.27.7/). The oracle here
is written from those lines and the graphs NCCL's search finds (the port's, held to NCCL's logs
in test_nccl.py); the picks are the page's. The H200 table prints no version; the same page's
other 8 x H200 runs (lines 963-990) say nccl=2.27.7, so it is held to 2.27.7 here by the flag
(`--nccl-version 2.27.7`), not by nearest(), which leaves a run without a version on the default.
"""

from __future__ import annotations

import json

import pytest
from nccl_source import excerpt, groups, numbers

import helpers
from allreduce_explainer import performance
from allreduce_explainer.nccl import System, choose, graphs, tables
from allreduce_explainer.nccl import constants as K
from allreduce_explainer.nccl.releases import V2_27_7, V2_30_7, nearest
from allreduce_explainer.nccl.tuning import terms
from allreduce_explainer.performance.fitted import PARAMETERS

OLD, NEW = V2_27_7.version, V2_30_7.version
SIZE = 8 << 30


def _points() -> list[dict]:
    d = json.loads((helpers.DATA / "nccl-tests" / "SWEEPS.json").read_text(encoding="utf-8"))
    return [p for p in d["points"] if p["about"] == "gpu count" and p["nvls"]]


def _system(p: dict, version: str) -> System:
    return System(**p["system"], nccl_version=version)


def _src(name: str) -> dict[int, str]:
    return excerpt(name, OLD)


def test_the_page_is_read_as_published():
    """Ten points, NVLS allowed: Ring on 4 H200 and 4-5 B200 GPUs, NVLS on the rest."""
    text = (helpers.DATA / "nccl-tests" / "stas00-8xh200-8xb200-gpu-count-nvls.md").read_text()
    picks = {(p["system"]["gpu"], p["system"]["gpus"]): p["picked"] for p in _points()}
    assert len(picks) == 10
    assert {k for k, v in picks.items() if v == "Ring"} == {
        ("H200 SXM", 4), ("B200", 4), ("B200", 5)}  # fmt: skip
    assert "|    5 | NVLS            | 414.2GBps |" in text
    assert "|    5 | Ring            | 677.8GBps |" in text and "nccl=2.27.7" in text


def test_the_excerpt_is_2_27_7s_nvls_branch():
    t = _src("tuning.cc")
    assert "bw = std::min(graphs[a]->bwIntra, graphs[a]->bwInter);" in t[269]
    assert "ratio *= 5.0/6.0" in t[324] and "NCCL_ALGO_NVLS" in t[324]
    assert "graphs[a]->bwInter/2" in t[275]
    v = _src("version.mk")
    assert [numbers(v[n])[0] for n in (2, 3, 4)] == [2, 27, 7]
    # one server: NCCL drops the cards (paths.cc:779-782), so NVLS takes every GPU as a head
    assert "ncclTopoRemoveNode(system, NET, n)" in _src("paths.cc")[781]


def _oracle_2_27(s: System) -> str:
    """2.27.7's all-reduce Simple bandwidths on one server from its lines, the larger picked
    (latency is nothing at 8 GiB): ring nChannels x bwIntra x nRanks/nsteps, NVLS nChannels x
    min(bwIntra, bwInter) x 5/6."""
    g = graphs(s)
    ring = g["Ring"].n_channels * g["Ring"].bw_intra * s.gpus / (2 * (s.gpus - 1))
    nv = g["NVLS"]
    nvls = nv.n_channels * min(nv.bw_intra, nv.bw_inter) * 5.0 / 6.0
    assert tables(s)[("NVLS", "Simple")].bw_GBps == pytest.approx(nvls)
    assert tables(s)[("Ring", "Simple")].bw_GBps == pytest.approx(ring)
    return "NVLS" if nvls > ring else "Ring"


def _id(p: dict) -> str:
    return f"{p['system']['gpu']}-{p['system']['gpus']}"


@pytest.mark.parametrize("p", _points(), ids=_id)
def test_2_27_7_picks_as_nccl_did(p):
    s = _system(p, OLD)
    assert _oracle_2_27(s) == p["picked"]
    assert choose("AllReduce", SIZE, s).algorithm == p["picked"]


def test_2_30_7_would_not():
    """The newer branch picks Ring where 2.27.7 ran NVLS: so the run's version decides."""
    wrong = {
        (p["system"]["gpu"], p["system"]["gpus"])
        for p in _points()
        if choose("AllReduce", SIZE, _system(p, NEW)).algorithm != p["picked"]
    }
    assert wrong == {("H200 SXM", 5), ("B200", 6), ("B200", 7)}


def test_a_run_on_2_27_is_modelled_by_2_27_7():
    b200 = next(p for p in _points() if p["system"]["gpu"] == "B200")
    assert nearest(b200["nccl_version"]) is V2_27_7


def test_blackwell_tables_of_2_27_7():
    """tuning.cc:176, 182, 188 at v2.27.7: Blackwell's per-channel rows are twice Hopper's; the
    ring's LL128 on one B200 server is capped by them (16 channels of 45 GB/s: 0.92 x 720)."""
    t = _src("tuning.cc")
    assert groups(t[176])[0] == K.BLACKWELL_PER_CH_MAX_RING_LL128_BW_2_27
    assert groups(t[182])[0] == K.BLACKWELL_PER_CH_MAX_TREE_LL128_BW_2_27
    assert groups(t[188])[0] == K.BLACKWELL_PER_CH_MAX_TREE_BW_2_27
    assert groups(t[155])[1] == (0.0, 0.0, K.NVLS_TREE_NET_LATENCY_2_27_US)
    old, new = (System("B200", 8, 8, nccl_version=v) for v in (OLD, NEW))
    ring = graphs(old)["Ring"]
    assert (ring.n_channels, ring.bw_intra) == (16, 45.0)
    ratio = 8 / 14
    assert tables(old)[("Ring", "LL128")].bw_GBps == pytest.approx(
        min(16 * 45.0 * 0.92, 16 * 2 * 36.7) * ratio
    )
    assert tables(new)[("Ring", "LL128")].bw_GBps == pytest.approx(16 * 40.0 * ratio)


def test_blackwell_speeds_of_2_27_7():
    s = _src("search.cc")
    assert tuple(numbers(s[962].split("=")[1])) == K.SM100_SPEED_ARRAY_INTRA_2_27
    assert tuple(numbers(s[963].split("=")[1])) == K.SM100_SPEED_ARRAY_INTER_2_27


def test_an_older_release_picks_and_the_default_times_the_pick():
    """6 B200 GPUs on 2.27.7: NVLS picked by 2.27.7's figures, timed by the performance layer
    from 2.30.7's terms for NVLS (model.timing_system): 2.30.7 runs NVLS there too, and its NVLS
    bandwidth is the one the layer is fitted on."""
    old, new = (System("B200", 6, 6, 8, 400.0, nccl_version=v) for v in (OLD, NEW))
    c = choose("AllReduce", SIZE, old)
    assert c.algorithm == "NVLS"
    e = tables(new)[("NVLS", "Simple")]
    lat, bw = terms(new, "AllReduce", "NVLS", "Simple", e, SIZE)
    call = performance.Call("Blackwell", "NVLS", "Simple", 1, 6, 6, lat, bw, SIZE, 1)
    assert graphs(new)["NVLS"].n_channels == 6
    assert c.time_us == pytest.approx(performance.time_us(PARAMETERS, call))
    mine = tables(old)[("NVLS", "Simple")]  # 25 us: NVLS's NVLink latency (tuning.cc:147)
    assert c.nccl_time_us == pytest.approx(mine.latency_us + SIZE / (1000 * mine.bw_GBps))
    assert mine.latency_us == 25.0


def test_nvls_needs_three_gpus_in_2_27_7():
    """nvls.cc:160 at v2.27.7: no NVLS support with 2 GPUs or fewer in a server; 2.30.7 asks
    for 2 (its nvls.cc:262), and its NVLS graph then has the 2 channels tuning.cc:310 needs."""
    assert "gpuCount <= 2) return ncclSuccess;" in _src("nvls.cc")[160]
    for gpus, per in ((2, 2), (4, 2)):
        old, new = (System("H100 SXM", gpus, per, nccl_version=v) for v in (OLD, NEW))
        assert not {a for a, _ in tables(old)} & {"NVLS", "NVLSTree"}
        assert {a for a, _ in tables(new)} & {"NVLS", "NVLSTree"}
    three = System("H100 SXM", 3, 3, nccl_version=OLD)
    assert ("NVLS", "Simple") in tables(three)
