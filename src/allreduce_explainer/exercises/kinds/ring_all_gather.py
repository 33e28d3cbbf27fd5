"""The exercises of the page on the ring's all-gather: a cell after step k, the ring's steps, and
the order of the additions (the value the ring leaves, how many ulps a BF16 ring can be off)."""

from __future__ import annotations

import random

from ... import api, fmt
from .common import (
    EXACT,
    TOLERANCE,
    Problem,
    article,
    choice,
    count,
    follow,
    int_text,
    named,
    show,
    small_ring,
    table,
    titled,
)


@titled("A cell after all-gather step k")
def ag_cell(rng: random.Random) -> Problem:
    n, values, trace = small_ring(rng)
    s, c = rng.randrange(1, n), rng.randrange(n)
    owner = c  # GPU r ends the reduce-scatter owning chunk r (NCCL's runRing)
    if s < n - 1 and rng.randrange(2):  # half the time a cell the sum has not reached yet
        i = (owner + rng.randrange(s + 1, n)) % n
    else:
        i = rng.randrange(n)
    want = trace[n - 1 + s - 1]["buffers"][i][c]
    total = trace[n - 2]["buffers"][owner][c]
    steps = [
        f"After the reduce-scatter GPU {owner} holds chunk {c}'s complete sum, "
        + " + ".join(str(v[c]) for v in values)
        + f" = {total}.",
    ]
    k = (i - owner) % n
    last = min(s, k)  # the steps that matter to GPU i: none if it is the owner
    steps += [t.replace("Step ", "All-gather step ") for t in follow(trace[n - 1 :], c, 1, last)]
    if k == 0:
        steps.append(f"GPU {i} is that owner: it holds {want}.")
    elif k <= s:
        steps.append(f"GPU {i} received it at all-gather step {k}: it holds {want}.")
    else:
        steps.append(
            f"The sum reaches GPU {i} only at step {k}; after step {s} GPU {i} still holds "
            f"what the reduce-scatter left there: {want}."
        )
    return count(
        want,
        prompt=f"{n} GPUs run a ring all-reduce on vectors of {n} elements, one per chunk: "
        f"{table(values)}. The reduce-scatter ({n - 1} steps) leaves GPU i with chunk i's "
        f"complete sum; the all-gather then passes each complete chunk on around the ring "
        f"(GPU i to GPU i + 1), and the receiver overwrites its copy. After all-gather step "
        f"{s}, what does GPU {i} hold in chunk {c}?",
        hint=f"Which GPU owns chunk {c}'s sum after the reduce-scatter, and how many steps does "
        f"the sum need to reach GPU {i}?",
        steps=steps,
        given={"values": values, "step": s, "gpu": i, "chunk": c},
        mistakes=(
            (
                total,
                f"That is chunk {c}'s complete sum. Has it reached GPU {i} by all-gather step "
                f"{s}? Count the steps from its owner.",
            ),
        ),
        factor_hints=False,
    )


@titled("The ring's steps")
def ring_steps(rng: random.Random) -> Problem:
    n = rng.randrange(2, 65) if rng.randrange(4) else 2 ** rng.randrange(7, 11)
    r = api.estimate(algorithm="ring", gpus=n, bytes=1e9, gpus_per_node=n)
    steps = [
        f"The reduce-scatter takes n − 1 = {n - 1} steps; the all-gather another {n - 1}.",
        f"In all 2(n − 1) = {r['steps']} steps.",
    ]
    return count(
        r["steps"],
        prompt=f"How many steps does a ring all-reduce take on {n} GPUs?",
        hint="Each phase moves every chunk once around the ring, less one hop.",
        steps=steps,
        given={"gpus": n},
        mistakes=named(
            r["steps"],
            EXACT,
            (n - 1, f"That is one phase, the reduce-scatter; the all-gather takes {n - 1} more."),
            (
                2 * n,
                f"Each phase takes n − 1 = {n - 1} steps, not n: a chunk that starts on one GPU "
                f"needs {n - 1} hops to reach the other {n - 1}.",
            ),
        ),
        factor_hints=False,
    )


