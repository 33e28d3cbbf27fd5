"""The pages as one typed record: bad front matter fails the build naming the file and the key;
a stage's number is its place, which `{{ stage(slug) }}`, the teacher's sheet and the README
show. The oracle for a stage's number is its file's name (content/07-ddp-buckets.md is 7)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import frontmatter
import jinja2
import pytest
from bs4 import BeautifulSoup

from allreduce_explainer import nccl
from allreduce_explainer.exercises import TITLES
from allreduce_explainer.widgets import SPECS
from helpers import soup
from sitebuild.page import course, load_pages, normalize
from sitebuild.stageref import stage_references

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "content").glob("[0-9][0-9]-*.md"))
# slug -> stage number, from the file names alone
NUMBER = {frontmatter.load(f).metadata["slug"]: int(f.name[:2]) for f in FILES}
GOOD = {"title": "A page", "slug": "a-page", "order": 1, "summary": "What it says."}
PATH = Path("content", "01-a-page.md")  # a page that is not there


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"title": None}, "title"),
        ({"slug": None}, "slug"),
        ({"order": None}, "order"),
        ({"summary": None}, "summary"),
        ({"exercise": ["ring_time"]}, "exercise"),  # a typo of `exercises`
        ({"order": "1"}, "order"),
        ({"order": True}, "order"),
        ({"order": 0}, "order"),
        ({"slug": "Ring Reduce"}, "slug"),
        ({"title": ""}, "title"),
        ({"core": "yes"}, "core"),
        ({"builds_on": "why-allreduce"}, "builds_on"),
        ({"exercises": ["ring_tme"]}, "exercises"),
        ({"exercises": ["ring_time", "ring_time"]}, "exercises"),
        ({"objectives": "Learn it."}, "objectives"),
        ({"takeaways": [""]}, "takeaways"),
        ({"questions": [{"q": "Why?"}]}, "questions"),
        ({"questions": [{"q": "Why?", "a": 3}]}, "questions"),
        ({"objectives": ["A.", "B."], "practice": [["q1"]]}, "practice"),  # one list short
        ({"objectives": ["A."], "practice": [[]]}, "practice"),  # an objective left bare
        ({"objectives": ["A."], "practice": [["q1"]]}, "practice"),  # no such question
        ({"objectives": ["A."], "exercises": ["ring_time"], "practice": [["rs_cell"]]}, "practice"),
        (
            {
                "objectives": ["A."],
                "exercises": ["ring_time", "rs_cell"],
                "practice": [["rs_cell"]],
            },
            "practice",
        ),  # a kind that exercises no objective
    ],
)
def test_normalize_refuses_bad_front_matter_naming_the_file_and_the_key(change, key):
    meta = {k: v for k, v in (GOOD | change).items() if v is not None}
    with pytest.raises(SystemExit) as e:
        normalize(meta, PATH, "")
    assert str(PATH) in str(e.value) and repr(key) in str(e.value)


def test_normalize_keeps_every_key_typed():
    meta = GOOD | {
        "core": True,
        "builds_on": ["b"],
        "exercises": ["ring_time"],
        "objectives": ["o"],
        "takeaways": ["t"],
        "questions": [{"q": "q?", "a": "a."}],
    }
    page = normalize(meta, PATH, "text")
    assert (page.title, page.slug, page.order, page.core) == ("A page", "a-page", 1, True)
    assert page.builds_on == ("b",) and page.exercises == ("ring_time",)
    assert page.questions[0].q == "q?" and page.questions[0].a == "a."
    assert page.source == "text" and page.number is None


def pages(*orders: int, **changes: dict):
    """Pages of the given orders, slugs p1, p2, ...; `changes` by slug."""
    out = []
    for i, order in enumerate(orders, 1):
        meta = GOOD | {"slug": f"p{i}", "order": order} | changes.get(f"p{i}", {})
        out.append(normalize(meta, Path("content", f"p{i}.md"), ""))
    return out


@pytest.mark.parametrize(
    ("made", "key"),
    [
        (lambda: pages(1, 2, 2), "order"),
        (lambda: pages(1, 3), "order"),  # a gap
        (lambda: pages(2, 3), "order"),  # not from 1
        (lambda: pages(1, 2, p2={"slug": "p1"}), "slug"),
        (lambda: pages(1, 2, p2={"builds_on": ["p9"]}), "builds_on"),
        (
            lambda: pages(1, 2, p1={"exercises": ["ring_time"]}, p2={"exercises": ["ring_time"]}),
            "exercises",
        ),
    ],
)
def test_the_course_refuses_pages_that_disagree(made, key):
    with pytest.raises(SystemExit, match=repr(key)):
        course(made())


def test_a_stage_number_is_its_place_and_extra_pages_have_none():
    got = course(pages(2, 95, 1, 3))
    assert [(p.slug, p.number) for p in got] == [("p3", 1), ("p1", 2), ("p4", 3), ("p2", None)]


def test_the_site_numbers_its_stages_as_its_files_do():
    site = load_pages()
    assert {p.slug: p.number for p in site if p.number is not None} == NUMBER
    assert [p.slug for p in site if p.number is not None] == sorted(NUMBER, key=NUMBER.get)


def render(source: str, base: str = "../") -> str:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return env.from_string(source).render(base=base, **stage_references(load_pages()))


@pytest.mark.parametrize("slug", sorted(NUMBER))
def test_stage_prints_the_number_with_its_link(slug):
    n = NUMBER[slug]
    assert render(f'{{{{ stage("{slug}") }}}}') == f'<a href="../{slug}/index.html">stage {n}</a>'
    assert render(f'{{{{ stage("{slug}", "Page") }}}}', base="") == (
        f'<a href="{slug}/index.html">Page {n}</a>'
    )


def test_stage_list_links_each_number_and_spans():
    one, _, three, _, five, six = sorted(NUMBER, key=NUMBER.get)[:6]
    text = render(f'{{{{ stage_list(("{one}", "{three}"), "{five}", "{six}", word="Stages") }}}}')
    html = BeautifulSoup(text, "html.parser")
    assert html.get_text() == "Stages 1–3, 5 and 6"
    assert [a["href"] for a in html.select("a")] == [
        f"../{s}/index.html" for s in (one, three, five, six)
    ]


@pytest.mark.parametrize("slug", ["ddp-bucket", "further-reading", "teachers-sheet"])
def test_a_reference_to_no_stage_fails_the_build(slug):
    with pytest.raises(SystemExit, match=slug):
        render(f'{{{{ stage("{slug}") }}}}')
    with pytest.raises(SystemExit, match=slug):
        render(f'{{{{ stage_list("why-allreduce", "{slug}") }}}}')


def test_every_stage_link_in_the_site_names_the_stage_it_opens(built):
    """Whatever page a "stage N" link is on, the page it opens says "Stage N of ..."."""
    labels = {
        slug: soup(built / slug / "index.html").select_one(".stage-label").get_text()
        for slug in NUMBER
    }
    seen = 0
    for html in built.glob("*/index.html"):
        for a in soup(html).select("main a[href^='../']"):
            slug = a["href"].split("/")[1]
            if slug in NUMBER and re.fullmatch(r"(?i)(stage|page) \d+|\d+", a.get_text()):
                number = a.get_text().split()[-1]
                assert labels[slug].startswith(f"Stage {number} of"), (html, a)
                seen += 1
    assert seen >= 30  # the references the content makes


def test_no_stage_number_is_typed_in_the_prose(built):
    """Outside links and the computed "Stage 3 of 10", "stage 3" in the prose is a number nobody
    renumbers. ZeRO's own stages are left out (the footnotes; the glossary says ZeRO-3), and so
    are the widgets, whose labels come from the core, which cannot read the pages."""
    for html in built.glob("*/index.html"):
        main = soup(html).select_one("main")
        for e in main.select("a, .stage-label, .footnote, .widget"):
            e.decompose()
        text = main.get_text(" ")
        typed = re.findall(r"(?i)\b(?:stage|page)s? \d+", text)
        assert typed == [], (html.parent.name, typed)


def test_the_teachers_sheet_numbers_stages_by_their_place(built):
    for html in (built / "teachers-sheet" / "index.html", built / "embed" / "exercise_sheet"):
        if html.is_dir():
            html = html / "index.html"
        groups = soup(html).select(".sheet-stage")
        listed = {}
        for g in groups:
            n = int(re.match(r"Stage (\d+) ·", g.select_one(".sheet-stage-title").get_text())[1])
            listed[n] = [i["value"] for i in g.select("input[data-role=kind-choice]")]
        want = {
            int(f.name[:2]): list(frontmatter.load(f).metadata["exercises"])
            for f in FILES
            if frontmatter.load(f).metadata.get("exercises")
        }
        assert listed == want, html


def test_the_readme_lists_the_stages_in_order_by_their_titles():
    text = (ROOT / "README.md").read_text().split("## The pages\n", 1)[1].strip().split("\n\n")[0]
    entries = re.split(r"(?:^|\s)(\d+)\. ", " ".join(text.split()))[1:]
    numbers, descriptions = entries[0::2], entries[1::2]
    titles = {int(f.name[:2]): frontmatter.load(f).metadata["title"] for f in FILES}
    assert [int(n) for n in numbers] == sorted(titles)
    for n, description in zip(numbers, descriptions, strict=True):
        head = re.split(r"[:,]", titles[int(n)])[0]
        assert description.lower().startswith(head.lower()), (n, description, head)


def test_every_further_reading_entry_is_whole(built):
    """A continuation line that starts with a year ("2019.") is an ordered-list item to Markdown:
    the entry before it loses its year and its address becomes an item of its own."""
    article = soup(built / "further-reading" / "index.html").find("article")
    assert article.select("ol") == []
    entries = article.select("ul > li")
    assert len(entries) >= 20
    for li in entries:
        text = " ".join(li.get_text(" ").split())
        assert not re.fullmatch(r"(?:\d{4}\.?|<?https?://\S+>?)(?: .{0,3})?", text), text
        assert li.find("a") is not None and len(text.split()) >= 12, text
    text = article.get_text(" ")
    for source in ("2019. https://developer.nvidia.com", 'TensorFlow", 2018. https://arxiv'):
        assert source in " ".join(text.split()), source


def test_further_reading_cites_the_sharded_and_in_network_sources(built):
    hrefs = {a["href"] for a in soup(built / "further-reading" / "index.html").select("article a")}
    for source in (
        "https://arxiv.org/abs/1910.02054",  # ZeRO
        "https://arxiv.org/abs/2304.11277",  # PyTorch FSDP
        "https://pytorch.org/docs/stable/fsdp.html",
        "https://doi.org/10.1109/COMHPC.2016.006",  # SHARP
        "https://ttsugriy.github.io/distributed-training-book/",
    ):
        assert source in hrefs, source


def course_table(built: Path, first_header: str):
    """The course page's table whose first column is `first_header`: (headers, rows of cells)."""
    article = soup(built / "use-in-your-course" / "index.html").find("article")
    for table in article.select("table"):
        headers = [th.get_text(strip=True) for th in table.select("thead th")]
        if headers and headers[0] == first_header:
            return headers, [tr.find_all("td") for tr in table.select("tbody tr")]
    raise AssertionError(f"no table headed {first_header!r}")


