"""The exercises of the page on sharded data parallel: memory and bytes sent per GPU, sharded or
not."""

from __future__ import annotations

import random

from ... import api, fmt
from ...training import calculator, memory, shardcost
from .common import (
    GPUS_PER_SERVER,
    Problem,
    choice,
    draw_model,
    gpus_text,
    quantity,
    show,
    titled,
)

SHARDS = {  # what each strategy splits, and over how many GPUs
    "ddp": f"nothing: every GPU keeps all {memory.ADAM_BYTES_PER_PARAM} bytes per parameter",
    "zero1": f"the {memory.BYTES_PER_PARAM['optimizer']} bytes of optimizer state over the n GPUs",
    "zero2": "the gradients and the optimizer state over the n GPUs",
    "zero3": "all three, the weights too, over the n GPUs",
    "hsdp": "all three, but over the g GPUs of one server only",
}
W, D, K = memory.BYTES_PER_PARAM.values()  # bytes per parameter: weights, gradients, optimizer
STATES_TEXT = (
    f"mixed-precision Adam (per parameter: {W} bytes of BF16 weights, {D} of BF16 gradients and "
    f"{K} of FP32 optimizer state: master weights, momentum and variance)"
)


def _sharded(rng: random.Random, strategies: tuple[str, ...]) -> tuple[str, int, int, str]:
    """Across servers: in one server HSDP is ZeRO-3, and the bytes between servers are none."""
    key, params = draw_model(rng)
    n = GPUS_PER_SERVER * rng.choice([2, 4, 8, 16, 32, 64])
    return key, params, n, rng.choice(strategies)


@titled("Memory per GPU, sharded or not")
def zero_memory(rng: random.Random) -> Problem:
    key, params, n, strategy = _sharded(rng, memory.STRATEGIES)
    g = GPUS_PER_SERVER
    parts = memory.per_gpu(strategy, params, n, g)
    want = parts["total"]
    label = shardcost.LABELS[strategy]
    others = {k: memory.per_gpu(k, params, n, g)["total"] for k in memory.STRATEGIES}
    steps = [
        f"{label} splits {SHARDS[strategy]}.",
        "Per GPU: "
        + ", ".join(f"{part} {show(parts[part], 'GiB')}" for part in memory.BYTES_PER_PARAM)
        + f" ({memory.FORMULAS[strategy]} with K = {K}, Ψ = {params:,}, n = {n}, g = {g}).",
        f"In all {show(want, 'GiB')} (GiB = 2^30 bytes).",
    ]
    return quantity(
        want,
        "GiB",
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains with "
        f"{STATES_TEXT} on {gpus_text(n, g)}, under {label}. How much memory do the model states "
        "take on each GPU, in GiB?",
        hint=f"DDP keeps all {memory.ADAM_BYTES_PER_PARAM} bytes per parameter on every GPU; "
        "ZeRO-1 splits the optimizer state over the n GPUs, ZeRO-2 the gradients too, ZeRO-3 "
        "the weights as well; HSDP splits all three over one server's g GPUs. GiB is 2^30 "
        "bytes.",
        steps=steps,
        given={"params": params, "gpus": n, "gpus_per_node": g, "strategy": strategy},
        mistakes=tuple(
            (total, f"That is {shardcost.LABELS[k]}'s figure; {label} splits {SHARDS[strategy]}.")
            for k, total in others.items()
            if k != strategy
        ),
    )


COLLECTIVES_TEXT = {
    "ddp": "one all-reduce of the BF16 gradient",
    "zero1": "a reduce-scatter of the BF16 gradient, then an all-gather of the updated weights",
    "zero2": "a reduce-scatter of the BF16 gradient, then an all-gather of the updated weights",
    "zero3": "an all-gather of the BF16 weights before the forward pass and again before the "
    "backward pass, and a reduce-scatter of the gradient",
}


@titled("Bytes each GPU sends per step, sharded or not")
def shard_bytes(rng: random.Random) -> Problem:
    key, params, n, strategy = _sharded(rng, tuple(COLLECTIVES_TEXT))
    r = api.shard(model=key, gpus=n, gpus_per_node=GPUS_PER_SERVER)["strategies"]
    want = r[strategy]["comm_bytes_per_gpu"]
    label = shardcost.LABELS[strategy]
    grad = 2 * params
    steps = [
        f"The BF16 buffer: {params:,} × 2 bytes = S = {fmt.nbytes(grad)}.",
        f"{label} runs {COLLECTIVES_TEXT[strategy]}.",
        (
            f"An all-reduce sends 2(n − 1)/n · S = {show(want, 'GB')} per GPU."
            if strategy == "ddp"
            else f"Each of its {2 if strategy != 'zero3' else 3} collectives sends (n − 1)/n · S "
            f"= {fmt.nbytes((n - 1) / n * grad)} per GPU: {show(want, 'GB')} in all."
        ),
    ]
    ddp_bytes = r["ddp"]["comm_bytes_per_gpu"]
    z3 = r["zero3"]["comm_bytes_per_gpu"]
    wrong = (
        (
            ddp_bytes,
            "That is DDP's traffic (and ZeRO-1's and ZeRO-2's); ZeRO-3 gathers the "
            "weights twice per step, before the forward pass and again before the backward.",
        )
        if strategy == "zero3"
        else (
            z3,
            f"That is ZeRO-3's traffic, which gathers the weights twice per step; {label} "
            f"runs {COLLECTIVES_TEXT[strategy]}.",
        )
    )
    return quantity(
        want,
        "GB",
        prompt=f"{calculator.model_label(key)} ({params:,} parameters) trains on "
        f"{gpus_text(n, GPUS_PER_SERVER)} under {label}, with BF16 weights and gradients. Each "
        "collective is a ring over all n GPUs: an all-reduce of an S-byte buffer sends "
        "2(n − 1)/n · S per GPU, a reduce-scatter or an all-gather (n − 1)/n · S. How many "
        "bytes does each GPU send per training step, in GB?",
        hint="List the collectives the strategy runs per step. DDP: one all-reduce of the "
        "gradient. ZeRO-1 and ZeRO-2: a reduce-scatter of the gradient and an all-gather of "
        "the weights. ZeRO-3: the weights are gathered before the forward and again before the "
        "backward pass, and the gradient reduce-scattered.",
        steps=steps,
        given={"params": params, "gpus": n, "strategy": strategy},
        mistakes=(wrong,),
    )


