"""The exercise kinds, stage by stage: each draws its numbers from a random.Random and asks the
core (api.py, costs/cost.py, simulation/simulate.py, simulation/innetwork.py, logs/parse.py,
training/ddp.py, training/calculator.py, training/memory.py, catalog/measured.py) for the answer
and for every figure of the worked solution, so the page's widgets and the exercises cannot
disagree. Each kind has a title a reader sees (`@titled`), and may name the wrong answers a known
misconception gives (`Problem.mistakes`), so that feedback names the misconception.

Only randrange and choice are used on the generator: both are the same in CPython and Pyodide
for the same seed, so a seed in a URL names the same problem everywhere.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .. import api, fmt
from ..catalog import hardware, measured
from ..collectives import ALLREDUCE
from ..logs import parse as nccltests
from ..schedules import tree
from ..simulation import innetwork
from ..training import calculator, ddp, memory, shardcost
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
    # Wrong answers a known misconception gives, each with the message that names it; checked
    # before the unit slips and the generic messages. A kind draws only cases where each of its
    # misconceptions gives a wrong answer: one that gives the right one would pass unnoticed.
    mistakes: tuple[tuple[float | str, str], ...] = ()
    # "Your answer is twice (half) the right one": off where the answer is a cell's value or an
    # index, for which a factor of two is a coincidence, not a slip.
    factor_hints: bool = True

    def answer_text(self) -> str:
        """The final answer as a student would type it (and as the checker accepts it)."""
        if self.dimension == VECTOR:
            return "[" + ", ".join(_int(v) for v in self.answer) + "]"
        if self.dimension == CHOICE:
            return self.answer
        if self.tolerance == EXACT:
            return _int(self.answer) + (f" {self.unit}" if self.unit else "")
        return show(self.answer, self.unit)


def titled(title: str) -> Callable[[Callable], Callable]:
    """Give a kind the title a reader sees above its problem and on the teacher's sheet."""

    def mark(kind: Callable) -> Callable:
        kind.title = title
        return kind

    return mark


def _int(v) -> str:
    return f"{int(v):,}" if float(v).is_integer() else repr(v)


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def article(text: str) -> str:
    """`text` after "a" or "an" as it is read aloud: an 8-GPU job, an 11 GB gradient, a 16 MB
    message, a 110 GB one (a number reads from its leading group of digits: 18,000 is eighteen
    thousand, 1,800 one thousand ...)."""
    m = re.match(r"\d[\d,]*", text)
    if m:
        digits = m.group().rstrip(",")
        lead = digits.split(",")[0] if "," in digits else digits[: len(digits) % 3 or 3]
        vowel = lead.startswith("8") or lead in ("11", "18")
    else:
        vowel = text[:1].lower() in ("a", "e", "i", "o", "u")
    return ("an " if vowel else "a ") + text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


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


@titled("What every GPU holds after an all-reduce")
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


def _layout(
    rng: random.Random, servers: tuple[int, ...] = (1, 2, 4, 8)
) -> tuple[int, int, float, float]:
    servers = rng.choice(servers)
    g = 8 if servers > 1 else rng.choice([4, 8])
    params_b = rng.choice([1, 2, 3, 7, 8, 13])
    return servers * g, g, params_b, params_b * 1e9 * 2


