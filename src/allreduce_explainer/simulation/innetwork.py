"""In-network reduction (NVLink SHARP, "NVLS") on real numbers, beside the ring on the same vectors.

On a Hopper or newer NVSwitch server NCCL's NVLS all-reduce lets the switch add. Its single-server
kernel (NCCL 2.30.7, src/device/all_reduce.h, RunWorkColl<..., NCCL_ALGO_NVLS, ...>, line 390 on)
splits the buffer into one chunk per GPU ("head"); for chunk k, GPU k issues multimem.ld_reduce:
the switch reads chunk k from every GPU, adds, and returns the sum to GPU k; GPU k then stores the
sum with multimem.st, which the switch writes to every GPU. So each GPU's link carries S (its
chunks read by the switch) plus S/n (its sum stored) out, and S/n plus S in: about S once each
way, against 2(n-1)/n·S each way in a ring.

Precision: for BF16 and FP16, NCCL asks the switch to accumulate in FP32
(`multimem.ld_reduce...add.acc::f32.bf16x2`, src/device/reduce_kernel.h lines 1110-1114, with
CUDA 12.2 or newer); without `.acc::f32` the PTX ISA says "the default precision of the
intermediate accumulation is same as the specified type" (PTX ISA, multimem). FP32 accumulates in
FP32, int32 exactly. The order in which the switch adds is not documented; here it adds in GPU
order. So a BF16 NVLS sum is the FP32 sum rounded once to BF16, while a ring rounds to BF16 at
every hop: n - 1 roundings for each element.
"""

from __future__ import annotations

from fractions import Fraction

from ..catalog.measured import MEASURED_H100_BUSBW_GBPS
from ..collectives import ALLREDUCE
from ..dtypes import FP32, DType
from ..dtypes import get as get_dtype
from ..errors import ParamError
from ..schedules import schedule as sch
from ..schedules.ring import steps as ring_steps
from ..schedules.topology import H100_NVLINK_GBps, Topology
from ..validate import count, positive
from . import gradients
from . import simulate as sim

SWITCH = -1  # the switch, where a move names a GPU
MAX_GPUS = 64
MAX_LENGTH = 1024
# Accumulation inside the switch per element type (reduce_kernel.h lines 1110-1114).
ACCUMULATE = {"bf16": "fp32", "fp32": "fp32", "int": "int"}


def switch_sum(column, dt: DType):
    """What the switch returns for one element: accumulated per ACCUMULATE, rounded once."""
    if not dt.is_float:
        return sum(column)
    acc = 0.0
    for x in column:  # FP32 accumulation (bf16 values are exact in fp32)
        acc = FP32.round(acc + x)
    return dt.round(acc)


def run(gpus=8, length=16, dtype="bf16", seed=1, values=None) -> dict:
    """The switch's all-reduce and the ring's on the same vectors: frames, results, bytes."""
    dt = get_dtype(dtype)
    n = count("gpus", gpus, 2, MAX_GPUS)
    if values is None:
        length = count("length", length, 1, MAX_LENGTH)
        inputs = gradients.draw(n, length, dt, count("seed", seed, 0, 2**53))
    else:
        inputs = gradients.check(values, n, dt, MAX_LENGTH)
        length = len(inputs[0])
    topo = Topology.make(n, n)
    ring = sim.run("ring", topo, inputs, dt, full=False)
    columns = list(zip(*inputs, strict=True))
    switch = [switch_sum(col, dt) for col in columns]
    target = ring["target"]
    chunks = sch.split(0, length, n)
    size = length * dt.itemsize
    return {
        "gpus": n,
        "length": length,
        "dtype": dt.name,
        "accumulate": ACCUMULATE[dt.name],
        "inputs": inputs,
        "target": target,
        "chunks": chunks,
        "switch_result": switch,
        "ring_result": ring["results"][0],
        "switch": _accuracy(switch, target, columns, dt),
        "ring": _accuracy(ring["results"][0], target, columns, dt),
        "frames": _frames(inputs, switch, chunks, dt),
        "bytes": {
            "nvls": nvls_bytes(n, size),
            "ring": {
                "sent_per_gpu": ring["bytes_sent_per_gpu"][0],
                "received_per_gpu": ring["bytes_sent_per_gpu"][0],
                "steps": ring["steps"],
            },
        },
    }


