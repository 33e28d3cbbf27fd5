"""Exercises: every kind's answer against an independent computation (numpy, or the formula
written out here), on 30 fixed seeds and on random ones; the answer the prompt teaches accepted;
right answers in other units; wrong and malformed answers, and the misconceptions named; the
pages' questions on the teacher's sheet."""

import json
import math
import re
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import SEEDS

from allreduce_explainer import api
from allreduce_explainer.errors import ParamError
from allreduce_explainer.exercises import KINDS, exercise, problem, sheet
from allreduce_explainer.exercises.kinds import PAGE_OF as KINDS_PAGE
from allreduce_explainer.exercises.kinds import common
from allreduce_explainer.exercises.units import AnswerError, parse, parse_vector
from allreduce_explainer.widgets.exercises import exercise_sheet, question_bank, sheet_kinds
from helpers import examples, field_of, stages

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
# Page 10's rule of thumb (content/10-your-cluster.md, "A rule of thumb"): across servers busbw
# should reach about a server's cards times one card's rate; below about 80 % of it, look.
RULE_SHARE = 0.8
ADAM = {"params": 2, "grads": 2, "optimizer": 12}  # mixed-precision Adam, bytes per parameter
# Over how many GPUs each part is split (ZeRO paper, section 5; FSDP's HYBRID_SHARD for hsdp)
SPLIT = {
    "ddp": ("1", "1", "1"),
    "zero1": ("1", "1", "n"),
    "zero2": ("1", "n", "n"),
    "zero3": ("n", "n", "n"),
    "hsdp": ("g", "g", "g"),
}


def state(kind, seed, answer=None):
    params = {"kind": kind, "seed": seed}
    if answer is not None:
        params["answer"] = answer
    return exercise(params)


# ---- independent oracles ----------------------------------------------------------------------


def ring_buffers(values, steps):
    """A ring all-reduce in numpy, one element per chunk: the buffers after `steps` steps.

    NCCL's runRing (src/device/all_reduce.h:42-73, v2.30.7-1), GPU i's ring index being i: its
    send t (from 1) carries chunk modRanks(i + n - t) for t = 1..n - 1, which GPU i + 1 adds in;
    then chunk i (line 60) and modRanks(i + n - j) for j = 1..n - 2, which it copies.
    """
    buf = np.array(values, dtype=np.int64)
    n = len(values)
    for t in range(1, steps + 1):
        before = buf.copy()
        for i in range(n):
            if t < n:
                c = (i + n - t) % n
                buf[(i + 1) % n, c] = before[(i + 1) % n, c] + before[i, c]
            else:
                j = t - n  # the all-gather's j-th send after the finished chunk
                c = i if j == 0 else (i + n - j) % n
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


def tree_time(g, messages=None):
    """The prompt's lock-step tree: 2(2 log2 n - 1) message times of α + (S/2)/B in a row
    (`messages` another count, for a student who miscounts)."""
    n, s = g["gpus"], g["bytes"]
    count = 2 * (2 * math.log2(n) - 1) if messages is None else messages
    return count * (g["latency_us"] * 1e-6 + s / 2 / (g["gbps"] * 1e9))


