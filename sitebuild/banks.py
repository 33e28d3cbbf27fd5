"""site/banks/: the course's question banks, built with the site for the teacher's sheet to link.

Every exercise kind of every stage, BANK_COUNT problems each from BANK_SEED (the core's, above
every seed a page shows with its solution), in each format of `exercises/export.py` (Moodle XML,
QTI for Canvas, GIFT, CSV), and `places.json`: each kind's page, slug and objective, read here
from the pages' front matter (`exercises:`, `practice:`), which the CLI's `--places` and the
teacher's sheet read for banks made elsewhere. A bank's links must work inside a course platform,
so the files are written only when the build knows the address the site is hosted at
(`build.py --url`); without it the teacher's sheet makes them in the browser, from places.json,
with links under the address it was opened at (`widgets.exercises.bank_file`).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from allreduce_explainer.exercises import export
from allreduce_explainer.exercises.export import BANK_COUNT, BANK_FILES, BANK_SEED

from .page import Page

PLACES = "places.json"


def places(stages: list[Page]) -> dict[str, export.Place]:
    """Each kind's page and the first objective whose practice names it."""
    out = {}
    for p in stages:
        for kind in p.exercises:
            objective = next(
                (o for o, drills in zip(p.objectives, p.practice) if kind in drills),
                p.objectives[0] if p.objectives else "",
            )
            out[kind] = export.Place(f"Stage {p.number} · {p.title}", p.slug, objective)
    return out


def write_banks(site: Path, stages: list[Page], url: str = "") -> list[dict]:
    """places.json, and with the site's `url` the bank files; returns, per format, its file,
    label, question count and whether it was written (the teacher's sheet lists them)."""
    where = places(stages)
    qs = export.questions(list(where), BANK_SEED, BANK_COUNT, where, url)
    dest = site / "banks"
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt, (name, label) in BANK_FILES.items():
        if url:
            (dest / name).write_bytes(export.export(fmt, qs))
        entry = {"format": fmt, "file": name, "label": label, "questions": len(qs)}
        out.append(entry | {"written": bool(url)})
    text = json.dumps({k: asdict(v) for k, v in where.items()}, indent=1, ensure_ascii=False)
    (dest / PLACES).write_text(text + "\n", encoding="utf-8")
    return out


def bank_facts(banks: list[dict]) -> dict:
    """The figures the teacher's sheet quotes about its banks."""
    return {
        "bank_questions": banks[0]["questions"],
        "bank_per_kind": BANK_COUNT,
        "bank_kinds": banks[0]["questions"] // BANK_COUNT,
        "bank_seed": BANK_SEED,
    }
