"""The exercises of the page on your cluster: a model's gradient size, a ring's and a step's time
on a real cluster, a busbw judged, a ring read from NCCL's debug output."""

from __future__ import annotations

import math
import random

from ... import api, fmt
from ...catalog import hardware, measured
from ...training import calculator
from ..check import close
from .common import (
    GPUS_PER_SERVER,
    TOLERANCE,
    Problem,
    article,
    capital,
    choice,
    count,
    draw_model,
    named,
    quantity,
    show,
    time_unit,
    titled,
)


@titled("A model's gradient size")
def gradient_size(rng: random.Random) -> Problem:
    key, params = draw_model(rng)
    dtype = rng.choice(["bf16", "fp32"])
    # asked in a decimal or a binary unit: the page's models are seven published counts, and
    # the unit, whose prefixes a student must tell apart, makes the problem varied
    u = rng.choice(["GB", "GiB", "MB", "MiB"])
    r = api.calc(model=key, grad_dtype=dtype, gpus=8, overlap_too=False)
    want = r["gradient_bytes"]
    per = calculator.GRAD_BYTES[dtype]
    power = {"GB": "1e9", "MB": "1e6", "GiB": "2^30", "MiB": "2^20"}[u]
    steps = [
        f"{calculator.model_label(key)} has {params:,} parameters, one gradient each.",
        f"{dtype.upper()} takes {per} bytes: {params:,} × {per} = {want:,.0f} bytes.",
        f"1 {u} is {power} bytes: {want:,.0f} B = {show(want, u)}.",
    ]
    return quantity(
        want,
        u,
        prompt=f"{calculator.model_label(key)} has {params:,} parameters. How big is its "
        f"{dtype.upper()} gradient, in {u}?",
        hint="One gradient value per parameter; BF16 takes 2 bytes, FP32 4. GB is 1e9 bytes, "
        "GiB 2^30; MB 1e6, MiB 2^20.",
        steps=steps,
        given={"params": params, "grad_dtype": dtype, "unit": u},
    )


def _cluster(rng: random.Random, servers: tuple[int, ...] = (1, 2, 4, 8, 16, 32)) -> dict:
    return {
        "gpu": rng.choice(["A100 SXM", "H100 SXM", "B200"]),
        "gpus": GPUS_PER_SERVER * rng.choice(servers),
        "nic_Gbps": rng.choice([100, 200, 400, 800]),
    }


@titled("A single ring's time on a real cluster")
def calc_time(rng: random.Random) -> Problem:
    key, params = draw_model(rng)
    # across servers: in one server one ring per card is the single ring, and would pass
    c = _cluster(rng, (2, 4, 8, 16, 32))
    r = api.calc(model=key, algorithm="ring", overlap_too=False, **c)
    link = hardware.find(hardware.GPUS, c["gpu"], "gpu").link_GBps
    n, s = c["gpus"], r["gradient_bytes"]
    rate = min(link, c["nic_Gbps"] / 8)
    u = time_unit(r["allreduce_s"])
    steps = [
        f"The BF16 gradient: {params:,} × 2 bytes = {r.text('gradient_bytes')}.",
        f"A ring over {n} GPUs sends 2(n − 1)/n × S = {fmt.nbytes(2 * (n - 1) / n * s)} per GPU.",
        f"The slowest link sets the pace: NVLink ({link:g} GB/s) or the card "
        f"({c['nic_Gbps']} Gb/s = {c['nic_Gbps'] / 8:g} GB/s): {rate:g} GB/s.",
        f"{fmt.nbytes(2 * (n - 1) / n * s)} / {rate:g} GB/s = {r.text('allreduce_s', u)}.",
    ]
    return quantity(
        r["allreduce_s"],
        u,
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains on {n} {c['gpu']} "
        f"GPUs, {GPUS_PER_SERVER} per server ({link:g} GB/s NVLink per direction), one "
        f"{c['nic_Gbps']} Gb/s "
        f"card per GPU. With no latency, how long does an all-reduce of its BF16 gradient take "
        f"on a single ring through all {n} GPUs (servers one after another, so the ring crosses "
        f"each server boundary through one card), in {u}?",
        hint="Bytes per GPU 2(n − 1)/n × S over the slowest link's rate; a card's Gb/s are "
        "bits: divide by 8.",
        steps=steps,
        given={**c, "params": params, "link_GBps": link},
        mistakes=_calc_mistakes(
            r["allreduce_s"],
            api.calc(model=key, algorithm="multi-ring", overlap_too=False, **c)["allreduce_s"],
            2 * (n - 1) / n * s / (min(link, c["nic_Gbps"]) * 1e9),
            c["nic_Gbps"],
        ),
    )


