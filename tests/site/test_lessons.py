"""Every page a lesson, checked on the built HTML: the hooks, the computed reading time,
the glossary and its first-use links, the license in every footer and embed, closed "Deeper"
boxes, and no text written for insiders. The HTML is parsed with BeautifulSoup, apart from the
build's own parser, and the rules are re-derived here from their statement in sitebuild/lessons.py.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import frontmatter
import pytest
import yaml
from bs4 import BeautifulSoup, NavigableString

from allreduce_explainer.widgets import SPECS
from helpers import soup, stages
from sitebuild import lessons
from sitebuild import pages as pages_module
from sitebuild.pages import Builder

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = yaml.safe_load((ROOT / "content" / "glossary.yaml").read_text())["terms"]
STAGES = sorted(p for p in (ROOT / "content").glob("[0-9]*.md"))
INSIDER = [
    "the seed's",
    "seed's",
    "issue 8",
    "REFERENCE.md",
    "stage 7's engine",
    "The tests check",
    "i // 4",
    "12·L·d²",
    "bisection",
    "octave",
    "../shared",
    "DESIGN.md",
]
LICENSE_LINE = "Code MIT, text and figures CC BY 4.0"
# where a glossary link would be hidden or unclickable: never linked, never counted as a use
NO_LINK = {"a", "button", "code", "h1", "h2", "h3", "h4", "h5", "h6", "kbd", "label", "math"}
NO_LINK |= {"option", "pre", "samp", "script", "select", "style", "summary", "sup", "svg"}
NO_LINK |= {"textarea", "title"}


def stage_slugs() -> list[str]:

    return [frontmatter.load(p).metadata["slug"] for p in STAGES]


def content_pages(built: Path) -> list[Path]:
    return sorted(
        p
        for p in built.glob("*/index.html")
        if p.parent.name not in ("embed", "glossary") and p.parent != built
    )


# ---- the hooks ------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", stage_slugs())
def test_every_stage_page_opens_and_closes_as_a_lesson(built, slug):
    s = soup(built / slug / "index.html")
    article = s.find("article")
    objectives = article.select_one("[data-role=objectives]")
    assert objectives is not None and objectives.find("h2").get_text() == "In this page"
    assert 2 <= len(objectives.select("ul.objectives > li")) <= 4
    assert objectives.select_one("[data-role=reading-time]") is not None
    for a in objectives.select(".builds-on a"):  # the pages it builds on, by their titles
        target = soup(built / slug / a["href"])
        assert a.get_text() == target.find("h1").get_text()
    # the opening comes before the prose, the closing after it
    children = [c for c in article.children if getattr(c, "name", None)]
    takeaways = article.select_one("[data-role=takeaways]")
    check = article.select_one("[data-role=check-yourself]")
    assert children.index(objectives) < children.index(takeaways) < children.index(check)
    assert len(takeaways.select("ol > li")) == 3
    questions = check.select("ol.questions > li")
    assert len(questions) >= 2
    for q in questions:
        answer = q.find("details")
        assert answer is not None and not answer.has_attr("open")
        assert answer.find("summary").get_text() == "Show the answer"
        assert answer.find("p").get_text().strip()


# ---- reading time -------------------------------------------------------------------------------


def words_of(html: str) -> tuple[int, int]:
    """(main words, Deeper words) of a page's prose, by the rule in sitebuild/lessons.py."""
    s = BeautifulSoup(html, "html.parser")
    for e in s.select(
        "[data-widget], math, code, pre, script, style, svg, sup, button, select, .footnote"
    ):
        e.decompose()
    everything = len(lessons.WORD.findall(s.get_text()))
    for e in s.select("details[data-role=deeper]"):
        e.decompose()
    main = len(lessons.WORD.findall(s.get_text()))
    return main, everything - main


def prose_of(article) -> str:
    """The page's prose: the article without its title, the lesson boxes and what follows them."""
    article = BeautifulSoup(str(article), "html.parser").find("article")
    for e in article.select(".stage-label, h1, [data-role=objectives]"):
        e.decompose()
    end = article.select_one("[data-role=takeaways]")
    for e in [end, *end.find_next_siblings()]:
        e.decompose()
    return str(article)


