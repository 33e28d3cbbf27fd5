"""NCCL's own model: every constant against verbatim source lines, the topology search against
graphs NCCL printed, its choice at known switch points, and its bus bandwidth against published
all_reduce_perf runs."""

from __future__ import annotations

import functools
import math
import re

import nccl_source
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nccl_source import bandwidth_tables_from, excerpt, groups, numbers

import helpers
from allreduce_explainer import nccl
from allreduce_explainer.errors import ParamError
from allreduce_explainer.nccl import (
    algo_time_us,
    choose,
    graphs,
    log2i,
    predict,
    tables,
)
from allreduce_explainer.nccl import constants as K
from allreduce_explainer.nccl.releases import V2_30_7
from allreduce_explainer.nccl.tuning import comm_channels, ll128_enabled
from helpers import examples, field_of

DATA = helpers.DATA / "nccl"
GiB = 1 << 30
NCCL_COMMIT, NCCL_VERSION = V2_30_7.commit, V2_30_7.version


def System(*args, **kw) -> nccl.System:
    """The systems of this file ask 2.30.7's model, the release its excerpts are of
    (test_releases.py holds 2.31.0a7's branches)."""
    return nccl.System(*args, **{"nccl_version": NCCL_VERSION} | kw)


def src(name: str) -> dict[int, str]:
    return excerpt(name, NCCL_VERSION)


NUM = nccl_source.NUM


def after(line: str, pattern: str) -> float:
    """The number right after `pattern` in a source line."""
    m = re.search(re.escape(pattern) + rf"\s*\(?\s*({NUM})", line)
    assert m, (pattern, line)
    return float(m.group(1))


T = functools.partial(lambda n: src("tuning.cc")[n])


# --- every constant against its source line ---------------------------------------------


def test_version_is_the_one_ported():
    v = src("version.mk")
    parts = [re.search(r":=\s*(\d+)", v[n]).group(1) for n in (9, 10, 11)]
    assert ".".join(parts) == NCCL_VERSION == "2.30.7"


def test_nvls_efficiency():
    assert tuple(numbers(T(n))[0] for n in range(140, 144)) == K.NVLS_EFFICIENCY


def test_base_latencies():
    rows = groups(T(151)) + groups(T(152)) + groups(T(153))
    assert dict(zip(K.ALGORITHMS, rows, strict=True)) == K.BASE_LATENCY_US


@pytest.mark.parametrize("link,first", [("NVLink", 159), ("PCI", 165), ("Network", 171)])
def test_hw_latencies(link, first):
    rows = groups(T(first)) + groups(T(first + 1)) + groups(T(first + 2))
    assert dict(zip(K.ALGORITHMS, rows, strict=True)) == K.HW_LATENCY_US[link]


@pytest.mark.parametrize("table,first", bandwidth_tables_from(179))
def test_bandwidth_tables(table, first):
    assert tuple(groups(T(n))[0] for n in range(first, first + 4)) == table


def test_net_overhead():
    assert "INTEL) return 1.0" in T(230) and "AMD) return 2.0" in T(231)
    assert K.NET_OVERHEAD_US == {"intel": 1.0, "amd": 2.0}


def test_refinement_factors():
    assert after(T(327), "busBw *") == K.RING_LL_FACTOR
    assert after(T(329), "busBw *") == K.RING_LL128_FACTOR
    assert after(T(331), "busBw *") == K.TREE_ALLREDUCE_FACTOR
    assert after(T(332), "busBw * 1.0 /") == K.TREE_LL_DIVISOR
    assert after(T(335), "nNodes == 1 ?") == 7.0 and "7.0 / 9.0 : 120.0 / 128.0" in T(335)
    assert (K.TREE_LL128_FACTOR_ONE_NODE, K.TREE_LL128_FACTOR_MULTI_NODE) == (7 / 9, 120 / 128)
    assert after(T(348), "busBw *=") == K.COLLNET_DIRECT_HOPPER_FACTOR
    assert after(T(342), "bwInter *") == K.COLLNET_RSAG_NET_FACTOR
    assert after(T(421), "1)) * intraLat + (nRanks / nNodes - 1) *") == K.COLLNET_ARITY_LATENCY_US


def test_tree_correction_and_plateau():
    assert tuple(
        groups(T(n))[0] if "{" in T(n) else tuple(numbers(T(n))) for n in (624, 625, 626)
    ) == (K.TREE_CORRECTION_FACTOR)
    assert after(T(640), "logSize <") == K.TREE_CORRECTION_SIZES
    assert after(T(643), "logSize <") == K.NVLS_TREE_CORRECTION_SIZES
    assert after(T(648), ">=") == K.RING_PLATEAU_MIN_BYTES_PER_CHANNEL_RANK
    assert after(T(649), "< 80 ?") == K.RING_PLATEAU_FACTOR[0]
    assert after(T(649), ": ") == K.RING_PLATEAU_FACTOR[1]


