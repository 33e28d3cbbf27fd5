"""Real all_reduce_perf logs (tests/data/nccl-tests, cited in SOURCES.json) read as published, the
-J JSON document as nccl-tests' src/util.cu writes it, and MEASURED.json kept equal to the logs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import bandwidths, counts, sizes, times, two_halves, wrongs

import helpers
from allreduce_explainer import api
from allreduce_explainer.errors import ParamError
from allreduce_explainer.logs import parse as nccltests
from allreduce_explainer.logs.parse import Row, parse_json, parse_line, parse_runs, parse_text
from helpers import examples

DATA = helpers.DATA / "nccl-tests"
SOURCES = json.loads((DATA / "SOURCES.json").read_text())["logs"]
MEASURED = json.loads((DATA / "MEASURED.json").read_text())
IDS = [s["file"] for s in SOURCES]


def _rows(source: dict) -> list[Row]:
    return parse_text((DATA / source["file"]).read_text()).rows


def test_every_file_is_cited_and_every_citation_has_its_file():
    files = {p.name for p in DATA.glob("*.txt")}
    assert files == set(IDS)
    for s in SOURCES:
        assert s["url"].startswith("https://github.com/") and s["where"] and s["hardware_basis"]


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_each_log_reads_as_published(source):
    text = (DATA / source["file"]).read_text()
    report = parse_text(text)
    want = source["published"]
    rows = report.rows
    assert len(rows) == want["rows"]
    assert (rows[0].size_bytes, rows[-1].size_bytes) == (want["first_size"], want["last_size"])
    peak = max(h.busbw_GBps for r in rows for h in (r.out_of_place, r.in_place))
    assert peak == want["max_busbw_GBps"]
    assert report.avg_busbw_GBps == want["avg_busbw_GBps"]
    assert not [
        s for _, s in report.skipped if s.kind == "unreadable" and s.reason.startswith("has")
    ]
    log = parse_runs(text)
    assert len(log.runs) == 1 and log.runs[0].rows == rows


def _derived_algbw(source: dict, row: Row, time_us: float) -> tuple[float, float]:
    """algbw and busbw as nccl-tests computes them for this log's collective and GPU count."""
    n = source["gpus"]
    if source["collective"] == "all_gather (old)":  # b188a15 all_gather.cu:77-81
        algbw = row.count * 4 * (n - 1) / time_us / 1e3
        return algbw, algbw
    algbw = row.size_bytes / time_us / 1e3  # all_reduce.cu: algbw = S / t, busbw x 2(n-1)/n
    return algbw, algbw * 2 * (n - 1) / n


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_each_rows_bandwidths_follow_from_its_size_and_time(source):
    """A check of the copy: every printed algbw and busbw is what nccl-tests would print for the
    printed size and time at the GPU count SOURCES.json gives, within its rounding."""
    for row in _rows(source):
        for half in (row.out_of_place, row.in_place):
            rel = nccltests.resolution(half.text[0]) / half.time_us
            algbw, busbw = _derived_algbw(source, row, half.time_us)
            assert nccltests.agrees(algbw, half.algbw_GBps, half.text[1], rel), row
            assert nccltests.agrees(busbw, half.busbw_GBps, half.text[2], rel), row


FORMATS = {
    "current": (True, True, 0.0),
    "older": (True, False, None),
    "oldest": (False, False, None),
}


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_each_format_names_its_columns(source):
    has_redop, has_root, _ = FORMATS[source["format"].split(":")[0].split(",")[0]]
    for row in _rows(source):
        assert (row.redop is not None, row.root is not None) == (has_redop, has_root)
        assert row.root in (None, -1)


def test_the_error_column_is_a_float_and_wrong_a_count():
    older = parse_text((DATA / "nccl-1244-16xh20-2nodes-nvlstree-error-column.txt").read_text())
    assert older.wrong_column == "error"
    assert older.rows[0].in_place.wrong == pytest.approx(4e-7)
    current = parse_text((DATA / "gcp-a3mega-16xh100-2nodes.txt").read_text())
    assert current.wrong_column == "#wrong" and current.ranks == 16
    assert {r.out_of_place.wrong for r in current.rows} == {0}


