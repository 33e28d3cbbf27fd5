"""Read what NCCL prints at start-up under `NCCL_DEBUG=INFO`: its version, the ranks and servers,
each channel's ring and tree, NVLS and CollNet, the network and its cards, GPUDirect RDMA, and
(with `NCCL_DEBUG_SUBSYS` including TUNING) the algorithm and protocol of each call.

The lines read, as NVIDIA/nccl 2.30.7 prints them (older releases print the same words):

- `NCCL version 2.22.3+cuda12.2` (src/init.cc:695);
- `comm 0x.. rank R nRanks N nNodes M localRanks L localRank l MNNVL 0` (src/init.cc:1422;
  releases before about 2.19 print `comm 0x.. rank R nranks N cudaDev ..`, which gives N only);
  any rank's line gives the servers; without one, the hosts of all_reduce_perf's
  `#  Rank  r Group g Pid p on HOST device d ...` lines do;
- `Channel 00/16 :  0 7 6 ...` (src/graph/rings.cc:48, rank 0 only, cut to 128 characters
  with `...`: a long ring's tail is then missing; 2.4 prints `Channel 00 :    0   1`,
  src/init.cc:541 in v2.4.8-1);
- `Trees [0] 1/8/-1->0->-1 [1] ...` (src/init.cc:1491-1497): every rank prints its own place,
  `down0/down1/down2->rank->up`, per channel; a channel's tree is the union of the ranks' lines
  (2.5 to 2.7 add the same tree reversed after `|`, src/init.cc:598-606 in v2.5.6-1; 2.4 prints
  `up->rank->down0/down1/down2`, src/init.cc:824-828 in v2.4.8-1);
- `NVLS multicast support is [not ]available on dev D` (src/transport/nvls.cc:279) and
  `16 coll channels, 0 collnet channels, 16 nvls channels, ...` (src/init.cc:1646);
- `Using network IB` (src/init.cc:486), `NET/IB : Using [0]mlx5_0:1/IB ...`,
  `NET/Socket : Using [0]eth0:...`, `NET/OFI Selected Provider is efa (found 32 nics)`, and the
  connection lines `Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA`
  (src/transport/net.cc:324-377: `via NET/<name>/<device>[(<proxy device>)][/GDRDMA][/Shared]`,
  the name as the plugin gives it, spaces and all: `NET/NCCL RDMA Plugin v8/0/GDRDMA`); 2.7 to
  2.11 print `Channel 00 : 1[101d0] -> 8[101c0] [send] via ...` (net.cc:109 in v2.8.3-1), 2.5
  and 2.6 `Ring 00 : 1[..] -> 8[..] ...`
  and 2.4 `Ring 00 : 35 -> 34 [send] via NET/Socket/0` (net.cc:302 in v2.4.2-1);
- `NCCL_ALGO set by environment to RING`, `NCCL_PROTO set by environment to ...` and, from 2.24,
  the `Enabled NCCL Func/Proto/Algo Matrix:` table after it (src/graph/tuning.cc:453-492);
- tuning lines: `65536 Bytes -> Algo 0 proto 0 time 37.8` (before 2.24, indices; 2.23 prefixes
  the collective) and `AllReduce: 1048576 Bytes -> Algo Ring proto Simple channel{Lo..Hi}=...`.

Each line may carry any prefix (mpirun's `[1,0]<stdout>:`, `[0]`, srun's `0: `, PyTorch's
`[rank0]:`, a host:pid:tid header), or none at all: the message is found after `NCCL INFO `,
else matched at the line's start. Every pattern is anchored and linear; a line longer than
MAX_LINE characters is not read (a cut ring would name the wrong ranks) but counted, so a hostile
file costs its length, no more. UTF-16 text (PowerShell's `>` writes it) is read too.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .. import nccl
from ..errors import ParamError

MAXCHANNELS = 64  # src/include/device.h:91 (v2.30.7-1): no channel index or count reaches it
# NCCL 2.4 to 2.22 print at most 20 ranks of a ring, with no marker (MAXWIDTH,
# src/graph/rings.cc:9-19 in v2.5.6-1 to v2.22.3-1, src/init.cc:486-524 in v2.4.8-1); 2.23 ends
# a cut ring with "..."
OLD_RING_WIDTH = 20
RING_ELLIPSIS_SINCE = (2, 23, 0)
# NCCL_COLLNET_ENABLE: echoed at INFO whenever set, from 2.12 (src/init.cc:538 in v2.12.12-1,
# :821-829 in v2.26.2-1, :2146-2157 in v2.30.7-1); CollNet is off unless it is 1
COLLNET_ECHO_SINCE = (2, 12, 0)
# the "N coll channels, M collnet channels" line: M is comm->collNetChannels in 2.20
# (src/init.cc:1256 in v2.20.5-1), comm->nChannels from 2.21 (init.cc:1297 in v2.21.5-1, :1219 in
# v2.26.2-1, :1646-1647 in v2.30.7-1), whatever CollNet's state
COLLNET_COUNT_REAL = ((2, 20, 0), (2, 21, 0))
MAX_LINE = 4000  # NCCL's longest, a Trees line of 64 channels, is about 2,000 characters
MAX_CUT = 20  # long lines kept as evidence (all are counted)
INFO = "NCCL INFO "
VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(\S*)")
COMM = re.compile(
    r"comm (0x[0-9a-fA-F]+) rank (\d+) nRanks (\d+) nNodes (\d+) localRanks (\d+) localRank (\d+)"
)
COMM_OLD = re.compile(r"(?:\w+ )?comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) ")
RING = re.compile(r"Channel (\d+)(?:/(\d+))? :((?: +\d+)*)( ?\.\.\.)? *$")
TREES = re.compile(r"Trees((?: \[\d+\] [-0-9/>|]+)+)")  # NCCL cuts it at 1,023 characters
TREE = re.compile(r"\[(\d+)\] (-?\d+)/(-?\d+)/(-?\d+)->(\d+)->(-?\d+)(?:\||$| )")
TREE_24 = re.compile(r"\[(\d+)\] (-?\d+)->(\d+)->(-?\d+)/(-?\d+)/(-?\d+)")
NVLS = re.compile(r"NVLS multicast support is (not )?available on dev (\d+)")
COUNTS = re.compile(
    r"(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?"
    r"(\d+) p2p channels"
)
USING = re.compile(r"Using network (\S.*)$")  # messages come right-stripped
NET_IB = re.compile(r"NET/IB ?: Using (.*)$")
IB_CARD = re.compile(r"\[(\d+)\]([\w.-]+):(\d+)/(IB|RoCE)(/SHARP)?")
NET_SOCKET = re.compile(r"NET/Socket ?: Using (.*)$")
SOCKET_CARD = re.compile(r"\[(\d+)\]([\w.-]+):")
OFI = re.compile(r"NET/OFI Selected [Pp]rovider is (\w+)(?: \(found (\d+) nics\))?")
GDR_HCA = re.compile(r"NET/IB ?: GPU Direct RDMA (Enabled|Disabled) for HCA (\d+)")
CONNECT = re.compile(
    r"(?:Channel|Ring) (\d+)(?:/\d+)? : (\d+)(?:\[\w+\])? -> (\d+)(?:\[\w+\])?"
    r"(?: \[(send|receive)\])? via (\S.*)$"
)
NET_VIA = re.compile(r"NET/(.+?)/(\d+)(?:\(\d+\))?((?:/[A-Za-z]+)*)")
COLLNET_PLUGIN = re.compile(r"NET/Plugin ?: Loaded collnet plugin (\S+)")
COLLNET_ENV = re.compile(
    r"(?:NCCL_COLLNET_ENABLE set by environment to |Comm config collnetEnable reset to "
    r"NCCL_COLLNET_ENABLE=)(-?\w+)"
)
COLLNET_MISSING = re.compile(
    r"NET/Plugin ?: (?:Failed to find|Could not find:?) (?:ncclCollNetPlugin|libnccl-net)"
)
TUNING_OLD = re.compile(r"(?:(\w+): )?(\d+) Bytes -> Algo (\d+) proto (\d+) time ([\d.]+)")
TUNING = re.compile(r"(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}")
ENV = re.compile(r"(NCCL_ALGO|NCCL_PROTO) set by environment to (\S.*)$")
MATRIX = "Enabled NCCL Func/Proto/Algo Matrix:"
MATRIX_ROW = re.compile(r"(Function|AllReduce) \|([^|]*)\|([^|]*)$")
MATRIX_LINES = 8  # the table's header and five functions follow its INFO line
RANK_LINE = re.compile(r"#\s*Rank\s+(\d+)\b")
DEVICE = re.compile(r"\bdevice\s+\d+\s+\[[^\]]{0,64}\]")  # the name follows
HOPPER = ("H100", "H200", "H800", "H20", "GH200")
# NCCL_ALGO's words (ncclAlgoStr, src/init.cc:53 in 2.30.7) -> the names here; "CollNet" is
# 2.6-2.13's single CollNet algorithm, the later CollNetDirect
ALGO_WORDS = {a.lower(): a for a in nccl.ALGORITHM_INDEX} | {"collnet": "CollNetDirect"}
PROTO_WORDS = {p.lower(): p for p in nccl.PROTOCOL_INDEX}


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
    nodes_line: str | None = None
    counts: tuple[int, str, tuple] | None = None


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
    collnet_env: tuple[int, str, str] | None = None
    over_max: list[tuple[int, str]] = field(default_factory=list)  # channels past MAXCHANNELS
    conn_ranks: set[int] = field(default_factory=set)  # the ranks whose connection lines show
    net_devices: set[int] = field(default_factory=set)
    calls: dict[tuple, dict] = field(default_factory=dict)
    device: str | None = None
    rank_hosts: dict[int, str] = field(default_factory=dict)
    rank_line: str | None = None
    env: dict[str, tuple[str, str]] = field(default_factory=dict)  # NCCL_ALGO -> (value, line)
    matrix_at: tuple[int, str] | None = None
    matrix_names: tuple[list[str], list[str]] | None = None
    matrix: tuple[list[str], list[str]] | None = None  # AllReduce's (protocols, algorithms) on
    cut: list[tuple[int, int, str]] = field(default_factory=list)
    cut_count: int = 0
    encoding: str = "UTF-8"
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


def decoded(text: str) -> tuple[str, str]:
    """(the text, its encoding): UTF-16 text of ASCII lines, as it arrives decoded as UTF-8 (its
    byte-order mark two replacement characters, every other character a NUL), with the NULs and
    the mark dropped, which gives the ASCII back exactly; any text without a leading BOM."""
    sample = text[:4000]
    nuls = sample.count("\x00")
    if nuls * 3 > len(sample) and max(sample[0::2].count("\x00"), sample[1::2].count("\x00")) > (
        0.9 * nuls
    ):
        text = text.replace("\x00", "")
        for bom in ("\ufffd\ufffd", "\ufeff", "\xff\xfe", "\xfe\xff"):
            if text.startswith(bom):
                text = text[len(bom) :]
                break
        return text, "UTF-16"
    return text.removeprefix("\ufeff"), "UTF-8"


def read(text: str) -> dict:
    """The debug lines of a log, read; raises ParamError('log') if none is NCCL's."""
    text, encoding = decoded(text)
    s = _State(encoding=encoding)
    for i, raw in enumerate(text.splitlines(), 1):
        if len(raw) > MAX_LINE:
            _too_long(s, i, raw)
        else:
            _line(s, i, raw)
    if not s.matched:
        raise ParamError("log", _nothing_read(s))
    return _result(s)


