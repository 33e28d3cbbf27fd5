"""Training: DDP's buckets, the cluster calculator and the costs of sharded data parallel."""
