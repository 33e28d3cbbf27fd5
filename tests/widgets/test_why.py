"""Page 1's figures (facts.headline): the single ring beside NCCL's time, which is page 10's
calculator figure, and the running example's memory under plain DDP."""

import re

import pytest

import helpers
from allreduce_explainer import facts, nccl
from allreduce_explainer.widgets import cluster

PAGE_1 = helpers.ROOT / "content" / "01-why-allreduce.md"


def test_nccl_time_is_page_10s_and_nccls_own_choice():
    f = facts.all_facts()
    assert f["nccl_64"] == f["cluster_allreduce"] == cluster.facts()["cluster_allreduce"]
    # the oracle: NCCL's choice on 8 servers of 8 H100s, one 400 Gb/s card per GPU
    pick = nccl.choose("AllReduce", 14e9, nccl.System("H100 SXM", 64, 8, 8, 400))
    assert f["nccl_64"] == f"{pick.time_us * 1e-6:.2g} s"
    ring = 2 * 63 / 64 * 14e9 / 50e9  # the single ring, bound by one card
    assert f["ring_64"] == f"{ring:.2g} s"
    assert f["ring_over_nccl_64"] == f"{ring / (pick.time_us * 1e-6):.0f}"


def test_the_running_example_does_not_fit_under_plain_ddp():
    f = facts.headline()
    need = (2 + 2 + 12) * 7e9  # BF16 weights and gradients, FP32 master weights and moments
    assert f["adam_bytes_per_param"] == "16"
    assert f["ddp_memory_7b"] == f"{need / 2**30:.0f} GiB" == "104 GiB"
    assert f["ddp_memory_7b_gb"] == f"{need / 1e9:.0f} GB"
    assert need > 80 * 2**30 and f["h100_memory"] == "80 GiB"


def test_page_1_quotes_them_and_teaches_no_formula_before_the_ring():
    text = PAGE_1.read_text()
    for name in ("nccl_64", "ring_64", "ddp_memory_7b", "ddp_memory_7b_gb", "h100_memory"):
        assert f"{{{{ f.{name} }}}}" in text
    assert 'stage("across-servers", "page") }} shows why' in text
    assert 'stage("sharded-data-parallel", "page")' in text
    # the ring's byte formula waits for the next two pages
    assert not re.search(r"\\frac\{2\(n-1\)\}\{n\}", text)
    assert "dist.all_reduce(t, op=dist.ReduceOp.SUM)" in text
    assert 'init_process_group("nccl")' in text


@pytest.mark.parametrize("name", ["multiring_64", "naive_64_all_nic", "ring_64_bytes_per_gpu"])
def test_dropped_figures_are_gone(name):
    assert name not in facts.headline()
    assert f"f.{name}" not in "".join(
        p.read_text() for p in (helpers.ROOT / "content").glob("*.md")
    )
