"""The exercises of the page on the ring's reduce-scatter: a cell after step k, one message's size,
which chunk a GPU owns."""

from __future__ import annotations

import random

from ... import api, fmt
from .common import (
    EXACT,
    Problem,
    article,
    count,
    follow,
    named,
    quantity,
    show,
    small_ring,
    table,
    titled,
)


def _held(values: list, first: int, s: int, i: int, c: int) -> int:
    """What GPU i holds in chunk c after reduce-scatter step s when GPU `first` sends the chunk
    first: the partial sum of the GPUs from `first` round to i once the chunk has reached i,
    else its own value. With first = c, the old textbook numbering (Baidu's) a reader may bring."""
    n = len(values)
    k = (i - first) % n
    return sum(values[(first + j) % n][c] for j in range(k + 1)) if 0 < k <= s else values[i][c]


@titled("A cell after reduce-scatter step k")
def rs_cell(rng: random.Random) -> Problem:
    n, values, trace = small_ring(rng)
    s, c = rng.randrange(1, n), rng.randrange(n)
    start = (c + 1) % n  # chunk c is started by GPU c + 1 (NCCL's runRing)
    i = (start + rng.randrange(1, s + 1)) % n if rng.randrange(4) else rng.randrange(n)
    want = trace[s - 1]["buffers"][i][c]
    steps = [
        f"Chunk {c} starts on GPU {start}, holding {values[start][c]}, and moves one GPU per step."
    ]
    steps += follow(trace, c, 1, s)
    k = (i - start) % n
    if k == 0:
        steps.append(
            f"GPU {i} is where chunk {c} started: it sent its own value on at step 1 and kept "
            f"its copy, {want}."
        )
    elif k < s:
        steps.append(
            f"GPU {i} received chunk {c} at step {k}, sent the sum on at step {k + 1} and kept "
            f"its copy: it still holds {want}, a stale partial sum."
        )
    elif k == s:
        steps.append(f"GPU {i} received chunk {c} at step {k}: it holds {want}.")
    else:
        steps.append(f"GPU {i} has not received chunk {c} by step {s}: it still holds {want}.")
    total = sum(v[c] for v in values)
    return count(
        want,
        prompt=f"{n} GPUs run a ring reduce-scatter on vectors of {n} elements, one element per "
        f"chunk (element j is chunk j): {table(values)}. At step 1 GPU i sends chunk i − 1 to "
        f"GPU i + 1 (GPU 0 sends chunk {n - 1}, and GPU {n - 1} sends to GPU 0), which adds it to "
        f"its own; at each later step every GPU passes on the chunk it has just received. After "
        f"step {s}, what does GPU {i} hold in chunk {c}?",
        hint=f"Follow chunk {c} from GPU {start}, which sends it first: each step it moves to the "
        "next GPU and picks up that GPU's value.",
        steps=steps,
        given={"values": values, "step": s, "gpu": i, "chunk": c},
        mistakes=named(
            want,
            EXACT,
            (
                total,
                f"That is chunk {c}'s finished sum, which only one GPU holds, after step "
                f"{n - 1}. Where has chunk {c} travelled by step {s}, and what did GPU {i} keep "
                "when it passed the chunk on?",
            ),
            (
                _held(values, c, s, i, c),
                f"That is where chunk {c} would be had GPU {c} sent it first. At step 1 GPU i "
                f"sends chunk i − 1, so chunk {c} starts on GPU {start}.",
            ),
        ),
        factor_hints=False,
    )