def model_states(strategy, params, n, g):
    """Bytes of model states per GPU; a shard is rounded up to whole elements."""
    over = {"1": 1, "n": n, "g": g}
    return sum(
        size * math.ceil(params / over[split])
        for size, split in zip(ADAM.values(), SPLIT[strategy], strict=True)
    )


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
    if kind == "rs_owner":  # all_reduce.h:60: the reduce-scatter finishes chunk ringIx, the
        return g["order"].index(g["gpu"])  # GPU's position on the ring, not its rank
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
    if kind == "zero_memory":
        return model_states(g["strategy"], g["params"], g["gpus"], g["gpus_per_node"])
    if kind == "shard_bytes":
        collectives = {"ddp": 2, "zero1": 2, "zero2": 2, "zero3": 3}[g["strategy"]]
        return collectives * (g["gpus"] - 1) / g["gpus"] * 2 * g["params"]
    if kind == "nvls_link_bytes":
        return (g["gpus"] + 1) / g["gpus"] * g["bytes"]
    if kind == "nvls_wire_rate":
        n = g["gpus"]
        return g["busbw_GBps"] * n / (2 * (n - 1)) * (n + 1) / n * 1e9
    if kind == "debug_ring_next":
        # rings.cc prints the ring in the order data travels, closing back to its first rank
        ring = np.array(g["ring"])
        return int(np.roll(ring, -1)[int(np.flatnonzero(ring == g["rank"])[0])])
    if kind == "judge_busbw":
        return "healthy" if g["busbw_GBps"] >= RULE_SHARE * yardstick(g) else "low"
    if kind == "order_ring_value":  # NCCL's ring: chunk 0 starts at GPU 1, each sum to BF16
        v, bf = g["values"], ml_dtypes.bfloat16
        acc = bf(v[1 % len(v)])
        for i in [*range(2, len(v)), 0]:
            acc = bf(acc + bf(v[i]))
        return float(acc)
    if kind == "order_bf16_bound":  # Higham's gamma_{n-1} x s over the ulp 2**(k - 7)
        k = (g["gpus"] - 1) / 256
        return k / (1 - k) * g["mantissa"] * 128
    judged = judgement(kind, g)
    if judged is not None:
        return judged
    raise AssertionError(f"no oracle for {kind}")


def judgement(kind, g):
    """The choice kinds that test a judgement (issue 50), each from its rule written here."""
    if kind == "send_less":  # Patarasuk & Yuan: at least 2(n - 1)/n S when the GPUs add
        n, s = g["gpus"], g["bytes"]
        return "possible" if g["claimed_bytes"] >= 2 * (n - 1) / n * s else "impossible"
    if kind == "network_adds":  # the bound is lifted, but each GPU's (server's) S leaves once
        least = g["bytes"] / (g["gpus_per_node"] if g["network"] == "sharp" else 1)
        return "possible" if g["claimed_bytes"] >= least else "impossible"
    if kind == "busbw_judge":  # busbw = algbw x 2(n - 1)/n against the same link rate
        busbw = [a * 2 * (k - 1) / k for k, a in zip(g["gpus"], g["algbw_GBps"], strict=True)]
        return "first" if busbw[0] > busbw[1] else "second"
    if kind == "tree_role":  # trees.cc: btree rank r > 0 has children iff r is even; tree B
        r = g["gpus"] - 1 - g["gpu"]  # mirrors it on an even n: GPU g plays btree rank n-1-g
        return "leaf" if r % 2 else "inner"
    if kind == "fastest_method":  # page 6's lock-step models, alpha in us, NVLink 1 us
        nodes, per, s, a = g["servers"], g["gpus_per_node"], g["bytes"], g["latency_us"] * 1e-6
        n, ai, bi, be = nodes * per, 1e-6, NVLINK_GBPS * 1e9, NIC_GBPS * 1e9
        c = s / (per * n)
        multi = 2 * (n - 1) * max((per - 1) * (ai + c / bi), a + c / be)
        hier = 2 * (per - 1) * (ai + s / per / bi) + 2 * (nodes - 1) * (a + s / (per * nodes) / be)
        return "multi-ring" if multi < hier else "hierarchical"
    if kind == "same_as_ddp":  # the reduce-scatter is the ring's first half; a tree's order is not
        return "guaranteed" if g["reference"] == "ring" else "not guaranteed"
    if kind == "bucket_exposed":  # no closed form: NCCL's model through the library's other door
        runs = [
            api.ddp(model=g["model"], gpus=8 * g["servers"], gpus_per_node=8, bucket_cap_mb=c)
            for c in g["caps_mb"]
        ]
        return "smaller" if runs[0]["exposed_s"] < runs[1]["exposed_s"] else "larger"
    return None


def yardstick(g):
    """Page 10's yardstick, GB/s: a server's cards times one card's rate (Gb/s over 8)."""
    return g["gpus_per_node"] * g["nic_Gbps"] / 8


