"""NCCL's time model and choice: ncclTopoTuneModel, ncclTopoGetAlgoTime and topoGetAlgoInfo.

For each (algorithm, protocol) NCCL computes, once per communicator, an algorithm bandwidth and
a latency (src/graph/tuning.cc:243-541); for each call it predicts
time = latency + bytes / (1000 x bandwidth) with a few size corrections (tuning.cc:630-655) and
runs the fastest (src/enqueue.cc:2028-2044). This module ports that, line by line, for
AllReduce, ReduceScatter and AllGather. `bytes` is what NCCL times: the all-reduce buffer, or the
whole (all ranks') buffer of a reduce-scatter or all-gather (enqueue.cc:2127, enqueue.h:39-41),
which is also the size all_reduce_perf and all_gather_perf print.

Where common summaries of NCCL's model and the source disagree, the source wins:
- the tree's latency counts `log2i(nNodes)` (tuning.cc:416), the integer floor, not log2;
- a multi-server ring pays max(per-hop NVLink latency, network overhead), 3 x 1 us per step
  with Simple on Intel hosts, 3 x 2 us on AMD (tuning.cc:404-410), and its plateau factor is 1.4
  from compute capability 8.0 but 1.9 below (tuning.cc:649);
- NVLS's bandwidth is not the ring's bwIntra x efficiency: it comes from the NVLS graph (8
  channels of 40 GB/s on an 8 x H100 server, against the ring's 12 x 30), x nvlsEfficiency x
  (channels - 1)/channels, doubled for all-reduce (tuning.cc:314-316), then capped by the graph's
  bwInter (60 GB/s here); its latency replaces the base latency instead of adding to it
  (tuning.cc:425);
- NVLS runs across servers only with in-network reduction (CollNet, tuning.cc:505 and
  enqueue.cc:2008); otherwise NVLSTree, whose network bandwidth is doubled on two servers and
  capped per channel (tuning.cc:320-322);
- the tree's LL128 bandwidth is x 7/9 on one server, x 120/128 across (tuning.cc:335);
- the tree loses 15 % more when the search returns the plain TREE pattern (tuning.cc:336): with
  a card per GPU across servers on Hopper and newer, and with one GPU per server
  (topology.tree_pattern says why);
- CollNet's bandwidth is its graphs' bwIntra (tuning.cc:306), which the search raises up to twice
  the card's, and CollNetDirect's is divided by (r + 1)/2 for r GPUs per head (tuning.cc:345-347);
- the per-link NVLink figures of topo.h do not reach the model directly: they bound the topology
  search, whose speed arrays set each channel's bandwidth: the port of the search itself on the
  DGX presets, a closed form of it elsewhere (topology.py says where they differ and why).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..errors import ParamError
from . import constants as K
from .topology import System, collnet_heads, graphs

COLLECTIVES = ("AllReduce", "ReduceScatter", "AllGather")


def log2i(n: int) -> int:
    """NCCL's log2i (src/include/utils.h:56 -> bitops.h:292 log2Down): floor(log2 n), -1 for 0."""
    return int(n).bit_length() - 1


@dataclass(frozen=True)
class Entry:
    """One cell of NCCL's tables: algorithm bandwidth (GB/s) and latency (us)."""

    bw_GBps: float
    latency_us: float


def collective_name(name: str) -> str:
    if name in COLLECTIVES:  # as spelled here: the common case, asked thousands of times
        return name
    for c in COLLECTIVES:
        if str(name).lower().replace("_", "").replace("-", "") == c.lower():
            return c
    raise ParamError("collective", f"must be one of {', '.join(COLLECTIVES)}")


