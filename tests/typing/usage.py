"""The library as a reader's code calls it, checked by mypy (make test, tests/typing/): each
function's keywords and their types are the spec's, so a misspelt keyword or a wrong type fails
the check before it runs. Not a test module: mypy reads it, pytest runs it in test_mypy.py."""

from __future__ import annotations

from allreduce_explainer import api

ring: dict = api.simulate(algorithm="ring", gpus=8, length=16, dtype="bf16", trace=True)
cost = api.estimate(algorithm="tree", gpus=64, bytes=14e9, gpus_per_node=8, inter_latency=5.0)
bandwidth = api.busbw(gpus=8, bytes=1e9, time_us=5000)
buckets = api.buckets(param_bytes=[4096, 1 << 20], bucket_cap_mb=25)
step = api.ddp(model="gpt2", gpus=512, gpus_per_node=8, sweep=True)
cluster = api.calc(model="llama-3-8b", gpus=64, gpus_per_node=8, gpu="h100", nic_Gbps=400)
shards = api.shard(model="llama3-70b", gpus=256, gpus_per_node=8)
picks = api.nccl_sweep(gpus=16, gpus_per_node=8, sizes="8:1M")
order = api.orders(gpus=4, dtype="bf16", bytes=1 << 20)
choices = api.presets()
seconds: float = cost["time_s"]
