"""Explain an all_reduce_perf log with NCCL's own model: its regimes, fitted to the rows.

An alpha-beta line misses real logs because NCCL changes algorithm and protocol with the size
(LL, LL128, Simple; Ring, Tree, NVLS, ...). Here each (algorithm, protocol) NCCL's model keeps
for the system is one regime, timed as the model times it (tuning.py's latency and bandwidth,
with the tree's size correction and the ring's plateau, then the performance layer's factors,
performance/layer.py, with the log's launch floor when one thread drove several GPUs):

    time_r(n) = latency_r(n) + offset_r + transfer_r(n) / scale_r

The rows, by size, are split into at most MAX_SEGMENTS runs of one regime each, found by
dynamic programming. A run keeps NCCL's own figures (scale 1, offset 0; FIXED_COST) or, over
MIN_SEGMENT_ROWS rows or more, gets its bandwidth scale and latency offset fitted in closed
form (least squares on the relative error) for SEGMENT_COST. What a split costs is its summed
squared relative error, those costs, and two small priors that name the regime among those that
fit alike (LL, LL128 and Simple are all latency + bytes / bandwidth): a scale far from 1, and a
regime that NCCL's model finds slower than its pick at that size. A noise-free log made by the
model is fitted back exactly (tests/core/logs/test_ncclfit.py).

Which regime ran is not printed in a log: the per-row regime is the most likely one under
this model, not an observation. Where busbw ramps up over a decade of sizes (at run time NCCL
also uses fewer channels for small messages, which its cost model leaves out), or where a run
reaches a small share of what the model gives any regime, the names are a guess.

The fit uses the rows from MIN_BYTES (64 KiB): below it, launch and synchronisation costs that
no bandwidth model holds set the time, so those rows get the first regime, extrapolated, but
no say in the fit and no part in `rms_rel_error` (`rms_rel_error_all` counts every row).

What the reader's hardware adds (line rate, per-card figures, the system guessed from the log's
device names, the calculator settings) is explain.py's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..nccl import System, busbw_factor, choose, choose_among, performance_call, tables, terms
from ..performance import layer
from ..performance.fitted import PARAMETERS

MIN_BYTES = 64 << 10  # rows below this are excluded from the fit and its rms
# The priors, per row: (ln scale)^2 and (ln of the regime's model time over the model's pick)^2
SCALE_PRIOR = 0.005
CHOICE_PRIOR = 0.0005
SEGMENT_COST = 0.001  # cost of one more fitted regime (squared relative error, summed over rows)
FIXED_COST = 0.0001  # and of one more at NCCL's own figures (a 1 % miss on one row)
MAX_SEGMENTS = 8
MAX_CUTS = 40  # rows where a regime may start, at most (a long -i sweep has thousands)
MIN_SEGMENT_ROWS = 3  # a regime's scale and offset are fitted over at least this many rows
SCALE_RANGE = (0.02, 50.0)


# ---- the regimes and their fit -----------------------------------------------------------------


@dataclass(frozen=True)
class Allowed:
    """The algorithms and protocols a log lets NCCL use for an all-reduce (explain.allowed:
    its release, NVLS or CollNet off, NCCL_ALGO / NCCL_PROTO); None: every one. Every regime
    fitted and every prediction is NCCL's among these only: a ring-only run is never named or
    timed as a tree."""

    algorithms: tuple[str, ...] | None = None
    protocols: tuple[str, ...] | None = None

    def __contains__(self, regime: tuple[str, str]) -> bool:
        a, p = regime
        return (self.algorithms is None or a in self.algorithms) and (
            self.protocols is None or p in self.protocols
        )

    def choose(self, s: System, n: int, per_thread: int = 1):
        """NCCL's pick at n bytes among the allowed pairs (choose's loop); None if none."""
        if self.algorithms is None and self.protocols is None:
            return choose("AllReduce", n, s, gpus_per_thread=per_thread)
        algos = self.algorithms
        if algos is None:
            algos = tuple(dict.fromkeys(a for a, _ in tables(s, "AllReduce")))
        return choose_among("AllReduce", n, s, algos, self.protocols, per_thread)


EVERY = Allowed()


def _lines(
    s: System, sizes: list[int], per_thread: int = 1, allowed: Allowed = EVERY
) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """Per allowed regime, per size: (latency us, transfer us) as the performance layer times
    them."""
    out = {}
    for (a, p), e in tables(s, "AllReduce").items():
        if (a, p) not in allowed:
            continue
        row = []
        for n in sizes:
            lat, bw = terms(s, "AllReduce", a, p, e, n)
            call = performance_call(s, a, p, lat, bw, n, per_thread)
            row.append(layer.split_us(PARAMETERS, call))
        out[(a, p)] = row
    return out


@dataclass(frozen=True)
class _Seg:
    """One regime fitted over rows lo..hi-1: latency offset, 1/scale, and the cost."""

    regime: tuple[str, str]
    lo: int
    hi: int
    offset: float
    inv: float
    cost: float


def _sums(lines, fit_rows, times) -> dict:
    """Per regime, prefix sums of the weighted least-squares terms (weight 1/t^2, so the
    residuals are relative errors): t - latency = offset + transfer x inv."""
    out = {}
    fastest = {i: min(sum(per_size[i]) for per_size in lines.values()) for i in fit_rows}
    for r, per_size in lines.items():
        acc = [(0.0,) * 8]
        for i in fit_rows:
            lat, f = per_size[i]
            t = times[i]
            y, w = t - lat, 1 / (t * t)
            a = acc[-1]
            slower = math.log((lat + f) / fastest[i]) ** 2
            acc.append((a[0] + w, a[1] + w * f, a[2] + w * f * f, a[3] + w * y,
                        a[4] + w * f * y, a[5] + w * y * y, lat, a[7] + slower))  # fmt: skip
        out[r] = acc
    return out


def _segment(r, acc, lo: int, hi: int) -> _Seg:
    """One regime over rows lo..hi-1: as NCCL's model has it (free), or with its offset and
    1/scale fitted in closed form (SEGMENT_COST; at least MIN_SEGMENT_ROWS rows, or every row
    of a shorter log; one row fits the scale alone), whichever costs less. The fitted latency
    is kept >= 0."""
    a, b = acc[lo], acc[hi]
    sums = tuple(b[k] - a[k] for k in range(6))
    choice = CHOICE_PRIOR * (b[7] - a[7])
    best = _Seg(r, lo, hi, 0.0, 1.0, _sse(sums, 0.0, 1.0) + choice + FIXED_COST)
    if hi - lo < min(MIN_SEGMENT_ROWS, len(acc) - 1):
        return best
    sw, sf, sff, sy, sfy, _ = sums
    det = sw * sff - sf * sf
    off = (sy * sff - sf * sfy) / det if hi - lo > 1 and det > 1e-12 * sw * sff else 0.0
    if off < 0:
        off = max(off, -acc[lo + 1][6])  # NCCL's latency never falls with size
    inv = (sfy - off * sf) / sff if sff > 0 else 1.0
    inv = min(1 / SCALE_RANGE[0], max(1 / SCALE_RANGE[1], inv))
    prior = SCALE_PRIOR * (hi - lo) * math.log(inv) ** 2 + choice + SEGMENT_COST
    fitted = _Seg(r, lo, hi, off, inv, _sse(sums, off, inv) + prior)
    return fitted if fitted.cost < best.cost else best


def _sse(sums: tuple, off: float, inv: float) -> float:
    """Sum of squared relative errors of offset + transfer x inv, from the prefix sums."""
    sw, sf, sff, sy, sfy, syy = sums
    sse = off * off * sw + inv * inv * sff + syy + 2 * off * inv * sf - 2 * off * sy - 2 * inv * sfy
    return max(sse, 0.0)


def _segments(lines, fit_rows, times) -> list[_Seg]:
    """The cheapest split of the rows (by size) into at most MAX_SEGMENTS runs of one regime
    each: dynamic programming over the rows where a run may start."""
    sums = _sums(lines, fit_rows, times)
    m = len(fit_rows)
    # regimes change only at these rows: every row of a -f 2 sweep, a grid for long -i sweeps
    cuts = sorted({round(k * m / min(m, MAX_CUTS)) for k in range(min(m, MAX_CUTS) + 1)})
    # best[end][count] = (cost, segments) for rows 0..end-1
    best: dict[int, dict] = {c: {} for c in cuts}
    best[0][0] = (0.0, [])
    for lo in cuts:
        starts = [(c, v) for c, v in best[lo].items() if c < MAX_SEGMENTS]
        if not starts:
            continue
        for end in (c for c in cuts if c > lo):
            seg = min((_segment(r, acc, lo, end) for r, acc in sums.items()), key=_cost)
            for c, (cost, segs) in starts:
                total = cost + seg.cost
                if c + 1 not in best[end] or total < best[end][c + 1][0]:
                    best[end][c + 1] = (total, [*segs, seg])
    return min(best[m].values(), key=lambda v: v[0])[1]


def _cost(seg: _Seg) -> float:
    return seg.cost


def _fitted(lines, seg: _Seg, i: int) -> float:
    lat, f = lines[seg.regime][i]
    return lat + seg.offset + f * seg.inv


def nccl_fit(
    sizes: list[int],
    times_us: list[float],
    system: System,
    gpus_per_thread: int = 1,
    allowed: Allowed = EVERY,
) -> dict | None:
    """Fit NCCL's regimes to measured (size, time) rows; None without a row from MIN_BYTES, or
    when the log allows no regime on this system. gpus_per_thread: the log's GPUs per thread
    (all_reduce_perf -g), which sets a launch floor; allowed: the regimes the log allows."""
    pts = sorted((n, t) for n, t in zip(sizes, times_us, strict=True) if n > 0 and t and t > 0)
    fit_rows = [i for i, (n, _) in enumerate(pts) if n >= MIN_BYTES]
    if not fit_rows:
        return None
    ns, ts = [n for n, _ in pts], [t for _, t in pts]
    lines = _lines(system, ns, gpus_per_thread, allowed)
    if not lines:
        return None
    segs = _segments(lines, fit_rows, ts)
    seg_of = {}
    for seg in segs:
        for k in range(seg.lo, seg.hi):
            seg_of[fit_rows[k]] = seg
    factor = busbw_factor("AllReduce", system.gpus)
    rows = []
    for i, (n, t) in enumerate(pts):
        seg = seg_of.get(i, segs[0])  # below MIN_BYTES: the first regime, extrapolated
        tf = _fitted(lines, seg, i)
        a, p = seg.regime
        rows.append(
            {
                "bytes": n,
                "regime": f"{a}/{p}",
                "algorithm": a,
                "protocol": p,
                "measured_time_us": t,
                "fitted_time_us": tf,
                "measured_busbw_GBps": n / (t * 1e3) * factor,
                "fitted_busbw_GBps": n / (tf * 1e3) * factor if tf > 0 else None,
                "rel_error": (tf - t) / t,
                "in_rms": n >= MIN_BYTES,
            }
        )
    used = [r["rel_error"] for r in rows if r["in_rms"]]
    every = [r["rel_error"] for r in rows]
    top, first = segs[-1], segs[0]
    plateau = _plateau_busbw(system, top.regime, top.inv, ns[-1], factor)
    pick = allowed.choose(system, ns[-1], gpus_per_thread)
    if pick is None:
        return None
    model = pick.busbw_GBps
    return {
        "rms_rel_error": _rms(used),
        "min_bytes": MIN_BYTES,
        "rms_rel_error_all": _rms(every),
        "points": len(used),
        "busbw_GBps": plateau,  # the last regime's, latency left out
        "model_busbw_GBps": model,  # NCCL's pick at the largest size, the layer's time
        "gpus_per_thread": gpus_per_thread,
        "bw_scale": rows[-1]["fitted_busbw_GBps"] / model,  # the fit against it, same size
        "latency_us": lines[first.regime][0][0] + first.offset,
        "regimes": [_regime(system, s, lines, ns, fit_rows, factor) for s in segs],
        "rows": rows,
    }


def _rms(xs: list[float]) -> float:
    return math.sqrt(sum(x * x for x in xs) / len(xs))


def _plateau_busbw(s: System, r: tuple[str, str], inv: float, n: int, factor: float) -> float:
    """The regime's fitted bus bandwidth at size n, latency left out (its plateau)."""
    e = tables(s, "AllReduce")[r]
    _, bw = terms(s, "AllReduce", r[0], r[1], e, n)
    call = performance_call(s, r[0], r[1], 0.0, bw, n)
    return layer.asymptotic_GBps(PARAMETERS, call) / inv * factor