def lesson_box_words(article) -> int:
    """Words of the lesson boxes a reader reads: objectives, takeaways, questions and answers."""
    texts = [li.get_text() for li in article.select("ul.objectives > li")]
    texts += [li.get_text() for li in article.select("[data-role=takeaways] ol > li")]
    for q in article.select("ol.questions > li"):
        texts += [p.get_text() for p in q.find_all("p")]
    return sum(len(lessons.WORD.findall(t)) for t in texts)


def widget_minutes_of(widget) -> float:
    """A widget's minutes by the rule of sitebuild/lessons.py, read from its built HTML: a
    stepper's steps and narration from its inline state, a chart's controls from its spec (a
    parameter with a label has a control)."""
    kind = widget["data-kind"]
    if kind == "stepper":
        state = json.loads(widget.select_one('script[type="application/json"]').string)
        narration = " ".join(
            BeautifulSoup(t, "html.parser").get_text(" ")
            for f in state["frames"]
            for t in f["narration"]
        )
        words = len(lessons.WORD.findall(narration))
        return 1 + 0.5 * len(state["frames"]) + words / 140
    if kind in ("chart", "panel"):
        spec = SPECS[widget["data-widget"]]
        return 2 + 0.75 * sum(1 for param in spec.values() if param.label)
    return {"exercise": 3, "sheet": 5}[kind]


def read_stage(built: Path, slug: str) -> tuple:
    """A stage page's article, its reading-time line and its prose's words (main, deeper)."""
    s = soup(built / slug / "index.html")
    article = s.find("article")
    return article, s.select_one("[data-role=reading-time]"), *words_of(prose_of(article))


@pytest.mark.parametrize("slug", stage_slugs())
def test_reading_and_study_time_are_computed_from_the_words_and_widgets(built, slug):
    article, shown, main, deeper = read_stage(built, slug)
    boxes = lesson_box_words(article)
    assert main > 300 and boxes > 100
    assert int(shown["data-words"]) == main
    assert int(shown["data-box-words"]) == boxes
    reading = math.ceil((main + boxes) / 140)
    assert lessons.WORDS_PER_MINUTE == 140
    assert int(shown["data-reading-min"]) == reading
    widgets = article.select("[data-widget][data-kind]")
    assert widgets, "every stage page has a widget"
    study = reading + math.ceil(sum(widget_minutes_of(w) for w in widgets))
    assert int(shown["data-study-min"]) == study
    text = shown.get_text()
    assert f"About {reading} min to read" in text and f"{study} min to study" in text
    if deeper:
        assert f"+{math.ceil(deeper / 140)} min" in text


# The review of the pages (teaching, its section 1.1) estimated what a first-time reader needs:
# reading = the prose and the three lesson boxes at 130 words a minute; study = reading + the
# minutes it gave each page's widgets + 2 to 5 minutes (here 3.5) per exercise. Its widget
# minutes per page are its realistic study less its realistic reading and its exercises, at the
# time (pages 8 and 9 had none), each page's `review_minutes` in its front matter; the rest is
# recomputed from the built page, so the oracle follows the pages as they are trimmed or gain
# exercises.


def test_the_review_covers_every_stage():
    assert [p.slug for p in stages() if p.review_minutes is None] == []


@pytest.mark.parametrize("slug", stage_slugs())
def test_claimed_times_are_within_a_quarter_of_a_realistic_estimate(built, slug):
    article, shown, main, _ = read_stage(built, slug)
    reading = (main + lesson_box_words(article)) / 130
    exercises = len(article.select("[data-widget][data-kind=exercise]"))
    review = next(p.review_minutes for p in stages() if p.slug == slug)
    study = reading + review + 3.5 * exercises
    claimed_reading, claimed_study = int(shown["data-reading-min"]), int(shown["data-study-min"])
    assert 0.75 * reading <= claimed_reading <= 1.25 * reading, (claimed_reading, reading)
    assert 0.75 * study <= claimed_study <= 1.25 * study, (claimed_study, study)