@titled("The naive all-reduce's time")
def naive_time(rng: random.Random) -> Problem:
    # across servers, where taking in NVLink and the card at once would give another time
    n, g, params_b, s = _layout(rng, (2, 4, 8))
    topo = api.topology(n, g)
    r = api.estimate("naive", n, s, g)
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
        f"{show(r['time_s'], u)}.",
    ]
    return Problem(
        prompt=f"{_gpus(n, g)} train a model of {params_b:g} billion parameters and all-reduce "
        f"its BF16 gradient the naive way: every GPU sends its whole gradient to GPU 0, which "
        f"receives them one after another (one gradient at a time, never two at once), adds "
        f"them up and sends the sum back to each GPU in turn. {LINKS} How long does it take, "
        f"in {u}?",
        hint="GPU 0's links do all the work: count the gradients it receives, then sends, and "
        "divide each by the rate of the link it uses.",
        steps=steps,
        answer=r["time_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
        given={"gpus": n, "gpus_per_node": g, "bytes": s},
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


def _held(values: list, first: int, s: int, i: int, c: int) -> int:
    """What GPU i holds in chunk c after reduce-scatter step s when GPU `first` sends the chunk
    first: the partial sum of the GPUs from `first` round to i once the chunk has reached i,
    else its own value. With first = c, the old textbook numbering (Baidu's) a reader may bring."""
    n = len(values)
    k = (i - first) % n
    return sum(values[(first + j) % n][c] for j in range(k + 1)) if 0 < k <= s else values[i][c]


@titled("A cell after reduce-scatter step k")
def rs_cell(rng: random.Random) -> Problem:
    n, values, trace = _small_ring(rng)
    s, c = rng.randrange(1, n), rng.randrange(n)
    start = (c + 1) % n  # chunk c is started by GPU c + 1 (NCCL's runRing)
    i = (start + rng.randrange(1, s + 1)) % n if rng.randrange(4) else rng.randrange(n)
    want = trace[s - 1]["buffers"][i][c]
    steps = [
        f"Chunk {c} starts on GPU {start}, holding {values[start][c]}, and moves one GPU per step."
    ]
    steps += _follow(trace, c, 1, s)
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
    return Problem(
        prompt=f"{n} GPUs run a ring reduce-scatter on vectors of {n} elements, one element per "
        f"chunk (element j is chunk j): {_table(values)}. At step 1 GPU i sends chunk i − 1 to "
        f"GPU i + 1 (GPU 0 sends chunk {n - 1}, and GPU {n - 1} sends to GPU 0), which adds it to "
        f"its own; at each later step every GPU passes on the chunk it has just received. After "
        f"step {s}, what does GPU {i} hold in chunk {c}?",
        hint=f"Follow chunk {c} from GPU {start}, which sends it first: each step it moves to the "
        "next GPU and picks up that GPU's value.",
        steps=steps,
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
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
    return Problem(
        prompt=f"{n} GPUs in one server run a ring reduce-scatter on "
        f"{article(fmt.nbytes(s))} gradient. How big is each message, in MB?",
        hint="The ring cuts the gradient into as many chunks as there are GPUs, and every "
        "message carries one chunk.",
        steps=steps,
        answer=message,
        dimension=BYTES,
        unit="MB",
        tolerance=TOLERANCE,
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
    return Problem(
        prompt=f"{n} GPUs run a ring reduce-scatter: GPU i sends to GPU i + 1, and at step 1 it "
        f"sends chunk i − 1 (GPU 0 sends chunk {n - 1}); at each later step every GPU passes on "
        f"the chunk it has just received, adding its own part. When it ends, which chunk's "
        f"complete sum does GPU {i} hold?",
        hint="Follow one chunk: where does it start, and how many GPUs has it visited after "
        "the last step?",
        steps=steps,
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
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


# ---- All-gather ----------------------------------------------------------------------------------


@titled("The ring's steps")
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


@titled("The bytes each GPU sends in a ring")
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
        prompt=f"{n} GPUs all-reduce {article(fmt.nbytes(s))} gradient with a ring "
        "(reduce-scatter, then all-gather). How much data does each GPU send in all, in GB?",
        hint="Count the steps of both phases and the size of one chunk.",
        steps=steps,
        answer=sent,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"gpus": n, "bytes": s},
    )


@titled("A cell after all-gather step k")
def ag_cell(rng: random.Random) -> Problem:
    n, values, trace = _small_ring(rng)
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
    steps += [t.replace("Step ", "All-gather step ") for t in _follow(trace[n - 1 :], c, 1, last)]
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
        f"{_table(values)}. The reduce-scatter ({n - 1} steps) leaves GPU i with chunk i's "
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
        mistakes=(
            (
                total,
                f"That is chunk {c}'s complete sum. Has it reached GPU {i} by all-gather step "
                f"{s}? Count the steps from its owner.",
            ),
        ),
        factor_hints=False,
    )


# ---- The order of the additions (stage 3's order lab) --------------------------------------------

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
            f"GPU {g} adds {values[g]}: {_int(before)} + {values[g]} rounds to {_int(after)}."
        )
    steps.append(f"GPU 0 keeps {_int(want)} and the all-gather copies it to every GPU.")
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
    return Problem(
        prompt=f"{n} GPUs all-reduce one BF16 element with NCCL's ring: GPU i holds "
        + ", ".join(f"GPU {i}: {v}" for i, v in enumerate(values))
        + ". The element is in chunk 0, which GPU 1 sends first; each next GPU round the ring "
        f"(in the order {', '.join(map(str, order))}) adds its own value and rounds to BF16 "
        "(8 significant bits: from 2^k to 2^(k+1) its numbers are 2^(k−7) apart, so 2 apart "
        "from 256 to 512 and 4 from 512 to 1024; a tie goes to the even one). What value does "
        "every GPU end with?",
        hint="Add in the ring's order, GPU 1 first, rounding each partial sum to BF16.",
        steps=steps,
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"values": values},
        mistakes=tuple(mistakes.items()),
        factor_hints=False,
    )


