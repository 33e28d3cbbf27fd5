"""Model states per GPU (training/memory.py) against the ZeRO paper's formulas written out here
(Rajbhandari et al., "ZeRO", SC 2020: section 3.1 for 2 + 2 + K bytes, section 5 and Figure 1
for the three stages), and the calculator's memory check against the same formulas."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer.catalog import models
from allreduce_explainer.training import calculator, memory
from helpers import examples

K = 12  # ZeRO section 3.1: FP32 master weights, momentum and variance, 4 bytes each


def paper(strategy: str, psi: int, nd: int, g: int) -> float:
    """ZeRO section 5 / Figure 1, and HSDP as ZeRO-3 over the g GPUs of a server."""
    return {
        "ddp": (2 + 2 + K) * psi,
        "zero1": 2 * psi + 2 * psi + K * psi / nd,
        "zero2": 2 * psi + (2 + K) * psi / nd,
        "zero3": (2 + 2 + K) * psi / nd,
        "hsdp": (2 + 2 + K) * psi / g,
    }[strategy]


def test_mixed_precision_adam_keeps_2_2_and_12_bytes_per_parameter():
    assert memory.BYTES_PER_PARAM == {"params": 2, "grads": 2, "optimizer": K}
    assert memory.ADAM_BYTES_PER_PARAM == 16
    assert set(memory.SPLITS) == set(memory.FORMULAS) == set(memory.STRATEGIES)


def test_memory_reproduces_the_papers_figure_1():
    # 7.5B parameters, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB (ZeRO, Figure 1)
    got = [memory.per_gpu(s, 7_500_000_000, 64, 8)["total"] / 1e9 for s in memory.STRATEGIES]
    assert [round(x, 1) for x in got[:4]] == [120.0, 31.4, 16.6, 1.9]


@pytest.mark.parametrize("key", ["gpt2", "gpt2-xl", "mistral-7b", "llama3-8b", "llama3-70b"])
@pytest.mark.parametrize("n, g", [(8, 8), (64, 8), (256, 8), (24, 4)])
def test_memory_matches_the_paper_formulas_on_real_models(key, n, g):
    psi = models.get(key).params
    for s in memory.STRATEGIES:
        m = memory.per_gpu(s, psi, n, g)
        assert m["total"] == m["params"] + m["grads"] + m["optimizer"]
        assert abs(m["total"] - paper(s, psi, n, g)) < 16  # a shard rounds up to whole elements


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(1, 10**13), st.integers(1, 4096), st.sampled_from([1, 2, 4, 8]))
def test_model_states_are_the_formulas_and_whole_shards_at_most_one_element_more(psi, n, g):
    for s in memory.STRATEGIES:
        exact = paper(s, psi, n, g)
        assert memory.model_states(s, psi, n, g) == pytest.approx(exact, rel=1e-15, abs=0)
        padded = memory.per_gpu(s, psi, n, g)["total"]
        assert exact * (1 - 1e-12) <= padded < exact + 16  # under one element more per part


def test_formula_text_computes_the_same_bytes():
    """The text a page prints, read as arithmetic (Ψ, n and g substituted), gives the bytes."""
    for s, text in memory.FORMULAS.items():
        expr = re.sub(r"(?<=[\d)K])Ψ", "*psi", text)
        for psi, nd, g in ((7_500_000_000, 64, 8), (124_439_808, 24, 4), (10**6, 1, 1)):
            got = eval(expr, {}, {"psi": psi, "n": nd, "g": g, "K": K})
            assert got == pytest.approx(paper(s, psi, nd, g), rel=1e-15), s


@pytest.mark.parametrize("gpus, per", [(1, 1), (8, 8), (64, 8), (4096, 8)])
def test_calculators_check_is_ddp_on_every_gpu_and_zero3_over_all(gpus, per):
    psi = models.get("llama3-70b").params
    c = calculator.cluster_for(gpus=gpus, gpus_per_node=per)
    m = calculator.memory(psi, c)
    have = 80 * 2**30  # an H100's "80 GB", which are GiB
    assert m["gpu_bytes"] == have
    assert m["bytes_per_gpu"] == paper("ddp", psi, gpus, per) == 16 * psi
    assert m["sharded_bytes_per_gpu"] == pytest.approx(paper("zero3", psi, gpus, per), rel=1e-15)
    assert m["fits"] is (16 * psi <= have)
    assert m["sharded_fits"] is (16 * psi / gpus <= have)
