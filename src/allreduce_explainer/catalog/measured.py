"""Published all_reduce_perf runs, as measured: bus bandwidth against size, each with its source;
and the busbw figures quoted from NCCL's issues that the pages hold models against.

The runs are data, in measured.json beside this module (each with its system, label, citation and
log file; read by the package's loader, once, on import, so the site's snapshot holds them, as
logs/examples/ says). Their rows are the out-of-place (size in bytes, busbw in GB/s) columns,
copied as printed from the logs kept in tests/data/nccl-tests/ (SOURCES.json there says what each
file is); tests/widgets/test_busbw_curve.py reads the files back and checks every row. Rows below
1 KiB, which print a busbw of 0.00 to 0.01, are left out. The busbw page draws them beside NCCL's
model.
"""

from __future__ import annotations

import json
import pkgutil
from dataclasses import dataclass

# The ~370 GB/s busbw an 8-GPU H100 server reaches over NVLink with the ring (NCCL_ALGO=RING),
# which NCCL's maintainers give as the effective NVLink rate (NVIDIA/nccl-tests#212).
H100_RING_BUSBW = 370.0
# A rule of thumb, not a measurement: on a message of 1 GiB or more a healthy run across servers
# reaches at least this share of its cards' yardstick (card_yardstick_GBps; NDR cards reach 46-49
# of 50 GB/s, nccl-tests #267 and #290); below it, something in the cluster is wrong. Page 10's
# rule (its cluster_rule_* facts) and the judge_busbw exercise both use it.
HEALTHY_SHARE = 0.8
# The two-server cluster of NVIDIA/nccl-tests#309 (CURVES' "h100-2x8") run on 4 servers, 32 H100:
# busbw 365.84 GB/s at 16 GiB (tests/data/nccl-tests/nccl-tests-309-32xh100-4nodes-ib-ndr.txt), as
# page 4 quotes it.
H100_4X8_BUSBW_GBPS = 365.84
# An A100's twelve NVLinks as a maintainer counts them for NCCL, 240 GB/s, of which other limits on
# the GPU leave about 230 (NVIDIA/nccl-tests#149, sjeaugey), as page 5 quotes it.
A100_NVLINK_NCCL_GBPS = 240.0


def card_yardstick_GBps(gpus_per_node: int, nic_GBps: float) -> float:
    """Page 10's yardstick for busbw across servers: a server's cards times one card's rate,
    the most a ring reaches when every GPU has its own card and NVLink is faster than the card."""
    return gpus_per_node * nic_GBps


# Measured all_reduce_perf bus bandwidth on one 8 x H100 SXM server, GB/s, by GPU count, with
# NCCL_ALGO=Ring ("about 365-370" for 2 to 8 GPUs) and NCCL_ALGO=NVLS (about 365-370 up to 4 GPUs,
# then 420, 440, 460, 480): NVIDIA/nccl issue 1455. The same 370 -> 480 at 8 GPUs, algbw 211 -> 275:
# NVIDIA/nccl issue 2140; 368.76 with NVLS disabled: NVIDIA/nccl-tests issue 309.
MEASURED_H100_BUSBW_GBPS = {
    "ring": {n: 370.0 for n in range(2, 9)},
    "nvls": {2: 370.0, 3: 370.0, 4: 370.0, 5: 420.0, 6: 440.0, 7: 460.0, 8: 480.0},
}


@dataclass(frozen=True)
class Curve:
    """One run: the system it ran on (as NCCL's model takes it), how NCCL chose, its rows."""

    key: str
    gpu: str
    gpus: int
    gpus_per_node: int
    nic_Gbps: float  # 0: one server, no card in the path
    algorithm: str  # "nccl" (NCCL's choice) or "Ring" (NCCL_ALGO=RING)
    rows: tuple[tuple[int, float], ...]
    label: str
    source: str
    file: str  # its log in tests/data/nccl-tests/

    @property
    def cited(self) -> str:
        """The run's citation, short: its repository and issue ("NVIDIA/nccl-tests#290"), so
        a page that quotes its figure says which of the cited runs it means."""
        return self.source.split(",")[0].split(" (")[0]


def _curves() -> tuple[Curve, ...]:
    """measured.json's runs, their rows as tuples (a Curve is hashable and frozen)."""
    table = json.loads(pkgutil.get_data(__package__, "measured.json").decode("utf-8"))
    return tuple(Curve(**c | {"rows": tuple(map(tuple, c["rows"]))}) for c in table)


CURVES = _curves()  # measured.json's runs, in its order


def find(gpu: str, gpus: int, gpus_per_node: int, nic_Gbps: float, algorithm: str):
    """The published run made on this system with this choice of algorithm, or None."""
    for c in CURVES:
        same_net = c.gpus == c.gpus_per_node or c.nic_Gbps == nic_Gbps
        same = (c.gpu, c.gpus, c.gpus_per_node, c.algorithm) == (
            gpu,
            gpus,
            gpus_per_node,
            algorithm,
        )
        if same and same_net:
            return c
    return None