@titled("How many ulps a BF16 ring can be off")
def order_bf16_bound(rng: random.Random) -> Problem:
    n = rng.choice([8, 16, 32, 64])
    mant = rng.choice([1.25, 1.5, 1.75])
    u = 2.0**-8
    gamma = (n - 1) * u / (1 - (n - 1) * u)
    want = gamma * mant * 2**7  # |error| <= gamma * s, in ulps of s = mant * 2**k (2**(k-7))
    return Problem(
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
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=TOLERANCE,
        given={"gpus": n, "mantissa": mant},
        mistakes=(
            ((n - 1) * u * mant * 128, "Close: that leaves out γ's denominator 1 − (n − 1)u."),
        ),
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
        mistakes=(mistake,),
    )


@titled("The algbw of an all_reduce_perf row")
def line_algbw(rng: random.Random) -> Problem:
    return _line_problem(rng, "algbw")


@titled("The busbw of an all_reduce_perf row")
def line_busbw(rng: random.Random) -> Problem:
    return _line_problem(rng, "busbw")


@titled("The bytes GPU 0 sends in the naive method")
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
        prompt=f"{n} GPUs all-reduce {article(fmt.nbytes(s))} gradient the naive way: all send "
        "to GPU 0, which adds and sends the sum back to each. How much data does GPU 0 send, "
        "in GB?",
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


@titled("A small ring all-reduce, latency included")
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


# The lock-step tree as the latency page counts it, stated in full so that a student can follow
# it: with the message in one piece per tree (S ≤ 1 MiB: one 512 KiB slot per half), every step
# is a whole number of message times, and the core's time divided by one message's is that count.
TREE_RULE = (
    "each half of the message (S/2, in one piece) "
    "goes up one of two binary trees to its root and back down, log2 n steps each way; in all "
    "but one step of each phase a GPU has a message in both trees and sends them one after the "
    "other, so such a step takes two message times"
)
MAX_ONE_PIECE = 2 * tree.COST_CHUNK_BYTES  # the largest message the tree sends whole


@dataclass(frozen=True)
class RingTree:
    """One drawn ring-against-tree problem and the lock-step models' counts for it."""

    f: dict
    s: float
    ring: dict
    tree: dict
    tree_messages: int  # message times the tree pays in a row: 2(2 log2 n - 1)

    @property
    def tree_message_s(self) -> float:
        return self.f["latency_us"] * 1e-6 + self.s / 2 / (self.f["gbps"] * 1e9)

    @property
    def miscounted_tree_s(self) -> float:
        """The tree's time had it paid one message time per step (2 log2 n, not queued)."""
        return self.tree["steps"] * self.tree_message_s


RING_TREE = ("ring", "tree")


def _ring_tree(rng: random.Random) -> RingTree:
    """A flat network and size where one algorithm is clearly (1.3×) faster. The winner is drawn
    first, half the time each: among all sizes the tree wins nearly always, and a student who
    always answers "tree" would be right."""
    winner = rng.choice(RING_TREE)
    sizes = [2**k for k in range(10, MAX_ONE_PIECE.bit_length())]  # 1 KiB to 1 MiB
    # the ring's time over the tree's falls as the size grows (its messages are S/n, the
    # tree's S/2): walk from the winner's end of the sizes, and stop where it no longer wins
    sizes = sizes[::-1] if winner == "ring" else sizes
    while True:
        f = _flat(rng)
        cases = []
        for s in sizes:
            ring, tr = _flat_estimate("ring", f, s), _flat_estimate("tree", f, s)
            a, b = (ring["time_s"], tr["time_s"])[:: 1 if winner == "ring" else -1]
            if b < 1.3 * a:
                break
            cases.append((s, ring, tr))
        if cases:
            s, ring, tr = rng.choice(cases)
            per = f["latency_us"] * 1e-6 + s / 2 / (f["gbps"] * 1e9)
            return RingTree(f, s, ring, tr, round(tr["time_s"] / per))


