"""Exercises fair on every seed: over 300 seeds of every kind, no misconception a kind names
gives its right answer, each one typed gets its own message (before any unit slip), the choice
kinds' answers are balanced, the rounding-order kind needs its roundings, and the busbw judge
follows page 10's rule. The misconceptions' values are computed here, apart from the core."""

import math
import re
from collections import Counter
from functools import cache

import ml_dtypes
import numpy as np
import pytest

from allreduce_explainer.exercises import KINDS, feedback, problem
from allreduce_explainer.exercises.kinds.common import CHOICE, article
from allreduce_explainer.widgets.cluster import facts
from helpers import typed

SEEDS = range(300)
# The cell kinds ask what a GPU holds after step k; once the sum has reached the cell, the
# finished sum they name as a misconception is the cell's right content, by design.
CELL_KINDS = ("rs_cell", "ag_cell")
RULE_SHARE = 0.8  # page 10's rule of thumb: look below about 80 % of the yardstick
ADAM = (2, 2, 12)  # bytes per parameter: BF16 weights, BF16 gradients, FP32 optimizer state
SPLIT = {"ddp": "111", "zero1": "11n", "zero2": "1nn", "zero3": "nnn", "hsdp": "ggg"}


@cache
def drawn(kind, seed):
    return problem(kind, seed)


def same(p, a, b) -> bool:
    """Equal as the checker judges two answers of `p`."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= p.tolerance * abs(b) * (1 + 1e-9) if b else a == b


# ---- the misconceptions, computed here from the drawn numbers -----------------------------------


def bf16_sum(values, order):
    """Sum `values` in `order`, each partial sum rounded to BF16 (ml_dtypes)."""
    acc = ml_dtypes.bfloat16(values[order[0]])
    for i in order[1:]:
        acc = ml_dtypes.bfloat16(np.float32(acc) + np.float32(values[i]))
    return float(acc)


def ring_order(n):
    """NCCL's ring: chunk 0 starts at GPU 1 and ends, complete, on GPU 0."""
    return [*range(1, n), 0]


def states(strategy, params, n, g):
    over = {"1": 1, "n": n, "g": g}
    return sum(b * math.ceil(params / over[s]) for b, s in zip(ADAM, SPLIT[strategy]))


