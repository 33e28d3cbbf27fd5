"""The exercises of the page on in-network reduction: the bytes on each GPU's link with NVLS, and
from its busbw to the rate on the wire."""

from __future__ import annotations

import random

from ... import fmt
from ...simulation import innetwork
from .common import Problem, quantity, show, titled

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
