"""The sharded-data-parallel page's widgets against the core they wrap: the shard stepper's
check through the widget, the memory chart against shardcost and NCCL's model."""

import contextlib
import io
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import api, nccl
from allreduce_explainer.catalog import hardware
from allreduce_explainer.errors import ParamError
from allreduce_explainer.simulation import shard as shard_sim
from allreduce_explainer.training import calculator, memory, shardcost
from allreduce_explainer.widgets import WIDGETS, shards
from helpers import examples, field_of

# ---- the shard stepper ----


@st.composite
def int_grads(draw):
    n = draw(st.integers(2, 16))
    length = draw(st.integers(1, 24))
    row = st.lists(st.integers(-1000, 1000), min_size=length, max_size=length)
    return draw(st.lists(row, min_size=n, max_size=n)), draw(st.integers(0, 20))


@settings(max_examples=examples(50), deadline=None)
@given(int_grads())
def test_shard_stepper_ends_with_ddps_params_on_every_gpu_exactly(case):
    grads, lr = case
    n = len(grads)
    s = WIDGETS["shard_stepper"]({"gpus": n, "values": grads, "lr": lr})
    start = api.shard_step(gpus=n, grads=grads, lr=lr)["params"]
    expected = (np.array(start, np.int64) - lr * np.array(grads, np.int64).sum(axis=0)).tolist()
    assert s["frames"][-1]["buffers"] == [expected] * n
    assert s["target"] == expected
    assert s["check"]["all_match"] and all(all(row) for row in s["check"]["matches"])
    assert "exactly" in s["frames"][-1]["narration"][-1]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"dtype": "fp32", "gpus": 5, "length": 13},
        {"dtype": "bf16", "optimizer": "adam", "lr": 0.01},
        {"dtype": "fp32", "optimizer": "adam", "gpus": 7},
    ],
)
def test_shard_stepper_is_the_core_run(params):
    s = shards.shard_stepper(params)
    core = api.shard_step(
        gpus=s["gpus"],
        length=s["length"],
        dtype=s["dtype"],
        optimizer=s["params"]["optimizer"],
        lr=s["params"]["lr"],
        seed=s["params"]["seed"],
    )
    assert s["frames"][-1]["buffers"] == core["final_params"]
    assert s["target"] == core["ddp_params"][0]
    assert [f["buffers"] for f in s["frames"]] == [f["buffers"] for f in core["frames"]]
    assert s["check"]["all_match"] is True and s["check"]["verdict"] == core["check"]["verdict"]
    update = next(f for f in s["frames"] if f["phase"] == "update")
    labels = [r["label"] for r in update["rows"]]
    if s["params"]["optimizer"] == "adam":
        assert any("Adam m" in x for x in labels) and any("Adam v" in x for x in labels)
        m_row = next(r for r in update["rows"] if r["label"].startswith("Adam m"))
        core_update = next(f for f in core["frames"] if f["phase"] == "update")
        for st_ in core_update["optimizer_state"]:
            assert m_row["values"][st_["start"] : st_["stop"]] == st_["m"]
    sent = core["bytes_sent_per_gpu"]
    assert sent["total"] == sent["ddp_allreduce"]  # ZeRO-1/2 send what DDP sends


def test_shard_stepper_tree_reference_says_the_order_differs():
    s = shards.shard_stepper({"dtype": "fp32", "reference": "tree", "length": 16, "gpus": 4})
    core = api.shard_step(gpus=4, length=16, dtype="fp32", reference="tree")
    assert s["check"]["all_match"] == core["check"]["all_equal"]
    assert s["check"]["rows"][0]["values"][0] != ""


def test_shard_stepper_bytes_are_the_ring_formula_for_many_gpu_counts():
    for n in range(2, 17):
        length = 3 * n
        s = shards.shard_stepper({"gpus": n, "length": length})
        item = 4  # int32
        per = (n - 1) * item * length // n
        assert s["readouts"]["reduce_scatter"] == s["readouts"]["all_gather"]
        core = api.shard_step(gpus=n, length=length)["bytes_sent_per_gpu"]
        assert core["reduce_scatter"] == [per] * n and core["all_gather"] == [per] * n


@pytest.mark.parametrize(
    "params, field",
    [
        ({"gpus": 1}, "gpus"),
        ({"optimizer": "adam"}, "optimizer"),
        ({"lr": 0.5}, "lr"),
        ({"reference": "nvls"}, "reference"),
        ({"values": "x"}, "values"),
        ({"typo": 1}, "typo"),
    ],
)
def test_shard_stepper_bad_input_names_the_field(params, field):
    with pytest.raises(ParamError) as e:
        shards.shard_stepper(params)
    assert e.value.field == field


# ---- memory against time ----


def _cluster(p):
    nic = hardware.find(hardware.NETWORKS, p["network"], "network")
    return calculator.cluster_for(
        gpu=p["gpu"], gpus=p["gpus"], gpus_per_node=p["gpus_per_node"], nic_Gbps=nic["GBps"] * 8
    )


