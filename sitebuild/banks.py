"""site/banks/: the course's question banks, built with the site for the teacher's sheet to link.

Every exercise kind of every stage, BANK_COUNT problems each from seed BANK_SEED, in each format of
`exercises/export.py` (Moodle XML, QTI for Canvas, GIFT, CSV), and `places.json`: each kind's
page, slug and objective, read here from the pages' front matter (`exercises:`, `practice:`),
which the CLI's `--places` reads for banks of other seeds. The links are relative to the site's
root unless the build is given the address the site is hosted at (`build.py --url`).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from allreduce_explainer.exercises import export

from .page import Page

BANK_SEED, BANK_COUNT = 0, 5
NAME = "allreduce-explainer"
FILES = {  # format -> (file, what a teacher does with it)
    "moodle": (f"{NAME}-moodle.xml", "Moodle XML: Question bank → Import → Moodle XML format"),
    "qti": (f"{NAME}-qti.zip", "QTI 1.2 for Canvas: Import course content → QTI .zip file"),
    "gift": (f"{NAME}-gift.txt", "GIFT: Moodle's text format, also read by other platforms"),
    "csv": (f"{NAME}.csv", "CSV: a spreadsheet of every question, answer and margin"),
}


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
    """The bank files and places.json; returns, per format, its file, label and question count
    (the teacher's sheet lists them)."""
    where = places(stages)
    kinds = list(where)
    qs = export.questions(kinds, BANK_SEED, BANK_COUNT, where, url)
    dest = site / "banks"
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt, (name, label) in FILES.items():
        (dest / name).write_bytes(export.export(fmt, qs))
        out.append({"format": fmt, "file": name, "label": label, "questions": len(qs)})
    text = json.dumps({k: asdict(v) for k, v in where.items()}, indent=1, ensure_ascii=False)
    (dest / "places.json").write_text(text + "\n", encoding="utf-8")
    return out


def bank_facts(banks: list[dict]) -> dict:
    """The figures the teacher's sheet quotes about its banks."""
    return {
        "bank_questions": banks[0]["questions"],
        "bank_per_kind": BANK_COUNT,
        "bank_kinds": banks[0]["questions"] // BANK_COUNT,
        "bank_seed": BANK_SEED,
    }
