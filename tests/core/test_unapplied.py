"""A parameter a call cannot apply is refused, naming it, never ignored: an unknown keyword on
every api function, and each parameter that another makes moot (a seed beside given values, a
custom GPU's figure for a preset GPU, a latency NCCL's timing does not use, a card or a CPU
with every GPU in one server)."""

from __future__ import annotations

import pytest

from allreduce_explainer import api
from allreduce_explainer.errors import ParamError
from helpers import field_of

PUBLIC = {n: f for n, f in vars(api).items() if callable(f) and hasattr(f, "spec")}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_an_unknown_keyword_is_refused_by_name(name):
    with pytest.raises(ParamError) as e:
        PUBLIC[name](gpus_per_nod=8)
    assert e.value.field == "gpus_per_nod"
    assert e.value.message.startswith(f"is not a parameter of {name}()")


VALUES = [[1, 2], [3, 4], [5, 6], [7, 8]]

# (function, its arguments, the field refused): each runs when the field is left at its default
MOOT = [
    (api.simulate, dict(algorithm="ring", gpus=4, values=VALUES, seed=3), "seed"),
    (api.simulate, dict(algorithm="ring", gpus=4, inter_latency=5.0), "inter_latency"),
    (api.simulate, dict(algorithm="tree", gpus=4, order=[0, 1, 2, 3]), "order"),
    (api.estimate, dict(algorithm="ring", gpus=8, bytes=1e9, inter_bw=25.0), "inter_bw"),
    (api.orders, dict(gpus=4, values=VALUES, seed=3), "seed"),
    (api.orders, dict(gpus=4, values=VALUES, kind="wide"), "kind"),
    (api.orders, dict(gpus=4, values=VALUES, length=3), "length"),
    (api.shard, dict(model="gpt2", gpus=16, gpus_per_node=8, inter_latency_us=5.0),
     "inter_latency_us"),
    (api.shard, dict(model="gpt2", gpus=8, gpus_per_node=8, nic_Gbps=200.0), "nic_Gbps"),
    (api.calc, dict(model="gpt2", gpus=16, peak_tflops=500.0), "peak_tflops"),
    (api.calc, dict(model="gpt2", gpus=16, memory_gb=40.0), "memory_gb"),
    (api.calc, dict(model="gpt2", gpus=8, gpus_per_node=8, inter_latency_us=5.0),
     "inter_latency_us"),
    (api.ddp, dict(model="gpt2", gpus=8, gpus_per_node=8, inter_bw=25.0), "inter_bw"),
    (api.ddp, dict(model="gpt2", gpus=16, gpus_per_node=8, intra_bw=100.0), "intra_bw"),
    (api.ddp, dict(model="gpt2", gpus=16, gpus_per_node=8, timing="lock-step",
                   peak_tflops=500.0, gpu="A100 SXM"), "gpu"),
    (api.nccl_sweep, dict(gpus=8, bytes="1M", cpu="amd"), "cpu"),
]  # fmt: skip


@pytest.mark.parametrize(
    "function, args, field", MOOT, ids=[f"{m[0].__name__}-{m[2]}" for m in MOOT]
)
def test_a_parameter_the_call_cannot_apply_is_refused_by_name(function, args, field):
    assert field_of(function, **args) == field
    function(**{k: v for k, v in args.items() if k != field})  # without it, the call runs


@pytest.mark.parametrize(
    "function, args",
    [
        (api.simulate, dict(algorithm="ring", gpus=4, values=VALUES, length=2)),
        (api.orders, dict(gpus=4, values=VALUES, length=2)),
        (api.calc, dict(model="gpt2", gpus=16, gpu="custom", algorithm="ring",
                        peak_tflops=500.0, link_GBps=400.0, memory_gb=80.0)),
        (api.ddp, dict(model="gpt2", gpus=16, gpus_per_node=8, inter_bw=25.0)),
        (api.ddp, dict(model="gpt2", gpus=16, gpus_per_node=8, timing="lock-step",
                       peak_tflops=500.0)),
        (api.nccl_sweep, dict(gpus=16, bytes="1M", cpu="amd")),
    ],
)  # fmt: skip
def test_a_parameter_that_applies_is_taken(function, args):
    function(**args)


def test_the_custom_figures_change_the_answer_only_for_a_custom_gpu():
    mine = dict(
        model="gpt2", gpus=16, gpu="custom", algorithm="ring", link_GBps=450.0, memory_gb=80.0
    )
    slow, fast = (api.calc(**mine, peak_tflops=t)["compute_s"] for t in (100.0, 1000.0))
    assert slow == pytest.approx(10 * fast)


@pytest.mark.parametrize(
    "args, field",
    [
        (dict(algorithm="ring", gpus=8, bytes=1e9, chunks=4), "chunks"),
    ],
)
def test_estimate_refuses_chunks_but_for_the_tree(args, field):
    assert field_of(api.estimate, **args) == field
    api.estimate(**(args | {"algorithm": "tree"}))


@pytest.mark.parametrize(
    "args, field",
    [
        (dict(algorithm="ring", nccl_version="2.31.0a7"), "nccl_version"),
        (dict(algorithm="tree", gpus_per_process=8), "gpus_per_process"),
        (dict(gpus=8, gpus_per_node=8, nic_Gbps=200.0), "nic_Gbps"),
    ],
)
def test_calc_refuses_what_its_algorithm_or_cluster_cannot_use(args, field):
    base = dict(model="gpt2", gpus=16, gpus_per_node=8)
    assert field_of(api.calc, **(base | args)) == field
    api.calc(**(base | args | {"algorithm": "nccl", "gpus": 16}))  # where it applies, it runs