def _too_long(s: _State, i: int, raw: str) -> None:
    """A line over MAX_LINE characters is not read: its cut head would read as a ring of the
    wrong ranks. One whose head reads as NCCL's is counted, for a finding."""
    probe = _State()
    _line(probe, i, raw[:MAX_LINE])
    if probe.matched:
        s.cut_count += 1
        if len(s.cut) < MAX_CUT:
            s.cut.append((i, len(raw), raw[:120].strip()))


def _nothing_read(s: _State) -> str:
    """Why a log gave nothing: its lines too long, UTF-16 without NCCL's lines, or none."""
    if s.cut:
        i, n, _ = s.cut[0]
        return (
            f"has no NCCL_DEBUG=INFO line short enough to read: line {i} is {n:,} characters, "
            f"over the {MAX_LINE:,} read (NCCL's own lines are shorter; was the log joined "
            "into one line?)"
        )
    what = "is UTF-16 text, read as such, and " if s.encoding == "UTF-16" else ""
    return (
        f"{what}has no NCCL_DEBUG=INFO lines (NCCL version, comm ... nRanks, Channel 00/.., "
        "Trees, Using network ...): run with NCCL_DEBUG=INFO and paste its output"
    )


def _line(s: _State, i: int, line: str) -> None:
    """Read one line into the state (unknown lines change nothing)."""
    if "Rank" in line and "#" in line and _rank_line(s, line):
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


