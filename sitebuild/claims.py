"""What the prose may state: every figure with a unit is a named fact, and every sentence that
compares figures is a claim the build evaluates.

A figure typed by hand drifts when the core changes; a fact (`{{ f.name }}`) cannot. The rule
allows a typed figure only where it is not the site's own number: inside a quotation of a source
(`<q>`, `<blockquote>`), an equation, code, a source's figure quoted from the catalog's citation
(`<span data-role="source">`, each typed figure one that the cited run or issue states), or a
worked example that names its inputs as facts (`<span data-role="example">`).

A sentence that compares or qualifies a fact ("twice", "most of it hides", "below", "close to")
is written `{% call claim("condition") %}sentence{% endcall %}`: the condition is an expression
over the facts `f`, read through a recorder, so the build knows which facts it reads. The build
fails, naming the page, the line and the sentence, when the condition is false at the page's
defaults, when it reads no fact rendered in its sentence (so `claim("True")` proves nothing and
is refused), or when a sentence with a fact uses a comparative word outside any claim. A sentence
whose comparative word compares no figures says so, with its reason:
`{% call noclaim("the 'most' is of the steps, not of a figure") %}sentence{% endcall %}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from allreduce_explainer.catalog import measured
from allreduce_explainer.sources import SOURCES, retired

from .lessons import Attrs, text_runs

# where a typed figure is not the site's own: quotations, equations, code
QUOTED = {"q", "blockquote", "code", "pre", "math", "kbd", "samp"}

_SEP = r"[\s\u00a0\u2009\u202f]?"
# every unit the site prints (fmt.py, the glossary, the catalog): a number with one of them, typed
# by hand, is a figure. "8 × H100" and "8 × 48" are counts and arithmetic, "7×" or "7x faster" a
# factor; "Llama 3 8B" is a model's name, "8 B" a size.
UNITS = (
    r"%|(?:[kKMGTP]i?B|[kKMGT]b|[kKMGT]bit|tokens?|bytes?|B)/s(?![\w/])"
    r"|[kKMGTP]i?B(?![\w/])|[kMGTP]?FLOP(?:s|/s)?(?![\w/])|[mµun]?s(?!\w)"
    r"|bytes?\b|tokens?\b|times\b|ulps?\b|α"
    r"|[×x](?=\s+(?:faster|slower|more|less|as|the|higher|lower|larger|smaller)\b|[).,;:!?])"
)
NUMBER = r"\d+(?:[.,]\d+)*"
# a number or a range (46–49 GB/s) with its unit
FIGURE = re.compile(
    rf"(?<![\w.,\-−–]){NUMBER}(?:–{NUMBER})?{_SEP}(?:{UNITS})|(?<![\w.,\-−–]){NUMBER} B\b"
)

# words that compare or qualify a figure: a sentence with a fact and one of these is a claim
COMPARATIVE = re.compile(
    r"\b(?:more|less|fewer|faster|slower|quicker|longer|shorter|larger|smaller|bigger|higher"
    r"|lower|better|worse|greater|least|most|almost|nearly|half|twice|double[sd]?|times|close"
    r"|closer|within|below|above|beats?|beating|exceeds?|exceeding|saves?|saving"
    r"|outperforms?|quite|equal|same as|matches|as (?:good|fast|slow|much|many|large|high) as)\b",
    re.I,
)

# the claim and noclaim markers around a marked sentence in the rendered template: private-use
# characters no page types, taken out before Markdown sees the text
OPEN, MID, CLOSE = "\ue000", "\ue001", "\ue002"
MARKED = re.compile(f"{OPEN}(\\d+){MID}(.*?){CLOSE}", re.S)
FACT = re.compile(r'<data class="fact" data-fact="(\w+)"[^>]*>.*?</data>', re.S)
# a sentence ends at . ! ? (or a closing bracket or quote after one) before a capital, a tag or a
# fact; a paragraph, a list item, a heading, a table cell or a block tag ends one too
SENTENCE_END = re.compile(
    r"(?<=[.!?])((?:[)\"”’*_\ue002]|\[\^[\w-]+\])*)\s+(?=[A-Z<“\"(\[{\u00a0\ue000]|$)"
)
BLOCK_START = re.compile(r"^\s*(?:[-*+] |\d+\. |#|\||</?(?:div|details|summary|p|ul|ol|li)\b|:\s)")
# what is not words of a sentence: tags, quotations and a source's figures (its words), code,
# math, stashed widgets, link targets; and "below" or "above" that point at a part of the page
NOT_WORDS = re.compile(
    r'<q\b.*?</q>|<span data-role="source">.*?</span>|<code>.*?</code>|`[^`]*`|\$[^$]*\$'
    r"|STASH\d+X|\]\([^)]*\)|\[\^[\w-]+\]|<[^>]+>"
    r'|"[^"]*"|“[^”]*”|\b(?:above|below)\)'
    r"|\b(?:chart|table|widget|box|stepper|list|figure|lab|panel|readouts?|questions?|line)s?"
    r"\s+(?:just\s+)?(?:below|above)\b",
    re.S,
)


def _not_prose(tag: str, attrs: Attrs) -> bool:
    classes = (attrs.get("class") or "").split()
    return (
        tag in QUOTED
        or (tag == "data" and "fact" in classes)
        or attrs.get("data-role") in ("example", "source")
        or "data-widget" in attrs
    )


def typed_figures(html: str) -> list[str]:
    """The figures with a unit that an HTML fragment types outside facts and the places the
    rule allows: "450 GB/s", "25 MiB", "7 times", "2α", "3 ulps" (an operator such as "8 ×" is
    arithmetic)."""
    found = []
    for _, text, _ in text_runs(html, _not_prose):
        found += [m.group().strip() for m in FIGURE.finditer(text)]
    return found


def _role_spans(html: str, role: str) -> list[str]:
    """The inner HTML of every `<span data-role="role">` (spans do not nest in them)."""
    return re.findall(rf'<span data-role="{role}">(.*?)</span>', html, re.S)


def cited_figures() -> set[str]:
    """Every number the catalog states beside its citations (catalog/*.py and *.json: the
    measured runs' rows and quotations, the datasheets' rates, the papers' figures), as they
    print it."""
    catalog = Path(measured.__file__).parent
    text = "".join(p.read_text() for pattern in ("*.py", "*.json") for p in catalog.glob(pattern))
    return set(re.findall(NUMBER, text))


def _numbers(figure: str) -> list[str]:
    return re.findall(NUMBER, figure)


def refuse_typed_figures(path: Path, where: str, html: str) -> None:
    """Fails the build when `html` (the part of a page named `where`) types a figure by hand, when
    a worked example names none of its inputs as a fact, or when a source's figure is not one its
    citation in the catalog states."""
    problems = []
    figures = typed_figures(html)
    if figures:
        problems.append(
            f"types {len(figures)} figure(s) by hand: "
            + ", ".join(repr(f) for f in figures)
            + ". Quote a fact ({{ f.name }}), or mark a source's words <q>…</q> (its figures"
            ' beside the citation <span data-role="source">…</span>), a worked example whose'
            ' inputs the sentence names as facts <span data-role="example">…</span>'
        )
    for example in _role_spans(html, "example"):
        if FIGURE.search(_plain(FACT.sub("", example))) and not FACT.search(example):
            problems.append(
                f"a worked example names none of its inputs as a fact: {_plain(example)!r}"
            )
    cited = cited_figures()
    for quoted in _role_spans(html, "source"):
        stray = [
            f for f in FIGURE.findall(_plain(FACT.sub("", quoted))) if not set(_numbers(f)) <= cited
        ]
        if stray:
            problems.append(
                f"a source's figure {stray} is not in the catalog's citations (catalog/measured.*"
                f"): {_plain(quoted)!r}"
            )
    if problems:
        raise SystemExit(f"{path}: {where} " + "; ".join(problems) + ".")


def refuse_retired_names(path: Path, html: str) -> None:
    """Fails the build when a page names a source of time by a name it no longer has: each
    source has one name (allreduce_explainer/sources.py), so a reader never meets two for it."""
    found = retired(re.sub(r"<[^>]+>", " ", html))
    if found:
        names = ", ".join(repr(s.name) for s in SOURCES)
        raise SystemExit(f"{path}: names a source of time as {found}; its names are {names}")


class Recorder:
    """The facts as a claim's condition sees them: each name it reads is written down, so the
    build can hold the condition to the facts its sentence shows."""

    def __init__(self, facts: dict):
        self._facts, self.read = facts, set()

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str):
        if name not in self._facts:
            raise jinja2.UndefinedError(f"no fact named {name!r}")
        self.read.add(name)
        return self._facts[name]


@dataclass
class Mark:
    """A marked sentence: a claim's condition and the facts it read, or a noclaim's reason."""

    condition: str | None
    read: set[str] = field(default_factory=set)
    reason: str | None = None


def _plain(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


class Claims:
    """`claim` and `noclaim` for one page's templates. `claim("condition")` evaluates the
    condition on the facts and fails the build, with the page and the sentence, when it is false;
    both wrap the sentence in markers that `check` reads once the text is rendered, and strips."""

    ENV = jinja2.Environment(undefined=jinja2.StrictUndefined)

    def __init__(self, path: Path, facts: dict | None = None):
        self.path, self.facts = path, facts or {}
        self.marks: list[Mark] = []

    def _marked(self, mark: Mark, sentence: str) -> str:
        if OPEN in sentence:
            raise SystemExit(f"{self.path}: a claim inside a claim: {_plain(sentence)!r}")
        self.marks.append(mark)
        return f"{OPEN}{len(self.marks) - 1}{MID}{sentence}{CLOSE}"

    def claim(self, condition: str, caller) -> str:
        sentence = caller()
        if not isinstance(condition, str):
            raise SystemExit(
                f"{self.path}: a claim's condition is an expression in quotes over the facts, "
                f'claim("f.a.value < f.b.value"), so the build sees which facts it reads: '
                f"{condition!r} before {_plain(sentence)!r}"
            )
        recorder = Recorder(self.facts)
        holds = self.ENV.compile_expression(condition)(f=recorder)
        if not isinstance(holds, bool):
            raise SystemExit(f"{self.path}: a claim's condition must be true or false: {holds!r}")
        if not holds:
            raise SystemExit(
                f"{self.path}: this claim is false at the page's defaults: {_plain(sentence)!r}"
            )
        return self._marked(Mark(condition, recorder.read), sentence)

    def noclaim(self, reason: str, caller) -> str:
        sentence = caller()
        if not isinstance(reason, str) or len(reason.split()) < 3:
            raise SystemExit(
                f"{self.path}: a noclaim gives its reason in words (why the sentence compares no"
                f" figures): {reason!r} before {_plain(sentence)!r}"
            )
        return self._marked(Mark(None, reason=reason), sentence)

    def globals(self) -> dict:
        """What a template calls: `claim` and `noclaim`."""
        return {"claim": self.claim, "noclaim": self.noclaim}

    def check(
        self, text: str, where: str = "the prose", first_line: int = 1, source: str = ""
    ) -> str:
        """The rendered `text` without its markers, once every sentence in it is held to the
        rule: a sentence with a fact compares only inside a claim or a noclaim, and a claim's
        condition reads a fact its sentence shows. A refusal names the sentence's line in the
        file: found in the template `source` (which begins on the file's `first_line`), since a
        loop in a template renders more lines than it has."""
        problems = []
        for line, sentence in sentences(text):
            shown = set(FACT_NAME.findall(sentence))
            for m in MARKED.finditer(sentence):
                mark = self.marks[int(m.group(1))]
                if mark.condition is not None and not mark.read & shown:
                    problems.append(
                        (line, sentence, f"its claim's condition {mark.condition!r} reads no fact"
                         f" the sentence shows (it shows {sorted(shown) or 'none'})")
                    )  # fmt: skip
            if not shown:
                continue
            words = COMPARATIVE.findall(_words(MARKED.sub(" ", sentence)))
            if words:
                problems.append(
                    (line, sentence, f"compares a fact with {sorted(set(words))} outside a claim")
                )
        if problems:
            raise SystemExit(
                f"{self.path}: {where}: "
                + "; ".join(
                    f"line {first_line + _source_line(source, s, line)}: {why}: "
                    f"{_plain(_unmarked(s))!r}"
                    for line, s, why in problems
                )
                + '. Write a comparison as {% call claim("condition on f") %}…{% endcall %}, or'
                ' a sentence that compares no figures as {% call noclaim("reason") %}…'
                "{% endcall %}."
            )
        return _unmarked(text)


FACT_NAME = re.compile(r'<data class="fact" data-fact="(\w+)"')


def _source_line(source: str, sentence: str, rendered: int) -> int:
    """The line (from 0) of the template `source` that a rendered sentence starts on: where
    its longest run of literal text (no fact, tag or marker: those are rendered) is found, less
    the lines before it in the sentence; `rendered`, its line in the rendered text, if not."""
    sentence = sentence.lstrip()
    runs = re.split(f"<[^>]*>|[{OPEN}{MID}{CLOSE}]|\\d+(?={MID})", sentence)
    longest = max(runs, key=len).strip()
    at = source.find(longest) if len(longest) > 12 else -1
    if at < 0:
        return rendered
    before = sentence[: sentence.find(longest)].count("\n")
    return source.count("\n", 0, at) - before


def _unmarked(text: str) -> str:
    return re.sub(f"{OPEN}\\d+{MID}|{CLOSE}", "", text)


def _words(sentence: str) -> str:
    """A sentence's words: no tags, facts, quotations, code or math."""
    return " ".join(NOT_WORDS.sub(" ", FACT.sub(" ", sentence)).split())


def sentences(text: str) -> list[tuple[int, str]]:
    """(line, sentence) of a rendered page's Markdown, lines counted from 0: a block (a paragraph,
    a list item, a heading, a table cell) splits at its sentence ends, never inside a marked
    claim."""
    out = []
    for line, block in _blocks(text):
        marked = [m.span() for m in MARKED.finditer(block)]
        ends = [
            e for e in SENTENCE_END.finditer(block) if not any(a < e.end() < b for a, b in marked)
        ]
        starts = [0] + [e.end() for e in ends]
        stops = [e.start() + len(e.group(1)) for e in ends] + [len(block)]
        for start, stop in zip(starts, stops):
            sentence = block[start:stop]
            if sentence.strip():
                first = start + len(sentence) - len(sentence.lstrip())
                out.append((line + block.count("\n", 0, first), sentence))
    return out


def _blocks(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each block: lines joined until a blank line or a line that opens a
    block of its own; a table row's cells are blocks of their own."""
    blocks: list[tuple[int, list[str]]] = []
    for n, row in enumerate(text.split("\n")):
        inside = blocks and blocks[-1][1] and _open_marks(blocks[-1][1])
        if not inside and (not row.strip() or BLOCK_START.match(row)):
            blocks.append((n, []))
        if not blocks:
            blocks.append((n, []))
        blocks[-1][1].append(row)
    out = []
    for n, rows in blocks:
        block = "\n".join(rows)
        if block.lstrip().startswith("|") and not _open_marks(rows):
            out += [(n, cell) for cell in block.split("|")]
        else:
            out.append((n, block))
    return out


def _open_marks(rows: list[str]) -> bool:
    """Whether a claim opened in these rows is still open (a claim may run over lines)."""
    joined = "\n".join(rows)
    return joined.count(OPEN) > joined.count(CLOSE)
