"""The figures the prose quotes, computed by the core at build time (never typed into a page).

Each page's Markdown reads them as template variables, e.g. {{ f.naive_8 }}.
"""

from __future__ import annotations

from . import api, fmt
from .catalog.models import EXAMPLE_GRADIENT_BYTES, EXAMPLE_PARAMS
from .schedules.topology import H100_NVLINK_GBps, NIC_400G_GBps


def headline() -> dict[str, str]:
    """Why all-reduce: a 7B model's BF16 gradient on 8 and 64 H100s."""
    s = EXAMPLE_GRADIENT_BYTES
    t = {
        "naive_8": api.estimate("naive", 8, s, 8),
        "ring_8": api.estimate("ring", 8, s, 8),
        "naive_64": api.estimate("naive", 64, s, 8),
        "ring_64": api.estimate("ring", 64, s, 8),
        "multiring_64": api.estimate("multi-ring", 64, s, 8),
    }
    naive_all_nic = 2 * 63 * s / (NIC_400G_GBps * 1e9)
    return {
        "params": f"{EXAMPLE_PARAMS / 1e9:g}B",
        "gradient": fmt.nbytes(s),
        "nvlink": f"{H100_NVLINK_GBps:g} GB/s",
        "nic": f"{NIC_400G_GBps:g} GB/s",
        **{k: fmt.seconds(v["time_s"]) for k, v in t.items()},
        "naive_64_all_nic": fmt.seconds(naive_all_nic),
        "naive_64_root_bytes": fmt.nbytes(t["naive_64"]["bytes_sent_per_gpu_max"]),
        "ring_64_bytes_per_gpu": fmt.nbytes(t["ring_64"]["bytes_sent_per_gpu_max"]),
        "naive_over_ring_64": f"{t['naive_64']['time_s'] / t['ring_64']['time_s']:.0f}",
    }


def all_facts() -> dict[str, str]:
    """The opening page's figures and every widget module's facts(); a name may appear once."""
    from .widgets import FACTS

    out = headline()
    for more in FACTS:
        for key, value in more().items():
            if key in out:
                raise ValueError(f"fact {key!r} is defined twice")
            out[key] = value
    return out