@lru_cache(maxsize=256)
def tables(s: System, coll: str = "AllReduce") -> dict[tuple[str, str], Entry]:
    """ncclTopoTuneModel (tuning.cc:243-541) for one collective: every (algorithm, protocol) NCCL
    keeps enabled, with bandwidth > 0. Disabled ones are left out, as NCCL zeroes them."""
    gr = graphs(s)
    n_ranks, n_nodes, gen = s.gpus, s.nodes, s.generation
    index2 = min(n_nodes - 1, 2)  # tuning.cc:267
    index1 = gen if n_nodes == 1 else (1 if s.cpu == "amd" else 0)  # tuning.cc:269-271
    ll_max = K.LL_MAX_BW_GBPS[index1][index2]
    ch_tree, ch_ring_ll128, ch_tree_ll128 = _per_channel_caps(s, index2)
    ch_nvls_tree = K.PER_CH_MAX_NVLS_TREE_BW_GBPS[gen][index2]
    ppn = n_ranks / n_nodes
    ar = coll == "AllReduce"
    nsteps = 2 * (n_ranks - 1) if ar else n_ranks - 1  # tuning.cc:289-291
    out = {}
    for a in K.ALGORITHMS:
        if not ar and a not in ("Ring", "NVLS", "CollNetDirect"):  # tuning.cc:295-297
            continue
        g = gr.get(a)
        if g is None or not _enabled(s, coll, a):
            continue
        for pi, p in enumerate(K.PROTOCOLS):
            if a in ("NVLS", "NVLSTree") and p != "Simple":  # tuning.cc:301
                continue
            if a.startswith("CollNet") and p != "Simple":  # tuning.cc:338-339
                continue
            if p == "LL128" and not ll128_enabled(s.compcap, g.type_intra, g.type_inter):
                continue
            collnet = a.startswith("CollNet")
            bw = _graph_bw(s, a, g, collnet)
            if a in ("NVLS", "NVLSTree") and s.release.nvls_bw_least_of_graph:
                bw = _nvls_bw_2_27(s, a, g, ar)
            elif a in ("NVLS", "NVLSTree"):  # tuning.cc:307-323
                if g.n_channels < 2:
                    continue
                intra = g.bw_intra * K.NVLS_EFFICIENCY[gen] * (g.n_channels - 1) / g.n_channels
                intra *= 2.0 if ar else (ppn - 1) / ppn
                inter = g.bw_inter * (2 if n_nodes <= 2 and a == "NVLSTree" else 1)
                bw = min(intra, inter, ch_nvls_tree if a == "NVLSTree" else float("inf"))
            bus = g.n_channels * bw  # tuning.cc:324
            if a == "Ring" and p == "LL":  # tuning.cc:327-336
                bus = min(ll_max, bus * K.RING_LL_FACTOR)
            if a == "Ring" and p == "LL128":
                bus = min(bus * K.RING_LL128_FACTOR, g.n_channels * ch_ring_ll128)
            if a == "Tree" and ar:
                bus = min(bus * K.TREE_ALLREDUCE_FACTOR, g.n_channels * ch_tree)
            if a == "Tree" and p == "LL":
                bus = min(bus / K.TREE_LL_DIVISOR, ll_max)
            if a == "Tree" and p == "LL128":
                f = K.TREE_LL128_FACTOR_ONE_NODE if n_nodes == 1 else K.TREE_LL128_FACTOR_MULTI_NODE
                bus = min(bus * f, g.n_channels * ch_tree_ll128)
            if a == "Tree" and K.TOPO_PATTERNS[g.pattern] == K.TOPO_PATTERNS["TREE"]:
                bus *= K.TREE_PATTERN_FACTOR  # tuning.cc:336, comm->maxTreePattern
            if a == "CollNetDirect" or collnet and s.release.collnet_allreduce_from_reduce_scatter:
                bus = _collnet_bus(s, g, bus, ar)
            if not (a != "Ring" and not ar):  # tuning.cc:377-382
                bus *= _bus_to_algo(s, a, n_ranks / nsteps)
            if bus > 0:
                out[(a, p)] = Entry(bus, _latency(s, coll, a, pi, nsteps, g.type_intra))
    return out


