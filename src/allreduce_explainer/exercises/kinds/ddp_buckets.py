"""The exercises of the page on DDP's buckets: how many, and the first one's size."""

from __future__ import annotations

import random

from ... import api
from .common import MIB, Problem, count, plural, quantity, show, titled


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
    r = api.buckets([int(m * MIB) for m in sizes], cap)
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
    r = api.buckets([int(m * MIB) for m in sizes], cap)
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
