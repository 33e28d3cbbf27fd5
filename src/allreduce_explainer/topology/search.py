"""NCCL's channel search on one server: ncclTopoCompute (src/graph/search.cc).

A graph is a pattern (ring, balanced/split/plain tree, NVLS) and a set of channels; each channel
lists the server's GPUs in the order the pattern visits them and, across servers, the NET it
enters by and the NET it leaves by. The search books a bandwidth on every link a channel uses
(search.cc:81-172) and adds channels until the links are full or it has `maxChannels`; it starts
at the highest speed of a per-architecture array that the system's best path and total NVLink
bandwidth allow (search.cc:1051-1067, 1164-1174), first asking every channel to be the same
(sameChannels), then allowing different ones, wider path types, NIC crossing, and lower speeds
(search.cc:1200-1252); with a solution it doubles the channels when each is fast
(ncclTopoDupChannels, search.cc:1036-1049) and tries higher speeds again (search.cc:1254-1287).

What decides the answer: the search has no random element and no clock. Its time limits are
step counts (NCCL_SEARCH_TIMEOUT 2^14 recursion steps per try, 2^8 with sameChannels, 2^19 in
all, search.cc:332-335), so the same topology gives the same channels every run. It depends on
more than the shape of the server in one way: the order of the GPUs and NICs in the file (PCI
order, which the first try follows, search.cc:782-787, 862-865) and each GPU's device number
(which card it prefers, topo.cc:2066-2073).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field, replace
from operator import attrgetter

from . import paths as P
from .system import (
    ARCH_POWER,
    ARCH_X86,
    CPU,
    DEV,
    GPU,
    LINK_NVL,
    LINK_PCI,
    MAXCHANNELS,
    NET,
    NVS,
    PATH_DIS,
    PATH_LOC,
    PATH_PHB,
    PATH_PIX,
    PATH_PXN,
    PATH_SYS,
    VENDOR_AMD,
    VENDOR_INTEL,
    Node,
    Path,
    System,
    f32,
)

# Patterns (src/include/graph.h:160-169)
BALANCED_TREE, SPLIT_TREE, TREE, RING, NVLS, COLLNET_DIRECT = 1, 2, 3, 4, 5, 6
PATTERN = {
    1: "BALANCED_TREE",
    2: "SPLIT_TREE",
    3: "TREE",
    4: "RING",
    5: "NVLS",
    6: "COLLNET_DIRECT",
}
TREES = (BALANCED_TREE, TREE, SPLIT_TREE)

CROSS_NIC = 2  # NCCL_CROSS_NIC's default (search.cc:16)
MAX_NVLS_ARITY = 32  # src/include/device.h:213

# Search budgets in recursion steps, not time (search.cc:332-335)
GLOBAL_TIMEOUT = 1 << 19
TIMEOUT = 1 << 14
TIMEOUT_TREE = 1 << 14
TIMEOUT_SAMECHANNELS = 1 << 8
FORCED_ORDER_PCI, FORCED_ORDER_REPLAY = 1, 2

# Speeds the search tries, GB/s per channel (search.cc:1051-1067), as C floats
SPEED_INTRA = [f32(x) for x in (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0,
                                4.0, 3.0)]  # fmt: skip
SPEED_INTER = [f32(x) for x in (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0,
                                6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12)]  # fmt: skip
SM90_SPEED_INTRA = [f32(x) for x in (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0,
                                     3.0)]  # fmt: skip
SM90_SPEED_INTER = [f32(x) for x in (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0,
                                     12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12)]  # fmt: skip
SM100_SPEED_INTRA = [f32(x) for x in (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0,
                                      19.0, 18.0)]  # fmt: skip
SM100_SPEED_INTER = [f32(x) for x in (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                      20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
                                      0.12)]  # fmt: skip


def speed_array(cc: int, inter: bool) -> list[float]:
    """search.cc:1153-1161."""
    if inter:
        return SM100_SPEED_INTER if cc >= 100 else SM90_SPEED_INTER if cc >= 90 else SPEED_INTER
    return SM100_SPEED_INTRA if cc >= 100 else SM90_SPEED_INTRA if cc >= 90 else SPEED_INTRA


@dataclass
class Graph:
    """ncclTopoGraph (src/include/graph.h:170-189): intra holds each channel's GPU ranks,
    inter each channel's NET ids in and out."""

    id: int
    pattern: int
    min_channels: int
    max_channels: int
    n_channels: int = 0
    bw_intra: float = 0.0
    bw_inter: float = 0.0
    latency_inter: float = 0.0
    type_intra: int = PATH_LOC
    type_inter: int = PATH_PIX
    same_channels: int = 0
    cross_nic: int = 0
    n_hops: int = 0
    intra: list[int] = field(default_factory=list)
    inter: list[int] = field(default_factory=list)
    # (channels, bw intra, bw inter) as the search found them, before ncclTopoDupChannels
    # doubled them; () when it did not (for the reasons told to the reader, topology/explain.py)
    found: tuple = ()

    def copy(self) -> Graph:
        return replace(self, intra=list(self.intra), inter=list(self.inter))

    def load(self, other: Graph) -> None:
        """memcpy(graph, other)."""
        self.__dict__.update(other.copy().__dict__)


_PACK, _UNPACK = struct.Struct("f").pack, struct.Struct("f").unpack


