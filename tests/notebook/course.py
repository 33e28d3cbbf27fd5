"""A course directory made from labs/ as a lecturer would run it: nbgrader generates every lab's
student version, then autogrades two students of every lab at once: `solved`, who hands in the
teacher's version, and `misconceived`, whose every graded answer is the one its exercise kind's
first named misconception gives (exercises.labs.misconception), computed, not typed.

A graded answer is recognised by its test cell, which checks it as `labs.check(P, answer)`: the
misconceived copy sets `answer = labs.misconception(P)` at the end of the solution of the answer
cell before that test (nbgrader restores test cells from its database, so only answer cells are
the student's to change).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from helpers import ROOT

LABS = ROOT / "labs"
STUDENTS = ("solved", "misconceived")
CHECKED = re.compile(r"labs\.check\((\w+), (\w+)\)")
END = "### END SOLUTION"


@dataclass(frozen=True)
class Course:
    root: Path

    def notebook(self, folder: str, lab: str, student: str = ".") -> nbformat.NotebookNode:
        """A lab's notebook in `folder` (source, release, autograded) for `student`."""
        path = self.root / folder / student / lab / f"{lab}.ipynb"
        return nbformat.read(path, as_version=4)


def labs() -> list[str]:
    return sorted(p.name for p in (LABS / "source").iterdir() if p.is_dir())


def nbgrader_cells(nb, **flags) -> list:
    """The cells whose nbgrader metadata has every flag given (grade=True, solution=True ...)."""
    return [
        c for c in nb.cells
        if all(c.metadata.get("nbgrader", {}).get(k, False) == v for k, v in flags.items())
    ]  # fmt: skip


def misconceived(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """`nb` with each checked answer set to its problem's first named misconception."""
    nb = nbformat.from_dict(nb)
    answer_cell = None
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            answer_cell = cell
        if not meta.get("grade") or cell.cell_type != "code":
            continue
        for problem, answer in dict(CHECKED.findall(cell.source)).items():
            assert answer_cell is not None and END in answer_cell.source, cell.source
            wrong = f"{answer} = labs.misconception({problem})\n"
            answer_cell.source = answer_cell.source.replace(END, wrong + END)
    return nb


def run(args: list[str], cwd: Path) -> None:
    """An nbgrader command as a lecturer types it, with this checkout's code in the kernels."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        ["nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]


def graded(folder: Path) -> Course:
    """labs/ copied to `folder`, every lab generated, handed in by both students, autograded."""
    shutil.copytree(LABS, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".ipynb_checkpoints"
    ))  # fmt: skip
    course = Course(folder)
    run(["generate_assignment", "*"], folder)
    for lab in labs():
        source = course.notebook("source", lab)
        for student, nb in zip(STUDENTS, (source, misconceived(source)), strict=True):
            out = folder / "submitted" / student / lab / f"{lab}.ipynb"
            out.parent.mkdir(parents=True)
            nbformat.write(nb, out)
    run(["autograde", "*"], folder)
    return course
