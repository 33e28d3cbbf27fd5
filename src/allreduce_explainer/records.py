"""Results as records: what each field of an API answer holds, declared once, and the one renderer
of readouts and of tables that every door (the page's readouts and chart tables, the command
line's human view, the notebook, the exercises' solutions) formats it with.

A field declares its quantity: the kind of figure (a time, bytes, a rate, a share, a count), the
label a reader sees, and for a time its source (sources.py: the whiteboard model, NCCL's
estimate, the fitted time) and the field holding its prediction's band (performance/bands.py).
The answer itself stays a dict of plain values (the --json prints it as it is), an `Answer`
that carries its record.

One time unit per block or column, as nccl-tests prints every time of its table in µs: a block
of labelled values picks the largest unit in which its shortest time reads 0.1 or more
(`time_unit`), so "0.087 s" never sits above "7.3 ms"; a table's column the largest in which its
longest reads 1 or more, every cell to the same decimals (`column_unit`, `in_column`). A figure
alone (a page's readout, a sentence) keeps fmt's own unit (`fmt.seconds`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from . import fmt
from .sources import Source

GIB = 1 << 30
TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))
SCALES = dict(TIME_UNITS) | {"us": 1e-6}  # nccl-tests' spelling of µs, in its tables' heads
NONE = "-"  # a table's cell with no figure, as nccl-tests prints a bandwidth it cannot compute
TIME, BYTES, BINARY, MEMORY, RATE, CARD, SHARE, COUNT, TEXT, AS_IS = (
    "time", "bytes", "binary bytes", "memory", "rate", "card", "share", "count", "text", "as is",
)  # fmt: skip
ULP, COMPUTE, YES = "ulp", "compute", "yes or no"  # an error in ulps, TFLOP/s, a yes or no
SCALED = (TIME, BYTES, BINARY, MEMORY)  # kinds whose value is kept in SI units times `scale`


def gib(nbytes: float) -> str:
    """Memory on a GPU in GiB, the unit GPU memory is sold in (as "GB"), on every door."""
    return f"{fmt.sig(nbytes / GIB, 3)} GiB"


def rate(GBps: float) -> str:
    """A bandwidth in GB/s (1e9 B/s, as nccl-tests counts it), four significant figures."""
    return f"{fmt.sig(GBps, 4)} GB/s"


def card(GBps: float) -> str:
    """A network card's rate as it is sold (Gb/s, bits) and as the models use it (GB/s)."""
    return f"{fmt.sig(8 * GBps, 4)} Gb/s ({rate(GBps)})"


def share(x: float) -> str:
    """A share as a percentage, two significant figures: 0.042 -> "4.2 %"."""
    return f"{fmt.sig(100 * x, 2)} %"


def count(x: float) -> str:
    """A count with thousands separators; a fractional one to four significant figures."""
    return f"{x:,.0f}" if float(x).is_integer() else fmt.sig(x, 4)


def ulp(x: float | None) -> str:
    """An error in units in the last place (None: the sum overflowed)."""
    return "overflow" if x is None else f"{count(x)} ulp"


def compute(tflops: float) -> str:
    """A GPU's compute rate in TFLOP/s, four significant figures."""
    return f"{fmt.sig(tflops, 4)} TFLOP/s"


def yes(flag: bool | None) -> str:
    """A yes or no; None where the log did not print it."""
    return "not printed" if flag is None else ("yes" if flag else "no")


ALONE: dict[str, Callable[[float], str]] = {  # a figure alone, by its kind
    TIME: fmt.seconds,
    BYTES: fmt.nbytes,
    BINARY: fmt.binary_bytes,  # a buffer or a bucket, set in MiB
    MEMORY: gib,
    RATE: rate,
    CARD: card,
    SHARE: share,
    COUNT: count,
    TEXT: str,
    AS_IS: lambda value: value,  # a table's cell the view reads as it is (a number to sort by)
    ULP: ulp,
    COMPUTE: compute,
    YES: yes,
}