def test_the_course_table_gives_each_page_its_exercises_and_what_it_builds_on_by_title(built):
    headers, rows = course_table(built, "Page")
    assert headers == ["Page", "Objectives", "Exercises", "Builds on", "Reading", "Study"]
    assert len(rows) == len(FILES)
    for f, row in zip(FILES, rows, strict=True):
        meta = frontmatter.load(f).metadata
        assert row[0].get_text().startswith(f"{int(f.name[:2])}. {meta['title']}")
        titles = [TITLES[k] for k in meta.get("exercises", [])]
        assert [t for t in row[2].get_text().split("; ") if t] == titles
        links = row[3].select("a")
        assert [a["href"] for a in links] == [f"../{b}/index.html" for b in meta["builds_on"]]
        for a in links:  # a title, as the page it opens heads itself
            slug = a["href"].split("/")[1]
            assert a.get_text() == soup(built / slug / "index.html").find("h1").get_text()
        shown = soup(built / meta["slug"] / "index.html").select_one("[data-role=reading-time]")
        assert row[4].get_text() == f"{shown['data-reading-min']} min"
        assert row[5].get_text() == f"{shown['data-study-min']} min"


def test_the_lecture_plan_projects_widgets_that_are_on_their_pages_and_adds_up(built):

    headers, rows = course_table(built, "Minutes")
    assert headers == ["Minutes", "Project", "What to do"]
    assert len(rows) >= 6
    total = 0
    for row in rows:
        total += int(row[0].get_text())
        url = urlsplit(row[1].find("a")["href"])
        query = dict(parse_qsl(url.query))
        assert query.pop("present") == "1"
        widget = query.pop("widget")
        page = soup(built / "use-in-your-course" / url.path)
        assert page.select_one(f'[data-widget="{widget}"]') is not None, (url.path, widget)
        for key in query:  # any state it sets is a parameter of that widget
            name, param = key.split(".", 1)
            assert name == widget and (param in SPECS[widget] or param == "step"), key
    text = " ".join(soup(built / "use-in-your-course" / "index.html").get_text().split())
    assert f"A lecture of {total} minutes" in text
    assert 45 <= total <= 60


