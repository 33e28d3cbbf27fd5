"""The claims mechanism closed, each rule shown failing on a counter-example rendered as the build
renders a page: a comparison written as plain prose beside a fact, a claim whose condition reads
no fact of its sentence (`claim("True")`), a figure typed in any unit the site prints, a worked
example that types its inputs, a source's figure its citation does not state."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from sitebuild.page import load_pages
from sitebuild.pages import Builder
from sitebuild.prose import render_lessons, render_prose


@pytest.fixture(scope="module")
def context() -> dict:
    builder = Builder(Path("unused"))
    return {"f": builder.facts, "base": "../"} | builder.references


def stage(slug: str):
    return next(p for p in load_pages() if p.slug == slug)


def render(page, extra: str, context: dict) -> None:
    render_prose(replace(page, source=page.source + extra), lambda name, state: "", context)


def appended_line(page) -> int:
    """The file's line of a sentence appended after a blank line, counted here apart from the
    build: where the page's Markdown starts in its file, plus its lines."""
    whole = page.path.read_text()
    start = whole[: whole.index(page.source[:200])].count("\n") + 1
    return start + page.source.count("\n") + 2


PLAIN = "PyTorch's default is as good as the best cap, leaving {{ f.ddp_many_exposed }}."


def test_a_comparison_beside_a_fact_in_plain_prose_fails_naming_page_line_sentence(context):
    page = stage("ddp-buckets")
    with pytest.raises(SystemExit) as refused:
        render(page, "\n\n" + PLAIN + "\n", context)
    message = str(refused.value)
    assert "07-ddp-buckets.md" in message
    assert f"line {appended_line(page)}:" in message
    assert "PyTorch's default is as good as the best cap, leaving" in message
    assert "as good as" in message


@pytest.mark.parametrize(
    "sentence",
    [
        "The ring is almost as fast here, at {{ f.ring_64 }}.",
        "Most of the {{ f.ddp_many_allreduce }} hides.",
        "It takes {{ f.nccl_64 }}, about half of the ring's.",
        "The fitted time, {{ f.nccl_64 }}, beats the ring.",
        "The fitted time is close to {{ f.nccl_64 }}.",
        "The ring takes {{ f.ring_64 }}, 7 times slower.",
        "Hierarchy saves {{ f.nccl_64 }} per step.",
        "The card stays below {{ f.nic }}.",
    ],
)
def test_every_comparative_word_beside_a_fact_is_refused(context, sentence):
    with pytest.raises(SystemExit, match="outside a claim"):
        render(stage("why-allreduce"), "\n\n" + sentence + "\n", context)


def test_the_same_words_build_as_a_true_claim_or_a_noclaim_with_a_reason(context):
    page = stage("ddp-buckets")
    claimed = (
        '\n\n{% call claim("f.ddp_many_exposed.value > f.ddp_many_best_exposed.value") %}'
        "The default leaves more than the best cap, {{ f.ddp_many_exposed }}.{% endcall %}\n"
    )
    render(page, claimed, context)
    reasoned = (
        '\n\n{% call noclaim("close is the verb here, no figure is compared") %}Buckets close'
        " after {{ f.ddp_many_exposed }}.{% endcall %}\n"
    )
    render(page, reasoned, context)
    with pytest.raises(SystemExit, match="reason in words"):
        render(page, reasoned.replace("close is the verb here, no figure is compared", ""), context)
    with pytest.raises(SystemExit, match="false at the page's defaults.*more than the best cap"):
        render(page, claimed.replace(">", "<", 1), context)


@pytest.mark.parametrize("condition", ["True", "1 < 2", "f.ring_64.value > 0"])
def test_a_claim_that_reads_no_fact_of_its_sentence_is_refused(context, condition):
    """`claim("True")` proves nothing; nor does a true condition on a fact the sentence does not
    show (ring_64 is not in it)."""
    sentence = (
        f'\n\nThe default leaves {{{{ f.ddp_many_exposed }}}}, {{% call claim("{condition}") %}}'
        "more than the best cap{% endcall %}.\n"
    )
    with pytest.raises(SystemExit, match=r"07-ddp-buckets\.md.*reads no fact the sentence shows"):
        render(stage("ddp-buckets"), sentence, context)


def test_a_condition_not_in_quotes_is_refused_whatever_its_value(context):
    sentence = "\n\n{% call claim(True) %}More than {{ f.ddp_many_exposed }}.{% endcall %}\n"
    with pytest.raises(SystemExit, match="expression in quotes"):
        render(stage("ddp-buckets"), sentence, context)
    takeaway = '{% call claim("True") %}Most of {{ f.ddp_many_exposed }} hides.{% endcall %}'
    with pytest.raises(SystemExit, match="a takeaway.*reads no fact"):
        render_lessons(replace(stage("ddp-buckets"), takeaways=(takeaway,)), context)


TYPED = [
    "64 KiB", "2 MiB", "3 GiB", "1 TiB", "25 MB", "8 B", "1.5 GB/s", "400 Gb/s", "12.5 Gbit/s",
    "22 α", "2α", "3 ulps", "1 ulp", "2 GFLOP", "5 TFLOP/s", "6 FLOPs", "1,100 tokens",
    "3,000 tokens/s", "5 µs", "3 ns", "2 ms", "0.5 s", "82 %", "46–49 GB/s", "1.5 times",
    "7x faster", "7× faster", "16 bytes",
]  # fmt: skip


@pytest.mark.parametrize("figure", TYPED)
def test_every_unit_the_site_prints_typed_by_hand_is_refused(context, figure):
    shown = figure.removesuffix(" faster")  # the factor, without the word after it
    with pytest.raises(SystemExit, match=re.escape(repr(shown))):
        render(stage("why-allreduce"), f"\n\nA run once gave {figure} there.\n", context)


@pytest.mark.parametrize("words", ["8 × H100", "64 × 8 GPUs", "8 × 48", "Llama 3 8B", "GPU 3"])
def test_counts_names_and_arithmetic_are_no_figures(context, words):
    render(stage("why-allreduce"), f"\n\nThe run used {words} there.\n", context)


def test_a_worked_example_names_its_inputs_as_facts(context):
    page = stage("why-allreduce")
    typed = '\n\n<span data-role="example">The default leaves 9.99 ms.</span>\n'
    with pytest.raises(SystemExit, match="names none of its inputs as a fact.*9.99 ms"):
        render(page, typed, context)
    named = (
        '\n\n<span data-role="example">A gradient of {{ f.gradient }} in 5 ms has an algbw of'
        " 2,800 GB/s.</span>\n"
    )
    render(page, named, context)


def test_a_source_s_figure_is_one_its_citation_in_the_catalog_states(context):
    page = stage("why-allreduce")
    with pytest.raises(SystemExit, match=r"source's figure \['999 GB/s'\]"):
        render(
            page, '\n\nNVIDIA: <span data-role="source">NCCL reaches 999 GB/s</span>.\n', context
        )
    cited = '\n\nnccl-tests#290: <span data-role="source">473.6 GB/s at 4 GiB</span>.\n'
    render(page, cited, context)
