"""Results as records for the questions test_records.py does not hold (issue 46, item 1): busbw,
orders, presets and the log readers (nccl-tests, nccl-debug). Every figure of each record reads
back, through the doors' own reader (reading.py), as the answer's value in the quantity its
field declares; the human views print each record's labels, and each table cell reads back in
the unit its column's head names; a planted wrong unit or label is caught."""

from __future__ import annotations

import re

import pytest
import readme_examples as ex

from allreduce_explainer import api, records
from allreduce_explainer.cli import views
from allreduce_explainer.costs import cost
from allreduce_explainer.logs import explain
from allreduce_explainer.simulation import orders
from allreduce_explainer.training import calculator

from .reading import UNITS, read, read_all
from .test_records import KIND as CALC_KIND

# test_records' kinds and the kinds these records add; ulps and TFLOP/s are read as plain numbers
KIND = CALC_KIND | {
    records.MEMORY: ("bytes", 1.0),
    records.ULP: ("count", 1.0),
    records.COMPUTE: ("count", 1.0),
}
PROBE = [[1e8, 1.0], [1.0, -1e8], [-1e8, 1e8], [1.0, 1.0]]
TESTS_LOG = ex.DATA / "allreduce_current.txt"
DEBUG_LOG = ex.DATA / "nccl-debug" / "aws-p5-2x8xh100-efa-nccl-2.22.3.log"


def busbw():
    return api.busbw(gpus=8, bytes=1e9, time_us=5000)


def orders_probe():
    return api.orders(gpus=4, dtype="bf16", values=PROBE)


def orders_bucket():
    return api.orders(gpus=8, length=16, bytes=100_000_000, kind="wide")


def nccl_tests():
    return api.nccl_tests(TESTS_LOG.read_text(), gpu="h100")


def nccl_debug():
    return api.nccl_debug(DEBUG_LOG.read_text(), nic_Gbps=400)


def parts(r: dict) -> list[tuple[records.Record, dict]]:
    """Every (record, values) an answer holds: its own, and its rows' and parts' records."""
    rec = r.record
    out = [(rec, r)]
    if rec is orders.RECORD:
        out += [(orders.PICK, r["nccl"])] + [(orders.METHOD, m) for m in r["methods"].values()]
    if rec is explain.LOG:
        out += [(explain.ALPHA_BETA, r["fit"]), (explain.NCCL_FIT, r["nccl_fit"])]
        out += [(explain.MEASURED, x) for x in r["rows"]]
        out += [(explain.FIT_ROW, x) for x in r["nccl_fit"]["rows"]]
        out += [(explain.PREDICTED, x) for x in r["prediction"]["rows"]]
    if rec is explain.DEBUG:
        out += [(explain.MEASURED, x) for x in r["rows"]]
    return out


ANSWERS = [busbw, orders_probe, orders_bucket, nccl_tests, nccl_debug]


def held(field: records.Quantity, printed: str, value: float) -> None:
    quantity, factor = KIND[field.kind]
    scale = field.scale if field.kind in records.SCALED else 1.0
    reading = read(printed, quantity)
    assert reading.holds(value * scale * factor), f"{field.key}: {printed!r} is not {value}"


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda f: f.__name__)
def test_each_answer_is_a_record_and_its_json_is_the_dict(answer):
    r = answer()
    assert isinstance(r, records.Answer) and dict(r) == r and type(dict(r)) is dict
    for rec, values in parts(r):
        assert {q.key for q in rec.fields} <= set(values), rec.name


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda f: f.__name__)
def test_every_figure_of_every_record_reads_back_in_its_declared_quantity(answer):
    r = answer()
    for rec, values in parts(r):
        keys = [q.key for q in rec.fields if q.kind in KIND]
        for key, (label, printed) in records.block(rec, values, keys).items():
            assert label == rec.label(key)
            held(rec[key], printed, values[key])
        for key in keys:  # each alone, as a page's readout prints it
            if values.get(key) is not None:
                held(rec[key], records.text(rec, values, key), values[key])


def test_presets_figures_read_back_in_their_declared_quantities():
    r = api.presets()
    groups = (
        (calculator.PRESET_MODEL, "models"),
        (calculator.PRESET_GPU, "gpus"),
        (calculator.PRESET_NETWORK, "networks"),
    )
    for rec, group in groups:
        for item in r[group]:
            for q in rec.fields:
                held(q, records.text(rec, item, q.key), item[q.key])
    h100 = next(g for g in r["gpus"] if g["name"] == "H100 SXM")
    assert records.text(calculator.PRESET_GPU, h100, "memory_gb") == "80 GiB"  # sold as "80 GB"