def test_link_bandwidths_topo_h():
    found = {}
    for line in src("topo.h").values():
        m = re.match(rf"#define SM(\d+)_NVLINK_BW ({NUM})", line)
        if m:
            found[int(m.group(1))] = float(m.group(2))
    assert found == K.NVLINK_BW_GBPS
    assert K.NVLINK_BW_GBPS[80] == 20.0 and K.NVLINK_BW_GBPS[90] == 20.6
    assert K.NVLINK_BW_GBPS[100] == 40.1


def test_pci_and_net_bandwidths_topo_cc():
    t = src("topo.cc")
    assert after(t[418], "mbps /") == K.NET_MBPS_PER_GBPS
    assert after(t[657], "width * speed /") == K.PCI_BW_DIVISOR
    gen_of = {"16.0": 4, "32.0": 5, "64.0": 6}
    for n in (553, 554, 555):
        rate, value = re.search(rf'"({NUM}) GT/s PCIe", (\d+)', t[n]).groups()
        assert K.PCI_GEN_SPEED[gen_of[rate]] == int(value)


@pytest.mark.parametrize(
    "name,lines",
    [
        ("SPEED_ARRAY_INTRA", (1051,)),
        ("SPEED_ARRAY_INTER", (1052, 1053)),
        ("SM90_SPEED_ARRAY_INTRA", (1057,)),
        ("SM90_SPEED_ARRAY_INTER", (1058, 1059)),
        ("SM100_SPEED_ARRAY_INTRA", (1063,)),
        ("SM100_SPEED_ARRAY_INTER", (1064, 1065)),
    ],
)
def test_speed_arrays(name, lines):
    text = " ".join(src("search.cc")[n] for n in lines)
    assert groups(text)[0] == getattr(K, name)


def test_search_thresholds():
    s = src("search.cc")
    assert after(s[1039], "bwIntra <") == K.DUP_MIN_BW_GBPS
    assert after(s[1040], "bwIntra <") == K.DUP_SM90_MIN_BW_GBPS
    assert after(s[1040], "nChannels >") == K.DUP_SM90_MAX_CHANNELS
    assert after(s[1245], "bwInter >") == K.SEARCH_SPEED_RATIO
    d = src("device.h")
    assert after(d[91], "MAXCHANNELS") == K.MAXCHANNELS
    assert after(d[199], "NCCL_MAX_DIRECT_ARITY") == K.NCCL_MAX_DIRECT_ARITY
    assert after(d[213], "NCCL_MAX_NVLS_ARITY") == K.NCCL_MAX_NVLS_ARITY
    assert "MAXCHANNELS / 2" in src("init.cc")[1177]


# --- log2i ---------------------------------------------------------------------------------


def test_log2i_examples():
    assert [log2i(n) for n in (0, 1, 2, 3, 4, 100, 1023, 1024)] == [-1, 0, 1, 1, 2, 6, 9, 10]


@given(st.integers(1, 1 << 50))
def test_log2i_is_floor_log2(n):
    k = log2i(n)
    assert 2**k <= n < 2 ** (k + 1)


# --- the topology search against graphs NCCL printed -------------------------------------


def test_h100_graphs_match_nccl_1197():
    """NVIDIA/nccl#1197 (8 x H100, NCCL_DEBUG=INFO): 'Pattern 4, nChannels 12, bw 30/30',
    'Pattern 1, nChannels 12, bw 30/30', 'Pattern 5, nChannels 8, bw 40/60' (bwIntra/bwInter)."""
    g = graphs(System("H100 SXM", 8, 8))
    assert (g["Ring"].n_channels, g["Ring"].bw_intra, g["Ring"].bw_inter) == (12, 30.0, 30.0)
    assert (g["Tree"].n_channels, g["Tree"].bw_intra, g["Tree"].bw_inter) == (12, 30.0, 30.0)
    assert (g["NVLS"].n_channels, g["NVLS"].bw_intra, g["NVLS"].bw_inter) == (8, 40.0, 60.0)


def test_a100_channels_match_nccl_tests_100():
    """NVIDIA/nccl-tests#100 (HGX A100): 'Channel 23/24', 24 ring channels once NCCL doubles
    the graph's 12 (connect.cc:460)."""
    s = System("A100 SXM", 8, 8)
    assert graphs(s)["Ring"].n_channels == 12 and graphs(s)["Ring"].bw_intra == 20.0
    assert comm_channels(s) == 24


