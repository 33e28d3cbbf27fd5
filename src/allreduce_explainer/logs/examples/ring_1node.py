# ruff: noqa: E501, W291
"""one server of 8 H100s, ring forced (NCCL_ALGO=RING): together-8xh100-1node-ring.txt of
tests/data/nccl-tests, copied verbatim. Source: togethercomputer/together-nccl-tests,
benchmarks/H100/results/20260305_220043/all_reduce_ring.out,
https://github.com/togethercomputer/together-nccl-tests/blob/6698e53c1dc519f8ab54f72193630849f5abf178/benchmarks/H100/results/20260305_220043/all_reduce_ring.out.
What was kept: the whole file, as published.
"""

SOURCE = {
    "file": "together-8xh100-1node-ring.txt",
    "source": "togethercomputer/together-nccl-tests, benchmarks/H100/results/20260305_220043/all_reduce_ring.out",
    "url": "https://github.com/togethercomputer/together-nccl-tests/blob/6698e53c1dc519f8ab54f72193630849f5abf178/benchmarks/H100/results/20260305_220043/all_reduce_ring.out",
    "where": "the whole file, as published",
}
LABEL = "one server of 8 H100s, ring forced"
TEXT = """# nccl-tests version 2.17.9 nccl-headers=22602 nccl-library=22602
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  0 [0000:29:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  1 [0000:2f:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  2 [0000:35:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  3 [0000:3b:00] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  4 [0000:43:00] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  5 [0000:49:00] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  6 [0000:4f:00] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid 1583223 on gpu-dp-2jvzl-pqq7p device  7 [0000:55:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
           8             2     float     sum      -1    34.98    0.00    0.00       0    34.52    0.00    0.00       0
          16             4     float     sum      -1    35.08    0.00    0.00       0    35.17    0.00    0.00       0
          32             8     float     sum      -1    35.10    0.00    0.00       0    34.90    0.00    0.00       0
          64            16     float     sum      -1    34.86    0.00    0.00       0    34.64    0.00    0.00       0
         128            32     float     sum      -1    34.79    0.00    0.01       0    35.09    0.00    0.01       0
         256            64     float     sum      -1    35.62    0.01    0.01       0    36.26    0.01    0.01       0
         512           128     float     sum      -1    38.27    0.01    0.02       0    39.58    0.01    0.02       0
        1024           256     float     sum      -1    39.20    0.03    0.05       0    35.41    0.03    0.05       0
        2048           512     float     sum      -1    36.47    0.06    0.10       0    35.65    0.06    0.10       0
        4096          1024     float     sum      -1    36.81    0.11    0.19       0    36.44    0.11    0.20       0
        8192          2048     float     sum      -1    35.53    0.23    0.40       0    35.38    0.23    0.41       0
       16384          4096     float     sum      -1    35.69    0.46    0.80       0    35.91    0.46    0.80       0
       32768          8192     float     sum      -1    35.15    0.93    1.63       0    37.58    0.87    1.53       0
       65536         16384     float     sum      -1    35.76    1.83    3.21       0    36.32    1.80    3.16       0
      131072         32768     float     sum      -1    37.29    3.51    6.15       0    36.68    3.57    6.25       0
      262144         65536     float     sum      -1    37.95    6.91   12.09       0    37.18    7.05   12.34       0
      524288        131072     float     sum      -1    69.21    7.58   13.26       0    44.23   11.85   20.74       0
     1048576        262144     float     sum      -1    46.52   22.54   39.44       0    46.44   22.58   39.51       0
     2097152        524288     float     sum      -1    42.06   49.86   87.26       0    42.95   48.82   85.44       0
     4194304       1048576     float     sum      -1    53.09   79.01  138.26       0    56.67   74.02  129.53       0
     8388608       2097152     float     sum      -1    80.49  104.23  182.39       0    79.37  105.68  184.95       0
    16777216       4194304     float     sum      -1   126.62  132.50  231.88       0   123.25  136.12  238.22       0
    33554432       8388608     float     sum      -1   213.96  156.83  274.45       0   213.89  156.87  274.53       0
    67108864      16777216     float     sum      -1   368.67  182.03  318.55       0   368.10  182.31  319.05       0
   134217728      33554432     float     sum      -1   702.55  191.04  334.33       0   697.91  192.32  336.55       0
   268435456      67108864     float     sum      -1  1351.28  198.65  347.64       0  1350.92  198.71  347.74       0
   536870912     134217728     float     sum      -1  2641.67  203.23  355.65       0  2639.99  203.36  355.88       0
  1073741824     268435456     float     sum      -1  5218.59  205.75  360.07       0  5212.62  205.99  360.48       0
  2147483648     536870912     float     sum      -1  10329.0  207.91  363.84       0  10323.2  208.02  364.04       0
  4294967296    1073741824     float     sum      -1  20495.8  209.55  366.72       0  20504.2  209.47  366.57       0
  8589934592    2147483648     float     sum      -1  40838.9  210.34  368.09       0  40780.5  210.64  368.62       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 122.955 
#
# Collective test concluded: all_reduce_perf
#

"""