def test_the_course_page_states_what_a_teacher_needs(built):
    page = soup(built / "use-in-your-course" / "index.html")
    text = " ".join(page.find("article").get_text().split())
    for needed in (
        "SGD and backpropagation",
        "bits and bytes",
        "GB and GiB",
        "what a GPU server is",
        "floating point",
        "student number",
        "solution=0",
        "Rabenseifner",
        "Parameter servers",
        "Tensor and pipeline parallelism",
        "English only",
        "Three sources of time",
        "whiteboard model",
        "NCCL's estimate",
        "fitted time",
        "counts steps, messages and bytes",
    ):
        assert needed in text, needed
    hrefs = [a["href"] for a in page.select("article a")]
    assert "../quick-reference/index.html" in hrefs
    assert not re.search(r"\b[Ss]tages? \d", text), "page N, not stage N"


def quick_reference_text(built: Path) -> str:
    return " ".join(
        soup(built / "quick-reference" / "index.html").find("article").get_text().split()
    )


def test_the_quick_reference_gives_the_cited_figures_and_the_formulas_factors(built):
    text = quick_reference_text(built)
    # the cited figures: H100 NVLink 450 GB/s a direction (NVIDIA's specification); busbw 370
    # with the ring (nccl-tests#212), 480 with NVLS on 8 GPUs (nccl#1455); 400 Gb/s / 8 bits;
    # 46-49 GB/s measured per card (nccl-tests#267, #290)
    for figure in ("450 GB/s", "370 GB/s with the ring", "480 GB/s with NVLS", "50 GB/s"):
        assert figure in text, figure
    assert "46–49 GB/s" in text and f"{8 * 400 / 8:g} GB/s" in text
    bf16, fp32 = 2, 4  # mixed-precision Adam: BF16 weight and gradient, 3 FP32 optimizer values
    assert f"{bf16} + {bf16} + {3 * fp32} = {2 * bf16 + 3 * fp32} bytes per parameter" in text
    assert f"{7e9 * (2 * bf16 + 3 * fp32) / 2**30:.0f} GiB per GPU" in text
    # nccl-tests' busbw factors (doc/PERFORMANCE.md), evaluated from the printed table
    oracle = {
        "all-reduce": lambda n: 2 * (n - 1) / n,
        "reduce-scatter": lambda n: (n - 1) / n,
        "all-gather": lambda n: (n - 1) / n,
        "all-to-all": lambda n: (n - 1) / n,
        "broadcast": lambda n: 1,
        "reduce": lambda n: 1,
    }
    table = soup(built / "quick-reference" / "index.html").select("article table")[0]
    heads = [th.get_text() for th in table.select("th")]
    cells = [td.get_text() for td in table.select("td")]
    assert heads == list(oracle)
    for head, cell in zip(heads, cells, strict=True):
        for n in (2, 8, 64):
            printed = eval(cell.replace("−", "-").replace("(n", "*(n").lstrip("*"), {"n": n})
            assert printed == pytest.approx(oracle[head](n)), (head, cell)