def sub_round(a: float, b: float) -> float:
    """SUB_ROUND (search.cc:79): a - b kept to three decimals, in float (roundf rounds half
    away from zero); f32 inlined, this runs a million times in a search."""
    x = _UNPACK(_PACK(_UNPACK(_PACK(a - b))[0] * 1000))[0]
    r = math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)
    return _UNPACK(_PACK(r / 1000))[0]


def _rev_link(n1: Node, n2: Node, type_: int):
    """findRevLink (search.cc:65-76)."""
    return next(lk for lk in n2.links if lk.rem is n1 and lk.type == type_)


_BW = attrgetter("bw")
_F32_MULT: dict[float, dict[float, float]] = {}  # f32(bw * mult) by mult, then bw
# sub_round's answers, a pure function of two floats: by the bandwidth booked, then the one left
_SUB: dict[float, dict[float, float]] = {}


def _plan(path: Path, start: Node) -> tuple:
    """What followPath reads of a path that the search never changes (its links, which are PCI,
    whether P2P pays the Intel overhead, whether a link books bandwidth backwards too): found
    once per path, since a path always starts at the same node."""
    intel = path.type == PATH_PHB and any(
        lk.rem.type == CPU and lk.rem.arch == ARCH_X86 and lk.rem.vendor == VENDOR_INTEL
        for lk in path.links
    )
    from_gpu = start.type == GPU
    backwards = any(
        (lk.rem.type == DEV and lk.rem.sm < 80 and not from_gpu)
        or (lk.rem.type == CPU and lk.rem.arch == ARCH_POWER and lk.type == LINK_NVL)
        for lk in path.links
    )
    pci = tuple(lk.type == LINK_PCI for lk in path.links)
    return intel and from_gpu, backwards, tuple(path.links), pci, start


def _subs(fw: float) -> dict[float, float]:
    """sub_round(left, fw) by left, for one fw."""
    out = _SUB.get(fw)
    if out is None:
        out = _SUB[fw] = {}
    return out


def follow(plan: tuple, max_steps: int, bw: float) -> int:
    """followPath (search.cc:81-123): book bw on the path's first max_steps links; the step at
    which a link has too little left, or max_steps. Through an Intel CPU a GPU's P2P costs 6/5
    of its bandwidth on PCI links (topo.h:39)."""
    intel, backwards, links, pci, start = plan
    pci_bw = f32(f32(bw * 6) / 5) if intel else bw
    if backwards:
        return _follow_backwards(links, start, max_steps, bw, pci_bw)
    sub_bw = _subs(bw)
    sub_pci = _subs(pci_bw) if intel else sub_bw
    for step in range(max_steps):
        link = links[step]
        if pci[step]:
            fw, sub = pci_bw, sub_pci
        else:
            fw, sub = bw, sub_bw
        left = link.bw
        if left < fw:
            return step
        r = sub.get(left)
        if r is None:
            r = sub[left] = sub_round(left, fw)
        link.bw = r
    return max_steps


def _follow_backwards(links, start: Node, max_steps: int, bw: float, pci_bw: float) -> int:
    """followPath's loop where a link also books bandwidth on its reverse (a pre-Ampere GPU
    reached from a non-GPU, a POWER CPU's NVLink; search.cc:95-110)."""
    node, from_gpu = start, start.type == GPU
    for step in range(max_steps):
        link = links[step]
        rem = link.rem
        fw = pci_bw if link.type == LINK_PCI else bw
        rev, rev_bw = None, 0.0
        if rem.type == DEV and rem.sm < 80 and not from_gpu:
            rev = _rev_link(node, rem, link.type)
            rev_bw += f32(fw / 8)
        if rem.type == CPU and rem.arch == ARCH_POWER and link.type == LINK_NVL:
            rev = _rev_link(node, rem, link.type)
            rev_bw += fw
        if link.bw < fw or (rev_bw and rev.bw < rev_bw):
            return step
        link.bw = sub_round(link.bw, fw)
        if rev_bw:
            rev.bw = sub_round(rev.bw, rev_bw)
        node = rem
    return max_steps


def _bookable(s: System) -> list:
    """The links whose bandwidth a search can book: those of the paths it follows (between
    GPUs, the NVSwitch and, across servers, the cards; search.cc:127-172) and their reverses
    (followPath's backwards booking, search.cc:95-110); the others never change."""
    ends = (GPU, NET, NVS) if s.inter else (GPU, NVS)
    on_path = {
        id(lk)
        for t1 in ends
        for a in s.nodes[t1]
        for t2 in ends
        for p in a.paths.get(t2, [])
        for lk in p.links
    }
    out = []
    for nodes in s.nodes:
        for node in nodes:
            for lk in node.links:
                back = (id(r) in on_path for r in lk.rem.links if r.rem is node)
                if id(lk) in on_path or any(back):
                    out.append(lk)
    return out


@dataclass
class Timer:
    """The search's budget in steps; -1 once a perfect solution is found."""

    left: int


