"""The exercise kinds, stage by stage: each draws its numbers from a random.Random and asks the
core (api.py, costs/cost.py, simulation/simulate.py, logs/parse.py, training/ddp.py,
training/calculator.py) for the answer and for every figure of the worked solution, so the
page's widgets and the exercises cannot disagree.

Only randrange and choice are used on the generator: both are the same in CPython and Pyodide
for the same seed, so a seed in a URL names the same problem everywhere.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .. import api, fmt
from ..catalog import hardware
from ..collectives import ALLREDUCE
from ..costs.cost import tree_chunks
from ..logs import parse as nccltests
from ..training import calculator, ddp
from .units import BYTES, COUNT, RATE, TIME, unit

TOLERANCE = 0.01  # relative: a student rounding to three significant figures is well inside
RATIO_TOLERANCE = 0.02  # a ratio of two rounded times
EXACT = 0.0
VECTOR, CHOICE = "vector", "choice"
MIB = ddp.MIB


@dataclass
class Problem:
    """One generated problem; `answer` is in base units (s, B, B/s) or a count, list or word."""

    prompt: str
    hint: str
    steps: list[str]
    answer: float | list | str
    dimension: str
    unit: str  # the unit the question asks for ("" for a count)
    tolerance: float
    given: dict  # the drawn numbers, for a reader (and a test) to recompute the answer
    choices: tuple[str, ...] = field(default_factory=tuple)

    def answer_text(self) -> str:
        """The final answer as a student would type it (and as the checker accepts it)."""
        if self.dimension == VECTOR:
            return "[" + ", ".join(_int(v) for v in self.answer) + "]"
        if self.dimension == CHOICE:
            return self.answer
        if self.tolerance == EXACT:
            return _int(self.answer) + (f" {self.unit}" if self.unit else "")
        return show(self.answer, self.unit)


def _int(v) -> str:
    return f"{int(v):,}" if float(v).is_integer() else repr(v)


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def show(value: float, unit_text: str, digits: int = 3) -> str:
    """A value in base units, written in `unit_text` to `digits` significant figures."""
    scale = unit(unit_text).scale if unit_text else 1.0
    text = fmt.sig(value / scale, digits)
    return f"{text} {unit_text}" if unit_text else text


def time_unit(t: float) -> str:
    return "s" if t >= 0.1 else "ms" if t >= 1e-4 else "µs"


def bytes_unit(b: float) -> str:
    return "GB" if b >= 1e9 else "MB" if b >= 1e6 else "kB"


def _gpus(n: int, g: int) -> str:
    servers = n // g
    if servers == 1:
        return f"{n} GPUs in one server"
    return f"{n} GPUs in {servers} servers of {g}"


LINKS = (
    f"Inside a server each GPU reaches the others over NVLink at {api.H100_NVLINK_GBps:g} GB/s "
    f"per direction; between servers each GPU has its own 400 Gb/s network card "
    f"({api.NIC_400G_GBps:g} GB/s). Ignore latency."
)


# ---- Why all-reduce ------------------------------------------------------------------------------


def allreduce_sum(rng: random.Random) -> Problem:
    n, length = rng.randrange(3, 6), rng.randrange(2, 4)
    values = [[rng.randrange(-9, 10) for _ in range(length)] for _ in range(n)]
    result = api.simulate("ring", gpus=n, values=values)["results"][0]
    held = "; ".join(f"GPU {i}: {v}" for i, v in enumerate(values))
    steps = [
        f"Element {j}: " + " + ".join(f"({v})" if v < 0 else str(v) for v in col) + f" = {s}."
        for j, (col, s) in enumerate(zip(zip(*values), result))
    ]
    steps.append(f"Every GPU ends with the same vector: {result}.")
    return Problem(
        prompt=f"{n} GPUs hold these gradients ({held}). What does every GPU hold after a sum "
        "all-reduce? Type the vector, e.g. [1, 2].",
        hint="An all-reduce adds the vectors element by element and leaves the sum on every GPU.",
        steps=steps,
        answer=result,
        dimension=VECTOR,
        unit="",
        tolerance=EXACT,
        given={"values": values},
    )


def _layout(rng: random.Random) -> tuple[int, int, float, float]:
    servers = rng.choice([1, 2, 4, 8])
    g = 8 if servers > 1 else rng.choice([4, 8])
    params_b = rng.choice([1, 2, 3, 7, 8, 13])
    return servers * g, g, params_b, params_b * 1e9 * 2


def naive_time(rng: random.Random) -> Problem:
    n, g, params_b, s = _layout(rng)
    topo = api.topology(n, g)
    r = api.estimate("naive", n, s, g)
    u = time_unit(r["time_s"])
    per_nv, per_nic = topo.intra.seconds(s), topo.inter.seconds(s)
    gather = (g - 1) * per_nv + (n - g) * per_nic
    steps = [
        f"The gradient is {params_b:g}e9 parameters × 2 bytes (BF16) = {fmt.nbytes(s)}.",
        f"GPU 0 takes in the other {n - 1} gradients one after another: {g - 1} over NVLink, "
        f"{fmt.nbytes(s)} / {topo.intra.GBps:g} GB/s = {show(per_nv, time_unit(per_nv))} each"
        + (
            f", and {n - g} through its card, {fmt.nbytes(s)} / {topo.inter.GBps:g} GB/s = "
            f"{show(per_nic, time_unit(per_nic))} each"
            if n > g
            else ""
        )
        + f": {show(gather, u)}.",
        f"Sending the sum back costs the same again: 2 × {show(gather, u)} = "
        f"{show(r['time_s'], u)}.",
    ]
    return Problem(
        prompt=f"{_gpus(n, g)} train a model of {params_b:g} billion parameters and all-reduce "
        f"its BF16 gradient the naive way: every GPU sends its whole gradient to GPU 0, which "
        f"adds them up and sends the sum back to each GPU in turn. {LINKS} How long does it "
        f"take, in {u}?",
        hint="GPU 0's links do all the work: count the gradients it receives, then sends, and "
        "divide each by the rate of the link it uses.",
        steps=steps,
        answer=r["time_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
        given={"gpus": n, "gpus_per_node": g, "bytes": s},
    )


def ring_time(rng: random.Random) -> Problem:
    n, g, params_b, s = _layout(rng)
    topo = api.topology(n, g)
    r = api.estimate("ring", n, s, g)
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
        f"{r['steps']} × {show(step, time_unit(step))} = {show(r['time_s'], u)}.",
    ]
    return Problem(
        prompt=f"{_gpus(n, g)} all-reduce the BF16 gradient of a model of {params_b:g} billion "
        f"parameters with "
        f"one ring over all {n} GPUs (servers contiguous in the ring). {LINKS} How long does "
        f"it take, in {u}?",
        hint="The ring has 2(n − 1) steps, each moving a chunk of S/n; the slowest link in the "
        "ring sets the pace of every step.",
        steps=steps,
        answer=r["time_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
        given={"gpus": n, "gpus_per_node": g, "bytes": s},
    )


# ---- Ring reduce-scatter -------------------------------------------------------------------------


def _small_ring(rng: random.Random, lo: int = 3, hi: int = 7) -> tuple[int, list, list]:
    n = rng.randrange(lo, hi)
    values = [[rng.randrange(0, 10) for _ in range(n)] for _ in range(n)]
    trace = api.simulate("ring", gpus=n, values=values, trace=True)["trace"]
    return n, values, trace


def _table(values: list) -> str:
    return "; ".join(f"GPU {i}: {v}" for i, v in enumerate(values))


def _follow(trace: list, chunk: int, first: int, last: int) -> list[str]:
    """The narration of chunk `chunk`'s moves in steps first..last (from 1)."""
    out = []
    for t in range(first, last + 1):
        for m in trace[t - 1]["messages"]:
            if m["start"] == chunk:
                verb = "adds it to its own" if trace[t - 1]["op"] == "add" else "copies it"
                now = trace[t - 1]["buffers"][m["dst"]][chunk]
                out.append(
                    f"Step {t}: GPU {m['src']} sends chunk {chunk} ({m['values'][0]}) to GPU "
                    f"{m['dst']}, which {verb}: {now}."
                )
    return out


