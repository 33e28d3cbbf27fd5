"""The channels and per-channel bandwidths NCCL's topology search finds: the graphs tuning reads.

NCCL does not take a link rate from a table: `ncclTopoCompute` (src/graph/search.cc:1074-1310)
tries per-channel bandwidths from a speed array, highest first, and keeps the graph with the most
channels x bandwidth that its links can carry. `graphs` answers with one path:

- on a server the calculator offers as a DGX preset (its GPU, 8 GPUs, 8 cards at the preset's
  card rate: topology/presets/*.xml), the ring, tree and NVLS graphs are the port of the search
  itself (topology/), run once per preset and shipped (topology/searched.py), with their path
  types, which the tuning reads for LL128 and the intra-server latency (tuning.cc:285, 518-536);
- elsewhere (other cards, fewer GPUs or cards per server), where no topology file exists, and
  for the CollNet graphs, which the port does not search, the closed form below replays the
  search for the servers the site discusses: every GPU joined to an NVSwitch by `links` NVLinks,
  `nics_per_node` cards, each next to a GPU (the HGX/DGX layout).

The two agree on every preset's ring, tree and NVLS, one server and several
(tests/core/topology/test_closed_form.py), but one: the tree on one DGX B200 server, 16 channels
of 45 GB/s from the search where the closed form finds 16 of 50. The closed form counts each
GPU's NVLinks as shared by all 16 channels' chains, every GPU but one sending per channel
(totalBw x 8/7, search.cc:1167-1168: 16 x 50 = 800 <= 18 x 40.1 x 8/7); the search's second
pass (search.cc:1254-1287) keeps the first pass's sameChannels, every channel the same chain, so
the same seven GPUs send on all 16 and 16 x 50 exceeds their 721.8 GB/s: it stays at 45.
The search is NCCL's answer, so the model takes it.

Both agree with the graphs NCCL prints under NCCL_DEBUG=INFO (NVIDIA/nccl#1197, 8 x H100: ring
12 x 30, tree 12 x 30, NVLS 8 x 40/60 GB/s; NVIDIA/nccl-tests#100, 8 x A100: 24 ring channels
after NCCL's doubling, i.e. 12 in the graph), which the tests check.

The closed form's tree graph keeps the pattern NCCL's search ends with, since tuning.cc:336 takes
15 % off the tree's bandwidth when comm->maxTreePattern (the largest over the ranks, init.cc:1447;
all ranks alike here) is the plain TREE. init.cc:1183 asks for BALANCED_TREE, which sends half the
network traffic of a channel through a second GPU that must reach the same card
(search.cc:614-617, 657-664); `tree_pattern` says, case by case and citing the lines, which one
the search returns. The CollNet graphs are searched as NCCL does: CollNetChain is a TREE-pattern
graph with the ring's channels (init.cc:1189-1195), CollNetDirect has one channel per head, a card
with a local GPU (search.cc:754-773), and pass 2 raises both graphs' bwIntra up to twice bwInter
(search.cc:1279-1282), the figure tuning.cc:306 uses for CollNet.

The closed form's simplifications, said here because the source wins: paths are taken as GPU -
PCIe switch - card (NCCL's PIX), so LL128 is enabled as on HGX/DGX servers; the balanced tree's
halving of the network bandwidth per GPU (search.cc:663) is not counted, as it takes the same
bandwidth from the card as the plain tree; a card's PCIe generation is taken from its speed
(ConnectX-6 200 Gb/s: Gen4, ConnectX-7 400 Gb/s: Gen5, ConnectX-8 800 Gb/s: Gen6); the system's
`cpu` (a tuning setting) does not reach it, nor the preset's search, which reads the DGX's own
CPUs. Not modelled: PAT (reduce-scatter and all-gather with one GPU per server), NCCL's
symmetric-memory kernels (registered buffers only), NCCL_GRAPH_FILE, and the search's time budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from ..catalog import hardware
from ..errors import ParamError
from ..topology import searched
from . import constants as K
from .releases import DEFAULT, Release, release

NIC_GBPS = (1.0, 3200.0)  # the card rates (Gb/s) the model is asked about: 1 Gb/s to 3.2 Tb/s

# Facts about each GPU that NCCL's topology reads: CUDA compute capability (CUDA C Programming
# Guide, "Compute Capabilities": A100 8.0, H100/H200 9.0, B200 10.0), NVLinks per GPU and the
# GPU's own PCIe generation (NVIDIA datasheets: A100 SXM 12 NVLink 3 links, PCIe Gen4; H100 SXM
# and H200 SXM 18 NVLink 4 links, PCIe Gen5; B200 18 NVLink 5 links, PCIe Gen6).
GPU_SPECS = {
    "A100 SXM": (80, 12, 4),
    "H100 SXM": (90, 18, 5),
    "H200 SXM": (90, 18, 5),
    "B200": (100, 18, 6),
}


def nvlink_bw_GBps(compcap: int) -> float:
    """ncclTopoNVLinkBw (topo.h:274-282): effective GB/s of one NVLink by compute capability."""
    if compcap == 86:
        return K.NVLINK_BW_GBPS[86]
    for cc in (100, 90, 80, 70, 60):
        if compcap >= cc:
            return K.NVLINK_BW_GBPS[cc]
    return K.NVLINK_BW_GBPS[80]


def pci_bw_GBps(gen: int, width: int = 16) -> float:
    """topo.cc:657: width x per-lane speed (kvDictPciGen, 100 Mb/s units) / 80."""
    return width * K.PCI_GEN_SPEED[gen] / K.PCI_BW_DIVISOR


def nic_pci_gen(nic_Gbps: float) -> int:
    return 4 if nic_Gbps <= 200 else 5 if nic_Gbps <= 400 else 6


@dataclass(frozen=True)
class System:
    """A cluster as NCCL sees it: `gpus` GPUs in servers of `gpus_per_node`, each server with
    `nics_per_node` cards of `nic_Gbps`; `in_network_reduction` is NCCL_COLLNET_ENABLE with a
    network that reduces (InfiniBand SHARP); `cpu` ("intel" or "amd") sets NCCL's per-step
    network overhead and LL limit across servers; `nccl_version` the ported release whose model
    answers (releases.py)."""

    gpu: str = hardware.H100_SXM.name
    gpus: int = 8
    gpus_per_node: int = 8
    nics_per_node: int = 8
    nic_Gbps: float = 400.0
    in_network_reduction: bool = False
    cpu: str = "intel"
    nccl_version: str = DEFAULT.version

    def __post_init__(self):
        gpu = hardware.find(hardware.GPUS, self.gpu, "gpu").name
        if gpu not in GPU_SPECS:
            raise ParamError(
                "gpu", f"NCCL runs on NVIDIA GPUs: choose one of {', '.join(GPU_SPECS)}"
            )
        object.__setattr__(self, "gpu", gpu)
        for field in ("gpus", "gpus_per_node", "nics_per_node"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ParamError(field, f"must be a whole number >= 1, got {v!r}")
        if self.gpus < 2:
            raise ParamError("gpus", "an all-reduce needs at least 2 GPUs")
        if self.gpus_per_node > 8:
            raise ParamError("gpus_per_node", "at most 8 (an HGX/DGX server)")
        if self.gpus % self.gpus_per_node:
            raise ParamError(
                "gpus", f"{self.gpus} is not a multiple of {self.gpus_per_node} per server"
            )
        if not isinstance(self.in_network_reduction, bool):
            raise ParamError("in_network_reduction", "must be true or false")
        nic = self.nic_Gbps
        lo, hi = NIC_GBPS
        if isinstance(nic, bool) or not isinstance(nic, (int, float)) or not lo <= nic <= hi:
            raise ParamError("nic_gbps", f"must be {lo:g}-{hi:g} Gb/s, got {self.nic_Gbps!r}")
        if not isinstance(self.cpu, str) or self.cpu not in K.NET_OVERHEAD_US:
            cpus = " or ".join(K.NET_OVERHEAD_US)
            raise ParamError("cpu", f"the host CPU NCCL tunes for: {cpus}, got {self.cpu!r}")
        release(self.nccl_version)

    @property
    def release(self) -> Release:
        return release(self.nccl_version)

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node

    @property
    def compcap(self) -> int:
        return GPU_SPECS[self.gpu][0]

    @property
    def generation(self) -> int:
        """compCapIndex (tuning.cc:263-266): 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell."""
        cc = self.compcap
        return 3 if cc >= 100 else 2 if cc >= 90 else 1 if cc >= 80 else 0

    @property
    def total_bw_GBps(self) -> float:
        """system->totalBw (search.cc:30-38): the sum of a GPU's NVLinks to the NVSwitch."""
        return GPU_SPECS[self.gpu][1] * nvlink_bw_GBps(self.compcap)

    @property
    def net_path_bw_GBps(self) -> float:
        """system->maxBw across servers (search.cc:20-28): the slowest hop GPU - PCIe - card."""
        gpu_pci = pci_bw_GBps(GPU_SPECS[self.gpu][2])
        nic_pci = pci_bw_GBps(nic_pci_gen(self.nic_Gbps))
        return min(gpu_pci, nic_pci, self.nic_Gbps * 1000 / K.NET_MBPS_PER_GBPS)