def _per_channel_caps(s: System, index2: int) -> tuple[float, float, float]:
    """perChMaxTreeBw, perChMaxRingLL128Bw and perChMaxTreeLL128Bw (tuning.cc:186-203); NCCL
    2.27.7's Blackwell rows are twice Hopper's (its tuning.cc:176, 182, 188)."""
    gen = s.generation
    if gen == 3 and s.release.tables_of_2_27:
        return (K.BLACKWELL_PER_CH_MAX_TREE_BW_2_27[index2],
                K.BLACKWELL_PER_CH_MAX_RING_LL128_BW_2_27[index2],
                K.BLACKWELL_PER_CH_MAX_TREE_LL128_BW_2_27[index2])  # fmt: skip
    return (K.PER_CH_MAX_TREE_BW_GBPS[gen][index2],
            K.PER_CH_MAX_RING_LL128_BW_GBPS[gen][index2],
            K.PER_CH_MAX_TREE_LL128_BW_GBPS[gen][index2])  # fmt: skip


def _nvls_bw_2_27(s: System, a: str, g, ar: bool) -> float:
    """NCCL 2.27.7's per-channel NVLS bandwidth (its tuning.cc:267-275): the least of the NVLS
    graph's two figures for an all-reduce, min(bwIntra (ppn-1)/ppn, 0.9 bwInter) for a
    reduce-scatter or all-gather; NVLSTree's bwInter halved from three servers. No efficiency,
    no 2-channel floor, no per-channel cap: those came with 2.28.3."""
    if a == "NVLS" and ar:
        return min(g.bw_intra, g.bw_inter)
    if a == "NVLS":
        ppn = s.gpus / s.nodes
        return min(g.bw_intra * (ppn - 1) / ppn, g.bw_inter * K.NVLS_RSAG_NET_FACTOR_2_27)
    return min(g.bw_intra, g.bw_inter if s.nodes <= 2 else g.bw_inter / 2)


def _bus_to_algo(s: System, a: str, ring_ratio: float) -> float:
    """tuning.cc:377-382: bus to algorithm bandwidth, nRanks/nsteps for the ring and (from
    2.28.3) NVLS and NVLSTree, 5/6 for NVLS and NVLSTree before (2.27.7 tuning.cc:324), else
    0.5."""
    if a in ("NVLS", "NVLSTree") and s.release.nvls_bw_least_of_graph:
        return K.NVLS_ALLREDUCE_RATIO_2_27
    return ring_ratio if a in ("Ring", "NVLS", "NVLSTree") else 0.5


def _graph_bw(s: System, a: str, g, collnet: bool) -> float:
    """The graph's per-channel bandwidth a pair starts from: bwIntra up to two servers (and for
    CollNet), bwInter from three (tuning.cc:306); 2.31 takes the ring's bwInter from two servers
    (ring.cc:35-36) and the tree's least of the two (tree.cc:28)."""
    r = s.release
    if a == "Ring" and r.ring_inter_from_two_servers:
        return g.bw_inter if s.nodes > 1 else g.bw_intra
    if a == "Tree" and r.tree_least_of_intra_inter:
        return min(g.bw_inter, g.bw_intra)
    return g.bw_intra if s.nodes <= 2 or collnet else g.bw_inter


def _collnet_bus(s: System, g, bus: float, ar: bool) -> float:
    """CollNet's bus bandwidth (tuning.cc:340-350): reduce-scatter and all-gather move ppn x
    min(bwIntra, 0.9 bwInter); CollNetDirect's all-reduce is divided by (r + 1)/2 for r GPUs per
    head, x 0.85 from Hopper. In 2.31 both CollNets' all-reduce start from the reduce-scatter's
    figure, divided alike, without the 0.85 (collnet.cc:35-57, releases.py says why)."""
    ppn = s.gpus / s.nodes
    rs = ppn * min(g.bw_intra, g.bw_inter * K.COLLNET_RSAG_NET_FACTOR)
    if not ar:
        return rs
    new = s.release.collnet_allreduce_from_reduce_scatter
    factor = ppn / g.n_channels
    factor -= (factor - 1) / 2
    bus = (rs if new else bus) / factor
    if not new and s.compcap >= 90:
        bus *= K.COLLNET_DIRECT_HOPPER_FACTOR
    return bus


