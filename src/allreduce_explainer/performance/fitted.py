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
)

PARAMETERS = Parameters(
    ramp_bytes={
        "Ampere/p2p": 32262.4,
        "Hopper/nvls": 134881,
        "Hopper/p2p": 16052.6,
        "nvls": 134881,
        "p2p": 22757.3,
    },
    ramp_power=0.529499,
    latency={"Ampere": 1.39322, "Hopper": 0.773384},
    protocol={
        "Ampere/LL": 0.619245,
        "Ampere/LL128": 0.938565,
        "Hopper/LL": 0.851248,
        "Hopper/LL128": 1.13961,
    },
    asymptote={"Ampere/p2p": 0.959231, "Hopper/nvls": 1.05856, "Hopper/p2p": 1.061},
    launch_us_per_gpu=4.32893,
)

VALIDATION = (
    (1048576, 4194304, 0.1801, 0.7274, 12, 6),
    (4194304, 67108864, 0.0656, 0.2249, 25, 7),
    (67108864, 268435456, 0.0406, 0.1434, 15, 8),
    (268435456, 1073741824, 0.0349, 0.0794, 16, 8),
    (1073741824, math.inf, 0.0240, 0.0699, 30, 9),
)