def test_multi_server_ring_uses_every_card():
    """Across servers a ring channel enters and leaves by a card: 8 cards, one channel each at
    the PCIe/card speed (A100: Gen4 x16 = 24 GB/s, H100: Gen5 x16 = 48 GB/s)."""
    a = graphs(System("A100 SXM", 16, 8, 8, 200))["Ring"]
    h = graphs(System("H100 SXM", 16, 8, 8, 400))["Ring"]
    assert (a.n_channels, a.bw_inter) == (8, 24.0)
    assert (h.n_channels, h.bw_inter) == (8, 48.0)


# --- latencies and corrections by hand -----------------------------------------------------


def _lat(s, a, p, coll="AllReduce"):
    return tables(s, coll)[(a, p)].latency_us


def test_latencies_by_hand():
    one, two = System("H100 SXM", 8, 8), System("H100 SXM", 16, 8)
    assert _lat(one, "Ring", "Simple") == pytest.approx(8.4 + 14 * 3.4)
    assert _lat(one, "Ring", "LL") == pytest.approx(6.6 + 14 * 0.6)
    assert _lat(one, "NVLS", "Simple") == pytest.approx(25.0)
    assert _lat(two, "Ring", "Simple") == pytest.approx(8.4 + 28 * 3.4 + 2 * 14.0)
    assert _lat(two, "Tree", "LL") == pytest.approx(6.8 + 2 * (7 * 0.6 + 1 * 5.0))
    assert _lat(two, "NVLSTree", "Simple") == pytest.approx(25.0 + 2 * 1 * 20.9)
    hundred = System("H100 SXM", 800, 8)  # log2i(100) = 6, not log2(100) = 6.64
    assert _lat(hundred, "Tree", "Simple") == pytest.approx(8.4 + 2 * (7 * 4.0 + 6 * 14.0))
    amd = System("H100 SXM", 16, 8, cpu="amd")  # intraLat = max(3.4, 3 x 2.0)
    assert _lat(amd, "Ring", "Simple") == pytest.approx(8.4 + 28 * 6.0 + 2 * 14.0)


def test_tree_correction_and_ring_plateau_applied():
    s = System("H100 SXM", 8, 8)
    e = tables(s)[("Tree", "Simple")]
    n = 1 << 20  # log2i(2^20 >> 6) = 14: factor 0.5
    assert algo_time_us(s, "AllReduce", "Tree", "Simple", n) == pytest.approx(
        e.latency_us + n / (1000 * e.bw_GBps * 0.5)
    )
    two = System("H100 SXM", 16, 8)
    e = tables(two)[("Ring", "Simple")]
    n = 8 * GiB
    assert algo_time_us(two, "AllReduce", "Ring", "Simple", n) == pytest.approx(
        e.latency_us * 1.4 + n / (1000 * e.bw_GBps)
    )


def test_tree_bandwidth_derated_by_092():
    """tuning.cc:331: busBw x 0.92, capped at channels x perChMaxTreeBw; algbw = busBw / 2."""
    s = System("A100 SXM", 8, 8)
    g = graphs(s)["Tree"]
    assert tables(s)[("Tree", "Simple")].bw_GBps == pytest.approx(
        min(g.n_channels * g.bw_intra * 0.92, g.n_channels * 24.0) / 2
    )


# --- where NCCL enables each algorithm and protocol ---------------------------------------


@pytest.mark.parametrize("gpu", ["A100 SXM", "H100 SXM", "H200 SXM", "B200"])
def test_nvls_only_on_hopper_and_newer(gpu):
    one = {a for a, _ in tables(System(gpu, 8, 8))}
    multi = {a for a, _ in tables(System(gpu, 16, 8))}
    sharp = {a for a, _ in tables(System(gpu, 16, 8, in_network_reduction=True))}
    hopper = gpu != "A100 SXM"
    assert ("NVLS" in one) is hopper and "NVLSTree" not in one
    assert "NVLS" not in multi and ("NVLSTree" in multi) is hopper
    assert ("NVLS" in sharp) is hopper and {"CollNetDirect", "CollNetChain"} <= sharp
    assert all(p == "Simple" for a, p in tables(System(gpu, 16, 8)) if a.startswith("NVLS"))


def test_path_types_and_ll128_rule():
    found = [re.match(r"#define PATH_(\w+) (\d+)", ln) for ln in src("graph.h").values()]
    order = {m.group(1): int(m.group(2)) for m in found if m}
    assert [k for k, _ in sorted(order.items(), key=lambda kv: kv[1])] == list(K.PATH_TYPES)
    t = T(522) + T(525) + T(531)
    assert "typeInter <= PATH_PXN" in t and "typeInter <= PATH_PXB" in t and "PATH_NVB" in t
    assert ll128_enabled(90, "NVL", "PXN") and not ll128_enabled(80, "NVL", "PXN")
    assert ll128_enabled(80, "NVL", "PXB") and not ll128_enabled(90, "PHB", "PIX")
    assert not ll128_enabled(60)
    assert all(("Ring", "LL128") in tables(System(g, 8, 8)) for g in ("A100 SXM", "B200"))