def _rank_line(s: _State, line: str) -> bool:
    """all_reduce_perf's `#  Rank  r Group g Pid p on HOST device d [bus] NAME` (nccl-tests
    src/common.cu; no Group before 2.10): the rank's host and the device's name."""
    m = RANK_LINE.search(line)
    if not m:
        return False
    on, dev = line.find(" on ", m.end()), line.find(" device ", m.end())
    host = line[on + 4 : dev].strip() if 0 <= on < dev else ""
    if host and " " not in host and len(s.rank_hosts) < 100_000:
        s.rank_hosts.setdefault(int(m[1]), host)
        s.rank_line = s.rank_line or line.strip()
    d = DEVICE.search(line, max(dev, 0))
    if d and s.device is None:
        s.device = line[d.end() :].strip() or None
    return True


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
        c = s.comms[group] = _Comm(ptr, ranks, None, None)
    if nodes is not None and c.nodes is None:
        c.nodes, c.local_ranks, c.nodes_line = nodes, local, line.strip()
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
    if ch >= MAXCHANNELS or (m[2] and int(m[2]) > MAXCHANNELS):
        _over_max(s, i, line)
    elif ch not in c.rings:
        order = [int(x) for x in m[3].split()]
        c.rings[ch] = {"ring": order, "truncated": bool(m[4]), "line": (i, line.strip())}
        c.channels = int(m[2]) if m[2] else c.channels
    return True


