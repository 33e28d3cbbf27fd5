"""What the site asks of NCCL's model: every candidate's time, NCCL's pick, and the measured time.

NCCL's model exists to choose, not to predict: one constant bandwidth per (algorithm, protocol)
that real runs reach only from about 256 MiB, so at 1-64 MiB its own times are 20-110 %
optimistic. So the choice is NCCL's, made on its own times (nccl_time_us), and each candidate
is also timed by the performance layer (performance/), fitted on whole published sweeps: that
is the time the site gives (time_us), with the validation's error for its class of system and
size (band).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .. import performance
from ..errors import ParamError
from ..performance.fitted import PARAMETERS
from . import constants as K
from .releases import DEFAULT
from .topology import System, graphs
from .tuning import collective_name, tables, terms


def busbw_factor(coll: str, n: int) -> float:
    """nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): 2(n-1)/n, or (n-1)/n."""
    return 2 * (n - 1) / n if coll == "AllReduce" else (n - 1) / n


@dataclass(frozen=True)
class Candidate:
    """One (algorithm, protocol) for one call: NCCL's own time and bus bandwidth, and the
    performance layer's (what published runs of this size measure)."""

    algorithm: str
    protocol: str
    nccl_time_us: float  # NCCL's own prediction (what it chooses on)
    time_us: float  # the performance layer's
    nccl_busbw_GBps: float
    busbw_GBps: float
    algbw_GBps: float

    def to_json(self) -> dict:
        return asdict(self)


def _check_bytes(nbytes) -> int:
    whole = isinstance(nbytes, int) or isinstance(nbytes, float) and nbytes.is_integer()
    if isinstance(nbytes, bool) or not whole:
        raise ParamError("bytes", f"must be a whole number of bytes, got {nbytes!r}")
    if not 1 <= nbytes <= 1 << 44:
        raise ParamError("bytes", f"must be 1 B to 16 TiB, got {nbytes!r}")
    return int(nbytes)


def predict(
    collective: str, nbytes: int, system: System, gpus_per_thread: int = 1
) -> list[Candidate]:
    """Every (algorithm, protocol) NCCL considers for this call, in NCCL's table order.
    gpus_per_thread: GPUs one thread drives (all_reduce_perf -g); 1 in a training job."""
    coll, n = collective_name(collective), _check_bytes(nbytes)
    out = []
    for (a, p), e in tables(system, coll).items():
        lat, bw = terms(system, coll, a, p, e, n)
        out.append(_candidate(system, coll, a, p, lat, bw, n, gpus_per_thread))
    return out


def _per_thread(g, system: System) -> int:
    """GPUs one thread drives, checked: 1 to a server's."""
    if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= system.gpus_per_node:
        raise ParamError(
            "gpus_per_thread", f"one thread drives 1 to {system.gpus_per_node} GPUs, got {g!r}"
        )
    return g


def band_class(system: System, gpus_per_thread: int = 1) -> str:
    """The class of system whose published runs give this system's band (performance.bands)."""
    return performance.system_class(K.GENERATIONS[system.generation], system.nodes, gpus_per_thread)


def timing_system(system: System) -> System:
    """The system whose NCCL terms feed the performance layer: the system itself, or, for a
    release older than the default, the same hardware under the default's model. An older
    release's tables are NCCL's older estimates of the same links (2.28.3 re-estimated NVLS with a
    measured efficiency, releases.py), not other hardware, and the layer is fitted on the
    default's; so a release picks with its own model and its pick is timed as the default's."""
    if system.release.key < DEFAULT.key:
        return replace(system, nccl_version=DEFAULT.version)
    return system


def performance_call(
    system: System,
    a: str,
    p: str,
    lat: float,
    bw: float,
    n: int,
    per_thread: int = 1,
    coll: str = "AllReduce",
) -> performance.Call:
    """One pair of one call as the performance layer takes it, from NCCL's terms for it (those of
    timing_system's release, when it differs and runs the pair)."""
    timed = timing_system(system)
    e = tables(timed, coll).get((a, p)) if timed is not system else None
    if e is not None:
        system = timed
        lat, bw = terms(timed, coll, a, p, e, n)
    return performance.Call(
        K.GENERATIONS[system.generation],
        a,
        p,
        system.nodes,
        system.gpus,
        graphs(system)[a].n_channels,
        lat,
        bw,
        n,
        per_thread,
    )