def rs_cell(rng: random.Random) -> Problem:
    n, values, trace = _small_ring(rng)
    s, c = rng.randrange(1, n), rng.randrange(n)
    i = (c + rng.randrange(1, s + 1)) % n if rng.randrange(4) else rng.randrange(n)
    want = trace[s - 1]["buffers"][i][c]
    steps = [f"Chunk {c} starts on GPU {c}, holding {values[c][c]}, and moves one GPU per step."]
    steps += _follow(trace, c, 1, s)
    k = (i - c) % n
    if 1 <= k <= s:
        steps.append(f"GPU {i} received chunk {c} at step {k}: it holds {want}.")
    else:
        steps.append(f"GPU {i} has not received chunk {c} by step {s}: it still holds {want}.")
    return Problem(
        prompt=f"{n} GPUs run a ring reduce-scatter on vectors of {n} elements, one element per "
        f"chunk (element j is chunk j): {_table(values)}. At step 1 GPU i sends chunk i to GPU "
        f"i + 1 (GPU {n - 1} sends to GPU 0), which adds it to its own; at each later step every "
        f"GPU passes on the chunk it has just received. After step {s}, what does GPU {i} hold "
        f"in chunk {c}?",
        hint=f"Follow chunk {c} from GPU {c}: each step it moves to the next GPU and picks up "
        "that GPU's value.",
        steps=steps,
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"values": values, "step": s, "gpu": i, "chunk": c},
    )