@dataclass(frozen=True)
class Graph:
    """One ncclTopoGraph: channels, GB/s per channel inside (bw_intra) and across servers, the
    pattern it was found with (a key of constants.TOPO_PATTERNS) and its path types."""

    n_channels: int
    bw_intra: float
    bw_inter: float
    pattern: str
    type_intra: str = "NVL"  # the path types of its hops inside and across servers (PATH_TYPES)
    type_inter: str = "PIX"


def _speeds(s: System, inter: bool) -> tuple:
    cc = s.compcap
    if cc >= 100 and s.release.tables_of_2_27:  # NCCL 2.27.7's arrays (releases.py)
        return K.SM100_SPEED_ARRAY_INTER_2_27 if inter else K.SM100_SPEED_ARRAY_INTRA_2_27
    if cc >= 100:
        return K.SM100_SPEED_ARRAY_INTER if inter else K.SM100_SPEED_ARRAY_INTRA
    if cc >= 90:
        return K.SM90_SPEED_ARRAY_INTER if inter else K.SM90_SPEED_ARRAY_INTRA
    return K.SPEED_ARRAY_INTER if inter else K.SPEED_ARRAY_INTRA


def _fits(capacity: float, bw: float) -> int:
    """How many channels of `bw` a link of `capacity` carries (NCCL subtracts, rounded to 1e-3)."""
    return int(math.floor(capacity / bw + 1e-6))


