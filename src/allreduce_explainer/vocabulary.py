"""The parameters several questions share, declared once: the GPUs, the GPUs per server, the GPU,
the network card, the links inside a server, the latencies, the tokens, the MFU and the model.

Each api function (api.py) narrows them to what it takes, `GPUS.narrow(default=4, hi=1024)`:
the same keyword, kind and unit, a range inside this one's, its own default and help. A page's
widget narrows the api's in turn (params.narrowed). So a quantity has one name, one unit and one
flag on every door; tests/core/test_vocabulary.py fails on a shared name declared anew.
"""

from __future__ import annotations

from . import nccl
from .catalog import hardware, models
from .costs.latency_model import NCCL_NETWORK_HOP_US, NCCL_NVLINK_HOP_US
from .params import POSITIVE, REQUIRED, Param
from .schedules.topology import H100_NVLINK_GBps
from .training import calculator

DEFAULT_GPU = hardware.H100_SXM.name  # the pages' default GPU
MAX_GPUS = 1 << 16  # the closed forms' largest cluster; each question narrows it

GPUS = Param("gpus", REQUIRED, "int", "GPUs", 1, MAX_GPUS, metavar="N")
GPUS_PER_NODE = Param(
    "gpus_per_node", None, "int", "GPUs per server (default: all GPUs in one server)",
    1, MAX_GPUS, optional=True, metavar="G",
)  # fmt: skip
GPU = Param(
    "gpu", DEFAULT_GPU, "name",
    "A100 SXM, H100 SXM, H200 SXM, B200 or MI300X (any case, or a prefix: h100)", metavar="NAME",
)  # fmt: skip

# The network card: one flag, --nic-gbps, in Gb/s as cards are sold, on every command. The
# calculator and NCCL's questions take it as nic_Gbps; the whiteboard model's links as inter_bw
# in GB/s, the model's unit (NIC_GBPS.in_unit), whose flag still reads Gb/s.
NIC_LABEL = (
    f"network card per GPU, on the wire; {hardware.NIC_400G_Gbps:g} Gb/s = "
    f"{hardware.NIC_400G['GBps']:g} GB/s"
)
NIC_GONE = ("--inter-bw", "give the card's rate in Gb/s with --nic-gbps (8 × GB/s)")
NIC_GBPS = Param(
    "nic_Gbps", hardware.NIC_400G_Gbps, "float", NIC_LABEL, POSITIVE, unit="Gb/s",
    flag="--nic-gbps", metavar="R", gone=NIC_GONE,
)  # fmt: skip
INTER_BW = NIC_GBPS.in_unit("inter_bw", "GB/s", 8)
INTRA_BW = Param(
    "intra_bw", H100_NVLINK_GBps, "float",
    "link rate inside a server, per direction; the default is the H100 SXM's NVLink 4",
    POSITIVE, unit="GB/s", metavar="GBPS",
)  # fmt: skip
INTRA_LATENCY = Param(
    "intra_latency", 0.0, "float",
    f"latency per message inside a server; NCCL {nccl.NCCL_VERSION}'s Simple ring charges "
    f"{NCCL_NVLINK_HOP_US:g} per NVLink hop", 0, unit="µs", metavar="US",
)  # fmt: skip
INTER_LATENCY = Param(
    "inter_latency", 0.0, "float",
    f"latency per message between servers; NCCL charges {NCCL_NETWORK_HOP_US:g}",
    0, unit="µs", metavar="US",
)  # fmt: skip

TOKENS_PER_GPU = Param(
    "tokens_per_gpu", calculator.DEFAULT_TOKENS, "float", "tokens per GPU per step, an assumption",
    POSITIVE, 1e9, metavar="T",
)  # fmt: skip
MFU = Param(
    "mfu", calculator.DEFAULT_MFU, "float",
    "share of peak FLOP/s achieved, an assumption; Llama 3 reached 0.38-0.43", POSITIVE,
    calculator.MAX_MFU, metavar="U",
)  # fmt: skip
MODEL = Param(
    "model", REQUIRED, "name",
    f"one of {', '.join(models.MODELS)}; any case or spelling (llama-3-8b), or an unambiguous "
    "prefix", metavar="NAME",
)  # fmt: skip

SHARED = (
    GPUS, GPUS_PER_NODE, GPU, NIC_GBPS, INTER_BW, INTRA_BW, INTRA_LATENCY, INTER_LATENCY,
    TOKENS_PER_GPU, MFU, MODEL,
)  # fmt: skip
