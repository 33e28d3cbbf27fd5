"""The layer's LL and LL128 against NCCL's source: their factor is one server's or across
servers', as NCCL's own ceilings are (tuning.cc:267-275, 335); LL takes no ramp, nor the
ring's LL128, whose chunk NCCL never shrinks, while the tree's LL128 does (enqueue.cc:2286-2294).
Each oracle is the formula computed here from the Parameters and constants typed from the
source."""

from __future__ import annotations

import pytest

from allreduce_explainer import nccl
from allreduce_explainer.nccl import constants as K
from allreduce_explainer.nccl.model import performance_call
from allreduce_explainer.nccl.tuning import tables, terms
from allreduce_explainer.performance import fitted, layer
from allreduce_explainer.performance.layer import Call, Parameters

KiB, MiB = 1 << 10, 1 << 20
HOPPER, INTEL, ONE, TWO = 2, 0, 0, 1  # index1 (tuning.cc:263-271), index2 = nNodes - 1 (267)


def test_nccl_s_own_ll_and_ll128_ceilings_differ_by_the_servers_count():
    """The source the per-scope factor rests on: LL's ceiling llMaxBws[index1][index2] is
    indexed by the generation on one server and by the host's CPU across servers
    (tuning.cc:267-271; the table, 179-182): 141 GB/s for one Hopper server, 39 for two servers
    of Intel hosts; the tree's LL128 keeps 7/9 on one server, 120/128 across (335)."""
    assert (K.LL_MAX_BW_GBPS[HOPPER][ONE], K.LL_MAX_BW_GBPS[INTEL][TWO]) == (141.0, 39.0)
    assert K.TREE_LL128_FACTOR_ONE_NODE == 7 / 9 and K.TREE_LL128_FACTOR_MULTI_NODE == 120 / 128


def test_an_ll128_factor_is_one_server_s_or_across_servers_not_both():
    """A one-server call takes 'Hopper/LL128', a call across servers 'Hopper/LL128-net':
    time = latency + bytes / (1000 x bandwidth x its own factor), no ramp (none fitted here)."""
    p = Parameters({}, 1.0, protocol={"Hopper/LL128": 2.0, "Hopper/LL128-net": 0.5})
    n = MiB
    one = Call("Hopper", "Ring", "LL128", 1, 8, 12, 10.0, 100.0, n)
    two = Call("Hopper", "Tree", "LL128", 2, 16, 8, 10.0, 100.0, n)
    assert layer.time_us(p, one) == pytest.approx(10.0 + n / (1000 * 100.0 * 2.0), rel=1e-12)
    assert layer.time_us(p, two) == pytest.approx(10.0 + n / (1000 * 100.0 * 0.5), rel=1e-12)
    fitted_factors = fitted.PARAMETERS.protocol
    # measured: the trees across servers reach less of NCCL's LL128 figure than one server's rings
    assert fitted_factors["Hopper/LL128-net"] < fitted_factors["Hopper/LL128"]


def _layer_and_terms(s: nccl.System, algorithm: str, protocol: str, n: int):
    e = tables(s)[(algorithm, protocol)]
    lat, bw = terms(s, "AllReduce", algorithm, protocol, e, n)
    call = performance_call(s, algorithm, protocol, lat, bw, n)
    return layer.time_us(fitted.PARAMETERS, call), e, lat, bw, call


def test_the_tree_s_ll128_ramps_and_the_ring_s_does_not():
    """2 x 8 H100, 512 KiB, Tree/LL128: NCCL's own bandwidth carries treeCorrectionFactor
    [LL128][log2i(512 KiB >> 6) = 13] = 0.6 (tuning.cc:625, 639-641), and NCCL halves the tree's
    LL128 chunk for such a call (calcCollChunking, src/enqueue.cc:2286-2294: here 512 KiB over
    its channels gives fewer than (1 + log2i(2) + 0.1 x 8) x 16 / 8 chunks of 32 KiB), so the
    layer ramps it: latency + bytes / (bandwidth x asymptote x LL128 factor x eta(x))."""
    p, n, s = fitted.PARAMETERS, 512 * KiB, nccl.System("H100 SXM", 16, 8, 8, 400.0)
    got, e, lat, bw, call = _layer_and_terms(s, "Tree", "LL128", n)
    assert bw == pytest.approx(e.bw_GBps * 0.6, rel=1e-12)
    ppn, steps = 8, 1 + 1 + 0.1 * 8
    assert n // (call.channels * 32 * KiB) < steps * 16 / ppn  # the chunk is shrunk to 32 KiB
    eta = 1 / (
        1 + (p.ramp_bytes["Hopper/p2p"] / (n / (call.channels * call.ranks))) ** p.ramp_power
    )
    net = p.asymptote["Hopper/p2p-net"] * p.protocol["Hopper/LL128-net"]
    assert eta < 0.9
    assert got == pytest.approx(lat * p.latency["Hopper"] + n / (1000 * bw * net * eta), rel=1e-12)


def test_one_server_s_ring_ramps_simple_and_not_ll128():
    """8 x H100, 8 MiB: the ring's LL128 is latency + bytes over NCCL's bandwidth x the
    asymptote x the LL128 factor (calcCollChunking never shrinks the ring's LL128 chunk); its
    Simple, the same x eta(x) = 1 / (1 + (x0 / x)^k) with x = bytes / (channels x ranks)."""
    p, n, s = fitted.PARAMETERS, 8 * MiB, nccl.System("H100 SXM", 8, 8)
    got, _, lat, bw, call = _layer_and_terms(s, "Ring", "LL128", n)
    want = lat * p.latency["Hopper"] + n / (
        1000 * bw * p.asymptote["Hopper/p2p"] * p.protocol["Hopper/LL128"]
    )
    assert got == pytest.approx(want, rel=1e-12)
    got, _, lat, bw, call = _layer_and_terms(s, "Ring", "Simple", n)
    x = n / (call.channels * call.ranks)
    eta = 1 / (1 + (p.ramp_bytes["Hopper/p2p"] / x) ** p.ramp_power)
    want = lat * p.latency["Hopper"] + n / (1000 * bw * p.asymptote["Hopper/p2p"] * eta)
    assert eta < 0.9 and got == pytest.approx(want, rel=1e-12)
