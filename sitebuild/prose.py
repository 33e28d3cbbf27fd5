"""A page's Markdown to HTML: front matter, Jinja2 calls (facts, widgets), math to MathML, and the
finished fragments kept out of Markdown's reach until it is done."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

import jinja2
import latex2mathml.converter
import markdown
import markupsafe

from allreduce_explainer import widgets
from allreduce_explainer.widgets import views

from .claims import Claims, refuse_retired_names, refuse_typed_figures
from .page import Page, Question

WIDGET_CALL = re.compile(r"""widget\(\s*["'](\w+)["']\s*\)""")
MARKDOWN_EXTENSIONS = [
    "tables",
    "footnotes",
    "attr_list",
    "def_list",
    "toc",
    "fenced_code",
    "md_in_html",
]
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
TABLE = re.compile(r'<div class="table-scroll".*?</table></div>', re.S)
CODE = re.compile(r"<code>(.*?)</code>", re.S)
LIST_COMMA = re.compile(r",(?=\S)")  # a comma with no space after it: a list's, in code


class Stash:
    """Holds finished HTML (MathML, widgets) out of Markdown's reach, behind plain tokens."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def put(self, fragment: str) -> str:
        self.items.append(fragment)
        return f"STASH{len(self.items) - 1}X"

    def restore(self, text: str) -> str:
        text = re.sub(r"<p>\s*(STASH\d+X)\s*</p>", r"\1", text)
        return re.sub(r"STASH(\d+)X", lambda m: self.items[int(m.group(1))], text)


def math_to_mathml(text: str, stash: Stash) -> str:
    """$...$ and $$...$$ become MathML at build time: no math library is downloaded."""

    def convert(m: re.Match) -> str:
        display = m.group(1) is not None
        tex = m.group(1) if display else m.group(2)
        mathml = latex2mathml.converter.convert(
            tex.strip(), display="block" if display else "inline"
        )
        if display:  # a wide formula scrolls in its own box, which keyboards can reach
            mathml = f'<div class="formula" tabindex="0">{mathml}</div>'
        return stash.put(mathml)

    return MATH.sub(convert, text)


def widget_docs(pages: list[Page], given: Mapping[str, dict] | None = None) -> list[dict]:
    """Every widget, the page it is on and its URL parameters with their defaults (a contract),
    from its spec and the parameters the build gives it (`given`: the sheet's kinds, from the
    pages); a stepper's URL also takes `step`; a widget that asks a prediction, its question."""
    docs = []
    for page in pages:
        for name in WIDGET_CALL.findall(page.source):
            w = widgets.REGISTRY[name]
            stepper = w.view == views.STEPPER
            params = {k: p.default for k, p in w.spec.items()} | (given or {}).get(name, {})
            doc = {"name": name, "page": page, "params": params, "stepper": stepper}
            if w.predict:  # the question it asks first, at the page's defaults
                doc["question"] = w.function(None)["prediction"]["question"]
            docs.append(doc)
    drilled = [p for p in pages if p.exercises]
    if drilled:  # one row for every page's exercises, named exercise-<kind> (exercise_states)
        params = {k: p.default for k, p in widgets.SPECS["exercise"].items()}
        docs.append({"name": "exercise", "page": drilled[0], "params": params, "stepper": False})
    return docs


def instance_function(name: str) -> str:
    """The widget function behind an instance name: `exercise-ring_time` -> `exercise` (widget
    functions have no hyphen, so the rule is unambiguous)."""
    return name.split("-", 1)[0]


def exercise_states(page: Page) -> list[tuple[str, dict]]:
    """The page's "Check yourself" exercises (front matter `exercises: [kind, ...]`): one
    instance `exercise-<kind>` each, at seed 0, so names, DOM ids and URL keys are unique."""
    return [
        (f"exercise-{kind}", widgets.WIDGETS["exercise"]({"kind": kind, "seed": 0}))
        for kind in page.exercises
    ]


def render_prose(
    page: Page, widget_html: Callable[[str, dict], str], context: dict
) -> tuple[str, list[tuple[str, dict]]]:
    """The page's HTML, and the default state of every widget placed in it. `widget_html` renders
    a widget from its state; `context` is what else the prose may use (facts, widget_docs)."""
    stash, states = Stash(), []

    def widget(name: str) -> str:
        if name not in widgets.WIDGETS:
            raise SystemExit(f"{page.path}: unknown widget {name!r}")
        # a widget's build-time parameters (the sheet's question bank), never in its URL
        states.append((name, widgets.WIDGETS[name](context.get("widget_params", {}).get(name))))
        html = widget_html(name, states[-1][1])
        refuse_retired_names(page.path, html)  # its labels, readouts, tables and narration
        return stash.put(html)

    claims = Claims(page.path, context.get("f"))
    text = template(page.source).render(widget=widget, **claims.globals(), **context)
    text = claims.check(text, "the prose", first_line(page), page.source)
    text = math_to_mathml(text, stash)
    body = markdown.markdown(text, extensions=MARKDOWN_EXTENSIONS, output_format="html")
    refuse_retired_names(page.path, body)
    if page.number is not None:  # widgets and math are stashed: what is left is prose
        refuse_typed_figures(page.path, "the prose", body)
    # a wide table scrolls in its own box, which keyboards can reach (widgets are stashed)
    body = body.replace("<table>", '<div class="table-scroll" tabindex="0"><table>')
    body = body.replace("</table>", "</table></div>").replace("<pre>", '<pre tabindex="0">')
    return stash.restore(TABLE.sub(lambda t: list_breaks(t.group()), body)), states


def first_line(page: Page) -> int:
    """The line of the page's file on which its Markdown (after the front matter) begins, so a
    refusal names the line an author edits."""
    try:
        whole = page.path.read_text()
    except OSError:
        return 1
    at = whole.find(page.source[:200])
    return whole.count("\n", 0, at) + 1 if at >= 0 else 1


def template(source: str) -> jinja2.Template:
    """A page's Markdown, or one of its lesson texts, as a template of facts and claims."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    return env.from_string(source)


def render_lessons(page: Page, context: dict) -> Page:
    """The page with its lesson texts (objectives, takeaways, questions and answers) rendered
    through the same facts and claims as its prose, as HTML. The objectives and takeaways obey
    the prose's rule for typed figures; a question states its inputs, so its answer is a
    worked example."""
    claims = Claims(page.path, context.get("f"))

    def render(text: str, where: str) -> str:
        rendered = template(text).render(**claims.globals(), **context)
        return markupsafe.Markup(claims.check(rendered, where, 1, text))

    questions = enumerate(page.questions, 1)
    out = replace(
        page,
        objectives=tuple(render(t, "an objective") for t in page.objectives),
        takeaways=tuple(render(t, "a takeaway") for t in page.takeaways),
        questions=tuple(
            Question(render(q.q, f"Check yourself Q{i}"), render(q.a, f"Check yourself A{i}"))
            for i, q in questions
        ),
    )
    for text in (*out.objectives, *out.takeaways, *(t for q in out.questions for t in (q.q, q.a))):
        refuse_retired_names(page.path, text)
    if page.number is not None:
        for where, texts in (("an objective", out.objectives), ("a takeaway", out.takeaways)):
            for text in texts:
                refuse_typed_figures(page.path, where, text)
    return out


def list_breaks(table: str) -> str:
    """A table's code with a line break allowed after each comma of a list written without
    spaces (a parameter's JSON default): the cell wraps the list between its items instead of
    the table growing by its whole length; the text, copied or read, is the same."""
    return CODE.sub(lambda c: "<code>" + LIST_COMMA.sub(",<wbr>", c.group(1)) + "</code>", table)
