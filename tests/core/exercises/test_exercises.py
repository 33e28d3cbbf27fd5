"""Exercises: every kind's answer against an independent computation (numpy, or the formula
written out here), on many seeds; right answers in other units; wrong and malformed answers."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import SEEDS

from allreduce_explainer.costs.cost import tree_chunks
from allreduce_explainer.errors import ParamError
from allreduce_explainer.exercises import KINDS, exercise, sheet
from allreduce_explainer.exercises.units import AnswerError, parse, parse_vector
from allreduce_explainer.schedules.topology import Topology
from allreduce_explainer.simulation import simulate
from helpers import examples, stages

MIB = 2**20
# Figures from the world, written out here so the oracle does not read the core's tables.
NVLINK_GBPS = 450.0  # H100 SXM per direction (NVIDIA datasheet)
NIC_GBPS = 50.0  # a 400 Gb/s card
GPU_LINK = {"A100 SXM": 300.0, "H100 SXM": 450.0, "B200": 900.0}  # NVLink GB/s per direction
GPU_PEAK = {"A100 SXM": 312.0, "H100 SXM": 989.0, "B200": 2250.0}  # dense BF16 TFLOP/s
PUBLISHED = {  # Hugging Face hub parameter counts
    "GPT-2 small": 124_439_808,
    "BERT-base": 109_482_240,
    "GPT-2 XL": 1_557_611_200,
    "Mistral 7B": 7_241_732_096,
    "Llama 3 8B": 8_030_261_248,
    "Llama 3 70B": 70_553_706_496,
    "Llama 3.1 405B": 405_853_388_800,
}


def state(kind, seed, answer=None):
    params = {"kind": kind, "seed": seed}
    if answer is not None:
        params["answer"] = answer
    return exercise(params)


# ---- independent oracles ----------------------------------------------------------------------


def ring_buffers(values, steps):
    """A ring all-reduce in numpy, one element per chunk: the buffers after `steps` steps.

    Step t (from 1) of the reduce-scatter: GPU i sends chunk (i - t + 1) mod n to GPU i + 1,
    which adds it; all-gather step t: GPU i sends chunk (i - t + 2) mod n, which is copied.
    """
    buf = np.array(values, dtype=np.int64)
    n = len(values)
    for t in range(1, steps + 1):
        before = buf.copy()
        for i in range(n):
            if t < n:
                c = (i - t + 1) % n
                buf[(i + 1) % n, c] = before[(i + 1) % n, c] + before[i, c]
            else:
                c = (i - (t - n + 1) + 2) % n
                buf[(i + 1) % n, c] = before[i, c]
    return buf


def ddp_buckets(sizes, cap_mb):
    """DDP's greedy bucketing, written out: last parameter first, close at the limit."""
    first = (1 if cap_mb is None else cap_mb) * MIB
    later = (25 if cap_mb is None else cap_mb) * MIB
    out, cur, size = [], [], 0
    for b in reversed(sizes):
        cur.append(b)
        size += b
        if size >= (later if out else first):
            out.append(size)
            cur, size = [], 0
    if cur:
        out.append(size)
    return out


def ring_time(n, s, rate_GBps, alpha_us=0.0):
    return 2 * (n - 1) * (alpha_us * 1e-6 + s / n / (rate_GBps * 1e9))


def tree_time(g):
    """The tree by message-by-message simulation, not the closed form the exercise calls."""
    n, s = g["gpus"], g["bytes"]
    topo = Topology.make(n, 1, g["gbps"], g["gbps"], g["latency_us"], g["latency_us"])
    return simulate.count("tree", topo, int(s), 1, chunks=tree_chunks(s))["time_s"]