def test_srun_task_labels_are_read_as_the_rank():
    """`srun --label` puts `N: ` before each line (the AWS logs); the row after it is unchanged."""
    rows = _rows({"file": "aws-awsome-2xp5-16xh100-efa.txt"})
    assert {r.rank for r in rows} == {0}
    bare = parse_line(
        "  17179869184    4294967296     float     sum      -1    66132  259.78  487.09      0"
        "    66109  259.87  487.26      0"
    )
    assert rows[-1] == replace(bare, rank=0)
    labelled = "12:   8   2   float   sum   -1   69.12  0.00  0.00  0   72.43  0.00  0.00  0"
    assert parse_line(labelled).rank == 12
    assert parse_line("8:00  is not a row").kind == "unreadable"


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_the_cli_reads_each_log_with_its_json_keys(source):
    out = api.nccl_tests(log=(DATA / source["file"]).read_text(), gpus=source["gpus"])
    keys = {"rows", "gpus", "fit", "nccl_fit", "runs", "skipped", "blank_lines", "lines"}
    keys.add("algorithm_basis")  # what each row's algorithm and protocol are
    keys.add("encoding")  # UTF-8, or UTF-16 as PowerShell writes it
    assert set(out) == keys  # "prediction" too, given the GPU (tests/core/logs/test_ncclfit.py)
    assert len(out["rows"]) == source["published"]["rows"] and out["gpus"] == source["gpus"]


def test_measured_json_holds_each_logs_largest_row():
    by_file = {m["file"]: m for m in MEASURED["logs"]}
    assert set(by_file) == set(IDS)
    for s in SOURCES:
        last = _rows(s)[-1]
        m = by_file[s["file"]]
        assert m["size_bytes"] == last.size_bytes
        assert m["busbw_out_of_place_GBps"] == last.out_of_place.busbw_GBps
        assert m["busbw_in_place_GBps"] == last.in_place.busbw_GBps
        assert (m["gpus"], m["gpu"], m["nodes"]) == (
            s["gpus"],
            s["hardware"]["gpu"],
            s["hardware"]["nodes"],
        )


def _checks() -> list[dict]:
    return [m for m in MEASURED["logs"] + MEASURED["tables"] if m["for_model_check"]]


@pytest.mark.parametrize("gpu", ["A100", "H100", "H200"])
def test_measured_json_has_one_server_figures_for_the_model_check(gpu):
    """The model check holds NCCL's model on one 8-GPU server of each of these, with NCCL's choice;
    H100 also with rings forced."""
    one_server = [m for m in _checks() if m["nodes"] == 1 and m["gpus"] == 8 and gpu in m["gpu"]]
    assert any("RING" not in m["algorithm"] for m in one_server)
    if gpu == "H100":
        assert any(m["algorithm"].startswith("NCCL_ALGO=RING") for m in one_server)


@pytest.mark.parametrize("fabric", ["InfiniBand", "RoCE", "EFA"])
def test_measured_json_has_two_server_figures_on_each_fabric(fabric):
    assert [m for m in _checks() if m["nodes"] == 2 and fabric in m["network"]]


# ---- -J JSON, as src/util.cu (nccl-tests 2.19.6) writes it -------------------------------------


def _lf(v) -> str:
    """A double as util.cu prints it ("%lf", line 296), null for nothing."""
    return "null" if v is None else f"{v:f}"


def _json_half(h) -> str:
    if h is None:
        return "null"
    values = (h.time_us, h.algbw_GBps, h.busbw_GBps, h.wrong)
    fields = ",".join(
        f'"{k}":{_lf(v)}'
        for k, v in zip(("time", "alg_bw", "bus_bw", "nwrong"), values, strict=True)
    )
    return "{" + fields + "}"