class Search:
    """One system's search state: the recursion of search.cc:253-881."""

    def __init__(self, s: System):
        self.s = s
        self.ngpus = len(s.gpus)
        self.where = {id(gpu): k for k, gpu in enumerate(s.gpus)}
        self.static: dict[tuple, list[tuple]] = {}
        # follow_path's hops by type from, type to, index from, index to (see _hop)
        self.hops: list[list[list | None]] = [[None] * len(s.nodes) for _ in s.nodes]
        # every bandwidth the search books, read and restored as one state (see rec)
        self.links = _bookable(s)
        self.done: dict[tuple, tuple] = {}
        # each try's remembered searches (see try_memo), by the try's constraints
        self.memos: dict[tuple, tuple[int, dict]] = {}
        self.version = 0
        self.ties = 0  # how many times better() met a graph as good as the saved one
        self.try_key: tuple | None = None  # this try's key in memos, and its crossNic
        # the types of every path the search follows or picks a card by (see admitted)
        ends = (GPU, NET, NVS)
        self.path_types = sorted(
            {p.type for t1 in ends for a in s.nodes[t1] for t2 in ends for p in a.paths.get(t2, [])}
        )
        self.ranks = {g.rank: k for k, g in reversed(list(enumerate(s.gpus)))}
        self.net_pos = {n.id: k for k, n in reversed(list(enumerate(s.nets)))}
        self.nets = s.nets
        self.booked_nets = s.nets if s.inter else []  # only rec_net books a card
        self.nvs = bool(s.nodes[NVS])
        # same_port per NET (rec_net): the cards on its ASIC and port
        self.same_port = [
            [x for x in s.nets if x.asic == n.asic and x.port == n.port] for n in s.nets
        ]

    # -- moving along paths ------------------------------------------------------------
    def follow_path(self, g: Graph, t1: int, i1: int, t2: int, i2: int, mult: int):
        """ncclTopoFollowPath (search.cc:127-172): the node reached, or None."""
        if t1 == -1:
            return self.s.nodes[t2][i2]
        table = self.hops[t1][t2]
        if table is None:
            table = self.hops[t1][t2] = [[None] * len(self.s.nodes[t2]) for _ in self.s.nodes[t1]]
        hop = table[i1][i2]
        if hop is None:
            hop = table[i1][i2] = self._hop(t1, i1, t2, i2)
        node2, path_type, rev_type, intra, count, plan, plain = hop
        if intra:
            type_, bw = g.type_intra, g.bw_intra
        else:
            type_, bw = g.type_inter, g.bw_inter
        if path_type >= PATH_DIS:
            return None
        if mult == 1 and (path_type > type_ or (g.pattern in TREES and rev_type > type_)):
            return None
        by_bw = _F32_MULT.get(mult)
        if by_bw is None:
            by_bw = _F32_MULT[mult] = {}
        scaled = by_bw.get(bw)
        if scaled is None:
            scaled = by_bw[bw] = f32(bw * mult)
        if plain is None:  # the Intel overhead, or bandwidth booked backwards
            step = follow(plan, count, scaled)
        else:  # follow's loop, inlined: every link books `scaled`
            sub = _SUB.get(scaled)
            if sub is None:
                sub = _SUB[scaled] = {}
            step = 0
            for link in plain:
                left = link.bw
                if left < scaled:
                    break
                r = sub.get(left)
                if r is None:
                    r = sub[left] = sub_round(left, scaled)
                link.bw = r
                step += 1
        if step < count:
            follow(plan, step, -scaled)
            return None
        g.n_hops += mult * count  # an int: mult is
        return node2

    def _hop(self, t1: int, i1: int, t2: int, i2: int) -> tuple:
        """What follow_path reads that the search never changes: the node reached, the path's
        type each way, whether it is intra-server, its length, its plan for follow, and its
        links where each books the same bandwidth (None where follow must look closer)."""
        node1, node2 = self.s.nodes[t1][i1], self.s.nodes[t2][i2]
        path = node1.paths[t2][i2]
        intra = t1 in (GPU, NVS) and t2 in (GPU, NVS)
        rev_type = node2.paths[t1][i1].type
        plan = _plan(path, node1)
        plain = None if plan[0] or plan[1] else plan[2]
        return node2, path.type, rev_type, intra, len(path.links), plan, plain

    # -- which GPU next ----------------------------------------------------------------
    def gpu_pci_bw(self, gpu: Node) -> int:
        """gpuPciBw (search.cc:174-187)."""
        dev = gpu.parent
        for lk in dev.links:
            if lk.type != LINK_PCI:
                continue
            for pl in lk.rem.links:
                if pl.rem is dev:
                    return int(min(lk.bw, pl.bw))
        return -1

    def next_gpus(self, g: Graph, gpu: Node, sort_net: int) -> list[int]:
        """ncclTopoSearchNextGpuSort (search.cc:253-326): the GPUs to try next, best first;
        on an NVSwitch only the neighbours in index order."""
        flag = 1 << g.n_channels
        gpus = self.s.nodes[GPU]
        start = self.where[id(gpu)]
        if self.nvs:
            return [k for k in self._nvs_next(g.pattern, start) if not gpus[k].used & flag]
        n = self.net_index(g.inter[g.n_channels * 2]) if sort_net else None
        static = self.static.get((start, n))
        if static is None:
            static = self.static[start, n] = self._static_scores(start, n)
        scores = [
            (k, i, hops, bw, inter_bw, self.gpu_pci_bw(gpus[k]) if n is not None else 0, inter)
            for k, i, hops, bw, inter_bw, inter in static
            if not gpus[k].used & flag
        ]
        # cmpScore (search.cc:201-211)
        scores.sort(key=lambda x: (-x[4], -x[5], x[6], -x[3], x[2], x[1]))
        same_intra = all((x[3], x[2]) == (scores[0][3], scores[0][2]) for x in scores)
        if sort_net == -1 and same_intra:
            nxt = [x[0] for x in reversed(scores)]
        else:
            nxt = [x[0] for x in scores]
        return nxt

    def _nvs_next(self, pattern: int, start: int) -> list[int]:
        """On an NVSwitch only the ring neighbours, in the order search.cc:297-324 leaves them
        (each one found is moved to the front), among the GPUs a path reaches; the scores
        order only the others, which are dropped, so they are not computed here."""
        key = ("nvs", pattern, start)
        out = self.static.get(key)
        if out is None:
            prev_gpu, next_gpu = (start - 1 + self.ngpus) % self.ngpus, (start + 1) % self.ngpus
            if pattern == RING:
                first = [next_gpu, prev_gpu]
            elif pattern in (SPLIT_TREE, BALANCED_TREE):
                first = [prev_gpu, next_gpu]
            else:
                first = [next_gpu]
            if next_gpu == prev_gpu and len(first) == 2:
                first = first[:1]
            reached = {k for k, *_ in self._static_scores(start, None)}
            out = self.static[key] = [f for f in reversed(first) if f in reached]
        return out

    def _static_scores(self, start: int, n: int | None) -> list[tuple]:
        """What ncclGpuScore holds that the search does not change: index, start distance,
        hops and bandwidth to the GPU and from the NET (search.cc:262-277)."""
        paths = self.s.gpus[start].paths[GPU]
        net_paths = self.s.nets[n].paths[GPU] if n is not None else None
        out = []
        for i in range(1, self.ngpus):
            k = (start + i) % self.ngpus
            if not paths[k].links:
                continue
            inter = (int(net_paths[k].bw), len(net_paths[k].links)) if net_paths else (0, 0)
            out.append((k, i, len(paths[k].links), int(paths[k].bw), *inter))
        return out

    def net_index(self, net_id: int) -> int:
        """The first NET of this id (the nodes do not change during a search)."""
        return self.net_pos[net_id]

    def gpu_index(self, rank: int) -> int:
        """ncclTopoRankToIndex (topo.h:233-243), looked up."""
        k = self.ranks.get(rank)
        return self.s.rank_index(rank) if k is None else k

    def replay_gpu(self, g: Graph, step: int) -> int:
        """ncclTopoReplayGetGpu (search.cc:340-352): the GPU after `step` in the last channel."""
        rank = g.intra[(g.n_channels - 1) * self.ngpus + step + 1]
        return self.gpu_index(rank)

    # -- the recursion -----------------------------------------------------------------
    def try_gpu(self, g, save, step, back_net, back_first, forced, time, t, i, k) -> None:
        """ncclTopoSearchTryGpu (search.cc:358-371)."""
        flag = 1 << g.n_channels
        gpu = self.follow_path(g, t, i, GPU, k, 1)
        if gpu is not None:
            gpu.used ^= flag
            self.rec_gpu(g, save, gpu, step, back_net, back_first, forced, time)
            gpu.used ^= flag
            self.follow_path(g, t, i, GPU, k, -1)

    def try_nvls(self, g: Graph, save: Graph, k: int, time: Timer) -> None:
        """ncclTopoSearchTryNvls (search.cc:410-443): room for every GPU to and from the switch,
        twice for the head."""
        n = self.ngpus
        d0 = 0
        while True:
            gpu = self.follow_path(g, NVS, 0, GPU, d0, 2 if d0 == k else 1)
            d0 += 1
            if gpu is None or d0 >= n:
                break
        if gpu is None:
            d0 -= 1
        else:
            d1 = 0
            while True:
                nvs = self.follow_path(g, GPU, d1, NVS, 0, 2 if d1 == k else 1)
                d1 += 1
                if nvs is None or d1 >= n:
                    break
            if nvs is None:
                d1 -= 1
            else:
                self.rec_gpu(g, save, None, n, -1, -1, 0, time)
            while d1:
                d1 -= 1
                self.follow_path(g, GPU, d1, NVS, 0, -2 if d1 == k else -1)
        while d0:
            d0 -= 1
            self.follow_path(g, NVS, 0, GPU, d0, -2 if d0 == k else -1)

    def better(self, g: Graph, ref: Graph) -> bool:
        """ncclTopoCompareGraphs (search.cc:445-468)."""
        if g.n_channels < g.min_channels:
            return False
        if g.pattern == NVLS:
            return (g.n_channels > ref.n_channels and g.n_channels <= self.ngpus) or f32(
                g.n_channels * g.bw_inter
            ) > f32(ref.n_channels * ref.bw_inter)
        mine, theirs = f32(g.n_channels * g.bw_intra), f32(ref.n_channels * ref.bw_intra)
        if mine != theirs:
            return mine > theirs
        self.ties += 1  # the only answer here that reads cross_nic (see try_memo)
        return g.pattern == ref.pattern and g.cross_nic == ref.cross_nic and g.n_hops < ref.n_hops

    def pref_nets(self, gpu: int) -> list[int]:
        """ncclTopoPrefNetsChannelFirst (search.cc:507-529): each GPU's cards in channel order."""
        out: list[int] = []
        for k, node in enumerate(self.s.gpus):
            if gpu not in (-1, k):
                continue
            mine: list[int] = []
            for c in range(MAXCHANNELS):
                n = P.local_net(self.s, node.rank, c)
                if mine and n == mine[0]:
                    break
                mine.append(n)
            out += [n for n in mine if n not in out]
        return out

    def select_nets(self, type_inter: int, gpu: int) -> list[int]:
        """ncclTopoSelectNets (search.cc:541-589), NETDEVS_POLICY AUTO: the preferred cards, then
        every other card within type_inter, nearest first."""
        key = ("select", type_inter, gpu)
        if key not in self.s.memo:
            self.s.memo[key] = self._select_nets(type_inter, gpu)
        return list(self.s.memo[key])

    def _select_nets(self, type_inter: int, gpu: int) -> list[int]:
        nets = self.pref_nets(gpu)
        for t in range(type_inter + 1):
            for k, node in enumerate(self.s.gpus):
                if gpu not in (-1, k):
                    continue
                for n, p in enumerate(node.paths[NET][:MAXCHANNELS]):
                    if p.type == t and n not in nets:
                        nets.append(n)
        return nets

    def check_net(self, g: Graph, start: Node, n: int, step: int) -> bool:
        """ncclTopoSearchCheckNet (search.cc:593-619)."""
        net = self.nets[n]
        if net.plane != -1 and start.plane != -1 and net.plane != start.plane:
            return False
        if g.pattern == TREE and net.id != start.id:
            return False
        if g.pattern == RING and g.cross_nic == 2:
            if g.n_channels & 1 and net.id != g.inter[(g.n_channels - 1) * 2]:
                return False
        elif g.cross_nic == 0:
            if net.rail != -1 and start.rail != -1:
                if net.rail != start.rail:
                    return False
            elif net.asic != start.asic or net.port != start.port:
                return False
        return not (
            g.pattern == BALANCED_TREE and step != 0 and net.id != g.inter[g.n_channels * 2 + 1]
        )

    def rec_gpu(self, g, save, gpu, step, back_net, back_first, forced, time) -> None:
        """ncclTopoSearchRecGpu (search.cc:621-722)."""
        if time.left <= 0:
            return
        time.left -= 1
        n = self.ngpus
        if step == n:
            g.n_channels += 1
            if self.better(g, save):
                save.load(g)
                self.version += 1  # what rec remembered was measured against the old save
                self.forget()
                if g.n_channels == g.max_channels:
                    time.left = -1
            if g.n_channels < g.max_channels:
                self.rec(g, save, time)
            g.n_channels -= 1
            return
        g.intra[g.n_channels * n + step] = gpu.rank
        k = self.where[id(gpu)]
        if step == back_net:
            if self.s.inter:
                start = self.nets[self.net_index(g.inter[g.n_channels * 2])]
                for nn in self.select_nets(g.type_inter, k):
                    if not self.check_net(g, start, nn, step):
                        continue
                    next_back = -1
                    save_bw = g.bw_inter
                    if g.pattern == BALANCED_TREE:
                        if step == 0:
                            next_back = 1
                        g.bw_inter = f32(g.bw_inter / 2)
                    net = self.follow_path(g, GPU, k, NET, nn, 1)
                    g.bw_inter = save_bw
                    if net is not None:
                        g.inter[g.n_channels * 2 + 1] = net.id
                        self.rec_gpu(g, save, gpu, step, next_back, back_first, forced, time)
                        if g.pattern == BALANCED_TREE:
                            g.bw_inter = f32(g.bw_inter / 2)
                        self.follow_path(g, GPU, k, NET, nn, -1)
                        g.bw_inter = save_bw
        elif g.pattern == NVLS:
            self.try_nvls(g, save, k, time)
        elif step < n - 1:
            if forced == FORCED_ORDER_PCI:
                nxt = [step + 1]
            elif forced == FORCED_ORDER_REPLAY:
                nxt = [self.replay_gpu(g, step)]
            elif self.nvs:  # next_gpus on an NVSwitch, inlined
                flag, gpus = 1 << g.n_channels, self.s.nodes[GPU]
                nxt = [j for j in self._nvs_next(g.pattern, k) if not gpus[j].used & flag]
            else:
                sort = 0 if back_net == -1 else 1 if back_net == step + 1 else -1
                nxt = self.next_gpus(g, gpu, sort)
            flag = 1 << g.n_channels
            for j in nxt:  # try_gpu(..., GPU, k, j), inlined
                nxt_gpu = self.follow_path(g, GPU, k, GPU, j, 1)
                if nxt_gpu is not None:
                    nxt_gpu.used ^= flag
                    self.rec_gpu(g, save, nxt_gpu, step + 1, back_net, back_first, forced, time)
                    nxt_gpu.used ^= flag
                    self.follow_path(g, GPU, k, GPU, j, -1)
        elif step == back_first:
            p = self.gpu_index(g.intra[g.n_channels * n])
            first = self.follow_path(g, GPU, k, GPU, p, 1)
            if first is not None:
                self.rec_gpu(g, save, first, step + 1, back_net, -1, forced, time)
                self.follow_path(g, GPU, k, GPU, p, -1)
        else:
            self.rec_gpu(g, save, gpu, n, -1, -1, forced, time)

    def rec_net(self, g: Graph, save: Graph, back_net: int, back_first: int, time: Timer):
        """ncclTopoSearchRecNet (search.cc:724-816)."""
        bw = int(g.bw_inter)
        nets = self.select_nets(g.type_inter, -1)
        found = False
        for i in range(len(nets)):
            if g.pattern == NVLS and found:
                break
            n = nets[(g.n_channels + i) % len(nets)]
            net = self.nets[n]
            if net.bw < bw:
                continue
            if (
                g.pattern == RING
                and g.cross_nic == 2
                and g.n_channels & 1
                and net.id != g.inter[(g.n_channels - 1) * 2 + 1]
            ):
                continue
            g.inter[g.n_channels * 2] = net.id
            g.latency_inter = net.latency
            same_port = self.same_port[n]
            for x in same_port:
                x.bw = f32(x.bw - bw)
            if g.pattern == NVLS:
                if g.n_channels < len(nets) and net.local_gpu != -1:
                    head = self.s.gpus[net.local_gpu].rank
                    heads = [g.intra[c * self.ngpus] for c in range(g.n_channels)]
                    if head not in heads:
                        self.try_gpu(g, save, 0, back_net, back_first, 0, time, NET, n,
                                     net.local_gpu)  # fmt: skip
                        found = True
            elif g.n_channels > 0 and g.same_channels == 1:
                k = self.replay_gpu(g, -1)
                self.try_gpu(g, save, 0, back_net, back_first, FORCED_ORDER_REPLAY, time, NET, n, k)
            else:
                if g.n_channels == 0 and not self.s.nodes[NVS]:
                    t = Timer(1 << 10)
                    self.try_gpu(g, save, 0, back_net, back_first, FORCED_ORDER_PCI, t, NET, n, 0)
                    if t.left == -1:
                        time.left = -1
                local = net.local_gpu
                if local != -1:
                    self.try_gpu(g, save, 0, back_net, back_first, 0, time, NET, n, local)
                gpus, ptype = P.get_local(self.s, NET, n, GPU)
                if ptype != PATH_DIS:
                    for k in gpus:
                        if k != local:
                            self.try_gpu(g, save, 0, back_net, back_first, 0, time, NET, n, k)
            for x in same_port:
                x.bw = f32(x.bw + bw)

    def params(self, pattern: int) -> tuple[int, int]:
        """ncclTopoSearchParams (search.cc:835-847): the step that goes back to the network and
        the one that closes the ring."""
        if self.s.inter:
            back_net = self.ngpus - 1 if pattern == RING else 1 if pattern == SPLIT_TREE else 0
            return back_net, -1
        return -1, (self.ngpus - 1 if pattern == RING else -1)

    def try_memo(self, g: Graph) -> None:
        """What `_remembered` keeps, for a try with g's constraints. The saved graph is the same
        for every try until a better one is found (forget). Inside one server a try differs
        from an earlier one with the same constraints but crossNic (search.cc:1237-1240) only
        where better() meets a graph as good as the saved one (search.cc:461-466): crossNic is
        read nowhere else without a network (search.cc:593-619, 724-816). So that try starts
        from what the earlier one remembered, less the searches that met such a graph."""
        key = (g.pattern, g.same_channels, self.admitted(g.type_intra),
               self.admitted(g.type_inter), g.bw_intra, g.bw_inter, g.min_channels,
               g.max_channels, g.cross_nic if self.s.inter else None)  # fmt: skip
        cross, done = self.memos.get(key, (g.cross_nic, {}))
        if cross != g.cross_nic:
            done = {k: v for k, v in done.items() if not v[-1]}
        self.memos[key] = (g.cross_nic, done)
        self.done, self.try_key = done, (key, g.cross_nic)

    def admitted(self, limit: int) -> int:
        """The worst type of path the system has within `limit`. The search reads typeIntra and
        typeInter only to compare a path's type with them (follow_path, search.cc:149-153;
        select_nets, search.cc:570-573), so two tries whose limits admit the same paths search
        alike: PXB and P2C on a server with a card by each GPU's switch and no C2C, say."""
        return max((t for t in self.path_types if t <= limit), default=-1)

    def forget(self) -> None:
        """The saved graph changed: nothing remembered holds (the try's own memo starts over)."""
        self.memos.clear()
        self.done = {}
        if self.try_key is not None:
            key, cross = self.try_key
            self.memos[key] = (cross, self.done)

    def rec(self, g: Graph, save: Graph, time: Timer) -> None:
        """ncclTopoSearchRec (search.cc:849-881), the search for channel g.n_channels given the
        ones before. Across servers every card is tried (rec_net); inside one, the previous
        channel is replayed first (search.cc:869-872), then, without sameChannels, each GPU
        starts a free search (search.cc:873-877). Both the whole call and that free search are
        remembered (see `_remembered`); the free search reads nothing of the previous channel,
        so its key leaves that channel out and every channel before it shares one search."""
        c = g.n_channels
        if c == 0 or g.pattern == NVLS:
            self._rec(g, save, time)
            return
        n = self.ngpus
        # what of the previous channel is read: its GPUs, to replay them (rec, rec_net), and
        # with cross_nic 2 on an odd ring channel, its cards (rec_net, check_net)
        replays = not self.s.inter or g.same_channels == 1
        nets = g.pattern == RING and g.cross_nic == 2 and c & 1
        key = (
            c,
            g.n_hops,
            tuple(g.intra[(c - 1) * n : c * n]) if replays else None,
            (g.inter[2 * c - 2], g.inter[2 * c - 1]) if nets else None,
        )
        self._remembered(key, g, save, time, self._rec)

    def _remembered(self, key: tuple, g: Graph, save: Graph, time: Timer, explore) -> None:
        """explore(g, save, time) with its outcome remembered under `key` and the state it
        reads besides (the bandwidths left, which the key adds): the same state met again
        explores the same tree. A search of that tree that ended before the budget and found
        nothing better than `save` is not explored again: its steps are taken from the budget
        and its end state written back, so the budget and every value read afterwards are
        what exploring it gives."""
        c, n = g.n_channels, self.ngpus
        key = (*key, tuple(map(_BW, self.links)), tuple(map(_BW, self.booked_nets)))
        seen = self.done.get(key)
        if seen is not None and time.left >= seen[0]:
            steps, links_bw, nets_bw, hops, latency, intra, inter, tied = seen
            self.ties += tied  # a search that contains this one met what it met
            time.left -= steps
            for lk, bw in zip(self.links, links_bw):
                lk.bw = bw
            for x, bw in zip(self.booked_nets, nets_bw):
                x.bw = bw
            g.n_hops, g.latency_inter = hops, latency
            g.intra[c * n :], g.inter[2 * c :] = intra, inter
            return
        left, version, ties = time.left, self.version, self.ties
        explore(g, save, time)
        if time.left > 0 and self.version == version:
            self.done[key] = (
                left - time.left,
                [lk.bw for lk in self.links],
                [x.bw for x in self.booked_nets],
                g.n_hops,
                g.latency_inter,
                g.intra[c * n :],
                g.inter[2 * c :],
                self.ties != ties,
            )

    def _rec(self, g: Graph, save: Graph, time: Timer) -> None:
        """ncclTopoSearchRec (search.cc:849-881)."""
        back_net, back_first = self.params(g.pattern)
        if self.s.inter:
            self.rec_net(g, save, back_net, back_first, time)
            return
        if g.pattern == NVLS:
            self.try_gpu(g, save, 0, back_net, back_first, 0, time, -1, -1, g.n_channels)
            return
        if g.n_channels == 0:
            self.try_gpu(g, save, 0, back_net, back_first, FORCED_ORDER_PCI, time, -1, -1, 0)
            self._free(g, save, time)
            return
        k = self.replay_gpu(g, -1)
        self.try_gpu(g, save, 0, back_net, back_first, FORCED_ORDER_REPLAY, time, -1, -1, k)
        if g.same_channels == 0:
            self._remembered(("free", g.n_channels, g.n_hops), g, save, time, self._free)

    def _free(self, g: Graph, save: Graph, time: Timer) -> None:
        """search.cc:873-877: each GPU in turn starts the channel, no order forced."""
        back_net, back_first = self.params(g.pattern)
        for k in range(self.ngpus):
            self.try_gpu(g, save, 0, back_net, back_first, 0, time, -1, -1, k)