def test_impossible_forcing_is_refused():
    assert field_of(choose, "AllReduce", 8 * GiB, System("A100 SXM", 8, 8), "NVLS") == "algorithm"
    with pytest.raises(ParamError):
        choose("AllReduce", 8 * GiB, System("H100 SXM", 8, 8), "NVLS", "LL")
    with pytest.raises(ParamError):
        choose("AllReduce", 8 * GiB, System("H100 SXM", 8, 8), "CollNet")


def test_reduce_scatter_and_all_gather_candidates():
    s = System("H100 SXM", 8, 8)
    for coll in ("ReduceScatter", "AllGather"):
        assert {a for a, _ in tables(s, coll)} == {"Ring", "NVLS"}
    multi = System("H100 SXM", 16, 8)
    assert {a for a, _ in tables(multi, "AllGather")} == {"Ring"}
    assert _lat(s, "Ring", "Simple", "AllGather") == pytest.approx(8.4 + 7 * 3.4)


# --- NCCL's choice at known switch points ---------------------------------------------------


def pick(s, n, *force):
    c = choose("AllReduce", n, s, *force)
    return c.algorithm, c.protocol


def test_choice_switch_points():
    h100, a100 = System("H100 SXM", 8, 8), System("A100 SXM", 8, 8)
    assert pick(h100, 8) == ("Ring", "LL")
    assert pick(h100, 8 * GiB) == ("NVLS", "Simple")
    assert pick(a100, 8) == ("Ring", "LL")
    assert pick(a100, 8 * (1 << 20)) == ("Ring", "LL128")
    assert pick(a100, 8 * GiB) == ("Ring", "Simple")
    many = System("H100 SXM", 128, 8)
    assert pick(many, 8) == ("Tree", "LL")
    assert pick(many, 256 << 20) == ("NVLSTree", "Simple")
    assert pick(many, 8 * GiB) == ("Ring", "Simple")  # the ring's 384 GB/s beats NVLSTree's 364
    # protocols only move forward with size: LL, then LL128, then Simple
    order = [K.PROTOCOLS.index(pick(a100, 1 << k)[1]) for k in range(3, 34)]
    assert order == sorted(order)


# --- against published all_reduce_perf runs (large messages) ------------------------------

MEASURED = [
    # (system, forced algorithm or None, measured busbw GB/s, source)
    (System("A100 SXM", 8, 8), "Ring", 230.0, "nccl-tests#149"),
    (System("A100 SXM", 8, 8), None, 230.0, "nccl-tests#149"),
    (System("H100 SXM", 8, 8), "Ring", 370.0, "nccl-tests#212"),
    (System("H100 SXM", 8, 8), None, 480.0, "nccl-tests#212"),
    (System("H200 SXM", 8, 8), None, 475.0, "nccl-tests#272 (8 x H200, NCCL 2.20.3, 4 GiB)"),
    (System("H200 SXM", 8, 8), "Ring", 370.0, "nccl-tests#212 (NVLink 4 with rings)"),
    (System("A100 SXM", 16, 8, 8, 200), None, 192.0, "nccl#812 (DGX A100, 8 x 200 Gb/s)"),
    (System("H100 SXM", 16, 8, 8, 400), None, 470.0, "nccl-tests#309 (2 HGX servers)"),
    (System("H100 SXM", 32, 8, 8, 400), None, 365.84, "nccl-tests#309 (4 HGX servers)"),
    (System("H100 SXM", 32, 8, 8, 400), "Ring", 8 * 46.0, "nccl-tests#290 (46-48 per NIC)"),
    # figures the nccl-logs branch records in tests/data/nccl-tests/MEASURED.json
    (System("H200 SXM", 8, 8), None, 479.98, "Azure/AI-benchmarking-guide ND_H200_v5, 8G row"),
    (System("A100 SXM", 8, 8), None, 231.58, "Azure/AI-benchmarking-guide ND_A100_v4, 8G row"),
    (System("H200 SXM", 8, 8), None, 480.7, "stas00/ml-engineering network benchmarks, 16 GiB"),
    (System("A100 SXM", 8, 8), None, 230.77, "NVIDIA/nccl#527, p4dn.24xlarge, 1 GiB"),
]
# Not here: the GCP A3 Mega log (338.82 GB/s on 2 x 8 H100): its network is inferred, not printed,
# and GPUDirect-TCPXO is not the InfiniBand NCCL's model describes (SWEEPS.json: 'platform').


@pytest.mark.parametrize("s,algo,busbw,source", MEASURED)
def test_large_message_busbw_within_12_percent(s, algo, busbw, source):
    """The peaks quoted (at 1-16 GiB), against the performance layer's time from 4 GiB, where the
    published sweeps have levelled off; the layer was fitted on whole sweeps, not on these."""
    for n in (4 * GiB, 8 * GiB, 16 * GiB):
        c = choose("AllReduce", n, s, algo)
        assert abs(c.busbw_GBps / busbw - 1) < 0.12, (source, n, c)


