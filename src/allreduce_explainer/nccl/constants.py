"""NCCL's own tuning constants, copied from its source, each once, each with file and line.

Source: NVIDIA/nccl at commit 5067397c2676d5aed50042fc39e5c8ee96eb0027, version 2.30.7
(`makefiles/version.mk`: NCCL_MAJOR 2, NCCL_MINOR 30, NCCL_PATCH 7). Line numbers are in that
commit. 2.31.0a7 has the same tuning constants (src/tuning/cost_model.cc:140-226; the branches
that differ are in releases.py). Tables indexed by protocol follow NCCL's order (LL, LL128,
Simple); tables indexed by GPU generation follow its compCapIndex (Volta, Ampere, Hopper,
Blackwell; tuning.cc:263-266); tables indexed by node count follow index2 = nNodes - 1 capped
at 2 (N1, N2, N4+; tuning.cc:267).
`tests/core/nccl/test_nccl.py` reads these numbers back from verbatim excerpts in
`tests/data/nccl/`.
"""

from __future__ import annotations

PROTOCOLS = ("LL", "LL128", "Simple")  # NCCL_PROTO names, ncclProtoStr order
# NCCL_ALGO names in ncclAlgoStr order. PAT (all-gather / reduce-scatter with one GPU per server)
# is not modelled: it never runs an all-reduce (tuning.cc:298).
ALGORITHMS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree")
GENERATIONS = ("Volta", "Ampere", "Hopper", "Blackwell")

# tuning.cc:139-144, nvlsEfficiency[compCapIndex]
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)


def _by_algorithm(*rows: tuple[float, float, float]) -> dict[str, tuple[float, float, float]]:
    """A table NCCL writes as one (LL, LL128, Simple) row per algorithm in ALGORITHMS' order,
    as a dict by algorithm: the rows below are laid out as tuning.cc lays them, two a line."""
    return dict(zip(ALGORITHMS, rows, strict=True))


# tuning.cc:151-153, baseLatencies[algorithm][protocol], microseconds
BASE_LATENCY_US = _by_algorithm(
    (6.8, 14.0, 8.4), (6.6, 14.0, 8.4),  # Tree, Ring
    (0.0, 0.0, 0.0), (0.0, 0.0, 0.0),  # CollNetDirect, CollNetChain
    (0.0, 0.0, 0.0), (0.0, 0.0, 0.0),  # NVLS, NVLSTree
)  # fmt: skip

# tuning.cc:158-175, hwLatencies[link][algorithm][protocol], microseconds per hop
HW_LATENCY_US = {
    "NVLink": _by_algorithm(  # tuning.cc:159-161
        (0.6, 1.25, 4.0), (0.6, 1.9, 3.4),  # Tree, Ring
        (0.0, 0.0, 3.7), (0.0, 0.0, 2.8),  # CollNetDirect, CollNetChain
        (0.0, 0.0, 25.0), (0.0, 0.0, 25.0),  # NVLS, NVLSTree
    ),
    "PCI": _by_algorithm(  # tuning.cc:165-167
        (1.0, 1.9, 4.0), (1.0, 2.5, 5.7),
        (0.0, 0.0, 3.7), (0.0, 0.0, 2.8),
        (0.0, 0.0, 0.0), (0.0, 0.0, 0.0),
    ),
    "Network": _by_algorithm(  # tuning.cc:171-173
        (5.0, 8.5, 14.0), (2.7, 4.0, 14.0),
        (0.0, 0.0, 31.0), (0.0, 0.0, 30.0),
        (0.0, 0.0, 18.0), (0.0, 0.0, 20.9),
    ),
}  # fmt: skip

