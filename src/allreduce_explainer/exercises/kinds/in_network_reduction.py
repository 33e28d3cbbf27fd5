"""The exercises of the page on in-network reduction: the bytes on each GPU's link with NVLS, and
from its busbw to the rate on the wire."""

from __future__ import annotations

import random

from ... import fmt
from ...simulation import innetwork
from .common import Problem, article, choice, quantity, show, titled

NVLS_TEXT = (
    "NCCL's NVLink SHARP (NVLS) all-reduce: the buffer is split into one chunk per GPU; for its "
    "own chunk, each GPU has the switch read that chunk from every GPU and add them, then stores "
    "the sum, which the switch writes to every GPU"
)


@titled("The bytes on each GPU's link with NVLS")
def nvls_link_bytes(rng: random.Random) -> Problem:
    # 4 to 8 GPUs: on 3 the ring's 2(n - 1)/n · S is NVLS's (n + 1)/n · S, so the ring's count
    # would pass, and 2 is among the small counts where NCCL picks the ring (page 9)
    n = rng.randrange(4, 9)
    s = rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 32]) * 1e9
    nvls = innetwork.nvls_bytes(n, s)
    want = nvls["sent_per_gpu"]
    ring = innetwork.ring_bytes(n, s)
    steps = [
        f"The switch reads each of the GPU's {n} chunks of S/n = {fmt.nbytes(s / n)} once, for "
        f"the GPU that adds that chunk: S = {fmt.nbytes(s)} out.",
        f"The GPU stores the sum of its own chunk: another S/n = {fmt.nbytes(s / n)}.",
        f"In all (n + 1)/n · S = {show(want, 'GB')}, against the ring's 2(n − 1)/n · S = "
        f"{fmt.nbytes(ring)}.",
    ]
    return quantity(
        want,
        "GB",
        prompt=f"One server of {n} H100 GPUs on an NVSwitch runs {NVLS_TEXT}. For an all-reduce "
        f"of {fmt.nbytes(s)}, how many bytes leave each GPU over its link, in GB?",
        hint="Count what leaves one GPU: the chunks the switch reads from it, and the sum it "
        "stores.",
        steps=steps,
        given={"gpus": n, "bytes": s},
        mistakes=(
            (
                ring,
                "That is the ring's count, where the GPUs add. With NVLS the switch adds: "
                "count the chunks it reads from the GPU and the sum the GPU stores.",
            ),
            (s, "That is the chunks the switch reads; add the sum the GPU stores."),
        ),
    )


@titled("From NVLS's busbw to the rate on the wire")
def nvls_wire_rate(rng: random.Random) -> Problem:
    n = rng.randrange(4, 9)
    busbw = rng.randrange(250, 481)
    ideal = innetwork.bandwidth(n, 1.0)["nvls"]  # the ratios busbw : algbw : wire, from the core
    algbw = busbw * ideal["algbw_GBps"] / ideal["busbw_GBps"]
    wire = busbw * ideal["wire_GBps"] / ideal["busbw_GBps"]
    steps = [
        f"algbw = busbw / (2(n − 1)/n) = {busbw} × {n}/{2 * (n - 1)} = "
        f"{show(algbw * 1e9, 'GB/s')}: the buffer S moved in S / algbw.",
        f"In that time each link carries (n + 1)/n · S: wire = algbw × {n + 1}/{n} = "
        f"{show(wire * 1e9, 'GB/s')}.",
    ]
    return quantity(
        wire * 1e9,
        "GB/s",
        prompt=f"all_reduce_perf on {n} H100 GPUs in one server, where NCCL chose NVLink SHARP "
        f"(NVLS), reports a busbw of {busbw} GB/s for a large all-reduce. In NVLS each GPU's "
        "link carries (n + 1)/n of the buffer each way (the switch reads all the GPU's chunks, "
        "and the GPU stores one sum). What rate does each link carry, in GB/s?",
        hint="busbw is algbw × 2(n − 1)/n, a factor made for the ring: first go back to algbw "
        "(size over time), then multiply by the bytes NVLS puts on each link per byte of buffer.",
        steps=steps,
        given={"gpus": n, "busbw_GBps": busbw},
        mistakes=(
            (
                busbw * 1e9,
                "That is busbw, which assumes a ring's 2(n − 1)/n · S on each link; NVLS puts "
                "(n + 1)/n · S there. Go through algbw.",
            ),
            (
                algbw * 1e9,
                "That is algbw, the buffer's size over the time; each link carries a little "
                "more than the buffer: (n + 1)/n of it.",
            ),
        ),
    )


