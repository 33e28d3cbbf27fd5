"""The performance layer's figures, fitted on whole published sweeps: written by
`bench/performance.py --write` from tests/data/nccl-tests/SWEEPS.json; do not edit by hand.

VALIDATION: per class of system (bands.system_class) and size band (from, to bytes), each
cluster of runs predicted by the fit on every other cluster: the median, the band's figure
(bands.figure: nine in ten over the size band and its neighbours) and the worst
|predicted / measured busbw - 1|, over how many rows, runs and clusters (bench/PERFORMANCE.md
has the table per run).
"""

import math

from .layer import Parameters

FITTED_ON = ('azure-nd-a100-v4', 'azure-nd-h100-v5', 'azure-nd-h200-v5', 'galvatron-8xa100', 'together-8xh100-ring', 'nccl-tests-309-2x8xh100', 'xxrjun-8xh100', 'nccl-tests-290-8xh100', 'nccl-tests-256-2x8xh200', 'nccl-tests-309-4x8xh100', 'nccl-tests-309-2x8xh100-cluster2', 'dstack-gcp-a4-2x8xb200', 'dstack-lambda-2x8xb200')

PARAMETERS = Parameters(
    ramp_bytes={'Ampere/p2p': 8395.12, 'Blackwell/nvls': 17236.3, 'Blackwell/p2p': 5836.85, 'Hopper/nvls': 82958.1, 'Hopper/p2p': 4058.16, 'nvls': 37814, 'p2p': 5836.85},
    ramp_power=0.448137,
    latency={'Ampere': 2.00562, 'Blackwell': 1.5682, 'Hopper': 0.957311},
    protocol={'Ampere/LL': 0.757794, 'Ampere/LL128': 0.75821, 'Blackwell/LL-net': 1.27582, 'Blackwell/LL128-net': 0.278523, 'Hopper/LL': 0.873034, 'Hopper/LL-net': 1.06707, 'Hopper/LL128': 1.00556, 'Hopper/LL128-net': 0.475768},
    asymptote={'Ampere/p2p': 0.962419, 'Blackwell/nvls-net': 1.45434, 'Hopper/nvls': 1.06489, 'Hopper/nvls-net': 1.08715, 'Hopper/p2p': 1.05353, 'Hopper/p2p-net': 0.985001},
    launch_us_per_gpu=4.32893,
)

VALIDATION = (
    ('Ampere, one server, one process for several GPUs', 65536, 1048576, 0.0545, 0.5379, 0.0971, 4, 1, 1),
    ('Ampere, one server, one process for several GPUs', 1048576, 4194304, 0.4394, 0.5379, 0.5379, 4, 2, 2),
    ('Ampere, one server, one process for several GPUs', 4194304, 67108864, 0.1171, 0.5007, 0.2190, 8, 2, 2),
    ('Ampere, one server, one process for several GPUs', 67108864, 268435456, 0.0522, 0.2096, 0.0940, 4, 2, 2),
    ('Ampere, one server, one process for several GPUs', 268435456, 1073741824, 0.0650, 0.0952, 0.0772, 4, 2, 2),
    ('Ampere, one server, one process for several GPUs', 1073741824, math.inf, 0.0934, 0.0963, 0.0963, 5, 2, 2),
    ('Blackwell, across servers, one process per GPU', 65536, 1048576, 0.0686, 2.1955, 2.1955, 4, 1, 1),
    ('Blackwell, across servers, one process per GPU', 1048576, 4194304, 0.2037, 0.3840, 0.3840, 2, 1, 1),
    ('Blackwell, across servers, one process per GPU', 4194304, 67108864, 0.0445, 0.1861, 0.0822, 7, 2, 2),
    ('Blackwell, across servers, one process per GPU', 67108864, 268435456, 0.0630, 0.1861, 0.1861, 4, 2, 2),
    ('Blackwell, across servers, one process per GPU', 268435456, 1073741824, 0.0452, 0.1184, 0.1184, 4, 2, 2),
    ('Blackwell, across servers, one process per GPU', 1073741824, math.inf, 0.0666, 0.0909, 0.0909, 6, 2, 2),
    ('Hopper, across servers, one process per GPU', 65536, 1048576, 0.1038, 0.2561, 0.2346, 8, 2, 1),
    ('Hopper, across servers, one process per GPU', 1048576, 4194304, 0.1810, 0.3572, 0.3572, 6, 3, 2),
    ('Hopper, across servers, one process per GPU', 4194304, 67108864, 0.0920, 0.2019, 0.2019, 12, 3, 2),
    ('Hopper, across servers, one process per GPU', 67108864, 268435456, 0.0747, 0.1562, 0.1487, 6, 3, 2),
    ('Hopper, across servers, one process per GPU', 268435456, 1073741824, 0.0395, 0.0913, 0.0913, 6, 3, 2),
    ('Hopper, across servers, one process per GPU', 1073741824, math.inf, 0.0201, 0.0470, 0.0470, 14, 4, 3),
    ('Hopper, one server, one process for several GPUs', 65536, 1048576, 0.1070, 0.2628, 0.9900, 12, 3, 2),
    ('Hopper, one server, one process for several GPUs', 1048576, 4194304, 0.0914, 0.2628, 0.2628, 6, 3, 2),
    ('Hopper, one server, one process for several GPUs', 4194304, 67108864, 0.0483, 0.1557, 0.1557, 12, 3, 2),
    ('Hopper, one server, one process for several GPUs', 67108864, 268435456, 0.0323, 0.1347, 0.1347, 7, 4, 3),
    ('Hopper, one server, one process for several GPUs', 268435456, 1073741824, 0.0247, 0.0727, 0.0727, 8, 4, 3),
    ('Hopper, one server, one process for several GPUs', 1073741824, math.inf, 0.0137, 0.0485, 0.0485, 15, 4, 3),
    ('Hopper, one server, one process per GPU', 4194304, 67108864, 0.0488, 0.0611, 0.0488, 1, 1, 1),
    ('Hopper, one server, one process per GPU', 67108864, 268435456, 0.0597, 0.0611, 0.0611, 2, 1, 1),
    ('Hopper, one server, one process per GPU', 268435456, 1073741824, 0.0193, 0.0611, 0.0338, 2, 1, 1),
    ('Hopper, one server, one process per GPU', 1073741824, math.inf, 0.0117, 0.0338, 0.0231, 4, 1, 1),
)

# rows whose class's band, recomputed without their cluster, covers their error; rows judged
COVERAGE = (125, 150)
