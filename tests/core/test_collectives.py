"""The collective records against nccl-tests' own source (tests/data/nccl-tests-src/: each test's
GetBw function and testColl name, and the Makefile's list of programs, copied verbatim) and
against NCCL's factor as the port writes it (nccl/model.py)."""

import re

import pytest

from allreduce_explainer import nccl
from allreduce_explainer.collectives import ALLREDUCE, COLLECTIVES
from helpers import DATA

SRC = DATA / "nccl-tests-src"
RANKS = [*range(1, 65), 72, 96, 100, 1000, 1024, 4096, 65536]


def source(name: str) -> dict[int, str]:
    """A vendored excerpt: {line number: text} (its two header lines left out)."""
    lines = (SRC / name).read_text(encoding="utf-8").splitlines()
    return {int(n): text for n, text in (line.split(": ", 1) for line in lines[2:])}


def excerpt(c) -> str:
    return c.program.removesuffix("_perf") + ".cu.txt"


def c_factor(lines: dict[int, str]):
    """GetBw's busBw / algBw as a function of nranks: its `double factor = ...;` expression with
    the casts dropped, or 1 where it sets busBw to baseBw itself."""
    body = "\n".join(lines.values())
    if re.search(r"\*busBw = baseBw;", body):
        return lambda nranks: 1.0
    assert "*busBw = baseBw * factor;" in body
    expr = re.search(r"double factor = (.+);", body).group(1).replace("(double)", "")
    return lambda nranks: float(eval(expr, {}, {"nranks": nranks}))


def test_the_order_is_the_one_the_pages_and_the_cli_have_always_listed():
    assert tuple(COLLECTIVES) == (
        "allreduce",
        "reducescatter",
        "allgather",
        "alltoall",
        "broadcast",
        "reduce",
    )
    assert all(k == c.key for k, c in COLLECTIVES.items())
    assert ALLREDUCE is COLLECTIVES["allreduce"]


def test_every_program_is_built_by_nccl_tests_makefile():
    listed = next(t for t in source("Makefile.txt").values() if t.startswith("BIN_FILES_LIST"))
    built = {f"{name}_perf" for name in listed.split(":=")[1].split()}
    assert {c.program for c in COLLECTIVES.values()} <= built


@pytest.mark.parametrize("key", list(COLLECTIVES))
def test_nccl_name_is_the_tests_own(key):
    c = COLLECTIVES[key]
    lines = source(excerpt(c))
    struct = next(n for n, t in lines.items() if t.startswith("struct testColl"))
    assert lines[struct + 1].strip() == f'"{c.nccl_name}",'


@pytest.mark.parametrize("key", list(COLLECTIVES))
def test_busbw_factor_is_getbws(key):
    c = COLLECTIVES[key]
    theirs = c_factor(source(excerpt(c)))
    for n in RANKS:
        assert c.busbw_factor(n) == pytest.approx(theirs(n), rel=1e-15, abs=0), n


@pytest.mark.parametrize(
    "key, factor",
    [  # nccl-tests doc/PERFORMANCE.md, written out once more by hand
        ("allreduce", lambda n: 2 * (n - 1) / n),
        ("reducescatter", lambda n: (n - 1) / n),
        ("allgather", lambda n: (n - 1) / n),
        ("alltoall", lambda n: (n - 1) / n),
        ("broadcast", lambda n: 1.0),
        ("reduce", lambda n: 1.0),
    ],
)
def test_busbw_factor_and_its_text_agree_with_the_documented_formula(key, factor):
    c = COLLECTIVES[key]
    text = c.factor_text.replace("−", "-").replace("2(", "2*(")
    for n in RANKS:
        assert c.busbw_factor(n) == pytest.approx(factor(n), rel=1e-15, abs=0)
        assert eval(text, {}, {"n": n}) == pytest.approx(factor(n), rel=1e-15, abs=0)


def test_nccls_own_factor_agrees_for_every_collective_the_port_has():
    by_name = {c.nccl_name: c for c in COLLECTIVES.values()}
    for name in nccl.COLLECTIVES:
        for n in RANKS:
            assert nccl.busbw_factor(name, n) == by_name[name].busbw_factor(n), (name, n)


def test_labels_and_programs_are_distinct():
    for field in ("nccl_name", "label", "program"):
        values = [getattr(c, field) for c in COLLECTIVES.values()]
        assert len(set(values)) == len(values), field
