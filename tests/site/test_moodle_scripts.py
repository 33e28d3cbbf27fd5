"""scripts/moodle against the tables a Moodle has, without a Moodle: grade.php's query for the
last attempt's SCORM values run in SQLite on the tables Moodle 4.3 and later create (written here
from mod/scorm/db/upgrade.php, steps 2023042401-2023042403), and its older path on
scorm_scoes_track's columns (mod/scorm/db/install.xml up to 4.2); student.py's wait for a page
is Moodle's own (lib/behat/behat_base.php, PAGE_READY_JS). What no test here runs: PHP itself
(`php -l` when PHP is installed), a Moodle install, the gradebook. bank.php's two checks are
held here on the bank itself: every numerical question's correct answer, as Moodle shows it (the
answer's stored text and the question's first unit: question/type/numerical/renderer.php,
correct_response), reads as the site's answer; every unit is listed with the multiplier that
turns the answer into it."""

import importlib.util
import re
import shutil
import sqlite3
import subprocess
import xml.etree.ElementTree as ET

import pytest

from allreduce_explainer.exercises import KINDS, export, feedback, problem
from helpers import ROOT

GRADE = (ROOT / "scripts" / "moodle" / "grade.php").read_text(encoding="utf-8")
STUDENT = (ROOT / "scripts" / "moodle" / "student.py").read_text(encoding="utf-8")
# Moodle 4.3+: upgrade.php 2023042401 (the columns), with {prefix} as Moodle's SQL names tables
MOODLE_43 = """
CREATE TABLE scorm_attempt (id INTEGER PRIMARY KEY, userid INT NOT NULL, scormid INT NOT NULL,
  attempt INT NOT NULL DEFAULT 1);
CREATE TABLE scorm_element (id INTEGER PRIMARY KEY, element VARCHAR(255) NOT NULL UNIQUE);
CREATE TABLE scorm_scoes_value (id INTEGER PRIMARY KEY, scoid INT NOT NULL, attemptid INT NOT NULL,
  elementid INT NOT NULL, value TEXT NOT NULL, timemodified INT NOT NULL DEFAULT 0);
"""
# Up to 4.2: install.xml's scorm_scoes_track
MOODLE_42 = """
CREATE TABLE scorm_scoes_track (id INTEGER PRIMARY KEY, userid INT NOT NULL, scormid INT NOT NULL,
  scoid INT NOT NULL, attempt INT NOT NULL DEFAULT 1, element VARCHAR(255) NOT NULL,
  value TEXT NOT NULL, timemodified INT NOT NULL DEFAULT 0);
"""
# (user, scorm, attempt, element, value): the student's two attempts, another learner's, and
# another activity's
TRACKS = [
    (7, 3, 1, "cmi.core.score.raw", "33"),
    (7, 3, 1, "cmi.core.lesson_status", "incomplete"),
    (7, 3, 2, "cmi.core.score.raw", "100"),
    (7, 3, 2, "cmi.core.lesson_status", "completed"),
    (8, 3, 2, "cmi.core.score.raw", "0"),
    (7, 4, 3, "cmi.core.score.raw", "50"),
]


def moodle_sql(php: str) -> str:
    """A query as grade.php writes it, for SQLite: {table} is Moodle's prefixed name."""
    return re.sub(r"\{(\w+)\}", r"\1", php)


def test_grade_reads_the_last_attempt_from_the_tables_of_moodle_4_3_and_later():
    query = re.search(r'"(SELECT e\.element.*?ORDER BY e\.element)"', GRADE, re.S)
    assert query, "grade.php has no query on scorm_scoes_value"
    db = sqlite3.connect(":memory:")
    db.executescript(MOODLE_43)
    attempts, elements = {}, {}
    for user, scorm, attempt, element, value in TRACKS:
        key = (user, scorm, attempt)
        if key not in attempts:
            attempts[key] = db.execute(
                "INSERT INTO scorm_attempt (userid, scormid, attempt) VALUES (?, ?, ?)", key
            ).lastrowid
        if element not in elements:
            elements[element] = db.execute(
                "INSERT INTO scorm_element (element) VALUES (?)", (element,)
            ).lastrowid
        db.execute(
            "INSERT INTO scorm_scoes_value (scoid, attemptid, elementid, value)"
            " VALUES (1, ?, ?, ?)",
            (attempts[key], elements[element], value),
        )
    # grade.php's MAX(attempt) for the student, then its query, as Moodle's DML runs them
    last = db.execute(
        "SELECT MAX(attempt) FROM scorm_attempt WHERE userid = 7 AND scormid = 3"
    ).fetchone()[0]
    rows = db.execute(
        moodle_sql(query.group(1)), {"userid": 7, "scormid": 3, "attempt": last}
    ).fetchall()
    assert dict(rows) == {"cmi.core.lesson_status": "completed", "cmi.core.score.raw": "100"}
    assert "table_exists('scorm_attempt')" in GRADE  # the schema is asked, not assumed