@pytest.mark.parametrize(
    "params",
    [{}, {"model": "llama3-70b", "gpus": 128}, {"gpus": 16, "gpus_per_node": 4, "gpu": "A100 SXM"}],
)
def test_shard_memory_points_are_shardcost_with_nccls_times(params):
    s = shards.shard_memory(params)
    p = s["params"]
    c = _cluster(p)
    model = calculator.model_for(p["model"], None)
    out = shardcost.strategies(model, c, p["tokens_per_gpu"], p["mfu"])
    nic = hardware.find(hardware.NETWORKS, p["network"], "network")["GBps"] * 8
    bars = {t["name"]: t for t in s["figure"]["data"] if t["type"] == "bar"}
    assert s["figure"]["layout"]["barmode"] == "stack"
    assert list(bars) == [name for _, name, _ in shards.PARTS]  # bottom to top
    for i, name in enumerate(shardcost.STRATEGIES):
        mem = memory.per_gpu(name, model.params, p["gpus"], p["gpus_per_node"])
        stacked = [bars[label]["y"][i] for _, label, _ in shards.PARTS]
        want = [mem[k] / hardware.GIB for k in ("params", "grads", "optimizer")]
        assert stacked == pytest.approx(want, rel=1e-12)
        assert sum(stacked) == pytest.approx(mem["total"] / hardware.GIB, rel=1e-12)
        assert all(t["x"][i] == shardcost.LABELS[name] for t in bars.values())
        assert out["strategies"][name]["memory_bytes_per_gpu"] == mem
    # ZeRO-3's bytes are 1.5 x DDP's
    assert s["readouts"]["ratio"] == "1.5"
    # every collective of DDP timed by NCCL's own choice for that size and group
    ddp = shards.strategies(p)["strategies"]["ddp"]
    system = nccl.System(p["gpu"], p["gpus"], p["gpus_per_node"], p["gpus_per_node"], nic)
    grad = memory.BYTES_PER_PARAM["grads"] * model.params
    want = nccl.choose("AllReduce", grad, system).time_us * 1e-6
    assert ddp["comm_s"] == pytest.approx(want, rel=1e-12)
    time = s["figures"]["time"]["figure"]
    compute, comm = time["data"]
    assert compute["x"][0] + comm["x"][0] == pytest.approx(ddp["step_s"], rel=1e-12)
    assert comm["x"][0] == ddp["comm_s"]


@pytest.mark.parametrize("params", [{}, {"model": "llama3-405b", "gpus": 1024}])
def test_time_per_step_bars_start_at_zero_and_sum_to_shardcosts_step(params):
    """The time chart is bars from zero (not points on an axis from 2.08 to 2.18 s): compute,
    the same for every strategy, then the communication, together shardcost's step time."""
    s = shards.shard_memory(params)
    p = s["params"]
    model = calculator.model_for(p["model"], None)
    nic = hardware.find(hardware.NETWORKS, p["network"], "network")["GBps"] * 8
    timer = shardcost.nccl_time(p["gpu"], nic)
    out = shardcost.strategies(model, _cluster(p), p["tokens_per_gpu"], p["mfu"], comm_time=timer)
    fig = s["figures"]["time"]["figure"]
    assert fig["layout"]["xaxis"]["range"][0] == 0
    assert fig["layout"]["barmode"] == "stack"
    compute, comm = fig["data"]
    assert compute["y"] == comm["y"] == [shardcost.LABELS[k] for k in shardcost.STRATEGIES]
    for i, k in enumerate(shardcost.STRATEGIES):
        row = out["strategies"][k]
        assert compute["x"][i] == pytest.approx(out["compute_s"], rel=1e-12)
        assert compute["x"][i] + comm["x"][i] == pytest.approx(row["step_s"], rel=1e-12)
    top = max(r["step_s"] for r in out["strategies"].values())
    assert top <= fig["layout"]["xaxis"]["range"][1] < 1.1 * top


def test_shard_memory_ring_model_is_shardcosts_default():
    s = shards.strategies(shards._resolve(shards.validated({"comm_model": "ring"}, shards.MEMORY)))
    p = shards.validated({}, shards.MEMORY)
    c = _cluster(p)
    ref = shardcost.strategies(calculator.model_for("llama3-8b", None), c)
    for name in shardcost.STRATEGIES:
        assert s["strategies"][name]["comm_s"] == ref["strategies"][name]["comm_s"]


def test_shard_memory_fits_against_the_gpus_memory_line():
    s = shards.shard_memory({"model": "llama3-70b"})
    (line,) = s["figure"]["layout"]["shapes"]
    assert line["y0"] == line["y1"] == 80.0  # an "80GB" H100 is 80 GiB
    assert (line["x0"], line["x1"], line["xref"]) == (0, 1, "paper")  # across every bar
    assert s["readouts"]["fits"] == "ZeRO-3 / FSDP"
    totals = [a["text"] for a in s["figure"]["layout"]["annotations"]]
    # the line's name in the legend: written on the line, it ran across the bars on a phone
    assert line["showlegend"] and line["name"].startswith("H100 SXM's memory, 80 GiB")
    # a cross beside the total of each strategy whose bar passes the line
    assert [t.endswith("✗") for t in totals] == [True, True, True, False, True]


