"""What every widget shares: gradients, stepper frames, number text."""

from __future__ import annotations

from .. import dtypes, gradients

DIGITS = {"int": 0, "fp32": 7, "bf16": 3}  # significant digits a reader needs to tell values apart


def vectors(p: dict, n: int, dtype: str, max_length: int) -> list[list]:
    """The n GPUs' gradients: the reader's edited values (checked), or drawn from the seed."""
    dt = dtypes.get(dtype)
    if p.get("values") is not None:
        return gradients.check(p["values"], n, dt, max_length)
    return gradients.draw(n, p["length"], dt, p["seed"])


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
