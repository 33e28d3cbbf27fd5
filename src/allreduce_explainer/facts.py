"""The figures the prose quotes, computed by the core at build time (never typed into a page).

Each page's Markdown reads them as template variables, e.g. {{ f.naive_8 }}.
"""

from __future__ import annotations

from . import api, fmt
from .catalog.hardware import GIB, H100_SXM
from .catalog.models import EXAMPLE_GRADIENT_BYTES, EXAMPLE_PARAMS
from .schedules.topology import H100_NVLINK_GBps, NIC_400G_GBps
from .training import calculator, memory


def headline() -> dict[str, str]:
    """Why all-reduce: a 7B model's BF16 gradient on 8 and 64 H100s. NCCL's time is the
    calculator's default (`calculator.calc()`, your-cluster's `cluster_allreduce`), so the first
    and last pages quote one figure; the memory is plain DDP's model states (training/memory.py),
    which is why the example is sharded in practice."""
    s = EXAMPLE_GRADIENT_BYTES
    t = {
        "naive_8": api.estimate("naive", 8, s, 8),
        "ring_8": api.estimate("ring", 8, s, 8),
        "naive_64": api.estimate("naive", 64, s, 8),
        "ring_64": api.estimate("ring", 64, s, 8),
    }
    nccl = calculator.calc(params=EXAMPLE_PARAMS, gpus=64, gpus_per_node=8, algorithm="nccl")
    ddp = memory.ADAM_BYTES_PER_PARAM * EXAMPLE_PARAMS
    return {
        "params": f"{EXAMPLE_PARAMS / 1e9:g}B",
        "gradient": fmt.nbytes(s),
        "nvlink": f"{H100_NVLINK_GBps:g} GB/s",
        "nic": f"{NIC_400G_GBps:g} GB/s",
        **{k: fmt.seconds(v["time_s"]) for k, v in t.items()},
        "naive_64_root_bytes": fmt.nbytes(t["naive_64"]["bytes_sent_per_gpu_max"]),
        "naive_over_ring_64": f"{t['naive_64']['time_s'] / t['ring_64']['time_s']:.0f}",
        "nccl_64": fmt.seconds(nccl["allreduce_s"]),
        "ring_over_nccl_64": f"{t['ring_64']['time_s'] / nccl['allreduce_s']:.0f}",
        "adam_bytes_per_param": f"{memory.ADAM_BYTES_PER_PARAM}",
        "ddp_memory_7b": f"{fmt.sig(ddp / GIB, 3)} GiB",
        "ddp_memory_7b_gb": fmt.nbytes(ddp),
        "h100_memory": f"{H100_SXM.memory_gb:g} GiB",
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
