"""The system NCCL prints under NCCL_DEBUG_SUBSYS=GRAPH, read back into the System it printed.

ncclTopoPrint (src/graph/topo.cc:336-343 in 2.30.7) prints `=== System : maxBw X totalBw Y ===`,
then ncclTopoPrintRec (topo.cc:285-334) from each CPU: a node's own line, then one line per link,
`+ TYPE[bw] - NODE`, indented to where the node's name starts. A PCI link is followed down (the
child's line continues the `+ PCI[bw] - ` text and its links are indented under it); every other
link is printed as a leaf; the PCI link back up is skipped. The links appear in the order the
system holds them (after ncclTopoSort), so reading them in order rebuilds the same link lists.

What the print leaves out is restored as NCCL builds it: the PCI link up (same bandwidth, last in
the child's links, topo.cc:345-375), and the way back of a link to a node the print never visits
(the NVSwitch, a NIC's NET, a GPU under its DEV). What it never printed is not in the log: the
GPUs' compute capability (taken from the per-link NVLink bandwidth, `sm_from_nvlink`), their
`gdr` flags (from the `GPU Direct RDMA` lines when present), a NET's latency and max channels.

The id format changed with the versions (checked against the tags of NVIDIA/nccl):
- 2.7 to 2.20: `GPU/81000 (0)`, one hex id (`%lX`), system id 0; the header says
  `maxWidth` before 2.18 (topo.cc:218 in 2.7.8) and `maxBw` after; a NET is `(asic/port/bw)`;
  NVLinks join the GPUs themselves.
- 2.21 on: `GPU/0-81000 (0)`, system id and local id (`%lx-%lx`); 2.27 adds the NET's collnet
  flag, `(coll/asic/port/bw)`.
- 2.28 on: a DEV node per physical GPU carries the PCI and NVLinks, `DEV/0-f000 (device)`,
  with `+ LOC[5000.0] - GPU/0-f000` to its GPU, whose rank is no longer printed: it is taken from
  the `Init START`/`Init COMPLETE` lines (`rank R ... busId B`) or else from the bus id order.

Old-format GPUs become a DEV with its GPU under it, as 2.30.7 models them (topo.cc:590-635).
A line that fits none of this is refused with its line number and text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ParamError
from .system import (
    CPU,
    DEV,
    GPU,
    LINK_LOC,
    LINK_NET,
    LINK_PCI,
    LOCAL_ID_MASK,
    NET,
    NODE_TYPE,
    NVS,
    PCI,
    Link,
    Node,
    System,
    connect,
    f32,
    topo_id,
)

FIELD = "topology"
LINK_TYPE = ("LOC", "NVL", "", "C2C", "PCI", "", "", "", "", "SYS", "NET")  # topo.cc:32
HEADER = re.compile(r"=== System : max(?:Bw|Width) ([\d.]+)(?: total(?:Bw|Width) ([\d.]+))? ===")
END = re.compile(r"^={10,}\s*$")
PREFIX = "NCCL INFO "
NODE = re.compile(
    r"^(" + "|".join(NODE_TYPE) + r")/([0-9a-fA-F]+)(?:-([0-9a-fA-F]+))?"
    r"(?: \(([^)]*)\))?(?: \[MLOPart (-?\d+)\])?\s*$"
)
LINK = re.compile(r"^\+ ([A-Z2]+)\[([\d.]+)\] - (.*)$")
RANK_BUSID = re.compile(
    r"\brank (\d+) nranks \d+ cudaDev (\d+)(?: nvmlDev \d+)? busId ([0-9a-fA-F]+)"
)
GDR = re.compile(r"GPU Direct RDMA (Enabled|Disabled) for (?:GPU ([0-9a-fA-F]+) / )?HCA (\d+)")


def bad(line_no: int, text: str, why: str) -> ParamError:
    return ParamError(FIELD, f"line {line_no}: {why}: {text.strip()[:120]!r}")


def message(line: str) -> tuple[str, str]:
    """(prefix, message) of a log line: the text before `NCCL INFO ` names the process and
    thread (`host:pid:tid [dev]`), so one thread's lines can be told from another's."""
    at = line.find(PREFIX)
    if at < 0:
        return "", line.rstrip("\r\n")
    return line[:at], line[at + len(PREFIX) :].rstrip("\r\n")


def is_graph_log(text: str) -> bool:
    """Does the text hold a GRAPH system block (and so is a log, not a topology file)?"""
    return HEADER.search(text) is not None


@dataclass
class Block:
    """One thread's system print and what the same thread printed after it."""

    prefix: str
    header: tuple[float, float | None]
    lines: list[tuple[int, str]]  # (line number, message) between the header and the rule
    after: list[tuple[int, str]] = field(default_factory=list)  # the thread's later lines
    rank_busids: dict[int, int] = field(default_factory=dict)  # bus id -> rank
    gdr_nets: dict[int, bool] = field(default_factory=dict)  # net dev -> GPU Direct RDMA
    version: str | None = None


