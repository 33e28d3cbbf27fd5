"""Sharded data parallel (ZeRO, FSDP) on real numbers: reduce-scatter, update a shard, all-gather.

DDP all-reduces the gradient, then every GPU applies the whole update. A ring all-reduce is a
reduce-scatter followed by an all-gather; sharded data parallel stops after the reduce-scatter:
GPU p holds the complete sum of one chunk of the gradient, updates only that chunk of the
parameters (and keeps the optimizer state for that chunk only), and the updated parameters are
then all-gathered (Rajbhandari et al., "ZeRO", SC 2020, arXiv 1910.02054, section 7.2).

Why the result equals DDP's: the reduce-scatter here is the first half of DDP's ring all-reduce,
step for step, so each chunk's sum is made by the same additions in the same order; the all-gather
of DDP's gradient only copies. The update is element by element, so applying it to one chunk on
its owner or to the whole vector everywhere does the same operations on the same values. Integers
are then equal exactly and floats bit for bit. They can differ in the last bits where the order is
not the same: when DDP's all-reduce is another algorithm (a tree, NVLS) than the reduce-scatter's
ring, or when the update needs a global value summed in another order (a gradient norm for
clipping, itself all-reduced over the shards). `reference="tree"` shows the first case.

The update uses the summed gradient (DDP averages it, which in exact arithmetic is a learning
rate divided by the GPU count). Numbers: int (int32, plain SGD with a whole learning rate: exact),
fp32 (parameters, gradients and optimizer in fp32) or bf16 (mixed precision as ZeRO does it: BF16
gradients and parameters on the wire, FP32 master weights and Adam moments kept per shard, each
parameter rounded to BF16 after its update). Every float operation is rounded to FP32 once
(dtypes.py: exact for +, -, x, / and sqrt of FP32 operands computed in double).
"""

from __future__ import annotations

import math

from ..dtypes import FP32, INT32_MAX, DType
from ..dtypes import get as get_dtype
from ..errors import ParamError
from ..schedules import schedule as sch
from ..schedules import tree
from ..schedules.topology import Topology
from ..validate import count, number
from . import gradients
from . import simulate as sim

OPTIMIZERS = ("sgd", "adam")
REFERENCES = ("ring", "tree")  # the all-reduce DDP uses in the comparison
MAX_GPUS = 64
MAX_LENGTH = 1024
# torch.optim.Adam's defaults (betas=(0.9, 0.999), eps=1e-8); Kingma & Ba 2015, Algorithm 1.
ADAM_BETA1, ADAM_BETA2, ADAM_EPS = 0.9, 0.999, 1e-8
DEFAULT_LR = {"int": 1, "fp32": 0.1, "bf16": 0.1}
DEFAULT_ADAM_LR = 1e-3


def _f32(x: float) -> float:
    return FP32.round(x)


def sgd(p: float, g: float, lr) -> float:
    """p - lr·g: exact for ints; for floats a rounded product, then a rounded difference."""
    if isinstance(p, int):
        return p - lr * g
    return _f32(p - _f32(lr * g))


def adam(p: float, g: float, lr: float, m: float, v: float, t: int = 1):
    """One Adam step of one element in FP32 (Kingma & Ba, Algorithm 1), each op rounded once.

    Returns the new parameter and moments.
    """
    b1, b2, eps = _f32(ADAM_BETA1), _f32(ADAM_BETA2), _f32(ADAM_EPS)
    m = _f32(_f32(b1 * m) + _f32(_f32(1 - b1) * g))
    v = _f32(_f32(b2 * v) + _f32(_f32(1 - b2) * _f32(g * g)))
    m_hat = _f32(m / _f32(1 - _f32(b1**t)))
    v_hat = _f32(v / _f32(1 - _f32(b2**t)))
    step = _f32(_f32(lr * m_hat) / _f32(_f32(math.sqrt(v_hat)) + eps))
    return _f32(p - step), m, v


class _Update:
    """The optimizer applied to a range of elements: the same code for a shard and for DDP."""

    def __init__(self, optimizer: str, lr, dtype: DType):
        self.optimizer, self.lr, self.dtype = optimizer, lr, dtype

    def apply(self, params: list, grads: list, start: int, stop: int) -> dict:
        """Update params[start:stop] in place; return the optimizer state of that range."""
        wire = self.dtype
        master, m, v = [], [], []
        for j in range(start, stop):
            p, g = params[j], grads[j]  # bf16 values are exact in fp32: the master copy
            if self.optimizer == "sgd":
                new = sgd(p, g, self.lr)
            else:
                new, mj, vj = adam(p, g, self.lr, 0.0, 0.0)
                m.append(mj)
                v.append(vj)
            master.append(new)
            params[j] = wire.round(new) if wire.is_float else new
        state = {"start": start, "stop": stop}
        if wire.name == "bf16":
            state["master"] = master
        if self.optimizer == "adam":
            state.update(m=m, v=v)
        return state