def nvls_bytes(n: int, nbytes: float) -> dict:
    """Bytes one GPU's link carries each way in NCCL's single-server NVLS all-reduce."""
    shard = nbytes / n
    return {"sent_per_gpu": nbytes + shard, "received_per_gpu": shard + nbytes, "steps": 2}


def ring_bytes(n: int, nbytes: float) -> float:
    """Bytes one GPU sends (and receives) in a ring all-reduce."""
    return 2 * (n - 1) / n * nbytes


def _accuracy(result: list, target: list, columns, dt: DType) -> dict:
    """How far a result is from the exactly rounded sum, in ulps; which elements match."""
    matches = [x == t for x, t in zip(result, target, strict=True)]
    ulps = [
        0.0 if x == t else float(abs(Fraction(x) - Fraction(t)) / Fraction(dt.ulp(t)))
        for x, t in zip(result, target, strict=True)
    ]
    out = {"matches": matches, "all_match": all(matches), "ulps": ulps, "max_ulp": max(ulps)}
    if dt.name == "bf16":  # the switch's FP32 accumulation is exact when no partial sum rounds
        out["fp32_exact"] = [_fp32_exact(col) for col in columns]
    return out


def _fp32_exact(column) -> bool:
    acc, exact = 0.0, Fraction(0)
    for x in column:
        acc, exact = FP32.round(acc + x), exact + Fraction(x)
        if Fraction(acc) != exact:
            return False
    return True


def _frames(inputs, switch, chunks, dt: DType) -> list[dict]:
    """Start; the switch reads and adds each chunk for its head GPU; the heads multicast it."""
    n = len(inputs)
    bufs = [list(v) for v in inputs]
    done = [[False] * len(v) for v in inputs]

    def frame(phase: str, moves: list, narration: str) -> dict:
        """The buffers as they stand now, copied, after `moves`."""
        return {
            "phase": phase,
            "buffers": [list(b) for b in bufs],
            "complete": [list(d) for d in done],
            "moves": moves,
            "narration": [narration],
        }

    frames = [
        frame("start", [], f"Each of the {n} GPUs holds its own vector, cut into {n} chunks.")
    ]
    moves = []
    for k, (a, b) in enumerate(chunks):
        if b == a:
            continue
        moves += [[i, SWITCH, a, b, k] for i in range(n)] + [[SWITCH, k, a, b, k]]
        bufs[k][a:b] = switch[a:b]
        done[k][a:b] = [True] * (b - a)
    acc = "in FP32, then rounds once to BF16" if dt.name == "bf16" else "them"
    frames.append(
        frame(
            "reduce",
            moves,
            f"multimem.ld_reduce: for each chunk k the switch reads chunk k from all {n} "
            f"GPUs, adds {acc}, and returns the sum to GPU k.",
        )
    )
    moves = []
    for k, (a, b) in enumerate(chunks):
        if b == a:
            continue
        moves += [[k, SWITCH, a, b, k]] + [[SWITCH, i, a, b, k] for i in range(n)]
        for i in range(n):
            bufs[i][a:b] = switch[a:b]
            done[i][a:b] = [True] * (b - a)
    frames.append(
        frame(
            "multicast",
            moves,
            "multimem.st: each GPU stores its summed chunk once; the switch writes it to "
            f"every GPU. Two steps, where the ring takes {ring_steps(n)}.",
        )
    )
    return frames


