"""scripts/moodle against the tables a Moodle has, without a Moodle: grade.php's query for the
last attempt's SCORM values run in SQLite on the tables Moodle 4.3 and later create (written here
from mod/scorm/db/upgrade.php, steps 2023042401-2023042403), and its older path on
scorm_scoes_track's columns (mod/scorm/db/install.xml up to 4.2); student.py's wait for a page
is Moodle's own (lib/behat/behat_base.php, PAGE_READY_JS). What no test here runs: PHP itself
(`php -l` when PHP is installed), a Moodle install, the gradebook."""

import re
import shutil
import sqlite3
import subprocess

import pytest

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
    for name in ("grade.php", "setup.php"):
        path = ROOT / "scripts" / "moodle" / name
        out = subprocess.run(["php", "-l", str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr


def test_the_student_waits_for_moodles_own_page_ready_test_after_logging_in():
    ready = re.search(r"PAGE_READY_JS = \((.*?)\)\n", STUDENT, re.S).group(1)
    assert "M.util.pending_js" in ready and 'document.readyState === "complete"' in ready
    log_in = STUDENT[STUDENT.index("def log_in") : STUDENT.index("def sco")]
    assert "expect_navigation" in log_in and log_in.rstrip().endswith("ready(page)")
