"""The topology beside a stepper's table: where the GPUs sit, and each step's moves as arrows.

Python does all the geometry (the view only draws): a layout (node positions and size, server
boxes, faint topology links, captions) goes into the state once, and each frame gets `arrows`,
one per pair of nodes its moves join, labelled with the values carried. It also gets `holders`:
for every cell, which GPUs' numbers it now holds ("a+b" = GPU 0's plus GPU 1's), replayed from
the moves, for the stepper's contributions view.

A layout is as large as what it draws (a margin for the arrows' labels, no more), so that the
page can set the diagram beside the table. A GPU is usually one node; in the double binary tree
it is one node in each tree, and a move is drawn in the tree that carries its chunk.

One call for a stepper: `attach(state, ring(n))` (or `star`, `trees`, `servers`; pass
`switch=True` to a layout when moves name the switch, `SWITCH` = -1).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .common import value_text

SWITCH = -1  # a move's src/dst when the values go through the switch (in-network reduction)
NODE_W, NODE_H = 58, 26  # a GPU's box, in the SVG's units
SWITCH_R = 30  # the switch's circle: its word, 13px bold, inside the ring of its stroke
MARGIN = 10  # around the outermost boxes
LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_LABEL_VALUES = 2  # an arrow's label shows this many values, then "…"
# the trees: a GPU's box there (narrower: every GPU is drawn twice), one leaf's column, one
# level's row, the space between tree A and tree B, and the caption's band above them
TREE_NODE_W, TREE_SLOT, TREE_ROW, TREE_GAP, CAPTION_H = 50, 56, 76, 24, 24


def _node(gpu: int, x: float, y: float, **extra) -> dict:
    return {
        "gpu": gpu,
        "x": round(x),
        "y": round(y),
        "label": "switch" if gpu < 0 else f"GPU {gpu}",
        **extra,
    }


def _layout(kind, w, h, nodes, links=(), boxes=(), bend=None, node=(NODE_W, NODE_H)) -> dict:
    """A layout as the state carries it, with its private rules (keys from "_", which attach
    leaves out): how far an arrow bows, which node a move's end is, where its label sits."""
    by_gpu = {q["gpu"]: i for i, q in enumerate(nodes)}
    return {
        "kind": kind,
        "w": round(w),
        "h": round(h),
        "node": list(node),
        "nodes": nodes,
        "links": list(links),
        "boxes": list(boxes),
        "_bend": bend or (lambda move, a, b: 0.0),
        "_place": lambda move, gpu: by_gpu[gpu],
        "_label_at": lambda a, b: 0.5,
    }


def ring(n: int, switch: bool = False, order: list[int] | None = None) -> dict:
    """GPUs clockwise on a circle from the top, in `order` (a ring's order of GPUs; None: rank
    order), so each GPU's neighbour on the circle is the one it sends to; arrows bow outwards;
    the switch in the middle. The arcs between neighbours stay inside the circle's boxes, so the
    margin is the boxes'."""
    r = max(95.0, n * 72 / (2 * math.pi))
    cx, cy = r + NODE_W / 2 + MARGIN, r + NODE_H / 2 + MARGIN
    ranks = list(range(n)) if order is None else order
    nodes = [
        _node(g, cx + r * math.sin(2 * math.pi * i / n), cy - r * math.cos(2 * math.pi * i / n))
        for i, g in enumerate(ranks)
    ]
    if switch:
        nodes.append(_node(SWITCH, cx, cy))
    arc = f"a{r:.0f} {r:.0f} 0 1 0"
    links = [f"M{cx - r:.0f} {cy:.0f}{arc} {2 * r:.0f} 0{arc} {-2 * r:.0f} 0"]

    def bend(move, a, b):  # outwards for neighbours on the ring, straight through the switch
        return 0.0 if SWITCH in move[:2] else 0.35

    out = _layout("ring", 2 * cx, 2 * cy, nodes, links, bend=bend)
    if switch:
        out["switch_r"] = SWITCH_R  # the view draws the circle the arrows are trimmed to
    # past four GPUs the spokes to the switch are too close for their values to be read: the
    # arrows then show who sends to whom, and the grid's switch row the values
    out["_quiet"] = switch and n > 4
    return out


