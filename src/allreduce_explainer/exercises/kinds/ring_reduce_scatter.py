"""The exercises of the page on the ring's reduce-scatter: a cell after step k, one message's size,
which chunk a GPU owns."""

from __future__ import annotations

import random

from ... import api, fmt
from .common import Problem, article, count, follow, quantity, show, small_ring, table, titled


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
        mistakes=_first_of_each_value(
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


def _first_of_each_value(*mistakes: tuple[float, str]) -> tuple[tuple[float, str], ...]:
    """The misconceptions whose values no earlier one has: where two wrong methods land on the
    same number, the first (the likelier) names it, so each listed message is the one a student
    who typed its value gets."""
    out: list[tuple[float, str]] = []
    for value, message in mistakes:
        if all(value != v for v, _ in out):
            out.append((value, message))
    return tuple(out)


@titled("The size of one ring message")
def rs_message_bytes(rng: random.Random) -> Problem:
    n = rng.randrange(3, 17)
    s = n * rng.choice([1, 2, 5, 10, 25, 50]) * 1e6
    r = api.estimate("ring", n, s, n)
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
    )


@titled("Which chunk a GPU owns")
def rs_owner(rng: random.Random) -> Problem:
    n = rng.randrange(3, 9)
    i = rng.randrange(n)
    trace = api.simulate("ring", gpus=n, length=n, trace=True)["trace"]
    counts = trace[n - 2]["contributors"][i]
    want = counts.index(n)
    first = (i - 1) % n
    steps = [
        "Chunk c starts on GPU c + 1 and moves one GPU per step, adding one GPU's part each time.",
        f"After the n − 1 = {n - 1} steps it has all {n} parts and sits on GPU c + 1 + {n - 1} "
        f"= c + {n}, that is GPU c itself (mod {n}).",
        f"So GPU {i} holds the complete chunk {want}; chunk {first}, which GPU {i} sent first, "
        f"ends on GPU {first}.",
    ]
    return count(
        want,
        prompt=f"{n} GPUs run a ring reduce-scatter: GPU i sends to GPU i + 1, and at step 1 it "
        f"sends chunk i − 1 (GPU 0 sends chunk {n - 1}); at each later step every GPU passes on "
        f"the chunk it has just received, adding its own part. When it ends, which chunk's "
        f"complete sum does GPU {i} hold?",
        hint="Follow one chunk: where does it start, and how many GPUs has it visited after "
        "the last step?",
        steps=steps,
        given={"gpus": n, "gpu": i},
        mistakes=(
            (
                first,
                f"That is the chunk GPU {i} sends first. It travels {n - 1} GPUs on and ends, "
                f"complete, on the GPU just before GPU {i}.",
            ),
            (
                (i + 1) % n,
                "That is the rule for chunks numbered from the GPU that starts them (chunk i "
                "first). Here GPU i starts chunk i − 1: where does that chunk end?",
            ),
        ),
        factor_hints=False,
    )