def rs_message_bytes(rng: random.Random) -> Problem:
    n = rng.randrange(3, 17)
    s = n * rng.choice([1, 2, 5, 10, 25, 50]) * 1e6
    r = api.estimate("ring", n, s, n)
    message = r["bytes_sent_per_gpu_max"] / r["steps"]
    steps = [
        f"The reduce-scatter takes n − 1 = {n - 1} steps (the whole all-reduce {r['steps']}).",
        f"Each message is one chunk: S / n = {fmt.nbytes(s)} / {n} = {show(message, 'MB')}.",
    ]
    return Problem(
        prompt=f"{n} GPUs in one server run a ring reduce-scatter on a {fmt.nbytes(s)} gradient. "
        "How big is each message, in MB?",
        hint="The ring cuts the gradient into as many chunks as there are GPUs, and every "
        "message carries one chunk.",
        steps=steps,
        answer=message,
        dimension=BYTES,
        unit="MB",
        tolerance=TOLERANCE,
        given={"gpus": n, "bytes": s},
    )


def rs_owner(rng: random.Random) -> Problem:
    n = rng.randrange(3, 9)
    i = rng.randrange(n)
    trace = api.simulate("ring", gpus=n, length=n, trace=True)["trace"]
    counts = trace[n - 2]["contributors"][i]
    want = counts.index(n)
    steps = [
        "Chunk c starts on GPU c and moves one GPU per step, adding one GPU's part each time.",
        f"After the n − 1 = {n - 1} steps it has all {n} parts and sits on GPU c + {n - 1}, "
        f"that is GPU c − 1 (mod {n}).",
        f"So GPU {i} holds the complete chunk {i} + 1 mod {n} = {want}.",
    ]
    return Problem(
        prompt=f"{n} GPUs run a ring reduce-scatter (GPU i sends to GPU i + 1, chunk i first). "
        f"When it ends, which chunk's complete sum does GPU {i} hold?",
        hint="Follow one chunk: where does it start, and how many GPUs has it visited after "
        "the last step?",
        steps=steps,
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"gpus": n, "gpu": i},
    )


# ---- All-gather ----------------------------------------------------------------------------------


def ring_steps(rng: random.Random) -> Problem:
    n = rng.choice([2, 3, 4, 5, 6, 8, 12, 16, 32, 64, 128, 256, 512, 1024])
    r = api.estimate("ring", n, 1e9, n)
    steps = [
        f"The reduce-scatter takes n − 1 = {n - 1} steps; the all-gather another {n - 1}.",
        f"In all 2(n − 1) = {r['steps']} steps.",
    ]
    return Problem(
        prompt=f"How many steps does a ring all-reduce take on {n} GPUs?",
        hint="Each phase moves every chunk once around the ring, less one hop.",
        steps=steps,
        answer=r["steps"],
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"gpus": n},
    )


