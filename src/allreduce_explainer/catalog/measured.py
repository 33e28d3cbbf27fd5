"""Published all_reduce_perf runs, as measured: bus bandwidth against size, each with its source;
and the busbw figures quoted from NCCL's issues that the pages hold models against.

The rows are the out-of-place (size in bytes, busbw in GB/s) columns, copied as printed from
the logs kept in tests/data/nccl-tests/ (SOURCES.json there says what each file is);
tests/widgets/test_busbw_curve.py reads the files back and checks every row. Rows below 1 KiB, which
print a busbw of 0.00 to 0.01, are left out. The busbw page draws them beside NCCL's model.
"""

from __future__ import annotations

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


CURVES = (
    Curve(
        "h100-nvls",
        "H100 SXM",
        8,
        8,
        0,
        "nccl",
        ((134217728, 382.99), (268435456, 412.35), (536870912, 431.81), (1073741824, 465.25),
         (2147483648, 468.57), (4294967296, 473.6)),
        "8 × H100, NCCL's choice (NVLink SHARP)",
        "NVIDIA/nccl-tests#290, single-node run; a maintainer: it 'will be using NVLink and "
        "NVLink SHARP', '476GB/s looks to be in the expected range for H100'",
        "nccl-tests-290-8xh100-1node-nvls.txt",
    ),
    Curve(
        "h100-ring",
        "H100 SXM",
        8,
        8,
        0,
        "Ring",
        ((1024, 0.05), (2048, 0.1), (4096, 0.19), (8192, 0.4), (16384, 0.8), (32768, 1.63),
         (65536, 3.21), (131072, 6.15), (262144, 12.09), (524288, 13.26), (1048576, 39.44),
         (2097152, 87.26), (4194304, 138.26), (8388608, 182.39), (16777216, 231.88),
         (33554432, 274.45), (67108864, 318.55), (134217728, 334.33), (268435456, 347.64),
         (536870912, 355.65), (1073741824, 360.07), (2147483648, 363.84), (4294967296, 366.72),
         (8589934592, 368.09)),
        "8 × H100, ring forced",
        "togethercomputer/together-nccl-tests, benchmarks/H100/results/20260305_220043/"
        "all_reduce_ring.out (NCCL 2.26.2, NCCL_ALGO=RING, NCCL_NVLS_ENABLE=0)",
        "together-8xh100-1node-ring.txt",
    ),
    Curve(
        "a100",
        "A100 SXM",
        8,
        8,
        0,
        "nccl",
        ((1048576, 23.29), (2097152, 33.73), (4194304, 55.97), (8388608, 80.04),
         (16777216, 99.99), (33554432, 141.27), (67108864, 178.69), (134217728, 186.91),
         (268435456, 200.85), (536870912, 202.0), (1073741824, 230.84)),
        "8 × A100 40GB, NCCL's choice",
        "AFDWang/Hetu-Galvatron, tests/profiler/test_hardware_profile.py (a saved "
        "all_reduce_perf -b 1M -e 1G -f 2 -g 8 output, 8 A100-SXM4-40GB)",
        "galvatron-8xa100-40gb-1node.txt",
    ),
    Curve(
        "h100-2x8",
        "H100 SXM",
        16,
        8,
        400.0,
        "nccl",
        ((1024, 0.06), (2048, 0.14), (4096, 0.25), (8192, 0.48), (16384, 0.94), (32768, 1.8),
         (65536, 3.63), (131072, 6.34), (262144, 10.1), (524288, 12.65), (1048576, 27.33),
         (2097152, 51.58), (4194304, 83.33), (8388608, 118.57), (16777216, 169.67),
         (33554432, 234.81), (67108864, 269.98), (134217728, 336.29), (268435456, 392.35),
         (536870912, 426.97), (1073741824, 448.9), (2147483648, 461.24), (4294967296, 466.52),
         (8589934592, 468.46), (17179869184, 469.21)),
        "2 servers × 8 H100, 8 × 400 Gb/s InfiniBand each, NCCL's choice",
        "NVIDIA/nccl-tests#309 (Dell XE9680, 8 ConnectX-7 400 Gb/s per server, NCCL 2.26.2); "
        "a maintainer: 'Your numbers look good to me!', multi-node runs use NVLSTree",
        "nccl-tests-309-16xh100-2nodes-ib-ndr.txt",
    ),
)  # fmt: skip


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