def _ring_tree_prompt(p: RingTree) -> str:
    return (
        f"{_flat_text(p.f)}: a message of b bytes takes α + b/B, with α = "
        f"{p.f['latency_us']} µs and B = {p.f['gbps']} GB/s. Use this page's lock-step models. "
        f"The ring: 2(n − 1) steps, each one message of S/n. This page's lock-step double "
        f"binary tree: {TREE_RULE}."
    )


def _ring_tree_steps(p: RingTree) -> list[str]:
    n, a, depth = p.f["gpus"], p.f["latency_us"], int(math.log2(p.f["gpus"]))
    per_ring = p.ring["time_s"] / p.ring["steps"]
    return [
        f"Ring: 2(n − 1) = {p.ring['steps']} steps, each {a} µs + {fmt.nbytes(p.s / n)} / "
        f"{p.f['gbps']} GB/s = {show(per_ring, 'µs', 4)}: "
        f"{show(p.ring['time_s'], time_unit(p.ring['time_s']))}.",
        f"Tree: 2 log2 n = {p.tree['steps']} steps; in all but one of each phase's {depth} a "
        f"GPU sends its two trees' messages one after the other: 2 × (2 × {depth} − 1) = "
        f"{p.tree_messages} message times of {a} µs + {fmt.nbytes(p.s / 2)} / {p.f['gbps']} "
        f"GB/s = {show(p.tree_message_s, 'µs', 4)}: "
        f"{show(p.tree['time_s'], time_unit(p.tree['time_s']))}.",
    ]


def _miscount_message(p: RingTree) -> str:
    return (
        f"That counts the tree's {p.tree['steps']} steps as {p.tree['steps']} message times. In "
        "this page's lock-step tree a GPU sends its two trees' messages one after the other: "
        "count the steps that take two."
    )


def _bytes_only_message(p: RingTree) -> str:
    return (
        f"The ring sends the fewest bytes, but it pays the latency α = {p.f['latency_us']} µs "
        f"{p.ring['steps']} times in a row, the tree {p.tree_messages} times: at this size "
        "that matters more."
    )


@titled("Ring or tree: which is faster?")
def faster(rng: random.Random) -> Problem:
    p = _ring_tree(rng)
    tree_wins = p.tree["time_s"] < p.ring["time_s"]
    want = "tree" if tree_wins else "ring"
    why = "latency dominates" if tree_wins else "bandwidth dominates"
    if tree_wins:  # counting bytes only, the ring always wins: it sends the fewest
        mistakes = (("ring", _bytes_only_message(p)),)
    elif p.miscounted_tree_s < p.ring["time_s"]:
        mistakes = (("tree", _miscount_message(p)),)
    else:
        mistakes = ()
    return Problem(
        prompt=f"{_ring_tree_prompt(p)} Which all-reduces {fmt.nbytes(p.s)} ({p.s:,} bytes) "
        "faster: the ring or the tree? Type ring or tree.",
        hint="The ring pays α + (S/n)/B 2(n − 1) times; the tree pays α + (S/2)/B "
        "2(2 log2 n − 1) times. Both send about 2S per GPU; they differ in how many start-up "
        "costs come one after another, and in the size of each message.",
        steps=_ring_tree_steps(p) + [f"The {want} is faster: {why} here."],
        answer=want,
        dimension=CHOICE,
        unit="",
        tolerance=EXACT,
        given={**p.f, "bytes": p.s},
        choices=RING_TREE,
        mistakes=mistakes,
    )


@titled("How much faster: ring against tree")
def speedup(rng: random.Random) -> Problem:
    p = _ring_tree(rng)
    a, b = sorted((p.ring["time_s"], p.tree["time_s"]))
    want = b / a
    which = "tree" if p.tree["time_s"] < p.ring["time_s"] else "ring"
    lo, hi = sorted((p.ring["time_s"], p.miscounted_tree_s))
    return Problem(
        prompt=f"{_ring_tree_prompt(p)} For an all-reduce of {fmt.nbytes(p.s)} ({p.s:,} "
        "bytes), how many times faster is the faster of the two?",
        hint="The ring pays α + (S/n)/B 2(n − 1) times; the tree pays α + (S/2)/B "
        "2(2 log2 n − 1) times. Divide the slower time by the faster.",
        steps=_ring_tree_steps(p)
        + [
            f"The {which} is faster by {show(b, 'µs', 4)} / {show(a, 'µs', 4)} = "
            f"{fmt.sig(want, 3)}×."
        ],
        answer=want,
        dimension=COUNT,
        unit="",
        tolerance=RATIO_TOLERANCE,
        given={**p.f, "bytes": p.s},
        mistakes=((hi / lo, _miscount_message(p)),),
    )


