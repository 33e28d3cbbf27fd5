"""Paths between GPUs, NICs, CPUs and the NVSwitch: ncclTopoComputePaths (src/graph/paths.cc).

For every node of a base type NCCL runs a breadth-first search from it (paths.cc:38-130) and
keeps, at each node, the best path to it: the lowest type first (LOC, NVL, NVB, C2C, PIX, PXB,
P2C, PXN, PHB, SYS), then the highest bandwidth (the narrowest link on the way), then the fewest
hops. A path's type is the worst of its links': PXB through more than one PCI switch, PHB through
a CPU, NVB through one intermediate GPU's NVLinks. Then it reroutes what cannot go direct: GPU
pairs without P2P go through their CPU (paths.cc:762-777), a GPU reaches a NIC through an
NVLink peer next to it (PXN, paths.cc:815-840), and a GPU without GPUDirect RDMA to a NIC goes
through its CPU (paths.cc:841-854).

This runs with NCCL's defaults (P2P level PXB, PXN on, NET_GDR_LEVEL P2C, GDR read on from
Ampere) and takes NVML's P2P status as good: a dump file does not record it. A caller who knows
better sets System.p2p_level (NCCL_P2P_LEVEL; LOC when NVML reports no P2P, as on GeForce cards).
"""

from __future__ import annotations

from .system import (
    ARCH_X86,
    CPU,
    DEV,
    GPU,
    LINK_LOC,
    LINK_NET,
    LINK_NVL,
    LINK_PCI,
    LOC_BW,
    MAXCHANNELS,
    NET,
    NVS,
    PATH_C2C,
    PATH_DIS,
    PATH_LOC,
    PATH_NVB,
    PATH_NVL,
    PATH_P2C,
    PATH_PHB,
    PATH_PXB,
    PATH_PXN,
    PATH_SYS,
    PCI,
    VENDOR_AMD,
    Node,
    Path,
    System,
)


def _paths(node: Node, type_: int, count: int) -> list[Path]:
    if type_ not in node.paths:
        node.paths[type_] = [Path() for _ in range(count)]
    return node.paths[type_]


def set_paths(base: Node, s: System) -> None:
    """ncclTopoSetPaths (paths.cc:38-130): every node's best path to `base`."""
    t = base.type
    count = len(s.nodes[t])
    bi = s.nodes[t].index(base)
    _paths(base, t, count)
    base_path = base.paths[t][bi]
    base_path.links, base_path.bw, base_path.type = [], LOC_BW, PATH_LOC
    max_len = 2 if t == GPU else 1
    base_dev = base.parent if t == GPU else base
    frontier = [base]
    while frontier:
        nxt: list[Node] = []
        for node in frontier:
            path = node.paths[t][bi]
            for link in node.links:
                rem = link.rem
                rem_path = _paths(rem, t, count)[bi]
                bw = min(path.bw, link.bw)
                # paths.cc:73-82: only go through a DEV to its GPU, or over NVLink to another
                # DEV when the path is short enough for NVB
                if (
                    node is not base_dev
                    and node.type == DEV
                    and (link.type != LINK_LOC or rem.type != GPU)
                    and (link.type != LINK_NVL or rem.type != DEV or path.count > max_len)
                ):
                    continue
                new = LINK_LOC if link.type == LINK_NET else link.type
                if node.type == PCI and rem.type == PCI:
                    new = PATH_PXB
                if link.type == LINK_PCI and (node.type == CPU or rem.type == CPU):
                    new = PATH_PHB
                if (
                    node.type == DEV
                    and path.type == PATH_NVL
                    and new == PATH_NVL
                    and path.count == max_len
                ):
                    new = PATH_NVB
                new = max(path.type, new)
                if (
                    new < rem_path.type
                    or (new == rem_path.type and rem_path.bw < bw)
                    or (
                        new == rem_path.type
                        and rem_path.bw == bw
                        and rem_path.count > path.count + 1
                    )
                ):
                    rev = next(
                        (lk for lk in rem.links if lk.rem is node and lk.type == link.type), None
                    )
                    if rev is None:
                        raise AssertionError("no reverse link")  # the builder adds both ways
                    rem_path.links = [rev, *path.links]
                    rem_path.bw = bw
                    rem_path.type = new
                    if rem not in nxt:
                        nxt.append(rem)
        frontier = nxt


def merge_type(a: int, b: int) -> int:
    """mergePathType (paths.cc:203-208): through a CPU from C2C is P2C."""
    hi, lo = max(a, b), min(a, b)
    return PATH_P2C if hi == PATH_PHB and lo == PATH_C2C else hi


