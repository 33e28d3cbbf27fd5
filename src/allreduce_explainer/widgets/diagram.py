"""The topology beside a stepper's table: where the GPUs sit, and each step's moves as arrows.

Python does all the geometry (the view only draws): a layout (node positions, server boxes,
faint topology links) goes into the state once, and each frame gets `arrows`, one per
(sender, receiver) pair of its moves, labelled with the values carried. It also gets `holders`:
for every cell, which GPUs' numbers it now holds ("a+b" = GPU 0's plus GPU 1's), replayed from
the moves, for the stepper's contributions view.

One call for a stepper: `attach(state, ring(n))` (or `star`, `trees`, `servers`; pass
`switch=True` to a layout when moves name the switch, `SWITCH` = -1).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .common import value_text

SWITCH = -1  # a move's src/dst when the values go through the switch (in-network reduction)
NODE_W, NODE_H = 58, 26  # a GPU's box, in the SVG's units
LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_LABEL_VALUES = 2  # an arrow's label shows this many values, then "…"


def _node(gpu: int, x: float, y: float) -> dict:
    return {
        "gpu": gpu,
        "x": round(x),
        "y": round(y),
        "label": "switch" if gpu < 0 else f"GPU {gpu}",
    }


def _layout(kind, w, h, nodes, links=(), boxes=(), bend=None) -> dict:
    return {
        "kind": kind,
        "w": round(w),
        "h": round(h),
        "nodes": nodes,
        "links": list(links),
        "boxes": list(boxes),
        "_bend": bend or (lambda move, a, b: 0.0),
    }


def ring(n: int, switch: bool = False) -> dict:
    """GPUs clockwise on a circle from the top; arrows bow outwards; the switch in the middle."""
    r = max(95.0, n * 72 / (2 * math.pi))
    c = r + 70
    nodes = [
        _node(i, c + r * math.sin(2 * math.pi * i / n), c - r * math.cos(2 * math.pi * i / n))
        for i in range(n)
    ]
    if switch:
        nodes.append(_node(SWITCH, c, c))
    arc = f"a{r:.0f} {r:.0f} 0 1 0"
    links = [f"M{c - r:.0f} {c:.0f}{arc} {2 * r:.0f} 0{arc} {-2 * r:.0f} 0"]

    def bend(move, a, b):  # outwards for neighbours on the ring, straight through the switch
        return 0.0 if SWITCH in move[:2] else 0.35

    out = _layout("ring", 2 * c, 2 * c, nodes, links, bend=bend)
    # past four GPUs the spokes to the switch are too close for their values to be read: the
    # arrows then show who sends to whom, and the grid's switch row the values
    out["_quiet"] = switch and n > 4
    return out


def star(n: int) -> dict:
    """GPU 0 in the middle, the others around it: the naive method's gather and broadcast."""
    r = max(110.0, (n - 1) * 72 / (2 * math.pi))
    c = r + 50
    nodes = [_node(0, c, c)] + [
        _node(i, c + r * math.sin(2 * math.pi * (i - 1) / (n - 1)),
              c - r * math.cos(2 * math.pi * (i - 1) / (n - 1)))
        for i in range(1, n)
    ]  # fmt: skip
    links = [f"M{c:.0f} {c:.0f}L{q['x']} {q['y']}" for q in nodes[1:]]
    return _layout("star", 2 * c, 2 * c, nodes, links)


def trees(parents: tuple[list[int], list[int]], tree_of_chunk: Callable[[int], int]) -> dict:
    """The double binary tree: GPUs in a row, tree A's edges arcs above it, tree B's below."""
    n = len(parents[0])
    gap = NODE_W + 12
    depth = 40 + 0.3 * gap * (n - 1)  # the widest arc's control-point offset
    y = depth / 2 + 30
    nodes = [_node(i, NODE_W / 2 + 10 + i * gap, y) for i in range(n)]
    links = []
    for t, pa in enumerate(parents):
        for v, up in enumerate(pa):
            if up >= 0:
                links.append(_arc(nodes[v], nodes[up], _tree_bend(nodes[v], nodes[up], t)))

    def bend(move, a, b):
        return _tree_bend(a, b, tree_of_chunk(move[4]))

    return _layout("trees", nodes[-1]["x"] + NODE_W / 2 + 10, 2 * y, nodes, links, bend=bend)


