"""The exercises of the page on latency: a small ring all-reduce with its start-up costs, and ring
against tree."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ... import api, fmt
from ...schedules import tree
from .common import RATIO_TOLERANCE, Problem, choice, count, quantity, show, time_unit, titled


def _flat(rng: random.Random) -> dict:
    return {
        "gpus": rng.choice([8, 16, 32, 64, 128]),
        "latency_us": rng.choice([2, 5, 10, 14, 20]),
        "gbps": rng.choice([25, 50, 100]),
    }


def _flat_estimate(algorithm: str, f: dict, s: float) -> dict:
    """One GPU per server, every message over the same link: the latency page's flat network."""
    links = {"intra_bw": f["gbps"], "inter_bw": f["gbps"]}
    links |= {"intra_latency": f["latency_us"], "inter_latency": f["latency_us"]}
    return api.estimate(algorithm=algorithm, gpus=f["gpus"], bytes=s, gpus_per_node=1, **links)


def _flat_text(f: dict) -> str:
    return (
        f"{f['gpus']} GPUs, each in its own server, every message costing {f['latency_us']} µs "
        f"of latency plus its size over {f['gbps']} GB/s"
    )


@titled("A small ring all-reduce, latency included")
def ring_latency(rng: random.Random) -> Problem:
    f = _flat(rng)
    s = 2 ** rng.randrange(3, 17)
    r = _flat_estimate("ring", f, s)
    u = time_unit(r["time_s"])
    n = f["gpus"]
    per = r["time_s"] / r["steps"]
    steps = [
        f"The ring takes 2(n − 1) = {r['steps']} steps, each a message of S/n = {s / n:g} bytes.",
        f"One message: {f['latency_us']} µs + {s / n:g} B / {f['gbps']} GB/s = "
        f"{show(per, 'µs', 4)}.",
        f"{r['steps']} × {show(per, 'µs', 4)} = {r.text('time_s', u)}.",
    ]
    return quantity(
        r["time_s"],
        u,
        prompt=f"{_flat_text(f)}. How long does a ring all-reduce of {s:,} bytes take, in {u}?",
        hint="2(n − 1) steps, each paying the latency once plus one chunk of S/n bytes.",
        steps=steps,
        given={**f, "bytes": s},
    )


# The lock-step tree as the latency page counts it, stated in full so that a student can follow
# it: with the message in one piece per tree (S ≤ 1 MiB: one 512 KiB slot per half), every step
# is a whole number of message times, and the core's time divided by one message's is that count.
TREE_RULE = (
    "each half of the message (S/2, in one piece) "
    "goes up one of two binary trees to its root and back down, log2 n steps each way; in all "
    "but one step of each phase a GPU has a message in both trees and sends them one after the "
    "other, so such a step takes two message times"
)
MAX_ONE_PIECE = 2 * tree.COST_CHUNK_BYTES  # the largest message the tree sends whole


@dataclass(frozen=True)
class RingTree:
    """One drawn ring-against-tree problem and the lock-step models' counts for it."""

    f: dict
    s: float
    ring: dict
    tree: dict
    tree_messages: int  # message times the tree pays in a row: 2(2 log2 n - 1)

    @property
    def tree_message_s(self) -> float:
        return self.f["latency_us"] * 1e-6 + self.s / 2 / (self.f["gbps"] * 1e9)

    @property
    def miscounted_tree_s(self) -> float:
        """The tree's time had it paid one message time per step (2 log2 n, not queued)."""
        return self.tree["steps"] * self.tree_message_s


RING_TREE = ("ring", "tree")


