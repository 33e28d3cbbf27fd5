# ruff: noqa: E501, W291
"""one server of 8 H100s, NCCL's choice (NVLink SHARP): nccl-tests-290-8xh100-1node-nvls.txt of
tests/data/nccl-tests, copied verbatim. Source: NVIDIA/nccl-tests#290 ('Single-node and
multi-node performance of H100 nodes.'), description by shahizat, 2025-03-03,
https://github.com/NVIDIA/nccl-tests/issues/290. What was kept: the 'Single node:' code block of
the description, whole; read from a full copy of the thread stored in a public repository (the
issue search here shows the same opening text); the header lines' trailing spaces are as that
copy has them.
"""

SOURCE = {
    "file": "nccl-tests-290-8xh100-1node-nvls.txt",
    "source": "NVIDIA/nccl-tests#290 ('Single-node and multi-node performance of H100 nodes.'), description by shahizat, 2025-03-03",
    "url": "https://github.com/NVIDIA/nccl-tests/issues/290",
    "where": "the 'Single node:' code block of the description, whole; read from a full copy of the thread stored in a public repository (the issue search here shows the same opening text); the header lines' trailing spaces are as that copy has them",
}
LABEL = "one server of 8 H100s, NVLink SHARP"
TEXT = """# nThread 1 nGpus 8 minBytes 134217728 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 2 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 295203 on    node005 device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 295203 on    node005 device  1 [0x6d] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid 295203 on    node005 device  2 [0x97] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid 295203 on    node005 device  3 [0xc0] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid 295203 on    node005 device  4 [0x19] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid 295203 on    node005 device  5 [0x6c] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid 295203 on    node005 device  6 [0x96] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid 295203 on    node005 device  7 [0xc1] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
   134217728      33554432     float     sum      -1    613.3  218.85  382.99      0    614.3  218.48  382.34      0
   268435456      67108864     float     sum      -1   1139.2  235.63  412.35      0   1134.8  236.56  413.97      0
   536870912     134217728     float     sum      -1   2175.8  246.75  431.81      0   2181.4  246.11  430.69      0
  1073741824     268435456     float     sum      -1   4038.8  265.85  465.25      0   4043.6  265.54  464.70      0
  2147483648     536870912     float     sum      -1   8020.3  267.76  468.57      0   8002.1  268.36  469.64      0
  4294967296    1073741824     float     sum      -1    15870  270.63  473.60      0    15773  272.30  476.53      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 439.369
#
"""