def _json_doc(rows: list[Row], devices: int, nthreads: int = 1, ngpus: int = 1, **extra) -> str:
    """A -J document written the way util.cu writes one (one line; numbers "%lf"; root as "%6i"
    text; nwrong null when not checked). Built by this test: no published -J file was found."""
    results = ",".join(
        f'{{"size":{r.size_bytes},"count":{r.count},"type":"{r.type}","redop":"{r.redop}",'
        f'"root":"{r.root:6d}","out_of_place":{_json_half(r.out_of_place)},'
        f'"in_place":{_json_half(r.in_place)},"actual_iterations":20,"experiment_name":""}}'
        for r in rows
    )
    config = {
        "nthreads": nthreads,
        "ngpus": ngpus,
        "devices": [{"rank": i, "hostname": f"node{i // 8}"} for i in range(devices)],
    }
    tail = "".join(f',"{k}":{json.dumps(v)}' for k, v in extra.items())
    head = f'{{"version":3,"nccl_version":23007,"config":{json.dumps(config)}'
    return f'{head},"results":[{results}]{tail}}}'


def test_json_output_reads_like_the_printed_table():
    rows = _rows(SOURCES[0])
    doc = _json_doc(rows, 16, average_bus_bandwidth={"bandwidth": 70.742, "okay": "unchecked"})
    log = parse_runs(doc)
    assert len(log.runs) == 1 and not log.skipped
    run = log.runs[0]
    assert len(run.ranks) == 16 and run.hosts == {"node0", "node1"}
    assert run.avg_busbw_GBps == 70.742
    got = run.rows
    assert [r.size_bytes for r in got] == [r.size_bytes for r in rows]
    for a, b in zip(got, rows, strict=True):
        assert (a.type, a.redop, a.root) == (b.type, b.redop, b.root)
        for ha, hb in ((a.out_of_place, b.out_of_place), (a.in_place, b.in_place)):
            assert (ha.time_us, ha.algbw_GBps, ha.busbw_GBps, ha.wrong) == (
                hb.time_us,
                hb.algbw_GBps,
                hb.busbw_GBps,
                hb.wrong,
            )
            assert nccltests.decimals(ha.text[0]) == 6  # "%lf": six places


def test_json_gpu_count_is_devices_times_threads_times_gpus():
    """One device entry per process (util.cu parses the first '#  Rank' line of each process's
    block), each process driving nthreads x ngpus GPUs: `-g 8` in one process is 8 GPUs."""
    rows = _rows(SOURCES[0])[:2]
    assert len(parse_runs(_json_doc(rows, 1, ngpus=8)).runs[0].ranks) == 8
    assert len(parse_runs(_json_doc(rows, 2, nthreads=2, ngpus=2)).runs[0].ranks) == 8


def test_json_versions_and_variants():
    rows = _rows(SOURCES[0])[-3:]
    typo = {"average_bus_bandwidith": {"bandwidith": 300.5}}  # version 1, before 85ca91d
    assert parse_runs(_json_doc(rows, 16, **typo)).runs[0].avg_busbw_GBps == 300.5
    two = _json_doc(rows + rows, 16)  # -d all / -o all: sizes restart, a new run
    assert [len(r.rows) for r in parse_runs(two).runs] == [3, 3]
    doc = json.loads(_json_doc(rows, 16))
    doc["results"][0]["out_of_place"] = None  # trace replay
    doc["results"][1]["in_place"]["cpu_time"] = doc["results"][1]["in_place"].pop("time")  # -C
    doc["results"][2]["in_place_per_iter"] = {
        "min_us": 1.5,
        "max_us": 9.0,
        "p99_us": 8.5,
        "cv_pct": 2.0,
    }
    doc["results"][2]["in_place"]["nwrong"] = None  # -c 0
    got = parse_json(json.dumps(doc)).runs[0].rows
    assert got[0].out_of_place is None and got[0].in_place.time_us == rows[0].in_place.time_us
    assert got[1].in_place.time_us == rows[1].in_place.time_us
    assert got[2].in_place.per_iter_us == (1.5, 9.0, 8.5, 2.0) and got[2].in_place.wrong is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"results": [', "not JSON"),
        ('{"version": 3}', "without a 'results' list"),
        ('{"results": [{"size": 8}]}', "result 1: no 'count' field"),
        ('{"results": [{"size": -8, "count": 2}]}', "result 1: size and count"),
        ('{"results": [7]}', "result 1: not an object"),
        ('{"a":' + "[" * 100_000, "nested too deep"),
        (
            '{"results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "-1",'
            ' "in_place": {"time": "nan", "alg_bw": 0.0, "bus_bw": 0.0}}]}',
            "not a finite number",
        ),
    ],
)
def test_bad_json_says_why(text, reason):
    log = parse_runs(text)
    assert not log.runs and reason in log.skipped[0][2]