def star(n: int) -> dict:
    """GPU 0 in the middle, the others around it: the naive method's gather and broadcast. The
    box is cut to the GPUs' boxes (three GPUs round a circle leave its lower part empty)."""
    r = max(110.0, (n - 1) * 72 / (2 * math.pi))
    angles = [2 * math.pi * (i - 1) / (n - 1) for i in range(1, n)]
    points = [(0.0, 0.0)] + [(r * math.sin(a), -r * math.cos(a)) for a in angles]
    left = min(x for x, _ in points) - NODE_W / 2 - MARGIN
    top = min(y for _, y in points) - NODE_H / 2 - MARGIN
    nodes = [_node(i, x - left, y - top) for i, (x, y) in enumerate(points)]
    links = [f"M{nodes[0]['x']} {nodes[0]['y']}L{q['x']} {q['y']}" for q in nodes[1:]]
    w = max(x for x, _ in points) + NODE_W / 2 + MARGIN - left
    h = max(y for _, y in points) + NODE_H / 2 + MARGIN - top
    return _layout("star", w, h, nodes, links)


def trees(parents: tuple[list[int], list[int]], tree_of_chunk: Callable[[int], int]) -> dict:
    """The double binary tree as two trees side by side, tree A on the left: each root at the
    top, one level per row, every GPU once in each tree (GPU v of tree t is node t·n + v), each
    tree's edges as faint lines. A move is drawn in the tree that carries its chunk, straight
    along the edge; two siblings' labels sit at different heights (see `_tree_label_at`)."""
    n = len(parents[0])
    nodes: list[dict] = []
    links, captions = [], []
    left, top = MARGIN, CAPTION_H
    for t, pa in enumerate(parents):
        columns, depths = _tree_columns(pa)
        for v in range(n):
            x = left + (columns[v] + 0.5) * TREE_SLOT
            nodes.append(_node(v, x, top + NODE_H / 2 + depths[v] * TREE_ROW, tree=t))
        width = (max(columns) + 1) * TREE_SLOT
        captions.append({"x": round(left + width / 2), "y": 16, "text": f"tree {'AB'[t]}"})
        left += width + TREE_GAP
    size = (TREE_NODE_W, NODE_H)
    for t, pa in enumerate(parents):
        links += [_arc(nodes[t * n + v], nodes[t * n + up], 0.0, size) for v, up in enumerate(pa)
                  if up >= 0]  # fmt: skip
    h = max(q["y"] for q in nodes) + NODE_H / 2 + MARGIN
    out = _layout("trees", left - TREE_GAP + MARGIN, h, nodes, links, node=size)
    out["captions"] = captions
    out["_place"] = lambda move, gpu: tree_of_chunk(move[4]) * n + gpu
    out["_label_at"] = _tree_label_at
    return out


def _tree_label_at(a: dict, b: dict) -> float:
    """Where along an edge from a to b its label goes: 30 % of the way up from the child when
    the child is the left one, 70 % when it is the right one. Siblings are a leaf's column
    apart, less than a label's width, so their labels are set apart in height instead."""
    child, parent = (a, b) if a["y"] > b["y"] else (b, a)
    up = 0.3 if child["x"] <= parent["x"] else 0.7
    return up if child is a else 1 - up


def _tree_columns(parents: list[int]) -> tuple[list[float], list[int]]:
    """Where each node of a tree sits: its column (leaves one per column, left to right as a
    depth-first walk meets them, children by rank; a parent halfway over its first and last
    child) and its depth (0 for the root)."""
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    for v, up in enumerate(parents):
        if up >= 0:
            children[up].append(v)
    column, depth = [0.0] * n, [0] * n
    leaves = 0

    def place(v: int, d: int) -> None:
        nonlocal leaves
        depth[v] = d
        for c in children[v]:
            place(c, d + 1)
        if children[v]:
            column[v] = (column[children[v][0]] + column[children[v][-1]]) / 2
        else:
            column[v], leaves = leaves, leaves + 1

    place(parents.index(-1), 0)
    return column, depth


def servers(n_servers: int, g: int) -> dict:
    """One box per server, stacked, its GPUs in a row, each with its network card under it."""
    gap, box_h, pad = NODE_W + 30, 100, 12
    w = pad * 2 + g * gap + 60
    nodes, boxes = [], []
    for s in range(n_servers):
        top = pad + s * (box_h + 30)
        boxes.append(
            {"x": pad, "y": top, "w": w - 2 * pad - 60, "h": box_h, "label": f"server {s}"}
        )
        for j in range(g):
            nodes.append(_node(s * g + j, pad + 8 + gap / 2 + j * gap, top + 50))
    cards = [{"x": q["x"], "y": q["y"] + NODE_H / 2 + 12} for q in nodes]

    def bend(move, a, b):  # between servers: out to the right, around the boxes
        if a["gpu"] // g == b["gpu"] // g:  # in a server: above the row rightwards, below back
            return 56 / abs(b["x"] - a["x"])
        if a["x"] == b["x"] and abs(a["y"] - b["y"]) < box_h + 40:
            return 0.0  # the same GPU of the next server down: straight
        return 0.3 if b["y"] > a["y"] else -0.3

    h = n_servers * (box_h + 30) - 30 + 2 * pad
    layout = _layout("servers", w, h, nodes, boxes=boxes, bend=bend)
    layout["cards"] = cards
    return layout


