"""NCCL's own cost model (NVIDIA/nccl 2.30.7, 2.31.0a7 and, where it differs, 2.27.7), ported
from its source: see constants.py for the numbers, releases.py for the releases and what differs
between them, topology.py for the channel search, tuning.py for the time model, model.py for the
candidates, NCCL's choice (and its best time per algorithm), each also timed by the performance
layer (performance/), fitted on published runs. NCCL_VERSION is the release a System asks by default
(the newest ported): every page that names the model's version names this one."""

from .constants import (
    ALGORITHMS,
    BASE_LATENCY_US,
    COLLNET_DIRECT_HOPPER_FACTOR,
    GENERATIONS,
    HW_LATENCY_US,
    NET_OVERHEAD_US,
    PROTOCOLS,
    RING_PLATEAU_FACTOR,
    TREE_PATTERN_FACTOR,
)
from .model import (
    Best,
    Candidate,
    band_class,
    best_by_algorithm,
    busbw_factor,
    choose,
    choose_among,
    performance_call,
    predict,
    sweep,
)
from .releases import DEFAULT, RELEASES, VERSIONS, nearest, release
from .releases import brief as release_brief
from .releases import help_text as release_help
from .releases import status as release_status
from .topology import GPU_SPECS, NIC_GBPS, System, graphs, tree_pattern
from .tuning import (
    COLLECTIVES,
    algo_time_us,
    comm_channels,
    log2i,
    size_breakpoints,
    tables,
    terms,
)
from .versions import ALGORITHM_INDEX, PROTOCOL_INDEX, available, parse_version

NCCL_VERSION = DEFAULT.version
NCCL_COMMIT = DEFAULT.commit

# The face: other subjects import these names from `nccl`, never its modules
# (tests/core/test_layers.py holds them to it).
__all__ = [
    "ALGORITHMS",
    "ALGORITHM_INDEX",
    "BASE_LATENCY_US",
    "COLLECTIVES",
    "COLLNET_DIRECT_HOPPER_FACTOR",
    "GENERATIONS",
    "GPU_SPECS",
    "HW_LATENCY_US",
    "NCCL_COMMIT",
    "NCCL_VERSION",
    "NET_OVERHEAD_US",
    "NIC_GBPS",
    "PROTOCOLS",
    "PROTOCOL_INDEX",
    "RELEASES",
    "RING_PLATEAU_FACTOR",
    "TREE_PATTERN_FACTOR",
    "VERSIONS",
    "Best",
    "Candidate",
    "System",
    "algo_time_us",
    "available",
    "band_class",
    "best_by_algorithm",
    "busbw_factor",
    "choose",
    "choose_among",
    "comm_channels",
    "graphs",
    "log2i",
    "nearest",
    "parse_version",
    "performance_call",
    "predict",
    "release",
    "size_breakpoints",
    "release_brief",
    "release_help",
    "release_status",
    "sweep",
    "tables",
    "terms",
    "tree_pattern",
]
