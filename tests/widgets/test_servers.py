"""Stage 6: bytes over the network counted from the messages equal the formulas; sums exact."""

import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api, fmt, nccl
from allreduce_explainer.errors import ParamError
from allreduce_explainer.simulation.simulate import count_bytes
from allreduce_explainer.widgets import WIDGETS
from allreduce_explainer.widgets import servers as S
from helpers import examples


def formulas(method, nodes, g, s):
    """Total between servers, per server, per card, and lock-step network steps."""
    n = nodes * g
    if method == "hierarchical":
        card = 2 * (nodes - 1) / nodes * s / g
        return 2 * (nodes - 1) * s, g * card, card, 2 * (nodes - 1)
    ring_bytes = 2 * (n - 1) / n * s
    card = ring_bytes if method == "ring" else ring_bytes / g
    return nodes * ring_bytes, ring_bytes, card, 2 * (n - 1)


CASES = [(2, 1), (2, 2), (2, 4), (3, 2), (2, 8), (4, 4), (5, 3), (8, 8), (16, 2), (3, 7)]


@pytest.mark.parametrize("method", S.METHODS)
@pytest.mark.parametrize(("nodes", "g"), CASES)
def test_counted_bytes_equal_the_formulas(method, nodes, g):
    s = nodes * g * g * 4  # the counting vector itself: no scaling at all
    c = count_bytes(method, nodes, g, s)
    total, server, card, steps = formulas(method, nodes, g, s)
    r = api.simulate(
        algorithm=method, gpus=nodes * g, gpus_per_node=g, length=nodes * g * g
    )  # the same run, with values
    assert r["matches_target"] and r["identical_on_all_gpus"]
    assert sum(b["inter"] for b in r["bytes_sent_per_gpu_by_link"]) == total
    assert c["total"] == total and c["per_server"] == server and c["per_card"] == card
    assert c["network_steps"] == steps
    assert c["cards_used_per_server"] == (1 if method == "ring" else g)


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(2, 6), st.integers(1, 6), st.floats(1e3, 1e12))
def test_counts_scale_to_any_gradient_size(nodes, g, s):
    for method in S.METHODS:
        c = count_bytes(method, nodes, g, s)
        want = formulas(method, nodes, g, s)
        assert c["total"] == pytest.approx(want[0], rel=1e-12)
        assert c["per_server"] == pytest.approx(want[1], rel=1e-12)
        assert c["per_card"] == pytest.approx(want[2], rel=1e-12)


@pytest.mark.parametrize("method", S.METHODS)
def test_counting_at_64_servers_of_8(method):
    s = 14e9
    c = count_bytes(method, 64, 8, s)
    want = formulas(method, 64, 8, s)
    assert [c["total"], c["per_server"], c["per_card"]] == pytest.approx(want[:3], rel=1e-12)
    assert c["network_steps"] == want[3]


def test_per_card_both_cut_by_g_and_hierarchical_sends_fewer_in_total():
    for nodes, g in [(2, 8), (8, 8), (32, 4)]:
        s = 1e9
        ring = count_bytes("ring", nodes, g, s)
        multi = count_bytes("multi-ring", nodes, g, s)
        hier = count_bytes("hierarchical", nodes, g, s)
        assert ring["per_card"] / multi["per_card"] == pytest.approx(g)
        assert ring["per_card"] / hier["per_card"] > 0.9 * g
        assert hier["total"] < multi["total"] == ring["total"]


@settings(max_examples=examples(25), deadline=None)
@given(
    st.sampled_from(S.METHODS),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 64),
    st.integers(0, 10**6),
)
def test_stepper_ends_exact_on_every_gpu(method, nodes, g, length, seed):
    if nodes * g < 2:
        return
    s = S.servers_stepper(
        {"method": method, "servers": nodes, "gpus_per_node": g, "length": length, "seed": seed}
    )
    assert s["check"]["all_match"] and s["check"]["identical"]
    last = s["frames"][-1]
    assert last["buffers"] == [s["target"]] * (nodes * g)
    assert all(all(row) for row in last["complete"])
    json.dumps(s, allow_nan=False)