def core_answer(kind, seed):

    return problem(kind, seed).answer


def test_every_kind_is_on_one_stage_and_a_stage_has_none_or_two_to_five():
    """The pages' `exercises:` lists place the core's kinds: each on exactly one stage (stage 10
    has five: its fourth objective, reading NCCL_DEBUG=INFO output, has its own kind)."""
    counts = [len(p.exercises) for p in stages()]
    assert all(n == 0 or 2 <= n <= 5 for n in counts) and sum(counts) > 0, counts
    assert sorted(k for p in stages() for k in p.exercises) == sorted(KINDS)


def test_every_kind_sits_in_the_module_of_its_page_in_the_pages_order():
    """kinds/<slug>.py holds exactly the kinds its page lists, defined in that order; a function
    marked @titled anywhere else, or twice, would show here."""
    marked = [
        (name, f.__module__.rsplit(".", 1)[1])
        for module in sys.modules.values()
        if module.__name__.startswith("allreduce_explainer.exercises.kinds.")
        for name, f in vars(module).items()
        if callable(f) and hasattr(f, "title") and f.__module__ == module.__name__
    ]
    names = [k for k, _ in marked]
    assert len(names) == len(set(names)), "a kind defined in two modules"
    for page in stages():
        module = page.slug.replace("-", "_")
        assert [k for k, m in KINDS_PAGE.items() if m == module] == list(page.exercises), module
    assert sorted(names) == sorted(KINDS)


def test_a_default_sheet_asks_the_first_kind_of_every_stage_with_exercises():
    """The build gives the sheet its kinds in the pages' order; the core's default is the same
    kinds, one a page's module."""
    want = [p.exercises[0] for p in stages() if p.exercises]
    assert sheet_kinds(stages()) == want
    assert [p["kind"] for p in sheet({"kinds": want})["problems"]] == want
    assert sorted(p["kind"] for p in sheet()["problems"]) == sorted(want)


def check_against_oracle(kind, seed):
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


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_answer_matches_an_independent_computation_on_30_seeds(kind):
    for seed in range(30):
        check_against_oracle(kind, seed)


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=examples(30), deadline=None)
@given(seed=SEEDS)
def test_answer_matches_an_independent_computation(kind, seed):
    check_against_oracle(kind, seed)


def _scaled(kind, seed, factor):
    s = state(kind, seed)
    return s, core_answer(kind, seed) * factor


@pytest.mark.parametrize("kind", sorted(KINDS))
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


QUANTITY_KINDS = sorted(k for k in KINDS if state(k, 0)["dimension"] in ("time", "bytes", "rate"))
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
    for typed, slip in (
        (f"{want / 2**30:.6g} GB{rate}", "GiB"),  # the number in GiB, labelled GB
        (f"{want / 1e9:.6g} GiB{rate}", "GB"),
        (f"{want * 8 / 1e9:.6g} GB{rate}", "bits"),  # in bits, labelled bytes
        (f"{want / 1e9:.6g} Gb{rate}", "bits"),
    ):
        fb = state(kind, seed, typed)["feedback"]
        # a number one of the kind's misconceptions gives gets that message first (a server's
        # 8 cards summed is 8 times one card, as the number in bits would be)
        named = _named_mistake(kind, seed, parse(typed).base(None))
        assert not fb["correct"] and (named or slip) in fb["message"], (typed, fb)


def _named_mistake(kind, seed, value):
    """The message of the kind's misconception that gives `value`, if one does."""

    p = problem(kind, seed)
    hits = [m for w, m in p.mistakes if abs(w - value) <= p.tolerance * abs(w) * 1.001]
    return hits[0] if hits else None


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
    # no number was read from any of them ("[1, 2]" is two): none is an answer to count
    assert fb["counts"] is False, fb