def test_grade_still_reads_scorm_scoes_track_on_older_moodles():
    db = sqlite3.connect(":memory:")
    db.executescript(MOODLE_42)
    db.executemany(
        "INSERT INTO scorm_scoes_track (userid, scormid, scoid, attempt, element, value)"
        " VALUES (?, ?, 1, ?, ?, ?)",
        TRACKS,
    )
    old = re.search(r"get_records_menu\('scorm_scoes_track', (.*?)\);", GRADE, re.S)
    assert old and "'attempt' =>" in old.group(1) and "'element, value'" in old.group(1)
    # the columns it filters on and reads exist in 4.2's table
    columns = {r[1] for r in db.execute("PRAGMA table_info(scorm_scoes_track)")}
    assert {"userid", "scormid", "attempt", "element", "value"} <= columns


@pytest.mark.skipif(not shutil.which("php"), reason="PHP is not installed here")
def test_the_php_scripts_parse():
    for name in ("grade.php", "setup.php", "bank.php"):
        path = ROOT / "scripts" / "moodle" / name
        out = subprocess.run(["php", "-l", str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr


def test_the_student_waits_for_moodles_own_page_ready_test_after_logging_in():
    ready = re.search(r"PAGE_READY_JS = \((.*?)\)\n", STUDENT, re.S).group(1)
    assert "M.util.pending_js" in ready and 'document.readyState === "complete"' in ready
    log_in = STUDENT[STUDENT.index("def log_in") : STUDENT.index("def sco")]
    assert "expect_navigation" in log_in and log_in.rstrip().endswith("ready(page)")


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "moodle" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# a number as a reader reads it (thousands separators dropped) and its unit, micro spelled one way
def _reading(text: str) -> tuple[float, str]:
    number, _, unit = text.replace(",", "").strip().partition(" ")
    return float(number), {"us": "µs", "μs": "µs"}.get(unit.strip(), unit.strip())


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    path = tmp_path_factory.mktemp("bank") / "bank.xml"
    path.write_bytes(export.export("moodle", export.questions(list(KINDS), 40, 2)))
    return path


def test_moodles_correct_answer_reads_as_the_sites_for_every_numerical_question(bank):
    shown = _script("shown").shown(str(bank))
    numerical = [q for q in ET.parse(bank).iter("question") if q.get("type") == "numerical"]
    assert len(shown) == len(numerical) > 40
    micro = 0
    for q in numerical:
        right = next(a for a in q.iter("answer") if a.get("fraction") == "100")
        units = [(u.findtext("unit_name"), float(u.findtext("multiplier"))) for u in q.iter("unit")]
        moodle = right.findtext("text") + (f" {units[0][0]}" if units else "")
        site = shown[q.findtext("idnumber")]
        assert _reading(moodle) == pytest.approx(_reading(site)), (moodle, site)
        # the answer written in each listed unit as Moodle converts it (value x multiplier) is
        # one the site's own checker takes as right
        kind, seed = q.findtext("idnumber").rsplit("-", 1)
        for name, multiplier in units:
            micro += name in ("µs", "μs", "us")
            text = f"{float(right.findtext('text')) * multiplier:.15g} {name}"
            assert feedback(problem(kind, int(seed)), text)["correct"], (kind, seed, text)
    assert micro >= 3  # µs, μs and us on the time questions


def test_the_students_expectations_fail_when_a_rule_is_broken():
    expect = _script("student").expectations
    lms = {"cmi.core.score.raw": "0", "cmi.interactions._count": "0"}
    first = [{"correct": False, "message": "type an answer first", **lms}] * 2
    order = [{"correct": False, **lms}, {"correct": True, **lms}]
    kept = {"seeds": {"a": 1}, "answers": {"a": "1 s"}, "lms": lms}
    end = {"problems": 4, "lms": {"cmi.core.score.raw": "75"}}
    assert all(expect(first, order, kept, kept, end).values())
    spent = [first[0], {**first[1], "cmi.interactions._count": "1"}]  # the comma counted
    counted = [order[0], {**order[1], "cmi.core.score.raw": "25"}]  # the second answer counted
    lost = {**kept, "answers": {"a": ""}}  # resume lost the typed answer
    full = {"problems": 4, "lms": {"cmi.core.score.raw": "100"}}
    for broken in (
        expect(spent, order, kept, kept, end),
        expect(first, counted, kept, kept, end),
        expect(first, order, kept, lost, end),
        expect(first, order, kept, kept, full),
    ):
        assert list(broken.values()).count(False) == 1