def test_study_time_follows_the_words_not_what_is_around_them():
    words = "<p>" + "one two-three it's " * 100 + "</p>"  # 300 words
    assert lessons.study_time(words, []) == {
        "words": 300,
        "box_words": 0,
        "numbers": 0,
        "reading_min": 3,
        "deeper_words": 0,
        "deeper_min": 0,
        "widgets": 0,
        "study_min": 3,
    }
    longer = lessons.study_time(words + "<p>" + "more " * 120 + "</p>", [4.5, 2.25])
    assert (longer["words"], longer["reading_min"]) == (420, 3)
    assert longer["study_min"] == 3 + 7  # 6.75 widget minutes, rounded up
    boxed = lessons.study_time(words, [], ("an objective", "a takeaway of five words"))
    assert (boxed["box_words"], boxed["reading_min"]) == (7, 3)
    assert lessons.study_time(words, [], ("w " * 121,))["reading_min"] == 4  # 421 words
    not_prose = (
        '<figure data-widget="x"><p>' + "widget " * 500 + "</p></figure>"
        "<p><math><mi>x</mi></math><code>a b c</code><sup>1</sup></p>"
        '<pre>x y z</pre><div class="footnote"><p>' + "note " * 500 + "</p></div>"
    )
    assert lessons.study_time(words + not_prose, [])["words"] == 300
    practice = '<aside data-role="practice"><p>In PyTorch</p><pre>import torch</pre></aside>'
    assert lessons.study_time(words + practice, [])["words"] == 302
    box = '<details data-role="deeper"><summary>Deeper</summary><p>' + "d " * 250 + "</p></details>"
    t = lessons.study_time(words + box, [])
    assert (t["words"], t["deeper_words"], t["deeper_min"]) == (300, 251, 2)  # and "Deeper"


def test_a_steppers_minutes_grow_with_its_steps_and_narration():
    def stepper(steps: int, words: int) -> float:
        frames = [{"narration": ["<b>word</b> " * words]} for _ in range(steps)]
        return lessons.widget_minutes("stepper", {"frames": frames}, controls=3)

    assert stepper(4, 0) == 1 + 4 * 0.5
    assert stepper(4, 35) == 1 + 4 * 0.5 + 4 * 35 / 140
    assert stepper(9, 0) > stepper(4, 0)
    assert lessons.widget_minutes("chart", {}, controls=4) == 2 + 4 * 0.75
    assert lessons.widget_minutes("panel", {}, controls=0) == 2
    assert lessons.widget_minutes("exercise", {}, controls=1) == 3


def test_figures_are_counted_in_the_main_prose_only():
    body = (
        "<p>450 GB/s on 8 H100s, 2.5 GB and 1,100 tokens; 46–49 GB/s, "
        '<a href="../x/">page 6</a>.</p>'
        "<p><math><mn>2</mn></math><code>-b 8</code><sup>3</sup></p>"
        '<details data-role="deeper"><summary>Deeper</summary><p>17 MB</p></details>'
        '<figure data-widget="w">64</figure><div class="footnote"><p>2019</p></div>'
        "<p>H100 and GPT-2 are names, BF16 too; GPU 0, 2(n − 1) steps and 8 GPUs are no figures."
        " 82% and 1.5 times are, 3 s and 0.5 ms too.</p>"
    )
    # 450 GB/s, 2.5 GB, 1,100 tokens, (46–)49 GB/s, 82%, 1.5 times, 3 s, 0.5 ms
    assert lessons.prose_numbers(body) == 8


@pytest.mark.parametrize("slug", stage_slugs())
def test_a_stage_quotes_at_most_40_figures_in_its_main_prose(built, slug):
    """A figure a reader must take in is a number with its unit; more than about 40 on a page
    and they stop being read (the rest belong in Deeper boxes)."""
    shown = soup(built / slug / "index.html").select_one("[data-role=reading-time]")
    assert int(shown["data-numbers"]) <= 40


