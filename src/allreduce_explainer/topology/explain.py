"""The server as NCCL sees it, and the search's reasons in plain words, read from its result.

`structure` lists what a drawing needs and nothing NCCL did not build: the CPUs, the PCI tree
under each (switches, GPUs, network cards), the NVSwitch, and the NVLinks and CPU-to-CPU links
with their bandwidths. `reasons` says why the search gave what it gave, from the graphs it
returned (channels and bandwidths before and after ncclTopoDupChannels, the path types it
settled for, the total bandwidth it measured against), and `why` says, per channel, where its
ring goes from one CPU's GPUs to the other's and which card it uses: nothing here is typed for a
preset, so a reader's own file gets its own sentences.
"""

from __future__ import annotations

from .search import PATTERN, Graph
from .system import (
    CPU,
    DEV,
    LINK_NVL,
    LINK_PCI,
    LINK_SYS,
    NET,
    NIC,
    NVS,
    PATH_TYPE,
    PCI,
    Node,
    System,
    find_local_cpu,
)

# what a path type means for a hop, as a reader would say it (graph.h:117-154)
PATH_WORDS = {
    "LOC": "stays on the GPU",
    "NVL": "goes over NVLink",
    "NVB": "goes over NVLink through another GPU",
    "C2C": "goes over the CPU-to-GPU link",
    "PIX": "goes through one PCIe switch",
    "PXB": "goes through several PCIe switches, not the CPU",
    "P2C": "goes through the CPU over its C2C link",
    "PXN": "goes over NVLink to a GPU beside the card, then through its PCIe switch",
    "PHB": "goes through the CPU's PCIe host bridge",
    "SYS": "crosses from one CPU to the other over their interconnect",
    "NET": "goes over the network",
    "DIS": "has no path",
}


def structure(s: System) -> dict:
    """The nodes in PCI-tree order from each CPU (`parent`: the index of the node above, -1 for
    a CPU), then the NVSwitch; `links`: NVLinks and CPU-to-CPU links between those nodes."""
    nodes: list[dict] = []
    index: dict[int, int] = {}  # id(Node) -> its place in nodes (a GPU's DEV stands for it)

    def add(node: Node, parent: int) -> None:
        index[id(node)] = len(nodes)
        nodes.append({**_describe(s, node), "parent": parent})
        me = index[id(node)]
        for lk in node.links:
            rem = lk.rem
            if lk.type == LINK_PCI and id(rem) not in index and rem.type in (PCI, DEV, NIC):
                add(rem, me)

    for cpu in s.nodes[CPU]:
        add(cpu, -1)
    for nvs in s.nodes[NVS]:
        index[id(nvs)] = len(nodes)
        nodes.append({"kind": "nvswitch", "name": "NVSwitch", "parent": -1})
    links, seen = [], set()
    for node in [*s.nodes[CPU], *s.nodes[DEV], *s.nodes[NVS]]:
        for lk in node.links:
            if lk.type not in (LINK_NVL, LINK_SYS) or id(lk.rem) not in index:
                continue
            a, b = index[id(node)], index[id(lk.rem)]
            if (b, a) in seen:
                continue
            seen.add((a, b))
            links.append({"a": a, "b": b, "type": "NVL" if lk.type == LINK_NVL else "SYS",
                          "bw": round(lk.bw, 3)})  # fmt: skip
    return {"nodes": nodes, "links": links}


def _describe(s: System, node: Node) -> dict:
    if node.type == CPU:
        return {"kind": "cpu", "name": f"CPU {s.nodes[CPU].index(node)}"}
    if node.type == DEV:
        gpu = next(g for g in s.gpus if g.parent is node)
        return {"kind": "gpu", "name": f"GPU {gpu.rank}", "rank": gpu.rank}
    if node.type == NIC:
        nets = [lk.rem for lk in node.links if lk.rem.type == NET]
        return {"kind": "nic", "name": ", ".join(n.name for n in nets) or "card",
                "nets": [n.dev for n in nets]}  # fmt: skip
    return {"kind": "pci", "name": "PCIe switch"}


def _cpu_of(s: System, rank: int) -> int:
    """The CPU a GPU hangs under (findLocalCpu from its DEV)."""
    cpu = find_local_cpu(s.gpus[s.rank_index(rank)].parent)
    return s.nodes[CPU].index(cpu) if cpu is not None else -1


def _gb(x: float) -> str:
    return f"{x:g} GB/s"


