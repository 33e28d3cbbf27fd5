"""The library's front door: plain parameters in, validated, JSON-able results out.

The CLI and the page widgets both call these, so a parameter is checked in one place and a bad
one raises a ParamError that names it.
"""

from __future__ import annotations

from . import cost as cost_model
from . import dtypes, gradients, tree
from . import simulate as sim
from .errors import ParamError
from .topology import H100_NVLINK_GBPS, NIC_400G_GBPS, Topology
from .validate import count, positive

ALGORITHMS = tuple(sim.ALGORITHMS)
MAX_SIM_GPUS = 1024  # summary mode
MAX_TRACE_GPUS = 64  # full traces keep every buffer after every step
MAX_TRACE_LENGTH = 1024
MAX_LENGTH = 1 << 16
MAX_ELEMENTS = 1 << 22  # gpus x length held in memory
MAX_COST_GPUS = 1 << 16


def algorithm_name(name) -> str:
    if name not in ALGORITHMS:
        raise ParamError("algorithm", f"must be one of {', '.join(ALGORITHMS)}")
    return name


def topology(
    gpus,
    gpus_per_node=None,
    intra_bw=H100_NVLINK_GBPS,
    inter_bw=NIC_400G_GBPS,
    intra_latency=0.0,
    inter_latency=0.0,
    max_gpus=MAX_COST_GPUS,
) -> Topology:
    return Topology.make(
        gpus, gpus_per_node, intra_bw, inter_bw, intra_latency, inter_latency, max_gpus=max_gpus
    )


def simulate(
    algorithm,
    gpus=4,
    gpus_per_node=None,
    length=None,
    dtype="int",
    seed=0,
    values=None,
    trace=False,
    chunks=None,
    **links,
) -> dict:
    """Run one all-reduce on real vectors; the trace of every step when `trace` is true."""
    algorithm = algorithm_name(algorithm)
    topo = topology(
        gpus, gpus_per_node, max_gpus=MAX_TRACE_GPUS if trace else MAX_SIM_GPUS, **links
    )
    dt = dtypes.get(dtype)
    max_length = MAX_TRACE_LENGTH if trace else min(MAX_LENGTH, MAX_ELEMENTS // topo.gpus)
    if values is None:
        length = count("length", 2 * topo.gpus if length is None else length, 1, max_length)
        inputs = gradients.draw(topo.gpus, length, dt, count("seed", seed, 0, 2**63))
    else:
        inputs = gradients.check(values, topo.gpus, dt, max_length)
        if length is not None and count("length", length, 1, max_length) != len(inputs[0]):
            raise ParamError("length", "does not match the length of the given values")
    opts = {}
    if chunks is not None:
        if algorithm != "tree":
            raise ParamError("chunks", "only the tree is pipelined in chunks")
        opts["chunks"] = count("chunks", chunks, 1, 64)
    elif algorithm == "tree":  # no more chunks than elements in half the vector
        opts["chunks"] = max(1, min(tree.SIMULATE_CHUNKS, len(inputs[0]) // 2))
    return sim.run(algorithm, topo, inputs, dt, full=bool(trace), **opts)


def estimate(algorithm, gpus, nbytes, gpus_per_node=None, chunks=None, **links) -> dict:
    """Closed-form time, steps and bytes of one all-reduce of `nbytes` per GPU."""
    algorithm = algorithm_name(algorithm)
    topo = topology(gpus, gpus_per_node, **links)
    s = positive("bytes", nbytes)
    if chunks is not None:
        chunks = count("chunks", chunks, 1, 1 << 20)
    return cost_model.cost(algorithm, topo, s, chunks)


def busbw(gpus, nbytes, time_us, collective="allreduce") -> dict:
    """nccl-tests' algbw and busbw for one measured time (S as nccl-tests counts it)."""
    if collective not in cost_model.BUSBW_FACTORS:
        raise ParamError("collective", f"must be one of {', '.join(cost_model.BUSBW_FACTORS)}")
    n = count("gpus", gpus, 1, MAX_COST_GPUS)
    out = cost_model.bandwidths(
        positive("bytes", nbytes), positive("time_us", time_us) * 1e-6, n, collective
    )
    out.update(gpus=n, bytes=nbytes, time_us=time_us, collective=collective)
    return out
