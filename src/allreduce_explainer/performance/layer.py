"""The performance layer's time for one (algorithm, protocol) of one call, from NCCL's own terms.

NCCL times a call as latency + bytes / bandwidth (tuning.cc:630-654). Measured sweeps differ
from that in four ways, each a factor here, fitted by bench/performance.py on whole sweeps:

- a mid-size ramp: the bandwidth reached grows with the bytes each channel of each rank moves,
  x = bytes / (channels x ranks), as eta(x) = 1 / (1 + (x0 / x)^k), one x0 per algorithm group
  (point-to-point rings and trees; NVLink SHARP's NVLS and NVLSTree), shared by generations.
  NCCL's chunks shrink at these sizes (src/enqueue.cc), so pipelines fill and drain; only the
  tree has a correction for it in tuning.cc (620-627);
- a latency factor per GPU generation: NCCL's hop latencies are the same for every generation
  (tuning.cc:158-175), measurement is not;
- a bandwidth factor per generation for LL and LL128, whose caps in tuning.cc are selection
  numbers rather than what the protocols reach;
- an asymptote per (generation, group): what a run reaches at gigabytes against NCCL's figure.
  Rings and trees across servers get their own (network-bound: the card, not NVLink, sets the
  pace), so an NVLink server's factor is never applied to a ring limited by its cards;

and a launch floor: one thread driving G GPUs (all_reduce_perf -g G) cannot finish a call in
less than about G x a few microseconds, however small the message.

Where nothing was measured (a generation or group with no cited sweep) a factor is 1: NCCL's own
figure, with the ramp measured on the other generations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..nccl.topology import System, graphs

GROUPS = {  # algorithm -> the group whose ramp it follows
    "Ring": "p2p",
    "Tree": "p2p",
    "CollNetChain": "p2p",
    "CollNetDirect": "p2p",
    "NVLS": "nvls",
    "NVLSTree": "nvls",
}
GENERATION_NAMES = ("Volta", "Ampere", "Hopper", "Blackwell")  # System.generation's order


@dataclass(frozen=True)
class Parameters:
    """The fitted figures (fitted.py holds the ones in use, with the sweeps they come from)."""

    ramp_bytes: dict[str, float]  # group -> x0, bytes per channel per rank
    ramp_power: float  # k
    latency: dict[str, float] = field(default_factory=dict)  # generation -> factor
    protocol: dict[str, float] = field(default_factory=dict)  # "Ampere/LL" -> bandwidth factor
    asymptote: dict[str, float] = field(default_factory=dict)  # "Hopper/p2p-net" -> factor
    launch_us_per_gpu: float = 0.0


def asymptote_key(system: System, algorithm: str) -> str:
    """The asymptote's key: the generation and group, and '-net' for a point-to-point algorithm
    across servers (the cards set its pace, not NVLink)."""
    group = GROUPS[algorithm]
    net = "-net" if group == "p2p" and system.nodes > 1 else ""
    return f"{GENERATION_NAMES[system.generation]}/{group}{net}"


def ramp_key(system: System, algorithm: str) -> str:
    return f"{GENERATION_NAMES[system.generation]}/{GROUPS[algorithm]}"


def ramp(p: Parameters, system: System, algorithm: str, nbytes: int) -> float:
    """eta(x): the share of the asymptotic bandwidth a call of nbytes reaches. A generation
    without a fitted ramp for this group takes the group's (the fitted generations' geometric
    mean); a group never fitted has none."""
    group = GROUPS[algorithm]
    x0 = p.ramp_bytes.get(ramp_key(system, algorithm), p.ramp_bytes.get(group))
    if x0 is None:
        return 1.0
    x = nbytes / (graphs(system)[algorithm].n_channels * system.gpus)
    return 1.0 / (1.0 + (x0 / x) ** p.ramp_power)


def asymptotic_GBps(p: Parameters, system: System, algorithm: str, protocol: str, bw: float) -> float:
    """The pair's asymptotic bandwidth: NCCL's, times the asymptote and the protocol's factor."""
    gen = GENERATION_NAMES[system.generation]
    bw *= p.asymptote.get(asymptote_key(system, algorithm), 1.0)
    if protocol != "Simple":
        bw *= p.protocol.get(f"{gen}/{protocol}", 1.0)
    return bw


def split_us(
    p: Parameters,
    system: System,
    algorithm: str,
    protocol: str,
    latency_us: float,
    bandwidth_GBps: float,
    nbytes: int,
    gpus_per_thread: int = 1,
) -> tuple[float, float]:
    """(latency, transfer) in us, whose sum is the call's time: the transfer is the bytes over
    the ramped bandwidth; the latency NCCL's, times the generation's factor, or what the launch
    floor leaves above the transfer (a log fit scales the transfer alone)."""
    gen = GENERATION_NAMES[system.generation]
    bw = asymptotic_GBps(p, system, algorithm, protocol, bandwidth_GBps)
    transfer = nbytes / (1000 * bw * ramp(p, system, algorithm, nbytes))
    lat = latency_us * p.latency.get(gen, 1.0)
    floor = gpus_per_thread * p.launch_us_per_gpu if gpus_per_thread > 1 else 0.0
    return max(lat, floor - transfer), transfer


def time_us(
    p: Parameters,
    system: System,
    algorithm: str,
    protocol: str,
    latency_us: float,
    bandwidth_GBps: float,
    nbytes: int,
    gpus_per_thread: int = 1,
) -> float:
    """The call's time in us, from NCCL's latency and bandwidth terms for this pair (tuning.py's
    `terms`). gpus_per_thread: how many GPUs one thread drives (all_reduce_perf -g); 1 for a
    training job, where each process drives its own GPU."""
    lat, transfer = split_us(
        p, system, algorithm, protocol, latency_us, bandwidth_GBps, nbytes, gpus_per_thread
    )
    return lat + transfer