def ring_bytes_per_gpu(rng: random.Random) -> Problem:
    n = rng.choice([2, 3, 4, 8, 16, 32, 64, 128, 1024])
    s = rng.choice([1, 2, 4, 14]) * 1e9
    r = api.estimate("ring", n, s, n)
    sent = r["bytes_sent_per_gpu_max"]
    steps = [
        f"Each of the {r['steps']} steps, a GPU sends one chunk of S/n = {fmt.nbytes(s / n)}.",
        f"{r['steps']} × {fmt.nbytes(s / n)} = 2(n − 1)/n × S = {show(sent, 'GB')}.",
    ]
    return Problem(
        prompt=f"{n} GPUs all-reduce a {fmt.nbytes(s)} gradient with a ring (reduce-scatter, then "
        "all-gather). How much data does each GPU send in all, in GB?",
        hint="Count the steps of both phases and the size of one chunk.",
        steps=steps,
        answer=sent,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"gpus": n, "bytes": s},
    )


def ag_cell(rng: random.Random) -> Problem:
    n, values, trace = _small_ring(rng)
    s, c, i = rng.randrange(1, n), rng.randrange(n), rng.randrange(n)
    want = trace[n - 1 + s - 1]["buffers"][i][c]
    owner = (c - 1) % n
    total = trace[n - 2]["buffers"][owner][c]
    steps = [
        f"After the reduce-scatter GPU {owner} holds chunk {c}'s complete sum, "
        + " + ".join(str(v[c]) for v in values)
        + f" = {total}.",
    ]
    steps += [t.replace("Step ", "All-gather step ") for t in _follow(trace[n - 1 :], c, 1, s)]
    k = (i - owner) % n
    if k == 0:
        steps.append(f"GPU {i} is that owner: it holds {want}.")
    elif k <= s:
        steps.append(f"GPU {i} received it at all-gather step {k}: it holds {want}.")
    else:
        steps.append(
            f"The sum reaches GPU {i} only at step {k}; after step {s} GPU {i} still holds "
            f"what the reduce-scatter left there: {want}."
        )
    return Problem(
        prompt=f"{n} GPUs run a ring all-reduce on vectors of {n} elements, one per chunk: "
        f"{_table(values)}. The reduce-scatter ({n - 1} steps) leaves GPU i with chunk i + 1's "
        f"complete sum; the all-gather then passes each complete chunk on around the ring "
        f"(GPU i to GPU i + 1), and the receiver overwrites its copy. After all-gather step "
        f"{s}, what does GPU {i} hold in chunk {c}?",
        hint=f"Which GPU owns chunk {c}'s sum after the reduce-scatter, and how many steps does "
        f"the sum need to reach GPU {i}?",
        steps=steps,
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"values": values, "step": s, "gpu": i, "chunk": c},
    )


# ---- What each GPU sends, and nccl-tests' busbw --------------------------------------------------

HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
    "     (us)  (GB/s)  (GB/s)"
)


def _perf_line(rng: random.Random) -> tuple[int, str, str]:
    """(GPUs, the full all_reduce_perf row, the row with algbw and busbw hidden)."""
    n = rng.choice([2, 4, 8, 16, 32, 64])
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
    r = api.busbw(n, row.size_bytes, half.time_us)
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
    return Problem(
        prompt=f"all_reduce_perf on {n} GPUs printed this row (algbw and busbw hidden):\n"
        f"{HEADER}\n{hidden}\nWhat is the out-of-place {name}, in GB/s?",
        hint="algbw is the size over the time (GB/s = 1e9 bytes per second); busbw multiplies "
        "it by 2(n − 1)/n, the share of the data each GPU's link really carries.",
        steps=steps,
        answer=r[f"{which}_GBps"] * 1e9,
        dimension=RATE,
        unit="GB/s",
        tolerance=TOLERANCE,
        given={"gpus": n, "bytes": row.size_bytes, "time_us": half.time_us, "line": line},
    )


def line_algbw(rng: random.Random) -> Problem:
    return _line_problem(rng, "algbw")


def line_busbw(rng: random.Random) -> Problem:
    return _line_problem(rng, "busbw")


def naive_root_bytes(rng: random.Random) -> Problem:
    n = rng.choice([4, 8, 16, 32, 64])
    s = rng.choice([1, 2, 4, 14]) * 1e9
    r = api.estimate("naive", n, s, n)
    ring = api.estimate("ring", n, s, n)["bytes_sent_per_gpu_max"]
    sent = r["bytes_sent_per_gpu_max"]
    steps = [
        f"GPU 0 sends the sum back to each of the other n − 1 = {n - 1} GPUs, a whole "
        f"gradient each: {n - 1} × {fmt.nbytes(s)} = {show(sent, 'GB')}.",
        f"(A ring GPU sends only 2(n − 1)/n × S = {fmt.nbytes(ring)}.)",
    ]
    return Problem(
        prompt=f"{n} GPUs all-reduce a {fmt.nbytes(s)} gradient the naive way: all send to GPU "
        "0, which adds and sends the sum back to each. How much data does GPU 0 send, in GB?",
        hint="GPU 0 sends a whole gradient to every other GPU.",
        steps=steps,
        answer=sent,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"gpus": n, "bytes": s},
    )


