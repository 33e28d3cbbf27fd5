"""The performance layer's figures, fitted on whole published sweeps: written by
`bench/performance.py --write` from tests/data/nccl-tests/SWEEPS.json; do not edit by hand.

VALIDATION: leaving each system out of the fit in turn and predicting it, per size band
(from, to bytes): the median and the worst |predicted / measured busbw - 1|, over how many rows
and systems (bench/PERFORMANCE.md has the table per system).
"""

import math

from .layer import Parameters

FITTED_ON = (
    "azure-nd-a100-v4",
    "azure-nd-h100-v5",
    "azure-nd-h200-v5",
    "galvatron-8xa100",
    "together-8xh100-ring",
    "nccl-tests-309-2x8xh100",
    "xxrjun-8xh100",
    "nccl-tests-290-8xh100",
    "nccl-tests-256-2x8xh200",
    "nccl-tests-309-4x8xh100",
    "nccl-tests-309-2x8xh100-cluster2",
)

PARAMETERS = Parameters(
    ramp_bytes={
        "Ampere/p2p": 38647.5,
        "Hopper/nvls": 123339,
        "Hopper/p2p": 24991.3,
        "nvls": 123339,
        "p2p": 31078.2,
    },
    ramp_power=0.546562,
    latency={"Ampere": 1.35154, "Hopper": 0.799018},
    protocol={
        "Ampere/LL": 0.611052,
        "Ampere/LL128": 0.952215,
        "Hopper/LL": 0.84803,
        "Hopper/LL128": 1.15511,
    },
    asymptote={
        "Ampere/p2p": 0.960433,
        "Hopper/nvls": 1.05238,
        "Hopper/p2p": 1.07919,
        "Hopper/p2p-net": 0.977651,
    },
    launch_us_per_gpu=4.32893,
)

VALIDATION = (
    (1048576, 4194304, 0.2185, 0.7313, 16, 8),
    (4194304, 67108864, 0.0968, 0.2907, 33, 9),
    (67108864, 268435456, 0.0452, 0.1534, 19, 10),
    (268435456, 1073741824, 0.0298, 0.0879, 20, 10),
    (1073741824, math.inf, 0.0220, 0.0670, 38, 11),
)