def ll128_enabled(compcap: int, type_intra: str = "NVL", type_inter: str = "PIX") -> bool:
    """NCCL's default for LL128 (tuning.cc:518-536, with NCCL_LL128_C2C=1): Hopper and newer
    up to PXN paths to the card, older GPUs only up to PXB; NVLink (or NVB) inside the server;
    compute capability 7.0 or more, each graph by its own path types (the search's on a preset;
    the closed form's NVLink inside and each card on its GPU's PCIe switch, PIX, elsewhere)."""
    rank = K.PATH_TYPES.index
    ok = rank(type_inter) <= rank("PXN" if compcap >= 90 else "PXB")
    return ok and rank(type_intra) <= rank("NVB") and compcap >= 70


def _enabled(s: System, coll: str, a: str) -> bool:
    """tuning.cc:498-512 and enqueue.cc:1998-2008: which algorithms run on this system."""
    multi = s.nodes > 1
    collnet = s.in_network_reduction and multi
    if a == "NVLSTree" and not multi:  # tuning.cc:502
        return False
    if a.startswith("NVLS") and s.release.nvls_from_three_gpus and s.gpus_per_node <= 2:
        return False  # nvlsSupport 0 (nvls.cc:160 at v2.27.7)
    if a.startswith("CollNet") and not collnet:  # tuning.cc:504-506, enqueue.cc:1999
        return False
    if a.startswith("CollNet") and s.gpus_per_node > K.NCCL_MAX_DIRECT_ARITY + 1:
        return False  # enqueue.cc:2000-2003
    if a.startswith("CollNet") and s.release.collnet_allreduce_from_reduce_scatter:
        return s.gpus_per_node <= collnet_heads(s)  # collnet.cc:75-83, for every collective
    if a == "NVLS" and multi and not collnet:  # tuning.cc:505, enqueue.cc:2008
        return False
    if a in ("NVLS", "CollNetDirect") and coll != "AllReduce" and multi:  # tuning.cc:353-374
        direct = "CollNetDirect" in graphs(s)  # every local GPU must be a head (line 368)
        return collnet and direct and s.gpus_per_node <= collnet_heads(s)
    return True


def _latency(s: System, coll: str, a: str, pi: int, nsteps: int, type_intra: str) -> float:
    """tuning.cc:384-435: base latency plus the hops each algorithm pays."""
    n_ranks, n_nodes = s.gpus, s.nodes
    ppn_int = n_ranks // n_nodes
    lat = K.BASE_LATENCY_US[a][pi]
    intra = K.HW_LATENCY_US["NVLink" if type_intra == "NVL" else "PCI"][a][pi]  # tuning.cc:285
    # tuning.cc:387-388: with one GPU per server, the tree's network latency; 2.31 each its own
    tree_net = ppn_int == 1 and s.release.one_gpu_net_latency_of_tree  # (ring.cc:52-53)
    inter = K.HW_LATENCY_US["Network"]["Tree" if tree_net else a][pi]
    if a == "NVLSTree" and not tree_net and s.release.tables_of_2_27:
        inter = K.NVLS_TREE_NET_LATENCY_2_27_US  # 2.27.7 tuning.cc:155 (Simple only)
    # graphs[a]->latencyInter (tuning.cc:389-391) is the card's latency, 0 for InfiniBand and
    # RoCE (src/transport/net_ib/init.cc:558, search.cc:745)
    if a == "Ring":  # all-reduce, reduce-scatter, all-gather branch (tuning.cc:403-412)
        overhead = 0.0
        if n_nodes > 1:
            overhead = K.NET_OVERHEAD_US[s.cpu] * (3 if K.PROTOCOLS[pi] == "Simple" else 1)
        intra = max(intra, overhead)  # tuning.cc:405-410
        inter_steps = (
            0 if n_nodes == 1 else (2 * (n_nodes - 1) if coll == "AllReduce" else n_nodes - 1)
        )
        return lat + (nsteps - inter_steps) * intra + inter_steps * inter
    if a == "Tree":
        return lat + (
            2 * ((ppn_int - 1) * intra + log2i(n_nodes) * inter) if coll == "AllReduce" else 0
        )
    if a == "CollNetDirect":
        return (
            lat
            + 2 * (min(1, ppn_int - 1) * intra + (ppn_int - 1) * K.COLLNET_ARITY_LATENCY_US)
            + inter
        )
    if a == "CollNetChain":
        return lat + 2 * (ppn_int - 1) * intra + inter
    if a == "NVLS":
        return intra + (inter if n_nodes > 1 else 0.0)  # tuning.cc:424-426 (replaces the base)
    return lat + intra + 2 * log2i(n_nodes) * inter  # NVLSTree, tuning.cc:427-428