# ---- Latency, ring against tree ------------------------------------------------------------------


def _flat(rng: random.Random) -> dict:
    return {
        "gpus": rng.choice([8, 16, 32, 64, 128]),
        "latency_us": rng.choice([2, 5, 10, 14, 20]),
        "gbps": rng.choice([25, 50, 100]),
    }


def _flat_estimate(algorithm: str, f: dict, s: float) -> dict:
    """One GPU per server, every message over the same link: the latency page's flat network."""
    links = {"intra_bw": f["gbps"], "inter_bw": f["gbps"]}
    links |= {"intra_latency": f["latency_us"], "inter_latency": f["latency_us"]}
    return api.estimate(algorithm, f["gpus"], s, 1, **links)


def _flat_text(f: dict) -> str:
    return (
        f"{f['gpus']} GPUs, each in its own server, every message costing {f['latency_us']} µs "
        f"of latency plus its size over {f['gbps']} GB/s"
    )


def ring_latency(rng: random.Random) -> Problem:
    f = _flat(rng)
    s = 2 ** rng.randrange(3, 17)
    r = _flat_estimate("ring", f, s)
    u = time_unit(r["time_s"])
    n = f["gpus"]
    per = r["time_s"] / r["steps"]
    steps = [
        f"The ring takes 2(n − 1) = {r['steps']} steps, each a message of S/n = {s / n:g} bytes.",
        f"One message: {f['latency_us']} µs + {s / n:g} B / {f['gbps']} GB/s = "
        f"{show(per, 'µs', 4)}.",
        f"{r['steps']} × {show(per, 'µs', 4)} = {show(r['time_s'], u)}.",
    ]
    return Problem(
        prompt=f"{_flat_text(f)}. How long does a ring all-reduce of {s:,} bytes take, in {u}?",
        hint="2(n − 1) steps, each paying the latency once plus one chunk of S/n bytes.",
        steps=steps,
        answer=r["time_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
        given={**f, "bytes": s},
    )


def _ring_tree(rng: random.Random) -> tuple[dict, float, dict, dict]:
    """A flat network and size where one algorithm is clearly (1.3×) faster."""
    while True:
        f = _flat(rng)
        s = 2 ** rng.randrange(10, 25)
        ring, tr = _flat_estimate("ring", f, s), _flat_estimate("tree", f, s)
        if max(ring["time_s"], tr["time_s"]) >= 1.3 * min(ring["time_s"], tr["time_s"]):
            return f, s, ring, tr


def _ring_tree_steps(f: dict, s: float, ring: dict, tr: dict) -> list[str]:
    k = tree_chunks(s)
    return [
        f"Ring: {ring['steps']} steps, each {f['latency_us']} µs + (S/n) / B: "
        f"{show(ring['time_s'], time_unit(ring['time_s']))}.",
        f"Tree: each half of the message goes up and down a tree of depth about "
        f"log2 n = {math.log2(f['gpus']):g}, in {k} pipelined chunk{'s' if k > 1 else ''} of "
        f"{fmt.nbytes(s / 2 / k)}: {tr['steps']} steps, "
        f"{show(tr['time_s'], time_unit(tr['time_s']))}.",
    ]


def faster(rng: random.Random) -> Problem:
    f, s, ring, tr = _ring_tree(rng)
    want = "tree" if tr["time_s"] < ring["time_s"] else "ring"
    why = "latency dominates" if want == "tree" else "bandwidth dominates"
    return Problem(
        prompt=f"{_flat_text(f)}. Which all-reduces {fmt.nbytes(s)} ({s:,} bytes) faster: "
        "the ring or NCCL's double binary tree? Type ring or tree.",
        hint="The ring pays the latency 2(n − 1) times, the tree about 2 log2 n times; but "
        "the tree moves about twice the ring's bytes per GPU.",
        steps=_ring_tree_steps(f, s, ring, tr) + [f"The {want} is faster: {why} here."],
        answer=want,
        dimension=CHOICE,
        unit="",
        tolerance=EXACT,
        given={**f, "bytes": s},
        choices=("ring", "tree"),
    )


def speedup(rng: random.Random) -> Problem:
    f, s, ring, tr = _ring_tree(rng)
    a, b = sorted((ring["time_s"], tr["time_s"]))
    want = b / a
    which = "tree" if tr["time_s"] < ring["time_s"] else "ring"
    return Problem(
        prompt=f"{_flat_text(f)}. For an all-reduce of {fmt.nbytes(s)} ({s:,} bytes), how many "
        "times faster is the faster of the ring and NCCL's double binary tree (pipelined in "
        "512 KiB chunks)?",
        hint="Work out both times (the stage's chart shows them), then divide the slower by "
        "the faster.",
        steps=_ring_tree_steps(f, s, ring, tr)
        + [
            f"The {which} is faster by {show(b, 'µs', 4)} / {show(a, 'µs', 4)} = "
            f"{fmt.sig(want, 3)}×."
        ],
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=RATIO_TOLERANCE,
        given={**f, "bytes": s},
    )


# ---- Servers and the network ---------------------------------------------------------------------

DESCRIBE = {
    "ring": "one ring over all GPUs in rank order (servers contiguous, so the ring crosses "
    "from one server to the next once per server)",
    "multi-ring": "one ring per network card: g rings, each crossing between servers through "
    "a different card",
    "hierarchical": "a reduce-scatter inside each server over NVLink, a ring all-reduce of each "
    "GPU's shard across the servers (GPUs of the same local rank together), then an all-gather "
    "inside each server",
}


def _servers(rng: random.Random, algorithms: tuple[str, ...]) -> tuple:
    nodes, g = rng.choice([2, 4, 8, 16]), rng.choice([4, 8])
    s = rng.choice([1, 2, 4, 14]) * 1e9
    algorithm = rng.choice(algorithms)
    return nodes, g, s, algorithm, api.estimate(algorithm, nodes * g, s, g)


def _why_network(algorithm: str, nodes: int, g: int, s: float) -> str:
    n = nodes * g
    if algorithm == "ring":
        return (
            f"The ring has 2(n − 1) = {2 * (n - 1)} steps of S/n = {fmt.nbytes(s / n)}; at each "
            f"step one GPU per server sends through its card: {nodes} servers × "
            f"{2 * (n - 1)} × {fmt.nbytes(s / n)}."
        )
    if algorithm == "multi-ring":
        return (
            f"Each of the {g} rings carries S/g and crosses each server boundary once: per card "
            f"2(n − 1) × S/(g n) = {fmt.nbytes(2 * (n - 1) * s / (g * n))}, on {n} cards."
        )
    return (
        f"Across servers each GPU all-reduces its shard S/g = {fmt.nbytes(s / g)} on a ring of "
        f"N = {nodes} servers, sending 2(N − 1)/N of it: "
        f"{fmt.nbytes(2 * (nodes - 1) * s / (g * nodes))} per card, on {n} cards."
    )


def network_bytes(rng: random.Random) -> Problem:
    nodes, g, s, algorithm, r = _servers(rng, ("ring", "hierarchical", "multi-ring"))
    n = nodes * g
    want = r["bytes_inter_node"]
    return Problem(
        prompt=f"{_gpus(n, g)} all-reduce a {fmt.nbytes(s)} gradient with {DESCRIBE[algorithm]}. "
        "How many bytes cross the network in all (summed over every card), in GB?",
        hint="Only messages between GPUs in different servers cross the network; count the "
        "bytes each card sends and add them up.",
        steps=[_why_network(algorithm, nodes, g, s), f"In all: {show(want, 'GB')}."],
        answer=want,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"servers": nodes, "gpus_per_node": g, "bytes": s, "algorithm": algorithm},
    )


