"""A page of the site as one typed record, read from content/*.md.

Every front-matter key is checked where it is read, so a typo fails the build with the file and
the key named instead of a template printing nothing. A stage's number is its place among the
stages, which `order` sorts; no other number for it is typed anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from pathlib import Path

import frontmatter

from allreduce_explainer import exercises

from . import CONTENT

EXTRA_ORDER = 90  # pages ordered from 90 up are not stages (course use, further reading)
SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


@dataclass(frozen=True)
class Question:
    """A "Check yourself" question and the answer it opens."""

    q: str
    a: str


@dataclass(frozen=True)
class Page:
    """One page: its front matter, its Markdown (`source`), and, for a stage, its `number`."""

    title: str
    slug: str
    order: int
    summary: str
    source: str
    path: Path
    core: bool = False
    builds_on: tuple[str, ...] = ()
    exercises: tuple[str, ...] = ()
    objectives: tuple[str, ...] = ()
    # per objective, what exercises it: exercise kinds of the page, and "q1", "q2", ... for its
    # "Check yourself" questions (the course page shows it to teachers)
    practice: tuple[tuple[str, ...], ...] = ()
    takeaways: tuple[str, ...] = ()
    questions: tuple[Question, ...] = ()
    # the minutes a first-time reader spends on the page's widgets, as the teaching review
    # estimated them (the lesson tests hold the study time the page claims against it)
    review_minutes: float | None = None
    number: int | None = None  # the stage's place, 1 to n; None for a page that is not a stage
    time: dict | None = None  # reading and study time, once the build has rendered the page

    def lesson_texts(self) -> tuple[str, ...]:
        """The texts of the lesson boxes every reader reads: objectives, takeaways, and the
        "Check yourself" questions with their answers (counted in the reading time)."""
        answers = tuple(text for q in self.questions for text in (q.q, q.a))
        return self.objectives + self.takeaways + answers


REQUIRED = ("title", "slug", "order", "summary")
KEYS = {f.name for f in fields(Page)} - {"source", "path", "number", "time"}  # front matter's


def _fail(path: Path, key: str, why: str) -> SystemExit:
    return SystemExit(f"{path}: front matter {key!r} {why}")


def _text(path: Path, key: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, key, "must be a non-empty text")
    return value


def _texts(path: Path, key: str, value) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(path, key, "must be a list")
    return tuple(_text(path, key, v) for v in value)


def _questions(path: Path, value) -> tuple[Question, ...]:
    if not isinstance(value, list) or any(
        not isinstance(q, dict) or set(q) != {"q", "a"} for q in value
    ):
        raise _fail(path, "questions", "must be a list of {q: ..., a: ...}")
    return tuple(
        Question(_text(path, "questions", q["q"]), _text(path, "questions", q["a"])) for q in value
    )


def _practice(
    path: Path, value, objectives: tuple[str, ...], kinds: tuple[str, ...], questions: int
) -> tuple[tuple[str, ...], ...]:
    """One list per objective of the kinds and questions that exercise it; every objective has
    one at least, and every kind of the page exercises some objective."""
    if not value:
        return ()
    if not isinstance(value, list) or len(value) != len(objectives):
        raise _fail(
            path, "practice", f"must be a list of {len(objectives)} lists, one per objective"
        )
    names = set(kinds) | {f"q{i}" for i in range(1, questions + 1)}
    out = tuple(_texts(path, "practice", v) for v in value)
    for cover in out:
        if not cover:
            raise _fail(path, "practice", "leaves an objective with no exercise or question")
        strange = [x for x in cover if x not in names]
        if strange:
            raise _fail(path, "practice", f"names {strange[0]!r}, no kind or question of the page")
    unused = sorted(set(kinds) - {x for cover in out for x in cover})
    if unused:
        raise _fail(path, "practice", f"places no objective for the kind {unused[0]!r}")
    return out


def normalize(front_matter: dict, path: Path, source: str = "") -> Page:
    """The page `path` declares, every key checked on its own; `course` checks the pages
    against each other."""
    unknown = sorted(map(str, set(front_matter) - KEYS))
    if unknown:
        raise _fail(path, unknown[0], "is not a key of a page")
    for key in REQUIRED:
        if key not in front_matter:
            raise _fail(path, key, "is missing")
    m = front_matter
    order = m["order"]
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise _fail(path, "order", "must be a whole number from 1")
    if not isinstance(m["slug"], str) or not SLUG.fullmatch(m["slug"]):
        raise _fail(path, "slug", "must be lower-case words joined by hyphens")
    if not isinstance(m.get("core", False), bool):
        raise _fail(path, "core", "must be true or false")
    kinds = _texts(path, "exercises", m.get("exercises", []))
    strange = [k for k in kinds if k not in exercises.KINDS]
    if strange:
        raise _fail(path, "exercises", f"names {strange[0]!r}, which is no exercise kind")
    if len(set(kinds)) != len(kinds):
        raise _fail(path, "exercises", "lists a kind twice")
    objectives = _texts(path, "objectives", m.get("objectives", []))
    questions = _questions(path, m.get("questions", []))
    practice = _practice(path, m.get("practice", []), objectives, kinds, len(questions))
    minutes = m.get("review_minutes")
    if minutes is not None and (
        not isinstance(minutes, (int, float)) or isinstance(minutes, bool) or minutes < 0
    ):
        raise _fail(path, "review_minutes", "must be a number of minutes, 0 or more")
    return Page(
        title=_text(path, "title", m["title"]),
        slug=m["slug"],
        order=order,
        summary=_text(path, "summary", m["summary"]),
        source=source,
        path=path,
        core=m.get("core", False),
        builds_on=_texts(path, "builds_on", m.get("builds_on", [])),
        exercises=kinds,
        objectives=objectives,
        practice=practice,
        takeaways=_texts(path, "takeaways", m.get("takeaways", [])),
        questions=questions,
        review_minutes=minutes,
    )


def _unique(pages: list[Page], key: str) -> None:
    seen: dict = {}
    for page in pages:
        value = getattr(page, key)
        if value in seen:
            raise _fail(page.path, key, f"is also {seen[value].path.name}'s")
        seen[value] = page


def course(pages: list[Page]) -> list[Page]:
    """The pages in order, each stage numbered by its place; fails unless slugs and orders are
    unique, the stages' orders run 1, 2, ... n, every `builds_on` names a page and no exercise
    kind is on two pages."""
    pages = sorted(pages, key=lambda p: p.order)
    _unique(pages, "slug")
    _unique(pages, "order")
    stages = [p for p in pages if p.order < EXTRA_ORDER]
    for number, page in enumerate(stages, 1):
        if page.order != number:
            raise _fail(page.path, "order", f"must be {number}: stages are numbered 1, 2, ...")
    slugs = {p.slug for p in pages}
    placed: dict[str, Page] = {}
    for page in pages:
        for slug in page.builds_on:
            if slug not in slugs:
                raise _fail(page.path, "builds_on", f"names {slug!r}, which is no page")
        for kind in page.exercises:
            if kind in placed:
                raise _fail(page.path, "exercises", f"{kind!r} is on {placed[kind].path.name}")
            placed[kind] = page
    number = {p.slug: n for n, p in enumerate(stages, 1)}
    return [replace(p, number=number.get(p.slug)) for p in pages]


def load_pages() -> list[Page]:
    """content/*.md as pages, in order."""
    pages = []
    for path in sorted(CONTENT.glob("*.md")):
        post = frontmatter.load(path)
        pages.append(normalize(dict(post.metadata), path, post.content))
    return course(pages)
