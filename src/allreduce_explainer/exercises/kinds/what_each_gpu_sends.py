"""The exercises of the page on what each GPU sends: an all_reduce_perf row's algbw and busbw, the
bytes GPU 0 sends in the naive method and each GPU in a ring."""

from __future__ import annotations

import random

from ... import api, fmt
from ...collectives import ALLREDUCE
from ...logs import parse as nccltests
from .common import TOLERANCE, Problem, article, choice, named, quantity, show, titled

HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
    "     (us)  (GB/s)  (GB/s)"
)


def _perf_line(rng: random.Random) -> tuple[int, str, str]:
    """(GPUs, the full all_reduce_perf row, the row with algbw and busbw hidden)."""
    n = rng.choice([4, 8, 16, 32, 64])  # on 2 GPUs busbw is algbw: either would pass
    size = 2 ** rng.randrange(20, 34)
    busbw = rng.randrange(20, 400)
    factor = ALLREDUCE.busbw_factor(n)
    halves, hidden = [], []
    for slower in (1000, 1000 + rng.randrange(0, 30)):
        t = size / (busbw / factor * 1e9) * 1e6 * slower / 1000
        t_text = f"{t:.1f}" if t >= 100 else f"{t:.2f}"
        alg = size / float(t_text) / 1e3
        halves.append(f"{t_text:>8} {alg:7.2f} {alg * factor:7.2f}      0")
        hidden.append(f"{t_text:>8} {'?':>7} {'?':>7}      0")
    lead = f"{size:>12} {size // 4:>13}     float     sum      -1"
    return n, f"{lead} {halves[0]} {halves[1]}", f"{lead} {hidden[0]} {hidden[1]}"


def _line_problem(rng: random.Random, which: str) -> Problem:
    n, line, hidden = _perf_line(rng)
    row = nccltests.parse_line(line)
    half = row.out_of_place
    r = api.busbw(gpus=n, bytes=row.size_bytes, time_us=half.time_us)
    steps = [
        f"The out-of-place run moved {row.size_bytes:,} bytes in {half.time_us:g} µs.",
        f"algbw = size / time = {row.size_bytes:,} B / {half.time_us:g} µs = "
        f"{show(r['algbw_GBps'] * 1e9, 'GB/s')}.",
    ]
    if which == "busbw":
        steps.append(
            f"busbw = algbw × 2(n − 1)/n = {fmt.sig(r['algbw_GBps'], 4)} × {2 * (n - 1)}/{n} = "
            f"{show(r['busbw_GBps'] * 1e9, 'GB/s')}."
        )
    name = "algorithm bandwidth (algbw)" if which == "algbw" else "bus bandwidth (busbw)"
    if which == "busbw":
        mistake = (
            r["algbw_GBps"] * 1e9,
            f"That is algbw; multiply by 2(n − 1)/n = {2 * (n - 1)}/{n} for busbw.",
        )
    else:
        mistake = (
            r["busbw_GBps"] * 1e9,
            "That is busbw; algbw is the size over the time, before the factor 2(n − 1)/n.",
        )
    return quantity(
        r[f"{which}_GBps"] * 1e9,
        "GB/s",
        prompt=f"all_reduce_perf on {n} GPUs printed this row (algbw and busbw hidden):\n"
        f"{HEADER}\n{hidden}\nWhat is the out-of-place {name}, in GB/s?",
        hint="algbw is the size over the time (GB/s = 1e9 bytes per second); busbw multiplies "
        "it by 2(n − 1)/n, the share of the data each GPU's link really carries.",
        steps=steps,
        given={"gpus": n, "bytes": row.size_bytes, "time_us": half.time_us, "line": line},
        mistakes=(mistake,),
    )


@titled("The algbw of an all_reduce_perf row")
def line_algbw(rng: random.Random) -> Problem:
    return _line_problem(rng, "algbw")


@titled("The busbw of an all_reduce_perf row")
def line_busbw(rng: random.Random) -> Problem:
    return _line_problem(rng, "busbw")


SIZES_GB = (1, 2, 3, 4, 6, 14, 16, 26, 140)  # BF16 gradients of 0.5 to 70 billion parameters
# n/(n − 1) above 1 + TOLERANCE: 2S for the ring's 2(n − 1)/n · S, or n · S for the root's
# (n − 1) · S, would pass within the tolerance on more GPUs
MAX_NAMED_GPUS = 64


def _gpus_and_size(rng: random.Random, lo: int) -> tuple[int, float]:
    n = rng.randrange(lo, MAX_NAMED_GPUS + 1)
    return n, rng.choice(SIZES_GB) * 1e9


@titled("The bytes GPU 0 sends in the naive method")
def naive_root_bytes(rng: random.Random) -> Problem:
    n, s = _gpus_and_size(rng, 3)
    r = api.estimate(algorithm="naive", gpus=n, bytes=s, gpus_per_node=n)
    ring = api.estimate(algorithm="ring", gpus=n, bytes=s, gpus_per_node=n)[
        "bytes_sent_per_gpu_max"
    ]
    sent = r["bytes_sent_per_gpu_max"]
    steps = [
        f"GPU 0 sends the sum back to each of the other n − 1 = {n - 1} GPUs, a whole "
        f"gradient each: {n - 1} × {fmt.nbytes(s)} = {show(sent, 'GB')}.",
        f"(A ring GPU sends only 2(n − 1)/n × S = {fmt.nbytes(ring)}.)",
    ]
    return quantity(
        sent,
        "GB",
        prompt=f"{n} GPUs all-reduce {article(fmt.nbytes(s))} gradient the naive way: all send "
        "to GPU 0, which adds and sends the sum back to each. How much data does GPU 0 send, "
        "in GB?",
        hint="GPU 0 sends a whole gradient to every other GPU.",
        steps=steps,
        given={"gpus": n, "bytes": s},
        mistakes=named(
            sent,
            TOLERANCE,
            (n * s, f"That sends a gradient to all {n} GPUs; GPU 0 keeps its own sum."),
            (
                2 * sent,
                "That counts what GPU 0 receives too; the question asks what it sends.",
            ),
            (ring, "That is what a GPU sends in a ring, 2(n − 1)/n × S; here one GPU does it all."),
        ),
    )


