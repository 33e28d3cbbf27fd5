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
        "Ampere/p2p": 11496.6,
        "Hopper/nvls": 100384,
        "Hopper/p2p": 14301.1,
        "nvls": 100384,
        "p2p": 12822.4,
    },
    ramp_power=0.464115,
    latency={"Ampere": 1.89143, "Hopper": 0.895698},
    protocol={
        "Ampere/LL": 0.72543,
        "Ampere/LL128": 0.975844,
        "Hopper/LL": 0.928402,
        "Hopper/LL128": 1.12142,
    },
    asymptote={
        "Ampere/p2p": 0.963337,
        "Hopper/nvls": 1.07634,
        "Hopper/p2p": 1.09678,
        "Hopper/p2p-net": 0.980516,
    },
    launch_us_per_gpu=4.32893,
)

VALIDATION = (
    ("Ampere, one server, one process for several GPUs", 65536, 1048576, 0.0978, 0.1363, 4, 1, 1),
    ("Ampere, one server, one process for several GPUs", 1048576, 4194304, 0.4494, 0.5309, 4, 2, 2),
    (
        "Ampere, one server, one process for several GPUs",
        4194304,
        67108864,
        0.1009,
        0.2290,
        8,
        2,
        2,
    ),
    (
        "Ampere, one server, one process for several GPUs",
        67108864,
        268435456,
        0.0355,
        0.0803,
        4,
        2,
        2,
    ),
    (
        "Ampere, one server, one process for several GPUs",
        268435456,
        1073741824,
        0.0632,
        0.0648,
        4,
        2,
        2,
    ),
    (
        "Ampere, one server, one process for several GPUs",
        1073741824,
        math.inf,
        0.0536,
        0.0671,
        5,
        2,
        2,
    ),
    ("Hopper, across servers, one process per GPU", 65536, 1048576, 0.1473, 0.2406, 8, 2, 1),
    ("Hopper, across servers, one process per GPU", 1048576, 4194304, 0.1943, 0.3757, 6, 3, 2),
    ("Hopper, across servers, one process per GPU", 4194304, 67108864, 0.0766, 0.2005, 12, 3, 2),
    ("Hopper, across servers, one process per GPU", 67108864, 268435456, 0.0781, 0.1212, 6, 3, 2),
    ("Hopper, across servers, one process per GPU", 268435456, 1073741824, 0.0338, 0.0888, 6, 3, 2),
    ("Hopper, across servers, one process per GPU", 1073741824, math.inf, 0.0202, 0.0545, 14, 4, 3),
    ("Hopper, one server, one process for several GPUs", 65536, 1048576, 0.1155, 0.9980, 12, 3, 2),
    ("Hopper, one server, one process for several GPUs", 1048576, 4194304, 0.0809, 0.2753, 6, 3, 2),
    (
        "Hopper, one server, one process for several GPUs",
        4194304,
        67108864,
        0.0750,
        0.3249,
        12,
        3,
        2,
    ),
    (
        "Hopper, one server, one process for several GPUs",
        67108864,
        268435456,
        0.0275,
        0.0926,
        7,
        4,
        3,
    ),
    (
        "Hopper, one server, one process for several GPUs",
        268435456,
        1073741824,
        0.0352,
        0.0477,
        8,
        4,
        3,
    ),
    (
        "Hopper, one server, one process for several GPUs",
        1073741824,
        math.inf,
        0.0264,
        0.0354,
        15,
        4,
        3,
    ),
    ("Hopper, one server, one process per GPU", 4194304, 67108864, 0.0432, 0.0432, 1, 1, 1),
    ("Hopper, one server, one process per GPU", 67108864, 268435456, 0.0504, 0.0505, 2, 1, 1),
    ("Hopper, one server, one process per GPU", 268435456, 1073741824, 0.0155, 0.0209, 2, 1, 1),
    ("Hopper, one server, one process per GPU", 1073741824, math.inf, 0.0132, 0.0300, 4, 1, 1),
)
