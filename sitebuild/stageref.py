"""A stage named by its slug, printed as its number with a link: `{{ stage("ddp-buckets") }}` is
"stage 7" linked to the page, so inserting a stage renumbers every reference to the later ones.
The content's Markdown and the templates both call these; an unknown slug fails the build."""

from __future__ import annotations

from collections.abc import Callable

import jinja2
from markupsafe import Markup

from .page import Page


def stage_references(pages: list[Page]) -> dict[str, Callable]:
    """`stage(slug, word="stage", tail="")`: "stage 7", linked (a `tail` such as "'s" goes
    inside the link, so the word is not cut in two). `stage_list(*items, word="stages")`: several,
    each number linked, an item a slug or a (first, last) pair for a span: "stages 1–3, 5 and 6".
    Both take the links' `base` (and, for the error, the `page`) from the caller's context."""
    numbers = {p.slug: p.number for p in pages if p.number is not None}
    Context = jinja2.runtime.Context

    def link(ctx: Context, slug: str, word: str = "", tail: str = "") -> Markup:
        if slug not in numbers:
            where = getattr(ctx.get("page"), "path", "a template")
            raise SystemExit(f"{where}: no stage has the slug {slug!r}")
        text = f"{word} {numbers[slug]}{tail}" if word else str(numbers[slug])
        # the words are the author's, as in the prose around them (an escaped ' would cut "2's")
        return Markup('<a href="{}{}/index.html">{}</a>').format(ctx["base"], slug, Markup(text))

    @jinja2.pass_context
    def stage(ctx: Context, slug: str, word: str = "stage", tail: str = "") -> Markup:
        return link(ctx, slug, word, tail)

    @jinja2.pass_context
    def stage_list(ctx: Context, *items: str | tuple[str, str], word: str = "stages") -> Markup:
        spans = [(item,) if isinstance(item, str) else item for item in items]
        parts = [Markup("–").join(link(ctx, slug) for slug in span) for span in spans]
        listed = Markup(", ").join(parts[:-1])
        listed = Markup("{} and {}").format(listed, parts[-1]) if listed else parts[-1]
        return Markup("{} {}").format(word, listed)

    return {"stage": stage, "stage_list": stage_list}
