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
        "Ampere/p2p": 44414.4,
        "Hopper/nvls": 129499,
        "Hopper/p2p": 36424.1,
        "nvls": 129499,
        "p2p": 40221.3,
    },
    ramp_power=0.571319,
    latency={"Ampere": 1.31718, "Hopper": 0.763344},
    protocol={
        "Ampere/LL": 0.606346,
        "Ampere/LL128": 0.964933,
        "Hopper/LL": 0.833509,
        "Hopper/LL128": 1.16243,
    },
    asymptote={
        "Ampere/p2p": 0.958235,
        "Hopper/nvls": 1.04582,
        "Hopper/p2p": 1.08885,
        "Hopper/p2p-net": 0.96973,
    },
    launch_us_per_gpu=4.32893,
)

VALIDATION = (
    (1048576, 4194304, 0.2109, 0.7356, 16, 8),
    (4194304, 67108864, 0.0971, 0.3097, 33, 9),
    (67108864, 268435456, 0.0426, 0.1682, 19, 10),
    (268435456, 1073741824, 0.0294, 0.0946, 20, 10),
    (1073741824, math.inf, 0.0201, 0.0657, 38, 11),
)
