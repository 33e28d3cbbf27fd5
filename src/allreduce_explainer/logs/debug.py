"""Read what NCCL prints at start-up under `NCCL_DEBUG=INFO`: its version, the ranks and servers,
each channel's ring and tree, NVLS and CollNet, the network and its cards, GPUDirect RDMA, and
(with `NCCL_DEBUG_SUBSYS` including TUNING) the algorithm and protocol of each call.

The lines read, as NVIDIA/nccl 2.30.7 prints them (older releases print the same words):

- `NCCL version 2.22.3+cuda12.2` (src/init.cc:695);
- `comm 0x.. rank R nRanks N nNodes M localRanks L localRank l MNNVL 0` (src/init.cc:1422;
  releases before about 2.19 print `comm 0x.. rank R nranks N cudaDev ..`, which gives N only);
- `Channel 00/16 :  0 7 6 ...` (src/graph/rings.cc:48, rank 0 only, cut to 128 characters
  with `...`: a long ring's tail is then missing);
- `Trees [0] 1/8/-1->0->-1 [1] ...` (src/init.cc:1491-1497): every rank prints its own place,
  `down0/down1/down2->rank->up`, per channel; a channel's tree is the union of the ranks' lines;
- `NVLS multicast support is [not ]available on dev D` (src/transport/nvls.cc:279) and
  `16 coll channels, 0 collnet channels, 16 nvls channels, ...` (src/init.cc:1646);
- `Using network IB` (src/init.cc:486), `NET/IB : Using [0]mlx5_0:1/IB ...`,
  `NET/Socket : Using [0]eth0:...`, `NET/OFI Selected Provider is efa (found 32 nics)`, and the
  connection lines `Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA`;
- tuning lines: `65536 Bytes -> Algo 0 proto 0 time 37.8` (before 2.24, indices; 2.23 prefixes
  the collective) and `AllReduce: 1048576 Bytes -> Algo Ring proto Simple channel{Lo..Hi}=...`.

Each line may carry any prefix (mpirun's `[1,0]<stdout>:`, `[0]`, srun's `0: `, PyTorch's
`[rank0]:`, a host:pid:tid header), or none at all: the message is found after `NCCL INFO `,
else matched at the line's start. Every pattern is anchored and linear; lines are cut to
MAX_LINE characters before matching, so a hostile file costs its length, no more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ParamError
from ..nccl import versions

MAX_LINE = 4000  # a Trees line of 32 channels is about 1,100 characters
INFO = "NCCL INFO "
VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(\S*)")
COMM = re.compile(
    r"comm (0x[0-9a-fA-F]+) rank (\d+) nRanks (\d+) nNodes (\d+) localRanks (\d+) localRank (\d+)"
)
COMM_OLD = re.compile(r"(?:\w+ )?comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) ")
RING = re.compile(r"Channel (\d+)/(\d+) :((?: +\d+)*)( ?\.\.\.)? *$")
TREES = re.compile(r"Trees((?: \[\d+\] -?\d+/-?\d+/-?\d+->\d+->-?\d+)+)")
TREE = re.compile(r"\[(\d+)\] (-?\d+)/(-?\d+)/(-?\d+)->(\d+)->(-?\d+)")
NVLS = re.compile(r"NVLS multicast support is (not )?available on dev (\d+)")
COUNTS = re.compile(
    r"(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?"
    r"(\d+) p2p channels"
)
USING = re.compile(r"Using network (\S.*?) *$")
NET_IB = re.compile(r"NET/IB ?: Using (.*)$")
IB_CARD = re.compile(r"\[(\d+)\]([\w.-]+):(\d+)/(IB|RoCE)(/SHARP)?")
NET_SOCKET = re.compile(r"NET/Socket ?: Using (.*)$")
SOCKET_CARD = re.compile(r"\[(\d+)\]([\w.-]+):")
OFI = re.compile(r"NET/OFI Selected [Pp]rovider is (\w+)(?: \(found (\d+) nics\))?")
GDR_HCA = re.compile(r"NET/IB ?: GPU Direct RDMA (Enabled|Disabled) for HCA (\d+)")
CONNECT = re.compile(
    r"Channel (\d+)/\d+ : (\d+)\[\w+\] -> (\d+)\[\w+\](?: \[(send|receive)\])? via (\S+(?: \S+)?)"
)
COLLNET_PLUGIN = re.compile(r"NET/Plugin ?: Loaded collnet plugin (\S+)")
COLLNET_MISSING = re.compile(
    r"NET/Plugin ?: (?:Failed to find|Could not find:?) (?:ncclCollNetPlugin|libnccl-net)"
)
TUNING_OLD = re.compile(r"(?:(\w+): )?(\d+) Bytes -> Algo (\d+) proto (\d+) time ([\d.]+)")
TUNING = re.compile(r"(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}")
DEVICE = re.compile(r"#\s+Rank\s+\d+.*?\bdevice\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$")
HOPPER = ("H100", "H200", "H800", "H20", "GH200")


@dataclass
class _Comm:
    """One communicator, as its rank lines describe it."""

    ptr: str
    ranks: int
    nodes: int | None
    local_ranks: int | None
    rings: dict[int, dict] = field(default_factory=dict)
    trees: dict[int, dict[int, tuple[int, int, int, int]]] = field(default_factory=dict)
    channels: int | None = None


@dataclass
class _State:
    """What the lines read so far say."""

    version: str | None = None
    version_line: tuple[int, str] | None = None
    comms: dict[str, _Comm] = field(default_factory=dict)
    by_thread: dict[str, str] = field(default_factory=dict)
    nvls: dict[bool, list[tuple[int, str]]] = field(default_factory=lambda: {True: [], False: []})
    counts: tuple[int, str, tuple] | None = None
    using: tuple[int, str, str] | None = None
    cards: list[dict] = field(default_factory=list)
    cards_line: tuple[int, str] | None = None
    socket_cards: list[str] = field(default_factory=list)
    ofi: tuple[int, str, str, int | None] | None = None
    gdr: dict[bool, tuple[int, str]] = field(default_factory=dict)
    transports: dict[str, tuple[int, str]] = field(default_factory=dict)
    collnet_plugin: tuple[int, str, str] | None = None
    collnet_missing: tuple[int, str] | None = None
    net_devices: set[int] = field(default_factory=set)
    calls: dict[tuple, dict] = field(default_factory=dict)
    device: str | None = None
    matched: int = 0


def _message(line: str) -> tuple[str, str]:
    """(thread key, message) of one line: the text after 'NCCL INFO ', keyed by the word before
    its ` [dev] ` (NCCL's host:pid:tid, with any launcher's tag); a line without 'NCCL INFO '
    is its own message, keyed ''. No regex: str methods, linear in the line."""
    at = line.find(INFO)
    if at < 0:
        return "", line.strip()
    head = line[:at].rstrip()
    if head.endswith("]"):
        head = head[: head.rfind("[")].rstrip()
    return head.rsplit(" ", 1)[-1], line[at + len(INFO) :].rstrip()


def read(text: str) -> dict:
    """The debug lines of a log, read; raises ParamError('log') if none is NCCL's."""
    s = _State()
    for i, raw in enumerate(text.splitlines(), 1):
        _line(s, i, raw[:MAX_LINE])
    if not s.matched:
        raise ParamError(
            "log",
            "has no NCCL_DEBUG=INFO lines (NCCL version, comm ... nRanks, Channel 00/.., Trees, "
            "Using network ...): run with NCCL_DEBUG=INFO and paste its output",
        )
    return _result(s)


