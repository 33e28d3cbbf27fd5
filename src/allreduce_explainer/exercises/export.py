"""Question banks: the generated exercises, for chosen kinds and seeds, in the formats course
platforms import (Moodle XML, QTI 1.2 as Canvas imports it, GIFT, CSV).

Each question is one Problem the core drew (`problem(kind, seed)`): its answer and tolerance are
the core's, written in the unit the question asks for, so a platform grades what the page's
checker grades. A platform checks a number within an absolute margin, so the relative tolerance
becomes `tolerance × |answer|` in the asked unit. Each question carries the page and objective it
practises (`places`, which the build reads from the pages' front matter: the core does not read
the content), the worked solution as feedback, and the link to its seeded state on the site. Each
misconception the kind names (`Problem.mistakes`) becomes a wrong answer worth nothing with the
checker's message as its feedback, within the margin the checker gives it, after the right answer
(platforms, like the checker, take the first answer that matches).

Only the standard library: xml.etree, csv, zipfile (the core runs in Pyodide too).
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass
from html import escape
from urllib.parse import urlsplit
from xml.etree import ElementTree as ET

from .. import fmt
from ..errors import ParamError
from ..params import Param
from . import KINDS, MAX_SHEET, SEED, TITLES, _sheet_kinds, problem
from .check import _SLIPS as UNITS_OF  # the units the page's checker reads, by kind
from .check import close
from .kinds.common import CHOICE, EXACT, VECTOR, Problem
from .units import unit

FORMATS = ("moodle", "qti", "gift", "csv")
SUFFIX = {"moodle": "xml", "qti": "zip", "gift": "txt", "csv": "csv"}
MAX_COUNT = 50  # problems per kind in one bank
COUNT = Param("count", 1, "int", lo=1, hi=MAX_COUNT)
SHOWN_DIGITS = 3  # the significant figures of the site's worked answer (kinds.common.show)
SPELLINGS = {"us": ("µs", "μs", "us")}  # a unit the site reads in more than one spelling
NUMERIC, SHORT = "numerical", "shortanswer"  # with CHOICE: the three shapes of question
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # a zip's entries carry this date: the same bank, the same bytes
# The course's banks (the teacher's sheet offers them): BANK_COUNT problems of each kind from
# BANK_SEED, above every seed a page shows with its worked solution (a page's exercises at seed 0,
# the teacher's sheet at its default seed 0 with at most MAX_SHEET problems, seeds 0 to 39)
BANK_SEED, BANK_COUNT = MAX_SHEET, 5
BANK_NAME = "allreduce-explainer"
BANK_FILES = {  # format -> (file, what a teacher does with it)
    "moodle": (f"{BANK_NAME}-moodle.xml", "Moodle XML: Question bank → Import → Moodle XML format"),
    "qti": (f"{BANK_NAME}-qti.zip", "QTI 1.2 for Canvas: Import course content → QTI .zip file"),
    "gift": (f"{BANK_NAME}-gift.txt", "GIFT: Moodle's text format, also read by other platforms"),
    "csv": (f"{BANK_NAME}.csv", "CSV: a spreadsheet of every question, answer and margin"),
}
QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CC_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"


@dataclass(frozen=True)
class Place:
    """Where a kind is taught: the page ("Stage 5 · ..."), its slug and the objective it
    practises (the page's front matter `practice:`)."""

    page: str
    slug: str
    objective: str


@dataclass(frozen=True)
class Question:
    """One exported question: the problem, and what a platform needs around it."""

    kind: str
    seed: int
    problem: Problem
    place: Place | None
    link: str

    @property
    def name(self) -> str:
        return f"{TITLES[self.kind]} (seed {self.seed})"

    @property
    def ident(self) -> str:
        return f"{self.kind}-{self.seed}"

    @property
    def shape(self) -> str:
        d = self.problem.dimension
        return CHOICE if d == CHOICE else SHORT if d == VECTOR else NUMERIC

    @property
    def exact(self) -> float:
        """The core's answer in the unit the question asks for."""
        p = self.problem
        return p.answer / unit(p.unit).scale if p.unit else float(p.answer)

    @property
    def value(self) -> float:
        """The answer a platform shows as the correct one, as the site shows it: to the worked
        answer's significant figures where the checker allows a tolerance, else exact. (Moodle
        shows the answer's text as it is stored: question/type/numerical/renderer.php,
        correct_response.)"""
        if self.problem.tolerance == EXACT:
            return self.exact
        return float(f"{self.exact:.{SHOWN_DIGITS}g}")

    @property
    def margin(self) -> float:
        """The absolute margin a platform checks around `value`: all the page's checker accepts
        (the tolerance of the exact answer, widened by the rounding), short of every
        misconception the question names, which a platform must never take for the answer."""
        if self.problem.tolerance == EXACT:
            return 0.0
        wide = self.problem.tolerance * abs(self.exact) + abs(self.value - self.exact)
        wrong = [abs(bad - self.value) for bad, _, _ in self.mistakes()]
        return min([wide, *(w * (1 - 1e-9) for w in wrong)])

    def units(self) -> list[tuple[str, float]]:
        """Moodle's units: the asked one first (multiplier 1), then the others of its kind the
        page's checker reads, each with the multiplier that turns the answer into it. Moodle
        knows a unit by its exact text (qtype_numerical_answer_processor::is_known_unit,
        array_key_exists on the question's units, in question/type/numerical/questiontype.php)
        and divides the typed number by its multiplier, so microseconds are listed as the site
        reads them: µs (the micro sign), μs (Greek mu) and us."""
        asked = self.problem.unit
        scale = unit(asked).scale
        names = [
            s for u in UNITS_OF.get(self.problem.dimension, ()) for s in SPELLINGS.get(u, (u,))
        ]
        others = [u for u in dict.fromkeys(names) if u != asked]
        return [(asked, 1.0)] + [(u, scale / unit(u).scale) for u in others]

    def answers(self) -> list[str]:
        """A short answer's accepted spellings ("[1, 2]", "1, 2", "[1,2]")."""
        text = self.problem.answer_text()
        bare = text.strip("[]")
        return list(dict.fromkeys([text, bare, text.replace(" ", ""), bare.replace(" ", "")]))

    def prompt(self) -> str:
        """The problem's text; a choice's without the page's "Type a or b." (a platform shows
        the choices as buttons)."""
        text = self.problem.prompt
        typed = "Type " + " or ".join(self.problem.choices) + "."
        if self.shape == CHOICE and text.endswith(typed):
            return text[: -len(typed)].rstrip()
        return text

    def ask(self) -> str:
        """What the answer must be, as the page says under its box."""
        p = self.problem
        if self.shape == CHOICE:
            return "Choose one: " + " or ".join(p.choices) + "."
        if self.shape == SHORT:
            return "Type the numbers exactly, e.g. [1, 2]."
        within = "exactly" if p.tolerance == EXACT else f"within {fmt.percent(p.tolerance)}"
        return f"Give the number {within}" + (f", in {p.unit}." if p.unit else ".")

    @property
    def unsolved_link(self) -> str:
        """The question's link with the worked solution hidden (`solution=0`): the page's own
        checker for a student, without the answer; the feedback links the solution."""
        head, _, fragment = self.link.partition("#")
        return f"{head}&solution=0" + (f"#{fragment}" if fragment else "")

    def about(self) -> str:
        """The page, objective and link a question names."""
        lines = []
        if self.place:
            lines.append(f"From {self.place.page}. Objective: {self.place.objective}")
        lines.append(f"Open it on the site: {self.unsolved_link}")
        return "\n".join(lines)

    def solution(self) -> str:
        """The worked solution, as text: its steps and the final answer."""
        p = self.problem
        return "\n".join([*p.steps, f"Answer: {p.answer_text()}"])

    def mistakes(self) -> list[tuple[float | str, float, str]]:
        """The kind's misconceptions as wrong answers: (value in the asked unit or the word, its
        margin, the checker's message). One the right answer would match is left out, as the
        checker leaves it, and so is one an earlier one already matches (its message is shown)."""
        p = self.problem
        if self.shape == CHOICE:
            return [(bad, 0.0, msg) for bad, msg in p.mistakes if bad != p.answer]
        if self.shape != NUMERIC:
            return []
        scale = unit(p.unit).scale if p.unit else 1.0
        out: list[tuple[float | str, float, str]] = []
        for bad, msg in p.mistakes:
            if close(bad, p.answer, p.tolerance) or any(
                close(bad, b * scale, p.tolerance) for b, _, _ in out
            ):
                continue
            value = bad / scale
            out.append((value, p.tolerance * abs(value), msg))
        return out

    def wrong(self, choice: str) -> str:
        """The feedback for a wrong choice: the misconception it names, if any."""
        return next((msg for bad, msg in self.problem.mistakes if bad == choice), "Not quite.")


def site_address(text: str, field: str = "site") -> str:
    """The address a site is hosted at, checked: "" (links relative to the site) or an absolute
    http(s) address, ending in "/" so that a page's path follows it."""
    if not isinstance(text, str) or not text.strip():
        return ""
    text = text.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ParamError(
            field,
            f"must be an absolute address such as https://your.host/allreduce/, not {text[:60]!r}",
        )
    return text if text.endswith("/") else text + "/"


def link(site: str, place: Place | None, kind: str, seed: int) -> str:
    """The seeded problem on its page (or, without a page, its embed), under `site`."""
    key = f"exercise-{kind}"
    if place:
        return f"{site}{place.slug}/index.html?{key}.seed={seed}#{key}"
    return f"{site}embed/{key}/index.html?{key}.seed={seed}"


def questions(kinds, seed, count=1, places=None, site="") -> list[Question]:
    """`count` problems of each kind, seeds seed, seed+1, ...; kinds as a list or "a,b"."""
    kinds = _sheet_kinds(kinds)
    seed, count = SEED.check(seed), COUNT.check(count)
    if seed + count - 1 > SEED.hi:
        raise ParamError("seed", f"must leave room for {count} seeds below {SEED.hi}")
    places = places or {}
    return [
        Question(k, s, problem(k, s), places.get(k), link(site, places.get(k), k, s))
        for k in kinds
        for s in range(seed, seed + count)
    ]


def export(fmt: str, qs: list[Question], title: str = "All-reduce, explained") -> bytes:
    """The bank as the bytes of one file in format `fmt`."""
    if fmt not in FORMATS:
        raise ParamError("format", f"must be one of {', '.join(FORMATS)}")
    writer = {"moodle": moodle, "qti": qti, "gift": gift, "csv": table}[fmt]
    return writer(qs, title)


def _html(text: str) -> str:
    """Plain text as HTML paragraphs (the prompt's middle lines, a log, preformatted)."""
    lines = text.split("\n")
    if len(lines) > 2:
        head, mid, tail = lines[0], "\n".join(lines[1:-1]), lines[-1]
        return f"<p>{escape(head)}</p><pre>{escape(mid)}</pre><p>{escape(tail)}</p>"
    return "".join(f"<p>{escape(line)}</p>" for line in lines)


def _prompt_html(q: Question) -> str:
    about = (
        f"<p><small>From {escape(q.place.page)}. Objective: {escape(q.place.objective)} "
        if q.place
        else "<p><small>"
    ) + f'<a href="{escape(q.unsolved_link)}">Open it on the site</a>.</small></p>'
    return _html(q.prompt()) + f"<p>{escape(q.ask())}</p>" + about


def _feedback_html(q: Question) -> str:
    steps = "".join(f"<li>{escape(s)}</li>" for s in q.problem.steps)
    return (
        f"<ol>{steps}</ol><p><strong>{escape(q.problem.answer_text())}</strong></p>"
        f'<p><a href="{escape(q.link)}">Check it on the site</a></p>'
    )


def _xml(root: ET.Element) -> bytes:
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs) -> ET.Element:
    e = ET.SubElement(parent, tag, {k.rstrip("_"): v for k, v in attrs.items()})
    if text is not None:
        e.text = text
    return e