def misconceptions(kind, g, answer):
    """[(the wrong answer a misconception gives, a phrase of the message that must name it)]."""
    if kind == "naive_time":  # GPU 0 taking in over NVLink and through its card at once
        n, per, s = g["gpus"], g["gpus_per_node"], g["bytes"]
        return [(2 * max((per - 1) * s / 450e9, (n - per) * s / 50e9), "at the same time")]
    if kind == "order_ring_value":
        v = g["values"]
        serial = bf16_sum(v, list(range(len(v))))
        once = float(ml_dtypes.bfloat16(sum(v)))
        return [(sum(v), "exact sum"), (once, "rounded once"), (serial, "GPU order")]
    if kind in ("line_algbw", "line_busbw"):
        algbw = g["bytes"] / (g["time_us"] * 1e-6)
        busbw = algbw * 2 * (g["gpus"] - 1) / g["gpus"]
        return [(busbw, "That is busbw")] if kind == "line_algbw" else [(algbw, "That is algbw")]
    if kind == "nvls_link_bytes":
        n, s = g["gpus"], g["bytes"]
        return [(2 * (n - 1) / n * s, "ring's count"), (s, "the chunks the switch reads")]
    if kind == "nvls_wire_rate":
        n, busbw = g["gpus"], g["busbw_GBps"] * 1e9
        return [(busbw, "That is busbw"), (busbw * n / (2 * (n - 1)), "That is algbw")]
    if kind == "zero_memory":
        args = (g["params"], g["gpus"], g["gpus_per_node"])
        return [(states(k, *args), "figure") for k in SPLIT if k != g["strategy"]]
    if kind == "nic_bytes":
        nodes, per, alg = g["servers"], g["gpus_per_node"], g["algorithm"]
        cards = nodes if alg == "ring" else nodes * per  # the cards that send across
        out = [(answer * cards, "every card's bytes summed")]
        return out + ([] if alg == "ring" else [(answer * per, "one server's")])
    if kind == "debug_ring_next":
        ring = g["ring"]
        return [(ring[ring.index(g["rank"]) - 1], "receives from"), (g["rank"], "itself")]
    if kind == "order_bf16_bound":  # γ without its denominator
        return [((g["gpus"] - 1) / 256 * g["mantissa"] * 128, "denominator")]
    if kind == "faster":
        ring = (
            2
            * (g["gpus"] - 1)
            * (g["latency_us"] * 1e-6 + g["bytes"] / g["gpus"] / g["gbps"] / 1e9)
        )
        half = g["latency_us"] * 1e-6 + g["bytes"] / 2 / g["gbps"] / 1e9
        miscounted = 2 * math.log2(g["gpus"]) * half  # one message time a step, not queued
        if answer == "tree":  # counting bytes only, the ring always wins
            return [("ring", "fewest bytes")]
        return [("tree", "one after the other")] if miscounted < ring else []
    if kind == "judge_busbw":
        wrong = {"healthy": "low", "low": "healthy"}[answer]
        return [(wrong, f"{yardstick(g):g} GB/s")]
    if kind == "rs_message_bytes":  # D9: the whole gradient, never "right in bits" on 8 GPUs
        n, s = g["gpus"], g["bytes"]
        return [(s, "the whole gradient"), (s / (n - 1), "n − 1")]
    if kind == "rs_owner":  # D10: the rank, the chunk sent first, the chunk-p-first rule
        n, p = g["gpus"], g["order"].index(g["gpu"])
        return [(g["gpu"], "own number"), ((p - 1) % n, "sends first"), ((p + 1) % n, "p first")]
    if kind == "ring_bytes_per_gpu":  # D11: 2S, never within the tolerance
        n, s = g["gpus"], g["bytes"]
        out = [(2 * s, "That is 2S"), ((n - 1) / n * s, "one phase")]
        return out + ([((n - 1) * s, "naive root")] if n > 2 else [])
    if kind == "naive_root_bytes":
        n, s = g["gpus"], g["bytes"]
        return [
            (n * s, "keeps its own"),
            (2 * (n - 1) * s, "receives too"),
            (2 * answer / n, "ring"),
        ]
    if kind == "ring_steps":
        n = g["gpus"]
        return [(n - 1, "one phase"), (2 * n, "not n")] if n > 2 else [(1, "one phase")]
    if kind == "network_steps":
        nodes, n = g["servers"], g["servers"] * g["gpus_per_node"]
        if g["algorithm"] == "ring":
            return [(2 * (nodes - 1), "ring of the"), (n - 1, "one phase")]
        return [(2 * (n - 1), "flat ring"), (nodes - 1, "reduce-scatter")]
    if kind in JUDGED:  # the other choice is the misconception the page names
        return judged_misconceptions(kind, g, answer)
    if kind == "calc_time":  # D12: both slips named, and both at once where they coincide
        return [(time, phrase) for time, phrase in calc_slips(g) if not same_time(time, answer)]
    return []


JUDGED = (
    "send_less", "network_adds", "busbw_judge", "tree_role", "fastest_method", "same_as_ddp",
    "bucket_exposed",
)  # fmt: skip


def judged_misconceptions(kind, g, answer):
    """The judgement kinds' misconception: the other word, with a phrase of its message."""
    if kind == "send_less":
        return (
            [("possible", "below the floor")]
            if answer == "impossible"
            else [("impossible", "not a ceiling")]
        )
    if kind == "network_adds":
        return (
            [("impossible", "assumes the GPUs do")]
            if answer == "possible"
            else [("possible", "lifts the ring's bound")]
        )
    if kind == "busbw_judge":  # named where algbw ranks the runs the wrong way round
        algbw, other = g["algbw_GBps"], {"first": "second", "second": "first"}[answer]
        by_algbw = "first" if algbw[0] > algbw[1] else "second"
        return [(other, "compares algbw")] if by_algbw == other else []
    if kind == "tree_role":  # NCCL's btree (trees.cc): rank g > 0 is a leaf iff g is odd
        in_a = "leaf" if g["gpu"] % 2 else "inner"
        return [(in_a, "role in tree A")]
    if kind == "fastest_method":
        other = {"multi-ring": "hierarchical", "hierarchical": "multi-ring"}[answer]
        return [(other, "start-up costs decide" if other == "multi-ring" else "bytes decide")]
    if kind == "same_as_ddp":
        if g["reference"] == "ring":
            return [("not guaranteed", "the order is the same")]
        return [("guaranteed", "another order")]
    if kind == "bucket_exposed":
        if answer == "larger":
            return [("smaller", "cost more than they hide")]
        return [("larger", "cannot start until")]
    raise AssertionError(kind)