# tuning.cc:179-182, llMaxBws[index1][index2], GB/s. index1 is the GPU generation on one server,
# else 0 for Intel and 1 for AMD hosts (tuning.cc:268-271).
LL_MAX_BW_GBPS = (
    (39.0, 39.0, 20.4),
    (87.7, 22.5, 19.0),
    (141.0, 45.0, 35.0),
    (2 * 141.0, 2 * 45.0, 2 * 35.0),
)
# tuning.cc:186-189, perChMaxRingLL128Bws[generation][index2], GB/s per channel
PER_CH_MAX_RING_LL128_BW_GBPS = (
    (20.0, 20.0, 20.0),
    (20.0, 20.0, 20.0),
    (36.7, 36.7, 36.7),
    (40.0, 40.0, 40.0),
)
# tuning.cc:193-196, perChMaxTreeLL128Bws
PER_CH_MAX_TREE_LL128_BW_GBPS = (
    (20.0, 20.0, 20.0),
    (20.0, 20.0, 20.0),
    (36.7, 36.7, 29.0),
    (55.6, 31.67, 20.0),
)
# tuning.cc:200-203, perChMaxTreeBws
PER_CH_MAX_TREE_BW_GBPS = (
    (26.5, 18.5, 10.0),
    (24.0, 23.6, 17.8),
    (38.7, 41.4, 36.0),
    (70.0, 42.8, 24.0),
)
# tuning.cc:207-210, perChMaxNVLSTreeBws
PER_CH_MAX_NVLS_TREE_BW_GBPS = (
    (26.5, 18.5, 10.0),
    (24.0, 23.6, 17.8),
    (0.0, 57.7, 45.5),
    (0.0, 96.0, 80.0),
)

# tuning.cc:230-232, getNetOverhead: microseconds per network step, by host CPU
NET_OVERHEAD_US = {"intel": 1.0, "amd": 2.0}

# tuning.cc:327-349, the "model refinements" factors
RING_LL_FACTOR = 0.5  # tuning.cc:327
RING_LL128_FACTOR = 0.92  # tuning.cc:329
TREE_ALLREDUCE_FACTOR = 0.92  # tuning.cc:331
TREE_LL_DIVISOR = 3.8  # tuning.cc:332
TREE_LL128_FACTOR_ONE_NODE = 7.0 / 9.0  # tuning.cc:335
TREE_LL128_FACTOR_MULTI_NODE = 120.0 / 128.0  # tuning.cc:335
COLLNET_DIRECT_HOPPER_FACTOR = 0.85  # tuning.cc:348
COLLNET_RSAG_NET_FACTOR = 0.9  # tuning.cc:342
COLLNET_ARITY_LATENCY_US = 0.4  # tuning.cc:420-421
TREE_PATTERN_FACTOR = 0.85  # tuning.cc:336, when the tree graph's pattern is the plain TREE
# tuning.cc:623-627, treeCorrectionFactor[protocol][log2i(bytes >> 6)], 64 B to 256 MB
TREE_CORRECTION_FACTOR = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0),  # noqa: E501
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0),  # noqa: E501
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9),  # noqa: E501
)  # fmt: skip
TREE_CORRECTION_SIZES = 23  # tuning.cc:640: Tree corrects sizes with logSize < 23
NVLS_TREE_CORRECTION_SIZES = 24  # tuning.cc:643: NVLSTree (Blackwell, x86) with logSize < 24
# tuning.cc:649, "Plateau effect of ring": latency multiplier, compCap < 80 else >= 80
RING_PLATEAU_FACTOR = (1.9, 1.4)
RING_PLATEAU_MIN_BYTES_PER_CHANNEL_RANK = 64  # tuning.cc:648

# src/graph/topo.h:19-24, effective NVLink bandwidth per link, GB/s, by compute capability
NVLINK_BW_GBPS = {60: 18.0, 70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1}
# src/graph/topo.cc:418, a network card's bandwidth: its speed in Mb/s / 8000 (GB/s)
NET_MBPS_PER_GBPS = 8000.0
# src/graph/topo.cc:545-555 (kvDictPciGen, 100 Mb/s per lane) and topo.cc:657
# (bw = width * speed / 80.0): a PCIe link's bandwidth in GB/s
PCI_GEN_SPEED = {4: 120, 5: 240, 6: 480}
PCI_BW_DIVISOR = 80.0

