"""Fit the alpha-beta model, time = latency + bytes / algbw, to measured all-reduce times.

Weighted least squares on the relative error, minimise sum(((a + x·s_i − t_i) / t_i)²) with
x = 1 / algbw. Why relative: an `all_reduce_perf` sweep runs from 8 bytes to gigabytes, so its
times span five or six decades; an unweighted fit would be decided by the few largest sizes alone
and would leave the latency to chance, while the relative error gives every measured size the
same say, and timing noise grows roughly in proportion to the time. The model is linear in
(a, x), so the fit is a 2 × 2 system solved in closed form (stdlib only, for Pyodide); a negative
latency is not physical and is refitted as 0.

Real curves are not alpha-beta (NCCL switches protocol, LL → LL128 → Simple, as sizes grow, and
pipelining ramps the bandwidth up), so the fit summarises a sweep; its rms relative error says how
well. Bus bandwidth follows nccl-tests: busbw = algbw × 2(n − 1)/n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..collectives import ALLREDUCE
from . import parse as nccltests


def fit(sizes: Sequence[float], times_us: Sequence[float]) -> dict | None:
    """Latency (µs) and algbw (GB/s = 1e9 B/s) that best explain the points, or None.

    None when fewer than two distinct positive sizes with positive times are given, or when the
    times do not grow with size (no bandwidth to fit).
    """
    pts = [(float(s), float(t)) for s, t in zip(sizes, times_us, strict=True) if s > 0 and t > 0]
    if len({s for s, _ in pts}) < 2:
        return None
    w = [1.0 / (t * t) for _, t in pts]
    sw = sum(w)
    ss = sum(wi * s for wi, (s, _) in zip(w, pts, strict=True))
    sss = sum(wi * s * s for wi, (s, _) in zip(w, pts, strict=True))
    st = sum(wi * t for wi, (_, t) in zip(w, pts, strict=True))
    sst = sum(wi * s * t for wi, (s, t) in zip(w, pts, strict=True))
    det = sw * sss - ss * ss
    a = (st * sss - ss * sst) / det if det > 0 else -1.0
    x = (sw * sst - ss * st) / det if det > 0 else 0.0
    if a < 0 or det <= 0:  # latency pinned at 0: one-parameter fit of the slope
        a, x = 0.0, sst / sss
    if x <= 0:
        return None
    rel = [(a + x * s - t) / t for s, t in pts]
    return {
        "latency_us": a,
        "algbw_GBps": 1.0 / x / 1e3,  # bytes per µs = 1e6 B/s; GB/s = 1e3 bytes per µs
        "rms_rel_error": math.sqrt(sum(r * r for r in rel) / len(rel)),
        "points": len(pts),
    }


def _half(h: nccltests.Half | None) -> dict | None:
    if h is None:
        return None
    return {"time_us": h.time_us, "algbw_GBps": h.algbw_GBps, "busbw_GBps": h.busbw_GBps}


def measured(run: nccltests.Run, gpus: int | None) -> dict:
    """A run's rows (out-of-place, in-place alongside) and the fit on the out-of-place times.

    Trace replay prints the in-place half only; then the fit uses it and says so.
    """
    rows = []
    for r in run.rows:
        first = r.out_of_place or r.in_place
        rows.append(
            {
                "size_bytes": r.size_bytes,
                **(_half(first) or {}),
                "in_place": _half(r.in_place) if r.out_of_place else None,
            }
        )
    used = "out-of-place" if all(r.out_of_place for r in run.rows) else "in-place"
    pts = [(r["size_bytes"], r["time_us"]) for r in rows if r["time_us"]]
    f = fit([s for s, _ in pts], [t for _, t in pts]) if pts else None
    if f is not None:
        ranks = gpus or 0
        f["busbw_GBps"] = f["algbw_GBps"] * ALLREDUCE.busbw_factor(ranks) if ranks > 1 else None
        f["times"] = used
        big = [r["busbw_GBps"] for r in rows if r["busbw_GBps"] is not None]
        f["peak_measured_busbw_GBps"] = max(big) if big else None
    return {
        "rows": rows,
        "gpus": gpus,
        "gpus_in_file": len(run.ranks) or None,
        "servers_in_file": len(run.hosts) or None,
        "first_line": run.first_line,
        "avg_busbw_GBps": run.avg_busbw_GBps,
        "fit": f,
    }