def test_shard_memory_bad_input():
    assert field_of(shards.shard_memory, {"gpus": 12}) == "gpus"
    assert field_of(shards.shard_memory, {"gpu": "MI300X"}) == "gpu"


def test_facts_are_computed():
    g = shards.facts()
    assert g["shard_ratio"] == "1.5" and g["shard_big_fits"] == "ZeRO-3 / FSDP"


@pytest.mark.parametrize(
    "params",
    [None, {"tokens_per_gpu": 64}, {"gpus": 16, "tokens_per_gpu": 256}, {"tokens_per_gpu": 1}],
)
def test_the_time_summary_ranks_only_what_differs_at_its_precision(params):
    """T12: ZeRO-1's 0.0864 s against DDP's 0.0866 s both print 2.082 s a step, so neither is
    "the fastest" alone: the summary names every strategy whose step prints the fastest's text
    (at the table's precision), and calls none the fastest when every step prints the same."""
    part = WIDGETS["shard_memory"](params)["figures"]["time"]
    unit = part["table"]["columns"][3].rsplit("(", 1)[1].rstrip(")")  # one unit per column
    printed = {row[0]: f"{row[3]} {unit}" for row in part["table"]["rows"]}
    fast, slow = min(printed.values(), key=_seconds), max(printed.values(), key=_seconds)
    summary = part["summary"]
    if fast == slow:
        assert "fastest" not in summary and f"every strategy takes {fast}" in summary
        return
    named = summary.split("; ", 1)[1].split(" the fastest at ")[0].removesuffix(" is")
    named = set(named.removesuffix(" are").replace(" and ", ", ").split(", "))
    assert named == {s for s, t in printed.items() if t == fast}, summary


def _seconds(text: str) -> float:
    number, unit = text.replace(",", "").split()
    return float(number) * {"s": 1, "ms": 1e-3, "µs": 1e-6}[unit]


@pytest.mark.parametrize("params", [{}, {"gpus": 16}, {"model": "llama3-70b", "gpus": 256}])
def test_overlap_thresholds_are_printed_where_the_collectives_hide(params):
    """Page 8 and the CLI name the tokens from which FSDP's and HSDP's collectives hide: the
    printed figure is past the formula's threshold (T ≥ (m-1)/m · F/B, from the hardest block's
    F and B), and the figure one printed digit lower is not (a threshold rounded down names a
    batch at which the GPUs still wait)."""
    s = shards.shard_memory(params)
    overlap = shards.strategies(s["params"])["overlap"]
    for key, name in (("zero3_tokens", "zero3"), ("hsdp_tokens", "hsdp")):
        o = overlap[name]
        m = o["group_gpus"]
        threshold = (m - 1) / m * o["flops_per_s"] / (o["bus_GBps"] * 1e9)
        text = s["readouts"][key]
        printed = float(text.split(" tokens")[0].replace(",", ""))
        step = 10 ** (len(str(int(printed))) - 3)
        assert printed >= threshold > printed - step, (key, text, threshold)
        line = f"from {math.ceil(threshold):,} tokens per GPU"
        assert line in " ".join(_cli_shard(s["params"]).split()), line


def _cli_shard(p: dict) -> str:
    from allreduce_explainer.cli import main

    argv = ["shard", "--model", p["model"], "--gpus", str(p["gpus"]), "--gpus-per-node",
            str(p["gpus_per_node"])]  # fmt: skip
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def _narrated_owner(narration: str, p: int, n: int) -> int:
    """The chunk the first frame's sentence gives GPU p, read as a reader reads it."""
    m = re.search(r"GPU p will own chunk (p|\(p \+ (\d+)\) mod (\d+)) of the (\d+)", narration)
    if m:
        assert int(m[4]) == n
        return p if m[1] == "p" else (p + int(m[2])) % int(m[3])
    listed = dict(re.findall(r"(\d+) \(GPU (\d+)\)", narration))
    return int({int(g): c for c, g in listed.items()}[p])


@pytest.mark.parametrize("gpus", [2, 3, 4, 8])
def test_shard_stepper_narrates_the_chunks_its_state_owns(gpus):
    """Page 8's first frame says which chunk each GPU will own: the state's `owned`, not p + 1."""
    s = WIDGETS["shard_stepper"]({"gpus": gpus})
    text = s["frames"][0]["narration"][0]
    assert [_narrated_owner(text, p, gpus) for p in range(gpus)] == s["owned"]


@pytest.mark.parametrize("owned", [[1, 2, 3, 0], [0, 2, 1], [2, 0, 1]])
def test_the_owners_sentence_follows_any_owner_list(owned):
    text = shard_sim._owners(owned)
    assert [_narrated_owner(text, p, len(owned)) for p in range(len(owned))] == owned