def test_stepper_readouts_are_counted_from_the_trace():
    s = S.servers_stepper({"method": "hierarchical", "servers": 2, "gpus_per_node": 4})
    nbytes = s["length"] * 4
    assert s["readouts"]["total"] == f"{2 * 1 * nbytes:,} bytes"  # 2(N-1) S
    assert s["readouts"]["network_steps"] == "2 of 8"
    network_lines = [f for f in s["frames"][1:] if "Network bytes this step" in f["narration"][1]]
    assert len(network_lines) == 2


def test_compare_marks_the_chosen_count_and_names_the_fastest():
    s = S.servers_compare()
    fig = go.Figure(s["figure"])
    assert {t.type for t in fig.data} <= {"scatter", "bar", "pie"}
    assert list(s["figure"]["data"][-1]["x"]) == [8, 8, 8, 8]  # three methods and NCCL's
    assert "one ring per card" in s["readouts"]["verdict"]  # bandwidth only: multi-ring wins
    s = S.servers_compare({"gradient_gb": 0.001, "intra_latency": 3.4, "inter_latency": 14})
    assert "hierarchical" in s["readouts"]["verdict"].split(":")[0]
    assert (
        s["figure"]["layout"]["xaxis"]["range"]
        == S.servers_compare({"servers": 3})["figure"]["layout"]["xaxis"]["range"]
    )


def test_compare_counts_live_up_to_64_servers_of_8():
    s = S.servers_compare({"servers": 64, "gpus_per_node": 8})
    assert s["readouts"]["ring_total"] != "—" and "message by message" in s["readouts"]["counted"]
    assert s["readouts"]["ring_time"] == api_time("ring", 512, 8)


def api_time(method, n, g):

    return fmt.seconds(
        api.estimate(algorithm=method, gpus=n, bytes=14e9, gpus_per_node=g)["time_s"]
    )


@pytest.mark.parametrize(
    ("widget", "params", "field"),
    [
        ("servers_stepper", {"method": "tree"}, "method"),
        ("servers_stepper", {"servers": 5}, "servers"),
        ("servers_stepper", {"gpus_per_node": 0}, "gpus_per_node"),
        ("servers_stepper", {"servers": 1, "gpus_per_node": 1}, "gpus_per_node"),
        ("servers_stepper", {"length": 65}, "length"),
        ("servers_compare", {"servers": 65}, "servers"),
        ("servers_compare", {"gpus_per_node": 9}, "gpus_per_node"),
        ("servers_compare", {"gradient_gb": 0}, "gradient_gb"),
        ("servers_compare", {"nic_gbps": float("inf")}, "nic_gbps"),
        ("servers_compare", {"inter_latency": -1}, "inter_latency"),
        ("servers_compare", {"bogus": 1}, "bogus"),
    ],
)
def test_bad_parameters_name_their_field(widget, params, field):
    fn = WIDGETS[widget]
    with pytest.raises(ParamError) as e:
        fn(params)
    assert e.value.field == field


PAGE = Path(__file__).resolve().parents[2] / "content" / "06-across-servers.md"


@pytest.mark.parametrize(("nodes", "g", "length"), [(2, 4, 16), (3, 3, 11), (2, 8, 19), (4, 2, 5)])
def test_hierarchical_local_rank_p_owns_shard_p_after_the_reduce_scatter(nodes, g, length):
    r = api.simulate(
        algorithm="hierarchical", gpus=nodes * g, gpus_per_node=g, length=length, trace=True
    )
    phases = [s["phase"] for s in r["trace"]]
    inside = phases.index("reduce-scatter across servers")  # steps of the in-server reduce-scatter
    assert inside == g - 1 and set(phases[:inside]) == {"reduce-scatter in each server"}
    held = np.array(r["trace"][inside - 1]["buffers"])
    inputs = np.array(r["inputs"])
    # page 2's chunks: the first L mod g shards one element longer, as numpy splits an array
    shards = np.array_split(np.arange(length), g)
    for k in range(nodes):
        server_sum = inputs[k * g : (k + 1) * g].sum(axis=0)
        for p in range(g):
            owned = shards[p]  # a ring of the server's GPUs in order: NCCL's, GPU p ends with p
            assert (held[k * g + p, owned] == server_sum[owned]).all()
    # and the prose says the same
    text = PAGE.read_text()
    assert "sum of **shard** p (" in text and "mod g" not in text