@dataclass(frozen=True)
class Quantity:
    """What a field holds: its kind (a key of ALONE), the label a reader sees, and for a time
    its source (one Source, or a function of the answer where the answer's algorithm decides),
    the key of its prediction's band in the answer, if it has one, and the factor to SI units
    of a value kept in another (`time_us`)."""

    key: str
    kind: str
    label: str
    source: Source | Callable[[Mapping], Source | None] | None = None
    band: str | None = None
    scale: float = 1.0  # the value times this is in SI units (a time in µs: 1e-6)

    def source_of(self, answer: Mapping) -> Source | None:
        return self.source(answer) if callable(self.source) else self.source


@dataclass(frozen=True)
class Record:
    """An API question's fields, by key."""

    name: str
    fields: tuple[Quantity, ...]

    def __getitem__(self, key: str) -> Quantity:
        for q in self.fields:
            if q.key == key:
                return q
        raise KeyError(f"{self.name} has no field {key!r}")

    def label(self, key: str) -> str:
        return self[key].label

    def heading(self, key: str) -> str:
        return heading(self.label(key))


def heading(label: str) -> str:
    """A label as a page heads a readout with it: the same words, the first capitalised."""
    return label[:1].upper() + label[1:]


class Answer(dict):
    """An API answer: its values by key, exactly as --json prints them, with the record that
    says what each holds. `str()` is the human view's block of it."""

    def __init__(self, values: Mapping, record: Record):
        super().__init__(values)
        self.record = record

    def text(self, key: str, unit: str | None = None) -> str:
        return text(self.record, self, key, unit)

    def __str__(self) -> str:
        rows = block(self.record, self, [q.key for q in self.record.fields]).values()
        return "\n".join(f"{label}: {value}" for label, value in rows)


# ---- the renderer ------------------------------------------------------------------------------


def time_unit(seconds: Iterable[float]) -> str:
    """One unit for a block or a column of times: the largest in which the shortest nonzero one
    reads 0.1 or more (7.3 ms and 2.0 s: ms; 0.47 ms and 31 ms: ms), seconds when there is
    none."""
    shortest = min((abs(t) for t in seconds if t), default=1.0)
    return next((u for u, scale in TIME_UNITS if shortest >= 0.1 * scale), TIME_UNITS[-1][0])


def in_unit(seconds: float, unit: str) -> str:
    """A time's number in `unit`: whole from 100 up (2,012), else three significant figures."""
    v = seconds / SCALES[unit]
    return f"{v:,.0f}" if abs(v) >= 100 else fmt.sig(v, 3)


def column_unit(seconds: Iterable[float]) -> str:
    """One unit for a table's column: the largest in which its longest time reads 1 or more,
    so that a near-zero start (95 ns before a 7 ms backward pass) does not set the unit."""
    longest = max((abs(t) for t in seconds if t is not None), default=1.0)
    return next((u for u, scale in TIME_UNITS if longest >= scale), TIME_UNITS[-1][0])


def in_column(seconds: Sequence[float], unit: str, decimals: int | None = None) -> list[str]:
    """A column's times in `unit`, all to one number of decimals and with no thousands
    separator, as nccl-tests aligns them: the longest to four significant figures (so that 86.6
    and 86.4 ms next to 184.1 stay apart), unless the column fixes its decimals; none: NONE."""
    scale = SCALES[unit]
    if decimals is None:
        longest = max((abs(t) / scale for t in seconds if t is not None), default=1.0) or 1.0
        decimals = max(0, 3 - math.floor(math.log10(longest)))
    return [NONE if t is None else f"{t / scale:.{decimals}f}" for t in seconds]


def text(record: Record, answer: Mapping, key: str, unit: str | None = None) -> str:
    """A field's value as a reader reads it: a time in `unit` when a block or column chose one,
    every other figure by its kind's formatter."""
    q = record[key]
    value = answer[key] * q.scale if q.kind in SCALED else answer[key]
    if q.kind == TIME and unit:
        return f"{in_unit(value, unit)} {unit}"
    return ALONE[q.kind](value)


def block(
    record: Record, answer: Mapping, keys: Sequence[str], notes: Mapping[str, str] | None = None
) -> dict[str, tuple[str, str]]:
    """Labelled values by key, every time in one unit and followed by its source's name
    ("87.3 ms, the fitted time"); a key the answer lacks (or holds None) is left out; a note
    of `notes` follows its value (" (assumed)")."""
    keys = [k for k in keys if answer.get(k) is not None and not isinstance(answer[k], Mapping)]
    unit = block_unit(record, answer, keys)
    out = {}
    for k in keys:
        q, value = record[k], text(record, answer, k, unit)
        source = q.source_of(answer) if q.kind == TIME else None
        if source and source.name != q.label:
            value += f", {named(source)}"
        out[k] = (q.label, value + (notes or {}).get(k, ""))
    return out