def nic_bytes(rng: random.Random) -> Problem:
    nodes, g, s, algorithm, r = _servers(rng, ("ring", "hierarchical", "multi-ring"))
    n = nodes * g
    want = r["bytes_per_nic_max"]
    return Problem(
        prompt=f"{_gpus(n, g)} all-reduce a {fmt.nbytes(s)} gradient with {DESCRIBE[algorithm]}. "
        "How much data does the busiest network card send, in GB?",
        hint="Find which GPUs send across servers, and how many bytes each of them sends that way.",
        steps=[_why_network(algorithm, nodes, g, s), f"The busiest card: {show(want, 'GB')}."],
        answer=want,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"servers": nodes, "gpus_per_node": g, "bytes": s, "algorithm": algorithm},
    )


def network_steps(rng: random.Random) -> Problem:
    nodes, g, s, algorithm, r = _servers(rng, ("ring", "hierarchical"))
    n = nodes * g
    if algorithm == "ring":
        why = f"Every one of the ring's 2(n − 1) = {r['steps']} steps crosses a server boundary."
    else:
        why = (
            f"Only the middle phase, a ring of N = {nodes} servers, crosses: 2(N − 1) = "
            f"{r['network_steps']} steps (of {r['steps']} in all)."
        )
    return Problem(
        prompt=f"{_gpus(n, g)} all-reduce a gradient with {DESCRIBE[algorithm]}. How many of its "
        "steps send data over the network?",
        hint="Which phases have a GPU sending to a GPU in another server?",
        steps=[why],
        answer=r["network_steps"],
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"servers": nodes, "gpus_per_node": g, "algorithm": algorithm},
    )


