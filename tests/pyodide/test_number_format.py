"""One number format: the narration (Python) and the grid (JavaScript) print a value alike."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from allreduce_explainer.widgets.common import DIGITS, value_text

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "tests" / "data" / "number_format.json"
CASES = json.loads(TABLE.read_text())["cases"]


def javascript(table: Path) -> list[str]:
    """The page's formatter (stepper.js's formatValue) on each case of a table, run by Node."""
    node = shutil.which("node")
    assert node, "Node.js is needed to run the page's formatter"
    script = ROOT / "tests" / "pyodide" / "number_format.mjs"
    out = subprocess.run(
        [node, str(script), str(table)], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['value']!r}-{c['dtype']}")
def test_python_prints_each_case(case):
    assert case["digits"] == DIGITS[case["dtype"]]
    assert value_text(case["value"], case["dtype"]) == case["text"]


def test_javascript_prints_each_case_the_same():
    assert javascript(TABLE) == [c["text"] for c in CASES]


def test_both_agree_on_random_values(tmp_path):
    """Doubles of every exponent, and bf16 values (few mantissa bits, so many exact ties)."""
    rng = random.Random(13)
    values = [struct.unpack("<d", rng.randbytes(8))[0] for _ in range(600)]
    values += [rng.randint(-255, 255) * 2.0 ** rng.randint(-30, 40) for _ in range(600)]
    cases = [
        {"value": v, "dtype": dtype, "digits": DIGITS[dtype]}
        for v in values
        if v == v and abs(v) != float("inf")
        for dtype in ("bf16", "fp32")
    ]
    (tmp_path / "cases.json").write_text(json.dumps({"cases": cases}))
    expected = [value_text(c["value"], c["dtype"]) for c in cases]
    assert javascript(tmp_path / "cases.json") == expected
