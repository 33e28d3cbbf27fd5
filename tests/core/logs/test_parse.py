"""The nccl-tests output parser: every format logs/parse.py lists, and rows printed as nccl-tests
prints them (src/util.cu) read back to the same numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import counts, sizes, two_halves, wrongs

from allreduce_explainer.logs import parse as nccltests
from allreduce_explainer.logs.parse import Row, Skip, parse_line, parse_text
from helpers import examples

NEW = (
    "  1073741824     268435456     float     sum      -1   9306.7  115.37  115.37      0"
    "   9291.5  115.56  115.56      0"
)
OLD = (
    "           8             2   float     sum    42.27    0.00    0.00  1e-07"
    "    41.82    0.00    0.00  1e-07"
)
TAGGED = (
    "[0]      1048576        262144     float     sum      -1[0]    1626.5    0.64    1.24"
    "      0[0]    2302.3    0.46    0.87      0"
)
OPENMPI = (
    "[1,3]<stdout>:    67108864      16777216     float     sum      -1    24410    2.75"
    "    5.27    N/A    24425    2.75    5.27    N/A"
)


def test_current_format_with_root_and_wrong_column():
    r = parse_line(NEW)
    assert isinstance(r, Row)
    assert (r.size_bytes, r.count, r.type, r.redop, r.root) == (
        1073741824,
        268435456,
        "float",
        "sum",
        -1,
    )
    assert (r.out_of_place.time_us, r.out_of_place.algbw_GBps, r.out_of_place.busbw_GBps) == (
        9306.7,
        115.37,
        115.37,
    )
    assert (r.in_place.time_us, r.in_place.busbw_GBps, r.in_place.wrong) == (9291.5, 115.56, 0)
    assert r.rank is None


def test_old_format_without_root_and_with_error_column():
    r = parse_line(OLD)
    assert isinstance(r, Row) and r.root is None
    assert r.out_of_place.time_us == 42.27 and r.out_of_place.wrong == pytest.approx(1e-7)
    assert r.in_place.time_us == 41.82


def test_rank_tags_at_the_start_and_in_the_middle():
    r = parse_line(TAGGED)
    assert isinstance(r, Row) and r.rank == 0
    assert r.out_of_place.time_us == 1626.5 and r.in_place.time_us == 2302.3
    r = parse_line(OPENMPI)
    assert isinstance(r, Row) and r.rank == 3
    assert r.out_of_place.wrong is None and r.in_place.wrong is None  # N/A: checking was off
    assert r.out_of_place.time_us == 24410


def test_na_in_a_bandwidth_column():
    r = parse_line("8 2 float sum -1 N/A N/A N/A N/A 1.0 0.01 0.01 0")
    assert isinstance(r, Row)
    assert r.out_of_place.time_us is None and r.out_of_place.algbw_GBps is None


def test_per_iteration_columns_and_timestamp():
    line = (
        "  8  2  float  sum  -1  10.00  0.00  0.00  0  9.50  11.00  10.90  3.2"
        "  10.10  0.00  0.00  0  9.60  11.20  11.00  2.1  2025-01-02 03:04:05"
    )
    r = parse_line(line)
    assert isinstance(r, Row)
    assert r.out_of_place.per_iter_us == (9.5, 11.0, 10.9, 3.2)
    assert r.in_place.time_us == 10.10 and r.timestamp == "2025-01-02 03:04:05"


def test_in_place_only_rows_of_trace_replay():
    r = parse_line("  1024  256  float  sum  -1  12.5  0.08  0.14  0")
    assert isinstance(r, Row) and r.out_of_place is None and r.in_place.time_us == 12.5


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("", "blank"),
        ("   ", "blank"),
        ("#       size         count      type   redop    root     time   algbw", "header"),
        ("#  Rank  0 Group  0 Pid 313 on host device  0 [0x18] NVIDIA H100 80GB HBM3", "header"),
        ("# Avg bus bandwidth    : 41.3553 ", "summary"),
        ("# Out of bounds values : 0 OK", "summary"),
        ("[0] # Avg bus bandwidth    : 3.5", "summary"),
        ("host:1:2 [0] NCCL INFO comm 0x7f rank 15 nranks 32", "debug"),
        ("    AllReduce |        1         2         1   |             0              1", "debug"),
        ("8 2 float sum -1 1.0 0.0 0.0", "unreadable"),
        ("8 2 float sum -1 1.0 x 0.0 0 1.0 0.0 0.0 0", "unreadable"),
        ("8 2 float sum -1 -1.0 0.0 0.0 0 1.0 0.0 0.0 0", "unreadable"),
        ("8 2 3.5 sum -1 1.0 0.0 0.0 0 1.0 0.0 0.0 0", "unreadable"),
        ("8 2 float sum -1 inf 0.0 0.0 0 1.0 0.0 0.0 0", "unreadable"),
        ("x" * 5000, "unreadable"),
    ],
)
def test_lines_that_are_not_rows_say_why(line, kind):
    r = parse_line(line)
    assert isinstance(r, Skip) and r.kind == kind and r.reason


def test_summary_value_is_kept():
    r = parse_line("# Avg bus bandwidth    : 41.3553 ")
    assert r.name == "avg bus bandwidth" and r.value == "41.3553"


FILE = """\
# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid  13919 on       pt01 device  0 [0000:04:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  13920 on       pt01 device  1 [0000:04:02] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  13921 on       pt01 device  2 [0000:04:04] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  13922 on       pt01 device  3 [0000:04:06] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    36.62    0.00    0.00      0    36.41    0.00    0.00      0
    33554432       8388608     float     sum      -1   195.40  171.72  257.58      0   195.40  171.73  257.59      0
