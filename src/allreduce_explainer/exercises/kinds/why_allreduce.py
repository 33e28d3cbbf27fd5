"""The exercises of the page on why all-reduce: what every GPU holds after one, and the naive and
the ring all-reduce's times."""

from __future__ import annotations

import random

from ... import api, fmt
from .common import LINKS, Problem, gpus_text, quantity, show, time_unit, titled, vector


@titled("What every GPU holds after an all-reduce")
def allreduce_sum(rng: random.Random) -> Problem:
    n, length = rng.randrange(3, 6), rng.randrange(2, 4)
    values = [[rng.randrange(-9, 10) for _ in range(length)] for _ in range(n)]
    result = api.simulate(algorithm="ring", gpus=n, values=values)["results"][0]
    held = "; ".join(f"GPU {i}: {v}" for i, v in enumerate(values))
    steps = [
        f"Element {j}: " + " + ".join(f"({v})" if v < 0 else str(v) for v in col) + f" = {s}."
        for j, (col, s) in enumerate(zip(zip(*values), result))
    ]
    steps.append(f"Every GPU ends with the same vector: {result}.")
    return vector(
        result,
        prompt=f"{n} GPUs hold these gradients ({held}). What does every GPU hold after a sum "
        "all-reduce? Type the vector, e.g. [1, 2].",
        hint="An all-reduce adds the vectors element by element and leaves the sum on every GPU.",
        steps=steps,
        given={"values": values},
    )


def _layout(
    rng: random.Random, servers: tuple[int, ...] = (1, 2, 4, 8)
) -> tuple[int, int, float, float]:
    servers = rng.choice(servers)
    g = 8 if servers > 1 else rng.choice([4, 8])
    params_b = rng.choice([0.5, 1, 1.5, 2, 3, 7, 8, 13, 14, 34, 70])
    return servers * g, g, params_b, params_b * 1e9 * 2


def _how_long(time_s: float, layout: tuple[int, int, float], task: str, **about) -> Problem:
    """Ask how long `task` (what the GPUs of `layout`, (GPUs, per server, gradient bytes), do)
    takes, in the unit that suits its time: both time questions of the page ask it so."""
    n, g, s = layout
    u = time_unit(time_s)
    return quantity(
        time_s,
        u,
        prompt=f"{gpus_text(n, g)} {task} {LINKS} How long does it take, in {u}?",
        given={"gpus": n, "gpus_per_node": g, "bytes": s},
        **about,
    )


@titled("The naive all-reduce's time")
def naive_time(rng: random.Random) -> Problem:
    # across servers, where taking in NVLink and the card at once would give another time
    n, g, params_b, s = _layout(rng, (2, 3, 4, 6, 8))
    topo = api.topology(n, g)
    r = api.estimate(algorithm="naive", gpus=n, bytes=s, gpus_per_node=g)
    u = time_unit(r["time_s"])
    per_nv, per_nic = topo.intra.seconds(s), topo.inter.seconds(s)
    gather = (g - 1) * per_nv + (n - g) * per_nic
    steps = [
        f"The gradient is {params_b:g}e9 parameters × 2 bytes (BF16) = {fmt.nbytes(s)}.",
        f"GPU 0 takes in the other {n - 1} gradients one after another: {g - 1} over NVLink, "
        f"{fmt.nbytes(s)} / {topo.intra.GBps:g} GB/s = {show(per_nv, time_unit(per_nv))} each, "
        f"and {n - g} through its card, {fmt.nbytes(s)} / {topo.inter.GBps:g} GB/s = "
        f"{show(per_nic, time_unit(per_nic))} each: {show(gather, u)}.",
        f"Sending the sum back costs the same again: 2 × {show(gather, u)} = "
        f"{r.text('time_s', u)}.",
    ]
    return _how_long(
        r["time_s"],
        (n, g, s),
        f"train a model of {params_b:g} billion parameters and all-reduce its BF16 gradient the "
        f"naive way: every GPU sends its whole gradient to GPU 0, which receives them one after "
        f"another (one gradient at a time, never two at once), adds them up and sends the sum "
        f"back to each GPU in turn.",
        hint="GPU 0's links do all the work: count the gradients it receives, then sends, and "
        "divide each by the rate of the link it uses.",
        steps=steps,
        mistakes=(
            (
                2 * max((g - 1) * per_nv, (n - g) * per_nic),
                "That has GPU 0 take in gradients over NVLink and through its card at the same "
                "time; here it takes one at a time, so the two add up.",
            ),
        ),
    )


@titled("The ring all-reduce's time")
def ring_time(rng: random.Random) -> Problem:
    n, g, params_b, s = _layout(rng)
    topo = api.topology(n, g)
    r = api.estimate(algorithm="ring", gpus=n, bytes=s, gpus_per_node=g)
    u = time_unit(r["time_s"])
    chunk = s / n
    per_nv = topo.intra.seconds(chunk)
    step = max(per_nv, topo.inter.seconds(chunk)) if n > g else per_nv
    link = "its network card, the slower link" if n > g else "NVLink"
    rate = topo.inter.GBps if n > g else topo.intra.GBps
    steps = [
        f"The gradient is {params_b:g}e9 parameters × 2 bytes = {fmt.nbytes(s)}, cut into "
        f"{n} chunks of {fmt.nbytes(chunk)}.",
        f"The ring takes 2(n − 1) = {r['steps']} steps; in each, every GPU sends one chunk.",
        f"A step lasts as long as its slowest transfer: {fmt.nbytes(chunk)} over {link} at "
        f"{rate:g} GB/s = {show(step, time_unit(step))}.",
        f"{r['steps']} × {show(step, time_unit(step))} = {r.text('time_s', u)}.",
    ]
    return _how_long(
        r["time_s"],
        (n, g, s),
        f"all-reduce the BF16 gradient of a model of {params_b:g} billion parameters with one "
        f"ring over all {n} GPUs (servers contiguous in the ring).",
        hint="The ring has 2(n − 1) steps, each moving a chunk of S/n; the slowest link in the "
        "ring sets the pace of every step.",
        steps=steps,
    )