def run(
    gpus=4,
    length=8,
    dtype="int",
    optimizer="sgd",
    lr=None,
    seed=1,
    grads=None,
    params=None,
    reference="ring",
) -> dict:
    """One sharded step on real numbers, as frames a stepper can show, and the check against DDP."""
    dt = get_dtype(dtype)
    n = count("gpus", gpus, 1, MAX_GPUS)
    if optimizer not in OPTIMIZERS:
        raise ParamError("optimizer", f"must be one of {', '.join(OPTIMIZERS)}")
    if reference not in REFERENCES:
        raise ParamError("reference", f"must be one of {', '.join(REFERENCES)}")
    if optimizer == "adam" and not dt.is_float:
        raise ParamError("optimizer", "Adam divides and takes square roots: use fp32 or bf16")
    seed = count("seed", seed, 0, 2**53)
    if grads is None:
        length = count("length", length, 1, MAX_LENGTH)
        grads = gradients.draw(n, length, dt, seed)
    else:
        grads = gradients.check(grads, n, dt, MAX_LENGTH, "grads")
        length = len(grads[0])
    if params is None:
        params = gradients.draw(1, length, dt, seed + 1)[0]
    elif not isinstance(params, list):
        raise ParamError("params", "must be a list of numbers, one per element")
    else:
        params = gradients.check([params], 1, dt, MAX_LENGTH, "params")[0]
        if len(params) != length:
            raise ParamError("params", f"must have {length} elements, as the gradients")
    lr = _learning_rate(lr, optimizer, dt, grads, params)
    update = _Update(optimizer, lr, dt)
    topo = Topology.make(n, n)
    chunks = sch.split(0, length, n)
    ring = list(range(n))
    owned = sch.owned(ring)
    rs_steps, ag_steps = sch.ring(ring, 0, length)
    rs = sim.run("reduce-scatter", topo, grads, dt, steps=rs_steps)
    summed = rs["results"]
    local = [list(params) for _ in range(n)]
    states = [update.apply(local[p], summed[p], *chunks[owned[p]]) for p in range(n)]
    after_update = [list(row) for row in local]
    ag = sim.run("all-gather", topo, after_update, dt, steps=ag_steps)
    final = ag["results"]

    ddp = _ddp(reference, topo, grads, params, dt, update)
    state = {
        "gpus": n,
        "length": length,
        "dtype": dt.name,
        "optimizer": optimizer,
        "lr": lr,
        "reference": reference,
        "chunks": chunks,
        "owned": owned,
        "grads": grads,
        "params": params,
        "reduce_scatter_result": summed,
        "summed_grads": ddp["summed"],
        "optimizer_state": states,
        "ddp_params": ddp["params"],
        "final_params": final,
        "frames": _frames(rs, ag, grads, params, after_update, chunks, owned, states, dt),
        "bytes_sent_per_gpu": _bytes(rs, ag, ddp["allreduce"], n),
    }
    state["check"] = check(final, ddp["params"], dt, reference)
    state["frames"][-1]["narration"].append(state["check"]["verdict"])
    return state


def _learning_rate(lr, optimizer: str, dt: DType, grads, params):
    if lr is None:
        lr = DEFAULT_ADAM_LR if optimizer == "adam" else DEFAULT_LR[dt.name]
    lr = number("lr", lr)
    if not dt.is_float:
        if lr != int(lr):
            raise ParamError("lr", "must be a whole number with int gradients (exact arithmetic)")
        lr = int(lr)
        worst = max(abs(p) + abs(lr) * sum(abs(g) for g in col)
                    for p, col in zip(params, zip(*grads, strict=True), strict=True))  # fmt: skip
        if worst > INT32_MAX:
            raise ParamError("lr", "the update could overflow int32: use a smaller rate")
        return lr
    if lr <= 0 or math.isinf(_f32(lr)):
        raise ParamError("lr", "must be a positive number that fits fp32")
    return _f32(lr)