def _trees(s: _State, i, key, msg, line) -> bool:
    m = TREES.match(msg)
    if not m:
        return False
    c = _current(s, key)
    places = [(int(ch), int(d0), int(d1), int(d2), int(r), int(up))
              for ch, d0, d1, d2, r, up in TREE.findall(m[1])]  # fmt: skip
    if not places:  # 2.4: up->rank->down0/down1/down2
        places = [(int(ch), int(d0), int(d1), int(d2), int(r), int(up))
                  for ch, up, r, d0, d1, d2 in TREE_24.findall(m[1])]  # fmt: skip
    for ch, d0, d1, d2, rank, up in places:
        if ch >= MAXCHANNELS:
            _over_max(s, i, line)
            break
        c.trees.setdefault(ch, {}).setdefault(rank, (d0, d1, d2, up))
    return True


def _over_max(s: _State, i: int, line: str) -> None:
    """A channel past NCCL's MAXCHANNELS: not NCCL's, so not read; kept for a finding."""
    if len(s.over_max) < MAX_CUT:
        s.over_max.append((i, line.strip()[:200]))


def _nvls(s: _State, i, key, msg, line) -> bool:
    m = NVLS.match(msg)
    if m:
        s.nvls[not m[1]].append((i, line.strip()))
    return bool(m)


def _counts(s: _State, i, key, msg, line) -> bool:
    """`N coll channels, ...`: each communicator prints its own; a count past MAXCHANNELS is not
    NCCL's and is not read."""
    m = COUNTS.match(msg)
    if not m:
        return False
    counts = tuple(None if x is None else int(x) for x in m.groups())
    if max(x or 0 for x in counts[:3]) > MAXCHANNELS:
        _over_max(s, i, line)
        return True
    c = _current(s, key)
    c.counts = c.counts or (i, line.strip(), counts)
    s.counts = s.counts or c.counts
    return True


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
    m = COLLNET_ENV.match(msg)
    if m:
        s.collnet_env = s.collnet_env or (i, line.strip(), m[1])
        return True
    if COLLNET_MISSING.match(msg):
        s.collnet_missing = s.collnet_missing or (i, line.strip())
        return True
    return False


