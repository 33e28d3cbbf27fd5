"""The ring's reduce-scatter and all-gather on real numbers, and the check."""

from __future__ import annotations

from .. import dtypes, fmt
from ..errors import ParamError
from ..exercises.check import check_quantity
from ..exercises.units import BYTES, COUNT
from ..params import spec, validated
from ..simulation.verify import check
from ..validate import permutation
from . import Widget, common, diagram, views
from .common import (
    chunk_of,
    judge_quantity,
    read_answer,
    stepper_frames,
    summed,
    traced,
    value_text,
)


def _ring_narration(chunks, dtype: str, n: int):
    def narrate(step, s):
        if step is None:
            return [f"Each of the {n} GPUs holds its own gradient, cut into {n} chunks."]
        verb = "adds it to its own" if step["op"] == "add" else "stores it"
        lines = [f"Step {s}: every GPU sends one chunk to the next GPU, which {verb}."]
        for m in step["messages"]:
            c = chunk_of(chunks, m["start"], m["stop"])
            sent = ", ".join(value_text(v, dtype) for v in m["values"])
            now = ", ".join(
                value_text(v, dtype) for v in step["buffers"][m["dst"]][m["start"] : m["stop"]]
            )
            lines.append(
                f"GPU {m['src']} sends chunk {c} ({sent}) to GPU {m['dst']}, which now holds {now}."
            )
        return lines

    return narrate


RING = spec(
    common.simulated("gpus", "GPUs", lo=2, hi=16),
    common.simulated("length", "Numbers per gradient", default=8, hi=64, optional=False),
    common.DTYPE,
    common.SEED,
    common.VALUES,
    # the ring's order of GPUs, as a link carries it (stage 10's "step through this ring":
    # a channel's ring from NCCL_DEBUG=INFO); no control, the URL records it
    common.simulated("order"),
)


def ring_order(value, gpus: int) -> list[int] | None:
    """The order the stepper runs: None for rank order; the given one when it lists `gpus` GPUs.
    An order of another length is left out (the reader changed the GPU count: rank order
    again); one longer than the stepper allows is refused, naming the field."""
    if value is None or value == "":
        return None
    order = permutation("order", value)
    most = RING["gpus"].hi
    if len(order) > most:
        raise ParamError(
            "order", f"a ring of {len(order)} GPUs is longer than this stepper's {most}"
        )
    return order if len(order) == gpus else None


def _ring_trace(params) -> tuple[dict, dict]:
    p = validated(params, RING)
    order = ring_order(p["order"], p["gpus"])
    # the state keeps the order as a link writes it (0,7,6,...), so the URL reads as NCCL's line
    p["order"] = None if order is None else ",".join(map(str, order))
    result = traced(p, RING, algorithm="ring", order=order)  # the order as it runs
    return p, result


def _ranks(p: dict) -> list[int] | None:
    """The order the state keeps (text), as ranks."""
    return None if p["order"] is None else permutation("order", p["order"])


def _order_text(order: list[int] | None, n: int) -> str:
    """The ring as a readout: "0 → 7 → 6 → … → 0", and whose order it is."""
    ranks = order or list(range(n))
    ring = " → ".join(map(str, [*ranks, ranks[0]]))
    return ring + (" (the given order)" if order else " (rank order)")


def _ring_stepper(p: dict, r: dict, frames: list, readouts: dict, **more) -> views.Stepper:
    n, length = r["gpus"], r["length"]
    readouts = {**readouts, "ring": _order_text(_ranks(p), n)}
    return views.stepper(
        params={**p, "gpus": n, "length": length},
        dtype=r["dtype"],
        chunks=r["chunks"],
        **summed(r),
        frames=frames,
        readouts=readouts,
        **more,
    )


def _sent(r: dict, before: int, after: int) -> list[int]:
    """Bytes each GPU sent in the trace's steps after `before` up to `after` (-1: the start),
    counted from its messages over every link."""

    def upto(k: int) -> list[int]:
        return [sum(b) for b in r["trace"][k]["bytes_sent"]] if k >= 0 else [0] * r["gpus"]

    return [a - b for a, b in zip(upto(after), upto(before), strict=True)]


