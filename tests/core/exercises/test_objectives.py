"""Every objective of every stage is exercised by a generated kind or a check-yourself question.

The map is objectives.yaml beside this file (page slug -> one list per objective); the pages are
read here straight from content/*.md with yaml, so the test does not lean on the build's reader.
"""

from pathlib import Path

import yaml

from allreduce_explainer.exercises import KINDS
from helpers import ROOT

MAP = yaml.safe_load((Path(__file__).with_name("objectives.yaml")).read_text(encoding="utf-8"))


def front_matters() -> dict[str, dict]:
    """slug -> front matter, for every stage (order below the extra pages' 90)."""
    out = {}
    for path in sorted((ROOT / "content").glob("*.md")):
        meta = yaml.safe_load(path.read_text(encoding="utf-8").split("---")[1])
        if meta["order"] < 90:
            out[meta["slug"]] = meta
    return out


def test_every_stage_is_mapped_and_every_objective_has_an_exercise_or_question():
    pages = front_matters()
    assert set(MAP) == set(pages)
    for slug, meta in pages.items():
        covers = MAP[slug]
        assert len(covers) == len(meta["objectives"]), slug
        assert all(covers), f"{slug}: an objective with no exercise or question"
        questions = {f"q{i}" for i in range(1, len(meta.get("questions", [])) + 1)}
        kinds = set(meta.get("exercises") or [])
        named = {x for cover in covers for x in cover}
        assert named <= kinds | questions, (slug, named - kinds - questions)
        assert kinds <= named, (slug, "a kind the map does not place", kinds - named)


def test_every_kind_exercises_an_objective():
    mapped = {x for covers in MAP.values() for cover in covers for x in cover if x in KINDS}
    assert mapped == set(KINDS)
