"""The README's examples answer as they did before the command line became a package of command
records (commit 2b99ef5): each --json output equal to the one that code printed
(tests/cli/readme_json, recorded by record_golden.py), the exercises' bank byte for byte. Where
the answer differs on purpose, a later change said so: CHANGED names each difference by its key
path and why; every other value, and its type, is the old one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import readme_examples as ex

from allreduce_explainer.cli import main

GOLDEN = ex.ROOT / "tests" / "cli" / "readme_json"
INDEX = json.loads((GOLDEN / "index.json").read_text(encoding="utf-8"))

# example -> {(key path, "added" | "changed"): why}; a list's items are "[]"
BAND = "a band's figure is its class's own held-out nine in ten, beside its own worst"
ONE = "a class with one cluster at a size shows that cluster's figures, 'not checked'"
GPG = "the calculator's settings carry the run's -g as gpus_per_process"
NAME = "one name per source of time: NCCL's choice, not 'NCCL's model's pick' (T3)"
SWEPT_FIRST = (
    "the sweep keeps the run's first bucket (1 MiB with the cap unset, as page 7's default), "
    "where it used the cap and called that the first bucket above (T2)"
)
TYPES = (
    "each graph names its path types inside and across servers, which the tuning reads for LL128 "
    "and the intra-server latency (the search's own on a DGX preset, topology/searched.py)"
)
CHANGED = {
    "simulate-ring": {
        ("chunks", "added"): "the ring's chunks, which the steppers read instead of recomputing",
        ("owners", "added"): "each chunk's owner, which the steppers read instead of recomputing",
    },
    "calc": {
        ("nccl_band.nine_in_ten", "added"): BAND,
    },
    "nccl": {
        ("rows[].band.nine_in_ten", "added"): BAND,
        ("rows[].band.median", "changed"): ONE,
        ("rows[].band.worst", "changed"): ONE,
        **{
            (f"graphs.{a}.type_{side}", "added"): TYPES
            for a in ("Ring", "Tree", "NVLS", "NVLSTree")
            for side in ("intra", "inter")
        },
    },
    "nccl-tests": {
        ("encoding", "added"): "a log is read as UTF-8 or UTF-16, and says which",
        ("nccl_fit.calculator_settings.gpus_per_process", "added"): GPG,
        ("nccl_fit.calculator_settings.calc_kwargs.gpus_per_process", "added"): GPG,
        ("runs[].nccl_fit.calculator_settings.gpus_per_process", "added"): GPG,
        ("runs[].nccl_fit.calculator_settings.calc_kwargs.gpus_per_process", "added"): GPG,
        ("algorithm_basis", "changed"): NAME,
        ("nccl_fit.calculator_settings.note", "changed"): NAME,
        ("runs[].nccl_fit.calculator_settings.note", "changed"): NAME,
    },
    "nccl-debug": {
        ("calculator.gpus_per_process", "added"): GPG,
        ("algorithm_basis", "changed"): NAME,
        ("communicators", "added"): "a log of several communicators is read as several (empty "
        "for a log of one)",
        ("collnet.enable", "added"): "CollNet's state comes from NCCL_COLLNET_ENABLE as NCCL "
        "echoes it, not from the channel count",
        ("collnet.channels_are_collnet", "added"): "from 2.21 the collnet channel count NCCL "
        "prints is its coll channel count",
    },
    "ddp": {
        ("best_bucket_mb", "changed"): "the best cap is the least exposed time over every cap, "
        "the shortest decimal that gives its buckets, not a point of the 41-cap sweep (T1)",
        ("sweep[].exposed_s", "changed"): SWEPT_FIRST,
        ("sweep[].buckets", "changed"): SWEPT_FIRST,
        ("sweep[].allreduce_total_s", "changed"): SWEPT_FIRST,
        ("sweep_first_bucket_bytes", "added"): "the sweep's first bucket, which the human view "
        "names (None: each cap's own)",
    },
}


def differences(old, new, path: str = "") -> Iterator[tuple[str, str]]:
    """(key path, "added" | "removed" | "changed") wherever `new` is not `old`, a value of
    another type (1 for 1.0) changed too; a list of another length is changed as a whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old.keys() | new.keys():
            here = f"{path}.{key}" if path else key
            if key not in old:
                yield here, "added"
            elif key not in new:
                yield here, "removed"
            else:
                yield from differences(old[key], new[key], here)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for a, b in zip(old, new, strict=True):
            yield from differences(a, b, f"{path}[]")
    elif type(old) is not type(new) or old != new:
        yield path, "changed"