# ---- DDP buckets ---------------------------------------------------------------------------------


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


def bucket_count(rng: random.Random) -> Problem:
    sizes, cap = _params(rng)
    r = api.buckets([int(m * MIB) for m in sizes], cap)
    return Problem(
        prompt=_bucket_prompt(sizes, cap) + " How many buckets are there?",
        hint="Walk the parameters from the last one, adding each to the open bucket, and "
        "close it as soon as it reaches the limit.",
        steps=[*_bucket_steps(sizes, r), _plural(len(r["buckets"]), "bucket") + "."],
        answer=len(r["buckets"]),
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"sizes_mib": sizes, "bucket_cap_mb": cap},
    )


def first_bucket(rng: random.Random) -> Problem:
    sizes, cap = _params(rng)
    r = api.buckets([int(m * MIB) for m in sizes], cap)
    want = r["bucket_bytes"][0]
    return Problem(
        prompt=_bucket_prompt(sizes, cap) + " How big is the first bucket all-reduced, in MiB?",
        hint="The first bucket starts with the last parameter; keep adding until it reaches "
        "its limit.",
        steps=[*_bucket_steps(sizes, r)[:1], f"The first bucket holds {show(want, 'MiB')}."],
        answer=want,
        dimension=BYTES,
        unit="MiB",
        tolerance=TOLERANCE,
        given={"sizes_mib": sizes, "bucket_cap_mb": cap},
    )


# ---- Your cluster --------------------------------------------------------------------------------


def _model(rng: random.Random) -> tuple[str, int]:
    key = rng.choice(calculator.PRESET_MODELS)
    return key, api.model_name(key).params


def gradient_size(rng: random.Random) -> Problem:
    key, params = _model(rng)
    dtype = rng.choice(["bf16", "fp32"])
    r = api.calc(model=key, grad_dtype=dtype, gpus=8, overlap_too=False)
    want = r["gradient_bytes"]
    per = calculator.GRAD_BYTES[dtype]
    steps = [
        f"{calculator.model_label(key)} has {params:,} parameters, one gradient each.",
        f"{dtype.upper()} takes {per} bytes: {params:,} × {per} = {want:,.0f} bytes = "
        f"{show(want, 'GB')} (or {show(want, 'GiB')}).",
    ]
    return Problem(
        prompt=f"{calculator.model_label(key)} has {params:,} parameters. How big is its "
        f"{dtype.upper()} gradient, in GB?",
        hint="One gradient value per parameter; BF16 takes 2 bytes, FP32 4. GB is 1e9 bytes.",
        steps=steps,
        answer=want,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"params": params, "grad_dtype": dtype},
    )


def _cluster(rng: random.Random) -> dict:
    return {
        "gpu": rng.choice(["A100 SXM", "H100 SXM", "B200"]),
        "gpus": 8 * rng.choice([1, 2, 4, 8, 16, 32]),
        "nic_Gbps": rng.choice([100, 200, 400, 800]),
    }


