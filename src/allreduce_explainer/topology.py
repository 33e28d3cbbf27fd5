"""Servers of GPUs and the two link classes between them.

GPU i sits on server i // g. Inside a server GPUs talk over NVLink (through NVSwitch, so every pair
gets the full per-GPU rate); between servers each GPU has its own network card.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ParamError
from .validate import count as _count
from .validate import nonnegative as _nonnegative
from .validate import positive as _positive

INTRA = "intra"
INTER = "inter"

# H100 SXM, NVLink 4: 18 links x 25 GB/s = 450 GB/s per direction (NVIDIA H100 datasheet).
H100_NVLINK_GBPS = 450.0
# A 400 Gb/s network card (InfiniBand NDR, ConnectX-7) = 50 GB/s per direction.
NIC_400G_GBPS = 50.0
# Per-message latencies: NCCL 2.30 tuning.cc, Simple protocol, ring per-hop latency
# (NVLink 3.4 us, network 14 us); see REFERENCE.md.
NVLINK_LATENCY_US = 3.4
NETWORK_LATENCY_US = 14.0

MAX_GPUS = 1 << 16


@dataclass(frozen=True)
class Link:
    """One link class: bandwidth in GB/s (1e9 B/s) per direction and latency per message in us."""

    gbps: float
    latency_us: float

    def seconds(self, nbytes: float) -> float:
        """Alpha-beta time of one message of nbytes over this link."""
        return self.latency_us * 1e-6 + nbytes / (self.gbps * 1e9)


@dataclass(frozen=True)
class Topology:
    gpus: int
    gpus_per_node: int
    intra: Link = Link(H100_NVLINK_GBPS, 0.0)
    inter: Link = Link(NIC_400G_GBPS, 0.0)

    @classmethod
    def make(
        cls,
        gpus,
        gpus_per_node=None,
        intra_gbps=H100_NVLINK_GBPS,
        inter_gbps=NIC_400G_GBPS,
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
            _positive("intra_bw", intra_gbps),
            _positive("inter_bw", inter_gbps),
            _nonnegative("intra_latency", intra_latency_us),
            _nonnegative("inter_latency", inter_latency_us),
        )
        return cls(n, g, Link(links[0], links[2]), Link(links[1], links[3]))

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node

    def node(self, gpu: int) -> int:
        return gpu // self.gpus_per_node

    def link_class(self, src: int, dst: int) -> str:
        return INTRA if src // self.gpus_per_node == dst // self.gpus_per_node else INTER

    def link(self, cls_name: str) -> Link:
        return self.intra if cls_name == INTRA else self.inter