def _tree_bend(a: dict, b: dict, t: int) -> float:
    """Above the row for tree A (t = 0), below for tree B, deeper for longer edges."""
    up = 1 if t == 0 else -1
    span = abs(b["x"] - a["x"])
    direction = 1 if b["x"] > a["x"] else -1
    return up * direction * (40 + 0.3 * span) / max(span, 1)


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

    h = pad + n_servers * (box_h + 30)
    layout = _layout("servers", w, h, nodes, boxes=boxes, bend=bend)
    layout["cards"] = cards
    return layout


def _arc(a: dict, b: dict, bend: float) -> str:
    """A quadratic path from box a to box b, its control point `bend` × the distance off the
    straight line (positive: to the left of travel, on screen), ends trimmed to the boxes."""
    ax, ay, bx, by = a["x"], a["y"], b["x"], b["y"]
    dx, dy = bx - ax, by - ay
    cx, cy = (ax + bx) / 2 + bend * dy, (ay + by) / 2 - bend * dx
    x1, y1 = _trim(ax, ay, cx, cy, a)
    x2, y2 = _trim(bx, by, cx, cy, b)
    return f"M{x1:.0f} {y1:.0f}Q{cx:.0f} {cy:.0f} {x2:.0f} {y2:.0f}"


def _trim(x, y, tx, ty, node) -> tuple[float, float]:
    """Where the line from a box's centre towards (tx, ty) leaves the box (plus a small gap)."""
    dx, dy = tx - x, ty - y
    hw, hh = (24, 24) if node["gpu"] == SWITCH else (NODE_W / 2 + 3, NODE_H / 2 + 3)
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


def _midpoint(path: str) -> tuple[int, int]:
    """The point halfway along the quadratic (t = 1/2): where the label goes."""
    m, q = path[1:].split("Q")
    q = q.split("M")[0]
    x1, y1 = map(float, m.split())
    cx, cy, x2, y2 = map(float, q.split())
    return round(0.25 * x1 + 0.5 * cx + 0.25 * x2), round(0.25 * y1 + 0.5 * cy + 0.25 * y2)


def label(values: list, dtype: str) -> str:
    """The values an arrow carries, as the grid prints them, cut after MAX_LABEL_VALUES."""
    text = ", ".join(value_text(v, dtype) for v in values[:MAX_LABEL_VALUES])
    return text + (", …" if len(values) > MAX_LABEL_VALUES else "")


def arrows(frame: dict, before: dict, layout: dict, dtype: str) -> list[list]:
    """One arrow per (src, dst) of the frame's moves: [src, dst, colour, path, label, x, y].

    A GPU sends what it held before the step; the switch sends what its receiver holds after it.
    Colour is the sender's GPU index (None for the switch: the text colour).
    """
    at = {q["gpu"]: q for q in layout["nodes"]}
    merged: dict[tuple[int, int], tuple[list, list]] = {}
    for m in frame["moves"]:
        src, dst, a, b = m[:4]
        vals = frame["buffers"][dst][a:b] if src == SWITCH else before["buffers"][src][a:b]
        merged.setdefault((src, dst), (m, []))[1].extend(vals)
    out = []
    for (src, dst), (m, vals) in merged.items():
        path = _arc(at[src], at[dst], layout["_bend"](m, at[src], at[dst]))
        x, y = _midpoint(path)
        colour = None if src == SWITCH else src
        text = "" if layout.get("_quiet") else label(vals, dtype)
        out.append([src, dst, colour, path + _head(path), text, x, y])
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
