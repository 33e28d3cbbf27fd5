"""The labs are nbgrader assignments that grade for real: `nbgrader generate_assignment` makes a
student version without the solutions, the hidden tests or the reflection's answers, and
`nbgrader autograde` gives the teacher's version full marks and a copy answering with each
exercise kind's named misconception zero, read from nbgrader's gradebook; and a figure a lab
prints is the one the other doors give (tests/notebook/course.py builds the course once).

Marked `notebook` (a kernel per lab and student: some seconds each).
"""

from __future__ import annotations

import json
import re

import pytest
from course import labs, nbgrader_cells
from lab_figures import LINES, contradictions, planted, printed
from nbgrader.api import Gradebook

from allreduce_explainer import cli
from allreduce_explainer.widgets.buckets import NEAR_BEST

pytestmark = pytest.mark.notebook

GENERIC = ("Not correct. Try the hint", "Not quite")  # the checker's words naming nothing


@pytest.fixture(scope="module")
def gradebook(course):
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        yield lambda lab, student: gb.find_submission_notebook(lab, lab, student).grades


def _autograded(grades) -> list:
    return [g for g in grades if g.cell_type == "code"]


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


@pytest.mark.parametrize("lab", labs())
def test_a_lab_asks_predict_task_check_reflect(course, lab):
    """A prediction before the widget, a task, a graded check, a manually graded reflection
    whose answer is in the teacher's version."""
    nb = course.notebook("source", lab)
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nbgrader_cells(nb, solution=True)]
    assert ids[0] == "prediction" and "reflection" in ids
    shown = next(k for k, c in enumerate(nb.cells) if re.search(r"^w$", c.source, re.M))
    assert ids.index("prediction") <= shown > nb.cells.index(nbgrader_cells(nb, solution=True)[0])
    assert _autograded_cells(nb), "no autograded check"
    (reflection,) = nbgrader_cells(nb, solution=True, grade=True)
    assert reflection.cell_type == "markdown" and "teacher" in reflection.source


def _autograded_cells(nb) -> list:
    return [c for c in nbgrader_cells(nb, grade=True) if c.cell_type == "code"]


@pytest.mark.parametrize("lab", labs())
def test_the_student_version_holds_no_solution(course, lab):
    text = json.dumps(course.notebook("release", lab))
    source = course.notebook("source", lab)
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
    assert "labs.misconception" not in text and "teacher" not in text
    assert text.count("raise NotImplementedError()") == len(
        [c for c in nbgrader_cells(source, solution=True) if c.cell_type == "code"]
    )
    for cell in _autograded_cells(source):  # the check the student sees, without its assert
        assert "assert" in cell.source and "assert" not in text


@pytest.mark.parametrize("lab", labs())
def test_the_solved_version_gets_full_marks(gradebook, lab):
    grades = gradebook(lab, "solved")
    auto = _autograded(grades)
    assert auto and all(g.score == g.max_score > 0 for g in auto), [
        (g.name, g.score, g.max_score) for g in auto
    ]
    manual = [g for g in grades if g not in auto]  # the reflection, for the lecturer to mark
    assert manual and all(g.needs_manual_grade for g in manual)


@pytest.mark.parametrize("lab", labs())
def test_misconceived_answers_get_zero_and_are_named(course, gradebook, lab):
    auto = _autograded(gradebook(lab, "misconceived"))
    assert auto and all(g.score == 0 for g in auto), [(g.name, g.score) for g in auto]
    nb = course.notebook("autograded", lab, "misconceived")
    for cell in _autograded_cells(nb):  # the checker's verdict names the misconception
        said = _text(cell)
        assert said.startswith("✗ ") and not said[2:].startswith(GENERIC), said


def test_the_buckets_lab_s_best_cap_is_the_command_line_s(course, capsys):
    """Stage 7's lab: the best cap its widget's judge names equals `allreduce-explainer ddp
    --sweep`'s, and the student's loop over whole caps comes within a near-best margin of it."""
    cli.main(["ddp", "--model", "gpt2", "--gpus", "512", "--gpus-per-node", "8", "--sweep",
              "--json"])  # fmt: skip
    best = json.loads(capsys.readouterr().out)
    nb = course.notebook("autograded", "07-ddp-buckets", "solved")
    text = "".join(_text(c) for c in nb.cells if c.cell_type == "code")
    named = set(re.findall(r"The best cap is ([\d.]+) MiB", text))
    assert named == {f"{best['best_bucket_mb']:g}"}
    (mine,) = re.findall(r"your best cap: \d+ MiB, ([\d.]+) ms exposed", text)
    assert (
        best["best_exposed_s"] * 1e3 - 5e-4
        <= float(mine)
        <= NEAR_BEST * best["best_exposed_s"] * 1e3
    )


@pytest.mark.parametrize("answer", ["25 MiB", "63 MiB", "1 MiB"])
def test_a_widget_s_predict_is_the_page_s_verdict(answer):
    """`w.predict` in a lab gives the verdict the page's predict-first form gets from the worker
    (bridge.predict) at the widget's parameters, after a change in a cell too."""
    from allreduce_explainer import bridge
    from allreduce_explainer.notebook import show

    w = show("ddp_buckets", model="gpt2")
    w.gpus = 64
    page = bridge.predict({"widget": "ddp_buckets", "params": w.state["params"], "answer": answer})
    assert w.predict(answer) == page and w.state["params"]["gpus"] == 64


def test_a_widget_without_a_prediction_says_so():
    from allreduce_explainer.notebook import show

    with pytest.raises(ValueError, match="naive asks no prediction"):
        show("naive").predict("1 s")


# ---- every figure a lab prints is another door's (issue 50: "a test fails if a lab prints a figure
# another door contradicts") -----------------------------------------------------------------------


@pytest.mark.parametrize("lab", labs())
def test_every_figure_a_lab_prints_is_the_command_line_s(course, lab):
    """The solved lab, run by nbgrader: each figure it prints, but its problems' statements, read
    back with its unit and held against the command line (or, where none answers, the page's
    formula) for the same question (tests/notebook/lab_figures.py)."""
    assert lab in LINES, f"{lab}: no pattern says what its lines print"
    text = printed(course.notebook("autograded", lab, "solved"))
    assert contradictions(lab, text) == []


@pytest.mark.parametrize("how", ["1.01", "unit"])
@pytest.mark.parametrize("lab", labs())
def test_a_figure_planted_in_a_lab_is_reported(course, lab, how):
    """The solved lab's output with one figure times 1.01, or in another unit of its quantity
    (ms for s, GiB for GB), is a contradiction; so is a figure no pattern holds."""
    text = printed(course.notebook("autograded", lab, "solved"))
    if how == "unit" and lab in UNITLESS:
        pytest.skip(UNITLESS[lab])
    assert contradictions(lab, planted(lab, text, how))
    assert contradictions(lab, text + "the answer: 42 GB\n")


UNITLESS = {  # labs whose every held figure is a plain number: no unit to plant
    "02-ring-reduce-scatter": "its figures are a stepper's values and its cells",
    "03-ring-all-gather": "its figures are BF16 values",
}