def calc_time(rng: random.Random) -> Problem:
    key, params = _model(rng)
    c = _cluster(rng)
    r = api.calc(model=key, algorithm="ring", overlap_too=False, **c)
    link = hardware.find(hardware.GPUS, c["gpu"], "gpu").link_GBps
    n, s = c["gpus"], r["gradient_bytes"]
    rate = min(link, c["nic_Gbps"] / 8) if n > 8 else link
    u = time_unit(r["allreduce_s"])
    steps = [
        f"The BF16 gradient: {params:,} × 2 bytes = {fmt.nbytes(s)}.",
        f"A ring over {n} GPUs sends 2(n − 1)/n × S = {fmt.nbytes(2 * (n - 1) / n * s)} per GPU.",
        "The slowest link sets the pace: "
        + (
            f"NVLink ({link:g} GB/s) or the card ({c['nic_Gbps']} Gb/s = "
            f"{c['nic_Gbps'] / 8:g} GB/s): {rate:g} GB/s."
            if n > 8
            else f"one server, NVLink at {link:g} GB/s."
        ),
        f"{fmt.nbytes(2 * (n - 1) / n * s)} / {rate:g} GB/s = {show(r['allreduce_s'], u)}.",
    ]
    return Problem(
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains on {n} {c['gpu']} "
        f"GPUs, 8 per server ({link:g} GB/s NVLink per direction), one {c['nic_Gbps']} Gb/s "
        "card per GPU. With no latency, how long does one ring all-reduce of its BF16 gradient "
        f"take, in {u}?",
        hint="Bytes per GPU 2(n − 1)/n × S over the slowest link's rate; a card's Gb/s are "
        "bits: divide by 8.",
        steps=steps,
        answer=r["allreduce_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
        given={**c, "params": params, "link_GBps": link},
    )


def compute_time(rng: random.Random) -> Problem:
    key, params = _model(rng)
    c = _cluster(rng)
    tokens = rng.choice([4096, 8192, 16384, 32768])
    mfu = rng.choice([30, 40, 50]) / 100
    r = api.calc(model=key, tokens_per_gpu=tokens, mfu=mfu, overlap_too=False, **c)
    peak = r["peak_tflops"]
    u = time_unit(r["compute_s"])
    flops = 6 * params * tokens
    steps = [
        f"6 × P × T = 6 × {params:,} × {tokens:,} = {flops:.3g} FLOPs.",
        f"The GPU achieves {peak:g} TFLOP/s × {mfu:g} = {peak * mfu:g} TFLOP/s.",
        f"{flops:.3g} / {peak * mfu:g}e12 = {show(r['compute_s'], u)}.",
    ]
    return Problem(
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains on {c['gpu']} "
        f"GPUs ({peak:g} TFLOP/s dense BF16), {tokens:,} tokens per GPU per step, at "
        f"{mfu:.0%} of peak (MFU). A forward and backward pass costs 6 FLOPs per parameter per "
        f"token. How long is one step's compute, in {u}?",
        hint="FLOPs = 6 × parameters × tokens; divide by peak × MFU.",
        steps=steps,
        answer=r["compute_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
        given={"params": params, "tokens": tokens, "mfu": mfu, "gpu": c["gpu"]},
    )


# ---- The registry --------------------------------------------------------------------------------

# Which page asks which kinds is the pages' front matter (`exercises:`), the one place that says
# it: the core does not read the content, and a stage's number is its place among the pages.
KINDS: dict[str, Callable[[random.Random], Problem]] = {
    f.__name__: f
    for f in (
        allreduce_sum, naive_time, ring_time,
        rs_cell, rs_message_bytes, rs_owner,
        ag_cell, ring_steps, ring_bytes_per_gpu,
        line_algbw, line_busbw, naive_root_bytes,
        ring_latency, faster, speedup,
        network_bytes, nic_bytes, network_steps,
        bucket_count, first_bucket,
        gradient_size, calc_time, compute_time,
    )
}  # fmt: skip
# A teacher's sheet by default: the first kind of every page that has exercises, in page order
# (tests/core/exercises/test_exercises.py holds it against the pages).
SHEET_KINDS = (
    "allreduce_sum",
    "rs_cell",
    "ag_cell",
    "line_algbw",
    "ring_latency",
    "network_bytes",
    "bucket_count",
    "gradient_size",
)