def _line(s: _State, i: int, line: str) -> None:
    """Read one line into the state (unknown lines change nothing)."""
    dev = DEVICE.search(line) if "#" in line and "device" in line else None
    if dev and s.device is None:
        s.device = dev[1]
        return
    vat = line.find("NCCL version ")
    if vat >= 0 and s.version is None:
        m = VERSION.match(line, vat)
        if m:
            s.version, s.version_line = m[1], (i, line.strip())
            s.matched += 1
            return
    key, msg = _message(line)
    for reader in _READERS:
        if reader(s, i, key, msg, line):
            s.matched += 1
            return


def _comm(s: _State, i, key, msg, line) -> bool:
    m = COMM.match(msg)
    if m:
        ptr, ranks, nodes, local = m[1], int(m[3]), int(m[4]), int(m[5])
    else:
        m = COMM_OLD.match(msg)
        if not m:
            return False
        ptr, ranks, nodes, local = m[1], int(m[3]), None, None
    group = str(ranks)  # every rank prints its own comm pointer: a communicator is its size
    c = s.comms.get(group)
    if c is None:
        c = s.comms[group] = _Comm(ptr, ranks, nodes, local)
    elif nodes is not None and c.nodes is None:
        c.nodes, c.local_ranks = nodes, local
    s.by_thread[key] = group
    return True