def _regime(s: System, seg: _Seg, lines, ns, fit_rows, factor) -> dict:
    a, p = seg.regime
    last = fit_rows[seg.hi - 1]
    return {
        "regime": f"{a}/{p}",
        "from_bytes": ns[fit_rows[seg.lo]],
        "to_bytes": ns[last],
        "rows": seg.hi - seg.lo,
        "bw_scale": 1 / seg.inv,
        "latency_us": lines[seg.regime][last][0] + seg.offset,
        "nccl_latency_us": lines[seg.regime][last][0],
        "busbw_GBps": _plateau_busbw(s, seg.regime, seg.inv, ns[last], factor),
        "model_busbw_GBps": _plateau_busbw(s, seg.regime, 1.0, ns[last], factor),
    }


def prediction(
    sizes: list[int],
    times_us: list[float],
    system: System,
    gpus_per_thread: int = 1,
    allowed: Allowed = EVERY,
) -> dict:
    """NCCL's pick among the allowed pairs and the layer's busbw per size, beside the
    measurement (busbw from the measured time, as nccl-tests computes it, unrounded); a size
    where the log allows no pair is left out."""
    factor = busbw_factor("AllReduce", system.gpus)
    rows = []
    for n, t in zip(sizes, times_us, strict=True):
        c = allowed.choose(system, n, gpus_per_thread)
        if c is None:
            continue
        b = n / (t * 1e3) * factor
        rows.append(
            {
                "bytes": n,
                "algorithm": c.algorithm,
                "protocol": c.protocol,
                "busbw_GBps": c.busbw_GBps,
                "nccl_busbw_GBps": c.nccl_busbw_GBps,
                "measured_busbw_GBps": b,
                "ratio": b / c.busbw_GBps,
            }
        )
    return {
        "ratio_is": "measured / predicted bus bandwidth (the performance layer's, fitted on "
        "published runs): above 1, the run beat the model",
        "gpus_per_thread": gpus_per_thread,
        "system": {
            "gpu": system.gpu,
            "gpus": system.gpus,
            "gpus_per_node": system.gpus_per_node,
            "nics_per_node": system.nics_per_node,
            "nic_gbps": system.nic_Gbps,
        },
        "rows": rows,
    }