def test_non_text_answers_are_explained():
    for answer in (5, [1], {"a": 1}, True):
        fb = state("ring_time", 0, answer)["feedback"]
        assert fb == {"correct": False, "message": "Type an answer as text.", "counts": False}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_empty_box_or_a_decimal_comma_is_no_answer_and_counts_nothing(kind):
    """A graded page (SCORM) counts the first answer: what Python reads no answer from gets a
    message and `counts` false, never "right in ms" or "check the sign"; any number read is an
    answer (no `counts` key), right or wrong."""
    for seed in range(20):
        p = problem(kind, seed)
        # in a vector a comma separates the numbers: "0,975" is two
        commas = ("0,975", f"0,975 {p.unit}".strip(), "1,5e3")
        for text in ("", "   ", "[1, x]", *(commas if p.dimension != "vector" else ())):
            fb = state(kind, seed, text)["feedback"]
            assert fb["counts"] is False and not fb["correct"], (seed, text, fb)
            assert "right in" not in fb["message"] and "sign" not in fb["message"], fb
        if p.dimension == "choice":
            assert "counts" not in state(kind, seed, p.choices[0])["feedback"]
        elif p.dimension != "vector":
            for text in (p.answer_text(), f"0.975 {p.unit}".strip(), "1,048,576"):
                assert "counts" not in state(kind, seed, text)["feedback"], (seed, text)


def test_a_decimal_comma_is_told_with_the_number_written_right():
    fb = state("ring_time", 0, "0,975 s")["feedback"]
    assert "0.975" in fb["message"] and "point" in fb["message"], fb


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
    # re-pinned when page 1's models became eleven sizes (issue 50: 50 problems in 300 seeds)
    assert s["given"] == {"gpus": 16, "gpus_per_node": 8, "bytes": 68e9}
    assert s["solution_answer"] == "2.55 s"  # 2 × 15 × 68 GB / 16 / 50 GB/s
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


# ---- feedback aimed at known misconceptions ----------------------------------------------------


def _typed(value, unit_text):
    """`value` (base units) as a student types it in `unit_text`, to four figures."""
    return f"{value / _scale(unit_text):.4g} {unit_text}".strip()


def _seeds(kind, keep, count=30):
    """The first `count` seeds of `kind` whose problem passes `keep` (the drawn numbers)."""
    out = [seed for seed in range(400) if keep(state(kind, seed)["given"])][:count]
    assert out, f"no seed of {kind} has the case"
    return out


def test_algbw_typed_for_busbw_is_named():
    for seed in _seeds("line_busbw", lambda g: g["gpus"] > 2):
        g = state("line_busbw", seed)["given"]
        algbw = g["bytes"] / (g["time_us"] * 1e-6)
        fb = state("line_busbw", seed, _typed(algbw, "GB/s"))["feedback"]
        assert not fb["correct"] and fb["message"].startswith(
            "That is algbw; multiply by 2(n − 1)/n"
        )


def test_the_finished_sum_typed_for_a_stale_cell_is_named_and_never_called_twice():
    def stale_rs(g):
        return int(np.array(g["values"])[:, g["chunk"]].sum()) != oracle("rs_cell", g)

    for seed in _seeds("rs_cell", stale_rs):
        g = state("rs_cell", seed)["given"]
        total = int(np.array(g["values"])[:, g["chunk"]].sum())
        fb = state("rs_cell", seed, str(total))["feedback"]
        assert not fb["correct"] and "finished sum" in fb["message"], fb
    for seed in _seeds(
        "ag_cell", lambda g: sum(v[g["chunk"]] for v in g["values"]) != oracle("ag_cell", g)
    ):
        g = state("ag_cell", seed)["given"]
        total = sum(v[g["chunk"]] for v in g["values"])
        fb = state("ag_cell", seed, str(total))["feedback"]
        assert not fb["correct"] and "complete sum" in fb["message"], fb
    for kind in ("rs_cell", "ag_cell", "rs_owner"):  # a factor of two is no slip for a cell
        for seed in range(30):
            want = core_answer(kind, seed)
            if want:
                fb = state(kind, seed, str(2 * want))["feedback"]
                assert not fb["correct"] and "twice" not in fb["message"]