def bandwidth(gpus, nbytes, link_GBps=H100_NVLINK_GBps) -> dict:
    """Ring and NVLS at the line rate: time, algbw, nccl-tests' busbw and the wire's own rate.

    Both keep every GPU's link busy at `link_GBps` each way, so the wire rate is the same; NVLS
    moves fewer bytes, finishes sooner, and busbw (algbw × 2(n-1)/n, which assumes a ring's
    traffic) comes out above the line rate: 2(n-1)/(n+1) × B, up to twice it.
    """
    n = count("gpus", gpus, 2, MAX_GPUS)
    s = positive("bytes", nbytes)
    rate = positive("link_GBps", link_GBps) * 1e9
    factor = ALLREDUCE.busbw_factor(n)
    out = {"gpus": n, "bytes": s, "link_GBps": rate / 1e9, "busbw_factor": factor}
    for name, wire in (("ring", ring_bytes(n, s)), ("nvls", nvls_bytes(n, s)["sent_per_gpu"])):
        t = wire / rate
        out[name] = {
            "bytes_per_link_each_way": wire,
            "time_s": t,
            "algbw_GBps": s / t / 1e9,
            "busbw_GBps": s / t / 1e9 * factor,
            "wire_GBps": wire / t / 1e9,
        }
    out["busbw_gain"] = out["nvls"]["busbw_GBps"] / out["ring"]["busbw_GBps"]
    # Any all-reduce by point-to-point sends must move 2(n-1)/n·S through each GPU's link
    # (Patarasuk & Yuan 2009); the switch adds, so NVLS is not bound by it.
    out["lower_bound_s"] = ring_bytes(n, s) / rate
    out["nvls_beats_bound"] = out["nvls"]["time_s"] < out["lower_bound_s"]
    return out


def measured_h100(link_GBps=H100_NVLINK_GBps) -> list[dict]:
    """The published H100 runs beside this model: busbw measured and ideal, and the wire rate a
    measured busbw implies (ring: busbw itself; NVLS: algbw × (n+1)/n, its bytes per link).

    From 5 to 8 GPUs the implied NVLS wire rate stays near 308 GB/s (about 68 % of the link, as
    NVIDIA/nccl issue 2140 computes); at 2 GPUs the "NVLS" figure would need more than the link
    (`exceeds_link`), so that run cannot have moved NVLS's bytes: it matched the ring's.
    """
    rows = []
    for n in range(2, 9):
        ideal = bandwidth(n, 1.0, link_GBps)
        ring, nvls = (MEASURED_H100_BUSBW_GBPS[k][n] for k in ("ring", "nvls"))
        algbw = nvls / ALLREDUCE.busbw_factor(n)
        rows.append(
            {
                "gpus": n,
                "ring_busbw_GBps": ring,
                "nvls_busbw_GBps": nvls,
                "ideal_ring_busbw_GBps": ideal["ring"]["busbw_GBps"],
                "ideal_nvls_busbw_GBps": ideal["nvls"]["busbw_GBps"],
                "nvls_algbw_GBps": algbw,
                "nvls_wire_GBps": algbw * (n + 1) / n,
                "exceeds_link": algbw * (n + 1) / n > link_GBps,
            }
        )
    return rows


def across_servers(servers, gpus_per_node, nbytes) -> dict:
    """Bytes each network card sends per all-reduce across servers, one card per GPU: a ring,
    NCCL's double binary tree (NVLSTree's part across servers) and the network's own reduction
    (InfiniBand SHARP, NCCL's CollNet), after NVLS has reduced inside each server.

    A ring spreads the server's 2(N-1)/N·S over its g cards. In a double binary tree each half of
    the data follows one tree, and a server is an inner node (two children) in one and a leaf in
    the other (NVIDIA, "Massively Scale Your Deep Learning Training with NCCL 2.4", 2019): it
    sends S/2 up and 2·S/2 down in the first, S/2 up in the second: 2S, so 2S/g per card at
    most. With SHARP each server sends its partial sum up once and receives the total once: S/g.
    """
    nodes = count("servers", servers, 1, 1 << 16)
    g = count("gpus_per_node", gpus_per_node, 1, 64)
    s = positive("bytes", nbytes)
    if nodes == 1:
        raise ParamError("servers", "in-network reduction across servers needs 2 or more")
    return {
        "servers": nodes,
        "gpus_per_node": g,
        "bytes": s,
        "ring_bytes_per_card": 2 * (nodes - 1) / nodes * s / g,
        "tree_bytes_per_card_max": 2 * s / g if nodes > 2 else s / g,
        "sharp_bytes_per_card": s / g,
    }