def test_the_quick_reference_gives_nccls_picks_where_its_model_changes_them(built):

    text = quick_reference_text(built)
    assert "on 64 H100s, 8 to a server, one 400 Gb/s card per GPU" in text
    system = nccl.System("H100 SXM", 64, 8, 8, 400.0)
    units = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}
    runs = re.findall(r"(\w+) (LL128|LL|Simple) from ([\d.]+) (B|kB|MB|GB)", text)
    assert len(runs) >= 3
    for i, (algorithm, protocol, size, unit) in enumerate(runs):
        at = float(size) * units[unit]
        pick = nccl.best_by_algorithm(system, [round(at * 1.01)]).pick[0]
        assert pick[:2] == (algorithm, protocol), (size, unit, pick)
        if i:  # just below, NCCL picks something else
            below = nccl.best_by_algorithm(system, [round(at / 1.1)]).pick[0]
            assert below[:2] != (algorithm, protocol), (size, unit, below)


def test_the_quick_reference_is_linked_where_the_glossary_is(built):
    for html in (built / "index.html", built / "why-allreduce" / "index.html"):
        s = soup(html)
        nav = [a["href"] for a in s.select(".site-header nav a")]
        assert any(h.endswith("quick-reference/index.html") for h in nav), html
        assert any(h.endswith("glossary/index.html") for h in nav), html


def test_text_boxes_of_logs_leave_the_browser_s_form_memory(site):
    """Every text box on the site (the log panel's paste box and the hidden box of an opened
    file, up to a megabyte) has autocomplete="off". Without it Chromium saves each box's text
    into the history entry at every pushState, as it does for a form to restore: 21 ms per
    change of any control with a 1 MB log opened (a CPU profile of stage 10), where the box's
    own storage (data-store) already keeps the log."""
    boxes = [
        (path.relative_to(site).as_posix(), box.get("id"), box.get("autocomplete"))
        for path in sorted(site.rglob("*.html"))
        for box in soup(path).find_all("textarea")
    ]
    assert any(name and name.endswith("-log_file") for _, name, _ in boxes)
    assert [b for b in boxes if b[2] != "off"] == []