def _current(s: _State, key: str) -> _Comm:
    """The communicator a thread's lines belong to: its last comm line's, else one shared
    stand-in (an excerpt that starts after the comm lines)."""
    group = s.by_thread.get(key, "unknown")
    if group not in s.comms:
        s.comms[group] = _Comm(group, 0, None, None)
    return s.comms[group]


def _ring(s: _State, i, key, msg, line) -> bool:
    m = RING.match(msg)
    if not m:
        return False
    c = _current(s, key)
    ch = int(m[1])
    if ch not in c.rings:
        order = [int(x) for x in m[3].split()]
        c.rings[ch] = {"ring": order, "truncated": bool(m[4]), "line": (i, line.strip())}
        c.channels = int(m[2])
    return True


def _trees(s: _State, i, key, msg, line) -> bool:
    m = TREES.match(msg)
    if not m:
        return False
    c = _current(s, key)
    for t in TREE.finditer(m[1]):
        ch, d0, d1, d2, rank, up = (int(x) for x in t.groups())
        c.trees.setdefault(ch, {}).setdefault(rank, (d0, d1, d2, up))
    return True


def _nvls(s: _State, i, key, msg, line) -> bool:
    m = NVLS.match(msg)
    if m:
        s.nvls[not m[1]].append((i, line.strip()))
    return bool(m)


def _counts(s: _State, i, key, msg, line) -> bool:
    m = COUNTS.match(msg)
    if m and s.counts is None:
        s.counts = (i, line.strip(), tuple(None if x is None else int(x) for x in m.groups()))
    return bool(m)


def _network(s: _State, i, key, msg, line) -> bool:
    m = USING.match(msg)
    if m:
        if s.using is None:
            s.using = (i, line.strip(), m[1])
        return True
    m = NET_IB.match(msg)
    if m:
        if not s.cards:
            s.cards = [
                {"index": int(c[1]), "name": c[2], "port": int(c[3]), "link": c[4],
                 "sharp": bool(c[5])}
                for c in IB_CARD.finditer(m[1])
            ]  # fmt: skip
            s.cards_line = (i, line.strip())
        return True
    m = NET_SOCKET.match(msg)
    if m:
        if not s.socket_cards:
            s.socket_cards = [c[2] for c in SOCKET_CARD.finditer(m[1])]
            s.cards_line = s.cards_line or (i, line.strip())
        return True
    m = OFI.match(msg)
    if m:
        if s.ofi is None:
            s.ofi = (i, line.strip(), m[1], int(m[2]) if m[2] else None)
        return True
    m = GDR_HCA.match(msg)
    if m:
        s.gdr.setdefault(m[1] == "Enabled", (i, line.strip()))
        return True
    m = COLLNET_PLUGIN.match(msg)
    if m:
        s.collnet_plugin = s.collnet_plugin or (i, line.strip(), m[1])
        return True
    if COLLNET_MISSING.match(msg):
        s.collnet_missing = s.collnet_missing or (i, line.strip())
        return True
    return False


