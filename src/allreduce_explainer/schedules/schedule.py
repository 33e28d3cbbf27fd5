"""Schedules: the steps of an all-reduce as lists of transfers, before any value moves.

A step is a phase name, whether its transfers add into the receiver's buffer (reduce) or overwrite
it (copy), and four parallel lists: GPU src[i] sends elements [start[i], stop[i]) of its buffer to
dst[i]. Parallel lists rather than one object per message keep n = 1024 (two million messages for
the ring) fast enough for the browser. All transfers of a step read the buffers as they were
before the step (lock-step), which is what lets a page show a step as one picture.
"""

from __future__ import annotations

import operator
from itertools import chain
from typing import NamedTuple


class Step(NamedTuple):
    phase: str
    reduce: bool
    src: list[int]
    dst: list[int]
    start: list[int] | None  # None only with a size, in a schedule made with bounds=False
    stop: list[int] | None
    size: int | None = None  # the elements of every transfer, when they are all the same

    def __len__(self) -> int:  # number of messages
        return len(self.src)


def split(start: int, stop: int, parts: int) -> list[tuple[int, int]]:
    """Split [start, stop) into `parts` ranges whose sizes differ by at most one element.

    The leftover elements go to the first ranges, as in baidu-allreduce's collectives.cu; with
    fewer elements than parts, the last ranges are empty.
    """
    size, extra = divmod(stop - start, parts)
    bounds, at = [], start
    for p in range(parts):
        end = at + size + (1 if p < extra else 0)
        bounds.append((at, end))
        at = end
    return bounds


def make_step(
    phase: str, reduce: bool, src, dst, start, stop, may_be_empty=True, size=None
) -> Step:
    """A step without its empty transfers (a vector shorter than the GPU count has empty chunks)."""
    if may_be_empty and any(map(operator.eq, start, stop)):
        keep = [i for i, (a, b) in enumerate(zip(start, stop, strict=True)) if b > a]
        src, dst = [src[i] for i in keep], [dst[i] for i in keep]
        start, stop = [start[i] for i in keep], [stop[i] for i in keep]
    return Step(phase, reduce, src, dst, start, stop, size)


def ring(
    order: list[int],
    start: int,
    stop: int,
    names=("reduce-scatter", "all-gather"),
    bounds: bool = True,
):
    """Reduce-scatter and all-gather steps of one ring over the GPUs in `order` on [start, stop).

    The m GPUs cut the range into m chunks and number the ring's places from its lowest GPU: x is
    the place of `order`'s position p, (p - p0) mod m with p0 the lowest GPU's position (NCCL's
    ring->index, the distance from rank 0 round the ring, src/init.cc:802). NCCL's runRing
    (src/device/all_reduce.h:42-73, v2.30.7-1): at reduce-scatter step s (from 0) place x sends
    chunk (x - 1 - s) mod m to the next GPU, which adds it in (line 43: modRanks(ringIx + nranks
    - 1), then ringIx + nranks - j); so chunk c is started by place c + 1 and, after m - 1 steps,
    place x owns the complete sum of chunk x (line 60: chunk = ringIx). At all-gather step s place
    x forwards chunk (x - s) mod m, which the next GPU copies (lines 64-72), until every GPU holds
    every chunk.

    bounds=False leaves out which elements each transfer carries (start and stop None) when
    every chunk has the same size: counting bytes needs the size only, and a ring of 512 GPUs
    would otherwise list half a million bounds per phase.
    """
    m = len(order)
    chunks = split(start, stop, m)
    lo, hi = [a for a, _ in chunks], [b for _, b in chunks]
    size = (stop - start) // m if (stop - start) % m == 0 and stop > start else None
    nxt = order[1:] + order[:1]
    first = order.index(min(order))

    def steps(lag: int, reduce: bool, phase: str) -> list[Step]:
        if size is not None and not bounds:
            return [Step(phase, reduce, order, nxt, None, None, size) for _ in range(m - 1)]
        out = []
        for s in range(m - 1):
            r = (first + lag + s) % m  # position p sends chunk (p - r) mod m: a rotation by r
            starts, stops = lo[m - r :] + lo[: m - r], hi[m - r :] + hi[: m - r]
            out.append(make_step(phase, reduce, order, nxt, starts, stops, stop - start < m, size))
        return out

    return steps(1, True, names[0]), steps(0, False, names[1])


def owned(order: list[int]) -> list[int]:
    """The chunk each position of `order` owns after `ring`'s reduce-scatter: its place, counted
    round the ring from the lowest GPU (NCCL's ring->index; src/device/all_reduce.h:60)."""
    m, first = len(order), order.index(min(order))
    return [(p - first) % m for p in range(m)]


def merge(*step_lists: list[Step]) -> list[Step]:
    """Run several schedules side by side: step s of the result is step s of each.

    The joined sender and receiver lists are shared between steps that join the same lists, so
    the simulator can work out their routes once. Steps made without bounds (ring's bounds=False)
    merge into a step without bounds, which needs one size for all of them.
    """
    joined: dict[tuple[int, ...], list[int]] = {}

    def join(lists: list[list[int]]) -> list[int]:
        key = tuple(map(id, lists))
        if key not in joined:
            joined[key] = list(chain.from_iterable(lists))
        return joined[key]

    out = []
    for s in range(max((len(steps) for steps in step_lists), default=0)):
        parts = [steps[s] for steps in step_lists if s < len(steps)]
        sizes = {p.size for p in parts}
        size = sizes.pop() if len(sizes) == 1 else None
        if any(p.start is None for p in parts):
            if size is None:
                raise ValueError("steps without bounds merge only if they share one size")
            starts = stops = None
        else:
            starts = list(chain.from_iterable(p.start for p in parts))
            stops = list(chain.from_iterable(p.stop for p in parts))
        out.append(
            Step(
                parts[0].phase,
                parts[0].reduce,
                join([p.src for p in parts]),
                join([p.dst for p in parts]),
                starts,
                stops,
                size,
            )
        )
    return out
