# ruff: noqa: E501, W291
"""two servers of 8 H100s with NCCL_DEBUG=INFO, NCCL_ALGO=RING:
nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt of tests/data/nccl-debug, copied verbatim. Source:
NVIDIA/nccl-tests#319 ('nccl-test performance with doca on 2 or 4 HGX hosts is not good'), the log in tigerliao1019's comment of 2025-06-16, run with NCCL_ALGO=RING, https://github.com/NVIDIA/nccl-tests/issues/319. What was kept: 88 of that log's lines, each verbatim and in its order: the header and '#  Rank' lines; rank 0's version, plugin, cards, network, comm, NVLS, first two ring, trees, NCCL_ALGO, algorithm matrix (with the blank line closing it) and channel-count lines; one network connection line for each of the 8 devices and rank 0's 'Connected all rings'; the results table.
"""

SOURCE = {
    "file": "nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt",
    "source": "NVIDIA/nccl-tests#319 ('nccl-test performance with doca on 2 or 4 HGX hosts is not good'), the log in tigerliao1019's comment of 2025-06-16, run with NCCL_ALGO=RING",
    "url": "https://github.com/NVIDIA/nccl-tests/issues/319",
    "where": "88 of that log's lines, each verbatim and in its order: the header and '#  Rank' lines; rank 0's version, plugin, cards, network, comm, NVLS, first two ring, trees, NCCL_ALGO, algorithm matrix (with the blank line closing it) and channel-count lines; one network connection line for each of the 8 devices and rank 0's 'Connected all rings'; the results table",
}
LABEL = "two servers of 8 H100s, with NCCL_DEBUG=INFO (NCCL_ALGO=RING)"
TEXT = """# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 2520136 on     lccn09 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 2520137 on     lccn09 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid 2520138 on     lccn09 device  2 [0000:3a:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid 2520139 on     lccn09 device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid 2520140 on     lccn09 device  4 [0000:84:00] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid 2520143 on     lccn09 device  5 [0000:8b:00] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid 2520145 on     lccn09 device  6 [0000:91:00] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid 2520148 on     lccn09 device  7 [0000:e4:00] NVIDIA H100 80GB HBM3
#  Rank  8 Group  0 Pid 2471267 on     lccn19 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  9 Group  0 Pid 2471268 on     lccn19 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#  Rank 10 Group  0 Pid 2471269 on     lccn19 device  2 [0000:3a:00] NVIDIA H100 80GB HBM3
#  Rank 11 Group  0 Pid 2471270 on     lccn19 device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#  Rank 12 Group  0 Pid 2471271 on     lccn19 device  4 [0000:84:00] NVIDIA H100 80GB HBM3
#  Rank 13 Group  0 Pid 2471272 on     lccn19 device  5 [0000:8b:00] NVIDIA H100 80GB HBM3
#  Rank 14 Group  0 Pid 2471274 on     lccn19 device  6 [0000:91:00] NVIDIA H100 80GB HBM3
#  Rank 15 Group  0 Pid 2471278 on     lccn19 device  7 [0000:e4:00] NVIDIA H100 80GB HBM3
lccn09:2520136:2520136 [0] NCCL INFO NCCL version 2.26.2+cuda12.8
lccn09:2520136:2520234 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)
lccn09:2520136:2520234 [0] NCCL INFO NET/Plugin: Loaded collnet plugin SHARP (v8)
lccn09:2520136:2520234 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_1:1/IB/SHARP [2]mlx5_2:1/IB/SHARP [3]mlx5_4:1/IB/SHARP [4]mlx5_5:1/IB/SHARP [5]mlx5_6:1/IB/SHARP [6]mlx5_7:1/IB/SHARP [7]mlx5_11:1/IB/SHARP [RO]; OOB bond0:192.168.11.9<0>
lccn09:2520136:2520234 [0] NCCL INFO Using network NCCL RDMA Plugin v8
lccn09:2520136:2520234 [0] NCCL INFO ncclCommInitRank comm 0x5c2e9bbbb3f0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0x550eec01d7c8e9ff - Init START
lccn09:2520136:2520234 [0] NCCL INFO NVLS multicast support is available on dev 0
lccn09:2520136:2520234 [0] NCCL INFO comm 0x5c2e9bbbb3f0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0
lccn09:2520136:2520234 [0] NCCL INFO Channel 00/16 :  0  7  6  5  4  3  2  1  9 10 11 12 13 14 15  8
lccn09:2520136:2520234 [0] NCCL INFO Channel 01/16 :  0  8 15 14 13 12 11 10  9  1  2  3  4  5  6  7
lccn09:2520136:2520234 [0] NCCL INFO Trees [0] 1/8/-1->0->-1 [1] -1/-1/-1->0->7 [2] 1/-1/-1->0->7 [3] 1/-1/-1->0->7 [4] 1/-1/-1->0->7 [5] 1/-1/-1->0->7 [6] 1/-1/-1->0->7 [7] 1/-1/-1->0->7 [8] 1/-1/-1->0->8 [9] -1/-1/-1->0->7 [10] 1/-1/-1->0->7 [11] 1/-1/-1->0->7 [12] 1/-1/-1->0->7 [13] 1/-1/-1->0->7 [14] 1/-1/-1->0->7 [15] 1/-1/-1->0->7
lccn09:2520136:2520234 [0] NCCL INFO NCCL_ALGO set by environment to RING
lccn09:2520136:2520234 [0] NCCL INFO Enabled NCCL Func/Proto/Algo Matrix:
     Function |       LL     LL128    Simple   |          Tree           Ring  CollNetDirect   CollNetChain           NVLS       NVLSTree            PAT  
    Broadcast |        1         2         1   |             0              1              0              0              0              0              0  
       Reduce |        1         2         1   |             0              1              0              0              0              0              0  
    AllGather |        1         2         1   |             0              1              0              0              0              0              0  
ReduceScatter |        1         2         1   |             0              1              0              0              0              0              0  
    AllReduce |        1         2         1   |             0              1              0              0              0              0              0  

lccn09:2520136:2520234 [0] NCCL INFO 16 coll channels, 16 collnet channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer
lccn09:2520137:2520336 [1] NCCL INFO Channel 00/0 : 1[1] -> 9[1] [send] via NET/NCCL RDMA Plugin v8/1/GDRDMA
lccn09:2520139:2520335 [3] NCCL INFO Channel 02/0 : 3[3] -> 11[3] [send] via NET/NCCL RDMA Plugin v8/3/GDRDMA
lccn09:2520145:2520339 [6] NCCL INFO Channel 07/0 : 6[6] -> 14[6] [send] via NET/NCCL RDMA Plugin v8/6/GDRDMA
lccn09:2520143:2520338 [5] NCCL INFO Channel 04/0 : 5[5] -> 13[5] [send] via NET/NCCL RDMA Plugin v8/5/GDRDMA
lccn09:2520140:2520337 [4] NCCL INFO Channel 05/0 : 4[4] -> 12[4] [send] via NET/NCCL RDMA Plugin v8/4/GDRDMA
lccn09:2520138:2520334 [2] NCCL INFO Channel 03/0 : 2[2] -> 10[2] [send] via NET/NCCL RDMA Plugin v8/2/GDRDMA
lccn09:2520148:2520333 [7] NCCL INFO Channel 06/0 : 7[7] -> 15[7] [send] via NET/NCCL RDMA Plugin v8/7/GDRDMA
lccn09:2520136:2520332 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/NCCL RDMA Plugin v8/0/GDRDMA
lccn09:2520136:2520332 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
           8             2     float     sum      -1    38.79    0.00    0.00      0    37.04    0.00    0.00      0
          16             4     float     sum      -1    36.92    0.00    0.00      0    37.15    0.00    0.00      0
          32             8     float     sum      -1    38.55    0.00    0.00      0    39.40    0.00    0.00      0
          64            16     float     sum      -1    42.34    0.00    0.00      0    41.99    0.00    0.00      0
         128            32     float     sum      -1    43.91    0.00    0.01      0    43.62    0.00    0.01      0
         256            64     float     sum      -1    45.47    0.01    0.01      0    45.23    0.01    0.01      0
         512           128     float     sum      -1    45.84    0.01    0.02      0    45.59    0.01    0.02      0
        1024           256     float     sum      -1    46.46    0.02    0.04      0    46.13    0.02    0.04      0
        2048           512     float     sum      -1    47.43    0.04    0.08      0    46.76    0.04    0.08      0
        4096          1024     float     sum      -1    47.45    0.09    0.16      0    47.20    0.09    0.16      0
        8192          2048     float     sum      -1    49.07    0.17    0.31      0    48.40    0.17    0.32      0
       16384          4096     float     sum      -1    49.36    0.33    0.62      0    48.94    0.33    0.63      0
       32768          8192     float     sum      -1    51.90    0.63    1.18      0    51.71    0.63    1.19      0
       65536         16384     float     sum      -1    57.35    1.14    2.14      0    57.16    1.15    2.15      0
      131072         32768     float     sum      -1    80.72    1.62    3.04      0    76.54    1.71    3.21      0
      262144         65536     float     sum      -1    87.19    3.01    5.64      0    86.62    3.03    5.67      0
      524288        131072     float     sum      -1    108.8    4.82    9.03      0    123.3    4.25    7.97      0
     1048576        262144     float     sum      -1    177.1    5.92   11.10      0    165.9    6.32   11.85      0
     2097152        524288     float     sum      -1    190.9   10.98   20.60      0    193.0   10.87   20.38      0
     4194304       1048576     float     sum      -1    201.9   20.78   38.96      0    200.0   20.97   39.31      0
     8388608       2097152     float     sum      -1    290.5   28.88   54.15      0    289.8   28.95   54.28      0
    16777216       4194304     float     sum      -1    524.3   32.00   60.00      0    533.8   31.43   58.93      0
    33554432       8388608     float     sum      -1   1543.4   21.74   40.76      0   1542.6   21.75   40.78      0
    67108864      16777216     float     sum      -1   3099.2   21.65   40.60      0   3097.9   21.66   40.62      0
   134217728      33554432     float     sum      -1   5876.9   22.84   42.82      0   5712.6   23.49   44.05      0
   268435456      67108864     float     sum      -1    11435   23.47   44.01      0    11418   23.51   44.08      0
   536870912     134217728     float     sum      -1    22669   23.68   44.41      0    23641   22.71   42.58      0
  1073741824     268435456     float     sum      -1    45390   23.66   44.36      0    45333   23.69   44.41      0
  2147483648     536870912     float     sum      -1    90808   23.65   44.34      0    90719   23.67   44.38      0
  4294967296    1073741824     float     sum      -1   181855   23.62   44.28      0   181450   23.67   44.38      0
  8589934592    2147483648     float     sum      -1   364906   23.54   44.14      0   363363   23.64   44.33      0
 17179869184    4294967296     float     sum      -1   727698   23.61   44.27      0   729105   23.56   44.18      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 20.0176 
#
"""