def _readouts(r: dict, sent: list[int]) -> dict[str, str]:
    """The half's answer: its steps, and what each GPU sends of its gradient (the chunks' sizes
    differ by one element when n does not divide the length)."""
    n, whole = r["gpus"], r["length"] * dtypes.get(r["dtype"]).itemsize
    lo, hi = min(sent), max(sent)
    each = f"{hi:,} bytes" if lo == hi else f"{lo:,} to {hi:,} bytes"
    return {"steps": f"{n - 1} (n − 1)", "sent": f"{each} of its {whole:,}"}


def ring_reduce_scatter(params=None) -> dict:
    """The ring's reduce-scatter, n - 1 steps on real numbers."""
    p, r = _ring_trace(params)
    n = r["gpus"]
    chunks = r["chunks"]
    trace = r["trace"][: n - 1]
    frames = stepper_frames(
        trace,
        r["inputs"],
        [[1] * r["length"]] * n,
        n,
        chunks,
        _ring_narration(chunks, r["dtype"], n),
    )
    owned = r["owners"]
    frames[-1]["narration"].append(
        "Every GPU now owns the complete sum of one chunk: "
        + "; ".join(f"GPU {i} owns chunk {owned[i]}" for i in range(n))
        + "."
    )
    sent = _sent(r, -1, n - 2)
    asked = _asked(r)
    prediction = views.prediction(
        id=PREDICTION_ID,
        question=(
            f"After step {asked['step']}, what will GPU {asked['gpu']} hold in the first cell "
            f"of chunk {chunk_of(chunks, asked['start'], asked['stop'])}?"
        ),
        example="a number",
        last_step=asked["step"] - 1,
    )
    state = _ring_stepper(
        p, r, frames, _readouts(r, sent), editable=True, owned=owned, prediction=prediction
    )
    return diagram.attach(state, diagram.ring(n, order=_ranks(p)))


PREDICTION_ID = "ring-after-step-2"
PREDICT_STEP = 2  # the first step whose sum the reader must carry over from the step before


def _asked(r: dict) -> dict:
    """What the prediction asks about: GPU 2 after step 2 (on two GPUs, GPU 1 after step 1, the
    only step), and the message it receives in that step, whose first cell is the question.
    With fewer numbers than GPUs some chunks are empty and carry no message: then the first
    GPU that receives one (chunk 0 always moves)."""
    step = min(PREDICT_STEP, r["gpus"] - 1)
    messages = r["trace"][step - 1]["messages"]
    got = next((m for m in messages if m["dst"] == step), messages[0])
    return {"step": step, "gpu": got["dst"], **got}


def predict_reduce_scatter(params, answer) -> dict:
    """The reader's prediction of the cell the question names, judged by the exercises' checker
    (exact for integers; for floats within 1% of the larger number added), with the
    misconceptions it may show, then the cell's value and how it came about."""
    p, r = _ring_trace(params)
    a, dtype = _asked(r), r["dtype"]
    step, gpu, src, first = a["step"], a["gpu"], a["src"], a["start"]
    chunk = chunk_of(r["chunks"], first, a["stop"])
    want = r["trace"][step - 1]["buffers"][gpu][first]
    sent, own = a["values"][0], r["inputs"][gpu][first]
    got = read_answer(answer, COUNT, "")
    tolerance = 0.0
    if dtype != "int" and want:
        tolerance = 0.01 * max(abs(sent), abs(own)) / abs(want)
    mistakes = [
        (own, f"That is GPU {gpu}'s own number: in step {step} it adds what GPU {src} sends."),
        (sent, f"That is what GPU {src} sends; GPU {gpu} adds it to its own number."),
        (r["target"][first], f"That is the sum over all {r['gpus']} GPUs, which no GPU's "
         f"chunk {chunk} holds before step {r['gpus'] - 1}."),
    ]  # fmt: skip
    if step > 1:
        stale = r["inputs"][src][first] + own
        mistakes.append((stale, f"That adds GPU {src}'s own number, but by step {step} "
                         f"GPU {src} had added what it received before."))  # fmt: skip
    v = check_quantity(answer, want, COUNT, "", tolerance, tuple(mistakes), False, "Not quite.")
    held = r["trace"][step - 1]["contributors"][gpu][first]
    v["message"] += (
        f" You said {fmt.sig(got, 7)}; after step {step}, GPU {gpu} holds "
        f"{value_text(want, dtype)} there: the "
        f"{value_text(sent, dtype)} GPU {src} sends plus its own {value_text(own, dtype)}, "
        f"the sum of {held} GPUs' numbers."
    )
    return v