ORDER_VALUES = (256, 512, -256, -512, 1, 1, 2, 3)  # BF16 is 2 apart from 256: ties to round


def _ring_order(n: int) -> list[int]:
    """The GPUs in the order they add chunk 0: NCCL's ring starts a chunk at the GPU after it."""
    return [(1 + k) % n for k in range(n)]


def _partial_sums(values: list[int], order: list[int]) -> list[float]:
    """The running sum of `values` in `order`, each partial sum rounded to BF16."""
    out = [float(values[order[0]])]
    for g in order[1:]:
        out.append(api.dtypes.BF16.round(out[-1] + values[g]))
    return out


def _order_case(rng: random.Random) -> tuple[list[int], dict]:
    """Values whose ring result differs from the exact sum, from that sum rounded once, and from
    the sum in GPU order: the order of the roundings decides the answer (about one draw in six,
    so the draws are screened here and the core's orders run once)."""
    while True:
        n = rng.choice([3, 4, 5])
        values = [rng.choice(ORDER_VALUES) for _ in range(n)]
        ring = _partial_sums(values, _ring_order(n))[-1]
        exact = sum(values)
        others = (exact, api.dtypes.BF16.round(exact), _partial_sums(values, list(range(n)))[-1])
        if ring not in others:
            return values, api.orders(gpus=n, dtype="bf16", values=[[v] for v in values])


@titled("Which value the ring leaves for this element")
def order_ring_value(rng: random.Random) -> Problem:
    values, r = _order_case(rng)
    n = len(values)
    want = r["methods"]["ring"]["result"][0]
    order = _ring_order(n)
    partials = _partial_sums(values, order)
    steps = [f"The ring starts at GPU 1 with {values[order[0]]}."]
    for g, before, after in zip(order[1:], partials, partials[1:]):
        steps.append(
            f"GPU {g} adds {values[g]}: {int_text(before)} + {values[g]} rounds to "
            f"{int_text(after)}."
        )
    steps.append(f"GPU 0 keeps {int_text(want)} and the all-gather copies it to every GPU.")
    exact, serial = sum(values), r["methods"]["serial"]["result"][0]
    # one message per value; where two misconceptions give the same, the later one (a dict
    # keeps the last): the exact sum, the one this problem is written against, comes last
    mistakes = {
        serial: "That is the sum in GPU order 0, 1, 2, …, rounded at each step: the ring starts "
        "at GPU 1, and the order of the roundings changes the result.",
        r["exact"][0]: "That is the exact sum rounded once to BF16: the ring rounds every "
        "partial sum on the way, in its own order.",
        exact: f"That is the exact sum, {exact}: BF16 rounds every partial sum on the way, so "
        "the ring's result is not it.",
    }
    return count(
        want,
        prompt=f"{n} GPUs all-reduce one BF16 element with NCCL's ring: GPU i holds "
        + ", ".join(f"GPU {i}: {v}" for i, v in enumerate(values))
        + ". The element is in chunk 0, which GPU 1 sends first; each next GPU round the ring "
        f"(in the order {', '.join(map(str, order))}) adds its own value and rounds to BF16 "
        "(8 significant bits: from 2^k to 2^(k+1) its numbers are 2^(k−7) apart, so 2 apart "
        "from 256 to 512 and 4 from 512 to 1024; a tie goes to the even one). What value does "
        "every GPU end with?",
        hint="Add in the ring's order, GPU 1 first, rounding each partial sum to BF16.",
        steps=steps,
        given={"values": values},
        mistakes=tuple(mistakes.items()),
        factor_hints=False,
    )