def _calc_mistakes(want: float, per_card: float, bits: float, gbps: int) -> tuple:
    """One ring per card, and the card's Gb/s read as GB/s, each with its message; where the
    two give the same time (a server of 8 cards is 8 times one card, as bytes are 8 bits), one
    message names both, since the number alone cannot tell which the student did."""
    rings = (
        f"one ring per card, each carrying S/{GPUS_PER_SERVER}, as NCCL runs it; the question "
        "asks for a single ring, whose every step waits for one card"
    )
    bytes_ = f"the card's {gbps} Gb/s read as {gbps} GB/s; a card's Gb/s are bits: divide by 8"
    if close(per_card, bits, TOLERANCE):
        both = f"That is {rings}. It is also what {bytes_}. Check both."
        return named(want, TOLERANCE, (per_card, both))
    return named(
        want,
        TOLERANCE,
        (per_card, f"That is {rings}."),
        (bits, f"That takes {bytes_}."),
    )


@titled("One training step's compute time")
def compute_time(rng: random.Random) -> Problem:
    key, params = draw_model(rng)
    c = _cluster(rng)
    tokens = rng.choice([4096, 8192, 16384, 32768])
    mfu = rng.choice([30, 40, 50]) / 100
    if c["gpus"] <= GPUS_PER_SERVER:  # one server: no card (calc refuses one it cannot use)
        del c["nic_Gbps"]
    r = api.calc(model=key, tokens_per_gpu=tokens, mfu=mfu, overlap_too=False, **c)
    peak = r["peak_tflops"]
    u = time_unit(r["compute_s"])
    flops = 6 * params * tokens
    steps = [
        f"6 × P × T = 6 × {params:,} × {tokens:,} = {flops:.3g} FLOPs.",
        f"The GPU achieves {peak:g} TFLOP/s × {mfu:g} = {peak * mfu:g} TFLOP/s.",
        f"{flops:.3g} / {peak * mfu:g}e12 = {r.text('compute_s', u)}.",
    ]
    return quantity(
        r["compute_s"],
        u,
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains on {c['gpu']} "
        f"GPUs ({peak:g} TFLOP/s dense BF16), {tokens:,} tokens per GPU per step, at "
        f"{fmt.percent(mfu)} of peak (MFU). A forward and backward pass costs 6 FLOPs per "
        f"parameter per token. How long is one step's compute, in {u}?",
        hint="FLOPs = 6 × parameters × tokens; divide by peak × MFU.",
        steps=steps,
        given={"params": params, "tokens": tokens, "mfu": mfu, "gpu": c["gpu"]},
    )


JUDGE_GPUS = ("A100 SXM", "H100 SXM", "B200")
JUDGE_MARGIN = 0.08  # no reading closer than this to the rule's floor: the rule is "about"


def _checks(g: int) -> list[str]:
    """What page 10 says to look at when busbw across servers is low."""
    return [
        "Run it again with NCCL_DEBUG=INFO: the log names the algorithm, the channels and the "
        "network NCCL uses (NET/IB with GPUDirect RDMA, not sockets).",
        f"Every GPU needs its own card: check that NCCL uses all {g} cards of each server "
        "(NCCL_IB_HCA, ibstat) and runs one GPU per process.",
    ]


def _judge_case(rng: random.Random) -> tuple[str, dict, int, float, float]:
    """A cluster whose cards, not NVLink, bound a ring across servers (the rule's case), and a
    reading on the side of the floor drawn first, half the time each, at least JUDGE_MARGIN
    from it."""
    gpu = rng.choice(JUDGE_GPUS)
    link = hardware.find(hardware.GPUS, gpu, "gpu").link_GBps
    card = rng.choice([c for c in hardware.NETWORKS if GPUS_PER_SERVER * c["GBps"] < link])
    yardstick = measured.card_yardstick_GBps(GPUS_PER_SERVER, card["GBps"])
    floor = measured.HEALTHY_SHARE * yardstick
    want = rng.choice(("healthy", "low"))
    if want == "healthy":  # per mille of the yardstick, up to 98 %: a ring does not pass it
        lo, hi = math.ceil(1000 * (1 + JUDGE_MARGIN) * floor / yardstick), 980
    else:
        lo, hi = 400, math.floor(1000 * (1 - JUDGE_MARGIN) * floor / yardstick)
    reading = round(yardstick * rng.randrange(lo, hi + 1) / 1000, 1)
    return gpu, card, rng.choice([2, 4, 8, 16]), yardstick, reading


