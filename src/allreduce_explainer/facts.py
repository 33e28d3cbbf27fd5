"""The figures the prose quotes, computed by the core at build time (never typed into a page).

Each page's Markdown reads them as template variables, e.g. {{ f.naive_8 }}, and each renders as
`<data class="fact" data-fact="naive_8" value="0.44">0.44 s</data>`: one name, one text, the same
on every page that quotes it, and a value in base units that the build's claims compare.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from . import api, fmt, nccl
from .catalog import hardware, measured
from .catalog.hardware import GIB, H100_SXM, NIC_400G_Gbps
from .catalog.models import EXAMPLE_GRADIENT_BYTES, EXAMPLE_PARAMS
from .collectives import COLLECTIVES
from .costs.latency_model import SIZES, whole
from .dtypes import BF16, FP32
from .exercises import units
from .params import defaults
from .schedules.topology import H100_NVLINK_GBps, NIC_400G_GBps
from .training import calculator, memory
from .widgets import FACTS, latency


@dataclass(frozen=True)
class Fact:
    """A figure under its one name: the text a reader sees, and its value in base units
    (seconds, bytes, bytes per second, a share as a fraction, a plain count), or None for a
    fact that is words ("Ring"). A claim in the prose compares values, so a sentence such as
    "the default leaves twice the best cap's" is checked on the figures it sits between."""

    name: str
    text: str
    value: float | None

    def __str__(self) -> str:
        raw = self.text if self.value is None else f"{self.value:.6g}"
        return (
            f'<data class="fact" data-fact="{self.name}" value="{html.escape(raw)}">'
            f"{html.escape(self.text, quote=False)}</data>"
        )


def value_of(text: str) -> float | None:
    """The value a fact's text states, in base units: "7.7 ms" -> 0.0077, "82 %" -> 0.82,
    "1,400" -> 1400; None when the text is not one quantity ("Ring Simple", "2/3")."""
    text = text.strip()
    if text.endswith("%"):
        share = value_of(text[:-1])
        return None if share is None else share / 100
    try:
        quantity = units.parse(text)
    except units.AnswerError:
        return None
    return quantity.number * (quantity.unit.scale if quantity.unit else 1.0)


def named(texts: dict[str, object]) -> dict[str, Fact]:
    """Facts from their texts (a number such as a GPU count is its own text), or from
    `(text, value)` where the text alone would be misread ("7B" is parameters, not bytes)."""
    out = {}
    for name, given in texts.items():
        text, value = given if isinstance(given, tuple) else (str(given), value_of(str(given)))
        out[name] = Fact(name, text, value)
    return out


def headline() -> dict[str, object]:
    """Why all-reduce: a 7B model's BF16 gradient on 8 and 64 H100s. NCCL's time is the
    calculator's default (`calculator.calc()`, your-cluster's `cluster_allreduce`), so the first
    and last pages quote one figure; the memory is plain DDP's model states (training/memory.py),
    which is why the example is sharded in practice."""
    s = EXAMPLE_GRADIENT_BYTES
    t = {
        "naive_8": api.estimate(algorithm="naive", gpus=8, bytes=s, gpus_per_node=8),
        "ring_8": api.estimate(algorithm="ring", gpus=8, bytes=s, gpus_per_node=8),
        "naive_64": api.estimate(algorithm="naive", gpus=64, bytes=s, gpus_per_node=8),
        "ring_64": api.estimate(algorithm="ring", gpus=64, bytes=s, gpus_per_node=8),
    }
    nccl = calculator.calc(params=EXAMPLE_PARAMS, gpus=64, gpus_per_node=8, algorithm="nccl")
    ddp = memory.ADAM_BYTES_PER_PARAM * EXAMPLE_PARAMS
    return {
        "params": (f"{EXAMPLE_PARAMS / 1e9:g}B", EXAMPLE_PARAMS),
        "gradient": fmt.nbytes(s),
        "nvlink": f"{H100_NVLINK_GBps:g} GB/s",
        "nic": f"{NIC_400G_GBps:g} GB/s",
        "nic_line": f"{NIC_400G_Gbps:g} Gb/s",
        **{f"bytes_{part}": str(b) for part, b in memory.BYTES_PER_PARAM.items()},
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


def all_facts() -> dict[str, object]:
    """The opening page's figures and every widget module's facts(); a name may appear once."""
    out = headline()
    for more in FACTS:
        for key, value in more().items():
            if key in out:
                raise ValueError(f"fact {key!r} is defined twice")
            out[key] = value
    return out


def quick_reference() -> dict[str, object]:
    """The quick reference's numbers to remember, each from its one home: link rates from
    catalog/hardware.py, measured busbw from catalog/measured.py, bytes per parameter from
    training/memory.py, the busbw factors from collectives.py and NCCL's picks by size from its
    model on the latency page's default cluster (so the two pages say the same)."""
    gpu, nic = hardware.H100_SXM, hardware.NIC_400G
    d = defaults(latency.LATENCY)
    n, per, card = d["gpus"], d["gpus_per_node"], d["nic_gbps"]
    sizes = whole(SIZES)
    system = latency.nccl_system(n, per, card_Gbps=card)
    picks = nccl.best_by_algorithm(system, sizes).pick
    ddp = memory.per_gpu("ddp", EXAMPLE_PARAMS, n, per)["total"]
    lo, hi = hardware.NIC_400G_MEASURED_GBps
    server = gpu.gpus_per_node
    busbw = measured.MEASURED_H100_BUSBW_GBPS
    return {
        "qr_server_gpus": str(server),
        "qr_nvlink": f"{gpu.link_GBps:g} GB/s",
        "qr_ring_measured": f"{busbw['ring'][server]:g} GB/s",
        "qr_nvls_measured": f"{busbw['nvls'][server]:g} GB/s",
        "qr_nic_name": nic["name"],
        "qr_nic": f"{nic['GBps']:g} GB/s",
        # a range: its value is its top, what a claim holds against ("lower than the line rate")
        "nic_measured": (f"{lo}–{hi} GB/s", hi * 1e9),
        "qr_nics_per_server": f"{server * nic['GBps']:g} GB/s",
        "qr_fp32_bytes": str(FP32.itemsize),
        "qr_bf16_bytes": str(BF16.itemsize),
        "qr_gib_over_gb": fmt.percent(hardware.GIB / 1e9 - 1),
        "qr_bytes_per_param": str(memory.ADAM_BYTES_PER_PARAM),
        "qr_bytes_split": " + ".join(str(b) for b in memory.BYTES_PER_PARAM.values()),
        "qr_hbm": f"{gpu.memory_gb:g} GiB",
        "qr_example_params": (f"{EXAMPLE_PARAMS / 1e9:g}B", EXAMPLE_PARAMS),
        "qr_example_ddp": f"{fmt.sig(ddp / hardware.GIB, 3)} GiB",
        "qr_cluster": f"{n} H100s, {per} to a server, one {card:g} Gb/s card per GPU",
        "qr_nccl_version": nccl.NCCL_VERSION,
        "qr_nccl_releases": nccl.release_brief(),
        "qr_nccl_picks": latency.band_text(system, sizes, picks),
        **{f"qr_busbw_{key}": c.factor_text for key, c in COLLECTIVES.items()},
    }
