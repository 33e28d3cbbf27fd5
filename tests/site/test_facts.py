"""Claims that hold, read from the built HTML: every fact shows one text under its name on every
page; a stage page types no figure with a unit outside a fact, a quotation, an equation, code or
a marked worked example; and the build refuses a false claim or a typed figure, naming the page.

The checks here are written apart from the build's own (BeautifulSoup and a regex of their own),
and each is first shown to fail on a counter-example."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from allreduce_explainer import facts, sources
from helpers import soup
from sitebuild.page import load_pages
from sitebuild.pages import Builder
from sitebuild.prose import render_lessons, render_prose

# a number and a unit a reader would take for a measured or computed figure
UNIT = r"(?:%|[kKMGT]i?B(?:/s)?|[kMGT]b/s|[kMGT]bit/s|[kMGTP]?FLOP(?:s|/s)?|[mµn]?s|bytes?"
UNIT += r"|tokens?(?:/s)?|times|ulps?|α)"
FIGURE = re.compile(rf"(?<![\w.,−-])\d[\d,]*(?:\.\d+)?\s?{UNIT}(?![\w/])")
EXEMPT = ["data.fact", "q", "blockquote", "code", "pre", "math", "[data-role=example]"]
EXEMPT += ["[data-role=source]", "[data-widget]", "nav", "footer", "details.answer"]
EXEMPT += ["[data-role=check-yourself] ol.questions"]  # each question states its inputs


def pages(built: Path) -> dict[str, BeautifulSoup]:
    return {str(p.relative_to(built)): soup(p) for p in sorted(built.rglob("*.html"))}


def texts_by_name(docs: dict[str, BeautifulSoup]) -> dict[str, set[str]]:
    shown = defaultdict(set)
    for doc in docs.values():
        for el in doc.select("data.fact"):
            shown[el["data-fact"]].add(el.get_text())
    return shown


def two_texts(docs: dict[str, BeautifulSoup]) -> dict[str, set[str]]:
    return {name: t for name, t in texts_by_name(docs).items() if len(t) > 1}


def typed(doc: BeautifulSoup) -> list[str]:
    article = doc.find("article")
    if article is None:
        return []
    for selector in EXEMPT:
        for el in article.select(selector):
            el.decompose()
    return FIGURE.findall(article.get_text(" "))


def test_the_checks_fail_on_counter_examples():
    one = BeautifulSoup('<data class="fact" data-fact="x" value="1">1 s</data>', "html.parser")
    other = BeautifulSoup('<data class="fact" data-fact="x" value="1">1.0 s</data>', "html.parser")
    assert two_texts({"a": one, "b": other}) == {"x": {"1 s", "1.0 s"}}
    assert not two_texts({"a": one, "b": one})
    prose = '<article><p>It takes 0.076 s, or <data class="fact">9 ms</data>.</p></article>'
    assert typed(BeautifulSoup(prose, "html.parser")) == ["0.076 s"]
    units = "<article><p>64 KiB, 22 α, 3 ulps, 2 GFLOP, 12.5 Gbit/s, 900 tokens/s.</p></article>"
    assert len(typed(BeautifulSoup(units, "html.parser"))) == 6
    quoted = "<article><p>A maintainer: <q>about 370GB/s</q>; $1$ GPU.</p></article>"
    assert typed(BeautifulSoup(quoted, "html.parser")) == []


def test_every_fact_shows_one_text_on_every_page(built):
    docs = pages(built)
    shown = texts_by_name(docs)
    assert len(shown) > 150  # the pages quote their figures as facts
    assert two_texts(docs) == {}


def test_a_fact_s_value_is_what_its_text_says(built):
    """The `value` a machine reads agrees with the text a reader reads, within its rounding."""
    for doc in pages(built).values():
        for el in doc.select("data.fact"):
            text, value = el.get_text(), el["value"]
            m = re.fullmatch(r"([\d,]+(?:\.\d+)?) (ms|µs|s|%)", text)
            if m:
                scale = {"s": 1, "ms": 1e-3, "µs": 1e-6, "%": 1e-2}[m.group(2)]
                number = float(m.group(1).replace(",", "")) * scale
                assert float(value) == pytest.approx(number, rel=1e-3), (text, value)


def test_no_page_types_a_figure_with_a_unit(built):
    """The build holds the stage pages to the rule; the glossary, the course page and the
    quick reference keep it too."""
    docs = pages(built)
    stages = {p.slug for p in load_pages() if p.number is not None}
    assert stages <= {path.split("/")[0] for path in docs}
    assert {path: typed(doc) for path, doc in docs.items() if typed(doc)} == {}


def context(builder: Builder) -> dict:
    return {"f": builder.facts, "base": "../"} | builder.references


def stage(slug: str):
    return next(p for p in load_pages() if p.slug == slug)


def test_a_false_claim_fails_the_build_naming_page_and_sentence():
    builder = Builder(Path("unused"))
    page = stage("ddp-buckets")
    bad = replace(
        page,
        source=page.source
        + '\n{% call claim("f.ddp_many_exposed.value < f.ddp_many_best_exposed.value") %}'
        + "PyTorch's default is as good as the best cap.{% endcall %}\n",
    )
    with pytest.raises(SystemExit, match=r"07-ddp-buckets\.md.*false.*PyTorch's default is as"):
        render_prose(bad, lambda name, state: "", context(builder))
    takeaway = replace(page, takeaways=('{% call claim("1 > 2") %}Most of it hides.{% endcall %}',))
    with pytest.raises(SystemExit, match="Most of it hides"):
        render_lessons(takeaway, context(builder))


def test_a_figure_typed_into_prose_fails_the_build_unless_quoted_or_worked():
    builder = Builder(Path("unused"))
    page = stage("why-allreduce")
    typed_in = replace(page, source=page.source + "\nThe ring takes 0.55 s here.\n")
    with pytest.raises(SystemExit, match=r"01-why-allreduce\.md.*'0\.55 s'"):
        render_prose(typed_in, lambda name, state: "", context(builder))
    allowed = (
        '\nA maintainer: <q>about 370GB/s</q>. <span data-role="example">A {{ f.gradient }} '
        "all-reduce in 5 ms has an algbw of 2,800 GB/s.</span> The rate is {{ f.nic }}.\n"
    )
    render_prose(replace(page, source=page.source + allowed), lambda n, s: "", context(builder))
    objective = replace(page, objectives=("Explain why 16 bytes per parameter is a lot.",))
    with pytest.raises(SystemExit, match="an objective.*16 bytes"):
        render_lessons(objective, context(builder))


def test_facts_carry_their_value_in_base_units():
    f = facts.named({"t": "7.7 ms", "share": "82 %", "size": "25 MiB", "name": "Ring Simple"})
    assert f["t"].value == pytest.approx(7.7e-3)
    assert f["share"].value == pytest.approx(0.82)
    assert f["size"].value == 25 * 2**20
    assert f["name"].value is None
    assert str(f["t"]) == '<data class="fact" data-fact="t" value="0.0077">7.7 ms</data>'
    params = facts.named({"p": ("7B", 7e9)})["p"]
    assert params.value == 7e9  # "7B" alone would read as 7 bytes


@pytest.mark.parametrize(
    "name",
    ["NCCL's own figure", "NCCL's model", "NCCL's cost model", "NCCL {{ f.nccl_version }}'s own "
     "cost model", "its own cost model", "NCCL's model's time"],
)  # fmt: skip
def test_a_retired_name_for_a_source_of_time_fails_the_build(name):
    builder = Builder(Path("unused"))
    page = stage("latency-ring-vs-tree")
    old = replace(page, source=page.source + f"\nThe dotted line is {name}.\n")
    with pytest.raises(SystemExit, match="05-latency.*names a source of time.*fitted time"):
        render_prose(old, lambda name, state: "", context(builder))


def test_a_retired_name_in_a_widget_fails_the_build():
    """A widget's drawn HTML (its template's labels, its state's readouts and narration) is
    held to the names as the prose is."""
    builder = Builder(Path("unused"))
    page = stage("ddp-buckets")
    planted = "<p>All-reduces timed by NCCL&#39;s model.</p>"
    with pytest.raises(SystemExit, match="07-ddp-buckets.*NCCL's model"):
        render_prose(page, lambda name, state: planted, context(builder))


def test_each_source_of_time_has_one_glossary_entry_from_its_one_home(built):
    glossary = BeautifulSoup((built / "glossary" / "index.html").read_text(), "html.parser")
    entries = {dt.get_text(): dt.find_next("dd").get_text() for dt in glossary.select("dt")}
    for s in sources.SOURCES:
        assert s.meaning[1:] in entries[s.name]
        assert (
            f"Drawn {({'dash': 'dashed', 'dot': 'dotted', 'solid': 'solid'})[s.dash]}"
            in (entries[s.name])
        )