# ---- Servers and the network ---------------------------------------------------------------------

DESCRIBE = {
    "ring": "one ring over all GPUs in rank order (servers contiguous, so the ring crosses "
    "from one server to the next once per server)",
    "multi-ring": "one ring per network card: as many rings as GPUs per server, each crossing "
    "between servers through a different card",
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


@titled("The bytes that cross the network")
def network_bytes(rng: random.Random) -> Problem:
    nodes, g, s, algorithm, r = _servers(rng, ("ring", "multi-ring", "hierarchical"))
    n = nodes * g
    want = r["bytes_inter_node"]
    return Problem(
        prompt=f"{_gpus(n, g)} all-reduce {article(fmt.nbytes(s))} gradient with "
        f"{DESCRIBE[algorithm]}. How many bytes cross the network in all (summed over every "
        "card), in GB?",
        hint="Only messages between GPUs in different servers cross the network; count the "
        "bytes each card sends and add them up.",
        steps=[_why_network(algorithm, nodes, g, s), f"In all: {show(want, 'GB')}."],
        answer=want,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"servers": nodes, "gpus_per_node": g, "bytes": s, "algorithm": algorithm},
    )


@titled("The busiest network card's bytes")
def nic_bytes(rng: random.Random) -> Problem:
    # the methods in another order than network_bytes', so that seed 0 (the page's) shows all
    # three methods on the page's three kinds
    nodes, g, s, algorithm, r = _servers(rng, ("multi-ring", "ring", "hierarchical"))
    n = nodes * g
    want = r["bytes_per_nic_max"]
    mistakes = [
        (
            r["bytes_inter_node"],
            "That is every card's bytes summed, what crosses the network in all; the question "
            "asks for the busiest single card.",
        )
    ]
    if algorithm != "ring":  # in a single ring one card per server sends: its server's sum
        mistakes.append(
            (
                g * want,
                f"That is one server's {g} cards summed; each GPU has its own card, and the "
                "question asks for one card.",
            )
        )
    return Problem(
        prompt=f"{_gpus(n, g)} all-reduce {article(fmt.nbytes(s))} gradient with "
        f"{DESCRIBE[algorithm]}. How much data does the busiest network card send, in GB?",
        hint="Find which GPUs send across servers, and how many bytes each of them sends that way.",
        steps=[_why_network(algorithm, nodes, g, s), f"The busiest card: {show(want, 'GB')}."],
        answer=want,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"servers": nodes, "gpus_per_node": g, "bytes": s, "algorithm": algorithm},
        mistakes=tuple(mistakes),
    )


@titled("The steps that wait for the network")
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


@titled("How many DDP buckets")
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


@titled("The first DDP bucket's size")
def first_bucket(rng: random.Random) -> Problem:
    rng.randrange(2)  # one draw first, so that a seed gives other buckets than bucket_count's
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


# ---- Sharded data parallel -----------------------------------------------------------------------

GPUS_PER_SERVER = 8
SHARDS = {  # what each strategy splits, and over how many GPUs
    "ddp": f"nothing: every GPU keeps all {memory.ADAM_BYTES_PER_PARAM} bytes per parameter",
    "zero1": f"the {memory.BYTES_PER_PARAM['optimizer']} bytes of optimizer state over the n GPUs",
    "zero2": "the gradients and the optimizer state over the n GPUs",
    "zero3": "all three, the weights too, over the n GPUs",
    "hsdp": "all three, but over the g GPUs of one server only",
}
W, D, K = memory.BYTES_PER_PARAM.values()  # bytes per parameter: weights, gradients, optimizer
STATES_TEXT = (
    f"mixed-precision Adam (per parameter: {W} bytes of BF16 weights, {D} of BF16 gradients and "
    f"{K} of FP32 optimizer state: master weights, momentum and variance)"
)


