"""Servers of GPUs and the two link classes between them.

GPU i sits on server i // g. Inside a server GPUs talk over NVLink (through NVSwitch, so every pair
gets the full per-GPU rate); between servers each GPU has its own network card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from ..catalog import hardware
from ..errors import ParamError
from ..validate import count as _count
from ..validate import nonnegative as _nonnegative
from ..validate import positive as _positive

INTRA = "intra"
INTER = "inter"

# The default links: an H100 SXM server's NVLink, and one 400 Gb/s card per GPU (hardware.py).
H100_NVLINK_GBps = hardware.H100_SXM.link_GBps  # 450 per direction
NIC_400G_GBps = cast(float, hardware.NIC_400G["GBps"])  # 400 Gb/s / 8 = 50 per direction

MAX_GPUS = 1 << 16


@dataclass(frozen=True)
class Link:
    """One link class: bandwidth in GB/s (1e9 B/s) per direction and latency per message in us."""

    GBps: float
    latency_us: float

    def seconds(self, nbytes: float) -> float:
        """Alpha-beta time of one message of nbytes over this link."""
        return self.latency_us * 1e-6 + nbytes / (self.GBps * 1e9)


@dataclass(frozen=True)
class Topology:
    gpus: int
    gpus_per_node: int
    intra: Link = Link(H100_NVLINK_GBps, 0.0)
    inter: Link = Link(NIC_400G_GBps, 0.0)

    @classmethod
    def make(
        cls,
        gpus,
        gpus_per_node=None,
        intra_GBps=H100_NVLINK_GBps,
        inter_GBps=NIC_400G_GBps,
        intra_latency_us=0.0,
        inter_latency_us=0.0,
        max_gpus: int = MAX_GPUS,
    ) -> Topology:
        """Validate and build; n <= g means one server of n GPUs."""
        n = _count("gpus", gpus, 1, max_gpus)
        g = n if gpus_per_node is None else _count("gpus_per_node", gpus_per_node, 1, max_gpus)
        if g > n:
            g = n
        if n % g:
            raise ParamError("gpus", f"{n} GPUs do not fill servers of {g}: use a multiple of {g}")
        links = (
            _positive("intra_bw", intra_GBps),
            _positive("inter_bw", inter_GBps),
            _nonnegative("intra_latency", intra_latency_us),
            _nonnegative("inter_latency", inter_latency_us),
        )
        return cls(n, g, Link(links[0], links[2]), Link(links[1], links[3]))

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node

    def node(self, gpu: int) -> int:
        return gpu // self.gpus_per_node