# ---- Moodle XML ----------------------------------------------------------------------------------


def _text(parent: ET.Element, tag: str, text: str, html: bool = True) -> ET.Element:
    e = _sub(parent, tag, format="html") if html else _sub(parent, tag)
    _sub(e, "text", text)
    return e


def moodle(qs: list[Question], title: str) -> bytes:
    """Moodle XML: numerical questions with their tolerance and unit, multichoice for a choice,
    shortanswer for a vector; the worked solution as general feedback."""
    quiz = ET.Element("quiz")
    cat = _sub(quiz, "question", type="category")
    _text(cat, "category", f"$course$/{title}", html=False)
    for q in qs:
        item = _sub(quiz, "question", type=q.shape if q.shape != CHOICE else "multichoice")
        _text(item, "name", q.name, html=False)
        _text(item, "questiontext", _prompt_html(q))
        _text(item, "generalfeedback", _feedback_html(q))
        _sub(item, "defaultgrade", "1")
        _sub(item, "idnumber", q.ident)
        if q.shape == NUMERIC:
            a = _sub(item, "answer", fraction="100", format="moodle_auto_format")
            _sub(a, "text", repr(q.value))
            _sub(a, "tolerance", repr(q.margin))
            _text(a, "feedback", "<p>Correct.</p>")
            for value, margin, message in q.mistakes():
                a = _sub(item, "answer", fraction="0", format="moodle_auto_format")
                _sub(a, "text", repr(value))
                _sub(a, "tolerance", repr(margin))
                _text(a, "feedback", f"<p>{escape(message)}</p>")
            if q.problem.unit:
                units = _sub(item, "units")
                for name, multiplier in q.units():
                    u = _sub(units, "unit")
                    _sub(u, "multiplier", repr(multiplier))
                    _sub(u, "unit_name", name)
                # units optional, as on the page: a number alone is in the asked unit, and a
                # number with another unit of the same kind is converted before it is graded
                _sub(item, "unitgradingtype", "0")
                _sub(item, "unitpenalty", "0")
                _sub(item, "showunits", "0")  # typed in the answer's box
                _sub(item, "unitsleft", "0")
        elif q.shape == SHORT:
            _sub(item, "usecase", "0")
            for text in q.answers():
                a = _sub(item, "answer", fraction="100", format="moodle_auto_format")
                _sub(a, "text", text)
                _text(a, "feedback", "<p>Correct.</p>")
        else:
            _sub(item, "single", "true")
            _sub(item, "shuffleanswers", "0")
            _sub(item, "answernumbering", "none")
            for choice in q.problem.choices:
                right = choice == q.problem.answer
                a = _sub(item, "answer", fraction="100" if right else "0", format="html")
                _sub(a, "text", choice)
                said = "Correct." if right else q.wrong(choice)
                _text(a, "feedback", f"<p>{escape(said)}</p>")
    return _xml(quiz)