def _ring_tree(rng: random.Random) -> RingTree:
    """A flat network and size where one algorithm is clearly (1.3×) faster. The winner is drawn
    first, half the time each: among all sizes the tree wins nearly always, and a student who
    always answers "tree" would be right."""
    winner = rng.choice(RING_TREE)
    sizes = [2**k for k in range(10, MAX_ONE_PIECE.bit_length())]  # 1 KiB to 1 MiB
    # the ring's time over the tree's falls as the size grows (its messages are S/n, the
    # tree's S/2): walk from the winner's end of the sizes, and stop where it no longer wins
    sizes = sizes[::-1] if winner == "ring" else sizes
    while True:
        f = _flat(rng)
        cases = []
        for s in sizes:
            ring, tr = _flat_estimate("ring", f, s), _flat_estimate("tree", f, s)
            a, b = (ring["time_s"], tr["time_s"])[:: 1 if winner == "ring" else -1]
            if b < 1.3 * a:
                break
            cases.append((s, ring, tr))
        if cases:
            s, ring, tr = rng.choice(cases)
            per = f["latency_us"] * 1e-6 + s / 2 / (f["gbps"] * 1e9)
            return RingTree(f, s, ring, tr, round(tr["time_s"] / per))


def _ring_tree_prompt(p: RingTree) -> str:
    return (
        f"{_flat_text(p.f)}: a message of b bytes takes α + b/B, with α = "
        f"{p.f['latency_us']} µs and B = {p.f['gbps']} GB/s. Use this page's lock-step models. "
        f"The ring: 2(n − 1) steps, each one message of S/n. This page's lock-step double "
        f"binary tree: {TREE_RULE}."
    )


def _ring_tree_steps(p: RingTree) -> list[str]:
    n, a, depth = p.f["gpus"], p.f["latency_us"], int(math.log2(p.f["gpus"]))
    per_ring = p.ring["time_s"] / p.ring["steps"]
    return [
        f"Ring: 2(n − 1) = {p.ring['steps']} steps, each {a} µs + {fmt.nbytes(p.s / n)} / "
        f"{p.f['gbps']} GB/s = {show(per_ring, 'µs', 4)}: "
        f"{show(p.ring['time_s'], time_unit(p.ring['time_s']))}.",
        f"Tree: 2 log2 n = {p.tree['steps']} steps; in all but one of each phase's {depth} a "
        f"GPU sends its two trees' messages one after the other: 2 × (2 × {depth} − 1) = "
        f"{p.tree_messages} message times of {a} µs + {fmt.nbytes(p.s / 2)} / {p.f['gbps']} "
        f"GB/s = {show(p.tree_message_s, 'µs', 4)}: "
        f"{show(p.tree['time_s'], time_unit(p.tree['time_s']))}.",
    ]


def _miscount_message(p: RingTree) -> str:
    return (
        f"That counts the tree's {p.tree['steps']} steps as {p.tree['steps']} message times. In "
        "this page's lock-step tree a GPU sends its two trees' messages one after the other: "
        "count the steps that take two."
    )


def _bytes_only_message(p: RingTree) -> str:
    return (
        f"The ring sends the fewest bytes, but it pays the latency α = {p.f['latency_us']} µs "
        f"{p.ring['steps']} times in a row, the tree {p.tree_messages} times: at this size "
        "that matters more."
    )


@titled("Ring or tree: which is faster?")
def faster(rng: random.Random) -> Problem:
    p = _ring_tree(rng)
    tree_wins = p.tree["time_s"] < p.ring["time_s"]
    want = "tree" if tree_wins else "ring"
    why = "latency dominates" if tree_wins else "bandwidth dominates"
    if tree_wins:  # counting bytes only, the ring always wins: it sends the fewest
        mistakes = (("ring", _bytes_only_message(p)),)
    elif p.miscounted_tree_s < p.ring["time_s"]:
        mistakes = (("tree", _miscount_message(p)),)
    else:
        mistakes = ()
    return choice(
        want,
        RING_TREE,
        prompt=f"{_ring_tree_prompt(p)} Which all-reduces {fmt.nbytes(p.s)} ({p.s:,} bytes) "
        "faster: the ring or the tree? Type ring or tree.",
        hint="The ring pays α + (S/n)/B 2(n − 1) times; the tree pays α + (S/2)/B "
        "2(2 log2 n − 1) times. Both send about 2S per GPU; they differ in how many start-up "
        "costs come one after another, and in the size of each message.",
        steps=_ring_tree_steps(p) + [f"The {want} is faster: {why} here."],
        given={**p.f, "bytes": p.s},
        mistakes=mistakes,
    )