@titled("How many ulps a BF16 ring can be off")
def order_bf16_bound(rng: random.Random) -> Problem:
    n = rng.randrange(4, 129)  # from 4, γ's denominator moves the bound by more than 1 %
    mant = rng.choice([1.125, 1.25, 1.375, 1.5, 1.625, 1.75, 1.875])
    u = 2.0**-8
    gamma = (n - 1) * u / (1 - (n - 1) * u)
    want = gamma * mant * 2**7  # |error| <= gamma * s, in ulps of s = mant * 2**k (2**(k-7))
    return count(
        want,
        TOLERANCE,
        prompt=f"{n} GPUs all-reduce a gradient in BF16 with a ring; every contribution to one "
        f"element is positive and their exact sum is s = {mant} × 2^k. Higham's bound for "
        f"n − 1 additions, each rounding to BF16 (u = 2^−8), is |ŝ − s| ≤ γ · Σ|xᵢ|, with "
        f"γ = (n − 1)u / (1 − (n − 1)u). One ulp of s is 2^(k−7). How many ulps of s can the "
        f"ring's result be off, at most by this bound?",
        hint="All positive: Σ|xᵢ| = s. Divide γ · s by the ulp.",
        steps=[
            f"γ = {n - 1} × 2^−8 / (1 − {n - 1} × 2^−8) = {fmt.sig(gamma, 4)}.",
            f"γ · s / ulp = {fmt.sig(gamma, 4)} × {mant} × 2^k / 2^(k−7) = "
            f"{fmt.sig(gamma, 4)} × {mant} × 128 = {fmt.sig(want, 3)} ulps.",
            "A bound: random gradients land far closer (the lab's chart), but it grows with n.",
        ],
        given={"gpus": n, "mantissa": mant},
        mistakes=(
            ((n - 1) * u * mant * 128, "Close: that leaves out γ's denominator 1 − (n − 1)u."),
        ),
    )


POSSIBLE = ("possible", "impossible")


@titled("Can an all-reduce send less than the ring?")
def send_less(rng: random.Random) -> Problem:
    """A claimed bytes-per-GPU figure, judged against the bound the ring meets (Patarasuk and
    Yuan): with the GPUs doing the additions, each sends at least 2(n − 1)/n · S. The verdict is
    drawn first, half each; a figure below is what a misreading gives (one phase, one gradient,
    half a gradient), one above is two gradients, the naive root's or half as much again."""
    n = rng.randrange(3, 65)
    s = rng.choice([1, 2, 4, 8, 14, 16]) * 1e9
    bound = api.estimate(algorithm="ring", gpus=n, bytes=s, gpus_per_node=n)[
        "bytes_sent_per_gpu_max"
    ]
    want = rng.choice(POSSIBLE)
    if want == "impossible":
        claimed = rng.choice([(n - 1) / n * s, s, s / 2])
    else:
        # never the ring's own figure: rounded to 3 figures it could read as just below it
        claimed = rng.choice([2 * s, (n - 1) * s, 1.5 * bound])
    floor = show(bound, "GB")
    steps = [
        f"All but a GPU's own 1/n of the inputs to its sum live on the other GPUs: about "
        f"(n − 1)/n · S must come in while the sums are made, and the finished sums must go out "
        f"again, another (n − 1)/n · S: at least 2(n − 1)/n · S = {floor} per GPU, which the "
        "ring meets.",
        f"The claim, {show(claimed, 'GB')} per GPU, is "
        + ("at or above that floor: possible." if want == "possible" else "below it: impossible."),
    ]
    why = {
        "possible": (
            f"That is below the floor: with the GPUs doing the additions each must send at least "
            f"2(n − 1)/n · S = {floor}. No method on the GPUs sends fewer bytes than the ring."
        ),
        "impossible": (
            f"The floor, 2(n − 1)/n · S = {floor}, is the least a GPU can send, and the ring "
            "meets it; sending more is always possible (the naive root does). A floor is not a "
            "ceiling."
        ),
    }
    return choice(
        want,
        POSSIBLE,
        prompt=f"{n} GPUs all-reduce {article(fmt.nbytes(s))} gradient; the GPUs do all the "
        f"additions themselves, over their own links. A colleague proposes a method in which "
        f"every GPU sends {show(claimed, 'GB')} in all. Is that possible or impossible? Type "
        "possible or impossible.",
        hint="What must come into each GPU for it to hold the sum, and what must go out for the "
        "others to hold it? Compare with what the ring sends, 2(n − 1)/n · S.",
        steps=steps,
        given={"gpus": n, "bytes": s, "claimed_bytes": claimed},
        why=why,
    )
