"""`allreduce-explainer exercises export`: the file it writes, and exit 2 naming the flag."""

import json
from xml.etree import ElementTree as ET

import pytest

from allreduce_explainer.cli import main
from allreduce_explainer.exercises import problem
from allreduce_explainer.exercises.units import unit
from helpers import refusal


def test_writes_a_moodle_bank_with_places(tmp_path, capsys):
    places = tmp_path / "places.json"
    places.write_text(
        json.dumps({"faster": {"page": "Stage 5 · X", "slug": "x", "objective": "Tell A from B."}})
    )
    out = tmp_path / "bank.xml"
    argv = ["exercises", "export", "--format", "moodle", "--kinds", "faster,ring_time"]
    argv += ["--seed", "5", "--count", "3", "--out", str(out), "--site", "https://e.org/ae"]
    assert main(argv + ["--places", str(places)]) == 0
    assert "6 questions" in capsys.readouterr().out
    root = ET.parse(out).getroot()
    items = [q for q in root.findall("question") if q.get("type") != "category"]
    assert [q.findtext("idnumber") for q in items][:3] == ["faster-5", "faster-6", "faster-7"]
    text = items[0].findtext("questiontext/text")
    assert (
        "Tell A from B." in text and "https://e.org/ae/x/index.html?exercise-faster.seed=5" in text
    )
    ring = items[3].find("answer")
    p = problem("ring_time", 5)
    assert float(ring.findtext("text")) == p.answer / unit(p.unit).scale


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--format", "pdf", "--kinds", "faster"], "--format"),
        (["--format", "gift", "--kinds", "nope"], "--kinds"),
        (["--format", "gift", "--kinds", "faster", "--count", "0"], "--count"),
        (["--format", "gift", "--kinds", "faster", "--seed", "-3"], "--seed"),
        (["--format", "gift", "--kinds", "faster", "--seed", "1.5"], "--seed"),
        (["--format", "gift", "--kinds", "faster", "--places", "/no/such.json"], "--places"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(args, flag, capsys, tmp_path):
    err = refusal(capsys, ["exercises", "export", *args, "--out", str(tmp_path / "x")])
    assert f"argument {flag}" in err


def test_a_bank_to_stdout_is_the_file_alone(capsysbinary):
    """--out -: stdout holds the bank's bytes and nothing after them."""
    from allreduce_explainer.exercises import export

    assert (
        main(["exercises", "export", "--format", "csv", "--kinds", "ring_time", "--out", "-"]) == 0
    )
    want = export.export("csv", export.questions("ring_time", 0, 1))
    assert capsysbinary.readouterr().out == want
