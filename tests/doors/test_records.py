"""Results as records (issue 46, item 1): every figure the one renderer prints reads back, through
the cross-door test's own reader (reading.py, not the product's fmt), as the answer's value in
the quantity its field declares; a block and a table column print their times in one unit; and a
renderer that writes a time in the wrong unit is caught."""

from __future__ import annotations

import random
import re

import pytest

from allreduce_explainer import api, records
from allreduce_explainer.cli import views
from allreduce_explainer.training import calculator, ddp

from .reading import read, read_all

# a field's kind -> the reader's quantity, and the factor from the answer's unit to SI
KIND = {
    records.TIME: ("time", 1.0),
    records.BYTES: ("bytes", 1.0),
    records.BINARY: ("bytes", 1.0),
    records.RATE: ("rate", 1e9),
    records.CARD: ("rate", 1e9),
    records.SHARE: ("share", 1.0),
    records.COUNT: ("count", 1.0),
}
GPUS = ("A100 SXM", "H100 SXM", "H200 SXM", "B200")


def answers(n: int = 12):
    """calc at its defaults and at random states: every model, sizes from one server to many."""
    rng = random.Random(46)
    yield api.calc(model="gpt2")
    for _ in range(n):
        per = rng.choice([1, 2, 4, 8])
        yield api.calc(
            model=rng.choice(calculator.PRESET_MODELS),
            gpus=per * rng.choice([1, 2, 8, 64]),
            gpus_per_node=per,
            gpu=rng.choice(GPUS),
            algorithm=rng.choice(["nccl", "ring", "multi-ring", "tree", "hierarchical"]),
        )


def held(field: records.Quantity, printed: str, value: float) -> None:
    quantity, factor = KIND[field.kind]
    reading = read(printed, quantity)
    assert reading.holds(value * factor), f"{field.key}: {printed!r} is not {value}"


def test_the_answer_is_a_record_and_its_json_is_the_dict():
    r = api.calc(model="gpt2")
    assert isinstance(r, records.Answer) and r.record is calculator.RECORD
    assert dict(r) == r and type(dict(r)) is dict  # --json dumps the same keys and values
    assert {q.key for q in r.record.fields} <= set(r)


def test_every_figure_of_a_block_reads_back_as_its_value_in_its_declared_quantity():
    for r in answers():
        rec = r.record
        keys = [q.key for q in rec.fields]
        for key, (label, printed) in records.block(rec, r, keys).items():
            assert label == rec.label(key)
            held(rec[key], printed, r[key])
        for key in keys:  # and each alone, as a page's readout prints it
            if r.get(key) is not None and not isinstance(r[key], dict):
                held(rec[key], records.text(rec, r, key), r[key])


def test_a_block_prints_every_time_in_one_unit_and_names_its_source():
    for r in answers():
        block = records.block(r.record, r, [q.key for q in r.record.fields])
        times = [v for k, (_, v) in block.items() if r.record[k].kind == records.TIME]
        units = {read(t, "time").text.split()[-1] for t in times}
        assert len(units) == 1, times
        # the unit fits the shortest: no time but a zero reads below a tenth of it
        numbers = [float(read(t, "time").text.split()[0].replace(",", "")) for t in times]
        assert min(x for x in numbers if x) >= 0.1, times
        fitted = "nccl_algorithm" in r
        want = "the fitted time" if fitted else "the whiteboard model"
        assert block["allreduce_s"][1].endswith(want)
        if "nccl_time_s" in block:  # its label is its source's name: not said twice
            assert block["nccl_time_s"][0] == "NCCL's estimate"
            assert "estimate" not in block["nccl_time_s"][1]


def test_the_time_unit_is_the_largest_in_which_the_shortest_reads_a_tenth_or_more():
    # an oracle written here: the rule's own words, not records' loop
    for shortest, want in ((2.0, "s"), (0.1, "s"), (0.099, "ms"), (7.3e-3, "ms"), (1e-4, "ms"),
                           (9.9e-5, "µs"), (3e-7, "µs"), (5e-8, "ns")):  # fmt: skip
        assert records.time_unit([shortest, 30.0]) == want, shortest
    assert records.time_unit([]) == "s"


def test_a_column_s_unit_is_set_by_its_longest_time_and_its_cells_share_decimals():
    assert records.column_unit([9.5e-8, 6e-4, 7.05e-3]) == "ms"  # not ns for a near-zero start
    assert records.column_unit([0.643, 0.079]) == "ms" and records.column_unit([1.2, 3e-3]) == "s"
    assert records.in_column([9.5e-8, 6.19e-4, 7.046e-3], "ms") == ["0.000", "0.619", "7.046"]


