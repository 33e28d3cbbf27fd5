"""The exercises of the page across servers: the bytes that cross the network, the busiest card's,
the steps that wait for it."""

from __future__ import annotations

import random

from ... import api, fmt
from ...catalog.hardware import NIC_400G_Gbps
from .common import (
    EXACT,
    Problem,
    article,
    choice,
    count,
    gpus_text,
    named,
    quantity,
    show,
    time_unit,
    titled,
)

DESCRIBE = {
    "ring": "one ring over all GPUs in rank order (servers contiguous, so the ring crosses "
    "from one server to the next once per server)",
    "multi-ring": "one ring per network card: as many rings as GPUs per server, each crossing "
    "between servers through a different card",
    "hierarchical": "a reduce-scatter inside each server over NVLink, a ring all-reduce of each "
    "GPU's shard across the servers (GPUs of the same local rank together), then an all-gather "
    "inside each server",
}


def _servers(rng: random.Random, algorithms: tuple[str, ...]) -> tuple:
    nodes, g = rng.randrange(2, 17), rng.choice([4, 8])
    s = rng.choice([1, 2, 4, 14]) * 1e9
    algorithm = rng.choice(algorithms)
    return (
        nodes,
        g,
        s,
        algorithm,
        api.estimate(algorithm=algorithm, gpus=nodes * g, bytes=s, gpus_per_node=g),
    )


def _why_network(algorithm: str, nodes: int, g: int, s: float) -> str:
    n = nodes * g
    if algorithm == "ring":
        return (
            f"The ring has 2(n − 1) = {2 * (n - 1)} steps of S/n = {fmt.nbytes(s / n)}; at each "
            f"step one GPU per server sends through its card: {nodes} servers × "
            f"{2 * (n - 1)} × {fmt.nbytes(s / n)}."
        )
    if algorithm == "multi-ring":
        return (
            f"Each of the {g} rings carries S/g and crosses each server boundary once: per card "
            f"2(n − 1) × S/(g n) = {fmt.nbytes(2 * (n - 1) * s / (g * n))}, on {n} cards."
        )
    return (
        f"Across servers each GPU all-reduces its shard S/g = {fmt.nbytes(s / g)} on a ring of "
        f"N = {nodes} servers, sending 2(N − 1)/N of it: "
        f"{fmt.nbytes(2 * (nodes - 1) * s / (g * nodes))} per card, on {n} cards."
    )


@titled("The bytes that cross the network")
def network_bytes(rng: random.Random) -> Problem:
    nodes, g, s, algorithm, r = _servers(rng, ("ring", "multi-ring", "hierarchical"))
    n = nodes * g
    want = r["bytes_inter_node"]
    return quantity(
        want,
        "GB",
        prompt=f"{gpus_text(n, g)} all-reduce {article(fmt.nbytes(s))} gradient with "
        f"{DESCRIBE[algorithm]}. How many bytes cross the network in all (summed over every "
        "card), in GB?",
        hint="Only messages between GPUs in different servers cross the network; count the "
        "bytes each card sends and add them up.",
        steps=[_why_network(algorithm, nodes, g, s), f"In all: {show(want, 'GB')}."],
        given={"servers": nodes, "gpus_per_node": g, "bytes": s, "algorithm": algorithm},
    )


@titled("The busiest network card's bytes")
def nic_bytes(rng: random.Random) -> Problem:
    # the methods in another order than network_bytes', so that seed 0 (the page's) shows all
    # three methods on the page's three kinds
    nodes, g, s, algorithm, r = _servers(rng, ("multi-ring", "ring", "hierarchical"))
    n = nodes * g
    want = r["bytes_per_nic_max"]
    mistakes = [
        (
            r["bytes_inter_node"],
            "That is every card's bytes summed, what crosses the network in all; the question "
            "asks for the busiest single card.",
        )
    ]
    if algorithm != "ring":  # in a single ring one card per server sends: its server's sum
        mistakes.append(
            (
                g * want,
                f"That is one server's {g} cards summed; each GPU has its own card, and the "
                "question asks for one card.",
            )
        )
    return quantity(
        want,
        "GB",
        prompt=f"{gpus_text(n, g)} all-reduce {article(fmt.nbytes(s))} gradient with "
        f"{DESCRIBE[algorithm]}. How much data does the busiest network card send, in GB?",
        hint="Find which GPUs send across servers, and how many bytes each of them sends that way.",
        steps=[_why_network(algorithm, nodes, g, s), f"The busiest card: {show(want, 'GB')}."],
        given={"servers": nodes, "gpus_per_node": g, "bytes": s, "algorithm": algorithm},
        mistakes=tuple(mistakes),
    )


@titled("The steps that wait for the network")
def network_steps(rng: random.Random) -> Problem:
    # hierarchical first: seed 0 (the page's) then shows the third method
    nodes, g, s, algorithm, r = _servers(rng, ("hierarchical", "ring"))
    n = nodes * g
    if algorithm == "ring":
        why = f"Every one of the ring's 2(n − 1) = {r['steps']} steps crosses a server boundary."
    else:
        why = (
            f"Only the middle phase, a ring of N = {nodes} servers, crosses: 2(N − 1) = "
            f"{r['network_steps']} steps (of {r['steps']} in all)."
        )
    return count(
        r["network_steps"],
        prompt=f"{gpus_text(n, g)} all-reduce a gradient with {DESCRIBE[algorithm]}. How many of "
        "its steps send data over the network?",
        hint="Which phases have a GPU sending to a GPU in another server?",
        steps=[why],
        given={"servers": nodes, "gpus_per_node": g, "algorithm": algorithm},
        mistakes=named(r["network_steps"], EXACT, *_steps_mistakes(algorithm, nodes, n)),
        factor_hints=False,
    )