# ---- the human views: each table's cells in the unit of its column's head ----------------------


def heads_units(text: str, first: str) -> tuple[int, list[str]]:
    """The line index of a table's last head line (the one starting with `first` after spaces
    or holding its units) and the units its heads name, in order."""
    lines = text.split("\n")
    i = next(k for k, line in enumerate(lines) if re.match(rf" *{re.escape(first)}(?!\S)", line))
    return i, re.findall(r"\(([^)]+)\)", lines[i])


def cell_holds(cell: str, unit: str, exact: float) -> None:
    """A bare cell read in its head's unit holds the value in SI units."""
    [reading] = read_all(cell)
    factor = UNITS[unit][0]
    assert abs(reading.value * factor - exact) <= reading.half * factor * (1 + 1e-6) + 1e-12, (
        cell,
        unit,
        exact,
    )


def test_nccl_tests_columns_read_back_in_their_heads_units():
    r = nccl_tests()
    text = views.nccl_tests(r)
    i, units = heads_units(text, "(B)")
    assert units == ["B", "GB/s", "GB/s", "GB/s"], units
    heads = text.split("\n")[i - 1]
    row, pred = explain.FIT_ROW, explain.PREDICTED
    for label in (row.label("fitted_busbw_GBps"), pred.label("busbw_GBps")):
        assert label in heads, (label, heads)
    predicted = {p["bytes"]: p for p in r["prediction"]["rows"]}
    lines = text.split("\n")[i + 1 :]
    for x in r["nccl_fit"]["rows"]:
        cells = next(line.split() for line in lines if line.split()[:1] == [str(x["bytes"])])
        p = predicted[x["bytes"]]
        cell_holds(cells[1], "GB/s", x["measured_busbw_GBps"] * 1e9)
        assert cells[2] == x["regime"]
        cell_holds(cells[3], "GB/s", x["fitted_busbw_GBps"] * 1e9)
        cell_holds(cells[4], "GB/s", p["busbw_GBps"] * 1e9)
        cell_holds(cells[5], "", p["ratio"])
    # the summary's figures beside their labels
    nf = r["nccl_fit"]
    for key in ("busbw_GBps", "latency_us"):
        label = explain.NCCL_FIT.label(key)
        m = re.search(rf"\b{label} (\S+ \S+)", text)
        assert m, (label, text)
        held(explain.NCCL_FIT[key], m.group(1), nf[key])


def test_nccl_tests_without_a_prediction_prints_the_measured_columns():
    log = ex.DATA / "nccl-tests" / "nccl-1244-16xh20-2nodes-nvlstree-error-column.txt"
    r = api.nccl_tests(log.read_text(), gpus=16)
    assert r["nccl_fit"] is None and r["rows"]  # too few rows to fit: the measured columns
    text = views.nccl_tests(r)
    i, units = heads_units(text, "(B)")
    assert units == ["B", "us", "GB/s", "GB/s"], units
    for x, line in zip(r["rows"], text.split("\n")[i + 1 :], strict=False):
        size, t, algbw, bus = line.split()
        assert int(size) == x["size_bytes"]
        cell_holds(t, "us", x["time_us"] * 1e-6)
        cell_holds(algbw, "GB/s", x["algbw_GBps"] * 1e9)
        cell_holds(bus, "GB/s", x["busbw_GBps"] * 1e9)


def test_nccl_debug_rows_read_back_in_their_heads_units():
    r = nccl_debug()
    text = views.nccl_debug(r)
    i, units = heads_units(text, "(B)")
    assert units == ["B", "GB/s"], units
    lines = text.split("\n")[i + 1 :]
    for x in (row for row in r["rows"] if row.get("algorithm")):
        cells = next(line.split() for line in lines if line.split()[:1] == [str(x["size_bytes"])])
        cell_holds(cells[1], "GB/s", x["busbw_GBps"] * 1e9)
        assert cells[2] == f"{x['algorithm']}/{x['protocol']}"


