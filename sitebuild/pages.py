"""The site's pages: each stage and extra page, each widget alone for embedding, the home page;
`Builder.build` runs every job of the build in order."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import jinja2
import markupsafe

from allreduce_explainer import facts, palette, sources, widgets
from allreduce_explainer.exercises import TITLES as EXERCISE_TITLES
from allreduce_explainer.exercises.export import site_address
from allreduce_explainer.fmt import in_words
from allreduce_explainer.logs import explain
from allreduce_explainer.widgets import views
from allreduce_explainer.widgets.exercises import question_bank, sheet_kinds

from . import CLIENT, CSP, ROOT, TEMPLATES
from .banks import bank_facts, write_banks
from .bundle import bundles, write_bundles
from .compress import compress_file, compress_site
from .doors import refuse_retired_in_doors
from .embeds import (
    PAGE_SIZE,
    SIZES,
    SNIPPETS,
    copy_placeholder,
    discovery,
    fill,
    oembed,
    placeholder_url,
    snippets_json,
    write_oembed,
)
from .lessons import (
    TIME_FACTS,
    citation,
    link_glossary,
    load_glossary,
    split_footnotes,
    study_time,
    widget_minutes,
)
from .page import Page, load_pages
from .prose import (
    exercise_states,
    instance_function,
    render_lessons,
    render_prose,
    template,
    widget_docs,
)
from .python_assets import stamp_worker, write_python
from .scorm import COURSE, package_sizes, write_scorm
from .stageref import stage_references
from .vendor import copy_vendor


def topic(page: Page) -> str:
    """A stage's subject, for a sentence: its title before the colon, lower-cased as a common
    noun ("Shards: ZeRO and FSDP ..." -> "shards"), a name such as "NCCL" left as it is."""
    head = page.title.split(":", 1)[0].strip()
    return head if head[1:2].isupper() else head[:1].lower() + head[1:]


# each source of time's glossary definition, from its one home
GLOSSED = {s.key: s.meaning[0].upper() + s.meaning[1:] + "." for s in sources.SOURCES}

# the widget whose snippets the course page shows: (its page's slug, its name)
SNIPPET_EXAMPLE = ("latency-ring-vs-tree", "latency")
COURSE_PAGE = "use-in-your-course"  # the page that prints the SCORM packages' sizes


class Builder:
    """Builds the whole site into one folder, which it empties first. Every embed's placeholder
    image must exist unless `placeholders` is False (the script that makes them builds so)."""

    def __init__(
        self, site: Path, url: str = "", placeholders: bool = True, scorm_solutions: bool = False
    ):
        self.site = site
        self.scorm_solutions = scorm_solutions  # the SCORM packages' pages keep their solutions
        self.placeholders = placeholders
        self.pictured: set[str] = set()  # the embeds whose placeholder was copied
        self.url = site_address(url, "url")  # where the site is hosted ("" if not known)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=jinja2.select_autoescape(["html"]),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals["embed"] = False
        self.env.globals["oembed"] = ""  # a page's oembed.json (with the site's url): discovery
        self.env.globals["snippets"] = snippets_json()
        self.env.globals["csp"] = CSP
        self.env.globals["scripts"] = {role: path for role, (path, _) in bundles().items()}
        self.env.globals["cite"] = citation()
        # facts the templates and the browser's code state, from their one home
        self.env.globals["gpu_colours"] = len(palette.GPU_COLOURS)
        self.env.globals["max_log_bytes"] = explain.MAX_LOG_BYTES
        self.env.globals["max_log_text"] = explain.MAX_LOG_TEXT
        self.facts = facts.all_facts()
        # the quick reference's and the time rule's, apart
        for key, value in (facts.quick_reference() | TIME_FACTS).items():
            if key in self.facts:
                raise SystemExit(f"fact {key!r} is defined twice")
            self.facts[key] = value
        self.facts = facts.named(self.facts)
        self.facts |= facts.named(package_sizes(None, []))  # build() prints the real ones
        # definitions quote the same facts as the pages
        self.glossary = [
            t
            | {
                "definition": markupsafe.Markup(
                    template(t["definition"]).render(f=self.facts, source=GLOSSED)
                )
            }
            for t in load_glossary()
        ]
        self.pages = load_pages()
        # a stage named by its slug, in the prose and the templates; the sheet's stages
        self.references = stage_references(self.pages)
        self.env.globals.update(self.references)
        self.env.globals["drilled"] = [p for p in self.pages if p.exercises]

    def glossed(self, definition: str) -> str:
        """A glossary definition rendered with the facts and the sources' own definitions."""
        return template(definition).render(f=self.facts, source=GLOSSED)

    def widget_html(self, name: str, state: dict, base: str) -> str:
        """A widget instance's HTML; `name` is its widget function's name, or
        `<function>-<suffix>` for one of several on a page (exercises: `exercise-<kind>`). A
        widget with a partial of its own (templates/widgets/<name>.html) is drawn by it; every
        other stepper by stepper.html and every other chart or panel by chart.html, which its
        record fills."""
        widget = widgets.REGISTRY[instance_function(name)]
        return self.env.select_template(views.partials(widget.name, widget.view)).render(
            name=name,
            widget=widget,
            spec=widget.spec,
            state=state,
            state_json=views.state_json(state),
            base=base,
        )

    @staticmethod
    def minutes(states: list[tuple[str, dict]]) -> list[float]:
        """The minutes each widget instance asks of a reader, by its view, state and controls
        (a parameter with a label has a control)."""
        out = []
        for name, state in states:
            widget = widgets.REGISTRY[instance_function(name)]
            controls = sum(1 for param in widget.spec.values() if param.label)
            out.append(widget_minutes(widget.view, state, controls))
        return out

    def copy_client(self) -> None:
        """site/static/: the browser's code, and the GPU colours as CSS variables."""
        dest = self.site / "static"
        shutil.copytree(CLIENT, dest)
        write_bundles(self.site)
        (dest / "gpu-colours.css").write_text(palette.gpu_css())

    def write_embeds(self, page: Page, states: list[tuple[str, dict]]) -> None:
        """site/embed/<widget>/: the widget alone, for a course page's iframe."""
        base = "../../"
        for name, state in states:
            path = f"embed/{name}/index.html"
            out = self.env.get_template("embed.html").render(
                page=page,
                base=base,
                live=True,
                embed=True,
                oembed=discovery(self.url, path) if self.url else "",
                stages=[],
                widget=self.widget_html(name, state, base),
            )
            self.write(path, out)
            if copy_placeholder(self.site, name, self.placeholders):
                self.pictured.add(name)
            if not self.url:
                continue
            view = widgets.REGISTRY[instance_function(name)].view
            response = oembed(
                self.url,
                path,
                f"{self.embed_title(name, state)} · {page.title}",
                SIZES[view],
                f"{page.slug}/index.html",
                name if name in self.pictured else None,
            )
            write_oembed(self.site, f"embed/{name}", response)

    @staticmethod
    def embed_title(name: str, state: dict) -> str:
        """An embed's name for a reader: the exercise's title, the widget's label, or its name."""
        widget = widgets.REGISTRY[instance_function(name)]
        return state.get("title") or widget.label or name.replace("_", " ")

    def snippet_examples(self, slug: str, name: str) -> list[dict]:
        """Every snippet for the widget `name` of page `slug`, filled as its copy menu fills it
        in its default state (the course page shows them)."""
        view = widgets.REGISTRY[instance_function(name)].view
        src = f"{self.url}embed/{name}/index.html"
        return [
            {
                "label": label,
                "text": fill(
                    key,
                    src,
                    f"{self.url}{slug}/index.html",
                    name,
                    SIZES[view],
                    placeholder_url(self.url, name),
                ),
            }
            for key, label in ((k, v[0]) for k, v in SNIPPETS.items())
        ]

    def write_page(self, page: Page, pages: list[Page], docs: list) -> Page:
        """site/<slug>/: a page's prose with its widgets, and its widgets' embeds; returns the
        page with its reading and study time (`pages` has them for the pages before it)."""
        base = "../"
        stages = [p for p in pages if p.number is not None]
        page = render_lessons(page, {"f": self.facts, "base": base} | self.references)
        body, states = render_prose(
            page,
            lambda name, state: self.widget_html(name, state, base),
            # the stages come first (ordered): the course page lists their objectives and times
            {
                "f": self.facts,
                "widget_docs": docs,
                "stages": stages,
                "base": base,
                "page": page,
                "widget_params": {
                    "exercise_sheet": {"bank": question_bank(stages), "kinds": sheet_kinds(stages)}
                },
                "exercise_titles": EXERCISE_TITLES,
                "banks": self.banks,
                "site_url": self.url,
                "snippet_examples": self.snippet_examples(*SNIPPET_EXAMPLE),
            }
            | self.references,
        )
        drills = exercise_states(page)
        path = f"{page.slug}/index.html"
        exercises = [self.widget_html(name, state, base) for name, state in drills]
        states += drills
        page = replace(page, time=study_time(body, self.minutes(states), page.lesson_texts()))
        body, footnotes = split_footnotes(body)
        by_slug = {p.slug: p for p in pages}
        n = page.number
        out = self.env.get_template("page.html").render(
            page=page,
            body=body,
            exercises=exercises,
            footnotes=footnotes,
            builds_on=[by_slug[slug] for slug in page.builds_on],
            base=base,
            pages=pages,
            stages=stages,
            live=bool(states),
            oembed=discovery(self.url, path) if self.url else "",
            prev=stages[n - 2] if n is not None and n > 1 else None,
            next=stages[n] if n is not None and n < len(stages) else None,
        )
        self.write_embeds(page, states)
        self.write(path, link_glossary(out, self.glossary, base))
        if self.url:
            # a page's thumbnail: its first widget's placeholder (a page without one has none)
            first = next((name for name, _ in states if name in self.pictured), None)
            response = oembed(self.url, path, page.title, PAGE_SIZE, path, first)
            write_oembed(self.site, page.slug, response)
        return page

    def write_glossary(self, pages: list[Page], stages: list[Page]) -> None:
        """site/glossary/: every term of content/glossary.yaml, with the page that explains it."""
        by_slug = {p.slug: p for p in pages}
        for term in self.glossary:
            if term["page"] not in by_slug:
                raise SystemExit(
                    f"content/glossary.yaml: {term['term']!r}: no page {term['page']!r}"
                )
        terms = sorted(self.glossary, key=lambda t: t["term"].lower())
        out = self.env.get_template("glossary.html").render(
            base="../",
            pages=pages,
            stages=stages,
            terms=terms,
            by_slug=by_slug,
            live=False,
            page={
                "title": "Glossary",
                "slug": "glossary",
                "summary": "Every term the pages use, with the page that explains it.",
            },
        )
        self.write("glossary/index.html", out)

    def copy_license(self) -> None:
        """The license and the citation file, which every page's footer links to."""
        shutil.copyfile(ROOT / "LICENSE", self.site / "LICENSE.txt")
        shutil.copyfile(ROOT / "CITATION.cff", self.site / "CITATION.cff")

    def write(self, path: str, html: str) -> None:
        dest = self.site / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(html, encoding="utf-8")

    def build(self) -> None:
        if self.site.exists():
            shutil.rmtree(self.site)
        self.site.mkdir(parents=True)
        self.copy_client()
        copy_vendor(self.site)
        stamp_worker(self.site, write_python(self.site))
        self.build_pages()
        compress_site(self.site)
        # last: a package holds the finished site's files (and is not compressed again)
        stages = [p for p in self.pages if p.number is not None]
        write_scorm(self.site, stages, self.url, self.scorm_solutions)
        self.print_package_sizes(stages)

    def print_package_sizes(self, stages: list[Page]) -> None:
        """The course page's sizes of the SCORM packages, read from the zips just written. The
        course's package carries the course page, so the page is written again with them (and
        its twins), then that package, until the size the page prints is the package's own:
        once, or twice if the new text moved the size across a tenth of a MB."""
        pages, docs = self.rendered
        course_page = next(p for p in pages if p.slug == COURSE_PAGE)
        for _ in range(3):
            sizes = package_sizes(self.site, stages)
            if all(self.facts[k].text == v for k, v in sizes.items()):
                return
            self.facts |= facts.named(sizes)
            self.write_page(course_page, pages, docs)
            compress_file(self.site / COURSE_PAGE / "index.html")
            write_scorm(self.site, stages, self.url, self.scorm_solutions, only=COURSE)
        raise SystemExit(f"{COURSE_PAGE}: the SCORM packages' sizes did not settle")

    def build_pages(self) -> None:
        """The HTML pages alone, with the license they link to (the tests of the prose use this
        without the browser's assets)."""
        self.site.mkdir(parents=True, exist_ok=True)
        refuse_retired_in_doors()  # the CLI's help and the notebooks name sources as pages do
        pages = list(self.pages)
        stages = [p for p in pages if p.number is not None]
        docs = widget_docs(pages, {"exercise_sheet": {"kinds": sheet_kinds(stages)}})
        self.banks = write_banks(self.site, stages, self.url)
        self.facts |= facts.named(bank_facts(self.banks))
        for i, page in enumerate(pages):
            pages[i] = self.write_page(page, pages, docs)
        self.rendered = (pages, docs)  # the course page is written again with the packages' sizes
        stages = [p for p in pages if p.number is not None]
        self.write_glossary(pages, stages)
        self.copy_license()
        core = [p for p in stages if p.core]
        home = self.env.get_template("home.html").render(
            base="",
            pages=pages,
            stages=stages,
            core=core,
            later=[p for p in stages if not p.core],
            later_topics=in_words([topic(p) for p in stages if not p.core]),
            core_time={k: sum(p.time[k] for p in core) for k in ("reading_min", "study_min")},
            live=False,
            page={"title": "All-reduce, explained", "slug": "", "summary": ""},
        )
        self.write("index.html", home)
