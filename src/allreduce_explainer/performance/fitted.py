"""The performance layer's figures, fitted on whole published sweeps: written by
`bench/performance.py --write` from tests/data/nccl-tests/SWEEPS.json; do not edit by hand.

VALIDATION: per class of system (bands.system_class) and size band (from, to bytes), each
cluster of runs predicted by the fit on every other cluster: the median and the worst
|predicted / measured busbw - 1|, over how many rows, runs and clusters (bench/PERFORMANCE.md
has the table per run).
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
    ("Ampere, one server, one process for several GPUs", 1048576, 4194304, 0.4582, 0.7313, 4, 2, 2),
    (
        "Ampere, one server, one process for several GPUs",
        4194304,
        67108864,
        0.1232,
        0.2267,
        8,
        2,
        2,
    ),
    (
        "Ampere, one server, one process for several GPUs",
        67108864,
        268435456,
        0.0373,
        0.0822,
        4,
        2,
        2,
    ),
    (
        "Ampere, one server, one process for several GPUs",
        268435456,
        1073741824,
        0.0579,
        0.0631,
        4,
        2,
        2,
    ),
    (
        "Ampere, one server, one process for several GPUs",
        1073741824,
        math.inf,
        0.0581,
        0.0685,
        5,
        2,
        2,
    ),
    ("Hopper, across servers, one process per GPU", 1048576, 4194304, 0.2054, 0.3391, 6, 3, 2),
    ("Hopper, across servers, one process per GPU", 4194304, 67108864, 0.1165, 0.1996, 12, 3, 2),
    ("Hopper, across servers, one process per GPU", 67108864, 268435456, 0.0809, 0.1371, 6, 3, 2),
    ("Hopper, across servers, one process per GPU", 268435456, 1073741824, 0.0273, 0.0840, 6, 3, 2),
    ("Hopper, across servers, one process per GPU", 1073741824, math.inf, 0.0197, 0.0544, 14, 4, 3),
    ("Hopper, one server, one process for several GPUs", 1048576, 4194304, 0.0671, 0.3325, 6, 3, 2),
    (
        "Hopper, one server, one process for several GPUs",
        4194304,
        67108864,
        0.0708,
        0.2908,
        12,
        3,
        2,
    ),
    (
        "Hopper, one server, one process for several GPUs",
        67108864,
        268435456,
        0.0198,
        0.1527,
        7,
        4,
        3,
    ),
    (
        "Hopper, one server, one process for several GPUs",
        268435456,
        1073741824,
        0.0401,
        0.0853,
        8,
        4,
        3,
    ),
    (
        "Hopper, one server, one process for several GPUs",
        1073741824,
        math.inf,
        0.0169,
        0.0558,
        15,
        4,
        3,
    ),
    ("Hopper, one server, one process per GPU", 4194304, 67108864, 0.0435, 0.0435, 1, 1, 1),
    ("Hopper, one server, one process per GPU", 67108864, 268435456, 0.0443, 0.0452, 2, 1, 1),
    ("Hopper, one server, one process per GPU", 268435456, 1073741824, 0.0144, 0.0147, 2, 1, 1),
    ("Hopper, one server, one process per GPU", 1073741824, math.inf, 0.0093, 0.0195, 4, 1, 1),
)