host:1:2 [0] NCCL INFO something
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 128.79
#
"""  # noqa: E501


def test_a_whole_file():
    rep = parse_text(FILE)
    assert [r.size_bytes for r in rep.rows] == [8, 33554432]
    assert rep.ranks == 4 and rep.avg_busbw_GBps == 128.79 and rep.wrong_column == "#wrong"
    unreadable = [(i, s) for i, s in rep.skipped if s.kind == "unreadable"]
    debug = [i for i, s in rep.skipped if s.kind == "debug"]
    assert unreadable == [] and debug == [14]  # the NCCL_DEBUG reader's line, not unreadable
    assert rep.to_dict()["rows"][1]["in_place"]["busbw_GBps"] == 257.59


def _float_str(value: float, width: int) -> str:
    """nccl-tests' getFloatStr (src/util.cu): fewer decimals as the number grows."""
    power, val = 0, 1
    while value >= val:
        power += 1
        val *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    return f"{value:{width}.1e}"


def _printed(size, count, dtype, op, root, halves, wrong) -> str:
    """A row as writeBenchmarkLinePreamble and writeBenchmarkLineBody print it."""
    text = f"{size:12d}  {count:12d}  {dtype:>8}  {op:>6}  {root:6d}"
    for t, a, b in halves:
        w = "   N/A" if wrong is None else f"{wrong:6g}"
        text += f"  {_float_str(t, 7)}  {_float_str(a, 6)}  {_float_str(b, 6)}  {w}"
    return text


@settings(max_examples=examples(200), deadline=None)
@given(
    sizes,
    counts,
    st.sampled_from(["float", "half", "bfloat16", "int8", "double"]),
    st.sampled_from(["sum", "prod", "max", "avg", "none"]),
    st.integers(-1, 1023),
    two_halves,
    wrongs,
    st.sampled_from(["", "[0]", "[1,7]<stdout>:"]),
)
def test_rows_printed_as_nccl_tests_prints_them_read_back(
    size, count, dtype, op, root, halves, wrong, tag
):
    line = tag + _printed(size, count, dtype, op, root, halves, wrong)
    r = parse_line(line)
    assert isinstance(r, Row), r
    assert (r.size_bytes, r.count, r.type, r.redop, r.root) == (size, count, dtype, op, root)
    for half, (t, a, b) in zip((r.out_of_place, r.in_place), halves, strict=True):
        for got, want, token in zip(
            (half.time_us, half.algbw_GBps, half.busbw_GBps), (t, a, b), half.text, strict=False
        ):
            assert abs(got - want) <= nccltests.resolution(token) * 1.0001 + 1e-9 * want
        assert half.wrong == (None if wrong is None else pytest.approx(wrong, rel=1e-5))


@pytest.mark.parametrize(
    ("token", "res"), [("9306.7", 0.05), ("115.37", 0.005), ("24410", 0.5), ("1.2e+07", 5e5)]
)
def test_resolution_is_half_the_last_printed_place(token, res):
    assert nccltests.resolution(token) == pytest.approx(res)


def test_agreement_allows_for_rounding_and_catches_a_wrong_gpu_count():
    """2 H100 PCIe, 1 GiB in 9306.7 µs: algbw = busbw = 115.37 GB/s (NVIDIA/nccl-tests#194)."""
    row = parse_line(
        "  1073741824     268435456     float     sum      -1   9306.7  115.37  115.37      0"
        "   9291.5  115.56  115.56      0"
    )
    a = nccltests.agreement(row.size_bytes, row.out_of_place, 2 * (2 - 1) / 2)
    assert a["algbw_agrees"] and a["busbw_agrees"]
    assert a["algbw_GBps"] == pytest.approx(2**30 / 9306.7 / 1e3)
    b = nccltests.agreement(row.size_bytes, row.out_of_place, 2 * (8 - 1) / 8)  # as if 8 GPUs
    assert b["algbw_agrees"] and not b["busbw_agrees"]
    na = parse_line("  8  2  float  sum  -1  N/A  N/A  N/A  N/A  N/A  N/A  N/A  N/A")
    assert isinstance(na, nccltests.Row), na
    assert nccltests.agreement(8, na.out_of_place, 1.0) is None