def _connect(s: _State, i, key, msg, line) -> bool:
    """A connection line: through the network (`via NET/<name>/<device>[/GDRDMA]`), the name,
    the device and whether GPUDirect RDMA carries it (`req.useGdr`, src/transport/net.cc:324-377);
    through NVLink or PCIe, nothing."""
    m = CONNECT.match(msg)
    if not m:
        return False
    net = NET_VIA.match(m[5])
    if net and len(s.conn_ranks) < 100_000:  # the rank that prints the line: a send's source
        s.conn_ranks.add(int(m[3] if m[4] == "receive" else m[2]))
    if net:
        name, flags = net[1], net[3].split("/")
        if len(s.transports) < 64:
            s.transports.setdefault(name, (i, line.strip()))
        if len(s.net_devices) < 1024:
            s.net_devices.add(int(net[2]))
        if "GDRDMA" in flags:
            s.gdr.setdefault(True, (i, line.strip()))
        elif m[4] == "receive" and not name.lower().startswith("socket"):
            # a receive writes to GPU memory by GDR whenever NCCL can; a send without /GDRDMA
            # says nothing (GDR reads are off by default before Ampere, graph/paths.cc:489-494);
            # sockets never use it
            s.gdr.setdefault(False, (i, line.strip()))
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
        if a >= len(nccl.ALGORITHM_INDEX) or p >= len(nccl.PROTOCOL_INDEX):
            return True
        coll, nbytes = m[1], int(m[2])
        algo, proto = nccl.ALGORITHM_INDEX[a], nccl.PROTOCOL_INDEX[p]
    k = (coll, nbytes, algo, proto)
    if k in s.calls:
        s.calls[k]["count"] += 1
    else:
        s.calls[k] = {"collective": coll, "bytes": nbytes, "algorithm": algo, "protocol": proto,
                      "count": 1, "line": i, "evidence": line.strip()}  # fmt: skip
    return True


def _env(s: _State, i, key, msg, line) -> bool:
    """`NCCL_ALGO set by environment to RING` and the algorithm matrix NCCL prints after it
    (rank 0, from 2.24; its rows carry no prefix of NCCL's): what the user let NCCL use."""
    m = ENV.match(msg)
    if m:
        s.env.setdefault(m[1], (m[2], line.strip()))
        return True
    if msg.startswith(MATRIX):
        s.matrix_at = s.matrix_at or (i, line.strip())
        return True
    if s.matrix_at is None or s.matrix is not None or i - s.matrix_at[0] > MATRIX_LINES:
        return False
    m = MATRIX_ROW.search(msg)
    if not m:
        return False
    protos, algos = m[2].split(), m[3].split()
    if m[1] == "Function":
        s.matrix_names = (protos, algos)
    elif s.matrix_names and len(protos) == len(s.matrix_names[0]):
        on = [[n for n, v in zip(names, vals, strict=False) if v != "0"]
              for names, vals in zip(s.matrix_names, (protos, algos), strict=True)]  # fmt: skip
        s.matrix = (on[0], on[1])
    return True


_READERS = (_comm, _ring, _trees, _nvls, _counts, _network, _connect, _tuning, _env)


# ---- the result --------------------------------------------------------------------------------


def _main_comm(s: _State) -> _Comm | None:
    """The communicator the log is about: the one of the most ranks that has rings or trees
    (else of the most ranks), with the lines of threads whose comm line the log does not show
    (an excerpt: rank 0's rings with other ranks' comm lines) merged in."""
    real = [c for c in s.comms.values() if c.ranks]
    drawn = [c for c in real if c.rings or c.trees]
    stray = s.comms.get("unknown")
    main = max(drawn or real, key=lambda c: c.ranks, default=stray)
    if main is not None and stray is not None and stray is not main:
        for ch, ring in stray.rings.items():
            main.rings.setdefault(ch, ring)
        for ch, entries in stray.trees.items():
            for rank, place in entries.items():
                main.trees.setdefault(ch, {}).setdefault(rank, place)
        main.channels = main.channels or stray.channels
        main.counts = main.counts or stray.counts
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


def _transport(name: str, s: _State) -> str:
    """The network's kind from a plugin's or NCCL's transport name: EFA through libfabric,
    sockets, else InfiniBand or RoCE where the name is IB's or an RDMA plugin's (Mellanox's
    `NCCL RDMA Plugin v8`, `IBext_v8`) or NET/IB lists the cards; any other name as printed."""
    low = name.lower()
    if "libfabric" in low or "ofi" in low:
        return "AWS Libfabric (EFA)" if (s.ofi and s.ofi[2] == "efa") else "Libfabric"
    if low.startswith("socket"):
        return "Socket"
    if low.startswith("ib") or "rdma" in low or s.cards:
        return "RoCE" if any(c["link"] == "RoCE" for c in s.cards) else "IB"
    return name


