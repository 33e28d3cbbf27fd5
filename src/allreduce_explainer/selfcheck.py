"""A fixed set of simulations and cost cases, run under CPython and under Pyodide and compared.

The two interpreters must agree to the bit: the same sums, the same bytes, the same times.
"""

from __future__ import annotations

from . import api
from .catalog.models import EXAMPLE_GRADIENT_BYTES

CASES = [
    ("ring", 8, 4, "int"),
    ("ring", 7, 7, "bf16"),
    ("multi-ring", 8, 4, "fp32"),
    ("tree", 8, 8, "int"),
    ("tree", 6, 3, "bf16"),
    ("hierarchical", 12, 4, "fp32"),
    ("naive", 5, 5, "int"),
]
COSTS = [
    ("naive", 8, 8),
    ("naive", 64, 8),
    ("ring", 64, 8),
    ("multi-ring", 64, 8),
    ("hierarchical", 64, 8),
    ("tree", 64, 8),
]


def run() -> dict:
    sims = []
    for algorithm, n, g, dtype in CASES:
        r = api.simulate(
            algorithm=algorithm,
            gpus=n,
            gpus_per_node=g,
            length=3 * n + 1,
            dtype=dtype,
            seed=n,
            trace=True,
        )
        sims.append(
            {
                k: r[k]
                for k in (
                    "algorithm",
                    "results",
                    "target",
                    "matches_target",
                    "identical_on_all_gpus",
                    "max_ulp_error",
                    "steps",
                    "bytes_sent_per_gpu",
                    "time_s",
                )
            }
        )
    costs = [
        api.estimate(algorithm=a, gpus=n, bytes=EXAMPLE_GRADIENT_BYTES, gpus_per_node=g)
        for a, n, g in COSTS
    ]
    return {"simulations": sims, "costs": costs, "issue14": _issue14()}


def _issue14() -> dict:
    """Sharded steps (Adam's square roots and divisions), the switch's sum, ZeRO's figures."""
    shards = [
        api.shard_step(6, 13, dtype, optimizer, seed=6)
        for dtype, optimizer in (("int", "sgd"), ("fp32", "adam"), ("bf16", "adam"))
    ]
    nvls = api.innetwork(8, 17, "bf16", seed=8)
    zero = api.shard(model="llama3-8b", gpus=64)["strategies"]
    return {
        "shard": [{k: r[k] for k in ("final_params", "optimizer_state", "check")} for r in shards],
        "innetwork": {k: nvls[k] for k in ("switch_result", "ring_result", "switch", "ring")},
        "strategies": {
            k: {f: v[f] for f in ("memory_bytes_per_gpu", "comm_bytes_per_gpu", "comm_s")}
            for k, v in zero.items()
        },
    }