def find_block(text: str) -> Block:
    """The first `=== System` block of the log, its lines taken from its own thread only
    (every rank prints one, interleaved with the others')."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if HEADER.search(ln)), None)
    if start is None:
        raise ParamError(
            FIELD,
            "has no `=== System : maxBw` line: run with NCCL_DEBUG=INFO "
            "NCCL_DEBUG_SUBSYS=GRAPH (or ALL) to have NCCL print the system",
        )
    prefix, head = message(lines[start])
    m = HEADER.search(head)
    block = Block(prefix, (float(m.group(1)), float(m.group(2)) if m.group(2) else None), [])
    i = start + 1
    while i < len(lines):
        p, msg = message(lines[i])
        i += 1
        if p != prefix:
            continue
        if END.match(msg.strip()):
            break
        block.lines.append((i, msg))
    else:
        raise ParamError(FIELD, f"line {start + 1}: the system block has no closing `=====` line")
    block.after = [(j + 1, m) for j in range(i, len(lines)) for p, m in [message(lines[j])]
                   if p == prefix]  # fmt: skip
    host = prefix.split(":", 1)[0]
    for ln in lines:
        if (v := re.search(r"NCCL version (\d+\.\d+\.\d+)", ln)) and block.version is None:
            block.version = v.group(1)
        if not ln.startswith(host):  # another server's ranks and cards
            continue
        if r := RANK_BUSID.search(ln):
            block.rank_busids.setdefault(int(r.group(3), 16), int(r.group(1)))
        if (g := GDR.search(ln)) and g.group(2) is None:  # the card's own flag, not a pair's
            block.gdr_nets.setdefault(int(g.group(3)), g.group(1) == "Enabled")
    return block


def _id(m: re.Match) -> tuple[int, int]:
    """(system id, local id) of a printed node: `0-81000` or, before 2.21, `81000` (the whole
    64-bit id; `CPU/FFFFFFFFFFFFFFFF` is NUMA node -1)."""
    if m.group(3) is not None:
        return int(m.group(2), 16), int(m.group(3), 16)
    return 0, int(m.group(2), 16) & LOCAL_ID_MASK


class _Reader:
    """ncclTopoPrintRec read backwards: nodes in the order printed, links in the order held."""

    def __init__(self, block: Block):
        self.block = block
        self.s = System()
        self.visited: set[int] = set()  # ids of nodes whose own line was printed
        self.legacy_gpu_links: list[tuple[Node, str, float, str]] = []

    def node(self, no: int, text: str) -> tuple[Node, re.Match]:
        m = NODE.match(text)
        if m is None:
            raise bad(no, text, "not a node as NCCL prints one (TYPE/id)")
        type_ = NODE_TYPE.index(m.group(1))
        sid, local = _id(m)
        nid = topo_id(sid, local)
        n = self.s.node(type_, nid) or self.s.create(type_, nid)
        return n, m

    def visit(self, no: int, text: str) -> Node:
        """A node's own line: create it and read what its parentheses say."""
        n, m = self.node(no, text)
        if id(n) in self.visited:
            raise bad(no, text, "this node is printed twice")
        self.visited.add(id(n))
        info = m.group(4)
        try:
            if n.type == CPU:
                n.arch, n.vendor, n.model = (int(x) for x in (info or "").split("/"))
            elif n.type in (PCI, DEV) and info:
                n.device = int(info, 16)
            elif n.type == GPU:
                n.rank = int(info) if info is not None else -1
        except ValueError:
            raise bad(no, text, f"cannot read ({info}) of a {NODE_TYPE[n.type]}") from None
        return n

    def read_net(self, no: int, text: str, net: Node, bw: float) -> None:
        """`NET/0-1 (coll/asic/port/bw)` or, before 2.27, `(asic/port/bw)` (topo.cc:300-302)."""
        m = NODE.match(text)
        parts = (m.group(4) or "").split("/")
        try:
            if len(parts) == 4:
                net.coll = int(parts.pop(0))
            net.asic, net.port, net.bw = int(parts[0], 16), int(parts[1]), f32(float(parts[2]))
        except (ValueError, IndexError):
            raise bad(no, text, "a NET is printed (asic/port/bw)") from None
        net.dev = int(m.group(3) or m.group(2), 16)
        net.name = f"NET/{net.dev}"
        net.gdr = int(self.block.gdr_nets.get(net.dev, True))

    def read(self) -> System:
        at: dict[int, Node] = {}  # column where a node's name starts -> the node
        ups: list[tuple[Node, Node, float]] = []
        for no, msg in self.block.lines:
            col = len(msg) - len(msg.lstrip(" "))
            body = msg.strip()
            if not body.startswith("+"):
                if col != 0:
                    raise bad(no, msg, "a node line that is not a CPU must follow `+ PCI[bw] - `")
                n = self.visit(no, body)
                if n.type != CPU:
                    raise bad(no, msg, "the print starts each tree at a CPU")
                at = {0: n}
                continue
            parent = at.get(col)
            if parent is None:
                raise bad(no, msg, "its indentation matches no node above it")
            m = LINK.match(body)
            if m is None or m.group(1) not in LINK_TYPE:
                raise bad(no, msg, "not a link as NCCL prints one (+ TYPE[bw] - NODE)")
            ltype, bw, rest = LINK_TYPE.index(m.group(1)), f32(float(m.group(2))), m.group(3)
            if ltype == LINK_PCI:
                bw = pci_bw(bw)
                child = self.visit(no, rest)
                parent.links.append(Link(ltype, bw, child))
                ups.append((child, parent, bw))
                at = {k: v for k, v in at.items() if k <= col}
                at[col + body.index(rest)] = child
                continue
            rem, _ = self.node(no, rest)
            if rem.type == NET and ltype == LINK_NET:
                self.read_net(no, rest, rem, bw)
                bw = rem.bw  # the link is the port's speed (topo.cc:418), printed with %f
            parent.links.append(Link(ltype, bw, rem))
        for child, parent, bw in ups:  # the up link, last (ncclTopoSort, topo.cc:345-375)
            child.links.append(Link(LINK_PCI, bw, parent))
        for n in [n for nodes in self.s.nodes for n in nodes if id(n) in self.visited]:
            for lk in n.links:
                if id(lk.rem) not in self.visited and not any(b.rem is n for b in lk.rem.links):
                    connect(lk.rem, n, lk.type, lk.bw)
        self.devs()
        return self.s

    def devs(self) -> None:
        """2.30.7's shape: a DEV under the PCI tree carrying the NVLinks, its GPU under it."""
        s = self.s
        if s.nodes[DEV]:
            for d in s.nodes[DEV]:
                d.ngpus = sum(1 for lk in d.links if lk.rem.type == GPU)
                d.busid = bus_text(d.id)
            for g in s.gpus:
                g.parent = next((lk.rem for lk in g.links if lk.rem.type == DEV), None)
                if g.parent is None:
                    raise ParamError(FIELD, f"{g.label()} hangs under no DEV node")
            return
        for g in list(s.gpus):  # before 2.28: the GPU node is both
            dev = s.create(DEV, g.id)
            dev.links, g.links = g.links, []
            for nodes in s.nodes:
                for n in nodes:
                    for lk in n.links:
                        if lk.rem is g:
                            lk.rem = dev
            dev.links.insert(0, Link(LINK_LOC, 5000.0, g))
            g.links = [Link(LINK_LOC, 5000.0, dev)]
            g.parent, dev.ngpus = dev, 1
        sms = sm_from_nvlink(s)
        for d in s.nodes[DEV]:
            d.sm = sms
            d.busid = bus_text(d.id)

    def finish(self) -> None:
        """Ranks, devices, compute capability and GDR flags of the GPUs."""
        s = self.s
        sm = sm_from_nvlink(s)
        by_bus = sorted(s.gpus, key=lambda g: g.id & LOCAL_ID_MASK)
        for i, g in enumerate(by_bus):
            if g.rank < 0:
                g.rank = self.block.rank_busids.get(g.id & 0xFFFFFFFFFF, -1)
            g.dev = i
            g.sm = sm
            g.gdr = 1
            g.parent.sm = sm
            g.busid = g.parent.busid
        if any(g.rank < 0 for g in s.gpus):  # no rank printed: the bus id order
            for i, g in enumerate(by_bus):
                g.rank = i