def calc_slips(g):
    """One ring per card (each of the 8 carries chunks of c = S/(8n); a step sends 7 over NVLink
    and one through the card, at once: page 6's model) and the card's Gb/s read as GB/s on the
    single ring's 2(n − 1)/n · S, for a BF16 gradient."""
    n, s, link, card = g["gpus"], 2 * g["params"], g["link_GBps"], g["nic_Gbps"] / 8
    c = s / (8 * n)
    per_card = 2 * (n - 1) * max(7 * c / link, c / card) / 1e9
    bits = 2 * (n - 1) / n * s / min(link, g["nic_Gbps"]) / 1e9
    return [(per_card, "one ring per card"), (bits, "Gb/s read as")]


def same_time(a, b):
    return abs(a - b) <= 0.01 * abs(b) * (1 + 1e-9)


def yardstick(g):
    """Page 10's yardstick, GB/s: a server's cards times one card's rate (Gb/s over 8)."""
    return g["gpus_per_node"] * g["nic_Gbps"] / 8


NAMED = [
    "naive_time", "order_ring_value", "line_algbw", "line_busbw", "nvls_link_bytes",
    "nvls_wire_rate", "zero_memory", "nic_bytes", "debug_ring_next", "order_bf16_bound",
    "faster", "judge_busbw", "rs_message_bytes", "rs_owner", "ring_bytes_per_gpu",
    "naive_root_bytes", "ring_steps", "network_steps", "calc_time", *JUDGED,
]  # fmt: skip


@pytest.mark.parametrize("kind", NAMED)
def test_no_seed_lets_a_misconception_pass_and_each_gets_its_message(kind):
    """The misconception, computed here, is wrong on every seed and, typed, gets its message
    (before any unit slip: a server's 8 cards summed is 8 times one card, as bits would be)."""
    reached = Counter()
    for seed in SEEDS:
        p = drawn(kind, seed)
        wrong = misconceptions(kind, p.given, p.answer)
        for value, phrase in wrong:
            assert not same(p, value, p.answer), (seed, value, phrase)
            message = feedback(p, typed(p, value))["message"]
            # where two misconceptions give the same number, either message names it
            phrases = [f for v, f in wrong if same(p, value, v)]
            assert any(f in message for f in phrases), (seed, typed(p, value), message)
            reached[phrase] += phrase in message
    phrases = {
        f
        for seed in SEEDS
        for _, f in misconceptions(kind, drawn(kind, seed).given, drawn(kind, seed).answer)
    }
    assert set(reached) == phrases, (reached, phrases)  # each message shows on some seed


def test_where_the_bits_slip_gives_one_ring_per_cards_time_the_message_names_both():
    """D12: with 8 cards no faster than NVLink/8, one ring per card and the card's Gb/s read as
    GB/s give the same time; the number cannot tell which, so the message names both. Elsewhere
    each gets its own."""
    both = 0
    for seed in SEEDS:
        p = drawn("calc_time", seed)
        (rings, _), (bits, _) = calc_slips(p.given)
        for value in (rings, bits):
            message = feedback(p, typed(p, value))["message"]
            assert not feedback(p, typed(p, value))["correct"]
            named = ("one ring per card" in message, "Gb/s read as" in message)
            if same_time(rings, bits):
                assert all(named), (seed, message)
            else:
                assert named == (value is rings, value is bits), (seed, message)
        both += same_time(rings, bits)
    assert 0 < both < len(SEEDS)


