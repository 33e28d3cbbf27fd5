"""The library's door as mypy sees it: the reader's calls in usage.py pass, and a call with a
misspelt keyword or a wrong type fails, so the check in `make test` can fail. Each api
function's signature is held to its spec (names, order, types, defaults) by params.takes when
api.py loads; test_signatures_are_the_specs says so for every function, here."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path

import pytest

from allreduce_explainer import api
from allreduce_explainer.params import kinds, signature_errors

ROOT = Path(__file__).parents[2]
USAGE = Path(__file__).with_name("usage.py")
mypy_api = pytest.importorskip("mypy.api")

PUBLIC = [n for n, f in vars(api).items() if callable(f) and hasattr(f, "spec")]


def mypy(*paths: Path) -> tuple[str, int]:
    """mypy with the project's configuration on these files (run from the root, as make does)."""
    out, err, status = mypy_api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), *map(str, paths)]
    )
    return out + err, status


def test_every_public_question_is_declared_by_a_spec():
    assert {"simulate", "estimate", "busbw", "ddp", "calc", "shard", "nccl_sweep"} <= set(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_signatures_are_the_specs(name):
    f = getattr(api, name)
    assert signature_errors(inspect.signature(f), f.spec) == []
    # the leading parameters by position too, as the library has always taken them
    given = [q.kind for q in inspect.signature(f).parameters.values()]
    assert given == list(kinds(f.spec).values())


def test_mypy_passes_the_readers_calls():
    out, status = mypy(USAGE)
    assert status == 0, out


@pytest.mark.parametrize(
    "call, error",
    [
        ('api.simulate(algorithm="ring", gpus="four")', 'Argument "gpus" to "simulate"'),
        ('api.estimate(algorithm="ring", gpus=8, bytes=1e9, gpus_per_nod=8)', "gpus_per_nod"),
        ('api.busbw(8, 1e9, 5000.0, "allreduce", 1)', "Too many arguments"),
        ('x: int = api.calc(model="gpt2")', "Incompatible types in assignment"),
    ],
)
def test_mypy_refuses_a_wrong_call(tmp_path, call, error):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(f"from allreduce_explainer import api\n\n{call}\n")
    out, status = mypy(wrong)
    assert status == 1 and error in out, out


def test_make_test_runs_mypy():
    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert ".venv/bin/mypy" in recipe and shutil.which("mypy", path=str(ROOT / ".venv/bin"))