def _sharded(rng: random.Random, strategies: tuple[str, ...]) -> tuple[str, int, int, str]:
    """Across servers: in one server HSDP is ZeRO-3, and the bytes between servers are none."""
    key, params = _model(rng)
    n = GPUS_PER_SERVER * rng.choice([2, 4, 8, 16, 32, 64])
    return key, params, n, rng.choice(strategies)


@titled("Memory per GPU, sharded or not")
def zero_memory(rng: random.Random) -> Problem:
    key, params, n, strategy = _sharded(rng, memory.STRATEGIES)
    g = GPUS_PER_SERVER
    parts = memory.per_gpu(strategy, params, n, g)
    want = parts["total"]
    label = shardcost.LABELS[strategy]
    others = {k: memory.per_gpu(k, params, n, g)["total"] for k in memory.STRATEGIES}
    steps = [
        f"{label} splits {SHARDS[strategy]}.",
        "Per GPU: "
        + ", ".join(f"{part} {show(parts[part], 'GiB')}" for part in memory.BYTES_PER_PARAM)
        + f" ({memory.FORMULAS[strategy]} with K = {K}, Ψ = {params:,}, n = {n}, g = {g}).",
        f"In all {show(want, 'GiB')} (GiB = 2^30 bytes).",
    ]
    return Problem(
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains with "
        f"{STATES_TEXT} on {_gpus(n, g)}, under {label}. How much memory do the model states "
        "take on each GPU, in GiB?",
        hint=f"DDP keeps all {memory.ADAM_BYTES_PER_PARAM} bytes per parameter on every GPU; "
        "ZeRO-1 splits the optimizer state over the n GPUs, ZeRO-2 the gradients too, ZeRO-3 "
        "the weights as well; HSDP splits all three over one server's g GPUs. GiB is 2^30 "
        "bytes.",
        steps=steps,
        answer=want,
        dimension=BYTES,
        unit="GiB",
        tolerance=TOLERANCE,
        given={"params": params, "gpus": n, "gpus_per_node": g, "strategy": strategy},
        mistakes=tuple(
            (total, f"That is {shardcost.LABELS[k]}'s figure; {label} splits {SHARDS[strategy]}.")
            for k, total in others.items()
            if k != strategy
        ),
    )


COLLECTIVES_TEXT = {
    "ddp": "one all-reduce of the BF16 gradient",
    "zero1": "a reduce-scatter of the BF16 gradient, then an all-gather of the updated weights",
    "zero2": "a reduce-scatter of the BF16 gradient, then an all-gather of the updated weights",
    "zero3": "an all-gather of the BF16 weights before the forward pass and again before the "
    "backward pass, and a reduce-scatter of the gradient",
}


@titled("Bytes each GPU sends per step, sharded or not")
def shard_bytes(rng: random.Random) -> Problem:
    key, params, n, strategy = _sharded(rng, tuple(COLLECTIVES_TEXT))
    r = api.shard(key, n, GPUS_PER_SERVER)["strategies"]
    want = r[strategy]["comm_bytes_per_gpu"]
    label = shardcost.LABELS[strategy]
    grad = 2 * params
    steps = [
        f"The BF16 buffer: {params:,} × 2 bytes = S = {fmt.nbytes(grad)}.",
        f"{label} runs {COLLECTIVES_TEXT[strategy]}.",
        (
            f"An all-reduce sends 2(n − 1)/n · S = {show(want, 'GB')} per GPU."
            if strategy == "ddp"
            else f"Each of its {2 if strategy != 'zero3' else 3} collectives sends (n − 1)/n · S "
            f"= {fmt.nbytes((n - 1) / n * grad)} per GPU: {show(want, 'GB')} in all."
        ),
    ]
    ddp_bytes = r["ddp"]["comm_bytes_per_gpu"]
    z3 = r["zero3"]["comm_bytes_per_gpu"]
    wrong = (
        (
            ddp_bytes,
            "That is DDP's traffic (and ZeRO-1's and ZeRO-2's); ZeRO-3 gathers the "
            "weights twice per step, before the forward pass and again before the backward.",
        )
        if strategy == "zero3"
        else (
            z3,
            f"That is ZeRO-3's traffic, which gathers the weights twice per step; {label} "
            f"runs {COLLECTIVES_TEXT[strategy]}.",
        )
    )
    return Problem(
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains on "
        f"{_gpus(n, GPUS_PER_SERVER)} under {label}, with BF16 weights and gradients. Each "
        "collective is a ring over all n GPUs: an all-reduce of an S-byte buffer sends "
        "2(n − 1)/n · S per GPU, a reduce-scatter or an all-gather (n − 1)/n · S. How many "
        "bytes does each GPU send per training step, in GB?",
        hint="List the collectives the strategy runs per step. DDP: one all-reduce of the "
        "gradient. ZeRO-1 and ZeRO-2: a reduce-scatter of the gradient and an all-gather of "
        "the weights. ZeRO-3: the weights are gathered before the forward and again before the "
        "backward pass, and the gradient reduce-scattered.",
        steps=steps,
        answer=want,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
        given={"params": params, "gpus": n, "strategy": strategy},
        mistakes=(wrong,),
    )


