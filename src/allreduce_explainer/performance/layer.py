"""The performance layer's time for one (algorithm, protocol) of one call, from NCCL's own terms.

NCCL times a call as latency + bytes / bandwidth (tuning.cc:630-654). Measured sweeps differ
from that in four ways, each a factor here, fitted by bench/performance.py on whole sweeps:

- a mid-size ramp (Simple, and the tree's LL128): the bandwidth reached grows with the bytes
  each channel of each rank moves,
  x = bytes / (channels x ranks), as eta(x) = 1 / (1 + (x0 / x)^k), one x0 per algorithm group
  (point-to-point rings and trees; NVLink SHARP's NVLS and NVLSTree), shared by generations.
  NCCL's chunks shrink at these sizes (calcCollChunking, src/enqueue.cc:2182-2296), so
  pipelines fill and drain; for LL128 it shrinks the tree's chunk alone (enqueue.cc:2286-2294),
  and the ring's LL128, like LL, takes no ramp (ramp() says why);
- a latency factor per GPU generation: NCCL's hop latencies are the same for every generation
  (tuning.cc:158-175), measurement is not;
- a bandwidth factor per generation for LL and LL128, one on one server and another across
  servers (a measured ceiling: their caps in tuning.cc are selection numbers rather than what
  the protocols reach, and NCCL's own caps differ by the servers' count; protocol_key);
- an asymptote per (generation, group): what a run reaches at gigabytes against NCCL's figure.
  Every algorithm across servers gets its own (the cards, not NVLink, set its pace), so an
  NVLink server's factor is never applied to a ring limited by its cards, nor the factor of
  NVLSTree across servers (B200's is 1.45) to one server's NVLS;

and a launch floor: one thread driving G GPUs (all_reduce_perf -g G) cannot finish a call in
less than about G x a few microseconds, however small the message.

The launch mode enters here alone because NCCL 2.30.7's source changes only the host side with
it (tests/data/nccl/ excerpts; tests/core/performance/test_launch.py holds them): peers in one
process are wired "P2P/direct pointer", in two "P2P/CUMEM" or "P2P/IPC", over the same NVLink
loads and stores (src/transport/p2p.cc:414-430); a collective's work is "direct" only for
CollNetDirect (src/enqueue.cc:2301-2306); the symmetric LL kernels refused to one thread with
several GPUs on unregistered buffers (src/scheduler/symmetric_sched.cc:148, 161) are refused to
every process by default (NCCL_SYM_NOWIN_ENABLE=0, lines 21, 163); the channel search and the
tuning know no process; each rank has its own proxy thread in either mode. What differs is that
one thread prepares and launches each of its GPUs' kernels in turn (src/group.cc:320-323,
356-376): the floor. One 8 x H200 node launched both ways agrees within 1 % at 16 GiB
(tests/data/nccl-tests/SWEEPS.json 'points'). Published runs of one server launched both ways
that differ more than that
(up to 1.39x at 0.25-64 MiB on A100s, per the project's correctness review) differ in something
this source does not show (their NCCL versions, their settings); the sweeps fitted here
(tests/data/nccl-tests/SWEEPS.json) have no A100 run with one process per GPU to say which, and a
latency factor shared by the -g 8 runs, fitted beside the floor, comes out 0.88: no further
penalty for -g 8 in these runs.

Where nothing was measured (a generation or group with no cited sweep) a factor is 1: NCCL's own
figure, with the ramp measured on the other generations.

It knows no NCCL code: nccl/model.py describes each call (a `Call`) with NCCL's own terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LAUNCH_NORM = 4.0  # how the launch floor and the GPUs' time combine (split_us)
GROUPS = {  # algorithm -> the group whose ramp it follows
    "Ring": "p2p",
    "Tree": "p2p",
    "CollNetChain": "p2p",
    "CollNetDirect": "p2p",
    "NVLS": "nvls",
    "NVLSTree": "nvls",
}


@dataclass(frozen=True)
class Parameters:
    """The fitted figures (fitted.py holds the ones in use, with the sweeps they come from)."""

    ramp_bytes: dict[str, float]  # "Hopper/nvls" (or a group alone) -> x0, bytes/channel/rank
    ramp_power: float  # k
    latency: dict[str, float] = field(default_factory=dict)  # generation -> factor
    protocol: dict[str, float] = field(default_factory=dict)  # "Ampere/LL" -> bandwidth factor
    asymptote: dict[str, float] = field(default_factory=dict)  # "Hopper/p2p-net" -> factor
    launch_us_per_gpu: float = 0.0


@dataclass(frozen=True)
class Call:
    """One (algorithm, protocol) for one call, as NCCL's model sees it: its GPU generation
    ("Hopper"), the servers and ranks, the algorithm's channels, NCCL's latency (us) and
    bandwidth (GB/s) for it, the bytes, and how many GPUs one thread drives (all_reduce_perf
    -g; 1 in a training job, where each process drives its own GPU)."""

    generation: str
    algorithm: str
    protocol: str
    nodes: int
    ranks: int
    channels: int
    latency_us: float
    bandwidth_GBps: float
    nbytes: int
    gpus_per_thread: int = 1


def ramp_key(c: Call) -> str:
    return f"{c.generation}/{GROUPS[c.algorithm]}"


def asymptote_key(c: Call) -> str:
    """The asymptote's key: the generation and group, and '-net' across servers (the cards set
    its pace, not NVLink)."""
    group = GROUPS[c.algorithm]
    net = "-net" if c.nodes > 1 else ""
    return f"{c.generation}/{group}{net}"


def protocol_key(c: Call) -> str:
    """The LL or LL128 factor's key: the generation and protocol, and '-net' across servers.
    NCCL's own ceilings for these protocols differ with the servers' count: llMaxBws and the
    per-channel LL128 caps are indexed by it (tuning.cc:267, 272-275), and the tree's LL128
    keeps 7/9 of its bandwidth on one server against 120/128 across (tuning.cc:335). Fitted
    with one factor for both, Hopper's LL128 came out 1.15, between one server's rings and the
    trees across servers, and together's ring was predicted 22 % slow at 4-32 MiB; apart, they
    come out about 0.97 and 0.84 (fitted.py)."""
    net = "-net" if c.nodes > 1 else ""
    return f"{c.generation}/{c.protocol}{net}"


def ramped(c: Call) -> bool:
    """Whether the call's bandwidth ramps with its size (ramp): Simple, and the tree's LL128."""
    return c.protocol == "Simple" or (c.protocol, c.algorithm) == ("LL128", "Tree")


def ramp(p: Parameters, c: Call) -> float:
    """eta(x): the share of the asymptotic bandwidth the call reaches: Simple's, and the tree's
    LL128, whose chunk NCCL halves while a message gives each channel fewer than
    (1 + log2i(nodes) + 0.1 ppn) x 16 / ppn chunks (calcCollChunking, src/enqueue.cc:2286-2294).
    LL has none: it sends 8-byte flag-and-data words with no chunk pipeline to fill (fitted
    with the ramp on it, the layer would add tens of us to every small call that #309's
    8-128 KiB rows, within 10 % of NCCL's own time, do not show). Nor has the ring's LL128,
    whose chunk calcCollChunking never shrinks: leaving each cluster out, a ramp on it put
    together's one-server ring 22 % slow at 4-32 MiB (bench/PERFORMANCE.md). A generation
    without a fitted ramp for this group takes the group's (the fitted generations' geometric
    mean); a group never fitted has none."""
    x0 = p.ramp_bytes.get(ramp_key(c), p.ramp_bytes.get(GROUPS[c.algorithm]))
    if x0 is None or not ramped(c):
        return 1.0
    x = c.nbytes / (c.channels * c.ranks)
    return 1.0 / (1.0 + (x0 / x) ** p.ramp_power)


def asymptotic_GBps(p: Parameters, c: Call) -> float:
    """The pair's bandwidth at gigabytes: NCCL's, times the asymptote and the protocol's factor."""
    bw = c.bandwidth_GBps * p.asymptote.get(asymptote_key(c), 1.0)
    if c.protocol != "Simple":
        bw *= p.protocol.get(protocol_key(c), 1.0)
    return bw