def test_the_shown_reading_time_changes_when_the_words_change(tmp_path, monkeypatch):

    extra = 600
    real = pages_module.load_pages

    def longer_page_two():
        more = "\n\n" + "word " * extra + "\n"
        return [replace(p, source=p.source + more) if p.number == 2 else p for p in real()]

    before = Builder(tmp_path / "before")
    before.build_pages()
    monkeypatch.setattr(pages_module, "load_pages", longer_page_two)
    Builder(tmp_path / "after").build_pages()

    def shown(site: Path) -> dict:
        return soup(site / "ring-reduce-scatter" / "index.html").select_one(
            "[data-role=reading-time]"
        )

    a, b = shown(tmp_path / "before"), shown(tmp_path / "after")
    assert int(b["data-words"]) == int(a["data-words"]) + extra
    words = int(b["data-words"]) + int(b["data-box-words"])
    assert int(b["data-reading-min"]) == math.ceil(words / 140)
    assert int(b["data-reading-min"]) >= int(a["data-reading-min"]) + 4
    assert b.get_text() != a.get_text()


def test_the_contents_page_states_the_core_path_and_its_time(built):

    core = [frontmatter.load(p).metadata for p in STAGES]
    core = [m["slug"] for m in core if m.get("core")]
    assert core, "some stages are the core path"
    home = soup(built / "index.html")
    section = home.select_one("[data-role=core-path]")
    linked = [a["href"].split("/")[0] for a in section.select("ol a")]
    assert linked == core
    times = [
        soup(built / slug / "index.html").select_one("[data-role=reading-time]") for slug in core
    ]
    reading = sum(int(t["data-reading-min"]) for t in times)
    study = sum(int(t["data-study-min"]) for t in times)
    text = section.get_text(" ", strip=True)
    assert f"About {reading} min to read, {study} min to study" in text
    further = home.select_one("[data-role=further]")
    assert [a["href"].split("/")[0] for a in further.select("ol a")] == [
        s for s in stage_slugs() if s not in core
    ]
    lede = " ".join(further.find("p").get_text().split())
    for a in further.select("ol a"):  # each later stage's subject, from its title
        head = a.get_text().split(":")[0]
        assert head.lower() in lede.lower(), (head, lede)
    assert "shards" in lede and "in-network reduction" in lede


# ---- the glossary -------------------------------------------------------------------------------


def test_the_glossary_page_lists_every_term_with_its_anchor_and_page(built):
    s = soup(built / "glossary" / "index.html")
    assert len({t["anchor"] for t in GLOSSARY}) == len(GLOSSARY)
    for t in GLOSSARY:
        entry = s.find(id=t["anchor"])
        assert entry is not None, t["term"]
        assert entry.find("dt").get_text() == t["term"]
        dd = entry.find("dd")
        # the definition's own words, in order, with each quoted fact as its data element
        text, at = dd.get_text(), 0
        for piece in re.split(r"\{\{.*?\}\}|<[^>]+>", t["definition"]):
            assert text.find(piece, at) >= at, (t["term"], piece)
            at = text.find(piece, at) + len(piece)
        facts = re.findall(r"\{\{ f\.(\w+) \}\}", t["definition"])
        assert [d["data-fact"] for d in dd.select("data.fact")] == facts
        link = dd.find("a")
        assert link["href"] == f"../{t['page']}/index.html"
        assert (built / t["page"] / "index.html").is_file()
    assert len(s.select(".glossary-entry")) == len(GLOSSARY)


def shown_definitions(built: Path) -> dict[str, str]:
    """Each term's definition as the glossary page shows it (its facts rendered), by anchor:
    a link's title reads the same."""
    page = soup(built / "glossary" / "index.html")
    out = {}
    for entry in page.select(".glossary-entry"):
        dd = entry.find("dd")
        dd.select_one(".explained-in").decompose()
        out[entry["id"]] = dd.get_text().strip()
    return out


