"""The teacher's sheet's banks made in the browser (widgets.exercises.bank_file, through the
worker's bridge): links under the address the page was opened at, the build's kinds and seeds,
and a bad parameter named."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from dataclasses import asdict
from xml.etree import ElementTree as ET

import pytest

from allreduce_explainer import bridge
from allreduce_explainer.exercises.export import BANK_COUNT, BANK_FILES, BANK_SEED, FORMATS
from helpers import stages
from sitebuild.banks import places as build_places

ORIGIN = "http://127.0.0.1:8765/courses/ae/"  # where a teacher's copy of the site is served


def places() -> dict:
    """site/banks/places.json, as the build writes it and the page fetches it."""
    return {k: asdict(v) for k, v in build_places(stages()).items()}


def made(params: dict) -> dict:
    return json.loads(bridge.call("bank_file", json.dumps(params)))


def test_a_bank_made_in_the_browser_carries_the_pages_origin():
    where = places()
    answer = made({"format": "moodle", "site": ORIGIN, "places": where})
    assert answer["ok"], answer
    state = answer["state"]
    assert state["file"] == BANK_FILES["moodle"][0]
    root = ET.fromstring(base64.b64decode(state["base64"]))
    items = [q for q in root.findall("question") if q.get("type") != "category"]
    want = [(k, s) for k in where for s in range(BANK_SEED, BANK_SEED + BANK_COUNT)]
    assert [q.findtext("idnumber") for q in items] == [f"{k}-{s}" for k, s in want]
    for q, (kind, seed) in zip(items, want):
        key = f"exercise-{kind}"
        page = f"{ORIGIN}{where[kind]['slug']}/index.html?{key}.seed={seed}"
        text = q.findtext("questiontext/text") + q.findtext("generalfeedback/text")
        hrefs = re.findall(r'href="([^"]+)"', text)
        assert hrefs == [f"{page}&amp;solution=0#{key}", f"{page}#{key}"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_made_with_every_question(fmt):
    where = places()
    state = made({"format": fmt, "site": ORIGIN, "places": where})["state"]
    data = base64.b64decode(state["base64"])
    assert state["questions"] == len(where) * BANK_COUNT and state["file"] == BANK_FILES[fmt][0]
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
        assert len(rows) == state["questions"]
        assert all(r["link"].startswith(ORIGIN) for r in rows)


@pytest.mark.parametrize(
    "params, field",
    [
        ({"format": "pdf"}, "format"),
        ({"site": ""}, "site"),
        ({"site": "../"}, "site"),
        ({"site": "file:///tmp/site/"}, "site"),
        ({"site": "https://x.org/a/?q=1"}, "site"),
        ({"places": {}}, "places"),
        ({"places": {"nope": {"page": "p", "slug": "s", "objective": "o"}}}, "places"),
        ({"places": {"ring_time": {"page": "p"}}}, "places"),
        ({"places": ["ring_time"]}, "places"),
    ],
)
def test_bad_parameters_are_named(params, field):
    answer = made({"format": "gift", "site": ORIGIN, "places": places()} | params)
    assert not answer["ok"] and answer["error"]["field"] == field, answer
