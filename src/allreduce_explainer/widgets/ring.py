"""The ring's reduce-scatter and all-gather on real numbers, and the check."""

from __future__ import annotations

from .. import api, dtypes
from ..params import DTYPE, SEED, VALUES, Param, spec, validated
from ..schedules.schedule import split
from ..simulation.verify import check
from . import Widget, diagram, views
from .common import chunk_of, stepper_frames, value_text, vectors


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
    Param("gpus", 4, "int", "GPUs", 2, 16),
    Param("length", 8, "int", "Numbers per gradient", 1, 64),
    DTYPE,
    SEED,
    VALUES,
)


def _ring_trace(params) -> tuple[dict, dict]:
    p = validated(params, RING)
    n, dtype = p["gpus"], p["dtype"]
    inputs = vectors(p, n, dtype, RING["length"].hi)
    result = api.simulate("ring", n, values=inputs, dtype=dtype, trace=True)
    return p, result


def _ring_stepper(p: dict, r: dict, frames: list, **more) -> views.Stepper:
    n, length = r["gpus"], r["length"]
    return views.stepper(
        params={**p, "gpus": n, "length": length},
        dtype=r["dtype"],
        chunks=split(0, length, n),
        inputs=r["inputs"],
        target=r["target"],
        extra_rows=[{"label": "target (sum)", "values": r["target"]}],
        frames=frames,
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
    chunks = split(0, r["length"], n)
    trace = r["trace"][: n - 1]
    frames = stepper_frames(
        trace,
        r["inputs"],
        [[1] * r["length"]] * n,
        n,
        chunks,
        _ring_narration(chunks, r["dtype"], n),
    )
    frames[-1]["narration"].append(
        "Every GPU now owns the complete sum of one chunk: "
        + "; ".join(f"GPU {i} owns chunk {(i + 1) % n}" for i in range(n))
        + "."
    )
    owned = [(i + 1) % n for i in range(n)]
    sent = _sent(r, -1, n - 2)
    state = _ring_stepper(p, r, frames, editable=True, owned=owned, readouts=_readouts(r, sent))
    return diagram.attach(state, diagram.ring(n))


def ring_all_gather(params=None) -> dict:
    """The all-gather from the end of the reduce-scatter, then the exact check."""
    p, r = _ring_trace(params)
    n, dtype = r["gpus"], r["dtype"]
    chunks = split(0, r["length"], n)
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
    state = _ring_stepper(p, r, frames, check=verdict, readouts=_readouts(r, sent))
    ones = [[1] * r["length"]] * n
    rs = stepper_frames(r["trace"][: n - 1], r["inputs"], ones, n, chunks, lambda *_: [])
    return diagram.attach(state, diagram.ring(n), start=diagram.holders(rs, n)[-1])


EDIT_HINT = "At step 0 you can edit any GPU's numbers."
HEADLINE = (("sent", "Each GPU sends"), ("steps", "Steps"))
RECORDS = (
    Widget(
        "ring_reduce_scatter",
        ring_reduce_scatter,
        RING,
        views.STEPPER,
        label="Ring reduce-scatter, step by step",
        hint=EDIT_HINT,
        headline=HEADLINE,
    ),
    Widget(
        "ring_all_gather",
        ring_all_gather,
        RING,
        views.STEPPER,
        label="Ring all-gather and the exact check",
        headline=HEADLINE,
    ),
)