def _nvlink_channels(s: System, bw: float) -> int:
    """Channels whose chain inside a server fits the NVLinks: each GPU but one sends per channel,
    spread over the server's GPUs (search.cc:1168 makes the same allowance)."""
    g = s.gpus_per_node
    return 10**6 if g == 1 else _fits(s.total_bw_GBps * g / (g - 1), bw)


def _capacity(s: System, bw: float, ring: bool) -> int:
    """Channels of `bw` the links carry: on one server a ring channel takes `bw` from every GPU's
    NVLinks; across servers each card carries whole channels (in and out)."""
    if s.nodes == 1:
        return _fits(s.total_bw_GBps, bw) if ring else _nvlink_channels(s, bw)
    cards = s.nics_per_node * _fits(s.net_path_bw_GBps, bw)
    return min(cards, _nvlink_channels(s, bw))


def _search(s: System, capacity, min_channels: int, max_channels: int, start_total: float):
    """Pass 1 of ncclTopoCompute (search.cc:1164-1252): from the first speed the links allow,
    keep the most channels x bandwidth; stop when it reaches totalBw (line 1198) or when the
    next speed falls to 0.49 of the best found (line 1245)."""
    speeds = _speeds(s, s.nodes > 1)
    max_bw = s.net_path_bw_GBps if s.nodes > 1 else s.total_bw_GBps
    i = 0
    while i < len(speeds) - 1 and (speeds[i] > max_bw or speeds[i] * min_channels > start_total):
        i += 1
    best = None
    for bw in speeds[i:]:
        if best and bw / best[1] <= K.SEARCH_SPEED_RATIO:
            break
        n = min(max_channels, capacity(bw))
        if n >= min_channels and (best is None or n * bw > best[0] * best[1]):
            best = (n, bw)
            if n * bw >= s.total_bw_GBps:
                break
    return best


def _dup(s: System, n: int, bw: float, max_channels: int) -> tuple[int, float]:
    """ncclTopoDupChannels (search.cc:1036-1049): double the channels at half the bandwidth."""
    if bw < K.DUP_MIN_BW_GBPS:
        return n, bw
    if s.compcap > 80 and bw < K.DUP_SM90_MIN_BW_GBPS and n > K.DUP_SM90_MAX_CHANNELS:
        return n, bw
    dup = min(2 * n, max_channels)
    return dup, bw / math.ceil(dup / n)


def _step_up(speeds: tuple, bw: float, ok, below: float = math.inf) -> float:
    """Pass 2 (search.cc:1267-1284): step up the speed array while the value is below `below`
    and the links still carry the next speed. A value between two speeds (a tree whose bandwidth
    came from another array, one GPU per server) steps up from the next speed below it."""
    i = next((k for k, v in enumerate(speeds) if v <= bw), len(speeds))
    while i > 0 and bw < below and ok(speeds[i - 1]):
        i -= 1
        bw = speeds[i]
    return bw