def reasons(s: System, ring: Graph, tree: Graph, nvls: Graph | None, n_run: int) -> list[str]:
    """Why this many channels, at this speed, over these paths: from the graphs the search
    returned (`n_run`: the channels NCCL runs after connect.cc doubles them)."""
    out = []
    where = "to a network card" if s.inter else "between GPUs"
    out.append(
        f"NCCL measures the most a GPU can move: {_gb(round(s.total_bw, 3))} over its "
        f"{'NVLinks' if s.nodes[NVS] or _has_nvlink(s) else 'PCIe link'}, and "
        f"{_gb(round(s.max_bw, 3))} on its best single path {where}."
    )
    if ring.found:
        n0, bw0, _ = ring.found
        out.append(
            f"The ring search fitted {n0} channel{'s' * (n0 != 1)} at {_gb(round(bw0, 3))} each "
            f"({_gb(round(n0 * bw0, 3))} in all); a channel that fast is split in two "
            f"(ncclTopoDupChannels), so {ring.n_channels} channels at "
            f"{_gb(round(ring.bw_intra, 3))}."
        )
    else:
        out.append(
            f"The ring search fitted {ring.n_channels} channel{'s' * (ring.n_channels != 1)} at "
            f"{_gb(round(ring.bw_intra, 3))} each: the fastest speed on its list at which every "
            "channel's links had room."
        )
    out.append(
        f"NCCL keeps as many tree channels ({PATTERN[tree.pattern]}; init.cc takes the smaller "
        f"of the two searches) and runs every channel twice (connect.cc), so {n_run} channels."
    )
    out.append(
        f"Every hop between two GPUs of a ring {PATH_WORDS[PATH_TYPE[ring.type_intra]]} "
        f"({PATH_TYPE[ring.type_intra]}): the narrowest path type the search could fill the "
        f"channels with{'; to the cards ' + PATH_WORDS[PATH_TYPE[ring.type_inter]] + ' (' + PATH_TYPE[ring.type_inter] + ')' if s.inter else ''}."  # noqa: E501
    )
    if ring.same_channels:
        out.append("Every channel visits the GPUs in the same order (sameChannels).")
    else:
        out.append("The channels differ: one order for all did not fill the links.")
    if nvls is not None and nvls.n_channels:
        out.append(
            f"NVLS (the NVSwitch adds) found {nvls.n_channels} channels at "
            f"{_gb(round(nvls.bw_intra, 3))}."
        )
    return out


def _has_nvlink(s: System) -> bool:
    return any(lk.type == LINK_NVL for d in s.nodes[DEV] for lk in d.links)


def why(s: System, result: dict, channel: int) -> list[str]:
    """Where channel `channel`'s ring crosses from one CPU's GPUs to another's and over what,
    and which card it enters and leaves by (across servers)."""
    ngpus = len(s.gpus)
    ring = result["channels"][channel]["ring"]
    if result["servers"] > 1:  # server 0's part, from the GPU the ring enters it by
        start = next(i for i, r in enumerate(ring) if r < ngpus and ring[i - 1] >= ngpus)
        seg = (ring[start:] + ring[:start])[:ngpus]
    else:
        seg = [*ring, ring[0]]
    paths = result["system"]["gpu_paths"]
    out = []
    crossings = []
    for a, b in zip(seg, seg[1:], strict=False):
        if a >= ngpus or b >= ngpus:
            continue
        ca, cb = _cpu_of(s, a), _cpu_of(s, b)
        if ca != cb:
            crossings.append(f"GPU {a} → GPU {b} ({PATH_WORDS[paths[a][b]]}, {paths[a][b]})")
    if crossings:
        out.append(
            f"Channel {channel}'s ring goes from one CPU's GPUs to another's at "
            + "; ".join(crossings)
            + "."
        )
    elif len(s.nodes[CPU]) > 1:
        out.append(f"Channel {channel}'s ring stays under one CPU inside the server.")
    nics = result["channels"][channel].get("nics")
    if nics:
        net_paths = result["system"]["net_paths"]
        recv, send = nics["recv"], nics["send"]
        ri = next(i for i, n in enumerate(result["system"]["nets"]) if n["dev"] == recv["net"])
        si = next(i for i, n in enumerate(result["system"]["nets"]) if n["dev"] == send["net"])
        out.append(
            f"It enters the server at GPU {recv['rank']} from card {recv['name']}, whose path "
            f"{PATH_WORDS[net_paths[recv['rank']][ri]]} ({net_paths[recv['rank']][ri]})."
        )
        via = (
            f" through GPU {send['pxn_via']} (PXN: a card beside another GPU, reached over NVLink)"
            if send["pxn_via"] is not None
            else f", whose path {PATH_WORDS[net_paths[send['rank']][si]]} "
            f"({net_paths[send['rank']][si]})"
        )
        out.append(f"It leaves from GPU {send['rank']} by card {send['name']}{via}.")
    return out