def _candidate(
    system: System, coll: str, a: str, p: str, lat: float, bw: float, n: int, per_thread: int = 1
) -> Candidate:
    """One pair's figures from its latency and bandwidth terms: NCCL's and the layer's."""
    factor = busbw_factor(coll, system.gpus)
    t = lat + n / (1000 * bw)
    call = performance_call(system, a, p, lat, bw, n, per_thread, coll)
    tp = performance.time_us(PARAMETERS, call)
    algbw = n / (tp * 1e3)
    return Candidate(a, p, t, tp, n / (t * 1e3) * factor, algbw * factor, algbw)


def choose(
    collective: str,
    nbytes: int,
    system: System,
    algorithm: str | None = None,
    protocol: str | None = None,
    gpus_per_thread: int = 1,
) -> Candidate:
    """NCCL's pick (enqueue.cc:2035-2044): the least NCCL time among the enabled pairs, optionally
    restricted as NCCL_ALGO / NCCL_PROTO do. A restriction nothing meets is a ParamError.

    The same pick as the least of _pool's candidates (the first of equals, in table order), with
    only the winner's figures worked out: a DDP sweep asks for thousands of sizes."""
    algorithm = _name(algorithm, K.ALGORITHMS, "algorithm")
    protocol = _name(protocol, K.PROTOCOLS, "protocol")
    coll, n = collective_name(collective), _check_bytes(nbytes)
    best = _least(system, _timed(system, coll, n, algorithm, protocol))
    if best is None:
        _pool(collective, nbytes, system, algorithm, protocol)  # raises its ParamError
    _, a, p, lat, bw = best
    return _candidate(system, coll, a, p, lat, bw, n, gpus_per_thread)


def _timed(system: System, coll: str, n: int, algorithm=None, protocol=None):
    """(NCCL's time us, algorithm, protocol, latency, bandwidth) of each enabled pair that
    NCCL_ALGO / NCCL_PROTO leave, in NCCL's table order: the loop NCCL picks from."""
    for (a, p), e in tables(system, coll).items():
        if (algorithm is None or a == algorithm) and (protocol is None or p == protocol):
            lat, bw = terms(system, coll, a, p, e, n)
            yield lat + n / (1000 * bw), a, p, lat, bw


def _first(timed: tuple) -> float:
    return timed[0]


def _in_pick_order(system: System, items) -> list:
    """Items in table order, as the release weighs them: 2.31 keeps the last of equal times,
    2.30.7 the first (releases.Release.ties_to_last); min() then keeps the first of equals."""
    items = list(items)
    return items[::-1] if system.release.ties_to_last else items


def _least(system: System, timed) -> tuple | None:
    """NCCL's pick among _timed's pairs: the least time, equals broken as the release does."""
    return min(_in_pick_order(system, timed), key=_first, default=None)


@dataclass(frozen=True)
class Best:
    """NCCL's own times (us, without the performance layer) at each size of a sweep: per enabled
    algorithm, its best protocol's (what NCCL_ALGO=<algorithm> runs), and NCCL's pick over every
    pair."""

    time_us: dict[str, list[float]]  # algorithm -> its best protocol's time, per size
    protocol: dict[str, list[str]]  # algorithm -> that protocol, per size
    pick: list[tuple[str, str, float]]  # NCCL's choice per size: (algorithm, protocol, time)


def best_by_algorithm(system: System, sizes, collective: str = "AllReduce") -> Best:
    """NCCL's pick loop (choose's) run once per size for every algorithm at once: a page draws
    the ring's and the tree's best times and NCCL's choice over hundreds of sizes. The first of
    equal times wins, in table order, as in choose."""
    coll = collective_name(collective)
    time_us: dict[str, list[float]] = {}
    protocol: dict[str, list[str]] = {}
    pick = []
    for n in sizes:
        here: dict[str, tuple[float, str]] = {}
        for t, a, p, _, _ in _in_pick_order(system, _timed(system, coll, _check_bytes(n))):
            if a not in here or t < here[a][0]:
                here[a] = (t, p)
        for a in sorted(here, key=K.ALGORITHMS.index):
            time_us.setdefault(a, []).append(here[a][0])
            protocol.setdefault(a, []).append(here[a][1])
        a = min(here, key=lambda k: here[k][0])
        pick.append((a, here[a][1], here[a][0]))
    return Best(time_us, protocol, pick)