def block_unit(record: Record, answer: Mapping, keys: Iterable[str]) -> str:
    """The one time unit of a block of these keys (those the answer holds)."""
    times = (
        answer[k] * record[k].scale
        for k in keys
        if record[k].kind == TIME and answer.get(k) is not None
    )
    return time_unit(times)


def line(record: Record, answer: Mapping, keys: Sequence[str], sep: str = ", ") -> str:
    """A block's figures on one line, each after its label ("algbw 200 GB/s, busbw 350 GB/s")."""
    return sep.join(f"{label} {value}" for label, value in block(record, answer, keys).values())


def named(source: Source) -> str:
    """A source's name in a sentence: "the fitted time", "NCCL's estimate"."""
    return source.name if source.name.startswith("NCCL") else f"the {source.name}"


@dataclass(frozen=True)
class Column:
    """A table's column: its head, the kind of its figures (a time column is printed in one
    unit, named in the head), how a row's value is read from an item (in SI units), and for a
    time column a unit and decimals it keeps whatever its values (nccl-tests: us, two). Any
    other column given a unit names it in its head and prints bare numbers, to `decimals`
    (nccl-tests' busbw: two) or as its kind's formatter reads them without the unit; a column
    given only decimals prints its bare numbers to them."""

    head: str
    kind: str
    get: Callable[[object], object]
    unit: str | None = None
    decimals: int | None = None

    @classmethod
    def of(cls, record: Record, key: str, head: str | None = None, **fixed) -> Column:
        """The column of a record's field, read from each item (a row of the answer)."""
        q = record[key]
        scale = q.scale if q.kind in SCALED else 1.0
        return cls(head or q.label, q.kind, lambda row: _times(row[key], scale), **fixed)

    def on(self, part: Callable[[object], Mapping]) -> Column:
        """The column read from a part of each item (the row of another record beside it)."""
        return Column(self.head, self.kind, lambda x: self.get(part(x)), self.unit, self.decimals)


def _times(value, scale: float):
    """A value in SI units; None (nothing printed) and a text as they are."""
    return value if value is None or scale == 1.0 else value * scale


def columns(
    cols: Sequence[Column], items: Sequence, units_in_head: str = "\n"
) -> tuple[list[str], list[list[str]]]:
    """The heads and the cells of a table: a time column in one unit, written once in its head
    after `units_in_head` ("all-reduce\\n(ms)"), its cells bare numbers; every other column by
    its kind's formatter, or bare under a unit in its head (`Column.unit`)."""
    heads, cells = [], []
    for c in cols:
        values = [c.get(x) for x in items]
        if c.kind == TIME:
            unit = c.unit or column_unit(values)
            heads.append(f"{c.head}{units_in_head}({unit})")
            cells.append(in_column(values, unit, c.decimals))
        elif c.unit or c.decimals is not None:
            heads.append(f"{c.head}{units_in_head}({c.unit})" if c.unit else c.head)
            cells.append([bare(c, v) for v in values])
        else:
            heads.append(c.head)
            cells.append([ALONE[c.kind](v) for v in values])
    return heads, [list(row) for row in zip(*cells, strict=True)] if items else []


class _Nothing(dict):
    """A row that holds no figure: every key reads None, a table's NONE (a size the fit or the
    prediction left out)."""

    def __missing__(self, key: str) -> None:
        return None


NOTHING = _Nothing()


def bare(c: Column, value) -> str:
    """A cell of a column whose head names the unit: the number alone, "-" for none (as
    nccl-tests prints a bandwidth it cannot compute)."""
    if value is None:
        return NONE
    if c.decimals is not None:
        return f"{value:.{c.decimals}f}"
    text = ALONE[c.kind](value)
    if not text.endswith(f" {c.unit}"):
        raise ValueError(f"column {c.head!r}: {text!r} is not in {c.unit}")
    return text.removesuffix(f" {c.unit}")