def _connect(s: _State, i, key, msg, line) -> bool:
    m = CONNECT.match(msg)
    if not m:
        return False
    via = m[5]
    if via.startswith("NET/"):
        parts = via.split("/")
        name = parts[1] if len(parts) > 1 else via
        s.transports.setdefault(name, (i, line.strip()))
        if len(parts) > 2 and parts[2].isdigit() and len(s.net_devices) < 1024:
            s.net_devices.add(int(parts[2]))
        if via.endswith("/GDRDMA"):
            s.gdr.setdefault(True, (i, line.strip()))
    return True


def _tuning(s: _State, i, key, msg, line) -> bool:
    m = TUNING.match(msg)
    if m:
        coll, nbytes, algo, proto = m[1], int(m[2]), m[3], m[4]
    else:
        m = TUNING_OLD.match(msg)
        if not m:
            return False
        a, p = int(m[3]), int(m[4])
        if a >= len(versions.ALGORITHM_INDEX) or p >= len(versions.PROTOCOL_INDEX):
            return True
        coll, nbytes = m[1], int(m[2])
        algo, proto = versions.ALGORITHM_INDEX[a], versions.PROTOCOL_INDEX[p]
    k = (coll, nbytes, algo, proto)
    if k in s.calls:
        s.calls[k]["count"] += 1
    else:
        s.calls[k] = {"collective": coll, "bytes": nbytes, "algorithm": algo, "protocol": proto,
                      "count": 1, "line": i, "evidence": line.strip()}  # fmt: skip
    return True


_READERS = (_comm, _ring, _trees, _nvls, _counts, _network, _connect, _tuning)


# ---- the result --------------------------------------------------------------------------------


def _main_comm(s: _State) -> _Comm | None:
    """The communicator the log is about: the one of the most ranks that has rings or trees,
    with the lines of threads whose comm line the log does not show (an excerpt) merged in."""
    comms = [c for c in s.comms.values() if c.rings or c.trees] or list(s.comms.values())
    main = max(comms, key=lambda c: c.ranks, default=None)
    stray = s.comms.get("unknown")
    if main is not None and stray is not None and stray is not main:
        for ch, ring in stray.rings.items():
            main.rings.setdefault(ch, ring)
        for ch, entries in stray.trees.items():
            for rank, place in entries.items():
                main.trees.setdefault(ch, {}).setdefault(rank, place)
        main.channels = main.channels or stray.channels
    return main


def tree_of(entries: dict[int, tuple[int, int, int, int]]) -> dict:
    """A channel's tree from the ranks' lines: its root(s) and each rank's parent and children."""
    parent = {r: up for r, (_, _, _, up) in entries.items()}
    children = {r: [d for d in (d0, d1, d2) if d >= 0] for r, (d0, d1, d2, _) in entries.items()}
    roots = sorted(r for r, up in parent.items() if up < 0)
    return {
        "roots": roots,
        "parent": {str(r): parent[r] for r in sorted(parent)},
        "children": {str(r): children[r] for r in sorted(children)},
    }


def _evidence(item: tuple | None) -> str | None:
    return None if item is None else item[1]


def _network_summary(s: _State, nodes: int | None) -> dict:
    """The transport between servers, its cards and whether GPUDirect RDMA is used."""
    name = s.using[2] if s.using else None
    transport = None
    if name:
        low = name.lower()
        if "libfabric" in low or "ofi" in low:
            transport = "AWS Libfabric (EFA)" if (s.ofi and s.ofi[2] == "efa") else "Libfabric"
        elif low.startswith("ib"):
            roce = any(c["link"] == "RoCE" for c in s.cards)
            transport = "RoCE" if roce else "IB"
        elif low.startswith("socket"):
            transport = "Socket"
        else:
            transport = name
    elif s.cards:
        transport = "RoCE" if any(c["link"] == "RoCE" for c in s.cards) else "IB"
    elif s.transports:
        first = next(iter(s.transports))
        transport = "Socket" if first == "Socket" else first
    elif s.socket_cards:
        transport = "Socket"
    # the network devices NCCL uses per server: those its connection lines name, else the
    # cards NET/IB lists, else what the OFI plugin found (AWS groups 4 EFA cards in one device)
    cards = len(s.net_devices) or len(s.cards) or (s.ofi[3] if s.ofi and s.ofi[3] else None)
    gdr = True if True in s.gdr else False if False in s.gdr else None
    used = sorted(s.transports)
    evidence = _evidence(s.using) or _evidence(s.cards_line) or _evidence(s.ofi)
    if not evidence and s.transports:
        evidence = next(iter(s.transports.values()))[1]
    return {
        "transport": transport,
        "plugin": name,
        "cards": cards,
        "card_names": [c["name"] for c in s.cards] or None,
        "physical_cards": s.ofi[3] if s.ofi and s.ofi[3] else (len(s.cards) or None),
        "sharp": any(c["sharp"] for c in s.cards) or None,
        "gpudirect_rdma": gdr,
        "used_between_servers": used,
        "evidence": evidence,
        "gdr_evidence": _evidence(s.gdr.get(gdr)) if gdr is not None else None,
    }