def comm_channels(s: System) -> int:
    """comm->nChannels, which NCCL uses only for the ring's plateau test: min(tree, ring) channels
    (init.cc:1280), doubled up to MAXCHANNELS (connect.cc:460); x 1.5 with CollNet when the
    chain's bwIntra exceeds its bwInter and a server has more than one GPU (connect.cc:466-469);
    doubled again on Hopper and newer across servers while the ring's bwIntra > 45 GB/s and there
    are fewer than 16 (connect.cc:480-483)."""
    gr = graphs(s)
    ring = gr["Ring"]
    n = min(K.MAXCHANNELS, 2 * min(ring.n_channels, gr.get("Tree", ring).n_channels))
    chain = gr.get("CollNetChain")
    if chain and chain.bw_intra > chain.bw_inter and s.gpus > s.nodes:
        n = min(K.MAXCHANNELS, n + n // 2)
    hopper_net = s.compcap >= 90 and s.nodes > 1 and ring.bw_intra > K.HOPPER_DOUBLING_MIN_BW_GBPS
    if hopper_net and n < K.HOPPER_DOUBLING_MAX_CHANNELS:
        n *= 2
    return n


@lru_cache(maxsize=256)
def _plateau_bytes(s: System) -> int:
    """Sizes from which a multi-server ring's latency grows 1.4x (tuning.cc:647-650):
    nBytes / (comm->nChannels x nRanks) >= 64."""
    return K.RING_PLATEAU_MIN_BYTES_PER_CHANNEL_RANK * comm_channels(s) * s.gpus


def terms(s: System, coll: str, a: str, p: str, e: Entry, nbytes: int) -> tuple[float, float]:
    """ncclTopoGetAlgoTime's (latency us, bandwidth GB/s) for one call of nbytes
    (tuning.cc:630-655, numPipeOps = 1): the tree's size correction, the ring's plateau."""
    bw, lat = e.bw_GBps, e.latency_us
    if coll != "AllReduce":
        return lat, bw
    nvls_tree = a == "NVLSTree" and s.compcap >= 100 and not s.release.tables_of_2_27
    if a == "Tree" or nvls_tree:  # NVLSTree: x86 hosts, from 2.28 (2.27.7 tuning.cc:569: Tree)
        log_size = log2i(nbytes >> 6)
        top = K.TREE_CORRECTION_SIZES if a == "Tree" else K.NVLS_TREE_CORRECTION_SIZES
        if 0 <= log_size < top:
            bw *= K.TREE_CORRECTION_FACTOR[K.PROTOCOLS.index(p)][log_size]
    elif a == "Ring" and p == "Simple" and s.nodes > 1 and nbytes >= _plateau_bytes(s):
        lat *= K.RING_PLATEAU_FACTOR[0 if s.compcap < 80 else 1]
    return lat, bw


def size_breakpoints(s: System) -> list[int]:
    """The sizes in bytes at which terms() may change for an all-reduce, every other size
    giving the same (latency, bandwidth) as the one below it: each step of the tree's size
    correction (log2i(nbytes >> 6), tuning.cc:640-643) and the ring's plateau (tuning.cc:648).
    Between two of them every pair's time is affine in the size, so a crossing of two curves
    can be found exactly."""
    top = max(K.TREE_CORRECTION_SIZES, K.NVLS_TREE_CORRECTION_SIZES)
    return sorted({64 << k for k in range(top + 1)} | {_plateau_bytes(s)})


def algo_time_us(s: System, coll: str, a: str, p: str, nbytes: int) -> float | None:
    """NCCL's predicted time in us; None when NCCL has the pair disabled (it returns -1)."""
    e = tables(s, coll).get((a, p))
    if e is None:
        return None
    lat, bw = terms(s, coll, a, p, e, nbytes)
    return lat + nbytes / (1000 * bw)
