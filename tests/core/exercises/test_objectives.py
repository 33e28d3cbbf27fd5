"""Every objective of every stage is exercised by a generated kind or a check-yourself question.

The map is each page's `practice:` front matter (one list per objective, in order); the pages are
read here straight from content/*.md with yaml, so the test does not lean on the build's reader.
"""

import yaml

from allreduce_explainer.exercises import KINDS
from helpers import ROOT


def front_matters() -> dict[str, dict]:
    """slug -> front matter, for every stage (order below the extra pages' 90)."""
    out = {}
    for path in sorted((ROOT / "content").glob("*.md")):
        meta = yaml.safe_load(path.read_text(encoding="utf-8").split("---")[1])
        if meta["order"] < 90:
            out[meta["slug"]] = meta
    return out


def test_every_stage_is_mapped_and_every_objective_has_an_exercise_or_question():
    for slug, meta in front_matters().items():
        covers = meta["practice"]
        assert len(covers) == len(meta["objectives"]), slug
        assert all(covers), f"{slug}: an objective with no exercise or question"
        questions = {f"q{i}" for i in range(1, len(meta.get("questions", [])) + 1)}
        kinds = set(meta.get("exercises") or [])
        named = {x for cover in covers for x in cover}
        assert named <= kinds | questions, (slug, named - kinds - questions)
        assert kinds <= named, (slug, "a kind the map does not place", kinds - named)


def test_every_kind_exercises_an_objective():
    maps = [meta["practice"] for meta in front_matters().values()]
    mapped = {x for covers in maps for cover in covers for x in cover if x in KINDS}
    assert mapped == set(KINDS)