def _result(s: _State) -> dict:
    c = _main_comm(s)
    nodes = c.nodes if c else None
    per = c.local_ranks if c else None
    ranks = c.ranks if c and c.ranks else None
    channels = []
    if c:
        for ch in sorted(set(c.rings) | set(c.trees)):
            ring = c.rings.get(ch)
            channels.append(
                {
                    "channel": ch,
                    "ring": ring["ring"] if ring else None,
                    # "..." (2.30), or fewer ranks than the comm has (older releases cut silently)
                    "ring_truncated": (
                        ring["truncated"] or bool(ranks and len(ring["ring"]) < ranks)
                    )
                    if ring
                    else None,
                    "tree": tree_of(c.trees[ch]) if ch in c.trees else None,
                }
            )
        full = [len(r["ring"]) for r in c.rings.values() if not r["truncated"]]
        if ranks is None and full:
            ranks = max(full)
    counts = s.counts[2] if s.counts else None
    nvls_on = bool(s.nvls[True]) if (s.nvls[True] or s.nvls[False]) else None
    nvls_channels = counts[2] if counts else None
    return {
        "nccl_version": s.version,
        "version_evidence": _evidence(s.version_line),
        "available": versions.available(s.version),
        "ranks": ranks,
        "nodes": nodes,
        "gpus_per_node": per,
        "device": s.device,
        "network": _network_summary(s, nodes),
        "nvls": {
            "supported": nvls_on,
            "channels": nvls_channels,
            "evidence": (s.nvls[True] or s.nvls[False] or [(0, None)])[0][1],
        },
        "collnet": _collnet(s, counts),
        "coll_channels": counts[0] if counts else (c.channels if c and c.channels else None),
        "channels_evidence": _evidence(s.counts)
        or (c.rings[min(c.rings)]["line"][1] if c and c.rings else None),
        "channels": channels,
        "calls": sorted(s.calls.values(), key=lambda r: (r["bytes"], r["line"])),
        "lines_read": s.matched,
        "communicators": len([x for x in s.comms.values() if x.ranks]),
    }


def _collnet(s: _State, counts: tuple | None) -> dict:
    """CollNet: usable where a CollNet plugin loaded (SHARP) and channels were built; off where
    the plugin is missing or no CollNet channel was built (2.22 counts channels it will not use)."""
    channels = counts[1] if counts else None
    if s.collnet_plugin and channels != 0:
        on, ev = True, s.collnet_plugin[1]
    elif s.collnet_missing or channels == 0:
        on = False
        ev = _evidence(s.counts) if channels == 0 else s.collnet_missing[1]
    else:
        on, ev = None, None
    return {
        "supported": on,
        "plugin": s.collnet_plugin[2] if s.collnet_plugin else None,
        "channels": channels,
        "evidence": ev,
    }


def is_hopper(device: str | None) -> bool:
    """A device name of NVIDIA's Hopper generation (NVLS needs Hopper's NVSwitch or later)."""
    up = (device or "").upper()
    return any(k in up for k in HOPPER)