def test_a3_mega_where_nccls_tree_derate_makes_it_pessimistic():
    """GCP A3 Mega log (2 x 8 H100, a 200 Gb/s card per GPU): 338.82 GB/s at 8 GiB. Each GPU
    has a card of its own, so NCCL's tree is the plain TREE pattern and loses 15 %
    (tuning.cc:336); NCCL then picks NVLSTree: per channel min(24 x 0.85 x 7/8 x 2, 2 x 24, 45.5)
    = 35.7 GB/s (tuning.cc:311-322), 8 channels, 285.6 GB/s of bus bandwidth, 16 % under the
    run. (Before the pattern was ported the port's Tree Simple, 310 GB/s, sat within 12 %.)"""
    s = System("H100 SXM", 16, 8, 8, 200)
    c = choose("AllReduce", 8 * GiB, s)
    assert (c.algorithm, c.protocol) == ("NVLSTree", "Simple")
    per_channel = min(24 * 0.85 * 7 / 8 * 2, 2 * 24, 45.5)
    assert c.nccl_busbw_GBps == pytest.approx(8 * per_channel, rel=0.01)
    assert 0.82 < c.nccl_busbw_GBps / 338.82 < 0.86


def test_nccl_own_figures_are_exposed():
    """sjeaugey in nccl-tests#149: 12 NVLinks x 20 GB/s 'should therefore be 240GB/s on A100'
    (NCCL's own), 'but some other bottlenecks on the GPUs limits it to ~230GB/s' (measured): the
    performance layer, fitted on other runs, within 3 % of that."""
    c = choose("AllReduce", 8 * GiB, System("A100 SXM", 8, 8))
    assert c.nccl_busbw_GBps == pytest.approx(240, rel=0.005)
    assert c.busbw_GBps == pytest.approx(230, rel=0.03)


# --- properties ---------------------------------------------------------------------------

SYSTEMS = st.builds(
    System,
    gpu=st.sampled_from(["A100 SXM", "H100 SXM", "H200 SXM", "B200"]),
    gpus=st.sampled_from([8, 16, 32, 64, 256]),
    gpus_per_node=st.just(8),
    nics_per_node=st.sampled_from([4, 8]),
    nic_Gbps=st.sampled_from([100.0, 200.0, 400.0, 800.0]),
    in_network_reduction=st.booleans(),
)


@settings(max_examples=examples(60), deadline=None)
@given(
    SYSTEMS, st.integers(1, 1 << 36), st.sampled_from(["AllReduce", "ReduceScatter", "AllGather"])
)
def test_choice_is_the_least_nccl_time(s, n, coll):
    cands = predict(coll, n, s)
    c = choose(coll, n, s)
    assert c.nccl_time_us == min(x.nccl_time_us for x in cands)
    assert c in cands
    assert c.algbw_GBps == pytest.approx(n / (c.time_us * 1e3))


@settings(max_examples=examples(40), deadline=None)
@given(SYSTEMS, st.integers(1, 1 << 35), st.integers(1, 1 << 35))
def test_ring_and_nvls_times_grow_with_size(s, a, b):
    lo, hi = sorted((a, b))
    for (algo, p), _ in tables(s).items():
        if algo in ("Ring", "NVLS"):
            assert algo_time_us(s, "AllReduce", algo, p, lo) <= algo_time_us(
                s, "AllReduce", algo, p, hi
            )


@settings(max_examples=examples(30), deadline=None)
@given(SYSTEMS)
def test_chosen_time_grows_over_powers_of_two(s):
    times = [choose("AllReduce", 1 << k, s).nccl_time_us for k in range(0, 36)]
    assert all(x <= y for x, y in zip(times, times[1:]))
    assert all(math.isfinite(t) and t > 0 for t in times)


ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.sampled_from(["h100", "A100", "b200", "mi300x", "intel", "amd", 8, 16, 400.0]),
)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(ODD, min_size=7, max_size=7), ODD)
def test_bad_input_is_a_param_error(values, nbytes):
    """Any JSON-ish input gives a result or a ParamError naming a field, never another error."""
    try:
        s = System(*values)
        choose("AllReduce", nbytes, s)
    except ParamError as e:
        assert e.field in {
            "gpu", "gpus", "gpus_per_node", "nics_per_node", "nic_gbps",
            "in_network_reduction", "cpu", "bytes",
        }  # fmt: skip


# --- one GPU per server ------------------------------------------------------------------