def _cards(s: _State, local_ranks: int | None) -> int | None:
    """The network devices NCCL uses per server: those its connection lines name when the lines
    of every GPU of one server show, else the cards NET/IB lists (or the OFI plugin found: AWS
    groups 4 EFA cards in one device) when it lists any, else None. A trimmed log that keeps
    rank 0's connection lines names rank 0's card only: one card of a server's eight."""
    listed = len(s.cards) or (s.ofi[3] if s.ofi and s.ofi[3] else 0)
    seen = len(s.net_devices)
    if seen and (local_ranks is None or _whole_server(s.conn_ranks, local_ranks)):
        return seen
    return max(seen, listed) if listed else None


def _whole_server(ranks: set[int], local_ranks: int) -> bool:
    """Whether the ranks include every GPU of one server (servers hold consecutive ranks)."""
    per = Counter(r // local_ranks for r in ranks)
    return bool(per) and max(per.values()) >= local_ranks


def _network_summary(s: _State, local_ranks: int | None = None) -> dict:
    """The transport between servers, its cards and whether GPUDirect RDMA is used."""
    name = s.using[2] if s.using else next(iter(s.transports), None)
    if name:
        transport = _transport(name, s)
    elif s.cards:
        transport = _transport("IB", s)
    else:
        transport = "Socket" if s.socket_cards else None
    cards = _cards(s, local_ranks)
    gdr = True if True in s.gdr else False if False in s.gdr else None
    used = sorted(s.transports)
    evidence = _evidence(s.using) or _evidence(s.cards_line) or _evidence(s.ofi)
    if not evidence and s.transports:
        evidence = next(iter(s.transports.values()))[1]
    return {
        "transport": transport,
        "plugin": s.using[2] if s.using else None,
        "cards": cards,
        "card_names": [c["name"] for c in s.cards] or None,
        "physical_cards": s.ofi[3] if s.ofi and s.ofi[3] else (len(s.cards) or None),
        "sharp": any(c["sharp"] for c in s.cards) or None,
        "gpudirect_rdma": gdr,
        "used_between_servers": used,
        "evidence": evidence,
        "gdr_evidence": _evidence(s.gdr.get(gdr)) if gdr is not None else None,
    }


def _layout(s: _State, c: _Comm | None, ranks: int | None) -> dict:
    """Servers and GPUs per server: any rank's comm line (nNodes, localRanks), else the hosts of
    all_reduce_perf's `#  Rank` lines when they list every rank (GPUs per server only when every
    host has as many), with the line that says so."""
    if c and c.nodes is not None:
        return {"nodes": c.nodes, "gpus_per_node": c.local_ranks, "evidence": c.nodes_line}
    hosts = s.rank_hosts
    if not hosts or sorted(hosts) != list(range(len(hosts))) or (ranks and ranks != len(hosts)):
        return {"nodes": None, "gpus_per_node": None, "evidence": None}
    per = set(Counter(hosts.values()).values())
    names = sorted(set(hosts.values()))
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return {
        "nodes": len(names),
        "gpus_per_node": per.pop() if len(per) == 1 else None,
        "evidence": f"{len(hosts)} '#  Rank' lines on {len(names)} host(s) ({shown}): "
        f"{s.rank_line}",
    }


def _old_ring_cut(s: _State) -> bool:
    """Whether this release cut ring lines after OLD_RING_WIDTH ranks without a marker (before
    2.23, or no version printed)."""
    v = nccl.parse_version(s.version)
    return v is None or v < RING_ELLIPSIS_SINCE


def _channels(s: _State, c: _Comm, ranks: int | None) -> list[dict]:
    """A communicator's channels: each one's ring (cut: "..." from 2.23, fewer ranks than the
    comm has, or a pre-2.23 line of exactly OLD_RING_WIDTH ranks of a larger or unknown comm)
    and its tree."""
    old = _old_ring_cut(s)
    out = []
    for ch in sorted(set(c.rings) | set(c.trees)):
        ring = c.rings.get(ch)
        cut = None
        if ring:
            n = len(ring["ring"])
            cut = ring["truncated"] or bool(ranks and n < ranks)
            cut = cut or (old and n == OLD_RING_WIDTH and (ranks is None or ranks > n))
        out.append(
            {
                "channel": ch,
                "ring": ring["ring"] if ring else None,
                "ring_truncated": cut,
                "tree": tree_of(c.trees[ch]) if ch in c.trees else None,
            }
        )
    return out


def _ring_ranks(s: _State, c: _Comm) -> int | None:
    """The rank count the rings give: the longest whole ring, never one that may be cut."""
    old = _old_ring_cut(s)
    whole = [len(r["ring"]) for r in c.rings.values()
             if not r["truncated"] and not (old and len(r["ring"]) == OLD_RING_WIDTH)]  # fmt: skip
    return max(whole, default=None)


def _cut_rings(s: _State, channels: list[dict], ranks: int | None) -> dict | None:
    """The old releases' silent cut at OLD_RING_WIDTH ranks, where a ring line shows it."""
    if not _old_ring_cut(s):
        return None
    cut = [ch for ch in channels if ch["ring"] and len(ch["ring"]) == OLD_RING_WIDTH
           and ch["ring_truncated"]]  # fmt: skip
    if not cut:
        return None
    return {"channels": len(cut), "max_ranks": OLD_RING_WIDTH, "ranks": ranks}


def _communicator(s: _State, c: _Comm) -> dict:
    """One communicator as its lines describe it: ranks, servers, channels and their rings and
    trees."""
    ranks = c.ranks or _ring_ranks(s, c)
    channels = _channels(s, c, ranks)
    return {
        "comm": c.ptr,
        "ranks": ranks,
        "nodes": c.nodes,
        "gpus_per_node": c.local_ranks,
        "coll_channels": c.counts[2][0] if c.counts else c.channels,
        "channels": channels,
        "evidence": c.nodes_line or _evidence(c.counts),
    }


def _result(s: _State) -> dict:
    c = _main_comm(s)
    ranks = (c.ranks or _ring_ranks(s, c)) if c else None
    channels = _channels(s, c, ranks) if c else []
    if ranks is None and s.rank_hosts and sorted(s.rank_hosts) == list(range(len(s.rank_hosts))):
        ranks = len(s.rank_hosts)
    layout = _layout(s, c, ranks)
    counts_line = c.counts if c else s.counts  # the communicator's own, never another's
    counts = counts_line[2] if counts_line else None
    available = nccl.available(s.version)
    comms = [x for x in s.comms.values() if x.ranks]
    return {
        "nccl_version": s.version,
        "version_evidence": _evidence(s.version_line),
        "available": available,
        "ranks": ranks,
        "nodes": layout["nodes"],
        "gpus_per_node": layout["gpus_per_node"],
        "nodes_evidence": layout["evidence"],
        "device": s.device,
        "network": _network_summary(s, layout["gpus_per_node"]),
        "nvls": _nvls_summary(s, counts_line, "NVLS" in available["not_yet"]),
        "collnet": _collnet(s, counts_line, "CollNetDirect" in available["not_yet"]),
        "coll_channels": counts[0] if counts else (c.channels if c and c.channels else None),
        "channels_evidence": _evidence(counts_line)
        or (c.rings[min(c.rings)]["line"][1] if c and c.rings else None),
        "channels": channels,
        "rings_cut": _cut_rings(s, channels, ranks),
        "over_max_channels": [{"line": i, "text": t} for i, t in s.over_max],
        "calls": sorted(s.calls.values(), key=lambda r: (r["bytes"], r["line"])),
        "tuning_env": _tuning_env(s, available),
        "long_lines": {
            "count": s.cut_count,
            "max_chars": MAX_LINE,
            "lines": [{"line": i, "chars": n, "head": head} for i, n, head in s.cut],
        },
        "encoding": s.encoding,
        "lines_read": s.matched,
        "communicators": [_communicator(s, x) for x in comms] if len(comms) > 1 else [],
    }


def _state(on: bool | None, absent: bool) -> str:
    return "absent" if absent else {True: "on", False: "off", None: "unknown"}[on]


def _nvls_summary(s: _State, counts_line: tuple | None, absent: bool) -> dict:
    """NVLS: on or off as the NVLS lines say, else off where the channel-count line says
    "0 nvls channels" (NCCL builds none without NVLS support); absent (so off) in a release
    before NVLS (2.17), on the version line's evidence, whatever the GPUs."""
    channels = counts_line[2][2] if counts_line else None
    if absent:
        on, ev = False, _evidence(s.version_line)
    elif s.nvls[True] or s.nvls[False]:
        on = bool(s.nvls[True])
        ev = (s.nvls[True] or s.nvls[False])[0][1]
    elif channels == 0:
        on, ev = False, counts_line[1]
    else:
        on, ev = None, None
    return {"supported": on, "channels": channels, "evidence": ev, "state": _state(on, absent)}


def _collnet(s: _State, counts_line: tuple | None, absent: bool) -> dict:
    """CollNet: on only where something enables it: NCCL_COLLNET_ENABLE=1 echoed (with no
    missing plugin), or, in 2.20 alone, a non-zero collnet channel count with the plugin loaded.
    Off where the echo says another value, the plugin is missing, "0 collnet channels" is
    printed, or (from 2.12, which echoes the variable whenever it is set) a plugin loaded but
    the variable is never echoed: CollNet's default is off. From 2.21 the count line prints the
    coll channels for CollNet too, so it never says on. Absent before CollNet (2.6)."""
    channels = counts_line[2][1] if counts_line else None
    v = nccl.parse_version(s.version)
    real_count = v is not None and COLLNET_COUNT_REAL[0] <= v < COLLNET_COUNT_REAL[1]
    env = s.collnet_env
    if absent:
        on, ev = False, _evidence(s.version_line)
    elif s.collnet_missing and not s.collnet_plugin:  # a v9 lookup fails, then v8 loads
        on, ev = False, s.collnet_missing[1]
    elif env:
        on, ev = env[2] == "1", env[1]
    elif channels == 0:
        on, ev = False, counts_line[1]
    elif s.collnet_plugin and real_count:
        on, ev = True, counts_line[1]
    elif s.collnet_plugin and v is not None and v >= COLLNET_ECHO_SINCE:
        on, ev = False, s.collnet_plugin[1]
    else:
        on, ev = None, None
    return {
        "supported": on,
        "plugin": s.collnet_plugin[2] if s.collnet_plugin else None,
        "channels": channels,  # as printed: from 2.21 the coll channels, not CollNet's
        "channels_are_collnet": real_count or channels == 0 if channels is not None else None,
        "enable": env[2] if env else None,
        "evidence": ev,
        "state": _state(on, absent),
    }


def enabled(value: str, words: dict[str, str]) -> list[str]:
    """The names an NCCL_ALGO or NCCL_PROTO value enables for an all-reduce, as NCCL's
    parseList reads it (src/graph/tuning.cc:55-125 in 2.30.7): `;`-separated entries, the first
    for every function unless it names one (`allreduce:tree,ring`), a later one only for the
    function it names; each entry's list, after a leading `^`, is what it turns off. Before 2.24
    the value is one list (tuning.cc:34-51 in v2.22.3-1), which reads the same. Unknown words
    are left out (2.24 refuses them, older releases ignore them)."""
    names = list(dict.fromkeys(words.values()))
    on = set(names)
    for k, entry in enumerate(value.split(";")):
        prefix, sep, items = entry.partition(":")
        if not sep:
            if k:
                continue
            items = entry
        elif prefix.strip().lower() != "allreduce":
            continue
        off = items.strip().startswith("^")
        listed = {words.get(w.strip().lower()) for w in items.strip().lstrip("^").split(",")}
        on = {n for n in names if (n not in listed) == off}
    return [n for n in names if n in on]


def _tuning_env(s: _State, available: dict) -> dict:
    """The algorithms and protocols the user let NCCL use for an all-reduce (None: not
    restricted): the matrix NCCL printed, else NCCL_ALGO and NCCL_PROTO read as NCCL does."""
    algo, proto = s.env.get("NCCL_ALGO"), s.env.get("NCCL_PROTO")
    evidence = [e[1] for e in (algo, proto) if e]
    if s.matrix:
        protos, algos = s.matrix[0], s.matrix[1]
        evidence.append(_evidence(s.matrix_at))
    else:
        algos = enabled(algo[0], ALGO_WORDS) if algo else None
        protos = enabled(proto[0], PROTO_WORDS) if proto else None
    if algos is not None:
        algos = [a for a in algos if a in available["algorithms"]]
    if protos is not None:
        protos = [p for p in protos if p in available["protocols"]]
    return {
        "NCCL_ALGO": algo[0] if algo else None,
        "NCCL_PROTO": proto[0] if proto else None,
        "algorithms": algos if (algo or s.matrix) else None,
        "protocols": protos if (proto or s.matrix) else None,
        "evidence": evidence,
    }


def is_hopper(device: str | None) -> bool:
    """A device name of NVIDIA's Hopper generation (NVLS needs Hopper's NVSwitch or later)."""
    up = (device or "").upper()
    return any(k in up for k in HOPPER)
