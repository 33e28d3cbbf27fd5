"""NCCL's own cost model (NVIDIA/nccl 2.30.7), ported from its source: see constants.py for the
numbers, topology.py for the channel search, tuning.py for the time model, model.py for the
candidates, NCCL's choice (and its best time per algorithm), each also timed by the performance
layer (performance/), fitted on published runs."""

from .constants import ALGORITHMS, NCCL_COMMIT, NCCL_VERSION, PROTOCOLS
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
from .topology import System, graphs
from .tuning import COLLECTIVES, algo_time_us, log2i, tables

__all__ = [
    "ALGORITHMS",
    "COLLECTIVES",
    "Best",
    "NCCL_COMMIT",
    "NCCL_VERSION",
    "PROTOCOLS",
    "Candidate",
    "System",
    "algo_time_us",
    "band_class",
    "best_by_algorithm",
    "busbw_factor",
    "choose",
    "graphs",
    "log2i",
    "predict",
    "sweep",
    "tables",
]