def oracle(kind, g):
    """The answer of `kind` from its drawn numbers `g`, computed here."""
    if kind == "allreduce_sum":
        return np.array(g["values"]).sum(axis=0).tolist()
    if kind in ("naive_time", "ring_time"):
        n, per, s = g["gpus"], g["gpus_per_node"], g["bytes"]
        if kind == "naive_time":
            return 2 * ((per - 1) * s / (NVLINK_GBPS * 1e9) + (n - per) * s / (NIC_GBPS * 1e9))
        return ring_time(n, s, NIC_GBPS if n > per else NVLINK_GBPS)
    if kind == "rs_cell":
        return int(ring_buffers(g["values"], g["step"])[g["gpu"], g["chunk"]])
    if kind == "ag_cell":
        n = len(g["values"])
        return int(ring_buffers(g["values"], n - 1 + g["step"])[g["gpu"], g["chunk"]])
    if kind == "rs_message_bytes":
        return g["bytes"] / g["gpus"]
    if kind == "rs_owner":
        return (g["gpu"] + 1) % g["gpus"]
    if kind == "ring_steps":
        return 2 * (g["gpus"] - 1)
    if kind == "ring_bytes_per_gpu":
        return 2 * (g["gpus"] - 1) / g["gpus"] * g["bytes"]
    if kind in ("line_algbw", "line_busbw"):
        algbw = g["bytes"] / (g["time_us"] * 1e-6)
        return algbw if kind == "line_algbw" else algbw * 2 * (g["gpus"] - 1) / g["gpus"]
    if kind == "naive_root_bytes":
        return (g["gpus"] - 1) * g["bytes"]
    if kind == "ring_latency":
        return ring_time(g["gpus"], g["bytes"], g["gbps"], g["latency_us"])
    if kind in ("faster", "speedup"):
        ring, tr = ring_time(g["gpus"], g["bytes"], g["gbps"], g["latency_us"]), tree_time(g)
        if kind == "faster":
            return "tree" if tr < ring else "ring"
        return max(ring, tr) / min(ring, tr)
    if kind in ("network_bytes", "nic_bytes", "network_steps"):
        nodes, per, s, alg = g["servers"], g["gpus_per_node"], g.get("bytes"), g["algorithm"]
        n = nodes * per
        if kind == "network_steps":
            return 2 * (n - 1) if alg == "ring" else 2 * (nodes - 1)
        card = {
            "ring": 2 * (n - 1) / n * s if s else None,
            "multi-ring": 2 * (n - 1) * s / (per * n) if s else None,
            "hierarchical": 2 * (nodes - 1) * s / (per * nodes) if s else None,
        }[alg]
        if kind == "nic_bytes":
            return card
        return card * (nodes if alg == "ring" else n)
    if kind in ("bucket_count", "first_bucket"):
        b = ddp_buckets([int(m * MIB) for m in g["sizes_mib"]], g["bucket_cap_mb"])
        return len(b) if kind == "bucket_count" else b[0]
    if kind == "gradient_size":
        assert g["params"] in PUBLISHED.values()
        return g["params"] * {"bf16": 2, "fp32": 4}[g["grad_dtype"]]
    if kind == "calc_time":
        n, s = g["gpus"], 2 * g["params"]
        link = GPU_LINK[g["gpu"]]
        return ring_time(n, s, min(link, g["nic_Gbps"] / 8) if n > 8 else link)
    if kind == "compute_time":
        return 6 * g["params"] * g["tokens"] / (GPU_PEAK[g["gpu"]] * 1e12 * g["mfu"])
    raise AssertionError(f"no oracle for {kind}")


def core_answer(kind, seed):
    from allreduce_explainer.exercises import problem

    return problem(kind, seed).answer


SLOW = {"faster", "speedup"}  # the oracle simulates the tree message by message


def test_every_kind_is_on_one_stage_and_a_stage_has_none_or_two_to_four():
    """The pages' `exercises:` lists place the core's kinds: each on exactly one stage."""
    counts = [len(p.exercises) for p in stages()]
    assert all(n == 0 or 2 <= n <= 4 for n in counts) and sum(counts) > 0, counts
    assert sorted(k for p in stages() for k in p.exercises) == sorted(KINDS)


def test_a_default_sheet_asks_the_first_kind_of_every_stage_with_exercises():
    want = [p.exercises[0] for p in stages() if p.exercises]
    assert [p["kind"] for p in sheet()["problems"]] == want


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=examples(30), deadline=None)
@given(seed=SEEDS)
def test_answer_matches_an_independent_computation(kind, seed):
    if kind in SLOW and seed % 3:
        seed //= 3  # fewer distinct slow problems; still many seeds
    s = state(kind, seed)
    want = oracle(kind, s["given"])
    got = core_answer(kind, seed)
    if isinstance(want, (list, str)) or s["tolerance"] == 0:
        assert got == want
    else:
        assert got == pytest.approx(want, rel=1e-9)
    # the worked answer, typed as shown, is accepted; the problem is the same on a second call
    assert state(kind, seed, s["solution_answer"])["feedback"]["correct"], s["solution_answer"]
    assert state(kind, seed) == s
    json.dumps(s, allow_nan=False)


def _scaled(kind, seed, factor):
    s = state(kind, seed)
    return s, core_answer(kind, seed) * factor


@pytest.mark.parametrize("kind", sorted(k for k in KINDS if k not in SLOW))
@settings(max_examples=examples(15), deadline=None)
@given(seed=SEEDS)
def test_wrong_answers_are_refused(kind, seed):
    s = state(kind, seed)
    want = core_answer(kind, seed)
    if s["dimension"] == "vector":
        wrong = list(want)
        wrong[-1] += 1
        answer = "[" + ", ".join(str(v) for v in wrong) + "]"
    elif s["dimension"] == "choice":
        answer = next(c for c in s["choices"] if c != want)
    elif s["tolerance"] == 0:
        answer = str(want + 1)
    else:
        answer = f"{want * 1.3 / _scale(s['unit']):.6g} {s['unit']}"
    fb = state(kind, seed, answer)["feedback"]
    assert fb["correct"] is False and fb["message"]


