"""NCCL's own cost model (NVIDIA/nccl 2.30.7 and 2.31.0a7), ported from its source: see
constants.py for the numbers, releases.py for the releases and what differs between them,
topology.py for the channel search, tuning.py for the time model, model.py for the candidates,
NCCL's choice (and its best time per algorithm), each also timed by the performance layer
(performance/), fitted on published runs. NCCL_VERSION is the release a System asks by default
(the newest ported): every page that names the model's version names this one."""

from .constants import ALGORITHMS, PROTOCOLS
from .model import (
    Best,
    Candidate,
    band_class,
    best_by_algorithm,
    busbw_factor,
    choose,
    predict,
    sweep,
)
from .releases import DEFAULT, RELEASES, VERSIONS, nearest, release
from .topology import System, graphs
from .tuning import COLLECTIVES, algo_time_us, log2i, tables

NCCL_VERSION = DEFAULT.version
NCCL_COMMIT = DEFAULT.commit

__all__ = [
    "ALGORITHMS",
    "COLLECTIVES",
    "Best",
    "NCCL_COMMIT",
    "NCCL_VERSION",
    "PROTOCOLS",
    "RELEASES",
    "VERSIONS",
    "Candidate",
    "System",
    "algo_time_us",
    "band_class",
    "best_by_algorithm",
    "busbw_factor",
    "choose",
    "graphs",
    "log2i",
    "nearest",
    "predict",
    "release",
    "sweep",
    "tables",
]
