"""NCCL's time, as published runs measure it: a performance layer beside the port of NCCL's model.

nccl/ is a port: it gives NCCL's choice and NCCL's own time. That time is a selection model's,
one constant bandwidth per (algorithm, protocol) that real runs reach only from about 256 MiB;
at the 1-64 MiB of buckets and blocks it is 20-110 % optimistic. This package times the pair
NCCL picks as published sweeps do (layer.py), with figures fitted on whole cited sweeps
(fitted.py, written by bench/performance.py) and validated class of system by class, each
cluster of runs predicted by a fit without it (bands.py).
"""

from dataclasses import asdict

from .bands import band, system_class, words
from .layer import Call, Parameters, time_us

__all__ = ["Call", "Parameters", "band", "provenance", "system_class", "time_us", "words"]


def provenance() -> dict:
    """What the layer's figures rest on, for JSON: the sweeps fitted and the fitted factors."""
    from .fitted import FITTED_ON, PARAMETERS  # written by bench/performance.py, as bands.py says

    return {
        "fitted_on": list(FITTED_ON),
        "parameters": asdict(PARAMETERS),
        "validation": "bench/PERFORMANCE.md",
    }
