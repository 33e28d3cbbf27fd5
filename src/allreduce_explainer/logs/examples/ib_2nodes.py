# ruff: noqa: E501, W291
"""two servers of 8 H100s, 8 × 400 Gb/s InfiniBand cards each:
nccl-tests-309-16xh100-2nodes-ib-ndr.txt of tests/data/nccl-tests, copied verbatim. Source:
NVIDIA/nccl-tests#309 ('Acceptable performance of nccl-test on 2 or 4 HGX hosts?'), description
by qoofyk, 2025-05, https://github.com/NVIDIA/nccl-tests/issues/309. What was kept: the
description's second code block from '# nThread' to the '#' after the summary, with the two
OpenMPI help lines that fell among the device lines; the mpirun command and the xpmem warning
above it are left out. Read from a full copy of the thread stored in a public repository (the
issue search here shows the same opening).
"""

SOURCE = {
    "file": "nccl-tests-309-16xh100-2nodes-ib-ndr.txt",
    "source": "NVIDIA/nccl-tests#309 ('Acceptable performance of nccl-test on 2 or 4 HGX hosts?'), description by qoofyk, 2025-05",
    "url": "https://github.com/NVIDIA/nccl-tests/issues/309",
    "where": "the description's second code block from '# nThread' to the '#' after the summary, with the two OpenMPI help lines that fell among the device lines; the mpirun command and the xpmem warning above it are left out. Read from a full copy of the thread stored in a public repository (the issue search here shows the same opening)",
}
LABEL = "two servers of 8 H100s, InfiniBand"
TEXT = """# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
[bm-h100-01:29250] 15 more processes have sent help message help-btl-vader.txt / xpmem-make-failed
[bm-h100-01:29250] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages
#  Rank  0 Group  0 Pid  29262 on bm-h100-01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  29263 on bm-h100-01 device  1 [0000:3b:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  29264 on bm-h100-01 device  2 [0000:4c:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  29265 on bm-h100-01 device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid  29266 on bm-h100-01 device  4 [0000:9b:00] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid  29267 on bm-h100-01 device  5 [0000:bb:00] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid  29268 on bm-h100-01 device  6 [0000:cb:00] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid  29269 on bm-h100-01 device  7 [0000:db:00] NVIDIA H100 80GB HBM3
#  Rank  8 Group  0 Pid  26633 on bm-h100-02 device  0 [0000:19:00] NVIDIA H100 80GB HBM3
#  Rank  9 Group  0 Pid  26634 on bm-h100-02 device  1 [0000:3b:00] NVIDIA H100 80GB HBM3
#  Rank 10 Group  0 Pid  26635 on bm-h100-02 device  2 [0000:4c:00] NVIDIA H100 80GB HBM3
#  Rank 11 Group  0 Pid  26636 on bm-h100-02 device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#  Rank 12 Group  0 Pid  26637 on bm-h100-02 device  4 [0000:9b:00] NVIDIA H100 80GB HBM3
#  Rank 13 Group  0 Pid  26638 on bm-h100-02 device  5 [0000:bb:00] NVIDIA H100 80GB HBM3
#  Rank 14 Group  0 Pid  26639 on bm-h100-02 device  6 [0000:cb:00] NVIDIA H100 80GB HBM3
#  Rank 15 Group  0 Pid  26640 on bm-h100-02 device  7 [0000:db:00] NVIDIA H100 80GB HBM3
NCCL version 2.26.2+cuda12.8
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    68.52    0.00    0.00      0    24.70    0.00    0.00      0
          16             4     float     sum      -1    24.96    0.00    0.00      0    24.93    0.00    0.00      0
          32             8     float     sum      -1    24.93    0.00    0.00      0    25.02    0.00    0.00      0
          64            16     float     sum      -1    25.29    0.00    0.00      0    25.21    0.00    0.00      0
         128            32     float     sum      -1    25.68    0.00    0.01      0    25.62    0.00    0.01      0
         256            64     float     sum      -1    94.40    0.00    0.01      0    25.90    0.01    0.02      0
         512           128     float     sum      -1    32.35    0.02    0.03      0    26.31    0.02    0.04      0
        1024           256     float     sum      -1    29.75    0.03    0.06      0    26.65    0.04    0.07      0
        2048           512     float     sum      -1    28.19    0.07    0.14      0    28.22    0.07    0.14      0
        4096          1024     float     sum      -1    30.24    0.14    0.25      0    29.72    0.14    0.26      0
        8192          2048     float     sum      -1    32.12    0.26    0.48      0    31.67    0.26    0.48      0
       16384          4096     float     sum      -1    32.74    0.50    0.94      0    32.24    0.51    0.95      0
       32768          8192     float     sum      -1    34.10    0.96    1.80      0    33.47    0.98    1.84      0
       65536         16384     float     sum      -1    33.84    1.94    3.63      0    33.08    1.98    3.71      0
      131072         32768     float     sum      -1    38.77    3.38    6.34      0    38.12    3.44    6.45      0
      262144         65536     float     sum      -1    48.67    5.39   10.10      0    46.79    5.60   10.50      0
      524288        131072     float     sum      -1    77.69    6.75   12.65      0    70.33    7.46   13.98      0
     1048576        262144     float     sum      -1    71.93   14.58   27.33      0    71.47   14.67   27.51      0
     2097152        524288     float     sum      -1    76.24   27.51   51.58      0    76.62   27.37   51.32      0
     4194304       1048576     float     sum      -1    94.38   44.44   83.33      0    94.22   44.52   83.47      0
     8388608       2097152     float     sum      -1    132.6   63.24  118.57      0    131.4   63.85  119.72      0
    16777216       4194304     float     sum      -1    185.4   90.49  169.67      0    183.8   91.29  171.16      0
    33554432       8388608     float     sum      -1    267.9  125.23  234.81      0    267.7  125.34  235.02      0
    67108864      16777216     float     sum      -1    466.1  143.99  269.98      0    466.3  143.91  269.83      0
   134217728      33554432     float     sum      -1    748.3  179.35  336.29      0    749.2  179.14  335.88      0
   268435456      67108864     float     sum      -1   1282.8  209.26  392.35      0   1276.0  210.37  394.44      0
   536870912     134217728     float     sum      -1   2357.6  227.72  426.97      0   2355.1  227.96  427.43      0
  1073741824     268435456     float     sum      -1   4484.9  239.41  448.90      0   4470.2  240.20  450.37      0
  2147483648     536870912     float     sum      -1   8729.8  245.99  461.24      0   8717.2  246.35  461.91      0
  4294967296    1073741824     float     sum      -1    17262  248.81  466.52      0    17284  248.49  465.91      0
  8589934592    2147483648     float     sum      -1    34381  249.84  468.46      0    34365  249.96  468.67      0
 17179869184    4294967296     float     sum      -1    68652  250.24  469.21      0    68668  250.19  469.10      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 139.56
#
"""
