"""The exercises of the page on DDP's buckets: how many, and the first one's size."""

from __future__ import annotations

import random

from ... import api, records
from ...training import calculator
from .common import MIB, Problem, choice, count, plural, quantity, show, titled


def _params(rng: random.Random) -> tuple[list[float], float | None]:
    k = rng.randrange(4, 10)
    sizes = [rng.choice([0.25, 0.5, 1, 2, 3, 4, 6, 8, 10, 16]) for _ in range(k)]
    return sizes, rng.choice([None, 4, 5, 8, 10, 25])


def _bucket_prompt(sizes: list[float], cap: float | None) -> str:
    listed = ", ".join(f"p{i} {m:g} MiB" for i, m in enumerate(sizes))
    rule = (
        f"bucket_cap_mb={cap:g}: every bucket closes as soon as it holds {cap:g} MiB or more"
        if cap is not None
        else "bucket_cap_mb left unset: the first bucket closes as soon as it holds 1 MiB or "
        "more, later ones at 25 MiB"
    )
    return (
        f"A model's parameters, in model order, have gradients of {listed}. PyTorch DDP fills "
        "buckets in the order gradients become ready, from the last parameter to the first, "
        f"with {rule} (so a bucket can overshoot by one tensor)."
    )


def _bucket_steps(sizes: list[float], r: dict) -> list[str]:
    out = []
    for b, (members, nbytes) in enumerate(zip(r["buckets"], r["bucket_bytes"]), 1):
        names = ", ".join(f"p{i}" for i in members)
        out.append(f"Bucket {b}: {names} = {nbytes / MIB:g} MiB.")
    return out


@titled("How many DDP buckets")
def bucket_count(rng: random.Random) -> Problem:
    sizes, cap = _params(rng)
    r = api.buckets(param_bytes=[int(m * MIB) for m in sizes], bucket_cap_mb=cap)
    return count(
        len(r["buckets"]),
        prompt=_bucket_prompt(sizes, cap) + " How many buckets are there?",
        hint="Walk the parameters from the last one, adding each to the open bucket, and "
        "close it as soon as it reaches the limit.",
        steps=[*_bucket_steps(sizes, r), plural(len(r["buckets"]), "bucket") + "."],
        given={"sizes_mib": sizes, "bucket_cap_mb": cap},
    )


@titled("The first DDP bucket's size")
def first_bucket(rng: random.Random) -> Problem:
    rng.randrange(2)  # one draw first, so that a seed gives other buckets than bucket_count's
    sizes, cap = _params(rng)
    r = api.buckets(param_bytes=[int(m * MIB) for m in sizes], bucket_cap_mb=cap)
    want = r["bucket_bytes"][0]
    return quantity(
        want,
        "MiB",
        prompt=_bucket_prompt(sizes, cap) + " How big is the first bucket all-reduced, in MiB?",
        hint="The first bucket starts with the last parameter; keep adding until it reaches "
        "its limit.",
        steps=[*_bucket_steps(sizes, r)[:1], f"The first bucket holds {show(want, 'MiB')}."],
        given={"sizes_mib": sizes, "bucket_cap_mb": cap},
    )


SMALLER_LARGER = ("smaller", "larger")
EXPOSED_MODELS = ("gpt2", "bert-base", "gpt2-xl", "mistral-7b")
CLEAR = 1.2  # the better cap leaves at most 1/CLEAR of the other's exposed time


def _exposed_case(rng: random.Random, winner: str) -> tuple:
    """A model, a number of servers and two caps at which the `winner` (drawn first, half
    each) leaves clearly less communication exposed, by NCCL's model as page 7 times it."""
    while True:
        key = rng.choice(EXPOSED_MODELS)
        servers = rng.choice([1, 2, 4, 8, 16, 32, 64])
        caps = (rng.choice([1, 2, 5]), rng.choice([100, 250]))
        runs = [
            api.ddp(model=key, gpus=8 * servers, gpus_per_node=8, bucket_cap_mb=c) for c in caps
        ]
        small, large = (r["exposed_s"] for r in runs)
        if len(runs[0]["buckets"]) == len(runs[1]["buckets"]):
            continue
        if (small * CLEAR <= large) if winner == "smaller" else (large * CLEAR <= small):
            return key, servers, caps, runs


@titled("Smaller or larger buckets: which hides more?")
def bucket_exposed(rng: random.Random) -> Problem:
    want = rng.choice(SMALLER_LARGER)
    key, servers, caps, runs = _exposed_case(rng, want)
    (c_small, c_large), (r_small, r_large) = caps, runs
    k_small, k_large = len(r_small["buckets"]), len(r_large["buckets"])
    u = records.time_unit(r["exposed_s"] for r in runs)  # the two in one unit, as a block's
    ms = {c: r.text("exposed_s", u) for c, r in zip(caps, runs)}
    where = "one server" if servers == 1 else f"{servers} servers"
    steps = [
        f"bucket_cap_mb = {c_small}: {k_small} buckets, each all-reduce starting as soon as its "
        f"gradients are ready, each paying the all-reduce's fixed cost; {ms[c_small]} exposed.",
        f"bucket_cap_mb = {c_large}: {k_large} buckets, fewer fixed costs, but each waits for "
        f"more of the backward pass; {ms[c_large]} exposed.",
        (
            f"On {where} the fixed cost of an all-reduce is small: the early start wins."
            if want == "smaller"
            else f"Across {where} every all-reduce's fixed cost is large: fewer buckets win."
        ),
    ]
    why = {
        "smaller": (
            f"Small buckets start early, but each all-reduce pays a fixed cost that grows with "
            f"the servers it spans: across {where}, {k_small} of them cost more than they hide."
        ),
        "larger": (
            f"Fewer buckets pay fewer fixed costs, but a large bucket cannot start until all its "
            f"gradients are ready: on {where} the fixed cost is small, and what runs after the "
            "backward pass ends is what is exposed."
        ),
    }
    return choice(
        want,
        SMALLER_LARGER,
        prompt=f"{calculator.model_label(key)} trains with PyTorch DDP on {where} of 8 H100 "
        f"GPUs, one 400 Gb/s network card per GPU, each bucket's all-reduce timed by NCCL's "
        f"model as on this page. Which cap leaves less communication exposed (still running "
        f"when the backward pass ends): the smaller, bucket_cap_mb = {c_small}, or the larger, "
        f"bucket_cap_mb = {c_large}? Type smaller or larger.",
        hint="A bucket's all-reduce can only start once all its gradients are ready; each "
        "all-reduce pays a fixed cost that grows with the servers it spans. Which matters more "
        "here?",
        steps=steps,
        given={"model": key, "servers": servers, "caps_mb": list(caps)},
        why=why,
    )