@titled("How much faster: ring against tree")
def speedup(rng: random.Random) -> Problem:
    p = _ring_tree(rng)
    a, b = sorted((p.ring["time_s"], p.tree["time_s"]))
    want = b / a
    which = "tree" if p.tree["time_s"] < p.ring["time_s"] else "ring"
    lo, hi = sorted((p.ring["time_s"], p.miscounted_tree_s))
    return count(
        want,
        RATIO_TOLERANCE,
        prompt=f"{_ring_tree_prompt(p)} For an all-reduce of {fmt.nbytes(p.s)} ({p.s:,} "
        "bytes), how many times faster is the faster of the two?",
        hint="The ring pays α + (S/n)/B 2(n − 1) times; the tree pays α + (S/2)/B "
        "2(2 log2 n − 1) times. Divide the slower time by the faster.",
        steps=_ring_tree_steps(p)
        + [
            f"The {which} is faster by {show(b, 'µs', 4)} / {show(a, 'µs', 4)} = "
            f"{fmt.sig(want, 3)}×."
        ],
        given={**p.f, "bytes": p.s},
        mistakes=((hi / lo, _miscount_message(p)),),
    )


ROLES = ("leaf", "inner")


def _role(parents: list[int], gpu: int) -> str:
    """A leaf has no child: no GPU names it as its parent."""
    return "inner" if gpu in parents else "leaf"


@titled("Why two trees: a GPU's role in each")
def tree_role(rng: random.Random) -> Problem:
    """NCCL's double binary tree (schedules/tree.py, from NCCL's trees.cc): tree B is tree A's
    mirror on an even number of GPUs, so every leaf of A is an inner node of B and the reverse;
    the role asked about is drawn first, half each. (On an odd number tree B is A shifted by
    one, and GPU 0 keeps its role: not asked.)"""
    n = 2 * rng.randrange(2, 9)
    a, b = tree.dtree_parents(n)
    role_a = rng.choice(ROLES)  # the role in tree A, drawn first: the answer is the other
    g = rng.choice([r for r in range(n) if _role(a, r) == role_a])
    want = _role(b, g)
    parents = ", ".join(f"{r}→{p}" for r, p in enumerate(a) if p >= 0)
    children = [r for r, p in enumerate(a) if p == g]
    in_a = (
        f"In tree A, GPU {g} is a parent of GPU{'s' if len(children) > 1 else ''} "
        f"{', '.join(map(str, children))}: an inner node, adding its children's values in."
        if role_a == "inner"
        else f"In tree A no GPU has GPU {g} as its parent: a leaf, which only sends its values up."
    )
    steps = [
        in_a,
        "A single tree wastes bandwidth: its leaves only send and its root only receives. Tree "
        "B is built (the mirror of A) so that every leaf of A is an inner node of B and the "
        "reverse, each tree carrying half the vector: every GPU sends and receives in both.",
        f"So in tree B GPU {g} is {'a leaf' if want == 'leaf' else 'an inner node'}.",
    ]
    return choice(
        want,
        ROLES,
        prompt=f"NCCL all-reduces over {n} GPUs with its double binary tree. Tree A, as child→"
        f"parent: {parents} (GPU 0 is its root). Tree B is built from tree A as NCCL builds "
        f"it, and each tree carries half of the vector. In tree B, is GPU {g} a leaf (only "
        "sending its values up) or an inner node (adding its children's values)? Type leaf "
        "or inner.",
        hint="Why does NCCL use two trees at all? What do a single tree's leaves and root leave "
        "unused, and how would a second tree put it to work?",
        steps=steps,
        given={"gpus": n, "gpu": g, "tree_a": a, "tree_b": b},
        mistakes=(
            (
                role_a,
                f"That is GPU {g}'s role in tree A. Tree B is not a copy: a copy would leave "
                "the same links idle twice. NCCL builds it so that a leaf of one tree is an "
                "inner node of the other, and every GPU sends and receives in both.",
            ),
        ),
    )
