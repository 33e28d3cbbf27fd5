"""Model states per GPU by training strategy: mixed-precision Adam's bytes per parameter, kept
whole on every GPU or split over them as DDP, ZeRO-1, ZeRO-2, ZeRO-3 (FSDP) and HSDP do.

Mixed-precision Adam keeps 2 bytes per parameter of BF16 weights, 2 of BF16 gradients and K = 12
of optimizer state (FP32 master weights, momentum and variance): 16 in all. With n GPUs (the
paper's N_d) the ZeRO paper's per-GPU model states are (2 + 2 + K)Ψ for DDP, 2Ψ + 2Ψ + KΨ/n
(ZeRO-1, P_os), 2Ψ + (2 + K)Ψ/n (ZeRO-2, P_os+g) and (2 + 2 + K)Ψ/n (ZeRO-3, P_os+g+p)
(Rajbhandari et al., "ZeRO", SC 2020, arXiv 1910.02054, sections 3.1 and 5, Figure 1). HSDP
(PyTorch FSDP's HYBRID_SHARD: "FULL_SHARD within a node, and replicate parameters across nodes",
torch/distributed/fsdp/api.py, ShardingStrategy) shards over the g GPUs of a server only:
(2 + 2 + K)Ψ/g. Activations and temporary buffers are not counted: "fits" is about model states.

One home for these figures, so that the calculator's memory check (the formulas) and the sharding
page's bars (whole shards) cannot drift apart.
"""

from __future__ import annotations

import math

from ..dtypes import BF16, FP32

# Bytes per parameter of each part of the model states, the keys of `per_gpu`'s answer
BYTES_PER_PARAM = {
    "params": BF16.itemsize,  # the BF16 (or FP16) weights the forward and backward use
    "grads": BF16.itemsize,  # their gradients
    "optimizer": 3 * FP32.itemsize,  # K: FP32 master weights, momentum and variance
}
ADAM_BYTES_PER_PARAM = sum(BYTES_PER_PARAM.values())  # 16: what plain DDP keeps on every GPU
MODEL_STATES = "model states per GPU"  # their label on every door (page 10, calc, shard)
# Over how many GPUs each part (params, grads, optimizer) is split: "1" kept whole, "n" all n
# GPUs, "g" the GPUs of one server.
SPLITS = {
    "ddp": ("1", "1", "1"),
    "zero1": ("1", "1", "n"),
    "zero2": ("1", "n", "n"),
    "zero3": ("n", "n", "n"),
    "hsdp": ("g", "g", "g"),
}
STRATEGIES = tuple(SPLITS)
FORMULAS = {
    "ddp": "(2 + 2 + K)Ψ",
    "zero1": "2Ψ + 2Ψ + KΨ/n",
    "zero2": "2Ψ + (2 + K)Ψ/n",
    "zero3": "(2 + 2 + K)Ψ/n",
    "hsdp": "(2 + 2 + K)Ψ/g",
}


def model_states(strategy: str, params: float, n: int, g: int) -> float:
    """Bytes per GPU as FORMULAS writes them (Ψ = params, n GPUs, g a server), not rounded."""
    w, d, k = BYTES_PER_PARAM.values()
    return {
        "ddp": (w + d + k) * params,
        "zero1": w * params + d * params + k * params / n,
        "zero2": w * params + (d + k) * params / n,
        "zero3": (w + d + k) * params / n,
        "hsdp": (w + d + k) * params / g,
    }[strategy]


def per_gpu(strategy: str, params: int, n: int, g: int) -> dict:
    """Model states per GPU in bytes: params, grads, optimizer and their total. A shard is
    rounded up to whole elements, as implementations pad the flat buffer to a multiple of n."""
    over = {"1": 1, "n": n, "g": g}
    parts = {
        part: size * math.ceil(params / over[split])
        for (part, size), split in zip(BYTES_PER_PARAM.items(), SPLITS[strategy], strict=True)
    }
    parts["total"] = sum(parts.values())
    return parts