def _arc(a: dict, b: dict, bend: float, size: tuple[float, float] = (NODE_W, NODE_H)) -> str:
    """A quadratic path from box a to box b (boxes of `size`), its control point `bend` × the
    distance off the straight line (positive: to the left of travel, on screen), ends trimmed to
    the boxes."""
    ax, ay, bx, by = a["x"], a["y"], b["x"], b["y"]
    dx, dy = bx - ax, by - ay
    cx, cy = (ax + bx) / 2 + bend * dy, (ay + by) / 2 - bend * dx
    x1, y1 = _trim(ax, ay, cx, cy, a, size)
    x2, y2 = _trim(bx, by, cx, cy, b, size)
    return f"M{x1:.0f} {y1:.0f}Q{cx:.0f} {cy:.0f} {x2:.0f} {y2:.0f}"


def _trim(x, y, tx, ty, node, size) -> tuple[float, float]:
    """Where the line from a box's centre towards (tx, ty) leaves the box (plus a small gap)."""
    dx, dy = tx - x, ty - y
    hw, hh = (SWITCH_R, SWITCH_R) if node["gpu"] == SWITCH else (size[0] / 2 + 3, size[1] / 2 + 3)
    s = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return (x + dx * s, y + dy * s) if s < 1 else (x, y)


def _head(path: str, size: float = 9) -> str:
    """An open arrowhead at the path's end, along the curve's last tangent."""
    cx, cy, x2, y2 = map(float, path.split("Q")[1].split())
    d = math.hypot(x2 - cx, y2 - cy) or 1.0
    ux, uy = (x2 - cx) / d, (y2 - cy) / d
    left = (x2 - size * (ux - 0.6 * uy), y2 - size * (uy + 0.6 * ux))
    right = (x2 - size * (ux + 0.6 * uy), y2 - size * (uy - 0.6 * ux))
    return f"M{left[0]:.0f} {left[1]:.0f}L{x2:.0f} {y2:.0f}L{right[0]:.0f} {right[1]:.0f}"


def _point(path: str, t: float) -> tuple[int, int]:
    """The point at parameter t along the quadratic: where the label goes."""
    m, q = path[1:].split("Q")
    q = q.split("M")[0]
    x1, y1 = map(float, m.split())
    cx, cy, x2, y2 = map(float, q.split())
    u = 1 - t
    return (
        round(u * u * x1 + 2 * u * t * cx + t * t * x2),
        round(u * u * y1 + 2 * u * t * cy + t * t * y2),
    )


def label(values: list, dtype: str) -> str:
    """The values an arrow carries, as the grid prints them, cut after MAX_LABEL_VALUES."""
    text = ", ".join(value_text(v, dtype) for v in values[:MAX_LABEL_VALUES])
    return text + (", …" if len(values) > MAX_LABEL_VALUES else "")


def arrows(frame: dict, before: dict, layout: dict, dtype: str) -> list[list]:
    """One arrow per pair of nodes the frame's moves join:
    [src, dst, colour, path, label, x, y, from node, to node] (nodes by index in the layout).

    A GPU sends what it held before the step; the switch sends what its receiver holds after it.
    Colour is the sender's GPU index (None for the switch: the text colour).
    """
    nodes, place, size = layout["nodes"], layout["_place"], tuple(layout["node"])
    merged: dict[tuple[int, int], tuple[list, list]] = {}
    for m in frame["moves"]:
        src, dst, a, b = m[:4]
        vals = frame["buffers"][dst][a:b] if src == SWITCH else before["buffers"][src][a:b]
        merged.setdefault((place(m, src), place(m, dst)), (m, []))[1].extend(vals)
    out = []
    for (i, j), (m, vals) in merged.items():
        a, b = nodes[i], nodes[j]
        path = _arc(a, b, layout["_bend"](m, a, b), size)
        x, y = _point(path, layout["_label_at"](a, b))
        colour = None if m[0] == SWITCH else m[0]
        text = "" if layout.get("_quiet") else label(vals, dtype)
        out.append([m[0], m[1], colour, path + _head(path), text, x, y, i, j])
    return out


