"""Pages a first-timer finishes (issue 50, item 6): each stage's main prose shows at most 60
numbers, and the core pages 3 and 4 keep it within 900 words; the rest goes to Deeper boxes or
the quick reference.

What counts, on the page as the build writes it (`built`: `Builder.build_pages`), inside its
`<article>`:

- *main prose* is every text run that the build's own walker (`sitebuild.lessons.text_runs`)
  finds outside a `<details data-role="deeper">` box, and outside widgets (`data-widget`, the
  page's own labels `data-glossary="skip"`), code, maths, superscripts, buttons, selects,
  footnotes, link texts (cross-references such as "page 6"), the practice asides
  (`aside[data-role=practice]`: "In PyTorch", "Measure it") and the lesson boxes every page
  frames its prose with (`section.lesson-box`: objectives and takeaways; `section.lesson-check`:
  Check yourself with its answers). Headings, tables and lists in the prose count.
- a *number* is a run of digits, with its decimal or thousands separators, standing as a word
  of its own: a rendered fact (`<data>` 1.5, 2,475) or a typed number (8 GPUs, GPU 0, 25 MiB),
  each one number; the digits of a name (H100, GPT-2, ZeRO-3, BF16) are not. A range such as
  46–49 is two.
- *words* are counted as the reading time counts them (`sitebuild.lessons._words`, over the
  same text as above, so fewer runs than the reading time's prose: no practice asides).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitebuild import lessons

ROOT = Path(__file__).resolve().parents[2]
MAX_NUMBERS = 60
MAX_WORDS = 900
WORDS_CAPPED = ("ring-all-gather", "what-each-gpu-sends")  # pages 3 and 4
# a number as a word of its own: not after a letter, digit, hyphen or separator (ZeRO-3, H100)
NUMBER = re.compile(r"(?<![\w.,\-])\d+(?:[.,]\d+)*(?![\w])")


def _not_main(tag: str, attrs: lessons.Attrs) -> bool:
    classes = (attrs.get("class") or "").split()
    return (
        tag in lessons.NOT_PROSE
        or tag == "a"
        or "data-widget" in attrs
        or attrs.get("data-glossary") == "skip"
        or "footnote" in classes
        or attrs.get("data-role") == "practice"
        or "lesson-box" in classes
        or "lesson-check" in classes
    )


def main_prose(page_html: str) -> str:
    """The main prose of a built page's article (see the module's docstring), joined."""
    runs = lessons.text_runs(page_html, _not_main, within="article")
    return lessons._joined([text for _, text, box in runs if box is None])


def density(page_html: str) -> tuple[int, int]:
    """(numbers, words) of a built page's main prose."""
    text = main_prose(page_html)
    return len(NUMBER.findall(text)), lessons._words([text])


def stage_slugs() -> list[str]:
    import frontmatter

    paths = sorted((ROOT / "content").glob("[0-9]*.md"))
    return [frontmatter.load(p).metadata["slug"] for p in paths]


def test_the_count_follows_its_statement():
    page = (
        "<header><p>99 outside</p></header><article>"
        '<section class="lesson-box"><p>In this page: 1 2 3</p></section>'
        "<h2>Step 1 of 2</h2><p>On 8 GPUs, GPU 0 sends <data>1.5</data> times "
        "<data>2,475</data> tokens; H100, GPT-2, ZeRO-3 and BF16 are names; 46–49 GB/s, "
        '<a href="../x/">page 6</a>, <code>-b 8</code>, <math><mn>2</mn></math>.</p>'
        '<details data-role="deeper"><summary>Deeper: 7</summary><p>17 MB</p></details>'
        '<aside data-role="practice"><p>Measure 3 runs</p></aside>'
        '<figure data-widget="w"><p>64</p></figure><div class="footnote"><p>2019</p></div>'
        '<section class="lesson-check"><p>Q 5</p></section></article>'
    )
    # 1, 2 (heading), 8, 0, 1.5, 2,475, 46, 49
    numbers, words = density(page)
    assert numbers == 8
    text = main_prose(page)
    assert "Step 1 of 2" in text and "names" in text
    for absent in ("outside", "In this page", "page 6", "Deeper", "17 MB", "Measure", "64"):
        assert absent not in text
    assert words == lessons._words([text]) and words > 20


def table(built: Path) -> list[tuple[int, str, int, int]]:
    rows = []
    for n, slug in enumerate(stage_slugs(), 1):
        numbers, words = density((built / slug / "index.html").read_text(encoding="utf-8"))
        rows.append((n, slug, numbers, words))
    return rows


def test_the_density_table(built, capsys):
    """Prints the per-page table (run with -s to see it)."""
    rows = table(built)
    with capsys.disabled():
        print("\npage  slug                       numbers  words")
        for n, slug, numbers, words in rows:
            print(f"{n:>4}  {slug:<26} {numbers:>7}  {words:>5}")
    assert len(rows) == 10


@pytest.mark.parametrize("slug", stage_slugs())
def test_a_stage_shows_at_most_60_numbers_in_its_main_prose(built, slug):
    numbers, _ = density((built / slug / "index.html").read_text(encoding="utf-8"))
    assert numbers <= MAX_NUMBERS, f"{slug}: {numbers} numbers in the main prose"


@pytest.mark.parametrize("slug", WORDS_CAPPED)
def test_core_pages_3_and_4_keep_their_main_prose_within_900_words(built, slug):
    _, words = density((built / slug / "index.html").read_text(encoding="utf-8"))
    assert words <= MAX_WORDS, f"{slug}: {words} words in the main prose"
