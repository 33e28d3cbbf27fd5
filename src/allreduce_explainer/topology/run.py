"""A topology file through NCCL's init order (src/init.cc:1134-1216, 1280, 1459): the system, its
paths, the ring, tree and NVLS searches, then the channels across `servers` copies of it.

The presets are topology files in this package (presets/*.xml), read the way an upload is read,
so a preset and a reader's file take the same path.
"""

from __future__ import annotations

from importlib import resources

from ..errors import ParamError
from . import connect, explain, graphlog, paths, search, system, xml
from .search import BALANCED_TREE, NVLS, PATTERN, RING, Graph
from .system import GPU, NET, NVS, PATH_TYPE, System

# name -> (file, what it is); the layouts follow the vendors' published block diagrams
PRESETS = {
    "dgx-a100": "DGX A100: 8 A100 SXM (NVSwitch, 12 NVLinks each), 2 AMD Rome CPUs, "
    "8 HDR 200 Gb/s cards, two GPUs and two cards under each pair of PCIe switches",
    "dgx-h100": "DGX H100: 8 H100 SXM (NVSwitch, 18 NVLinks each), 2 Intel Sapphire Rapids "
    "CPUs, 8 ConnectX-7 400 Gb/s cards, one GPU and one card per PCIe switch",
    "dgx-h200": "DGX H200: 8 H200 SXM (NVSwitch, 18 NVLinks each), 2 Intel Emerald Rapids CPUs, "
    "8 ConnectX-7 400 Gb/s cards, one GPU and one card per PCIe switch",
    "dgx-b200": "DGX B200: 8 B200 (NVSwitch, 18 NVLink 5 links each), 2 Intel Emerald Rapids "
    "CPUs, 8 ConnectX-7 400 Gb/s cards, one GPU and one card per PCIe switch",
}
MAX_SERVERS = 64
MAX_CHANNELS_SEARCHED = 32  # MAXCHANNELS / 2 (init.cc:1177)


def preset_text(name: str) -> str:
    """A preset's topology file."""
    if name not in PRESETS:
        raise ParamError("topology", f"no preset {name!r}; presets: {', '.join(PRESETS)}")
    return resources.files(__package__).joinpath("presets", f"{name}.xml").read_text()


def is_log(text: str) -> bool:
    """A log (NCCL_DEBUG_SUBSYS=GRAPH lines), not a topology file (which starts with `<`)."""
    return not text.lstrip().startswith("<") and graphlog.is_graph_log(text)


def read_system(text: str) -> System:
    """A topology file, or a log whose GRAPH lines print the system (graphlog.py)."""
    if is_log(text):
        return graphlog.read(text)[0]
    return system.from_xml(xml.parse(text))


def load(text: str, servers: int = 1, p2p_level: int | None = None) -> System:
    """ncclTopoGetSystem, ComputePaths, TrimSystem and SearchInit (init.cc:1140-1150) for one
    server of a job on `servers` of them; GPU ranks renumbered 0..n-1 in the file's rank order."""
    return prepare(read_system(text), servers, p2p_level)


def prepare(s: System, servers: int = 1, p2p_level: int | None = None) -> System:
    """Paths and the search's bandwidths of a built system, ranks renumbered 0..n-1;
    `p2p_level` is the user's P2P level (System.p2p_level), None for NCCL's own."""
    ranks = sorted(g.rank for g in s.gpus)
    if len(set(ranks)) != len(ranks):
        raise ParamError("topology", f"two <gpu> elements have the same rank ({ranks})")
    for g in s.gpus:
        g.rank = ranks.index(g.rank)
    s.inter = 1 if servers > 1 else 0
    s.p2p_level = p2p_level
    paths.compute(s)
    search.search_init(s)
    return s


def graphs(s: System) -> tuple[Graph, Graph, Graph | None]:
    """init.cc:1173-1216: ring, then tree with the ring's channel count, then NVLS."""
    ring = search.compute(s, Graph(0, RING, 1, MAX_CHANNELS_SEARCHED))
    tree = search.compute(s, Graph(1, BALANCED_TREE, ring.n_channels, ring.n_channels))
    nvls = None
    if s.nodes[NVS] and s.comp_cap()[0] >= 90:
        nvls = search.compute(s, Graph(3, NVLS, 1, system.MAXCHANNELS))
    n = min(ring.n_channels, tree.n_channels)
    ring.n_channels = tree.n_channels = n  # init.cc:1459
    return ring, tree, nvls


def _net_name(s: System, net_id: int) -> dict:
    n = next(i for i, x in enumerate(s.nets) if x.id == net_id)
    return {"dev": s.nets[n].dev, "name": s.nets[n].name, "index": n}