def holders(frames: list[dict], n: int, start: list[list[int]] | None = None) -> list[list]:
    """For every frame, every cell: the set of GPUs whose numbers it holds, as a bit mask.

    Replayed from the moves: an "add" step unions the sender's set into the receiver's, any
    other copies it; moves into the switch add up there, moves out of it copy its sum.
    """
    length = len(frames[0]["buffers"][0])
    cur = start or [[1 << i] * length for i in range(n)]
    out = [[list(r) for r in cur]]
    for f in frames[1:]:
        prev, cur = cur, [list(r) for r in cur]
        switch = [0] * length
        for src, dst, a, b, *_ in f["moves"]:
            if dst == SWITCH:
                for j in range(a, b):
                    switch[j] |= prev[src][j]
        for src, dst, a, b, *_ in f["moves"]:
            if dst == SWITCH:
                continue
            for j in range(a, b):
                sent = switch[j] if src == SWITCH else prev[src][j]
                cur[dst][j] = cur[dst][j] | sent if f.get("op") == "add" else sent
        out.append([list(r) for r in cur])
    return out


def symbol(mask: int) -> str:
    """a+b for GPUs 0 and 1; a run of three or more as a–d (a+b+c+d)."""
    gpus = [i for i in range(mask.bit_length()) if mask >> i & 1]
    runs: list[list[int]] = []
    for i in gpus:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    parts = []
    for r in runs:
        if len(r) >= 3:
            parts.append(f"{LETTERS[r[0]]}–{LETTERS[r[-1]]}")
        else:
            parts.extend(LETTERS[i] for i in r)
    return "+".join(parts)


def _runs(row: list[int]) -> list[int]:
    """A row as runs: [symbol, count, symbol, count, ...] (neighbouring cells mostly agree)."""
    out: list[int] = []
    for x in row:
        if out and out[-2] == x:
            out[-1] += 1
        else:
            out += [x, 1]
    return out


def cells(runs: list[int]) -> list[int]:
    """A row of `holders` back to one symbol index per cell (what the view does)."""
    return [x for x, k in zip(runs[::2], runs[1::2], strict=True) for _ in range(k)]


def attach(state: dict, layout: dict, start: list[list[int]] | None = None) -> dict:
    """Add the diagram to a stepper's state: the layout once, arrows and holders per frame.

    `holders` per frame and row are runs of indices into `state["symbols"]` (each distinct set of
    GPUs once, see `cells`), so the state stays small; `start` gives the first frame's sets
    when it is not "each its own".
    """
    n = state["gpus"]
    state["diagram"] = {k: v for k, v in layout.items() if not k.startswith("_")}
    frames = state["frames"]
    masks = holders(frames, n, start)
    index: dict[int, int] = {}
    for f, before, rows in zip(frames, [frames[0], *frames], masks, strict=False):
        f["arrows"] = arrows(f, before, layout, state["dtype"])
        f["holders"] = [_runs([index.setdefault(m, len(index)) for m in row]) for row in rows]
    state["symbols"] = [symbol(m) for m in index]
    state["letters"] = (
        "Each cell shows whose numbers in its column it now holds: "
        + ", ".join(f"{LETTERS[i]} = GPU {i}'s" for i in range(n))
        + "; a run such as a–c means a+b+c."
    )
    return state


def hops(layout: dict, pairs: list[tuple[int, int]]) -> list[list]:
    """Arrows for (from GPU, to GPU) pairs with no values: a ring's or a tree's links as a log
    printed them, in `arrows`' shape (coloured by the sender)."""
    nodes, place, size = layout["nodes"], layout["_place"], tuple(layout["node"])
    out = []
    for src, dst in pairs:
        i, j = place((src, dst), src), place((src, dst), dst)
        a, b = nodes[i], nodes[j]
        path = _arc(a, b, layout["_bend"]((src, dst), a, b), size)
        x, y = _point(path, layout["_label_at"](a, b))
        out.append([src, dst, src, path + _head(path), "", x, y, i, j])
    return out


def public(layout: dict) -> dict:
    """A layout as a state carries it: without its private rules."""
    return {k: v for k, v in layout.items() if not k.startswith("_")}