@pytest.mark.parametrize("nic_Gbps", [100, 200, 336, 350, 383, 384, 400])
def test_one_gpu_per_server_any_card_rate(nic_Gbps):
    """A tree bandwidth between two speeds of the intra array still steps up (was a ValueError
    for cards of 336-384 Gb/s with one GPU per server)."""
    s = System("H100 SXM", 4, 1, 1, nic_Gbps)
    pick = choose("AllReduce", 1 << 30, s)
    assert 0 < pick.nccl_busbw_GBps <= nic_Gbps / 8


CHOOSE_SYSTEMS = [
    nccl.System("H100 SXM", 8, 8, 8, 400.0),
    nccl.System("H100 SXM", 64, 8, 8, 400.0),
    nccl.System("A100 SXM", 2, 1, 1, 100.0),
    nccl.System("B200", 512, 8, 8, 800.0),
]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(CHOOSE_SYSTEMS),
    st.integers(1, 1 << 44),
    st.sampled_from([None, "Ring", "Tree", "NVLS", "CollNetDirect"]),
    st.sampled_from([None, "LL", "LL128", "Simple"]),
)
def test_choose_equals_the_least_of_every_candidate(system, nbytes, algorithm, protocol):
    """nccl.choose: the first least NCCL time of predict()'s candidates that the restriction
    leaves, the same figures; a restriction nothing meets is refused with the same message."""
    pool = [
        c
        for c in nccl.predict("AllReduce", nbytes, system)
        if algorithm in (None, c.algorithm) and protocol in (None, c.protocol)
    ]
    if not pool:
        with pytest.raises(ParamError, match="cannot run"):
            nccl.choose("AllReduce", nbytes, system, algorithm, protocol)
        return
    want = min(pool, key=lambda c: c.nccl_time_us)
    assert nccl.choose("AllReduce", nbytes, system, algorithm, protocol) == want


# --- the tree's pattern (tuning.cc:336), CollNet's graphs, comm->nChannels ------------------

S = functools.partial(lambda n: src("search.cc")[n])


def test_pattern_lines_read_from_source():
    """The lines the pattern rule rests on, read from the excerpts, and the numbers taken."""
    h = src("graph.h")
    text = " ".join(h[n] for n in range(160, 170))
    found = dict(re.findall(r"NCCL_TOPO_PATTERN_(\w+)\s*\\?\s*(\d+)", text))
    assert {k: int(v) for k, v in found.items()} == K.TOPO_PATTERNS
    assert "maxTreePattern == NCCL_TOPO_PATTERN_TREE" in T(336)
    assert after(T(336), "busBw *=") == K.TREE_PATTERN_FACTOR
    assert "std::max" in src("init.cc")[1447] and "[NCCL_ALGO_TREE].pattern" in src("init.cc")[1447]
    assert "NCCL_TOPO_PATTERN_BALANCED_TREE" in src("init.cc")[1183]
    assert "ngpus == 1" in S(1133) and S(1133).endswith("= NCCL_TOPO_PATTERN_TREE;")
    assert "ccMin >= 90 && tmpGraph.pattern == NCCL_TOPO_PATTERN_BALANCED_TREE" in S(1216)
    assert "tmpGraph.pattern = NCCL_TOPO_PATTERN_TREE" in S(1217)
    assert "BALANCED_TREE && step != 0" in S(614) and "graph->inter" in S(615)
    assert "revPath->type > type" in S(153)  # a tree's card must reach back at typeInter
    assert "GPU->NIC direction" in src("paths.cc")[838]  # PXN one way only
    assert "graph->nChannels < netCount" in S(756)  # CollNetDirect: a channel per card at most
    assert "bwIntra < 25.0" in S(1039) and "nChannels > 4" in S(1040)  # ncclTopoDupChannels
    c = src("connect.cc")
    assert "nChannels + nChannels / 2" in c[467]
    assert "bwIntra > collNetChainGraph->bwInter" in c[466]
    assert after(c[481], "bwIntra >") == K.HOPPER_DOUBLING_MIN_BW_GBPS
    assert after(c[481], "nChannels <") == K.HOPPER_DOUBLING_MAX_CHANNELS


# (system, the pattern search.cc returns, why)
PATTERNS = [
    (System("H100 SXM", 64, 1, 1), "TREE", "one GPU per server: search.cc:1133"),
    (System("A100 SXM", 16, 1, 1, 200), "TREE", "one GPU per server: search.cc:1133"),
    (System("H100 SXM", 8, 8), "BALANCED_TREE", "one server: nccl#1197 prints Pattern 1"),
    (System("A100 SXM", 8, 8), "BALANCED_TREE", "one server"),
    (System("H100 SXM", 64, 8, 8), "TREE", "a card per GPU, Hopper: the retry, 1215-1219"),
    (System("H200 SXM", 16, 8, 8), "TREE", "a card per GPU, Hopper: the retry"),
    (System("B200", 16, 8, 8), "TREE", "a card per GPU, Blackwell: the retry"),
    (System("A100 SXM", 16, 8, 8, 200), "BALANCED_TREE", "Ampere: no retry, typeInter widens"),
    (System("A100 SXM", 16, 8, 4, 200), "BALANCED_TREE", "two GPUs share each card at PIX"),
    (System("H100 SXM", 16, 8, 4), "BALANCED_TREE", "two GPUs share each card at PIX"),
]