def _graph_json(s: System, g: Graph) -> dict:
    ngpus = len(s.gpus)
    width = 1 if g.pattern == NVLS else ngpus  # NVLS channels list their head only
    chans = []
    for c in range(g.n_channels):
        entry = {"channel": c, "gpus": g.intra[c * ngpus : c * ngpus + width]}
        if s.inter:
            entry["net_in"] = _net_name(s, g.inter[2 * c])["dev"]
            entry["net_out"] = _net_name(s, g.inter[2 * c + 1])["dev"]
        chans.append(entry)
    return {
        "id": g.id,
        "pattern": PATTERN[g.pattern],
        "nChannels": g.n_channels,
        "bwIntra": round(g.bw_intra, 3),
        "bwInter": round(g.bw_inter, 3),
        "typeIntra": PATH_TYPE[g.type_intra],
        "typeInter": PATH_TYPE[g.type_inter],
        "sameChannels": g.same_channels,
        "crossNic": g.cross_nic,
        "channels": chans,
    }


def _nics(s: System, ring: Graph, channel: int) -> dict:
    """The cards channel c uses on server 0 (ncclTopoGetNetDev with the ring graph,
    search.cc:1400-1414): its first GPU receives on inter[0], its last sends on inter[1], through
    an NVLink peer's card when the path is PXN."""
    ngpus = len(s.gpus)
    c = channel % ring.n_channels
    first, last = ring.intra[c * ngpus], ring.intra[c * ngpus + ngpus - 1]
    recv, send = _net_name(s, ring.inter[2 * c]), _net_name(s, ring.inter[2 * c + 1])
    proxy = paths.intermediate_rank(s, last, send["index"])
    return {
        "recv": {"rank": first, "net": recv["dev"], "name": recv["name"]},
        "send": {"rank": last, "net": send["dev"], "name": send["name"], "pxn_via": proxy
                 if proxy != last else None},
    }  # fmt: skip


def topology(text: str, servers: int = 1, p2p_level: int | None = None) -> dict:
    """NCCL 2.30.7's search on a topology file for a job on `servers` such servers: the system,
    the ring, tree and NVLS graphs, and every channel's ring and tree after duplication."""
    if not 1 <= servers <= MAX_SERVERS:
        raise ParamError("servers", f"must be between 1 and {MAX_SERVERS}")
    s = load(text, servers, p2p_level)
    try:
        ring, tree, nvls = graphs(s)
    except RecursionError:  # NCCL recurses once per GPU per channel (search.cc:621-722)
        raise ParamError(
            "topology",
            f"{len(s.gpus)} GPUs in one server: the search goes deeper than Python's "
            "stack allows here",
        ) from None
    ngpus = len(s.gpus)
    cc_min = s.comp_cap()[0]
    chans = connect.channels(ring, tree, ngpus, servers, cc_min)
    out_channels = []
    for c, ch in enumerate(chans):
        entry = {"channel": c, "ring": ch.ring(), "tree": ch.tree()}
        if servers > 1:
            entry["nics"] = _nics(s, ring, c)
        out_channels.append(entry)
    out = {
        "servers": servers,
        "gpus_per_server": ngpus,
        "ranks": ngpus * servers,
        "system": _system_json(s),
        "graphs": {
            "ring": _graph_json(s, ring),
            "tree": _graph_json(s, tree),
            "nvls": _graph_json(s, nvls) if nvls else None,
        },
        "nvls_heads": _heads(nvls, ngpus) if nvls else [],
        "coll_channels": len(chans),
        "channels": out_channels,
        "structure": explain.structure(s),
        "reasons": explain.reasons(s, ring, tree, nvls, len(chans)),
    }
    for entry in out_channels:  # where each ring crosses the CPUs, which card it uses
        entry["why"] = explain.why(s, out, entry["channel"])
    return out


def _heads(nvls: Graph, ngpus: int) -> list[int]:
    """ncclTopoPreset's NVLS heads (connect.cc:75-90): each channel's first GPU, once."""
    out: list[int] = []
    for c in range(nvls.n_channels):
        if nvls.intra[c * ngpus] not in out:
            out.append(nvls.intra[c * ngpus])
    return out


def _system_json(s: System) -> dict:
    """The nodes as NCCL prints them (topo.cc:285-343) and the GPU-to-GPU and GPU-to-NET path
    types and bandwidths (paths.cc:132-186)."""
    gpus = s.gpus
    return {
        "maxBw": round(s.max_bw, 3),
        "totalBw": round(s.total_bw, 3),
        "cpus": len(s.nodes[system.CPU]),
        "pci_switches": len(s.nodes[system.PCI]),
        "nvswitch": bool(s.nodes[NVS]),
        "gpus": [{"rank": g.rank, "dev": g.dev, "busid": g.busid, "sm": g.sm} for g in gpus],
        "nets": [{"dev": n.dev, "name": n.name, "bw": round(n.bw, 3)} for n in s.nets],
        "gpu_paths": [[PATH_TYPE[p.type] for p in g.paths[GPU]] for g in gpus],
        "gpu_path_bw": [[round(p.bw, 3) for p in g.paths[GPU]] for g in gpus],
        "net_paths": [[PATH_TYPE[p.type] for p in g.paths.get(NET, [])] for g in gpus],
    }