def _steps_mistakes(algorithm: str, nodes: int, n: int) -> tuple[tuple[int, str], ...]:
    """The other method's count, and one phase's."""
    if algorithm == "ring":
        return (
            (
                2 * (nodes - 1),
                f"That counts a ring of the {nodes} servers, the hierarchical method's middle "
                "phase. A flat ring lays the GPUs in a row, and every one of its steps has a "
                "GPU sending across a server boundary.",
            ),
            (n - 1, "That is one phase; the all-gather's steps cross the network too."),
        )
    return (
        (
            2 * (n - 1),
            f"That is every step of a flat ring over all {n} GPUs. Here only the middle phase, "
            "a ring of the servers, crosses the network.",
        ),
        (nodes - 1, "That is the middle ring's reduce-scatter; its all-gather crosses too."),
    )


FASTEST = ("multi-ring", "hierarchical")
INTRA_LATENCY_US = 1  # NVLink's start-up cost, against the network's drawn one
CLEAR_WIN = 1.2  # the winner at least this much faster: never a close call


def _fastest_case(rng: random.Random, winner: str) -> tuple:
    """Servers, latency and size at which `winner` beats the other by CLEAR_WIN (drawn first,
    half each: the hierarchical method wins most draws, small messages and high latencies)."""
    while True:
        nodes, g = rng.randrange(2, 17), rng.choice([4, 8])
        alpha = rng.choice([2, 5, 10, 20, 50])
        s = 2 ** rng.randrange(14, 34)
        times = {
            a: api.estimate(
                algorithm=a,
                gpus=nodes * g,
                bytes=s,
                gpus_per_node=g,
                intra_latency=INTRA_LATENCY_US,
                inter_latency=alpha,
            )
            for a in FASTEST
        }
        loser = FASTEST[1 - FASTEST.index(winner)]
        if times[loser]["time_s"] >= CLEAR_WIN * times[winner]["time_s"]:
            return nodes, g, alpha, s, times


@titled("Which method is fastest across servers?")
def fastest_method(rng: random.Random) -> Problem:
    want = rng.choice(FASTEST)
    nodes, g, alpha, s, times = _fastest_case(rng, want)
    n = nodes * g
    t = {a: times[a]["time_s"] for a in FASTEST}
    steps = [
        f"One ring per card: 2(n − 1) = {2 * (n - 1)} steps, each paying the network's "
        f"α = {alpha} µs, with chunks of S/(g n) = {fmt.nbytes(s / (g * n))}; NVLink and the "
        f"cards work at once: {show(t['multi-ring'], time_unit(t['multi-ring']))}.",
        f"Hierarchical: 2(g − 1) = {2 * (g - 1)} steps over NVLink, then 2(N − 1) = "
        f"{2 * (nodes - 1)} across servers, one after the other: "
        f"{show(t['hierarchical'], time_unit(t['hierarchical']))}.",
        f"The {want} method is faster here: "
        + ("start-up costs dominate." if want == "hierarchical" else "the bytes dominate."),
    ]
    why = {
        "multi-ring": (
            f"One ring per card spreads the bytes best, but it pays the network's α = {alpha} µs "
            f"{2 * (n - 1)} times in a row, the hierarchical method {2 * (nodes - 1)} times "
            f"(and NVLink's {INTRA_LATENCY_US} µs {2 * (g - 1)} times): at "
            f"{fmt.nbytes(s)} the start-up costs decide."
        ),
        "hierarchical": (
            "The hierarchical method pays fewer start-up costs, but its NVLink phases come "
            "before and after the network's, one after the other, while one ring per card keeps "
            f"NVLink and the cards busy at once: at {fmt.nbytes(s)} the bytes decide."
        ),
    }
    return choice(
        want,
        FASTEST,
        prompt=f"{gpus_text(n, g)}, each GPU with its own network card, all-reduce "
        f"{article(fmt.nbytes(s))} ({s:,} bytes) gradient. A message costs α + size/B: over "
        f"NVLink α = {INTRA_LATENCY_US} µs and B = {api.H100_NVLINK_GBps:g} GB/s, through a "
        f"{NIC_400G_Gbps:g} Gb/s card α = {alpha} µs and B = {api.NIC_400G_GBps:g} GB/s. "
        "Use this page's lock-step models. "
        f"multi-ring: {DESCRIBE['multi-ring']}. hierarchical: {DESCRIBE['hierarchical']}. "
        "Which is faster? Type multi-ring or hierarchical.",
        hint="Count each method's steps in a row and what each step carries. Which matters "
        "more at this size: the start-up costs or the bytes?",
        steps=steps,
        given={"servers": nodes, "gpus_per_node": g, "bytes": s, "latency_us": alpha},
        why=why,
    )