def _ddp(reference: str, topo: Topology, grads, params, dt: DType, update: _Update) -> dict:
    """DDP: all-reduce the gradient (ring or tree), then the whole update on every GPU."""
    opts = {}
    if reference == "tree":
        opts["chunks"] = max(1, min(tree.SIMULATE_CHUNKS, len(grads[0]) // 2))
    r = sim.run(reference, topo, grads, dt, full=False, **opts)
    out = []
    for summed in r["results"]:
        local = list(params)
        update.apply(local, summed, 0, len(local))
        out.append(local)
    return {"summed": r["results"][0], "params": out, "allreduce": r}


def check(final: list[list], ddp: list[list], dt: DType, reference: str) -> dict:
    """Every GPU's parameters against DDP's, bit for bit (and in ulps where they differ)."""
    equal = [sim._same_bits(f, d) for f, d in zip(final, ddp, strict=True)]
    identical = all(sim._same_bits(f, final[0]) for f in final)
    ulps = 0.0
    if dt.is_float:
        for f, d in zip(final, ddp, strict=True):
            for x, y in zip(f, d, strict=True):
                if x != y:
                    ulps = max(ulps, abs(x - y) / dt.ulp(y))
    n = len(final)
    if all(equal):
        how = "exactly" if not dt.is_float else "bit for bit"
        verdict = f"All {n} GPUs hold {how} the parameters DDP gives."
    elif reference != "ring":
        verdict = (
            f"DDP's {reference} adds the gradients in another order than the ring's "
            f"reduce-scatter: its parameters differ by up to {ulps:g} ulp."
        )
    else:
        verdict = "Mismatch: the sharded step and DDP disagree."
    return {
        "equal_to_ddp": equal,
        "all_equal": all(equal),
        "identical_on_all_gpus": identical,
        "same_order": reference == "ring",
        "max_ulp_vs_ddp": ulps,
        "verdict": verdict,
    }


def _bytes(rs: dict, ag: dict, allreduce: dict, n: int) -> dict:
    return {
        "reduce_scatter": rs["bytes_sent_per_gpu"],
        "all_gather": ag["bytes_sent_per_gpu"],
        "total": [a + b for a, b in zip(rs["bytes_sent_per_gpu"], ag["bytes_sent_per_gpu"])],
        "ddp_allreduce": allreduce["bytes_sent_per_gpu"],
    }


def _frames(rs, ag, grads, params, after_update, chunks, owned, states, dt) -> list[dict]:
    """Start, each reduce-scatter step, the update, each all-gather step.

    Every frame has `buffers` (each GPU's vector the phase works on), `shows` (which one:
    "grads" until the update, then "params"), `complete` (cells final for the phase), `moves`
    ([src, dst, start, stop, chunk]) and `narration`; the update frame adds `optimizer_state`.
    """
    n = len(grads)
    name = dt.name

    def moves(step):
        return [
            [m["src"], m["dst"], m["start"], m["stop"], _chunk(chunks, m["start"])]
            for m in step["messages"]
        ]

    frames = [
        {
            "phase": "start",
            "op": None,
            "buffers": grads,
            "shows": "grads",
            "complete": [[n == 1] * len(params) for _ in range(n)],
            "moves": [],
            "narration": [
                f"Each of the {n} GPUs holds its own gradient and the same parameters; "
                f"{_owners(owned)}."
            ],
        }
    ]
    for s, step in enumerate(rs.get("trace", []), 1):
        frames.append(
            {
                "phase": "reduce-scatter",
                "op": "add",
                "buffers": step["buffers"],
                "shows": "grads",
                "complete": [[c == n for c in row] for row in step["contributors"]],
                "moves": moves(step),
                "narration": [
                    f"Reduce-scatter step {s}: every GPU sends one chunk of its gradient to the "
                    "next, which adds it to its own."
                ],
            }
        )
    fresh = [[False] * len(params) for _ in range(n)]
    for p in range(n):
        a, b = chunks[owned[p]]
        fresh[p][a:b] = [True] * (b - a)
    what = "SGD" if states and "m" not in states[0] else "Adam"
    frames.append(
        {
            "phase": "update",
            "op": "update",
            "buffers": after_update,
            "shows": "params",
            "complete": [list(row) for row in fresh],
            "moves": [],
            "optimizer_state": states,
            "narration": [
                f"Each GPU applies {what} to its own chunk only, with the summed gradient it owns"
                + (" (FP32 master weights and moments, rounded to BF16)" if name == "bf16" else "")
                + "; the other chunks of its parameters are stale."
            ],
        }
    )
    for s, step in enumerate(ag.get("trace", []), 1):
        for m in step["messages"]:
            fresh[m["dst"]][m["start"] : m["stop"]] = [True] * (m["stop"] - m["start"])
        frames.append(
            {
                "phase": "all-gather",
                "op": "copy",
                "buffers": step["buffers"],
                "shows": "params",
                "complete": [list(row) for row in fresh],
                "moves": moves(step),
                "narration": [
                    f"All-gather step {s}: every GPU forwards one updated chunk of parameters to "
                    "the next, which stores it."
                ],
            }
        )
    return frames


def _owners(owned: list[int]) -> str:
    """Which chunk each GPU will own after the reduce-scatter, read from the run's `owned` (GPU
    p's chunk, numbered from 0 as the stepper's columns are): one rule when one holds, else
    GPU by GPU."""
    n = len(owned)
    shift = owned[0] % n
    if all(c == (p + shift) % n for p, c in enumerate(owned)):
        rule = "p" if shift == 0 else f"(p + {shift}) mod {n}"
        return f"GPU p will own chunk {rule} of the {n}, numbered from 0"
    return "the GPUs will own chunks " + ", ".join(f"{c} (GPU {p})" for p, c in enumerate(owned))


def _chunk(chunks: list[tuple[int, int]], start: int) -> int:
    return next(i for i, (a, b) in enumerate(chunks) if a == start and b > a)