def _scale(unit_text):
    return parse(f"1 {unit_text}").base(None) if unit_text else 1.0


QUANTITY_KINDS = sorted(
    k for k in KINDS if k not in SLOW and state(k, 0)["dimension"] in ("time", "bytes", "rate")
)
OTHER_UNITS = {
    "time": [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("us", 1e-6), ("ns", 1e-9)],
    "bytes": [
        ("B", 1.0),
        ("bytes", 1.0),
        ("kB", 1e3),
        ("MB", 1e6),
        ("GiB", 2**30),
        ("Gb", 1 / 8 * 1e9),
        ("MiB", 2**20),
    ],  # fmt: skip
    "rate": [
        ("B/s", 1.0),
        ("MB/s", 1e6),
        ("GB/s", 1e9),
        ("GiB/s", 2**30),
        ("Gb/s", 1e9 / 8),
        ("Gbps", 1e9 / 8),
    ],  # fmt: skip
}


@pytest.mark.parametrize("kind", QUANTITY_KINDS)
@settings(max_examples=examples(10), deadline=None)
@given(seed=SEEDS)
def test_right_answers_in_other_units_are_accepted(kind, seed):
    s = state(kind, seed)
    want = core_answer(kind, seed)
    for name, scale in OTHER_UNITS[s["dimension"]]:
        answer = f"{want / scale:.6g} {name}"
        assert state(kind, seed, answer)["feedback"]["correct"], answer


@pytest.mark.parametrize("kind", [k for k in QUANTITY_KINDS if state(k, 0)["dimension"] != "time"])
@settings(max_examples=examples(10), deadline=None)
@given(seed=SEEDS)
def test_gb_for_gib_and_bits_for_bytes_get_a_hint(kind, seed):
    s = state(kind, seed)
    want = core_answer(kind, seed)
    rate = "/s" if s["dimension"] == "rate" else ""
    # the number in GiB, labelled GB: wrong, and the message names the mix-up
    fb = state(kind, seed, f"{want / 2**30:.6g} GB{rate}")["feedback"]
    assert not fb["correct"] and "GiB" in fb["message"]
    fb = state(kind, seed, f"{want / 1e9:.6g} GiB{rate}")["feedback"]
    assert not fb["correct"] and "GB" in fb["message"]
    # the number in bits, labelled bytes, and the other way round
    fb = state(kind, seed, f"{want * 8 / 1e9:.6g} GB{rate}")["feedback"]
    assert not fb["correct"] and "bits" in fb["message"]
    fb = state(kind, seed, f"{want / 1e9:.6g} Gb{rate}")["feedback"]
    assert not fb["correct"] and "bits" in fb["message"]


@pytest.mark.parametrize("kind", [k for k in QUANTITY_KINDS if state(k, 0)["dimension"] == "time"])
@settings(max_examples=examples(10), deadline=None)
@given(seed=SEEDS)
def test_a_bare_number_in_the_wrong_unit_gets_a_hint(kind, seed):
    s = state(kind, seed)
    want = core_answer(kind, seed)
    other = "ms" if s["unit"] != "ms" else "µs"
    scale = {"ms": 1e-3, "µs": 1e-6}[other]
    fb = state(kind, seed, f"{want / scale:.6g}")["feedback"]
    assert not fb["correct"] and other.replace("µ", "u") in fb["message"].replace("µ", "u")
    fb = state(kind, seed, f"{want:.6g} GB")["feedback"]
    assert not fb["correct"] and "time" in fb["message"]


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=examples(40), deadline=None)
@given(answer=st.text(max_size=60) | st.from_regex(r"[0-9.,eE^x*+\- ]{0,12}[a-zA-Z/µ]{0,6}"))
def test_any_text_gets_a_verdict_never_an_exception(kind, answer):
    fb = state(kind, 0, answer)["feedback"]
    assert isinstance(fb["correct"], bool) and isinstance(fb["message"], str) and fb["message"]


@pytest.mark.parametrize(
    "answer",
    ["", "   ", "abc", "0,6 s", "1.2.3", "12 parsecs", "1e999", "2^9999", "[1, 2]", "x" * 500],
)
def test_malformed_answers_are_explained(answer):
    fb = state("ring_time", 0, answer)["feedback"]
    assert fb["correct"] is False
    assert fb["message"] and "Traceback" not in fb["message"]


