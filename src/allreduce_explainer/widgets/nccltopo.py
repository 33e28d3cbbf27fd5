"""Stage 10's server as NCCL sees it: NCCL 2.30.7's search (api.nccl_topology, the CLI's
`topology`) on a preset or the reader's own topology file, its CPUs, PCIe switches, GPUs, cards
and NVLinks drawn; one channel's ring or tree laid over it (the stepper's first frame), then that
ring's reduce-scatter on real numbers step by step (stage 2's stepper, run in the ring's order);
and the search's reasons in words (topology/explain.py, read from its result).

A server is drawn as its PCI tree: each CPU a box over its switches, the GPUs and cards in one
row under them, the NVSwitch a bar below; a second server (servers = 2) under the first, its
GPUs numbered on.
"""

from __future__ import annotations

import json
from functools import lru_cache

from .. import api
from ..errors import ParamError
from ..params import Param, narrowed, spec, validated
from ..topology import PRESETS, preset_text
from . import Widget, common, diagram, views
from .ring import ring_reduce_scatter

MAX_SERVERS = 2  # two servers of 8 GPUs: 16 ranks, the ring stepper's most
MAX_FILE_BYTES = 1 << 20
COL_GPU, COL_NIC, ROW, PAD, TOP = 66, 58, 48, 12, 30
CAPTION = 9  # characters of a card's caption that fit its column (COL_NIC) beside the next one
BOX_PCI = (50, 22)
# how far above the GPUs' row an arrow's control point sits (its peak about half that): a hop
# between neighbours just over the GPUs' boxes, its label at its peak; a hop over other GPUs (a
# ring's way back) above those labels and below the PCIe switches, which LEAF_GAP lifts for it
HOP_NEXT, HOP_OVER, LEAF_GAP = 24, 100, 24

TOPOLOGY = spec(
    Param("preset", "dgx-h100", "choice", "Server",
          choices=tuple((k, k.upper().replace("DGX-", "DGX ")) for k in PRESETS)),
    # the reader's own topology file (NCCL_TOPO_DUMP_FILE), pasted or opened; wins over preset
    Param("file", "", "text"),
    narrowed(api.TOPOLOGY["topology_servers"], "servers", label="Servers", hi=MAX_SERVERS),
    Param("channel", 0, "int", "Channel", 0, 63),
    Param("draw", "ring", "choice", "Draw", choices=(("ring", "its ring"), ("tree", "its tree"))),
    common.SEED,
)  # fmt: skip


def searched(text: str, servers: int) -> dict:
    """The search's answer, once per file and server count (the CLI's `topology --json`), a
    fresh copy each call."""
    return json.loads(_searched_json(text, servers))


@lru_cache(maxsize=16)
def _searched_json(text: str, servers: int) -> str:
    """The answer kept as its JSON text: the snapshot every page downloads holds every preset's
    (WARM), and as text they take a seventh of the memory their dicts do (1.1 MB of live
    objects for the eight); reading one back takes a millisecond."""
    return json.dumps(api.nccl_topology(topology=text, topology_servers=servers))


_preset = lru_cache(maxsize=None)(preset_text)  # kept in the snapshot by WARM's calls


def _text(p: dict) -> str:
    text = p["file"] or ""
    if len(text.encode()) > MAX_FILE_BYTES:
        raise ParamError("file", f"a topology file of at most {MAX_FILE_BYTES:,} bytes")
    if text.strip():
        return text
    return _preset(p["preset"])


def _search(text: str, servers: int) -> dict:
    try:
        return searched(text, servers)
    except ParamError as e:  # the parser names the element; the page shows it by the file box
        raise ParamError("file", e.message) from None


def caption(name: str) -> str:
    """A card's caption under the drawing: its name, or its first name and how many more where
    several network devices share one card (a server's virtual interfaces), cut to fit its
    column so that neighbours' captions never run into each other; the full names stay in the
    search's structure (`topology --json`)."""
    names = name.split(", ")
    more = f"+{len(names) - 1}" if len(names) > 1 else ""
    first, room = names[0], CAPTION - len(more)
    return (first if len(first) <= room else first[: room - 1] + "…") + more