# src/graph/search.cc:1051-1065, the bandwidths (GB/s per channel) the search tries, in order
SPEED_ARRAY_INTRA = (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0)
SPEED_ARRAY_INTER = (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0,
                     4.0, 3.0, 2.4, 1.2, 0.24, 0.12)  # fmt: skip
SM90_SPEED_ARRAY_INTRA = (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0)
SM90_SPEED_ARRAY_INTER = (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                          3.0, 2.4, 1.2, 0.24, 0.12)  # fmt: skip
SM100_SPEED_ARRAY_INTRA = (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0)
SM100_SPEED_ARRAY_INTER = (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                           17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12)  # fmt: skip
# search.cc:1245: a lower speed is tried only while it is above 0.49 of the best found
SEARCH_SPEED_RATIO = 0.49
# search.cc:1039-1040, ncclTopoDupChannels: no duplication below 25 GB/s, nor (compCap > 80)
# below 50 GB/s with more than 4 channels
DUP_MIN_BW_GBPS = 25.0
DUP_SM90_MIN_BW_GBPS = 50.0
DUP_SM90_MAX_CHANNELS = 4

# src/include/graph.h:160-169, the patterns a graph is searched with; comm->maxTreePattern is the
# largest over the ranks (init.cc:1447)
TOPO_PATTERNS = {
    "BALANCED_TREE": 1,
    "SPLIT_TREE": 2,
    "TREE": 3,
    "RING": 4,
    "NVLS": 5,
    "COLLNET_DIRECT": 6,
}
# src/graph/connect.cc:466-469 and 480-483, comm->nChannels after the ring's doubling: x 1.5 with
# CollNet when the chain's bwIntra > bwInter and a server has more than one GPU; x 2 on Hopper and
# newer across servers while the ring's bwIntra > 45 GB/s and there are fewer than 16 channels
HOPPER_DOUBLING_MIN_BW_GBPS = 45.0
HOPPER_DOUBLING_MAX_CHANNELS = 16

# src/include/graph.h:117-154, path types from nearest to farthest (PATH_LOC 0 ... PATH_DIS 11)
PATH_TYPES = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")

# src/include/device.h:91, 199, 213; src/init.cc:1177 (ring search maxChannels = MAXCHANNELS / 2)
MAXCHANNELS = 64
NCCL_MAX_DIRECT_ARITY = 7
NCCL_MAX_NVLS_ARITY = 32

# ---- NCCL 2.27.7's values where 2.30.7's differ (releases.V2_27_7.tables_of_2_27) ---------------
# tuning.cc:176, 182, 188 at v2.27.7: Blackwell's per-channel rows, twice Hopper's (N1/N2/N4)
BLACKWELL_PER_CH_MAX_RING_LL128_BW_2_27 = (2 * 36.7, 2 * 36.7, 2 * 36.7)
BLACKWELL_PER_CH_MAX_TREE_LL128_BW_2_27 = (2 * 36.7, 2 * 36.7, 2 * 29.0)
BLACKWELL_PER_CH_MAX_TREE_BW_2_27 = (2 * 38.7, 2 * 41.4, 2 * 36.0)
NVLS_TREE_NET_LATENCY_2_27_US = 14.0  # tuning.cc:155 at v2.27.7, NVLSTree's network Simple
NVLS_ALLREDUCE_RATIO_2_27 = 5.0 / 6.0  # tuning.cc:324 at v2.27.7, NVLS's bus to algorithm bw
NVLS_RSAG_NET_FACTOR_2_27 = 0.9  # tuning.cc:272 at v2.27.7
# search.cc:962-963 at v2.27.7
SM100_SPEED_ARRAY_INTRA_2_27 = (90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0)
SM100_SPEED_ARRAY_INTER_2_27 = (96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0,
                                12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12)  # fmt: skip
