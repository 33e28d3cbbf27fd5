"""GPUs and network cards for the calculator, each figure with its source.

Link rates are per GPU and per direction, GB/s = 1e9 bytes/s. `fabric` says how a server's GPUs
are joined: "switch" (NVSwitch: any pair gets the full per-GPU rate, so one ring can use all of
it) or "mesh" (point-to-point links: a ring between neighbours gets only one link's rate).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import ParamError

# GPU memory is sold in GB but is GiB: nvidia-smi reports 81,559 MiB on an "80GB" H100
# (NVIDIA/nccl issue 1264), about 80 × 2^30 bytes.
GIB = 2**30


@dataclass(frozen=True)
class GPU:
    name: str
    link_GBps: float  # intra-server rate per direction
    fabric: str  # "switch" or "mesh"
    peer_GBps: float  # what one ring between two neighbours gets
    peak_bf16_tflops: float  # dense BF16 peak
    gpus_per_node: int
    source: str
    memory_gb: float = 0.0  # HBM per GPU as sold in "GB", which are GiB (GIB below)

    def to_json(self) -> dict:
        """The keys `allreduce-explainer presets --json` has always printed."""
        old = {"link_GBps": "link_gbps", "peer_GBps": "peer_gbps"}
        return {old.get(k, k): v for k, v in asdict(self).items()}


GPUS = [
    GPU(
        "A100 SXM",
        300.0,
        "switch",
        300.0,
        312.0,
        8,
        "NVIDIA A100 datasheet: NVLink 3, 12 links x 25 GB/s = 300 GB/s per direction, 600 "
        "both ways; BF16 312 TFLOP/s dense (624 with sparsity); 80 GB HBM2e (A100 SXM 80GB)",
        memory_gb=80.0,
    ),
    GPU(
        "H100 SXM",
        450.0,
        "switch",
        450.0,
        989.0,
        8,
        "NVIDIA H100 datasheet: NVLink 4, 18 links, 900 GB/s both ways; BF16 1,979 TFLOP/s "
        "with sparsity, 989 dense; 80 GB HBM3",
        memory_gb=80.0,
    ),
    GPU(
        "H200 SXM",
        450.0,
        "switch",
        450.0,
        989.0,
        8,
        "NVIDIA H200 datasheet: NVLink 4, 900 GB/s both ways; BF16 1,979 TFLOP/s with "
        "sparsity, 989 dense (the H100's compute); 141 GB HBM3e",
        memory_gb=141.0,
    ),
    GPU(
        "B200",
        900.0,
        "switch",
        900.0,
        2250.0,
        8,
        "NVIDIA DGX B200 / Blackwell datasheet: NVLink 5, 1.8 TB/s both ways per GPU; BF16 "
        "4.5 PFLOP/s with sparsity, 2.25 dense; 1,440 GB HBM3e per 8 GPUs = 180 GB each",
        memory_gb=180.0,
    ),
    GPU(
        "MI300X",
        448.0,
        "mesh",
        64.0,
        1307.4,
        8,
        "AMD Instinct MI300X datasheet and CDNA 3 white paper: 7 Infinity Fabric links of "
        "128 GB/s both ways (64 per direction) to the 7 peers, 448 GB/s per direction in all; "
        "BF16 1,307.4 TFLOP/s dense; 192 GB HBM3",
        memory_gb=192.0,
    ),
]

# Network cards, one per GPU; Gb/s on the wire / 8 = GB/s per direction.
NETWORKS = [
    {
        "name": "100 Gb/s",
        "GBps": 12.5,
        "source": "InfiniBand EDR / 100 GbE; nccl-tests #29 measures about 12.2 GB/s busbw",
    },
    {
        "name": "200 Gb/s",
        "GBps": 25.0,
        "source": "InfiniBand HDR / 200 GbE (DGX A100: 8 x 200 Gb/s; NCCL #812: 192 GB/s busbw)",
    },
    {
        "name": "400 Gb/s",
        "GBps": 50.0,
        "source": "InfiniBand NDR / ConnectX-7 (DGX H100); 46-49 GB/s measured per card "
        "(nccl-tests #267, #290)",
    },
    {
        "name": "800 Gb/s",
        "GBps": 100.0,
        "source": "InfiniBand XDR / ConnectX-8 (800 Gb/s per port)",
    },
]


H100_SXM = GPUS[1]  # the pages' default GPU
NCCL_GPU = H100_SXM.name  # the GPU of NCCL's model where a page gives no choice (HGX H100 servers)
# The GPUs whose NVSwitch reduces in the network (NVLS, NVLink SHARP): Hopper and newer; NCCL's
# nvlsEfficiency is 0 for Volta and Ampere (src/graph/tuning.cc:139-144).
NVLS_GPUS = (H100_SXM.name, "H200 SXM", "B200")
NIC_400G = NETWORKS[2]  # the pages' default card
NIC_400G_Gbps = 8 * NIC_400G["GBps"]  # its line rate, as sold
# What a 400 Gb/s (NDR) card reaches in all_reduce_perf runs, GB/s per direction: NVIDIA's
# maintainers in nccl-tests #267 and #290 (the source the 400 Gb/s entry above cites)
NIC_400G_MEASURED_GBps = (46, 49)


def find(items: list, name: str, what: str):
    """Case-insensitive exact name, else the one item whose name starts with `name`."""
    key = str(name).strip().lower().replace("_", "-")
    names = {getattr(i, "name", None) or i["name"]: i for i in items}
    norm = {n.lower().replace(" ", "-"): i for n, i in names.items()}
    if key.replace(" ", "-") in norm:
        return norm[key.replace(" ", "-")]
    hits = [i for n, i in norm.items() if n.startswith(key.replace(" ", "-"))]
    if len(hits) == 1:
        return hits[0]
    choices = ", ".join(names)
    if hits:
        raise ParamError(what, f"{name!r} is ambiguous: it could be any of {choices}")
    raise ParamError(what, f"unknown {what} {name!r}: choose one of {choices}")
