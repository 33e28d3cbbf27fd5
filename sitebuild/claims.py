"""What the prose may state: every figure with a unit is a named fact, and every sentence that
compares figures is a claim the build evaluates.

A figure typed by hand drifts when the core changes; a fact (`{{ f.name }}`) cannot. The rule
allows a typed figure only where it is not the site's own number: inside a quotation of a source
(`<q>`, `<blockquote>`, or `<span data-role="source">` for a source's figures reported beside its
citation), an equation, code, or a worked example whose inputs the same sentence states
(`<span data-role="example">`). A comparison ("twice", "most of it hides", "below") is
written `{% call claim(condition) %}sentence{% endcall %}`; the build fails, naming the page and
the sentence, when the condition on the facts is false at the page's defaults.
"""

from __future__ import annotations

import re
from pathlib import Path

from allreduce_explainer.sources import SOURCES, retired

from .lessons import FIGURE, Attrs, text_runs

# where a typed figure is not the site's own: quotations, equations, code, worked examples
QUOTED = {"q", "blockquote", "code", "pre", "math", "kbd", "samp"}


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
    rule allows: "450 GB/s", "25 MiB", "7 times" (an operator such as "8 ×" is arithmetic)."""
    found = []
    for _, text, _ in text_runs(html, _not_prose):
        found += [m.group().strip() for m in FIGURE.finditer(text) if not m.group().endswith("×")]
    return found


def refuse_typed_figures(path: Path, where: str, html: str) -> None:
    """Fails the build when `html` (the part of a page named `where`) types a figure by hand."""
    figures = typed_figures(html)
    if figures:
        raise SystemExit(
            f"{path}: {where} types {len(figures)} figure(s) by hand: "
            + ", ".join(repr(f) for f in figures)
            + ". Quote a fact ({{ f.name }}), or mark a source's words <q>…</q> (its figures beside"
            ' the citation <span data-role="source">…</span>), a worked example whose inputs the'
            ' sentence states <span data-role="example">…</span>.'
        )


def refuse_retired_names(path: Path, html: str) -> None:
    """Fails the build when a page names a source of time by a name it no longer has: each
    source has one name (allreduce_explainer/sources.py), so a reader never meets two for it."""
    found = retired(re.sub(r"<[^>]+>", " ", html))
    if found:
        names = ", ".join(repr(s.name) for s in SOURCES)
        raise SystemExit(f"{path}: names a source of time as {found}; its names are {names}")


class Claims:
    """`claim` for one page's template: returns the sentence when its condition holds, and
    fails the build with the page and the sentence when it does not."""

    def __init__(self, path: Path):
        self.path = path
        self.checked: list[str] = []

    def __call__(self, holds: bool, caller) -> str:
        sentence = caller()
        if not isinstance(holds, bool):
            raise SystemExit(f"{self.path}: a claim's condition must be true or false: {holds!r}")
        if not holds:
            plain = " ".join(re.sub(r"<[^>]+>", "", sentence).split())
            raise SystemExit(f"{self.path}: this claim is false at the page's defaults: {plain!r}")
        self.checked.append(sentence)
        return sentence