def test_orders_table_and_pick_read_back():
    for r in (orders_probe(), orders_bucket()):
        text = views.orders(r)
        i, units = heads_units(text, "method")
        assert units == ["ulp", "ulp"], units
        heads = "\n".join(text.split("\n")[i - 1 : i + 1])
        for q in orders.METHOD.fields:
            assert q.label.split()[0] in heads, (q.label, heads)
        lines = text.split("\n")[i + 1 :]
        for name, m in r["methods"].items():
            cells = next(line.split() for line in lines if line.split()[:1] == [name])
            assert cells[1] == records.yes(m["ranks_agree"])
            cell_holds(cells[2], "", m["max_ulp"])
            cell_holds(cells[3], "", m["mean_ulp"])
        pick = re.search(r"NCCL's pick .*, (\S+ \S+), the fitted time$", text, re.M)
        assert pick, text
        held(orders.PICK["time_us"], pick.group(1), r["nccl"]["time_us"])
        held(orders.RECORD["bytes"], re.search(r"bucket +(\S+ \S+),", text).group(1), r["bytes"])


def test_presets_tables_read_back_in_their_heads_units():
    r = api.presets()
    text = views.presets(r)
    lines = text.split("\n")
    gpu_head = next(k for k, line in enumerate(lines) if line.startswith("GPUs")) + 2
    assert re.findall(r"\(([^)]+)\)", lines[gpu_head]) == ["GB/s", "TFLOP/s", "GiB"]
    for g in r["gpus"]:
        line = next(x for x in lines if x.startswith(g["name"] + " "))
        link, tflops, memory, per = line[len(g["name"]) :].split()
        cell_holds(link, "GB/s", g["link_gbps"] * 1e9)
        cell_holds(tflops, "", g["peak_bf16_tflops"])
        cell_holds(memory, "GiB", g["memory_gb"] * 2**30)
        assert int(per) == g["gpus_per_node"]
    card_head = next(k for k, line in enumerate(lines) if line.startswith("network cards")) + 2
    assert re.findall(r"\(([^)]+)\)", lines[card_head]) == ["GB/s"]
    for n in r["networks"]:
        line = next(x for x in lines[card_head:] if x.startswith(n["name"] + " "))
        cell_holds(line.split()[-1], "GB/s", n["GBps"] * 1e9)
    for m in r["models"]:
        line = next(x for x in lines if x.startswith(m["name"] + " "))
        assert read_all(line.split()[-1])[0].value == m["params"]


def test_busbw_view_prints_its_record_s_labels_and_figures():
    r = busbw()
    text = views.busbw(r)
    rec = cost.BANDWIDTHS
    for key in ("algbw_GBps", "busbw_GBps"):
        m = re.search(rf"^  {rec.label(key)} +(\S+ \S+)", text, re.M)
        assert m, (rec.label(key), text)
        held(rec[key], m.group(1), r[key])
    held(rec["time_us"], re.search(r" in (\S+ \S+),", text).group(1), r["time_us"])
    held(rec["bytes"], re.search(r" of (\S+ \S+) on", text).group(1), r["bytes"])


# ---- plants: a wrong unit or a wrong label is caught -------------------------------------------


def test_a_rate_printed_in_the_wrong_unit_is_caught(monkeypatch):
    """The plant: the rate formatter writes Gb/s for a figure in GB/s."""
    r = busbw()
    monkeypatch.setitem(records.ALONE, records.RATE, lambda x: f"{records.fmt.sig(x, 4)} Gb/s")
    with pytest.raises(AssertionError, match="algbw_GBps"):
        held(cost.BANDWIDTHS["algbw_GBps"], r.text("algbw_GBps"), r["algbw_GBps"])


def test_a_column_in_the_wrong_unit_is_caught(monkeypatch):
    """The plant: the columns' bare cells are printed in the head's unit times a thousand (a
    busbw in MB/s under a GB/s head)."""
    real = records.bare

    def in_mb(c: records.Column, v):
        return real(c, None if v is None else v * 1e3 if c.unit == "GB/s" else v)

    monkeypatch.setattr(records, "bare", in_mb)
    with pytest.raises(AssertionError):
        test_nccl_tests_columns_read_back_in_their_heads_units()


def test_a_view_that_prints_its_own_label_is_caught(monkeypatch):
    """The plant: a column's head written by the view, not read from its record."""
    real = records.Column.of.__func__

    def own(cls, record, key, head=None, **fixed):
        return real(cls, record, key, head or "NCCL", **fixed)

    monkeypatch.setattr(records.Column, "of", classmethod(own))
    with pytest.raises(AssertionError, match="NCCL fit|predicted"):
        test_nccl_tests_columns_read_back_in_their_heads_units()
