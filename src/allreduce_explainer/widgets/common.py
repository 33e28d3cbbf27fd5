"""What every widget shares: parameter merging, gradients, stepper frames, number text."""

from __future__ import annotations

from .. import dtypes, gradients
from ..errors import ParamError
from ..validate import count

DIGITS = {"int": 0, "fp32": 7, "bf16": 3}  # significant digits a reader needs to tell values apart


def options(params, defaults: dict) -> dict:
    """Merge parameters over the defaults, refusing unknown names (a typo should not pass)."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParamError("_", "parameters must be an object")
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ParamError(str(unknown[0])[:40], "is not a parameter of this widget")
    return {**defaults, **params}


def vectors(p: dict, lo: int, hi: int, max_length: int, dtype: str) -> tuple[int, list[list]]:
    """GPU count and gradients: drawn from the seed, or the reader's edited values."""
    n = count("gpus", p["gpus"], lo, hi)
    dt = dtypes.get(dtype)
    if p.get("values") is not None:
        values = gradients.check(p["values"], n, dt, max_length)
        return n, values
    length = count("length", p["length"], 1, max_length)
    return n, gradients.draw(n, length, dt, count("seed", p["seed"], 0, 2**53))


def value_text(v, dtype: str) -> str:
    """A value as the narration prints it (the grid uses the same digits)."""
    text = str(v) if dtype == "int" else f"{v:.{DIGITS[dtype]}g}"
    return text.replace("-", "−")


def stepper_frames(
    trace: list[dict], first_buffers, first_counts, n: int, chunks, narrate
) -> list[dict]:
    """Step frames for the stepper view: buffers, finished cells, and what moved.

    A move is [src, dst, start, stop, chunk]: GPU src sent elements [start, stop), its chunk.
    """
    frames = [
        {
            "buffers": first_buffers,
            "complete": complete(first_counts, n),
            "moves": [],
            "phase": "start",
            "narration": narrate(None, 0),
        }
    ]
    for s, step in enumerate(trace, 1):
        frames.append(
            {
                "buffers": step["buffers"],
                "complete": complete(step["contributors"], n),
                "moves": [
                    [
                        m["src"],
                        m["dst"],
                        m["start"],
                        m["stop"],
                        chunk_of(chunks, m["start"], m["stop"]),
                    ]
                    for m in step["messages"]
                ],
                "op": step["op"],
                "phase": step["phase"],
                "narration": narrate(step, s),
            }
        )
    return frames


def complete(counts: list[list[int]], n: int) -> list[list[bool]]:
    return [[c == n for c in row] for row in counts]


def chunk_of(chunks: list[tuple[int, int]], start: int, stop: int) -> int:
    return next(i for i, (a, b) in enumerate(chunks) if a == start and b == stop)