@titled("The bytes each GPU sends in a ring")
def ring_bytes_per_gpu(rng: random.Random) -> Problem:
    n, s = _gpus_and_size(rng, 2)
    r = api.estimate(algorithm="ring", gpus=n, bytes=s, gpus_per_node=n)
    sent = r["bytes_sent_per_gpu_max"]
    steps = [
        f"Each of the {r['steps']} steps, a GPU sends one chunk of S/n = {fmt.nbytes(s / n)}.",
        f"{r['steps']} × {fmt.nbytes(s / n)} = 2(n − 1)/n × S = {show(sent, 'GB')}.",
    ]
    return quantity(
        sent,
        "GB",
        prompt=f"{n} GPUs all-reduce {article(fmt.nbytes(s))} gradient with a ring "
        "(reduce-scatter, then all-gather). How much data does each GPU send in all, in GB?",
        hint="Count the steps of both phases and the size of one chunk.",
        steps=steps,
        given={"gpus": n, "bytes": s},
        mistakes=named(
            sent,
            TOLERANCE,
            (
                2 * s,
                f"That is 2S, two whole gradients. Each phase sends n − 1 = {n - 1} chunks of "
                f"S/n, not n: 2(n − 1)/n × S, which never reaches 2S however many GPUs join.",
            ),
            (
                sent / 2,
                "That is one phase, the reduce-scatter; the all-gather sends as much again.",
            ),
            ((n - 1) * s, "That is the naive root's (n − 1) × S; in a ring each GPU sends chunks."),
        ),
    )


RUNS = ("first", "second")


def _busbw_runs(rng: random.Random, better: int, trap: bool) -> list[tuple[int, float]]:
    """Two runs (GPUs, algbw as all_reduce_perf prints it) inside one server, run `better`
    clearly closer to the link's rate by busbw (10 % or more). In a trap the better run has more
    GPUs and the lower algbw, which ranks them the wrong way round; else fewer GPUs (a student
    who always picks the run with more GPUs is wrong there)."""
    link = api.H100_NVLINK_GBps
    while True:
        few, many = sorted((rng.randrange(2, 9), rng.randrange(2, 9)))
        if few == many:
            continue
        shares = [rng.randrange(400, 960) / 1000 for _ in range(2)]
        algbw = [
            round(f * link / ALLREDUCE.busbw_factor(k), 2) for f, k in zip(shares, (few, many))
        ]
        busbw = [a * ALLREDUCE.busbw_factor(k) for a, k in zip(algbw, (few, many))]
        good = 1 if trap else 0  # which of (few, many) is better
        if busbw[good] < 1.1 * busbw[1 - good] or (trap and algbw[1] >= algbw[0]):
            continue
        runs = [(few, algbw[0]), (many, algbw[1])]
        return runs if good == better else runs[::-1]


@titled("Which run uses its links better?")
def busbw_judge(rng: random.Random) -> Problem:
    want = rng.choice(RUNS)
    trap = rng.randrange(2) == 0
    runs = _busbw_runs(rng, RUNS.index(want), trap)
    link = api.H100_NVLINK_GBps
    rows = [
        api.busbw(gpus=k, bytes=2**30, time_us=2**30 / (a * 1e3)) for k, a in runs
    ]  # the core's busbw of each
    busbw = [a * ALLREDUCE.busbw_factor(k) for k, a in runs]
    steps = [
        f"The {name} run: busbw = algbw × 2(n − 1)/n = {a:g} × {2 * (k - 1)}/{k} = "
        f"{fmt.sig(b, 4)} GB/s, {fmt.percent(b / link)} of the link's {link:g} GB/s."
        for name, (k, a), b in zip(RUNS, runs, busbw)
    ]
    steps.append(
        f"The {want} run comes closer: busbw, not algbw, is what each link carries, whatever n."
    )
    other = RUNS[1 - RUNS.index(want)]
    algbw_better = max(range(2), key=lambda i: runs[i][1])
    mistakes = ()
    if RUNS[algbw_better] == other:  # the trap: algbw ranks the runs the wrong way round
        mistakes = (
            (
                other,
                "That compares algbw, which falls as GPUs join even on perfect links: each link "
                "carries busbw = algbw × 2(n − 1)/n. Hold busbw against the link's rate.",
            ),
        )
    return choice(
        want,
        RUNS,
        prompt=f"Two all_reduce_perf runs of 1 GiB inside one server of H100 GPUs (NVLink, "
        f"{link:g} GB/s per direction): the first on {runs[0][0]} GPUs reports algbw "
        f"{runs[0][1]:g} GB/s, the second on {runs[1][0]} GPUs algbw {runs[1][1]:g} GB/s. "
        "Which run's links come closer to their rate? Type first or second.",
        hint="algbw is the size over the time; what does each GPU's link carry, as a share of "
        "it, on n GPUs?",
        steps=steps,
        given={
            "gpus": [k for k, _ in runs],
            "algbw_GBps": [a for _, a in runs],
            "link_GBps": link,
            "busbw_GBps": [r["busbw_GBps"] for r in rows],
        },
        mistakes=mistakes,
    )
