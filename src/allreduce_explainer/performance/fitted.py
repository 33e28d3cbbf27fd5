"""The performance layer's figures, fitted on whole published sweeps: written by
`bench/performance.py --write` from tests/data/nccl-tests/SWEEPS.json; do not edit by hand.

VALIDATION: leaving each system out of the fit in turn and predicting it, per size band
(from, to bytes): the median and the worst |predicted / measured busbw - 1|, over how many rows
and systems (bench/PERFORMANCE.md has the table per system).
"""

import math

from .layer import Parameters

FITTED_ON = ('azure-nd-a100-v4', 'azure-nd-h100-v5', 'azure-nd-h200-v5', 'galvatron-8xa100', 'together-8xh100-ring', 'nccl-tests-309-2x8xh100', 'xxrjun-8xh100', 'nccl-tests-290-8xh100', 'nccl-tests-256-2x8xh200')

PARAMETERS = Parameters(
    ramp_bytes={'Ampere/p2p': 47795.3, 'Hopper/nvls': 138881, 'Hopper/p2p': 20106.8, 'nvls': 138881, 'p2p': 31000.2},
    ramp_power=0.581455,
    latency={'Ampere': 1.02339, 'Hopper': 0.772635},
    protocol={'Ampere/LL': 1.54603, 'Ampere/LL128': 0.900732, 'Hopper/LL': 1.17762, 'Hopper/LL128': 1.1638},
    asymptote={'Ampere/p2p': 0.952549, 'Hopper/nvls': 1.04304, 'Hopper/p2p': 1.05582},
    launch_us_per_gpu=4.32893,
)

VALIDATION = (
    (1048576, 4194304, 0.1714, 0.5391, 12, 6),
    (4194304, 67108864, 0.0670, 0.2076, 25, 7),
    (67108864, 268435456, 0.0415, 0.1474, 15, 8),
    (268435456, 1073741824, 0.0293, 0.0784, 16, 8),
    (1073741824, math.inf, 0.0213, 0.0629, 30, 9),
)