# ---- In-network reduction ------------------------------------------------------------------------

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
    s = rng.choice([1, 2, 4, 8, 10, 16]) * 1e9
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
    return Problem(
        prompt=f"One server of {n} H100 GPUs on an NVSwitch runs {NVLS_TEXT}. For an all-reduce "
        f"of {fmt.nbytes(s)}, how many bytes leave each GPU over its link, in GB?",
        hint="Count what leaves one GPU: the chunks the switch reads from it, and the sum it "
        "stores.",
        steps=steps,
        answer=want,
        dimension=BYTES,
        unit="GB",
        tolerance=TOLERANCE,
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
    return Problem(
        prompt=f"all_reduce_perf on {n} H100 GPUs in one server, where NCCL chose NVLink SHARP "
        f"(NVLS), reports a busbw of {busbw} GB/s for a large all-reduce. In NVLS each GPU's "
        "link carries (n + 1)/n of the buffer each way (the switch reads all the GPU's chunks, "
        "and the GPU stores one sum). What rate does each link carry, in GB/s?",
        hint="busbw is algbw × 2(n − 1)/n, a factor made for the ring: first go back to algbw "
        "(size over time), then multiply by the bytes NVLS puts on each link per byte of buffer.",
        steps=steps,
        answer=wire * 1e9,
        dimension=RATE,
        unit="GB/s",
        tolerance=TOLERANCE,
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


# ---- Your cluster --------------------------------------------------------------------------------


def _model(rng: random.Random) -> tuple[str, int]:
    key = rng.choice(calculator.PRESET_MODELS)
    return key, api.model_name(key).params


@titled("A model's gradient size")
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


def _cluster(rng: random.Random, servers: tuple[int, ...] = (1, 2, 4, 8, 16, 32)) -> dict:
    return {
        "gpu": rng.choice(["A100 SXM", "H100 SXM", "B200"]),
        "gpus": GPUS_PER_SERVER * rng.choice(servers),
        "nic_Gbps": rng.choice([100, 200, 400, 800]),
    }


@titled("A single ring's time on a real cluster")
def calc_time(rng: random.Random) -> Problem:
    key, params = _model(rng)
    # across servers: in one server one ring per card is the single ring, and would pass
    c = _cluster(rng, (2, 4, 8, 16, 32))
    r = api.calc(model=key, algorithm="ring", overlap_too=False, **c)
    link = hardware.find(hardware.GPUS, c["gpu"], "gpu").link_GBps
    n, s = c["gpus"], r["gradient_bytes"]
    rate = min(link, c["nic_Gbps"] / 8)
    u = time_unit(r["allreduce_s"])
    steps = [
        f"The BF16 gradient: {params:,} × 2 bytes = {fmt.nbytes(s)}.",
        f"A ring over {n} GPUs sends 2(n − 1)/n × S = {fmt.nbytes(2 * (n - 1) / n * s)} per GPU.",
        f"The slowest link sets the pace: NVLink ({link:g} GB/s) or the card "
        f"({c['nic_Gbps']} Gb/s = {c['nic_Gbps'] / 8:g} GB/s): {rate:g} GB/s.",
        f"{fmt.nbytes(2 * (n - 1) / n * s)} / {rate:g} GB/s = {show(r['allreduce_s'], u)}.",
    ]
    return Problem(
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains on {n} {c['gpu']} "
        f"GPUs, {GPUS_PER_SERVER} per server ({link:g} GB/s NVLink per direction), one "
        f"{c['nic_Gbps']} Gb/s "
        f"card per GPU. With no latency, how long does an all-reduce of its BF16 gradient take "
        f"on a single ring through all {n} GPUs (servers one after another, so the ring crosses "
        f"each server boundary through one card), in {u}?",
        hint="Bytes per GPU 2(n − 1)/n × S over the slowest link's rate; a card's Gb/s are "
        "bits: divide by 8.",
        steps=steps,
        answer=r["allreduce_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
        given={**c, "params": params, "link_GBps": link},
        mistakes=(
            (
                api.calc(model=key, algorithm="multi-ring", overlap_too=False, **c)["allreduce_s"],
                f"That is one ring per card, each carrying S/{GPUS_PER_SERVER}, as NCCL runs it; "
                "the question "
                "asks for a single ring, whose every step waits for one card.",
            ),
        ),
    )


@titled("One training step's compute time")
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
        f"{fmt.percent(mfu)} of peak (MFU). A forward and backward pass costs 6 FLOPs per "
        f"parameter per token. How long is one step's compute, in {u}?",
        hint="FLOPs = 6 × parameters × tokens; divide by peak × MFU.",
        steps=steps,
        answer=r["compute_s"],
        dimension=TIME,
        unit=u,
        tolerance=TOLERANCE,
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
    wrong = (
        ("healthy", f"{reading:g} GB/s is a large number, but is it near the yardstick, {rule}?")
        if want == "low"
        else ("low", f"How far is {reading:g} GB/s below the yardstick, {rule}?")
    )
    return Problem(
        prompt=f"An all_reduce_perf run with NCCL_ALGO=Ring on {servers} servers of {g} {gpu} "
        f"GPUs, one {card['name']} network card per GPU, reports an out-of-place busbw of "
        f"{reading:g} GB/s at {fmt.nbytes(size)} ({size:,} bytes). Is that healthy for this "
        "cluster, or low? Type healthy or low.",
        hint="The rule of thumb for busbw across servers, on a message of 1 GiB or more: the "
        f"yardstick is {rule}; below about {share} of it, look at the cluster.",
        steps=steps,
        answer=want,
        dimension=CHOICE,
        unit="",
        tolerance=EXACT,
        given={
            "gpu": gpu,
            "servers": servers,
            "gpus_per_node": g,
            "nic_Gbps": 8 * card["GBps"],
            "bytes": size,
            "busbw_GBps": reading,
        },
        choices=("healthy", "low"),
        mistakes=(wrong,),
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
    return Problem(
        prompt=f"{_capital(article(f'{n}-GPU'))} job ({servers} servers of {g}) ran with "
        "NCCL_DEBUG=INFO and printed:"
        f"\n\n    {line}\n\nIn channel 0's ring, which rank does rank {r} send to?",
        hint="Read the ring left to right: each rank sends to the next number; the last sends "
        "to the first.",
        steps=steps,
        answer=nxt,
        dimension=COUNT,
        unit="",
        tolerance=EXACT,
        given={"ring": order, "rank": r, "servers": servers, "gpus_per_server": g},
        mistakes=(
            (before, "That is the rank it receives from: the data travels left to right."),
            (r, "A rank does not send to itself: take the number after it in the line."),
        ),
        factor_hints=False,
    )


# ---- The registry --------------------------------------------------------------------------------

# Which page asks which kinds is the pages' front matter (`exercises:`), the one place that says
# it: the core does not read the content, and a stage's number is its place among the pages.
KINDS: dict[str, Callable[[random.Random], Problem]] = {
    f.__name__: f
    for f in (
        allreduce_sum, naive_time, ring_time,
        rs_cell, rs_message_bytes, rs_owner,
        ag_cell, ring_steps, ring_bytes_per_gpu, order_ring_value, order_bf16_bound,
        line_algbw, line_busbw, naive_root_bytes,
        ring_latency, faster, speedup,
        network_bytes, nic_bytes, network_steps,
        bucket_count, first_bucket,
        zero_memory, shard_bytes,
        nvls_link_bytes, nvls_wire_rate,
        gradient_size, calc_time, compute_time, judge_busbw,
        debug_ring_next,
    )
}  # fmt: skip
TITLES = {name: kind.title for name, kind in KINDS.items()}
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
    "zero_memory",
    "nvls_link_bytes",
    "gradient_size",
)