def test_a_table_column_prints_its_times_in_one_unit_named_in_its_head():
    r = api.calc(model="llama3-8b", gpus=64)
    text = views.calc(r)
    unit = re.search(r"^algorithm +\((\S+)\)$", text, re.M)  # the head's unit line
    assert unit and unit.group(1) == "ms"
    rows = text[unit.end() :].split("\n")[1:]
    for name, seconds in r["algorithm_times_s"].items():
        [line] = [x for x in rows if x.startswith(name + " ")]
        [cell] = read_all(line.split()[-1])
        assert cell.quantity == "count"  # a bare number: the unit is the head's
        assert abs(cell.value * 1e-3 - seconds) <= cell.half * 1e-3 * (1 + 1e-6)


def test_the_calc_view_prints_the_card_as_sold_and_as_the_model_uses_it():
    r = api.calc(model="gpt2", gpus=16, nic_Gbps=400)
    line = next(x for x in views.calc(r).split("\n") if "network card per GPU" in x)
    gbit, gbyte = (x for x in read_all(line) if x.quantity == "rate")
    assert gbit.text == "400 Gb/s" and gbyte.holds(50e9) and gbit.agrees(gbyte)


def test_a_renderer_printing_a_time_in_the_wrong_unit_is_caught(monkeypatch):
    """The plant: `in_unit` scales by the wrong factor (a time printed in s, labelled ms); the
    reader then finds a figure a thousand times off its value."""
    r = api.calc(model="gpt2")
    monkeypatch.setattr(records, "in_unit", lambda seconds, unit: records.fmt.sig(seconds, 3))
    block = records.block(r.record, r, ["allreduce_s"])
    with pytest.raises(AssertionError, match="allreduce_s"):
        held(r.record["allreduce_s"], block["allreduce_s"][1], r["allreduce_s"])


@pytest.mark.parametrize("model,gpus", [("gpt2", 512), ("bert-base", 16), ("llama3-8b", 64)])
def test_ddp_prints_one_unit_per_block_and_per_column_and_each_reads_back(model, gpus):
    r = api.ddp(model, gpus, 8, sweep=True)
    assert isinstance(r, records.Answer) and r.record is ddp.RECORD
    block = records.block(r.record, r, [q.key for q in r.record.fields])
    for key, (_, printed) in block.items():
        held(r.record[key], printed, r[key])
    times = [v for k, (_, v) in block.items() if r.record[k].kind == records.TIME]
    assert len({read(t, "time").text.split()[-1] for t in times}) == 1, times
    text = views.ddp(r)
    # the timeline's columns: ready, start and end, each in the unit its head names
    head = re.search(r"^bucket +tensors +size +\((\S+)\) +\((\S+)\) +\((\S+)\)", text, re.M)
    assert head, text
    factor = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}
    for i, row in enumerate(r["bucket_timeline"]):
        line = re.search(rf"^ +{i + 1} +\d+ +[\d.,]+ \S+ +(.*)$", text[head.end() :], re.M)
        cells = read_all(line.group(1))[:3]
        for cell, key, unit in zip(cells, ("ready_s", "start_s", "end_s"), head.groups()):
            assert abs(cell.value * factor[unit] - row[key]) <= cell.half * factor[unit] * 1.000001


def test_nccl_s_time_columns_are_nccl_tests_us_with_two_decimals_and_no_separator():
    r = api.nccl_sweep(gpus=16, gpu="h100", sizes="1K:8G")
    text = views.nccl(r)
    assert re.search(r"^ +\(B\) .* \(us\) .* \(us\) ", text, re.M)  # the heads' units
    for row in r["rows"]:
        line = next(x for x in text.split("\n") if x.lstrip().startswith(f"{row['bytes']} "))
        fitted, estimate = (c for c in line.split() if re.fullmatch(r"\d+\.\d\d", c))
        assert "," not in line.split("≤")[0]  # nccl-tests prints 33713.03, not 33,713.03
        for cell, key in ((fitted, "time_us"), (estimate, "nccl_time_us")):
            [reading] = read_all(cell)
            assert abs(reading.value - row[key]) <= reading.half * 1.000001, (cell, row[key])
    # each time names its source in the record, as the note under the table does
    assert api.NCCL_ROW["time_us"].source.name == "fitted time"
    assert api.NCCL_ROW["nccl_time_us"].source.name == "NCCL's estimate"


@pytest.mark.parametrize(
    "answer",
    [
        lambda: api.estimate(algorithm="hierarchical", gpus=16, gpus_per_node=8, bytes=1e9),
        lambda: api.estimate(algorithm="ring", gpus=4, bytes=8),
        lambda: api.simulate(algorithm="ring", gpus=4, length=13, dtype="bf16"),
    ],
)
def test_cost_and_simulate_are_records_of_the_whiteboard_model_s_time(answer):
    r = answer()
    assert isinstance(r, records.Answer)
    assert r.record["time_s"].source.name == "whiteboard model"
    for key, (_, printed) in records.block(r.record, r, [q.key for q in r.record.fields]).items():
        held(r.record[key], printed, r[key])
    assert records.block(r.record, r, ["time_s"])["time_s"][1].endswith(", the whiteboard model")