def layout(structure: dict, servers: int) -> dict:
    """The drawing: per server its CPUs as boxes over their PCIe switches, GPUs and cards in one
    row, NVLinks to the NVSwitch's bar (or between GPUs), the CPUs' link; in diagram.py's form."""
    nodes, boxes, links, cards, captions = [], [], [], [], []
    tree = structure["nodes"]
    kids: dict[int, list[int]] = {}
    for i, n in enumerate(tree):
        kids.setdefault(n["parent"], []).append(i)
    depth = {}
    for i, n in enumerate(tree):
        depth[i] = 0 if n["parent"] < 0 else depth[n["parent"]] + 1
    leaf_row = max((depth[i] for i, n in enumerate(tree) if n["kind"] == "gpu"), default=1)
    x0: dict[int, float] = {}
    cursor = PAD + 8.0

    def place(i: int) -> tuple[float, float]:
        """Leaves left to right; a node spans its children."""
        nonlocal cursor
        n = tree[i]
        if n["kind"] in ("gpu", "nic") or not kids.get(i):
            width = COL_GPU if n["kind"] == "gpu" else COL_NIC
            x0[i] = cursor + width / 2
            cursor += width
            return cursor - width, cursor
        spans = [place(k) for k in kids[i]]
        lo, hi = spans[0][0], spans[-1][1]
        x0[i] = (lo + hi) / 2
        return lo, hi

    cpu_spans = {}
    for i, n in enumerate(tree):
        if n["kind"] == "cpu":
            cpu_spans[i] = place(i)
            cursor += 16
    width = cursor + PAD
    nvs = [i for i, n in enumerate(tree) if n["kind"] == "nvswitch"]
    server_h = TOP + (leaf_row + 1) * ROW + LEAF_GAP + (ROW if nvs else 0) + PAD
    ngpus = sum(1 for n in tree if n["kind"] == "gpu")

    def y(i: int, top: float) -> float:
        n = tree[i]
        row = leaf_row if n["kind"] in ("gpu", "nic") else depth[i]
        return top + TOP + row * ROW + 14 + (LEAF_GAP if n["kind"] in ("gpu", "nic") else 0)

    for s in range(servers):
        top = PAD + s * (server_h + 16)
        boxes.append({"x": PAD, "y": top, "w": width - 2 * PAD, "h": server_h,
                      "label": f"server {s}" if servers > 1 else "the server"})  # fmt: skip
        where = {}
        for i, n in enumerate(tree):
            x, yy = x0.get(i), y(i, top)
            if n["kind"] == "cpu":
                lo, hi = cpu_spans[i]
                boxes.append({"x": lo - 4, "y": top + 8, "w": hi - lo + 8, "h": 30,
                              "label": n["name"]})  # fmt: skip
                where[i] = ((lo + hi) / 2, top + 38)
            elif n["kind"] == "pci":
                bw, bh = BOX_PCI
                boxes.append({"x": x - bw / 2, "y": yy - bh / 2, "w": bw, "h": bh,
                              "label": "PCIe"})  # fmt: skip
                where[i] = (x, yy)
            elif n["kind"] == "gpu":
                nodes.append(diagram._node(s * ngpus + n["rank"], x, yy))
                where[i] = (x, yy)
            elif n["kind"] == "nic":
                cards.append({"x": round(x), "y": round(yy)})
                captions.append(
                    {"x": round(x - 22), "y": round(yy + 22), "text": caption(n["name"])}
                )
                where[i] = (x, yy)
            if n["parent"] >= 0 and i in where and n["parent"] in where:
                px, py = where[n["parent"]]
                py += 11 if tree[n["parent"]]["kind"] == "pci" else 0
                links.append(f"M{px:.0f} {py:.0f}L{where[i][0]:.0f} {where[i][1] - 13:.0f}")
        if nvs:
            bar_y = top + TOP + (leaf_row + 1) * ROW + LEAF_GAP
            boxes.append({"x": PAD + 8, "y": bar_y, "w": width - 2 * PAD - 16, "h": 24,
                          "label": "NVSwitch"})  # fmt: skip
        for lk in structure["links"]:
            a, b = lk["a"], lk["b"]
            if lk["type"] == "NVL" and tree[b]["kind"] == "nvswitch" and a in where:
                links.append(f"M{where[a][0]:.0f} {where[a][1] + 13:.0f}V{bar_y:.0f}")
            elif lk["type"] == "NVL" and a in where and b in where:
                (ax, ay), (bx, by) = where[a], where[b]
                links.append(f"M{ax:.0f} {ay + 13:.0f}Q{(ax + bx) / 2:.0f} {ay + 40:.0f} "
                             f"{bx:.0f} {by + 13:.0f}")  # fmt: skip
            elif lk["type"] == "SYS" and a in where and b in where:
                # the CPUs' link along their boxes' tops, over their names (which sit low)
                links.append(f"M{where[a][0]:.0f} {top + 14:.0f}L{where[b][0]:.0f} {top + 14:.0f}")
    height = PAD + servers * (server_h + 16) - 16 + PAD

    def bend(move, a, b):
        """Along the row: above it either way, the cards' names being below; a hop over other
        GPUs (a ring's way back) higher than a hop between neighbours, clear of their labels and
        under the PCIe switches. To the other server: sideways."""
        dx = b["x"] - a["x"]
        if abs(a["y"] - b["y"]) < 1 and dx:
            lo, hi = sorted((a["x"], b["x"]))
            over = any(n["y"] == a["y"] and lo < n["x"] < hi for n in nodes)
            return (HOP_OVER if over else HOP_NEXT) / dx
        return 0.2

    out = diagram._layout("topology", width, height, nodes, links, boxes, bend=bend)
    out["cards"], out["captions"] = cards, captions
    return out