def alias_matches(text: str) -> list[tuple[int, int, str]]:
    """Leftmost-longest uses of the glossary's aliases in one text: (start, end, anchor). An
    alias is a whole word (hyphens belong to words), case-insensitive unless match_case."""
    found = []
    for t in GLOSSARY:
        for alias in t["aliases"]:
            flags = 0 if t.get("match_case") else re.IGNORECASE
            pattern = r"(?<![\w-])" + re.escape(alias) + r"(?![\w-])"
            found += [(m.start(), m.end(), t["anchor"]) for m in re.finditer(pattern, text, flags)]
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    taken, end = [], -1
    for start, stop, anchor in found:
        if start >= end:
            taken.append((start, stop, anchor))
            end = stop
    return taken


def uses_in_order(article) -> list[tuple[str, bool, int | None]]:
    """Every use of a glossary term in the article, in order: (anchor, linked here?, box)."""
    boxes = article.select("details[data-role=deeper]")
    out = []
    for text in article.find_all(string=True):
        if not isinstance(text, NavigableString) or type(text) is not NavigableString:
            continue  # comments, doctype
        parents = list(text.parents)
        box = next((boxes.index(p) for p in parents if p in boxes), None)
        if text.parent.name == "a" and "glossary-term" in text.parent.get("class", []):
            out.append((text.parent["href"].rsplit("#", 1)[1], True, box))
            continue
        if any(
            p.name in NO_LINK
            or p.has_attr("data-widget")
            or p.get("data-glossary") == "skip"
            or "footnote" in (p.get("class") or [])
            for p in parents
        ):
            continue
        out += [(anchor, False, box) for _, _, anchor in alias_matches(str(text))]
    return out


@pytest.mark.parametrize("slug", stage_slugs() + ["use-in-your-course", "further-reading"])
def test_every_glossary_term_a_page_uses_is_linked_at_its_first_use(built, slug):
    s = soup(built / slug / "index.html")
    article = s.find("article")
    main: set[str] = set()
    boxes: dict[int, set[str]] = {}
    used = 0
    for anchor, linked, box in uses_in_order(article):
        seen = main if box is None else main | boxes.setdefault(box, set())
        expected = anchor not in seen
        assert linked == expected, (
            f"{slug}: {anchor!r} {'linked again' if linked else 'not linked at its first use'}"
            f"{'' if box is None else f' in Deeper box {box}'}"
        )
        if expected:
            (main if box is None else boxes[box]).add(anchor)
            used += 1
    definitions = shown_definitions(built)
    for a in article.select("a.glossary-term"):
        anchor = a["href"].split("#")[1]
        assert a["href"] == f"../glossary/#{anchor}"
        assert a["title"] == definitions[anchor]
    if slug in stage_slugs():
        assert used >= 5, f"{slug}: only {used} glossary terms"


def test_glossary_links_skip_code_math_headings_links_and_widgets():
    terms = [
        {"term": "tree", "anchor": "tree", "aliases": ["tree"], "definition": "A tree."},
        {
            "term": "double binary tree",
            "anchor": "dbt",
            "aliases": ["double binary tree"],
            "definition": 'Two "trees".',
        },
        {
            "term": "ZeRO",
            "anchor": "zero",
            "aliases": ["ZeRO"],
            "match_case": True,
            "definition": "Z.",
        },
    ]
    page = (
        "<header>tree</header><article><h2>tree</h2><code>tree</code>"
        '<figure data-widget="w">tree</figure><a href="x">tree</a>'
        "<p>zero, a tree-based double binary tree, then ZeRO and a Tree.</p></article>"
    )
    out = lessons.link_glossary(page, terms, "../")
    assert out.startswith(
        "<header>tree</header><article><h2>tree</h2><code>tree</code>"
        '<figure data-widget="w">tree</figure><a href="x">tree</a>'
    )
    assert out.endswith(
        '<p>zero, a tree-based <a class="glossary-term" href="../glossary/#dbt" '
        'title="Two &quot;trees&quot;.">double binary tree</a>, then <a class="glossary-term" '
        'href="../glossary/#zero" title="Z.">ZeRO</a> and a <a class="glossary-term" '
        'href="../glossary/#tree" title="A tree.">Tree</a>.</p></article>'
    )