def test_non_text_answers_are_explained():
    for answer in (5, [1], {"a": 1}, True):
        fb = state("ring_time", 0, answer)["feedback"]
        assert fb == {"correct": False, "message": "Type an answer as text."}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "nope", "seed": 1}, "kind"),
        ({"kind": "ring_time", "seed": -1}, "seed"),
        ({"kind": "ring_time", "seed": 2.5}, "seed"),
        ({"kind": "ring_time", "seed": "7"}, "seed"),
        ({"kind": "ring_time", "seed": 2**60}, "seed"),
        ({"kind": "ring_time", "seed": 1, "colour": 1}, "colour"),
    ],
)
def test_bad_parameters_name_their_field(params, field):
    with pytest.raises(ParamError) as e:
        exercise(params)
    assert e.value.field == field


def test_a_seed_names_the_same_problem_everywhere():
    """random.Random(seed) with randrange and choice: pinned, so a teacher's link keeps working
    (the same draws in Pyodide, whose random module is CPython's)."""
    s = state("ring_time", 1)
    assert s["given"] == {"gpus": 16, "gpus_per_node": 8, "bytes": 16e9}
    assert s["solution_answer"] == "0.6 s"
    assert state("allreduce_sum", 1)["given"]["values"] == [[-1, -6], [6, 5], [6, 3]]


def test_the_worked_solution_is_steps_ending_in_the_answer():
    for kind in KINDS:
        s = state(kind, 3)
        assert len(s["solution_steps"]) >= 1 and s["prompt"] and s["hint"]
        if s["dimension"] not in ("choice", "vector"):
            number = s["solution_answer"].split()[0]
            assert number in " ".join(s["solution_steps"]), kind


# ---- the unit reader ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "dimension"),
    [
        ("0.55 s", 0.55, "time"),
        ("550 ms", 0.55, "time"),
        ("550ms", 0.55, "time"),
        ("12 µs", 12e-6, "time"),
        ("12 μs", 12e-6, "time"),
        ("14 GB", 14e9, "bytes"),
        ("13.04 GiB", 13.04 * 2**30, "bytes"),
        ("64 KiB", 65536, "bytes"),
        ("64 kB", 64000, "bytes"),
        ("50 GB/s", 50e9, "rate"),
        ("400 Gb/s", 50e9, "rate"),
        ("400 Gbps", 50e9, "rate"),
        ("2^20", 2**20, None),
        ("2**20 B", 2**20, "bytes"),
        ("1,048,576", 1048576, None),
        ("1 048 576", None, None),  # spaces inside a number: refused, not misread
        ("1.2e6", 1.2e6, None),
        ("1.2×10^6", 1.2e6, None),
        ("−3", -3, None),
        ("2.11x", 2.11, "count"),
        ("6 steps", 6, "count"),
        ("1.75 GB", 1.75e9, "bytes"),
        ("≈ 0.55 s.", 0.55, "time"),
        ("about 14 GB", 14e9, "bytes"),
        ("5.", 5, None),
    ],
)
def test_units_are_read(text, value, dimension):
    if value is None:
        with pytest.raises(AnswerError):
            parse(text)
        return
    q = parse(text)
    if q.unit is None:
        assert dimension is None and q.number == pytest.approx(value)
    else:
        assert q.unit.dimension == dimension
        assert q.base(None) == pytest.approx(value)


def test_vectors_are_read():
    assert parse_vector("[16, 20]") == [16, 20]
    assert parse_vector("16 20") == [16, 20]
    assert parse_vector("(−1; 2)") == [-1, 2]
    with pytest.raises(AnswerError):
        parse_vector("[1, a]")


# ---- the teacher's sheet -----------------------------------------------------------------------


def test_a_sheet_lists_each_problem_with_its_seed_and_a_separate_key():
    kinds = ["ring_time", "line_busbw", "ring_time", "bucket_count"]
    s = sheet({"kinds": kinds, "seed": 40})
    assert [p["kind"] for p in s["problems"]] == kinds
    assert [p["seed"] for p in s["problems"]] == [40, 41, 42, 43]
    for p, a in zip(s["problems"], s["answers"], strict=True):
        alone = state(p["kind"], p["seed"])
        assert p["prompt"] == alone["prompt"] and "solution_answer" not in p
        assert a["solution_answer"] == alone["solution_answer"]
    assert s["problems"][0]["prompt"] != s["problems"][2]["prompt"]
    assert sheet({"kinds": "ring_time, line_busbw", "seed": 3})["params"]["kinds"] == kinds[:2]
    json.dumps(s, allow_nan=False)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kinds": []}, "kinds"),
        ({"kinds": ["nope"]}, "kinds"),
        ({"kinds": ["ring_time"] * 41}, "kinds"),
        ({"kinds": 3}, "kinds"),
        ({"seed": -1}, "seed"),
        ({"level": 1}, "level"),
    ],
)
def test_bad_sheet_parameters_name_their_field(params, field):
    with pytest.raises(ParamError) as e:
        sheet(params)
    assert e.value.field == field