def add_inter_step(s: System, tx: int, ix: int, t1: int, i1: int, t2: int, i2: int) -> None:
    """addInterStep (paths.cc:210-228): node1 -> t2/i2 rerouted through tx/ix."""
    mid = s.nodes[tx][ix]
    src = s.nodes[t1][i1]
    first, second = src.paths[tx][ix], mid.paths[t2][i2]
    p = src.paths[t2][i2]
    p.links = [*first.links, *second.links]
    p.type = PATH_PXN if tx == GPU else merge_type(first.type, second.type)
    p.bw = min(first.bw, second.bw)


def get_local(s: System, type_: int, index: int, result: int) -> tuple[list[int], int]:
    """ncclTopoGetLocal (topo.cc:1943-1972): the nodes of `result` type reached with the highest
    bandwidth and then the lowest path type, and that type."""
    if s.memo is None:
        return _get_local(s, type_, index, result)
    key = ("local", type_, index, result)
    if key not in s.memo:
        s.memo[key] = _get_local(s, type_, index, result)
    return s.memo[key]


def _get_local(s: System, type_: int, index: int, result: int) -> tuple[list[int], int]:
    paths = s.nodes[type_][index].paths.get(result)
    if paths is None:
        return [], PATH_DIS
    min_type, max_bw, out = PATH_DIS, 0.0, []
    for i, p in enumerate(paths):
        if p.bw > max_bw or (p.bw == max_bw and p.type < min_type):
            max_bw, min_type, out = p.bw, p.type, []
        if p.bw == max_bw and p.type == min_type:
            out.append(i)
    return out, min_type


def local_cpu(s: System, g: int) -> int:
    """ncclGetLocalCpu (paths.cc:188-201): of the nearest CPUs, the fewest hops."""
    cpus, _ = get_local(s, GPU, g, CPU)
    if not cpus:
        return -1
    paths = s.gpus[g].paths[CPU]
    best = cpus[0]
    for c in cpus[1:]:
        if paths[c].count < paths[best].count:
            best = c
    return best


def _is_pow2(v: int) -> bool:
    return v & (v - 1) == 0


def _mirror_bits(v: int, pow2: int) -> int:
    """mirrorBits (topo.h:285-296)."""
    out, b, mb = 0, 1, pow2 >> 1
    while b < pow2:
        if v & b:
            out |= mb
        b <<= 1
        mb >>= 1
    return out


def local_net(s: System, rank: int, channel: int) -> int:
    """ncclTopoGetLocalNetType for NET (topo.cc:2039-2076), NETDEVS_POLICY AUTO: the index of
    the card a GPU uses on a channel. The GPUs that share the nearest cards take them in turn,
    starting from the GPU's device number (its bits mirrored when the cards are a power of 2)."""
    if s.memo is None:
        return _local_net(s, rank, channel)
    key = ("net", rank, channel)
    if key not in s.memo:
        s.memo[key] = _local_net(s, rank, channel)
    return s.memo[key]