# width x speed / 80 (topo.cc:651-659) for the widths and PCIe generations NCCL meets
PCI_BWS = sorted({f32(w * g / 80.0) for w in (1, 2, 4, 8, 12, 16, 32)
                  for g in (15, 30, 60, 120, 240, 480)})  # fmt: skip


def pci_bw(printed: float) -> float:
    """A PCI link's bandwidth from its `%2.1f` print: the one width x generation value that
    prints so (x1 Gen1, 0.1875, prints 0.2), else the printed value."""
    fits = {b for b in PCI_BWS if f"{b:2.1f}" == f"{printed:2.1f}"}
    return fits.pop() if len(fits) == 1 else printed


def bus_text(node_id: int) -> str:
    """busIdToInt64 (src/misc/utils.cc:33-48) undone: 0x18000 -> "0000:18:00.0"."""
    x = node_id & 0xFFFFFFFFFF
    return f"{x >> 20:04x}:{(x >> 12) & 0xFF:02x}:{(x >> 4) & 0xFF:02x}.{x & 0xF:x}"


def sm_from_nvlink(s: System) -> int:
    """The compute capability the NVLinks' bandwidth implies (ncclTopoNVLinkBw, topo.h:274-283,
    gives one link's GB/s by generation): a multiple of 40.1 is Blackwell (100), of 20.6 Hopper
    (90), of 18 Pascal (60), 12 an RTX A-series bridge (86); 20 per link is Volta or Ampere,
    told apart by the switch (an A100 reaches its peers through an NVSwitch, a DGX-1 V100's
    NVLinks join the GPUs). Without NVLinks, 80: the search's speeds are those of every
    generation before Hopper (search.cc:1053-1058)."""
    bws = [lk.bw for n in s.nodes[GPU] + s.nodes[DEV] for lk in n.links if lk.type == 1]
    to_nvs = any(lk.rem.type == NVS for n in s.nodes[GPU] + s.nodes[DEV] for lk in n.links)
    if not bws:
        return 80

    def multiple(per: float) -> bool:
        return all(abs(b / per - round(b / per)) < 1e-3 and round(b / per) >= 1 for b in bws)

    for per, sm in ((40.1, 100), (20.6, 90)):
        if multiple(per):
            return sm
    if multiple(20.0):
        return 80 if to_nvs else 70
    if multiple(18.0):
        return 60
    if multiple(12.0):
        return 86
    return 80