@pytest.mark.parametrize("s,pattern,why", PATTERNS)
def test_tree_pattern_and_its_085(s, pattern, why):
    """The pattern per case, and the tree's Simple bandwidth worked from tuning.cc:306, 324, 331
    and 336-382: min(n x bw x 0.92, n x perChMaxTreeBw), x 0.85 for the plain TREE, / 2."""
    g = graphs(s)["Tree"]
    assert g.pattern == pattern, why
    bw = g.bw_intra if s.nodes <= 2 else g.bw_inter
    cap = K.PER_CH_MAX_TREE_BW_GBPS[s.generation][min(s.nodes - 1, 2)]
    bus = min(g.n_channels * bw * 0.92, g.n_channels * cap) * (0.85 if pattern == "TREE" else 1)
    assert tables(s)[("Tree", "Simple")].bw_GBps == pytest.approx(bus / 2)


def test_tree_085_by_hand():
    """8 x 8 H100: 8 channels of 48 GB/s, 384 x 0.92 capped at 8 x 36.0 (tuning.cc:202), x 0.85,
    / 2 = 122.4. 64 H100 one per server: 2 x 24 x 0.92 = 44.16, x 0.85, / 2 = 18.768."""
    assert tables(System("H100 SXM", 64, 8, 8))[("Tree", "Simple")].bw_GBps == pytest.approx(122.4)
    assert tables(System("H100 SXM", 64, 1, 1))[("Tree", "Simple")].bw_GBps == pytest.approx(18.768)


def _best(s, a, n):
    return min(t for p in K.PROTOCOLS if (t := algo_time_us(s, "AllReduce", a, p, n)) is not None)


def _first_change(f, lo: int, hi: int) -> int:
    """The least size in (lo, hi] where f differs from f(lo): 64 steps an octave, then bisection."""
    v, x = f(lo), lo
    while x < hi:
        y = max(x + 1, int(x * 2 ** (1 / 64)))
        if f(y) != v:
            while y - x > 1:
                m = (x + y) // 2
                x, y = (x, m) if f(m) != v else (m, y)
            return y
        x = y
    raise AssertionError("no change")


def _review_figures(eight, flat):
    """The review's table: tree/ring crossover, Tree LL128 from, NVLSTree from (8 x 8 H100);
    first crossover and the tree at 8 GiB (64 H100, one per server)."""
    slower = lambda s: lambda n: _best(s, "Tree", n) >= _best(s, "Ring", n)  # noqa: E731
    picks = functools.partial(pick, eight)
    ll128 = _first_change(picks, 1 << 10, 1 << 30)
    nvlstree = _first_change(picks, ll128, 1 << 31)
    return (
        _first_change(slower(eight), 1 << 20, 1 << 33),
        ll128,
        nvlstree,
        _first_change(slower(flat), 1 << 20, 1 << 33),
        _best(flat, "Tree", 8 * GiB) * 1e-6,
    )


def test_review_crossovers_follow_the_085(monkeypatch):
    """Review N2's table, with the x 0.85 (this port) and without it (the port before), so the
    factor is the whole difference: 44 MB (was 69.7), 174 kB (220), 11.6 MB (16.8); one GPU per
    server 52 MB (107) and 0.46 s at 8 GiB (0.39). The review's figures after are exact; before,
    some are page 5's, read on its grid of 8 sizes an octave: within 2^(1/8) of it."""
    eight, flat = System("H100 SXM", 64, 8, 8), System("H100 SXM", 64, 1, 1)
    assert pick(eight, 1 << 12) == ("Tree", "LL")
    got = _review_figures(eight, flat)
    want = (44e6, 174e3, 11.6e6, 52e6, 0.46)
    assert got == pytest.approx(want, rel=0.015)
    with monkeypatch.context() as m:
        m.setattr(K, "TREE_PATTERN_FACTOR", 1.0)
        tables.cache_clear()
        before = _review_figures(eight, flat)
    tables.cache_clear()
    was = (69.7e6, 220e3, 16.8e6, 107e6, 0.39)
    assert all(2 ** (-1 / 8) <= b / w <= 2 ** (1 / 8) for b, w in zip(before, was, strict=True))
    assert before[0] == pytest.approx(was[0], rel=0.015)


