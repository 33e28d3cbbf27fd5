"""A log's own printed search held against the port's: the graphs NCCL printed under
NCCL_DEBUG_SUBSYS=GRAPH (ncclTopoPrintGraph, search.cc:1318-1350: `Pattern ...` and its channel
lines) beside the ring and tree searches run on the system the same log printed (graphlog.py),
field by field and channel line by channel line. It sits above run.py, which reads a log's
system through graphlog.py and never imports this module; the api attaches its `log`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ..errors import ParamError
from . import run, search
from .graphlog import HEADER, Block, node_name, read
from .system import LOCAL_ID_MASK, NET, NODE_TYPE, PATH_TYPE, System

PATTERN = re.compile(
    r"Pattern (\d+), crossNic (\d+), nChannels (\d+), (?:bw|speed) ([\d.]+)/([\d.]+), "
    r"type (\w+)/(\w+), sameChannels (\d+)"
)
CHANNEL = re.compile(r"^ ?(\d+) :((?: (?:NET|GPU)/[0-9a-fA-F-]+)+)\s*$")


@dataclass
class PrintedGraph:
    """One ncclTopoPrintGraph (search.cc:1318-1350) as a log shows it."""

    line: int
    pattern: int
    cross_nic: int
    n_channels: int
    bw_intra: float
    bw_inter: float
    type_intra: str
    type_inter: str
    same_channels: int
    channels: list[list[str]] = field(default_factory=list)


def printed_graphs(block: Block) -> list[PrintedGraph]:
    """The search results the thread that printed the system printed next, in order."""
    out: list[PrintedGraph] = []
    for no, msg in block.after:
        if m := PATTERN.search(msg):
            p, x, n, bi, be, ti, te, sc = m.groups()
            out.append(PrintedGraph(no, int(p), int(x), int(n), float(bi), float(be), ti, te,
                                    int(sc)))  # fmt: skip
        elif out and (c := CHANNEL.match(msg)) and int(c.group(1)) == len(out[-1].channels):
            out[-1].channels.append(c.group(2).split())
        elif HEADER.search(msg):
            break
    return out


# ---- a log's own search results held against the port's, field by field ----

FIELDS = ("pattern", "crossNic", "nChannels", "bwIntra", "bwInter", "typeIntra", "typeInter",
          "sameChannels")  # fmt: skip


def _version(block: Block) -> tuple[int, int]:
    """The log's NCCL version (major, minor); without a version line, guessed from the ids:
    DEV nodes appear in 2.28, `sid-local` ids in 2.21."""
    if block.version:
        major, minor = block.version.split(".")[:2]
        return int(major), int(minor)
    if any(re.search(r"\bDEV/", m) for _, m in block.lines):
        return (2, 28)
    if any(re.search(r"\b(?:CPU|GPU)/[0-9a-fA-F]+-", m) for _, m in block.lines):
        return (2, 21)
    return (2, 20)


def _channel_line(s: System, g, c: int, ranks: dict[int, int], version: tuple) -> list[str]:
    """ncclTopoPrintGraph's channel line as the log's version printed it (search.cc): GPUs by
    rank before 2.28 and by topology id since; NETs by their whole id (`%lx`) before 2.23 and
    as `sid-local` since, 2.23 printing the first NET's id in both places (search.cc:1145 in
    2.23.4 reads inter[2*c] where 2.24 reads inter[2*c+1])."""
    ngpus = len(s.gpus)

    def net(node_id: int) -> str:
        if version < (2, 23):
            return f"NET/{node_id & LOCAL_ID_MASK:x}"
        return _name_id(NET, node_id)

    out: list[str] = []
    if s.inter:
        out.append(net(g.inter[2 * c]))
    for i in range(ngpus):
        rank = g.intra[ngpus * c + i]
        gpu = next(x for x in s.gpus if x.rank == rank)
        out.append(f"GPU/{ranks[id(gpu)]}" if version < (2, 28) else node_name(gpu))
        if g.id == 3:
            break
    if s.inter:
        out.append(net(g.inter[2 * c + (0 if version == (2, 23) else 1)]))
    return out


def _name_id(type_: int, node_id: int) -> str:
    return f"{NODE_TYPE[type_]}/{node_id >> 56:x}-{node_id & LOCAL_ID_MASK:x}"


def searched_channels(version: str | None) -> int:
    """The ring search's channel bound, MAXCHANNELS/2 (init.cc:1177 in 2.30.7): MAXCHANNELS
    (src/include/device.h) was 32 until 2.24 and is 64 from 2.25, so a log of an older
    version searched for 16 channels at most."""
    if version and tuple(int(x) for x in version.split(".")[:2]) < (2, 25):
        return 16
    return run.MAX_CHANNELS_SEARCHED


def _searched(s: System, servers: int, version: str | None, p2p_level: int | None) -> tuple:
    """The port's ring and tree searches (init.cc:1173-1190, before the two counts are made
    equal) on a system, for that many servers and that P2P level (System.p2p_level)."""
    run.prepare(s, servers, p2p_level)
    ring = search.compute(s, search.Graph(0, search.RING, 1, searched_channels(version)))
    tree = search.compute(
        s, search.Graph(1, search.BALANCED_TREE, ring.n_channels, ring.n_channels)
    )
    return ring, tree


def _fields(g) -> dict:
    return {
        "pattern": g.pattern, "crossNic": g.cross_nic, "nChannels": g.n_channels,
        "bwIntra": round(g.bw_intra, 6), "bwInter": round(g.bw_inter, 6),
        "typeIntra": PATH_TYPE[g.type_intra], "typeInter": PATH_TYPE[g.type_inter],
        "sameChannels": g.same_channels,
    }  # fmt: skip


def _printed(p: PrintedGraph | None) -> dict | None:
    if p is None:
        return None
    return {
        "pattern": p.pattern, "crossNic": p.cross_nic, "nChannels": p.n_channels,
        "bwIntra": p.bw_intra, "bwInter": p.bw_inter, "typeIntra": p.type_intra,
        "typeInter": p.type_inter, "sameChannels": p.same_channels,
        "channels": p.channels, "line": p.line,
    }  # fmt: skip


def held_against(text: str, servers: int | None = None, p2p_level: int | None = None) -> dict:
    """The port's ring and tree searches on the system a log printed, next to the graphs the
    same thread printed: each field and each channel line, printed and computed. `servers`
    defaults to 2 when the printed channels start at a NET (the job crossed servers), else 1."""
    s, block = read(text)
    printed = printed_graphs(block)
    if servers is None:
        servers = (
            2 if any(ch and ch[0].startswith("NET/") for p in printed for ch in p.channels) else 1
        )
    ranks = {id(g): g.rank for g in s.gpus}
    ring, tree = _searched(s, servers, block.version, p2p_level)
    version = _version(block)
    rows = []
    for name, g, p in (("ring", ring, printed[0] if printed else None),
                       ("tree", tree, printed[1] if len(printed) > 1 else None)):  # fmt: skip
        lines = [_channel_line(s, g, c, ranks, version) for c in range(g.n_channels)]
        mine = {**_fields(g), "channels": lines}
        rows.append({"graph": name, "computed": mine, "printed": _printed(p)})
    return {"nccl_version": block.version, "servers": servers, "graphs": rows}


# ---- a graph dump (NCCL_GRAPH_DUMP_FILE) held against the port's search on its topology ----


def dumped_graphs(text: str, rank_of_dev: dict[int, int]) -> list[PrintedGraph]:
    """ncclTopoGetXmlFromGraphs' file (search.cc:1002-1031 in 2.30.7), its graphs in file order
    (ring, then tree): a channel lists its NET by `dev` and its GPUs by CUDA device (`dev`,
    `%d` until 2.20, `0x%lx` with the system id since 2.21), written here as `GPU/<rank>`."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ParamError("graphs", f"is not XML: {e}") from None
    out = []
    for no, g in enumerate(root.iter("graph")):
        a = g.attrib
        p = PrintedGraph(no, int(a["pattern"]), int(a["crossnic"]), int(a["nchannels"]),
                         float(a["speedintra"]), float(a["speedinter"]), a["typeintra"],
                         a["typeinter"], int(a["samechannels"]))  # fmt: skip
        for c in g.iter("channel"):
            p.channels.append([
                f"NET/{int(x.get('dev'), 0) & LOCAL_ID_MASK:x}" if x.tag == "net"
                else f"GPU/{rank_of_dev[int(x.get('dev'), 0) & LOCAL_ID_MASK]}"
                for x in c
            ])  # fmt: skip
        out.append(p)
    return out