def test_the_other_chunk_numbering_is_named():
    """A reader who starts chunk c on GPU c (Baidu's numbering, one place on from NCCL's) gets
    the cell of that ring in rs_cell and chunk i + 1 in rs_owner: both named, never correct."""

    def baidu_cell(g):
        v, c, i, s = np.array(g["values"]), g["chunk"], g["gpu"], g["step"]
        n = len(v)
        k = (i - c) % n  # chunk c started on GPU c, one GPU further each step
        return int(v[[(c + j) % n for j in range(k + 1)], c].sum()) if 0 < k <= s else int(v[i, c])

    def differs(g):
        total = int(np.array(g["values"])[:, g["chunk"]].sum())
        return baidu_cell(g) not in (oracle("rs_cell", g), total)

    for seed in _seeds("rs_cell", differs):
        g = state("rs_cell", seed)["given"]
        fb = state("rs_cell", seed, str(baidu_cell(g)))["feedback"]
        assert not fb["correct"] and f"had GPU {g['chunk']} sent it first" in fb["message"], fb
    for seed in range(30):
        g = state("rs_owner", seed)["given"]
        n, i, p = g["gpus"], g["gpu"], g["order"].index(g["gpu"])
        said = {}  # the first misconception of each value names it
        for value, phrase in ((i, "own number"), ((p - 1) % n, "sends first")):
            said.setdefault(value, phrase)
        said.setdefault((p + 1) % n, "chunk p first")
        for value, phrase in said.items():
            fb = state("rs_owner", seed, str(value))["feedback"]
            assert not fb["correct"] and phrase in fb["message"], (seed, value, fb)


def _by_prompt(g, count=None):
    """speedup worked as its prompt and hint teach, each time rounded to three figures as a
    student writes it: the ring's 2(n − 1) messages of S/n, the tree's queued messages."""
    ring = float(f"{ring_time(g['gpus'], g['bytes'], g['gbps'], g['latency_us']):.3g}")
    tree = float(f"{tree_time(g, count):.3g}")
    return max(ring, tree) / min(ring, tree)


def test_the_ring_against_tree_kinds_accept_the_answer_the_prompt_teaches():
    for seed in range(30):
        s = state("speedup", seed)
        assert "2(n − 1)" in s["prompt"] and "one after the other" in s["prompt"]
        assert "NCCL" not in s["prompt"] and "twice the ring's bytes" not in s["hint"]
        assert state("speedup", seed, f"{_by_prompt(s['given']):.3g}")["feedback"]["correct"]
        n = s["given"]["gpus"]
        assert f"{int(2 * (2 * math.log2(n) - 1))} message times" in " ".join(s["solution_steps"])


def test_two_log_n_alphas_for_the_lock_step_tree_is_named():
    for seed in range(30):
        g = state("speedup", seed)["given"]
        wrong = _by_prompt(g, 2 * math.log2(g["gpus"]))
        fb = state("speedup", seed, f"{wrong:.3g}")["feedback"]
        assert not fb["correct"] and "one after the other" in fb["message"], fb

    def flips(g):  # the miscounted tree would change the verdict
        ring = ring_time(g["gpus"], g["bytes"], g["gbps"], g["latency_us"])
        return (tree_time(g) < ring) != (tree_time(g, 2 * math.log2(g["gpus"])) < ring)

    for seed in _seeds("faster", flips, 10):
        right = oracle("faster", state("faster", seed)["given"])
        fb = state("faster", seed, {"ring": "tree", "tree": "ring"}[right])["feedback"]
        assert not fb["correct"] and "one after the other" in fb["message"]


def test_one_ring_per_card_where_a_single_ring_was_asked_is_named():
    def card_bound(g):  # across servers, where the card is the slower link
        return g["gpus"] > 8 and g["nic_Gbps"] / 8 < g["link_GBps"] / 8

    for seed in _seeds("calc_time", card_bound):
        s = state("calc_time", seed)
        assert "single ring through all" in s["prompt"]
        per_card = oracle("calc_time", s["given"]) / 8  # 8 rings, S/8 each, one per card
        fb = state("calc_time", seed, _typed(per_card, s["unit"]))["feedback"]
        assert not fb["correct"] and "one ring per card" in fb["message"], fb