def test_a_term_first_met_in_a_deeper_box_is_linked_there_and_again_in_the_main_text():
    terms = [{"term": "ring", "anchor": "ring", "aliases": ["ring"], "definition": "R."}]
    page = (
        '<article><details data-role="deeper"><summary>Deeper</summary><p>ring ring</p>'
        "</details><p>ring ring</p>"
        '<details data-role="deeper"><summary>Deeper</summary><p>ring</p></details></article>'
    )
    out = lessons.link_glossary(page, terms, "../")
    assert out.count("glossary-term") == 2  # once in the first box, once in the main text


# ---- license, Deeper boxes, insider phrases --------------------------------------------------


def every_html(built: Path) -> list[Path]:
    return sorted(built.rglob("index.html"))


def test_license_and_citation_in_every_footer_and_embed(built):
    assert (built / "LICENSE.txt").read_text() == (ROOT / "LICENSE").read_text()
    assert "CC BY 4.0" in (ROOT / "LICENSE").read_text()
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert (built / "CITATION.cff").read_text() == (ROOT / "CITATION.cff").read_text()
    embeds = 0
    for path in every_html(built):
        s = soup(path)
        footer = s.find("footer")
        assert footer is not None, path
        line = footer.select_one("[data-role=license]")
        assert line is not None and LICENSE_LINE in line.get_text(), path
        assert (path.parent / line.find("a")["href"]).resolve() == (built / "LICENSE.txt")
        cite = footer.select_one("[data-role=cite]")
        assert cff["title"] in cite.get_text() and cff["version"] in cite.get_text()
        assert (path.parent / cite.find("a")["href"]).resolve() == (built / "CITATION.cff")
        embeds += "embed" in path.parts
    assert embeds >= 10


def test_deeper_boxes_are_closed_with_a_summary(built):
    count = 0
    for path in content_pages(built):
        for box in soup(path).select("details[data-role=deeper]"):
            assert not box.has_attr("open"), path
            assert box.find("summary").get_text().startswith("Deeper")
            count += 1
    assert count >= 10


def visible_text(path: Path) -> str:
    s = soup(path)
    for e in s.select("script, style, template"):
        e.decompose()
    return s.get_text(" ")


def state_strings(path: Path) -> list[str]:
    """Every string in the widgets' inline states: a stepper's later narrations, a readout."""
    out = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            [walk(v) for v in x.values()]
        elif isinstance(x, list):
            [walk(v) for v in x]

    for script in soup(path).select('script[type="application/json"]'):
        walk(json.loads(script.string))
    return out


def test_no_insider_phrase_on_any_page(built):
    found = []
    for path in every_html(built):
        texts = [visible_text(path), *state_strings(path)]
        for phrase in INSIDER:
            if any(phrase.lower() in t.lower() for t in texts):
                found.append((path.relative_to(built).as_posix(), phrase))
    assert found == []


# the terms of the sharded and in-network pages, each explained on the page that teaches it
EXPLAINED_IN = {
    "zero": "sharded-data-parallel",
    "fsdp": "sharded-data-parallel",
    "hsdp": "sharded-data-parallel",
    "optimizer-state": "sharded-data-parallel",
    "adam": "sharded-data-parallel",
    "mixed-precision": "sharded-data-parallel",
    "sharp": "in-network-reduction",
    "nvls": "in-network-reduction",
    "nvswitch": "in-network-reduction",
    "nvlstree": "in-network-reduction",
    "collnet": "in-network-reduction",
    "reduce": "what-each-gpu-sends",
}


def test_each_term_is_explained_on_a_page_that_uses_it(built):
    s = soup(built / "glossary" / "index.html")
    for anchor, slug in EXPLAINED_IN.items():
        link = s.find(id=anchor).select_one(".explained-in a")
        assert link["href"] == f"../{slug}/index.html", anchor
        assert link.get_text() == soup(built / slug / "index.html").find("h1").get_text()
    for t in GLOSSARY:  # the page it points to links the term: it uses it
        article = soup(built / t["page"] / "index.html").find("article")
        hrefs = {a["href"] for a in article.select("a.glossary-term")}
        assert f"../glossary/#{t['anchor']}" in hrefs, (t["term"], t["page"])