def check_dump(topology: str, graphs: str, servers: int = 1, p2p_level: int | None = None) -> dict:
    """A topology file's ring and tree searches by the port next to the graphs NCCL dumped
    for it, field by field and channel by channel, with the tally `check` gives."""
    s = run.read_system(topology)
    printed = dumped_graphs(graphs, {g.dev: g.rank for g in s.gpus})
    ring, tree = _searched(s, servers, None, p2p_level)
    rows = []
    for name, g, p in (("ring", ring, printed[0] if printed else None),
                       ("tree", tree, printed[1] if len(printed) > 1 else None)):  # fmt: skip
        ngpus = len(s.gpus)
        lines = []
        for c in range(g.n_channels):
            gpus = [f"GPU/{r}" for r in g.intra[ngpus * c : ngpus * (c + 1)]]
            nets = (
                [f"NET/{s.node(NET, g.inter[2 * c + i]).dev:x}" for i in (0, 1)] if s.inter else []
            )
            lines.append(nets[:1] + gpus + nets[1:])
        rows.append({"graph": name, "computed": {**_fields(g), "channels": lines},
                     "printed": _printed(p)})  # fmt: skip
    r = {"nccl_version": None, "servers": servers, "graphs": rows}
    return {**r, **tally(r)}


def differences(result: dict) -> list[str]:
    """`graph.field` (or `graph.channel N`) where the port and the log disagree."""
    out = []
    for row in result["graphs"]:
        mine, theirs = row["computed"], row["printed"]
        if theirs is None:
            continue
        for f in FIELDS:
            a, b = mine[f], theirs[f]
            if (abs(a - b) > 1e-4) if isinstance(a, float) else a != b:
                out.append(f"{row['graph']}.{f}")
        for c in range(max(len(mine["channels"]), len(theirs["channels"]))):
            a = mine["channels"][c] if c < len(mine["channels"]) else None
            b = theirs["channels"][c] if c < len(theirs["channels"]) else None
            if a != b:
                out.append(f"{row['graph']}.channel {c}")
    return out


def tally(result: dict) -> dict:
    """How many of the printed fields and channel lines the port computes equally."""
    diffs = set(differences(result))
    fields = channels = fields_eq = channels_eq = 0
    for row in result["graphs"]:
        theirs = row["printed"]
        if theirs is None:
            continue
        fields += len(FIELDS)
        fields_eq += sum(f"{row['graph']}.{f}" not in diffs for f in FIELDS)
        n = max(len(row["computed"]["channels"]), len(theirs["channels"]))
        channels += n
        channels_eq += sum(f"{row['graph']}.channel {c}" not in diffs for c in range(n))
    return {"fields": fields, "fields_equal": fields_eq, "channels": channels,
            "channels_equal": channels_eq, "differences": sorted(diffs)}  # fmt: skip


def check(text: str, servers: int | None = None, p2p_level: int | None = None) -> dict:
    """A log's printed search held against the port's: the version, the servers the
    comparison assumed, each graph's printed and computed fields and the tally."""
    r = held_against(text, servers, p2p_level)
    return {**r, **tally(r)}