def test_the_naive_prompt_says_the_root_receives_one_at_a_time():
    for seed in range(30):
        s = state("naive_time", seed)
        assert "one after another" in s["prompt"] and "never two at once" in s["prompt"]


def test_sharded_and_in_network_misconceptions_are_named():
    for seed in range(30):
        g = state("zero_memory", seed)["given"]
        for other in SPLIT:
            if other != g["strategy"]:  # named even where it is 8 times off, as bits would be
                wrong = model_states(other, g["params"], g["gpus"], g["gpus_per_node"])
                fb = state("zero_memory", seed, _typed(wrong, "GiB"))["feedback"]
                assert not fb["correct"] and "figure" in fb["message"], (other, fb)
        g = state("nvls_link_bytes", seed)["given"]
        ring = 2 * (g["gpus"] - 1) / g["gpus"] * g["bytes"]
        fb = state("nvls_link_bytes", seed, _typed(ring, "GB"))["feedback"]
        assert not fb["correct"] and "ring's count" in fb["message"]
        g = state("nvls_wire_rate", seed)["given"]
        fb = state("nvls_wire_rate", seed, f"{g['busbw_GBps']} GB/s")["feedback"]
        assert not fb["correct"] and fb["message"].startswith("That is busbw")


def test_a_wrong_verdict_on_a_busbw_reading_gets_a_reason_and_the_key_says_what_to_check():
    for seed in range(30):
        s = state("judge_busbw", seed)
        right = oracle("judge_busbw", s["given"])
        wrong = {"healthy": "low", "low": "healthy"}[right]
        fb = state("judge_busbw", seed, wrong)["feedback"]
        assert not fb["correct"] and f"{yardstick(s['given']):g} GB/s" in fb["message"]
        steps = " ".join(s["solution_steps"])
        if right == "low":
            assert "NCCL_DEBUG=INFO" in steps


# ---- titles, and no stage number typed in a problem ------------------------------------------


def test_every_kind_has_a_human_title_shown_in_its_state_and_on_the_sheet():
    titles = {kind: state(kind, 0)["title"] for kind in KINDS}
    assert all(t[0].isupper() and " " in t and t != k for k, t in titles.items()), titles
    assert len(set(titles.values())) == len(titles)
    s = sheet({"kinds": ["rs_cell", "speedup"], "seed": 0})
    assert [p["title"] for p in s["problems"]] == [titles["rs_cell"], titles["speedup"]]
    assert [a["title"] for a in s["answers"]] == [titles["rs_cell"], titles["speedup"]]


def test_no_problem_types_a_stage_or_page_number():
    """Stage numbers come from the page list (the sheet's headings); a problem never names one."""
    for kind in KINDS:
        for seed in range(5):
            s = state(kind, seed)
            text = " ".join([s["title"], s["prompt"], s["hint"], *s["solution_steps"]])
            assert not re.search(r"\b(stage|page) \d", text, re.I), (kind, seed)


# ---- the pages' questions on the sheet ---------------------------------------------------------

BANK = [
    {"stage": "Stage 1 · One", "kinds": ["ring_time"], "questions": [{"q": "Q1?", "a": "A1."}]},
    {"stage": "Stage 2 · Two", "kinds": ["rs_cell"], "questions": [{"q": "Q2?", "a": "A2."}]},
    {"stage": "Stage 3 · Three", "kinds": ["ag_cell"], "questions": []},
]


