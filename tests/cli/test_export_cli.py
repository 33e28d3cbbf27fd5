"""`allreduce-explainer exercises export`: the file it writes, and exit 2 naming the flag."""

import json
from xml.etree import ElementTree as ET

from allreduce_explainer.cli import main
from allreduce_explainer.exercises import problem
from allreduce_explainer.exercises.units import unit


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
    p = problem("ring_time", 5)  # the answer as the site shows it, to 3 significant figures
    assert float(ring.findtext("text")) == float(f"{p.answer / unit(p.unit).scale:.3g}")


def test_a_bank_to_stdout_is_the_file_alone(capsysbinary):
    """--out -: stdout holds the bank's bytes and nothing after them."""
    from allreduce_explainer.exercises import export

    assert (
        main(["exercises", "export", "--format", "csv", "--kinds", "ring_time", "--out", "-"]) == 0
    )
    want = export.export("csv", export.questions("ring_time", 0, 1))
    assert capsysbinary.readouterr().out == want