def test_json_through_the_cli_takes_the_gpu_count_from_its_devices():
    rows = _rows(SOURCES[0])
    out = api.nccl_tests(log=_json_doc(rows, 16))
    assert out["gpus"] == 16 and len(out["rows"]) == len(rows)
    assert out["rows"][-1]["busbw_GBps"] == rows[-1].out_of_place.busbw_GBps
    with pytest.raises(ParamError, match="has no all_reduce_perf rows"):  # as nccl-debug refuses
        api.nccl_tests(log='{"results": []}', gpus=8)


# ---- rows as each generation of nccl-tests prints them, read back -------------------------------


def _float_str_2_19(value: float, width: int) -> str:
    """getFloatStr of nccl-tests 2.19.6 (src/util.cu:487-492): the most decimals that fit."""
    for spec in (".2f", ".1f", ".0f"):
        s = f"{value:{width}{spec}}"
        if len(s) <= width:
            return s
    return f"{value:{width}{'.1e' if width >= 7 else '.0e'}}"


def _oldest(size, count, dtype, halves) -> str:
    """An 11-column row (no redop, no root): old all_gather_perf, NVIDIA/nccl-tests#44."""
    text = f"{size:12d}  {count:12d}  {dtype:>6}"
    for t, a, b in halves:
        text += f"  {t:7.2f}  {a:6.2f}  {b:6.2f}  0e+00"
    return text


@settings(max_examples=examples(150), deadline=None)
@given(
    sizes,
    counts,
    st.sampled_from(["float", "half", "bfloat16", "int8"]),
    two_halves,
    wrongs,
)
def test_rows_of_2_19_and_of_the_oldest_format_read_back(size, count, dtype, halves, wrong):
    new = f"{size:12d}  {count:12d}  {dtype:>8}  {'sum':>6}  {-1:6d}"
    for t, a, b in halves:
        w = "   N/A" if wrong is None else f"{wrong:6g}"
        new += f"  {_float_str_2_19(t, 7)}  {_float_str_2_19(a, 6)}  {_float_str_2_19(b, 6)}  {w}"
    for line in (new, _oldest(size, count, dtype, halves)):
        r = parse_line(line)
        assert isinstance(r, Row), r
        assert (r.size_bytes, r.count, r.type) == (size, count, dtype)
        for half, values in zip((r.out_of_place, r.in_place), halves, strict=True):
            got3 = (half.time_us, half.algbw_GBps, half.busbw_GBps)
            for got, want, token in zip(got3, values, half.text, strict=False):
                assert nccltests.agrees(want, got, token, 1e-12) or abs(got - want) <= 1e-9


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(
        st.tuples(sizes, times, bandwidths, bandwidths, st.one_of(st.none(), st.integers(0, 99))),
        min_size=1,
        max_size=6,
    )
)
def test_json_documents_read_back_exactly(results):
    """Any values written with "%lf" (util.cu:296) come back as the numbers printed."""
    rows = ",".join(
        f'{{"size":{size},"count":{size // 4},"type":"float","redop":"sum","root":"    -1",'
        f'"out_of_place":null,"in_place":{{"time":{_lf(t)},"alg_bw":{_lf(a)},'
        f'"bus_bw":{_lf(b)},"nwrong":{_lf(w)}}}}}'
        for size, t, a, b, w in results
    )
    config = '{"nthreads":1,"ngpus":1,"devices":[{"hostname":"a"},{"hostname":"b"}]}'
    log = parse_json(f'{{"config":{config},"results":[{rows}]}}')
    got = [r for run in log.runs for r in run.rows]
    assert len(got) == len(results) and not log.skipped
    assert all(len(run.ranks) == 2 for run in log.runs)
    for r, (size, t, a, b, w) in zip(got, results, strict=True):
        assert r.size_bytes == size and r.root == -1 and r.out_of_place is None
        h = r.in_place
        assert (h.time_us, h.algbw_GBps, h.busbw_GBps) == tuple(float(_lf(v)) for v in (t, a, b))
        assert h.wrong == w