def _pairs(channel: dict, view: str) -> list[tuple[int, int]]:
    if view == "tree":
        return [(up, int(r)) for r, up in channel["tree"]["parent"].items() if up >= 0]
    ring = channel["ring"]
    return list(zip(ring, ring[1:] + ring[:1], strict=True))


def nccl_topology(params=None) -> dict:
    """The server drawn, one channel's ring or tree over it, its ring stepped on real numbers,
    and the search's reasons."""
    p = validated(params, TOPOLOGY)
    result = _search(_text(p), p["servers"])
    chans = result["channels"]
    if p["channel"] >= len(chans):
        raise ParamError("channel", f"this server has {len(chans)} channels: 0 to {len(chans) - 1}")
    ch = chans[p["channel"]]
    ring = ch["ring"]
    n = len(ring)
    state = ring_reduce_scatter(
        {"gpus": n, "length": n, "order": ",".join(map(str, ring)), "seed": p["seed"]}
    )
    state.pop("prediction", None)
    state["editable"] = False
    lay = layout(result["structure"], p["servers"])
    diagram.attach(state, lay)
    first = state["frames"][0]
    first["arrows"] = diagram.hops(lay, _pairs(ch, p["draw"]))
    what = "ring" if p["draw"] == "ring" else "tree"
    first["narration"] = [
        f"Channel {ch['channel']}'s {what} drawn over the server as NCCL's search built it. "
        "Next: the ring's reduce-scatter on these numbers, hop by hop along this channel's ring.",
        *first["narration"],
    ]
    g = result["graphs"]["ring"]
    state["params"] = p
    state["readouts"] = {
        **state["readouts"],
        "channels": f"{result['coll_channels']}",
        "found": f"{g['nChannels']} at {g['bwIntra']:g} GB/s each",
        "reasons": "\n".join(result["reasons"]),
        "why": "\n".join(ch["why"]) or "—",
        "tree": _tree_text(ch["tree"]),
    }
    return state


def _tree_text(tree: dict) -> str:
    kids = "; ".join(f"{r} → {', '.join(map(str, c))}" for r, c in tree["children"].items() if c)
    return f"roots {', '.join(map(str, tree['roots']))}; {kids}"


RECORDS = [
    Widget(
        "nccl_topology",
        nccl_topology,
        TOPOLOGY,
        views.STEPPER,
        label="Your server as NCCL's search sees it, one channel's ring or tree over it, and "
        "that ring stepped through on real numbers",
        hint="Pick a server or open your own topology file (NCCL_TOPO_DUMP_FILE); choose a "
        "channel; step through its ring.",
        headline=(("channels", "Channels NCCL runs"), ("ring", "This channel's ring")),
        readouts={
            "main": (
                ("found", "The ring search's channels"),
                ("reasons", "Why this many, over these paths"),
                ("why", "Where this ring crosses the CPUs, which card it uses"),
                ("tree", "This channel's tree (parent → children)"),
                ("steps", "Steps"),
                ("sent", "Each GPU sends"),
            )
        },
    )
]
# every preset's search on one server, made before the snapshot (what the page first shows). Not
# two servers': the memory a search of two A100 servers takes at its peak stays in the snapshot
# (WebAssembly memory never shrinks), and past about 500 pages Pyodide cannot restore it (its
# restoreSnapshot writes into the memory it starts with); those are searched when asked.
WARM = [("nccl_topology", {"preset": k, "servers": 1}) for k in PRESETS]
