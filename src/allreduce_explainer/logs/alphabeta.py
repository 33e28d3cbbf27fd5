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

from ..catalog import hardware
from ..collectives import ALLREDUCE
from ..schedules.ring import steps as ring_steps
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


# Longer logs are refused. One nccl-tests run is a few kB, so this holds hundreds of runs; the page
# parses it in the browser, and 5 MB took 0.9 s there (bench/RESULTS.md, "Every input, first
# time"), over the quarter second an input may take.
MAX_LOG_BYTES = 1_000_000
MAX_LOG_TEXT = f"{MAX_LOG_BYTES / 1e6:g} MB ({MAX_LOG_BYTES:,} bytes)"


def check_size(text: str, field: str = "log", advice: str = "") -> None:
    """Refuse a log over MAX_LOG_BYTES with a message, before any parsing."""
    from ..errors import ParamError

    size = len(text.encode("utf-8", "replace"))
    if size > MAX_LOG_BYTES:
        raise ParamError(field, f"is {size:,} bytes: at most {MAX_LOG_TEXT} is read{advice}")


def layout(n: int, hosts: int, gpus_per_node: int) -> tuple[int, int]:
    """(servers, GPUs per server) of a run of n GPUs: from its host lines when they divide n,
    else servers of `gpus_per_node` (one server if n fits in one, or if they do not divide n)."""
    if hosts and n % hosts == 0:
        servers = hosts
    else:
        servers = 1 if n <= gpus_per_node else max(1, n // gpus_per_node)
    per = n // servers if n % servers == 0 else n
    return n // per, per


def settings(f: dict, n: int, servers: int, per: int) -> dict:
    """The calculator parameters a fit sets (what a fit can and cannot say).

    Inside one server the run was limited by the GPU links: the fitted busbw becomes the link
    rate (GB/s). Across servers the cards limit it: the busbw spread over a server's cards becomes
    the card rate (Gb/s, as sold). The fitted latency is spread over the ring's 2(n − 1) steps as
    a per-message latency of that link class.
    """
    step_us = _round(f["latency_us"] / ring_steps(n))
    if servers == 1:
        return {"link_gbps": _round(f["busbw_GBps"]), "intra_latency_us": step_us}
    return {"nic_gbps": _round(8 * f["busbw_GBps"] / per), "inter_latency_us": step_us}


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def applied(run: nccltests.Run, m: dict, n: int, gpus_per_node: int) -> dict:
    """A run's servers and the calculator settings its fit gives (None without a busbw)."""
    servers, per = layout(n, len(run.hosts), gpus_per_node)
    f = m["fit"]
    sets = settings(f, n, servers, per) if f and f["busbw_GBps"] else None
    return {"servers": servers, "gpus_per_node": per, "calculator_settings": sets}


def read_log(
    text: str,
    gpus: int | None = None,
    gpus_per_node: int = hardware.H100_SXM.gpus_per_node,
    net=None,
) -> dict:
    """A whole `all_reduce_perf` log: the first run's rows and fit, every run, every line skipped.

    The GPU count comes from `gpus` if given, else from each run's `#  Rank` lines; the servers
    from its host lines, else servers of `gpus_per_node` (8, as an H100 SXM server). Each run
    also gets NCCL's model fitted (`nccl_fit`) and, when `net` names a GPU, NCCL's prediction
    (`prediction`): see nccl/logfit.py.
    """
    from ..errors import ParamError
    from . import ncclfit as logfit

    net = net or logfit.Network()
    device = logfit.device_name(text)

    check_size(text)
    log = nccltests.parse_runs(text)
    runs = []
    for i, run in enumerate(log.runs, 1):
        n = gpus or len(run.ranks)
        if not n:
            raise ParamError(
                "gpus",
                f"run {i} (line {run.first_line}) has no '#  Rank' lines giving the GPU count: "
                "pass the count",
            )
        m = measured(run, n)
        a = applied(run, m, n, gpus_per_node)
        nf = logfit.explain(m["rows"], n, a["servers"], a["gpus_per_node"], net, device)
        runs.append({**m, **a, **nf})
    first = runs[0] if runs else {"rows": [], "gpus": gpus, "fit": None}
    return {
        "rows": first["rows"],
        "gpus": first["gpus"],
        "fit": first["fit"],
        "nccl_fit": first.get("nccl_fit"),
        **({"prediction": first["prediction"]} if "prediction" in first else {}),
        "runs": runs,
        "skipped": [{"line": i, "kind": k, "reason": r} for i, k, r in log.skipped],
        "blank_lines": log.blank,
        "lines": log.lines,
    }