POSSIBLE = ("possible", "impossible")


def _claim_nvls(rng: random.Random, want: str) -> dict:
    """One server of n GPUs with NVLS: per GPU, the switch's (n + 1)/n · S against the ring's
    floor, or a figure under S, which no GPU can send: the switch must read all of its data."""
    n = rng.randrange(4, 9)
    s = rng.choice([1, 2, 4, 8, 16]) * 1e9
    nvls, ring = innetwork.nvls_bytes(n, s)["sent_per_gpu"], innetwork.ring_bytes(n, s)
    claimed = nvls if want == "possible" else rng.choice([s / 2, (n - 1) / n * s])
    return {
        "where": f"One server of {n} H100 GPUs on an NVSwitch all-reduces "
        f"{article(fmt.nbytes(s))} gradient with NVLS, the switch adding the chunks as it reads "
        "them",
        "what": "every GPU sends",
        "claimed": claimed,
        "floor_text": f"the ring's 2(n − 1)/n · S = {show(ring, 'GB')}",
        "least": f"the switch must read all of each GPU's S = {fmt.nbytes(s)} to add it",
        "network": f"NVLS's (n + 1)/n · S = {show(nvls, 'GB')}",
        "given": {"gpus": n, "bytes": s, "claimed_bytes": claimed, "network": "nvls"},
    }


def _claim_sharp(rng: random.Random, want: str) -> dict:
    """N servers of g GPUs with InfiniBand SHARP after NVLS inside each server: per network card,
    SHARP's S/g against the ring's 2(N − 1)/N · S/g, or half of S/g, which no card can send: the
    server's partial sum must leave it once."""
    nodes, g = rng.randrange(3, 33), 8
    s = rng.choice([1, 2, 4, 8, 16]) * 1e9
    cards = innetwork.across_servers(nodes, g, s)
    sharp, ring = cards["sharp_bytes_per_card"], cards["ring_bytes_per_card"]
    claimed = sharp if want == "possible" else sharp / 2
    return {
        "where": f"{nodes} servers of {g} GPUs, one network card per GPU, all-reduce "
        f"{article(fmt.nbytes(s))} gradient: NVLS sums inside each server, then the InfiniBand "
        "switches add the servers' partial sums (SHARP) and send the total back",
        "what": "every network card sends",
        "claimed": claimed,
        "floor_text": f"a ring's 2(N − 1)/N · S/g = {show(ring, 'GB')} per card",
        "least": f"each server's partial sum, S = {fmt.nbytes(s)}, must leave it once through "
        f"its {g} cards",
        "network": f"SHARP's S/g = {show(sharp, 'GB')}, N/(2(N − 1)) of a ring's",
        "given": {"servers": nodes, "gpus_per_node": g, "bytes": s, "claimed_bytes": claimed,
                  "network": "sharp"},
    }  # fmt: skip


@titled("Can the network beat the ring's bytes?")
def network_adds(rng: random.Random) -> Problem:
    """A claim below the ring's lower bound, where a switch adds: possible at the switch's own
    figure (the bound assumes the GPUs add), impossible below what must leave each GPU or
    server once. The verdict is drawn first, half each, and the place: NVLS or SHARP."""
    want = rng.choice(POSSIBLE)
    c = (_claim_nvls if rng.randrange(2) else _claim_sharp)(rng, want)
    steps = [
        f"The lower bound, {c['floor_text']}, holds when the GPUs do the additions. Here the "
        "switch adds, so it does not apply.",
        f"What cannot be avoided: {c['least']}.",
        f"The claim, {show(c['claimed'], 'GB')}, is "
        + (
            f"{c['network']}: possible."
            if want == "possible"
            else "less than that: impossible, whoever adds."
        ),
    ]
    why = {
        "impossible": (
            f"Below {c['floor_text']}, yes: but that bound assumes the GPUs do the additions. "
            f"Here the switch adds, and {c['network']} is what it needs."
        ),
        "possible": f"The switch adding lifts the ring's bound, not this one: {c['least']}.",
    }
    return choice(
        want,
        POSSIBLE,
        prompt=f"{c['where']}. A vendor says {c['what']} {show(c['claimed'], 'GB')} per "
        "all-reduce. Is that possible or impossible? Type possible or impossible.",
        hint="Which assumption does the ring's lower bound make? And what must leave each GPU "
        "(or each server) at least once, whoever does the additions?",
        steps=steps,
        given=c["given"],
        why=why,
    )