SEARCHED = {"ring": ("Ring",), "tree": ("Tree",), "nvls": ("NVLS", "NVLSTree")}


@lru_cache(maxsize=256)
def graphs(s: System) -> dict[str, Graph]:
    """The graphs of init.cc:1172-1217 for this system; an algorithm without one is absent.
    The search's own on a preset's server, the closed form's elsewhere and for CollNet."""
    closed = closed_form(s)
    found = searched.find(s.gpu, s.gpus_per_node, s.nics_per_node, s.nic_Gbps, s.nodes)
    if found is None:
        return closed
    out = {a: g for a, g in closed.items() if a.startswith("CollNet")}
    for key, names in SEARCHED.items():
        for a in names:
            if found[key]:
                out[a] = Graph(**found[key])
    order = ("Ring", "Tree", "CollNetChain", "CollNetDirect", "NVLS", "NVLSTree")
    return {a: out[a] for a in order if a in out}


@lru_cache(maxsize=256)
def closed_form(s: System) -> dict[str, Graph]:
    """The closed form's graphs (the module's docstring says where it stands in for the search)."""
    multi = s.nodes > 1
    ring_max = K.MAXCHANNELS // 2  # init.cc:1177
    found = _search(s, lambda b: _capacity(s, b, True), 1, ring_max, s.total_bw_GBps)
    if found is None:
        raise ParamError("nic_gbps", "NCCL's search finds no ring for this network")
    n, bw = _dup(s, *found, ring_max)
    speeds = _speeds(s, multi)
    bw = _step_up(speeds, bw, lambda b: min(ring_max, _capacity(s, b, True)) >= n)
    out = {"Ring": Graph(n, bw, bw, "RING")}
    tree = _tree(s, n, speeds)
    if tree:
        out["Tree"] = replace(tree, pattern=_closed_tree_pattern(s))
    if tree and s.in_network_reduction and multi:  # init.cc:1189-1207; none without a chain (1452)
        out["CollNetChain"] = tree  # a TREE-pattern graph with the ring's channels (1191-1194)
        direct = _collnet_direct(s, speeds)
        if direct:
            out["CollNetDirect"] = direct
    nvls = _nvls(s, speeds)
    if nvls:
        out["NVLS"] = out["NVLSTree"] = nvls
    return out


def _tree(s: System, n: int, speeds: tuple) -> Graph | None:
    """A tree graph with exactly the ring's `n` channels (init.cc:1184-1185, 1193-1194); pass 2
    raises bwIntra up to twice bwInter (search.cc:1279-1282). The balanced and the plain pattern
    take the same bandwidth from each card, so they find the same channels here."""
    g = s.gpus_per_node
    total = s.total_bw_GBps * (g / (g - 1) if g > 1 else 1)  # search.cc:1168
    found = _search(s, lambda b: min(n, _capacity(s, b, False)), n, n, total)
    if found is None:
        return None
    tn, tbw = found
    intra = _step_up(speeds, tbw, lambda b: _nvlink_channels(s, b) >= tn, 2 * tbw)
    return Graph(tn, intra, tbw, "TREE")


def tree_pattern(s: System) -> str:
    """The pattern NCCL's tree search returns (the tree graph's): the search's on a preset."""
    tree = graphs(s).get("Tree")
    return tree.pattern if tree else _closed_tree_pattern(s)


def _closed_tree_pattern(s: System) -> str:
    """The closed form's tree pattern. init.cc:1183 asks for BALANCED_TREE; then:
    - one GPU per server: TREE, forced by search.cc:1133;
    - one server: BALANCED_TREE; the GPUs chain over NVLink with no card to return to, and the
      TREE retry of search.cc:1215-1219 only replaces a graph it beats (search.cc:457-466), which
      the same chains cannot (NVIDIA/nccl#1197 prints "Pattern 1" on 8 x H100);
    - a card of its own per GPU, across servers, Hopper or newer: TREE. BALANCED_TREE needs a
      second GPU to reach the first GPU's card (search.cc:614-617, 657-664); at PIX none can.
      The widest type these servers have is PXN (paths.cc:817-841 routes a GPU to another GPU's
      card through that GPU, in that direction only; paths.cc:1043-1055 takes the widest), and
      there the card's path back to the second GPU still crosses the CPU, which trees refuse
      (search.cc:150-154). So the TREE retry (search.cc:1215-1219), tried before any wider type
      (1222-1233), is the search that finds channels (8 x H100: 8 x 48 = 384 >= totalBw 370.8
      ends it, search.cc:1198);
    - Ampere (no TREE retry): BALANCED_TREE, found once typeInter widens (maxTypeInter = SYS,
      search.cc:1099-1100) to the second GPU's path to the card: PXB on DGX A100, where two GPUs
      and two cards share a PCIe switch complex, so LL128 stays on (tuning.cc:524-525);
    - fewer cards than GPUs: BALANCED_TREE at PIX, two GPUs sharing the card's switch."""
    if s.gpus_per_node == 1:
        return "TREE"
    if s.nodes > 1 and s.nics_per_node >= s.gpus_per_node and s.compcap >= 90:
        return "TREE"
    return "BALANCED_TREE"