def test_differences_finds_each_kind():
    """The oracle for the comparison below, on values whose differences are known."""
    old = {"a": 1.0, "b": [{"c": 1}, {"c": 2}], "d": [1], "e": None}
    new = {"a": 1, "b": [{"c": 1}, {"c": 3, "f": 0}], "d": [1, 2], "g": None}
    assert set(differences(old, new)) == {
        ("a", "changed"),
        ("b[].c", "changed"),
        ("b[].f", "added"),
        ("d", "changed"),
        ("e", "removed"),
        ("g", "added"),
    }
    assert not set(differences(old, old))


def run(argv: list[str], capsys) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def arguments(entry: dict, tmp_path) -> list[str]:
    """The example's arguments as the README gives them today, held to those recorded."""
    argv = ex.argv(entry["line"], tmp_path)
    recorded = [a.format(tmp=tmp_path, root=ex.ROOT) for a in entry["argv"]]
    assert argv == recorded
    return argv


def answers(name: str, tmp_path, capsys) -> tuple[dict, dict]:
    """The example's JSON as 2b99ef5 printed it, and as the CLI prints it now."""
    entry = INDEX[name]
    old = json.loads((GOLDEN / entry["golden"]).read_text(encoding="utf-8"))
    return old, json.loads(run(arguments(entry, tmp_path), capsys))


def test_every_readme_example_with_an_answer_is_recorded():
    """Each README example but `figure` (a drawing) and --help has its golden file."""
    held = {e["line"] for e in INDEX.values()}
    assert held == {line for line in ex.lines() if " figure " not in line and "--help" not in line}
    assert set(CHANGED) <= set(INDEX)


@pytest.mark.parametrize("name", [n for n, e in INDEX.items() if e["golden"].endswith(".json")])
def test_a_readme_example_answers_as_before(name, tmp_path, capsys):
    old, new = answers(name, tmp_path, capsys)
    assert set(differences(old, new)) == set(CHANGED.get(name, {}))


@pytest.mark.parametrize(("name", "path"), [("calc", "nccl_band"), ("nccl", "rows[].band")])
def test_a_band_keeps_its_worst_beside_its_nine_in_ten(name, path, tmp_path, capsys):
    """The band's added figure: nine in ten of its class's rows at its size band and the bands
    either side, never below its own rows' nine in ten (so never below their median); its worst
    is the old figure where the class earned a band (the old None elsewhere: a class with one
    cluster now shows its figures, unvalidated); both None where it has no rows there."""
    old, new = answers(name, tmp_path, capsys)
    if path.startswith("rows[]"):
        pairs = [(a["band"], b["band"]) for a, b in zip(old["rows"], new["rows"], strict=True)]
    else:
        pairs = [(old[path], new[path])]
    assert pairs
    for was, now in pairs:
        assert now["worst"] == was["worst"] or (was["worst"] is None and not now["validated"])
        assert (now["nine_in_ten"] is None) is (now["worst"] is None)
        assert now["worst"] is None or now["nine_in_ten"] >= now["median"]


# The bank's golden was re-recorded from today's CLI once, on purpose (issue 50): ring_time draws
# eleven model sizes (50 problems in 300 seeds), a correct answer is shown rounded as the site
# shows it (its margin widened by the rounding), and times list µs and μs beside us.
def test_the_exercises_bank_is_byte_for_byte_the_old(tmp_path, capsys):
    entry = INDEX["exercises-export"]
    argv = arguments(entry, tmp_path)
    run(argv, capsys)
    written = Path(argv[argv.index("--out") + 1]).read_bytes()
    assert written == (GOLDEN / entry["golden"]).read_bytes()