def test_a_sheet_asks_the_chosen_pages_questions_only_when_asked_with_answers_in_the_key():
    off = sheet({"kinds": ["rs_cell", "ring_time"], "seed": 2, "bank": BANK})
    assert off["questions"] == [] and off["question_answers"] == []
    on = sheet({"kinds": ["rs_cell", "ring_time"], "seed": 2, "bank": BANK, "questions": True})
    # the pages that have a chosen kind, in the bank's (page) order, numbered after the problems
    assert [q["q"] for q in on["questions"]] == ["Q1?", "Q2?"]
    assert [q["number"] for q in on["questions"]] == [3, 4]
    assert [q["stage"] for q in on["questions"]] == ["Stage 1 · One", "Stage 2 · Two"]
    assert "a" not in on["questions"][0]
    assert [(q["q"], q["a"]) for q in on["question_answers"]] == [("Q1?", "A1."), ("Q2?", "A2.")]
    assert on["problems"] == off["problems"] and on["params"]["bank"] == BANK
    json.dumps(on, allow_nan=False)


@pytest.mark.parametrize(
    "bank",
    [
        3,
        [{"stage": "S", "kinds": []}],
        [{"stage": "", "kinds": [], "questions": []}],
        [{"stage": "S", "kinds": [1], "questions": []}],
        [{"stage": "S", "kinds": [], "questions": [{"q": "x"}]}],
        [{"stage": "S", "kinds": [], "questions": [{"q": "x", "a": "y" * 5000}]}],
        [{"stage": "S", "kinds": [], "questions": []}] * 41,
    ],
)
def test_a_bad_question_bank_names_its_field(bank):
    assert field_of(sheet, {"bank": bank, "questions": True}) == "bank"


def test_the_question_bank_the_build_passes_is_every_page_with_exercises_and_its_questions():

    bank = question_bank(stages())
    drilled = [p for p in stages() if p.exercises]
    assert [b["stage"] for b in bank] == [f"Stage {p.number} · {p.title}" for p in drilled]
    assert [len(b["questions"]) for b in bank] == [len(p.questions) for p in drilled]
    s = exercise_sheet({"bank": bank, "questions": True})
    assert len(s["questions"]) == sum(len(p.questions) for p in drilled)  # a kind of every page


def test_a_page_at_seed_0_shows_different_problems():
    """The page opens every kind at seed 0: its kinds must not all draw the same case."""
    methods = {
        state(k, 0)["given"]["algorithm"] for k in ("network_bytes", "nic_bytes", "network_steps")
    }
    assert len(methods) == 3
    assert state("bucket_count", 0)["given"] != state("first_bucket", 0)["given"]


def test_ag_cell_asks_about_cells_the_sum_has_not_reached_on_many_seeds():
    stale = sum(
        oracle("ag_cell", g) != sum(v[g["chunk"]] for v in g["values"])
        for g in (state("ag_cell", seed)["given"] for seed in range(100))
    )
    assert stale >= 30


ABOUT = {"prompt": "p", "hint": "h", "steps": [], "given": {}}


@pytest.mark.parametrize(
    ("unit_text", "dimension"),
    [("µs", "time"), ("ms", "time"), ("s", "time"), ("MB", "bytes"), ("GiB", "bytes")]
    + [("GB/s", "rate")],
)
def test_a_quantity_is_of_the_dimension_of_the_unit_it_is_asked_in(unit_text, dimension):
    p = common.quantity(2.5, unit_text, **ABOUT)
    assert (p.dimension, p.unit, p.tolerance) == (dimension, unit_text, 0.01)
    assert p.answer_text().endswith(f" {unit_text}")


def test_counts_vectors_and_choices_are_exact_unless_told():
    """A count is exact (a cell, an index, steps) unless its kind gives a tolerance (a ratio)."""
    assert common.count(3, **ABOUT).tolerance == 0 and common.count(3, **ABOUT).unit == ""
    ratio = common.count(1.5, 0.02, **ABOUT)
    assert (ratio.dimension, ratio.tolerance) == ("count", 0.02)
    v = common.vector([1, 2], **ABOUT)
    assert (v.dimension, v.tolerance, v.answer_text()) == ("vector", 0, "[1, 2]")
    c = common.choice("ring", ("ring", "tree"), **ABOUT, mistakes=(("tree", "no"),))
    assert (c.dimension, c.choices, c.mistakes, c.tolerance) == (
        "choice",
        ("ring", "tree"),
        (("tree", "no"),),
        0,
    )