def test_collnet_worked_example_2x8_a100():
    """Review N3: 2 x 8 A100, 4 x 200 Gb/s cards, SHARP. Path min(Gen4 x16 = 24, 25) = 24 GB/s.
    CollNetDirect: 4 heads (one per card, search.cc:754-773), 4 x 24, no duplication under 25 GB/s
    (search.cc:1039), pass 2 raises bwIntra 24 -> 28 -> 30 -> 48 = 2 x 24 (1279-1282); tuning.cc:306
    takes bwIntra: 4 x 48 = 192, factor 8/4 - (8/4 - 1)/2 = 1.5 (345-347): 128, algbw 64.
    CollNetChain: the ring's 4 channels, the same pass 2: 4 x 48 = 192, algbw 96. NCCL picks the
    chain."""
    s = System("A100 SXM", 16, 8, 4, 200, in_network_reduction=True)
    g = graphs(s)
    assert (g["CollNetDirect"].n_channels, g["CollNetDirect"].bw_intra) == (4, 48.0)
    assert (g["CollNetChain"].n_channels, g["CollNetChain"].bw_intra) == (4, 48.0)
    assert g["CollNetDirect"].bw_inter == g["CollNetChain"].bw_inter == 24.0
    t = tables(s)
    assert t[("CollNetDirect", "Simple")].bw_GBps == pytest.approx(4 * 48 / 1.5 / 2)
    assert t[("CollNetChain", "Simple")].bw_GBps == pytest.approx(4 * 48 / 2)
    c = choose("AllReduce", 8 * GiB, s)
    assert (c.algorithm, c.protocol) == ("CollNetChain", "Simple")
    own = 8 * GiB / (c.nccl_time_us * 1e3)  # NCCL's own algbw (the layer's time aside)
    assert own == pytest.approx(96, rel=0.005)
    direct = choose("AllReduce", 8 * GiB, s, "CollNetDirect")
    assert 8 * GiB / (direct.nccl_time_us * 1e3) == pytest.approx(64, rel=0.005)


def test_collnet_direct_duplicated_on_hopper():
    """2 x 8 H100, 4 x 400 Gb/s cards, SHARP: 4 heads of 48 GB/s; with 4 channels (not more than
    4, search.cc:1040) the graph is duplicated to min(8, 8) channels of 24; pass 2 then needs 8
    channels, which a search of at most one per card (search.cc:756) cannot find, so bwIntra
    stays 24: 8 x 24 = 192, factor 8/8 = 1, x 0.85 on Hopper (tuning.cc:348), / 2 = 81.6. With 4
    heads for 8 GPUs NCCL refuses CollNetDirect for all-gather (tuning.cc:366-370)."""
    s = System("H100 SXM", 16, 8, 4, 400, in_network_reduction=True)
    d = graphs(s)["CollNetDirect"]
    assert (d.n_channels, d.bw_intra, d.bw_inter) == (8, 24.0, 24.0)
    assert tables(s)[("CollNetDirect", "Simple")].bw_GBps == pytest.approx(8 * 24 * 0.85 / 2)
    assert ("CollNetDirect", "Simple") not in tables(s, "AllGather")
    full = System("H100 SXM", 16, 8, 8, 400, in_network_reduction=True)
    assert ("CollNetDirect", "Simple") in tables(full, "AllGather")


def test_comm_channels_collnet_and_hopper_doubling():
    """connect.cc:460 doubles min(ring, tree); 466-469 adds half with CollNet when the chain's
    bwIntra (48) exceeds its bwInter (24); 480-483 doubles on Hopper+ across servers while the
    ring's bwIntra > 45 and there are fewer than 16: B200s two to a server with two 800 Gb/s
    cards, ring 2 x 96 duplicated to 4 x 48 (search.cc:1036-1049), so 8, then 16."""
    a100 = dict(gpu="A100 SXM", gpus=16, gpus_per_node=8, nics_per_node=4, nic_Gbps=200)
    assert comm_channels(System(**a100)) == 8
    assert comm_channels(System(**a100, in_network_reduction=True)) == 12
    b200 = System("B200", 16, 2, 2, 800)
    ring = graphs(b200)["Ring"]
    assert (ring.n_channels, ring.bw_intra) == (4, 48.0)
    assert comm_channels(b200) == 16
    assert comm_channels(System("H100 SXM", 64, 8, 8)) == 16  # 2 x 8, not below 16
    # the ring's plateau (tuning.cc:647-649) now starts at 64 x 16 channels x 16 ranks
    e = tables(b200)[("Ring", "Simple")]
    below, at = 64 * 16 * 16 - 1, 64 * 16 * 16
    assert algo_time_us(b200, "AllReduce", "Ring", "Simple", below) == pytest.approx(
        e.latency_us + below / (1000 * e.bw_GBps)
    )
    assert algo_time_us(b200, "AllReduce", "Ring", "Simple", at) == pytest.approx(
        e.latency_us * 1.4 + at / (1000 * e.bw_GBps)
    )