@titled("The size of one ring message")
def rs_message_bytes(rng: random.Random) -> Problem:
    n = rng.randrange(3, 17)
    s = n * rng.choice([1, 2, 5, 10, 25, 50]) * 1e6
    r = api.estimate(algorithm="ring", gpus=n, bytes=s, gpus_per_node=n)
    message = r["bytes_sent_per_gpu_max"] / r["steps"]
    steps = [
        f"The reduce-scatter takes n − 1 = {n - 1} steps (the whole all-reduce {r['steps']}).",
        f"Each message is one chunk: S / n = {fmt.nbytes(s)} / {n} = {show(message, 'MB')}.",
    ]
    return quantity(
        message,
        "MB",
        prompt=f"{n} GPUs in one server run a ring reduce-scatter on "
        f"{article(fmt.nbytes(s))} gradient. How big is each message, in MB?",
        hint="The ring cuts the gradient into as many chunks as there are GPUs, and every "
        "message carries one chunk.",
        steps=steps,
        given={"gpus": n, "bytes": s},
        # checked before the unit slips: on 8 GPUs the whole gradient is 8 times a chunk, as a
        # number in bits would be, and the whole gradient is the likelier thought
        mistakes=(
            (
                s,
                f"That is the whole gradient. The ring cuts it into {n} chunks, one per GPU, and "
                "each message carries one chunk.",
            ),
            (
                s / (n - 1),
                f"That cuts the gradient into n − 1 = {n - 1} pieces, one per step; the ring cuts "
                f"it into n = {n} chunks, one per GPU.",
            ),
        ),
    )


def _ring(rng: random.Random, n: int) -> list[int]:
    """A ring over n GPUs from GPU 0 in which some GPU is not at its own position: in rank
    order position and GPU number agree, and the chunk a GPU owns would be its own number."""
    while True:
        rest = list(range(1, n))
        order = [0] + [rest.pop(rng.randrange(len(rest))) for _ in range(n - 1)]
        if order != sorted(order):
            return order


@titled("Which chunk a GPU owns")
def rs_owner(rng: random.Random) -> Problem:
    n = rng.randrange(4, 9)
    order = _ring(rng, n)
    i = rng.choice([g for p, g in enumerate(order) if p != g])
    trace = api.simulate(algorithm="ring", gpus=n, length=n, trace=True, order=order)["trace"]
    want = trace[n - 2]["contributors"][i].index(n)  # the chunk with every GPU's part
    p = order.index(i)
    ring = ", ".join(map(str, order))
    steps = [
        f"On the ring {ring}, GPU {i} sits at position {p} (counting from 0).",
        "Chunk c starts at position c + 1 and moves one position per step, adding one GPU's "
        f"part each time; after the n − 1 = {n - 1} steps it has all {n} parts and sits at "
        f"position c + {n - 1} + 1 = c (mod {n}).",
        f"So the GPU at position {p}, GPU {i}, holds the complete chunk {want}.",
    ]
    return count(
        want,
        prompt=f"{n} GPUs run a ring reduce-scatter on the ring {ring}: each GPU sends to the "
        f"next in this list, and GPU {order[-1]} back to GPU {order[0]}. The chunks are numbered "
        f"by position on the ring, counting from 0: at step 1 the GPU at position p sends chunk "
        f"p − 1 (GPU {order[0]}, at position 0, sends chunk {n - 1}); at each later step every "
        f"GPU passes on the chunk it has just received, adding its own part. When it ends, "
        f"which chunk's complete sum does GPU {i} hold?",
        hint="Find GPU "
        f"{i}'s position on the ring, then follow one chunk: where does it start, and how many "
        "positions has it moved after the last step?",
        steps=steps,
        given={"gpus": n, "gpu": i, "order": order},
        mistakes=named(
            want,
            EXACT,
            (
                i,
                f"That is GPU {i}'s own number: in rank order a GPU owns the chunk of its own "
                f"number, because position and GPU number agree. On this ring GPU {i} sits at "
                f"position {p}.",
            ),
            (
                (p - 1) % n,
                f"That is the chunk GPU {i} sends first. It travels {n - 1} GPUs on and ends, "
                "complete, on the GPU just before GPU "
                f"{i} on the ring.",
            ),
            (
                (p + 1) % n,
                "That is the rule for chunks numbered from the GPU that starts them (position p "
                "sends chunk p first). Here position p starts chunk p − 1: where does that "
                "chunk end?",
            ),
        ),
        factor_hints=False,
    )