@pytest.mark.parametrize("kind", sorted(set(KINDS) - set(CELL_KINDS)))
def test_no_misconception_a_kind_names_is_its_answer(kind):
    for seed in SEEDS:
        p = drawn(kind, seed)
        wrong = [w for w, _ in p.mistakes if same(p, w, p.answer)]
        assert not wrong, (seed, p.answer, wrong)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_misconception_a_kind_names_is_reachable(kind):
    """Each listed wrong answer, typed, gets its own message: no unit slip, no other
    misconception of the same value, no generic message takes it first."""
    for seed in SEEDS:
        p = drawn(kind, seed)
        for wrong, message in p.mistakes:
            if not same(p, wrong, p.answer):
                got = feedback(p, typed(p, wrong))["message"]
                assert got == message, (seed, typed(p, wrong), got, message)


@pytest.mark.parametrize("kind", sorted(k for k in KINDS if drawn(k, 0).dimension == CHOICE))
def test_a_choice_kind_has_no_guessable_answer(kind):
    """Each choice is the answer on about its share of 300 seeds: within 30 % of it (a fair
    coin lands outside 35-65 % of 300 throws once in about 10^7)."""
    counts = Counter(drawn(kind, seed).answer for seed in SEEDS)
    share = len(SEEDS) / len(drawn(kind, 0).choices)
    for choice in drawn(kind, 0).choices:
        assert 0.7 * share <= counts[choice] <= 1.3 * share, counts


def test_the_ring_order_decides_every_order_ring_value_problem():
    """BF16 in the ring's order (ml_dtypes) differs from the exact sum, from it rounded once and
    from the sum in GPU order, so the roundings, in this order, make the answer."""
    for seed in SEEDS:
        p = drawn("order_ring_value", seed)
        v = p.given["values"]
        ring = bf16_sum(v, ring_order(len(v)))
        assert p.answer == ring
        others = (sum(v), float(ml_dtypes.bfloat16(sum(v))), bf16_sum(v, list(range(len(v)))))
        assert ring not in others, (seed, v, ring, others)


def test_judge_busbw_follows_page_10s_rule_with_its_yardstick_in_the_hint():

    share = facts()["cluster_rule_share"]  # the page's rule and the exercise: one share
    for seed in SEEDS:
        p = drawn("judge_busbw", seed)
        g = p.given
        floor = RULE_SHARE * yardstick(g)
        assert p.answer == ("healthy" if g["busbw_GBps"] >= floor else "low")
        assert abs(g["busbw_GBps"] / floor - 1) >= 0.05, (seed, g)  # never a close call
        assert g["bytes"] >= 2**30 and g["servers"] >= 2  # the rule's case: 1 GiB, across
        assert f"= {yardstick(g):g} GB/s" in p.hint and f"{share} of it" in p.hint, p.hint


def test_the_notation_is_the_pages():
    for seed in range(30):
        p = drawn("zero_memory", seed)
        steps = " ".join(p.steps)
        assert "N_d" not in steps and f"n = {p.given['gpus']}," in steps


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("8-GPU", "an 8-GPU"),
        ("16-GPU", "a 16-GPU"),
        ("80 GB", "an 80 GB"),
        ("11 GB", "an 11 GB"),
        ("18,000 B", "an 18,000 B"),
        ("18000 B", "an 18000 B"),
        ("1,800 B", "a 1,800 B"),
        ("110 GB", "a 110 GB"),
        ("1.5 GB", "a 1.5 GB"),
        ("all-reduce", "an all-reduce"),
    ],
)
def test_the_article_is_the_one_read_aloud(text, want):
    assert article(text) == want


# "a" before a number read with a vowel (eight, eleven, eighteen), or "an" before one without
WRONG_ARTICLE = re.compile(r"\b[Aa] (?:8|1[18](?!\d))|\ban (?!8|1[18](?!\d))\d")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_problem_puts_the_wrong_article_before_a_number(kind):
    for seed in SEEDS:
        p = drawn(kind, seed)
        text = " ".join([p.prompt, p.hint, *p.steps])
        assert not WRONG_ARTICLE.search(text), (seed, WRONG_ARTICLE.search(text).group())