GUARANTEED = ("guaranteed", "not guaranteed")
DDP_ALLREDUCE = {
    "ring": "NCCL's ring (a reduce-scatter, then an all-gather)",
    "tree": "NCCL's double binary tree",
}
# (number type, optimizer): those in which a tree's other order shows in the parameters on some
# gradients (BF16 Adam rounds the FP32 master weights back to BF16, which hides it on most)
PRECISIONS = (("fp32", "sgd"), ("bf16", "sgd"), ("fp32", "adam"))


@titled("Does ZeRO give DDP's parameters, bit for bit?")
def same_as_ddp(rng: random.Random) -> Problem:
    """Guaranteed when DDP's all-reduce is the ring whose reduce-scatter the sharded step runs
    (the same additions in the same order), not when it is a tree: the core's sharded step on
    drawn gradients shows a case that differs (searched for), or checks that the ring's agree."""
    key, _ = draw_model(rng)
    n = rng.randrange(3, 9)
    dtype, optimizer = rng.choice(PRECISIONS)
    reference = rng.choice(tuple(DDP_ALLREDUCE))
    want = "guaranteed" if reference == "ring" else "not guaranteed"
    seed = rng.randrange(1, 10**6)
    while True:
        r = api.shard_step(
            gpus=n, length=8, dtype=dtype, optimizer=optimizer, seed=seed, reference=reference
        )
        if r["check"]["all_equal"] == (reference == "ring"):
            break
        seed += 1  # only a tree's draw can agree by chance: try the next gradients
    ulps = r["check"]["max_ulp_vs_ddp"]
    steps = [
        "The sharded step's reduce-scatter is the first half of a ring all-reduce, step for "
        "step: each chunk's sum is made by the same additions in the same order as the ring's.",
        "The update is element by element, so applying it to one chunk on its owner or to the "
        "whole vector everywhere does the same operations on the same values.",
    ]
    if reference == "ring":
        steps.append(
            f"DDP's ring adds in that order too: the same bits, whatever the gradients (on "
            f"drawn {dtype.upper()} gradients, seed {seed}, all {n} GPUs agree with DDP)."
        )
    else:
        steps.append(
            f"DDP's tree adds in another order, and {dtype.upper()} sums depend on it: not "
            f"guaranteed (on drawn gradients, seed {seed}, the parameters differ from DDP's by up "
            f"to {fmt.sig(ulps, 3)} ulp)."
        )
    wrong = (
        (
            "not guaranteed",
            "The sharded step's reduce-scatter is DDP's ring's first half: the same additions in "
            "the same order, and the update is element by element. Floating point depends on "
            "the order, but here the order is the same.",
        )
        if reference == "ring"
        else (
            "guaranteed",
            "Only when DDP adds in the ring's order. A tree sums each element in another order, "
            f"and {dtype.upper()} addition depends on the order: the last bits can differ.",
        )
    )
    return choice(
        want,
        GUARANTEED,
        prompt=f"{calculator.model_label(key)} trains on {n} GPUs in {dtype.upper()} with "
        f"{optimizer.upper() if optimizer == 'sgd' else 'Adam'}. DDP would all-reduce the "
        f"gradients with {DDP_ALLREDUCE[reference]} and update every parameter on every GPU. "
        "A sharded optimizer (ZeRO) instead reduce-scatters the gradients with NCCL's ring, "
        "updates each GPU's own chunk of the parameters, and all-gathers them. Is every GPU "
        "guaranteed to end the step with DDP's parameters bit for bit, whatever the gradients? "
        "Type guaranteed or not guaranteed.",
        hint="Which additions, in which order, make each chunk's sum in the reduce-scatter, and "
        "in DDP's all-reduce? Does floating-point addition care about the order?",
        steps=steps,
        given={
            "gpus": n,
            "dtype": dtype,
            "optimizer": optimizer,
            "reference": reference,
            "seed": seed,
            "max_ulp": ulps,
        },
        mistakes=(wrong,),
    )