def test_stepper_first_frame_says_which_shard_each_local_rank_owns():
    s = S.servers_stepper({"method": "hierarchical", "servers": 2, "gpus_per_node": 4})
    first = s["frames"][0]["narration"][0]
    assert "4 shards" in first and "sum of shard p." in first and "mod" not in first
    assert "of the method" not in first


def test_facts_are_computed():
    f = S.facts()
    assert f["srv_card_ratio"] == "8"
    assert f["srv_total_hierarchical"] == "196 GB"  # 2(N-1) S = 14 x 14 GB
    assert (
        f["srv_netsteps_ring"] == "126" and f["srv_netsteps_hierarchical"] == "14"
    )  # 2(n-1), 2(N-1)
    # no lock-step time for a small message: only NCCL's model times it
    assert f["srv_ring_nvlink_hops"] == str(2 * (64 - 1) - 2 * (8 - 1))  # NCCL's ring: the rest
    lockstep = {f"srv_{w}_{m}" for w in ("small", "time2") for m in ("ring", "multiring")}
    assert not lockstep & f.keys()

    pick = nccl.choose("AllReduce", 10**6, nccl.System("H100 SXM", 64, 8, 8, 400))
    assert f["srv_nccl_small"] == fmt.seconds(pick.time_us * 1e-6)
    assert f["srv_nccl_small_pick"] == f"{pick.algorithm}/{pick.protocol}"


def test_compare_shows_nccls_choice_for_the_layout():

    for params in ({}, {"servers": 2, "gpus_per_node": 4, "nic_gbps": 200, "gradient_gb": 0.001}):
        s = S.servers_compare(params)
        p = s["params"]
        n, g = p["servers"] * p["gpus_per_node"], p["gpus_per_node"]
        system = nccl.System("H100 SXM", n, g, g, p["nic_gbps"])
        pick = nccl.choose("AllReduce", round(p["gradient_gb"] * 1e9), system)
        assert s["readouts"]["nccl_time"] == fmt.seconds(pick.time_us * 1e-6)
        assert s["readouts"]["nccl_pick"] == f"{pick.algorithm}/{pick.protocol}"
        line = next(t for t in s["figure"]["data"] if t["name"] == S.NCCL_LABEL)
        for x, y in zip(line["x"], line["y"], strict=True):
            one = nccl.System("H100 SXM", x * g, g, g, p["nic_gbps"])
            want = nccl.choose("AllReduce", round(p["gradient_gb"] * 1e9), one).time_us * 1e-6
            assert y == pytest.approx(want, rel=1e-12)
    one_gpu = S.servers_compare({"servers": 1, "gpus_per_node": 1})
    assert one_gpu["readouts"]["nccl_time"] == "—"
    assert S.servers_compare({"nic_gbps": 8000})["readouts"]["nccl_time"] == "—"


@pytest.mark.parametrize("card_gbit", [400, 100, 3.2])
def test_compare_takes_the_card_in_gbit_and_times_it_in_bytes(card_gbit):
    """Issue 46: the page asks the card as it is sold, in Gb/s (nic_gbps), as the CLI's
    --nic-gbps does; the flat ring's closed form sends 2(n − 1) chunks of S/n through one card
    of R/8 GB/s (8 bits a byte), the network its slowest link and no latency."""
    servers, g, gb = 4, 8, 1.0
    no_latency = {"intra_latency": 0, "inter_latency": 0}
    s = S.servers_compare(
        {"servers": servers, "gpus_per_node": g, "gradient_gb": gb, "nic_gbps": card_gbit}
        | no_latency
    )
    n, card_bytes_per_s = servers * g, card_gbit / 8 * 1e9
    want = 2 * (n - 1) * (gb * 1e9 / n) / card_bytes_per_s
    row = next(r for r in s["table"]["rows"] if r[0] == servers)
    assert float(row[1]) == pytest.approx(want, rel=5e-3)  # printed to 3 figures
    assert f"one {fmt.sig(card_gbit, 3)} Gb/s card per GPU" in s["readouts"]["nccl_note"]