def split_us(p: Parameters, c: Call) -> tuple[float, float]:
    """(latency, transfer) in us, whose sum is the call's time: the transfer is the bytes over
    the ramped bandwidth; the latency NCCL's times the generation's factor, raised by the launch
    floor (a log fit scales the transfer alone). The floor and the GPUs' own time combine as a
    smooth maximum, their LAUNCH_NORM-norm: while the thread is still launching the last GPUs'
    kernels the first ones' work overlaps it only in part. Leaving each cluster out, from 64 KiB,
    p = 4 brings every class's 64 KiB - 1 MiB median within 15 % (9.8, 14.7 and 11.6 %), where
    3 leaves one at 16 %, 6 two at 15-16 % and 8 or 12 two at 17-21 %, with 43-45 of the 52 rows
    at 4-128 MiB within 15 % for all of them; a plain maximum misses the 1 MiB rows of -g 8 runs
    by up to 20 %."""
    transfer = c.nbytes / (1000 * asymptotic_GBps(p, c) * ramp(p, c))
    lat = c.latency_us * p.latency.get(c.generation, 1.0)
    if c.gpus_per_thread > 1:
        floor = c.gpus_per_thread * p.launch_us_per_gpu
        total = ((lat + transfer) ** LAUNCH_NORM + floor**LAUNCH_NORM) ** (1 / LAUNCH_NORM)
        lat = total - transfer
    return lat, transfer


def time_us(p: Parameters, c: Call) -> float:
    """The call's time in us."""
    lat, transfer = split_us(p, c)
    return lat + transfer