def _local_net(s: System, rank: int, channel: int) -> int:
    g = s.rank_index(rank)
    nets, _ = get_local(s, GPU, g, NET)
    if not nets:
        raise ValueError(f"no path from GPU rank {rank} to a network card")
    gpus, _ = get_local(s, NET, nets[0], GPU)
    per_gpu = -(-len(nets) // len(gpus))
    net = s.gpus[g].dev % len(gpus)
    if _is_pow2(len(nets)):
        net = _mirror_bits(net, len(nets))
    net += channel % per_gpu
    return nets[net % len(nets)]


def local_gpu(s: System, n: int) -> int:
    """ncclTopoGetLocalGpu (topo.cc:2110-2135): the first nearest GPU whose channels use NET n."""
    gpus, _ = get_local(s, NET, n, GPU)
    for c in range(MAXCHANNELS):
        for g in gpus:
            if local_net(s, s.gpus[g].rank, c) == n:
                return g
    return -1


def intermediate_rank(s: System, rank: int, n: int) -> int:
    """ncclTopoGetIntermediateRank (paths.cc:633-666): the GPU a PXN path relays through."""
    g = s.rank_index(rank)
    path = s.gpus[g].paths[NET][n]
    if path.type != PATH_PXN:
        return rank
    i = 1
    while i < path.count and path.links[i].rem.type == NVS:
        i += 1
    node = path.links[i].rem
    if node.type == DEV:
        node = next((lk.rem for lk in node.links if lk.rem.type == GPU), node)
    if node.type != GPU:
        raise ValueError(f"no intermediate GPU between rank {rank} and NET {n}")
    return node.rank


def check_gdr(s: System, rank: int, n: int, read: bool) -> bool:
    """ncclTopoCheckGdr (paths.cc:468-549) with the defaults: both ends support it, reads off
    before Ampere unless the GPU has an NVLink peer, the path no longer than P2C."""
    net = s.nets[n]
    g = s.rank_index(rank)
    gpu = s.gpus[g]
    if not net.gdr or not gpu.gdr:
        return False
    if read and gpu.sm < 80:
        nvlink = len(s.gpus) == 1 or any(
            p.type == PATH_NVL for i, p in enumerate(gpu.paths[GPU]) if i != g
        )
        if not nvlink:
            return False
    distance = gpu.paths[NET][n].type
    if distance == PATH_PXN:
        proxy = s.gpus[s.rank_index(intermediate_rank(s, gpu.rank, n))]
        distance = proxy.paths[NET][n].type
    return distance <= PATH_P2C


def p2p_level(s: System) -> int:
    """ncclTopoCheckP2p's level (paths.cc:356-365): PXB, SYS for pairs of GPUs on AMD, or the
    user's (System.p2p_level)."""
    if s.p2p_level is not None:
        return s.p2p_level
    arch, vendor, _ = s.cpu_type()
    if arch == ARCH_X86 and vendor == VENDOR_AMD and len(s.nodes[DEV]) <= 2:
        return PATH_SYS
    return PATH_PXB


def compute(s: System) -> None:
    """ncclTopoComputePaths (paths.cc:721-865)."""
    s.memo = None
    for nodes in s.nodes:
        for n in nodes:
            n.paths = {}
    for t in (CPU, DEV, GPU, NET, NVS):
        for node in s.nodes[t]:
            set_paths(node, s)
    level = p2p_level(s)
    for g in range(len(s.gpus)):
        for p in range(len(s.gpus)):
            if s.gpus[p].paths[GPU][g].type > level:
                add_inter_step(s, CPU, local_cpu(s, g), GPU, p, GPU, g)
    # paths.cc:794-812: C2C + PHB to the nearest NICs is P2C
    for g, gpu in enumerate(s.gpus):
        c = local_cpu(s, g)
        if c == -1:
            continue
        for n in get_local(s, GPU, g, NET)[0]:
            net = s.nets[n]
            if merge_type(gpu.paths[CPU][c].type, net.paths[CPU][c].type) == PATH_P2C:
                gpu.paths[NET][n].type = min(PATH_P2C, gpu.paths[NET][n].type)
                net.paths[GPU][g].type = min(PATH_P2C, net.paths[GPU][g].type)
    for n in range(len(s.nets)):
        for g, gpu in enumerate(s.gpus):
            peer_g = local_gpu(s, n)
            if peer_g not in (g, -1):
                peer = s.gpus[peer_g]
                if (
                    peer.paths[NET][n].type <= PATH_P2C
                    and check_gdr(s, peer.rank, n, True)
                    and peer.paths[GPU][g].type <= PATH_NVL
                    and peer.id >> 56 == gpu.id >> 56
                    and (
                        peer.paths[NET][n].bw > gpu.paths[NET][n].bw
                        or gpu.paths[NET][n].type > PATH_PXN
                    )
                ):
                    add_inter_step(s, GPU, peer_g, GPU, g, NET, n)
            if gpu.paths[NET][n].type < PATH_PHB and not check_gdr(s, gpu.rank, n, False):
                c = local_cpu(s, g)
                add_inter_step(s, CPU, c, NET, n, GPU, g)
                add_inter_step(s, CPU, c, GPU, g, NET, n)
    for n, net in enumerate(s.nets):
        net.local_gpu = local_gpu(s, n)
    s.memo = {}


def _gpu_path_types(s: System, t: int) -> list[int]:
    """The types of every GPU's paths to nodes of type t, a GPU's path to itself left out."""
    return [
        p.type
        for i, g in enumerate(s.gpus)
        for j, p in enumerate(g.paths.get(t, []))
        if not (t == GPU and i == j)
    ]


def gpu_min_path(s: System, t: int) -> int:
    """ncclTopoGetGpuMinPath (paths.cc:1029-1041): the best of them, from PATH_SYS down."""
    return min([PATH_SYS, *_gpu_path_types(s, t)])


def gpu_max_path(s: System, t: int) -> int:
    """ncclTopoGetGpuMaxPath (paths.cc:1043-1055): the worst of them, from PATH_LOC up."""
    return max([PATH_LOC, *_gpu_path_types(s, t)])


def split_nvlink(s: System) -> bool:
    """ncclTopoSplitNvLink (paths.cc:1076-1107): two NVLink domains joined by something slower."""
    n = len(s.gpus)
    domain = list(range(n))
    for g in range(n):
        for p in range(g + 1, n):
            if s.gpus[g].paths[GPU][p].type == PATH_NVL:
                domain[p] = domain[g]
    sizes = [0] * n
    for g in range(n):
        sizes[domain[g]] += 1
    return sum(1 for c in sizes if c > 1) == 2