# ---- QTI 1.2, as Canvas imports it: a zip with imsmanifest.xml and one assessment --------------


def _meta(parent: ET.Element, fields: dict[str, str]) -> None:
    md = _sub(_sub(parent, "itemmetadata"), "qtimetadata")
    for label, entry in fields.items():
        f = _sub(md, "qtimetadatafield")
        _sub(f, "fieldlabel", label)
        _sub(f, "fieldentry", entry)


def _mat(parent: ET.Element, html: str) -> None:
    _sub(_sub(parent, "material"), "mattext", html, texttype="text/html")


def _qti_item(section: ET.Element, q: Question) -> None:
    """One item, its conditions in Canvas's order: the general feedback always, then the right
    answer (score 100, stop), then each misconception with its message (score 0, stop)."""
    types = {NUMERIC: "numerical_question", SHORT: "short_answer_question"}
    item = _sub(section, "item", ident=q.ident, title=q.name)
    _meta(
        item,
        {"question_type": types.get(q.shape, "multiple_choice_question"), "points_possible": "1.0"},
    )
    pres = _sub(item, "presentation")
    _mat(pres, _prompt_html(q))
    proc = _sub(item, "resprocessing")
    _sub(
        _sub(proc, "outcomes"),
        "decvar",
        maxvalue="100",
        minvalue="0",
        varname="SCORE",
        vartype="Decimal",
    )
    general = _sub(proc, "respcondition", continue_="Yes")
    _sub(_sub(general, "conditionvar"), "other")
    _sub(general, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")
    cond = _sub(proc, "respcondition", continue_="No")
    var = _sub(cond, "conditionvar")
    if q.shape == CHOICE:
        resp = _sub(pres, "response_lid", ident="response1", rcardinality="Single")
        render = _sub(resp, "render_choice")
        label = {c: f"{q.ident}-{i}" for i, c in enumerate(q.problem.choices)}
        for choice, ident in label.items():
            _mat(_sub(render, "response_label", ident=ident), f"<p>{escape(choice)}</p>")
        _sub(var, "varequal", label[q.problem.answer], respident="response1")
    else:
        resp = _sub(pres, "response_str", ident="response1", rcardinality="Single")
        fib = "Decimal" if q.shape == NUMERIC else "String"
        _sub(_sub(resp, "render_fib", fibtype=fib), "response_label", ident="answer1")
        if q.shape == NUMERIC:
            either = _sub(var, "or")
            _sub(either, "varequal", repr(q.value), respident="response1")
            both = _sub(either, "and")
            _sub(both, "vargte", repr(q.value - q.margin), respident="response1")
            _sub(both, "varlte", repr(q.value + q.margin), respident="response1")
        else:
            for text in q.answers():
                _sub(var, "varequal", text, respident="response1")
    _sub(cond, "setvar", "100", action="Set", varname="SCORE")
    feedback = {"general_fb": _feedback_html(q)}
    for i, (value, margin, message) in enumerate(q.mistakes()):
        ident = f"mistake{i}_fb"
        wrong = _sub(proc, "respcondition", continue_="No")
        var = _sub(wrong, "conditionvar")
        if q.shape == CHOICE:
            _sub(var, "varequal", label[value], respident="response1")
        else:
            _within(var, value, margin)
        _sub(wrong, "displayfeedback", feedbacktype="Response", linkrefid=ident)
        feedback[ident] = f"<p>{escape(message)}</p>"
    for ident, html in feedback.items():
        _mat(_sub(_sub(item, "itemfeedback", ident=ident), "flow_mat"), html)


def _within(var: ET.Element, value: float, margin: float) -> None:
    """value − margin <= response <= value + margin, written as "not below and not above":
    Canvas's importer takes every condition with an <and> or a value in an <or> for a right
    answer of a numerical question (instructure/canvas-lms,
    gems/plugins/qti_exporter/lib/qti/numeric_interaction.rb, get_canvas_answers), which a
    misconception must never become."""
    outside = _sub(_sub(var, "not"), "or")
    _sub(outside, "varlt", repr(value - margin), respident="response1")
    _sub(outside, "vargt", repr(value + margin), respident="response1")


def qti_assessment(qs: list[Question], title: str) -> bytes:
    """The QTI 1.2 assessment: one item per question, in Canvas's question types."""
    root = ET.Element("questestinterop", xmlns=QTI_NS)
    test = _sub(root, "assessment", ident="allreduce-explainer-bank", title=title)
    section = _sub(test, "section", ident="root_section")
    for q in qs:
        _qti_item(section, q)
    return _xml(root)


def qti_manifest(title: str) -> bytes:
    root = ET.Element("manifest", identifier="allreduce-explainer-bank", xmlns=CC_NS)
    _sub(_sub(root, "metadata"), "schema", "IMS Content")
    _sub(root, "organizations")
    res = _sub(_sub(root, "resources"), "resource", identifier="bank", type="imsqti_xmlv1p2")
    res.set("href", "bank.xml")
    _sub(res, "file", href="bank.xml")
    return _xml(root)


def qti(qs: list[Question], title: str) -> bytes:
    """A QTI .zip (Canvas: Import course content, "QTI .zip file")."""
    return zip_bytes(
        {"imsmanifest.xml": qti_manifest(title), "bank.xml": qti_assessment(qs, title)}
    )


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A zip of `files` in the order given, every entry dated ZIP_TIME: the same files, the same
    bytes (the build is byte-identical)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return out.getvalue()


# ---- GIFT ----------------------------------------------------------------------------------------

GIFT_SPECIAL = "\\~=#{}:"


def gift_escape(text: str) -> str:
    """GIFT's special characters escaped with a backslash; a line break as \\n."""
    for c in GIFT_SPECIAL:
        text = text.replace(c, "\\" + c)
    return text.replace("\n", "\\n")


def gift(qs: list[Question], title: str) -> bytes:
    """GIFT (Moodle's text format): {#=value:margin =%0%wrong:margin#message} for a number (the
    form Moodle's own GIFT export writes, question/format/gift/format.php), {=right ~wrong#message}
    for a choice, {=text} for a vector; the worked solution as general feedback (####)."""
    out = [
        f"// {title}: a question bank of generated exercises",
        f"$CATEGORY: $course$/{title}",
        "",
    ]
    for q in qs:
        out.append(f"// {q.ident}")
        body = gift_escape(q.prompt() + "\n" + q.ask() + "\n" + q.about())
        if q.shape == NUMERIC:
            answer = f"#={q.value!r}:{q.margin!r}" + "".join(
                f" =%0%{value!r}:{margin!r}#{gift_escape(message)}"
                for value, margin, message in q.mistakes()
            )
        elif q.shape == SHORT:
            answer = " ".join("=" + gift_escape(t) for t in q.answers())
        else:
            answer = " ".join(
                ("=" if c == q.problem.answer else "~")
                + gift_escape(c)
                + ("" if c == q.problem.answer else "#" + gift_escape(q.wrong(c)))
                for c in q.problem.choices
            )
        feedback = gift_escape(q.solution())
        out.append(f"::{gift_escape(q.name)}::{body} {{{answer} ####{feedback}}}")
        out.append("")
    return "\n".join(out).encode("utf-8")


# ---- CSV -----------------------------------------------------------------------------------------

CSV_COLUMNS = (
    "kind", "seed", "title", "type", "question", "answer", "unit", "tolerance_relative",
    "margin", "choices", "page", "objective", "link", "solution", "mistakes",
)  # fmt: skip


def table(qs: list[Question], title: str) -> bytes:
    """One row per question: the answer (in the asked unit) and both tolerances, the choices
    separated by "|", the page, objective, link and worked solution, and the misconceptions as
    lines "value: message" (a value in the asked unit, within its own margin, or a choice)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for q in qs:
        p = q.problem
        numeric = q.shape == NUMERIC
        w.writerow(
            [
                q.kind,
                q.seed,
                TITLES[q.kind],
                q.shape,
                q.prompt() + "\n" + q.ask(),
                repr(q.value) if numeric else p.answer_text(),
                p.unit,
                repr(p.tolerance),
                repr(q.margin) if numeric else "",
                "|".join(p.choices),
                q.place.page if q.place else "",
                q.place.objective if q.place else "",
                q.link,
                q.solution(),
                "\n".join(
                    f"{v if isinstance(v, str) else repr(v)}: {m}" for v, _, m in q.mistakes()
                ),
            ]
        )
    return out.getvalue().encode("utf-8")


__all__ = ["FORMATS", "KINDS", "Place", "Question", "export", "questions", "zip_bytes"]