def read(text: str) -> tuple[System, Block]:
    """The system of a log's first `=== System` block, as NCCL built it before printing."""
    block = find_block(text)
    if not block.lines:
        raise ParamError(FIELD, "the system block is empty")
    r = _Reader(block)
    s = r.read()
    r.finish()
    if not s.gpus:
        raise ParamError(FIELD, "the system block has no GPU")
    return s, block


# ---- the printer (ncclTopoPrint, ncclTopoPrintRec: topo.cc:285-343) and the graphs' lines ----


def node_name(n: Node) -> str:
    return f"{NODE_TYPE[n.type]}/{n.id >> 56:x}-{n.id & LOCAL_ID_MASK:x}"


def _print_rec(n: Node, prev: Node | None, head: str, out: list[str]) -> None:
    if n.type == GPU:
        text = f"{node_name(n)} ({n.rank})"
    elif n.type == CPU:
        text = f"{node_name(n)} ({n.arch}/{n.vendor}/{n.model})"
    elif n.type in (PCI, DEV):
        text = f"{node_name(n)} ({n.device:x})"
    else:
        text = node_name(n)
    out.append(head + text)
    pad = " " * len(head)
    for lk in n.links:
        link = f"+ {LINK_TYPE[lk.type]}[{lk.bw:2.1f}] - "
        if lk.type == LINK_LOC:
            out.append(pad + link + node_name(lk.rem))
        elif lk.type != LINK_PCI or lk.rem is not prev:
            if lk.type == LINK_PCI:
                _print_rec(lk.rem, n, pad + link, out)
            elif lk.rem.type == NET:
                r = lk.rem
                out.append(pad + link + f"{node_name(r)} ({r.coll}/{r.asic:x}/{r.port}/{r.bw:f})")
            else:
                out.append(pad + link + node_name(lk.rem))


def print_system(s: System) -> list[str]:
    """The lines ncclTopoPrint writes (2.30.7's format), without the paths that follow."""
    out = [f"=== System : maxBw {s.max_bw:2.1f} totalBw {s.total_bw:2.1f} ==="]
    for cpu in s.nodes[CPU]:
        _print_rec(cpu, None, "", out)
    out.append("=" * 42)
    return out