def collnet_heads(s: System) -> int:
    """CollNetDirect's heads (comm->collNetHeadsNum): one per card with a local GPU, each GPU
    once (search.cc:754-773), at most NCCL_MAX_DIRECT_ARITY + 1 (search.cc:1129-1131)."""
    return min(s.nics_per_node, s.gpus_per_node, K.NCCL_MAX_DIRECT_ARITY + 1)


def _direct_fits(s: System, channels: int, bw: float) -> bool:
    """Whether the NVLinks carry `channels` CollNetDirect channels of `bw`: a head sends bw/(g-1)
    to each other GPU and each GPU bw/(g-1) to every other channel's head (search.cc:373-395)."""
    g = s.gpus_per_node
    return g == 1 or bw * (1 + (channels - 1) / (g - 1)) <= s.total_bw_GBps + 1e-6


def _collnet_direct(s: System, speeds: tuple) -> Graph | None:
    """The CollNetDirect graph: a channel per head, each entering and leaving by the head's card
    at the first speed the path allows; duplicated as any graph (search.cc:1258); pass 2 raises
    bwIntra while a search can still find the channels, which a duplicated graph (more channels
    than heads, search.cc:756) cannot. One GPU per server searches the TREE pattern (1133)."""
    g, heads = s.gpus_per_node, collnet_heads(s)
    max_ch = min(K.NCCL_MAX_DIRECT_ARITY + 1, g)  # search.cc:1129-1131
    total = s.total_bw_GBps * (g / (g - 1) if g > 1 else 1)  # search.cc:1168

    def capacity(b: float) -> int:
        return heads if _fits(s.net_path_bw_GBps, b) >= 1 and _direct_fits(s, heads, b) else 0

    found = _search(s, capacity, 1, max_ch, total)
    if found is None:
        return None
    n, bw = _dup(s, *found, max_ch)
    intra = _step_up(speeds, bw, lambda b: n <= heads and _direct_fits(s, n, b), 2 * bw)
    return Graph(n, intra, bw, "TREE" if g == 1 else "COLLNET_DIRECT")


def _nvls(s: System, speeds: tuple) -> Graph | None:
    """The NVLS graph (search.cc:410-443, 1124-1138, 1274-1278), Hopper or newer on NVSwitch.
    Each channel's head GPU carries it twice, every other GPU once, in both directions; pass 2
    raises bwInter while it is below twice bwIntra."""
    g, total = s.gpus_per_node, s.total_bw_GBps
    if s.compcap < 90 or g < 2:  # search.cc:1124
        return None
    max_ch = min(K.NCCL_MAX_NVLS_ARITY, g)
    if s.nodes == 1:  # every GPU a head: min = max channels (search.cc:1135-1138)
        fit = [b for b in speeds if b * max_ch <= total * g / (g - 1) and (g + 1) * b <= total]
        if not fit:
            return None
        return Graph(max_ch, fit[0], _step_up(speeds, fit[0], lambda b: True, 2 * fit[0]), "NVLS")
    path = s.net_path_bw_GBps
    best = None
    for b in speeds:  # more channels first, then channels x bandwidth (search.cc:450-455)
        if b > path:
            continue
        if best and b / best[1] <= K.SEARCH_SPEED_RATIO:
            break
        n = min(max_ch, _fits(total, b) - 1, s.nics_per_node * _fits(path, b))
        if n >= 1 and (best is None or n > best[0] or n * b > best[0] * best[1]):
            best = (n, b)
    if best is None:
        return None
    n, intra = best
    per_card = math.ceil(n / s.nics_per_node)
    inter = _step_up(speeds, intra, lambda b: per_card * b <= path, 2 * intra)
    return Graph(n, intra, inter, "NVLS")
