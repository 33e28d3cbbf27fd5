"""Every page a lesson: its reading and study time, and glossary links at each term's first use.

Reading and study time (shown in a stage page's "In this page" box) is computed here, never typed,
and sized for a first-time technical reader who checks the arithmetic as they go:

- *prose words* are the words of the page's text outside widgets, math, code, footnotes and
  "Deeper" boxes (a word: letters or digits, joined by hyphens or apostrophes); the practice
  boxes (`aside[data-role=practice]`, "In PyTorch", "Measure it") are prose, their code is not;
- *box words* are the words of the lesson boxes every reader reads: the objectives ("In this
  page"), the key takeaways and the "Check yourself" questions with their answers;
- *reading* = (prose words + box words) / `WORDS_PER_MINUTE` (140), rounded up to a whole
  minute; the words inside "Deeper" boxes give their own figure, shown apart as optional;
- *study* = reading + each widget's minutes (`widget_minutes`), rounded up: a stepper takes
  `STEPPER_MINUTES` + `STEP_MINUTES` per step of its default state + its narration's words at
  `WORDS_PER_MINUTE` (so a long stepper costs what it asks of a reader); a chart or a panel
  `EXPLORE_MINUTES` + `CONTROL_MINUTES` per control its spec declares (it is explored by moving
  its inputs); an exercise `EXERCISE_MINUTES` (the 2 to 5 minutes one takes); a sheet
  `SHEET_MINUTES`.

The build also counts the *figures* quoted in the main prose (the same text as the prose words,
less link texts, which are cross-references and addresses): a number with its unit, such as
450 GB/s, 2.5 GB, 1,100 tokens, 82 % or 1.5 times, is one figure; a count (8 GPUs), a label
(GPU 0) or a formula's digits are not. A page should quote at most about 40; the rest belong in
Deeper boxes.

Glossary links come from content/glossary.yaml: in a page's `<article>`, the first use of each
term becomes a link to `glossary/#<anchor>` whose title is the term's definition (and, inside a
"Deeper" box, its first use there if the main text has not linked it above: a closed box hides
its links). An alias is
matched as a whole word, hyphens being part of words ("tree" does not match "tree-based"), and
case-insensitively unless the term says `match_case`; where aliases overlap the longest wins,
across all terms ("double binary tree" before "tree"). Text in math, code, headings, links,
buttons, a `<details>` summary, footnotes, widgets and the page's own labels
(`data-glossary="skip"`) is left alone: a link there would be hard to see, or to click.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser

import yaml

from allreduce_explainer.widgets import views

from . import CONTENT, ROOT

WORDS_PER_MINUTE = 140  # a first reading of technical prose, arithmetic checked on the way
STEPPER_MINUTES = 1.0  # to read the grid and the controls
STEP_MINUTES = 0.5  # per step: look at what moved, guess the next step
EXPLORE_MINUTES = 2.0  # a chart or a panel: read it once
CONTROL_MINUTES = 0.75  # per control: move it and watch the figure change
EXERCISE_MINUTES = 3.0
SHEET_MINUTES = 5.0
# the rule as the course page states it (`{{ f.reading_wpm }}`), each figure as written here
TIME_FACTS = {
    name: f"{value:g}"
    for name, value in {
        "reading_wpm": WORDS_PER_MINUTE,
        "stepper_min": STEPPER_MINUTES,
        "step_min": STEP_MINUTES,
        "explore_min": EXPLORE_MINUTES,
        "control_min": CONTROL_MINUTES,
        "exercise_min": EXERCISE_MINUTES,
    }.items()
}
WORD = re.compile(r"\w+(?:['’-]\w+)*")
# a quoted figure: a number with its unit (450 GB/s, 2.5 GB, 1,100 tokens, 82%, 1.5 times); a
# count (8 GPUs), a label (GPU 0) or a formula's digits (2(n - 1)) is not one
FIGURE = re.compile(
    r"(?<![\w.,-])\d+(?:[.,]\d+)*[\s\u00a0\u2009\u202f]?"
    r"(?:%|(?:[kMGTP]i?B|[kMGT]b|TFLOP)(?:/s)?(?![\w/])|[mµn]?s(?!\w)|bytes?\b|tokens?\b"
    r"|times\b|×)"
)
VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
# never linked: a link inside these would be invisible, unclickable or wrong
NO_LINK = {"a", "button", "code", "h1", "h2", "h3", "h4", "h5", "h6", "kbd", "label", "math"}
NO_LINK |= {"option", "pre", "samp", "script", "select", "style", "summary", "sup", "svg"}
NO_LINK |= {"textarea", "title"}
# not prose: left out of the reading time
NOT_PROSE = {"code", "math", "pre", "script", "style", "sup", "svg", "button", "select"}

Attrs = dict[str, str | None]


class TextWalker(HTMLParser):
    """The text runs of an HTML string: (offset, text, box), skipping every element (and all it
    contains) for which `skip(tag, attrs)` is true; `box` numbers the "Deeper" box a run is in
    (None outside them). The string itself is never re-serialised."""

    def __init__(self, source: str, skip: Callable[[str, Attrs], bool], within: str | None):
        super().__init__(convert_charrefs=False)
        self.source, self.skip, self.within = source, skip, within
        self.lines = [0]
        for m in re.finditer("\n", source):
            self.lines.append(m.end())
        self.stack: list[tuple[str, bool, int | None]] = []  # (tag, skipped, box)
        self.boxes = 0
        self.inside = within is None
        self.runs: list[tuple[int, str, int | None]] = []

    def here(self) -> int:
        line, col = self.getpos()
        return self.lines[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == self.within:
            self.inside = True
        if tag in VOID:
            return
        _, skipped, box = self.stack[-1] if self.stack else ("", False, None)
        if box is None and _is_deeper(dict(attrs)):
            box, self.boxes = self.boxes, self.boxes + 1
        self.stack.append((tag, skipped or self.skip(tag, dict(attrs)), box))

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        pass  # <path ... />: nothing inside

    def handle_endtag(self, tag: str) -> None:
        if tag == self.within:
            self.inside = False
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        if self.inside and not (self.stack and self.stack[-1][1]):
            self.runs.append((self.here(), data, self.stack[-1][2] if self.stack else None))

    def handle_entityref(self, name: str) -> None:
        self.handle_data(" ")  # a word break at most: the glossary has no entities in it

    def handle_charref(self, name: str) -> None:
        self.handle_data(" ")


def text_runs(
    source: str, skip: Callable[[str, Attrs], bool], within: str | None = None
) -> list[tuple[int, str, int | None]]:
    walker = TextWalker(source, skip, within)
    walker.feed(source)
    walker.close()
    return [run for run in walker.runs if run[1] != " "]


def _is_widget(tag: str, attrs: Attrs) -> bool:
    return "data-widget" in attrs or attrs.get("data-glossary") == "skip"


def _is_deeper(attrs: Attrs) -> bool:
    return attrs.get("data-role") == "deeper"


def _is_footnotes(attrs: Attrs) -> bool:
    return "footnote" in (attrs.get("class") or "").split()


def _main_runs(body: str, links: bool = True) -> tuple[list[str], list[str]]:
    """(texts of the main prose, texts inside "Deeper" boxes) of a page's body HTML, without
    widgets, math, code and footnotes (and, unless `links`, without link texts)."""

    def not_prose(tag: str, attrs: Attrs) -> bool:
        return (
            tag in NOT_PROSE
            or (not links and tag == "a")
            or _is_widget(tag, attrs)
            or _is_footnotes(attrs)
        )

    runs = text_runs(body, not_prose)
    return [t for _, t, box in runs if box is None], [t for _, t, box in runs if box is not None]


def _words(texts: list[str]) -> int:
    return sum(len(WORD.findall(text)) for text in texts)


def _untagged(texts) -> list[str]:
    """Texts with their HTML tags taken out (a fact's markup is not words to read)."""
    return [re.sub(r"<[^>]+>", " ", t) for t in texts]


def prose_words(body: str) -> tuple[int, int]:
    """(words of the main text, words inside "Deeper" boxes) of a page's body HTML. A run that
    goes on with an apostrophe continues the word before it ("<data>H100</data>'s" is one)."""
    main, deeper = _main_runs(body)
    return _words([_joined(main)]), _words([_joined(deeper)])


def _joined(runs: list[str]) -> str:
    return "".join(r if r[:1] in "'’" else " " + r for r in runs)


def prose_numbers(body: str) -> int:
    """How many figures (numbers with their units) the main text quotes, outside widgets, math,
    code, footnotes, Deeper boxes and link texts: what a reader has to take in."""
    main, _ = _main_runs(body, links=False)
    return sum(len(FIGURE.findall(text)) for text in main)


def widget_minutes(view: str, state: dict, controls: int) -> float:
    """Minutes a widget asks of a reader (see the module's docstring): a stepper by its steps
    and narration, a chart or panel by its `controls`, an exercise or a sheet a fixed time."""
    if view == views.STEPPER:
        frames = state["frames"]
        texts = [t for f in frames for t in f.get("narration", [])]
        narration = _words(_untagged(texts))
        return STEPPER_MINUTES + STEP_MINUTES * len(frames) + narration / WORDS_PER_MINUTE
    if view in (views.CHART, views.PANEL):
        return EXPLORE_MINUTES + CONTROL_MINUTES * controls
    return {views.EXERCISE: EXERCISE_MINUTES, views.SHEET: SHEET_MINUTES}[view]


def study_time(body: str, widget_mins: list[float], boxes: tuple[str, ...] = ()) -> dict:
    """Minutes to read a page (its prose and lesson `boxes`' texts; its "Deeper" boxes apart)
    and to study it with widgets that take `widget_mins` minutes each."""
    main, deeper = prose_words(body)
    box_words = _words(_untagged(boxes))
    reading = math.ceil((main + box_words) / WORDS_PER_MINUTE)
    return {
        "words": main,
        "box_words": box_words,
        "numbers": prose_numbers(body),
        "reading_min": reading,
        "deeper_words": deeper,
        "deeper_min": math.ceil(deeper / WORDS_PER_MINUTE),
        "widgets": len(widget_mins),
        "study_min": reading + math.ceil(sum(widget_mins)),
    }


def load_glossary() -> list[dict]:
    """content/glossary.yaml's terms, checked: unique anchors, an alias for every term, and
    no alias claimed by two terms."""
    terms = yaml.safe_load((CONTENT / "glossary.yaml").read_text(encoding="utf-8"))["terms"]
    anchors, owners = set(), {}
    for t in terms:
        for key in ("term", "anchor", "aliases", "definition", "page"):
            if not t.get(key):
                raise SystemExit(f"content/glossary.yaml: {t.get('term')!r} needs {key!r}")
        if t["anchor"] in anchors:
            raise SystemExit(f"content/glossary.yaml: anchor {t['anchor']!r} twice")
        anchors.add(t["anchor"])
        for alias in t["aliases"]:
            key = alias if t.get("match_case") else alias.lower()
            if owners.setdefault(key, t["anchor"]) != t["anchor"]:
                raise SystemExit(f"content/glossary.yaml: alias {alias!r} in two terms")
    return terms


def glossary_pattern(terms: list[dict]) -> tuple[re.Pattern, dict[str, dict]]:
    """One regex for every alias of every term, longest first, each alternative a named group
    (`t<index>`) so a match says its term; hyphens count as part of a word."""
    alternatives = []
    for i, t in enumerate(terms):
        for alias in t["aliases"]:
            body = re.escape(alias) if t.get("match_case") else f"(?i:{re.escape(alias)})"
            alternatives.append((len(alias), f"(?P<t{i}_{len(alternatives)}>{body})"))
    alternatives.sort(key=lambda a: -a[0])
    pattern = r"(?<![\w-])(?:" + "|".join(a for _, a in alternatives) + r")(?![\w-])"
    return re.compile(pattern), {f"t{i}": t for i, t in enumerate(terms)}


def term_of(match: re.Match, by_group: dict[str, dict]) -> dict:
    return by_group[match.lastgroup.split("_")[0]]


def glossary_uses(page_html: str, terms: list[dict]) -> Iterator[tuple[int, int, dict, int | None]]:
    """Every use of a glossary term in a page's `<article>`, in order: (start, end, term, box)."""
    pattern, by_group = glossary_pattern(terms)

    def no_link(tag: str, attrs: Attrs) -> bool:
        return tag in NO_LINK or _is_widget(tag, attrs) or _is_footnotes(attrs)

    for start, text, box in text_runs(page_html, no_link, within="article"):
        for m in pattern.finditer(text):
            yield start + m.start(), start + m.end(), term_of(m, by_group), box


def first_uses(page_html: str, terms: list[dict]) -> list[tuple[int, int, dict]]:
    """Where the links go: a term's first use in the main text; and its first use inside a
    "Deeper" box if the main text has not linked it above (a closed box hides its links, so
    they cannot count for the main text; the box gets its own for what is new there)."""
    main: set[str] = set()
    boxes: dict[int, set[str]] = {}
    links = []
    for start, end, term, box in glossary_uses(page_html, terms):
        anchor = term["anchor"]
        seen = main if box is None else main | boxes.setdefault(box, set())
        if anchor not in seen:
            (main if box is None else boxes[box]).add(anchor)
            links.append((start, end, term))
    return links


def link_glossary(page_html: str, terms: list[dict], base: str) -> str:
    """The page with glossary terms linked at their first use (`first_uses`), each link titled
    with the term's definition."""
    out, done = [], 0
    for start, end, term in first_uses(page_html, terms):
        href = f"{base}glossary/#{term['anchor']}"
        title = html.escape(re.sub(r"<[^>]+>", "", term["definition"]), quote=True)
        out.append(page_html[done:start])
        out.append(
            f'<a class="glossary-term" href="{href}" title="{title}">{page_html[start:end]}</a>'
        )
        done = end
    out.append(page_html[done:])
    return "".join(out)


def split_footnotes(body: str) -> tuple[str, str]:
    """(prose, footnotes) of a page's body: Markdown puts the footnotes last, and a lesson's
    takeaways and questions go between the two, the references staying at the very end."""
    start = body.rfind('<div class="footnote">')
    return (body, "") if start < 0 else (body[:start], body[start:])


def citation() -> dict:
    """What CITATION.cff says, for the footer's "Cite" line."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    return {
        "authors": ", ".join(a.get("name") or a.get("family-names", "") for a in cff["authors"]),
        "title": cff["title"],
        "version": cff["version"],
        "year": str(cff["date-released"])[:4],
    }