def ring_all_gather(params=None) -> dict:
    """The all-gather from the end of the reduce-scatter, then the exact check."""
    p, r = _ring_trace(params)
    n, dtype = r["gpus"], r["dtype"]
    chunks = r["chunks"]
    rs_end = r["trace"][n - 2] if n > 1 else None
    frames = stepper_frames(
        r["trace"][n - 1 :],
        rs_end["buffers"],
        rs_end["contributors"],
        n,
        chunks,
        _ring_narration(chunks, dtype, n),
    )
    frames[0]["narration"] = [
        "After the reduce-scatter every GPU owns the complete sum of one chunk; "
        "now those chunks travel the ring."
    ]
    verdict = check(r)
    frames[-1]["narration"].append(verdict["verdict"])
    sent = _sent(r, n - 2, len(r["trace"]) - 1)
    whole = r["length"] * dtypes.get(dtype).itemsize
    prediction = views.prediction(
        id=AG_PREDICTION_ID,
        question=(
            f"In the all-gather, how many bytes will GPU 0 send in all? Its gradient is "
            f"{whole:,} bytes."
        ),
        example="a number of bytes",
        last_step=0,
        readouts=["sent"],
    )
    state = _ring_stepper(p, r, frames, _readouts(r, sent), check=verdict, prediction=prediction)
    ones = [[1] * r["length"]] * n
    rs = stepper_frames(r["trace"][: n - 1], r["inputs"], ones, n, chunks, lambda *_: [])
    layout = diagram.ring(n, order=_ranks(p))
    return diagram.attach(state, layout, start=diagram.holders(rs, n)[-1])


AG_PREDICTION_ID = "all-gather-bytes"


def predict_all_gather(params, answer) -> dict:
    """The reader's count of the bytes GPU 0 sends in the all-gather, exact, judged by the
    exercises' checker with three misconceptions: the whole gradient, one chunk, and the whole
    all-reduce's (the reduce-scatter's bytes again)."""
    _, r = _ring_trace(params)
    n, item = r["gpus"], dtypes.get(r["dtype"]).itemsize
    whole = r["length"] * item
    sent = _sent(r, n - 2, len(r["trace"]) - 1)[0]
    chunk = _sent(r, n - 2, n - 1)[0]  # its first step's: its own chunk
    mistakes = (
        (whole, "That is the whole gradient: GPU 0 already holds its own sum, and it never "
         "sends on the chunk it receives last."),
        (chunk, f"That is one chunk: the all-gather takes {n - 1} steps, and GPU 0 sends a "
         "chunk in every one."),
        (2 * sent, "That is the whole all-reduce's: the reduce-scatter before it sent as much."),
    )  # fmt: skip
    result = f"GPU 0 sends {sent:,} bytes of its {whole:,}, a chunk in each of the {n - 1} steps"
    return judge_quantity(answer, sent, BYTES, "B", 0.0, mistakes, _bytes_text, result)


def _bytes_text(b: float) -> str:
    return f"{fmt.sig(b, 4)} bytes"


def facts() -> dict[str, str]:
    """Stage 2's figures, from its stepper's default state: how many GPUs, which GPU sends
    chunk 0 first and which owns its complete sum at the end (read from the frames' moves and
    the owners, so the prose follows the schedule)."""
    s = ring_reduce_scatter()
    first = next(m[0] for m in s["frames"][1]["moves"] if m[4] == 0)
    return {
        "rs_gpus": str(s["gpus"]),
        "rs_chunk0_first": str(first),
        "rs_chunk0_owner": str(s["owned"].index(0)),
    }


EDIT_HINT = "At step 0 you can edit any GPU's numbers."
HEADLINE = (("sent", "Each GPU sends"), ("steps", "Steps"))
READOUTS = {"setup": (("ring", "The ring"),)}
RECORDS = (
    Widget(
        "ring_reduce_scatter",
        ring_reduce_scatter,
        RING,
        views.STEPPER,
        label="Ring reduce-scatter, step by step",
        hint=EDIT_HINT,
        headline=HEADLINE,
        readouts=READOUTS,
        predict=predict_reduce_scatter,
    ),
    Widget(
        "ring_all_gather",
        ring_all_gather,
        RING,
        views.STEPPER,
        label="Ring all-gather and the exact check",
        headline=HEADLINE,
        readouts=READOUTS,
        predict=predict_all_gather,
    ),
)
