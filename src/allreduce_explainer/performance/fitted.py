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
    ramp_bytes={'Ampere/p2p': 47191.6, 'Hopper/nvls': 139889, 'Hopper/p2p': 19004.9, 'nvls': 139889, 'p2p': 29947.8},
    ramp_power=0.581628,
    latency={'Ampere': 1.02728, 'Hopper': 0.769075},
    protocol={'Ampere/LL': 1.54137, 'Ampere/LL128': 0.899651, 'Hopper/LL': 1.16014, 'Hopper/LL128': 1.1604},
    asymptote={'Ampere/p2p': 0.951985, 'Hopper/nvls': 1.04333, 'Hopper/p2p': 1.05303, 'Hopper/p2p-net': 0.964112},
    launch_us_per_gpu=4.32893,
)

VALIDATION = (
    (1048576, 4194304, 0.1714, 0.5399, 12, 6),
    (4194304, 67108864, 0.0871, 0.2503, 25, 7),
    (67108864, 268435456, 0.0416, 0.1690, 15, 8),
    (268435456, 1073741824, 0.0293, 0.0928, 16, 8),
    (1073741824, math.inf, 0.0217, 0.0631, 30, 9),
)