@titled("Is this busbw healthy?")
def judge_busbw(rng: random.Random) -> Problem:
    gpu, card, servers, yardstick, reading = _judge_case(rng)
    g, size = GPUS_PER_SERVER, 2 ** rng.randrange(30, 35)  # 1 GiB to 16 GiB, as the rule asks
    floor = measured.HEALTHY_SHARE * yardstick
    want = "healthy" if reading >= floor else "low"
    share = fmt.percent(measured.HEALTHY_SHARE)
    rule = (
        f"a server's cards times one card's rate, here {g} × {card['GBps']:g} GB/s = "
        f"{yardstick:g} GB/s"
    )
    steps = [
        f"The yardstick is {rule}: a ring across servers, one card per GPU, reaches at most "
        "that, and healthy cards come close to it.",
        f"{reading:g} GB/s is {fmt.percent(reading / yardstick)} of it: "
        + (
            f"above {share} of it ({fmt.sig(floor, 3)} GB/s), a healthy run."
            if want == "healthy"
            else f"below {share} of it ({fmt.sig(floor, 3)} GB/s): look at the cluster."
        ),
    ]
    if want == "low":
        steps += _checks(g)
    why = {
        "healthy": f"{reading:g} GB/s is a large number, but is it near the yardstick, {rule}?",
        "low": f"How far is {reading:g} GB/s below the yardstick, {rule}?",
    }
    return choice(
        want,
        ("healthy", "low"),
        prompt=f"An all_reduce_perf run with NCCL_ALGO=Ring on {servers} servers of {g} {gpu} "
        f"GPUs, one {card['name']} network card per GPU, reports an out-of-place busbw of "
        f"{reading:g} GB/s at {fmt.nbytes(size)} ({size:,} bytes). Is that healthy for this "
        "cluster, or low? Type healthy or low.",
        hint="The rule of thumb for busbw across servers, on a message of 1 GiB or more: the "
        f"yardstick is {rule}; below about {share} of it, look at the cluster.",
        steps=steps,
        given={
            "gpu": gpu,
            "servers": servers,
            "gpus_per_node": g,
            "nic_Gbps": 8 * card["GBps"],
            "bytes": size,
            "busbw_GBps": reading,
        },
        why=why,
    )


@titled("Read a ring from NCCL's debug output")
def debug_ring_next(rng: random.Random) -> Problem:
    """A `Channel 00/..` line as NCCL_DEBUG=INFO prints it (src/graph/rings.cc:48, rank 0's view
    of the ring): each server's GPUs in turn, leaving it once; which rank does r send to?"""
    servers, g = rng.choice(((2, 4), (2, 8), (3, 4), (4, 2)))
    order = []
    for s in range(servers):
        inner = list(range(s * g + 1, s * g + g))
        rng.shuffle(inner)
        order += [s * g, *inner] if s == 0 else [*inner, s * g]
    n = servers * g
    width = len(str(n - 1))
    line = f"host:1234:1240 [0] NCCL INFO Channel 00/{2 * g:02d} :" + "".join(
        f" {r:>{width}}" for r in order
    )
    r = rng.choice(order)
    i = order.index(r)
    nxt = order[(i + 1) % n]
    last = i == n - 1
    steps = [
        "The line lists channel 0's ring from rank 0, in the order the data travels: each rank "
        "sends to the one after it.",
        f"Rank {r} is at place {i + 1} of {n}: "
        + (
            f"the last, so it sends back to the first, rank {nxt}: the ring closes."
            if last
            else f"the next number is {nxt}."
        ),
        f"Rank {r} sends to rank {nxt}"
        + (
            f", on another server (server {nxt // g}, as ranks {g} per server number them)."
            if nxt // g != r // g
            else f", in the same server {r // g} (over NVLink)."
        ),
    ]
    before = order[(i - 1) % n]
    return count(
        nxt,
        prompt=f"{capital(article(f'{n}-GPU'))} job ({servers} servers of {g}) ran with "
        "NCCL_DEBUG=INFO and printed:"
        f"\n\n    {line}\n\nIn channel 0's ring, which rank does rank {r} send to?",
        hint="Read the ring left to right: each rank sends to the next number; the last sends "
        "to the first.",
        steps=steps,
        given={"ring": order, "rank": r, "servers": servers, "gpus_per_server": g},
        mistakes=(
            (before, "That is the rank it receives from: the data travels left to right."),
            (r, "A rank does not send to itself: take the number after it in the line."),
        ),
        factor_hints=False,
    )