def dup_channels(g: Graph, cc_min: int, ngpus: int) -> None:
    """ncclTopoDupChannels (search.cc:1036-1049): fast channels are doubled, each at half."""
    if g.n_channels == 0 or g.pattern == NVLS or g.bw_intra < 25.0:
        return
    if cc_min > 80 and g.bw_intra < 50.0 and g.n_channels > 4:
        return
    dup = min(g.n_channels * 2, g.max_channels)
    g.found = (g.n_channels, g.bw_intra, g.bw_inter)
    extra = dup - g.n_channels
    g.intra[g.n_channels * ngpus : dup * ngpus] = g.intra[: extra * ngpus]
    g.inter[g.n_channels * 2 : dup * 2] = g.inter[: extra * 2]
    div = -(-dup // g.n_channels)
    g.bw_intra = f32(g.bw_intra / div)
    g.bw_inter = f32(g.bw_inter / div)
    g.n_channels = dup


def search_init(s: System) -> None:
    """ncclTopoSearchInit (search.cc:39-54): the best single path (to a NET across servers, to
    another GPU inside one) and the most NVLink or PCI bandwidth of a GPU."""
    s.max_bw = s.total_bw = 0.0
    if s.inter == 0 and len(s.gpus) == 1:
        s.max_bw = s.total_bw = 5000.0
        return
    for dev in s.nodes[DEV]:
        t = NET if s.inter else DEV
        best = max((p.bw for p in dev.paths.get(t, []) if p.count), default=0.0)
        s.max_bw = max(s.max_bw, best)
        nvl, pci = 0.0, 0.0
        for lk in dev.links:
            if lk.type == LINK_NVL:
                nvl = f32(nvl + lk.bw)
            if lk.type == LINK_PCI:
                pci = lk.bw
        s.total_bw = max(s.total_bw, max(pci, nvl))


def compute(s: System, g: Graph) -> Graph:
    """ncclTopoCompute (search.cc:1074-1313): the best graph of g's pattern, in place."""
    search = Search(s)
    cc_min = s.comp_cap()[0]
    ngpus, ndevs = len(s.gpus), len(s.nodes[DEV])
    g.intra = [0] * (MAXCHANNELS * ngpus)
    g.inter = [0] * (MAXCHANNELS * 2)
    cross_nic = (
        CROSS_NIC if len(s.nets) > 1 and g.pattern in (RING, BALANCED_TREE, SPLIT_TREE) else 0
    )
    g.cross_nic = 1 if cross_nic == 1 else 0
    g.bw_intra = g.bw_inter = 0.0
    g.latency_inter = 0.0
    min_intra, min_inter, max_intra, max_inter = PATH_LOC, PATH_PIX, PATH_SYS, PATH_SYS
    if ngpus > 1:
        min_intra, max_intra = P.gpu_min_path(s, GPU), P.gpu_max_path(s, GPU)
    if s.inter:
        min_inter, max_inter = P.gpu_min_path(s, NET), P.gpu_max_path(s, NET)
        max_intra = max_inter
    if cc_min < 90:
        max_inter = PATH_SYS
    g.type_intra, g.type_inter = min_intra, min_inter
    g.n_channels = 0
    try_same = 0 if g.pattern == NVLS else 1
    g.same_channels = try_same
    arch, vendor, _ = s.cpu_type()

    if g.pattern == NVLS and (not s.nodes[NVS] or cc_min < 90):
        return g
    if g.pattern == NVLS:
        g.max_channels = min(MAX_NVLS_ARITY, ngpus)
    if ngpus == 1 and g.pattern != RING:
        g.pattern = TREE
    if s.inter == 0 and g.pattern == NVLS:
        g.min_channels = g.max_channels
    if g.pattern == RING and P.split_nvlink(s) and g.max_channels >= 2 and g.min_channels == 1:
        g.min_channels = 2

    tmp = g.copy()
    speeds = speed_array(cc_min, bool(s.inter))
    last = len(speeds) - 1
    pass_, si = 1, 0
    max_bw, total_bw = s.max_bw, s.total_bw
    if ndevs > 1 and g.pattern != RING:
        total_bw = f32(total_bw * (ndevs * 1.0 / (ndevs - 1)))
    while (speeds[si] > max_bw or f32(speeds[si] * g.min_channels) > total_bw) and si < last:
        si += 1
    tmp.bw_intra = tmp.bw_inter = speeds[si]
    global_timeout = GLOBAL_TIMEOUT

    while True:  # the `search:` label (search.cc:1177)
        budget = (
            TIMEOUT_SAMECHANNELS if tmp.same_channels else
            TIMEOUT_TREE if tmp.pattern == TREE else
            TIMEOUT
        )  # fmt: skip
        time = Timer(budget)
        tmp.n_channels = 0
        global_timeout -= budget
        search.try_memo(tmp)
        search.rec(tmp, g, time)
        done = time.left == -1 or f32(g.n_channels * g.bw_inter) >= s.total_bw
        if pass_ == 1 and not done:
            # search.cc:1200-1252: loosen one constraint at a time
            if tmp.same_channels == 1 and not (
                arch == ARCH_X86 and vendor == VENDOR_AMD and tmp.type_intra == PATH_SYS
            ):
                tmp.same_channels = 0
                continue
            tmp.same_channels = try_same
            global_timeout += time.left
            if not (global_timeout < 0 and g.n_channels):
                if cc_min >= 90 and tmp.pattern == BALANCED_TREE:
                    tmp.pattern = TREE
                    continue
                tmp.pattern = g.pattern
                max_i = tmp.type_inter if s.inter else max_intra
                if tmp.type_intra < max_i and (g.n_channels == 0 or tmp.type_intra < g.type_intra):
                    tmp.type_intra += 1
                    if tmp.type_intra < PATH_DIS:
                        continue
                tmp.type_intra = min_intra
                if (
                    s.inter
                    and tmp.type_inter < max_inter
                    and (
                        g.n_channels == 0
                        or tmp.type_inter < g.type_inter
                        or tmp.type_inter < PATH_PXN
                    )
                ):
                    tmp.type_inter += 1
                    if tmp.type_inter < PATH_DIS:
                        continue
                tmp.type_inter = min_inter
                if cross_nic == 2 and tmp.cross_nic == 0 and g.pattern in (RING, BALANCED_TREE):
                    tmp.cross_nic = 2
                    continue
                tmp.cross_nic = 1 if cross_nic == 1 else 0
                if si < last and (g.n_channels == 0 or f32(speeds[si + 1] / g.bw_inter) > 0.49):
                    si += 1
                    tmp.bw_inter = tmp.bw_intra = speeds[si]
                    continue
                si = 0
                while speeds[si] > max_bw and si < last:
                    si += 1
                tmp.bw_intra = tmp.bw_inter = speeds[si]
        # done: (search.cc:1254-1287)
        if pass_ == 1:
            time.left = -1
            search.forget()  # g changes (dup_channels)
            dup_channels(g, cc_min, ngpus)
            tmp = g.copy()
            si = 0
            while speeds[si] > g.bw_inter and si < last:
                si += 1
            tmp.bw_intra = tmp.bw_inter = speeds[si]
            tmp.min_channels = g.n_channels
            pass_ = 2
        if time.left != 0 and si > 0:
            if g.pattern == RING:
                si -= 1
                tmp.bw_intra = tmp.bw_inter = speeds[si]
                continue
            if g.pattern == NVLS and tmp.bw_inter == g.bw_inter and tmp.bw_inter < tmp.bw_intra * 2:
                tmp.min_channels = tmp.max_channels = g.n_channels
                si -= 1
                tmp.bw_inter = speeds[si]
                continue
            if tmp.bw_intra == g.bw_intra and tmp.bw_intra < tmp.bw_inter * 2:
                si -= 1
                tmp.bw_intra = speeds[si]
                continue
        break

    if g.n_channels == 0 and g.pattern != NVLS:
        _fallback(search, g)
    return g


def _fallback(search: Search, g: Graph) -> None:
    """search.cc:1289-1311: no graph found, the GPUs in index order at 0.1 GB/s."""
    s = search.s
    for i, gpu in enumerate(s.gpus):
        g.intra[i] = gpu.rank
    g.bw_intra, g.type_intra = 0.1, PATH_SYS
    first = search.select_nets(-1, 0)
    last = search.select_nets(-1, len(s.gpus) - 1)
    if first and last:
        g.inter[0], g.inter[1] = s.nets[first[0]].id, s.nets[last[0]].id
        g.bw_inter, g.type_inter = 0.1, PATH_SYS
    else:
        g.inter[0] = g.inter[1] = -1
        g.bw_inter, g.type_inter = 0.0, PATH_DIS
    g.n_channels = 1