def _nccl_time(c: Candidate) -> float:
    return c.nccl_time_us


def _pool(collective, nbytes, system, algorithm, protocol, per_thread=1) -> list[Candidate]:
    """The candidates NCCL_ALGO / NCCL_PROTO leave; never empty."""
    algorithm = _name(algorithm, K.ALGORITHMS, "algorithm")
    protocol = _name(protocol, K.PROTOCOLS, "protocol")
    pool = [
        c
        for c in predict(collective, nbytes, system, per_thread)
        if (algorithm is None or c.algorithm == algorithm)
        and (protocol is None or c.protocol == protocol)
    ]
    if not pool:
        what = " with ".join(x for x in (algorithm, protocol) if x)
        field = "algorithm" if algorithm else "protocol"
        v = system.nccl_version
        raise ParamError(field, f"NCCL {v} cannot run {what} here ({_why(system)})")
    return pool


def _name(value: str | None, names: tuple, field: str) -> str | None:
    if value is None:
        return None
    for n in names:
        if str(value).lower() == n.lower():
            return n
    raise ParamError(field, f"must be one of {', '.join(names)} (as NCCL spells them)")


def _why(s: System) -> str:
    avail = sorted({a for a, _ in tables(s, "AllReduce")}, key=K.ALGORITHMS.index)
    return f"{s.gpus} x {s.gpu}, {s.nodes} server(s): available {', '.join(avail)}"


def sweep(
    collective: str,
    sizes: list[int],
    system: System,
    algorithm: str | None = None,
    protocol: str | None = None,
    gpus_per_thread: int = 1,
) -> dict:
    """JSON for the CLI and the pages: per size NCCL's pick (the layer's and NCCL's own figures,
    and the validation's error band for that size) and every candidate it weighed."""
    coll = collective_name(collective)
    klass = band_class(system, _per_thread(gpus_per_thread, system))
    rows = []
    for n in sizes:
        pool = _pool(coll, n, system, algorithm, protocol, gpus_per_thread)
        pick = min(_in_pick_order(system, pool), key=_nccl_time)
        rows.append(
            {
                "bytes": n,
                "algorithm": pick.algorithm,
                "protocol": pick.protocol,
                "time_us": pick.time_us,
                "algbw_GBps": pick.algbw_GBps,
                "busbw_GBps": pick.busbw_GBps,
                "nccl_time_us": pick.nccl_time_us,
                "nccl_busbw_GBps": pick.nccl_busbw_GBps,
                "band": performance.band(klass, n),
                "candidates": [
                    {
                        "algorithm": c.algorithm,
                        "protocol": c.protocol,
                        "time_us": c.time_us,
                        "nccl_time_us": c.nccl_time_us,
                        "busbw_GBps": c.busbw_GBps,
                    }
                    for c in pool
                ],
            }
        )
    return {
        "nccl_version": system.nccl_version,
        "nccl_commit": system.release.commit,
        "collective": coll,
        "system": asdict(system) | {"nodes": system.nodes},
        "gpus_per_thread": gpus_per_thread,
        "graphs": {a: asdict(g) for a, g in graphs(system).items()},
        "performance": performance.provenance(),
        "rows": rows,
    }


def choose_among(
    collective: str,
    nbytes: int,
    system: System,
    algorithms,
    protocols=None,
    gpus_per_thread: int = 1,
) -> Candidate | None:
    """NCCL's pick (choose's loop) among the pairs a release or a log allows: `algorithms`
    (and `protocols`, if given) as NCCL spells them (nccl/versions.py; a log that says NVLS is
    off drops NVLS and NVLSTree). None if no enabled pair is allowed."""
    coll, n = collective_name(collective), _check_bytes(nbytes)
    allowed = [
        t
        for t in _timed(system, coll, n)
        if t[1] in algorithms and (protocols is None or t[2] in protocols)
    ]
    best = _least(system, allowed)
    if best is None:
        return None
    _, a, p, lat, bw = best
    return _candidate(system, coll, a, p, lat, bw, n, gpus_per_thread)
