"""What every widget shares: gradients, stepper frames, number text."""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from .. import api, dtypes, fmt
from ..errors import ParamError
from ..exercises.check import Mistakes, check_quantity, close, read_quantity
from ..exercises.units import AnswerError
from ..params import Param, api_args, narrowed
from ..simulation import gradients
from ..training import calculator
from .views import DIGITS, Frame, frame


def simulated(key: str, label: str = "", name: str = "", **changes) -> Param:
    """A stepper's parameter narrowed from api.simulate's `key`, as the stepper calls simulate:
    its GPUs, numbers, type, seed and values are simulate's quantities in a page's smaller range.
    Without a label no control (the api's label is a CLI help, not a page's); `name` is the
    page's URL name where it is not simulate's keyword."""
    return narrowed(api.SIMULATE[key], name, label=label, **changes)


# The gradients a stepper draws or the reader edits: the seed (1, up to 2**53 so a link keeps it
# exact), the edited values and the number type, simulate's own.
SEED = simulated("seed", default=1, hi=2**53)
VALUES = simulated("values")
DTYPE = simulated("dtype", api.SIMULATE["dtype"].label)


def traced(p: dict, s: dict[str, Param], inputs: list[list] | None = None, **more) -> dict:
    """api.simulate's trace on a stepper's validated parameters (and `more`, beside them): on
    `inputs`, else on the reader's values checked at the page's length (simulate allows
    longer), else on those drawn from the seed. The values carry their own length."""
    args = api_args(p, s) | more
    if inputs is None:
        inputs = vectors(p, args["gpus"], args.get("dtype", "int"), s["length"].hi)
    args.pop("seed", None)  # drawn here: simulate refuses a seed beside the values
    return api.simulate(**args | {"values": inputs, "length": None}, trace=True)


def summed(r: dict, *rows: dict) -> dict:
    """A simulate result's grid for views.stepper: its inputs and target, with the target
    shown as the sum's row, then any further rows."""
    sums = {"label": "target (sum)", "values": r["target"]}
    return {"inputs": r["inputs"], "target": r["target"], "extra_rows": [sums, *rows]}


def vectors(p: dict, n: int, dtype: str, max_length: int) -> list[list]:
    """The n GPUs' gradients: the reader's edited values (checked), or drawn from the seed."""
    dt = dtypes.get(dtype)
    if p.get("values") is not None:
        return gradients.check(p["values"], n, dt, max_length)
    return gradients.draw(n, p["length"], dt, p["seed"])


def value_text(v, dtype: str) -> str:
    """A value as the narration and the grid print it, with DIGITS[dtype] significant digits.

    The grid's `AE.formatValue` (client/js/stepper.js) prints a number with JavaScript's
    `String(Number(v.toPrecision(digits)))`; this is the same rule, so that one value reads the
    same in the narration and in the grid (tests/data/number_format.json holds the cases both are
    tested on): the exact value rounded half away from zero, then JavaScript's shortest notation.
    """
    return _value_text(type(v), v, dtype)  # the type too: 10**22 and 1e22 are equal keys


@lru_cache(maxsize=4096)
def _value_text(_type: type, v, dtype: str) -> str:
    """value_text, once per value: a stepper's frames print the same values hundreds of times."""
    digits = DIGITS[dtype]
    if isinstance(v, int) and not isinstance(v, bool):
        text = str(v)
    else:
        exact = Decimal(v)
        if digits and exact:
            exact = exact.quantize(Decimal(1).scaleb(exact.adjusted() - digits + 1), ROUND_HALF_UP)
        text = js_number_text(float(exact))
    return text.replace("-", "−")


def js_number_text(x: float) -> str:
    """`String(x)` in JavaScript: the shortest digits that read back as x, in fixed notation from
    1e-6 up to 1e21 and in exponent notation (`1.5e-7`, `1e+21`) outside it."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + js_number_text(-x)
    _, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    s = "".join(map(str, digits))
    k, n = len(s), len(s) + exponent  # x = 0.s × 10^n
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    mantissa = s if k == 1 else s[0] + "." + s[1:]
    return f"{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"


def stepper_frames(
    trace: list[dict], first_buffers, first_counts, n: int, chunks, narrate
) -> list[Frame]:
    """Step frames for the stepper view: buffers, finished cells, and what moved.

    A move is [src, dst, start, stop, chunk]: GPU src sent elements [start, stop), its chunk.
    """
    frames = [
        frame(
            buffers=first_buffers,
            complete=complete(first_counts, n),
            moves=[],
            phase="start",
            narration=narrate(None, 0),
        )
    ]
    for s, step in enumerate(trace, 1):
        frames.append(
            frame(
                buffers=step["buffers"],
                complete=complete(step["contributors"], n),
                moves=[
                    [
                        m["src"],
                        m["dst"],
                        m["start"],
                        m["stop"],
                        chunk_of(chunks, m["start"], m["stop"]),
                    ]
                    for m in step["messages"]
                ],
                op=step["op"],
                phase=step["phase"],
                narration=narrate(step, s),
            )
        )
    return frames


def complete(counts: list[list[int]], n: int) -> list[list[bool]]:
    return [[c == n for c in row] for row in counts]


def chunk_of(chunks: list[tuple[int, int]], start: int, stop: int) -> int:
    return next(i for i, (a, b) in enumerate(chunks) if a == start and b == stop)


def grad_dtype(default: str, *order: str) -> Param:
    """The gradient's type, api.calc's: BF16 (2 bytes) or FP32 (4 bytes), sizes from the
    calculator."""
    text = {k: f"{k.upper()} ({n} bytes)" for k, n in calculator.GRAD_BYTES.items()}
    choices = tuple((k, text[k]) for k in order)
    return narrowed(api.CALC["grad_dtype"], label="Gradient type", default=default, choices=choices)


def read_answer(text, dimension: str, asked: str) -> float:
    """A reader's prediction in base units (a bare number in `asked`), read by the exercises'
    checker; ParamError naming the answer box, with the checker's sentence, when it is not one:
    an answer that cannot be read is not yet a prediction."""
    try:
        return read_quantity(text, dimension, asked)
    except AnswerError as e:
        raise ParamError("answer", str(e)) from None


def gap(got: float, want: float, shown: Callable[[float], str]) -> str:
    """How far a positive guess is from the result, as the verdict says it: "your 40 MiB is
    spot on", "your 60 MiB is 5 % below it", "1.6 times your 40 MiB", "your 400 MiB is 6.3
    times that"."""
    if close(got, want, 0.005):
        return f"your {shown(got)} is spot on"
    if close(got, want, 0.1):  # "1.1 times" would round to "1 times": a percentage
        side = "above" if got > want else "below"
        return f"your {shown(got)} is {fmt.sig(100 * abs(got / want - 1), 2)} % {side} it"
    if want > got:
        return f"{fmt.sig(want / got, 2)} times your {shown(got)}"
    return f"your {shown(got)} is {fmt.sig(got / want, 2)} times that"


def judge_quantity(
    answer,
    want: float,
    dimension: str,
    asked: str,
    tolerance: float,
    mistakes: Mistakes,
    shown: Callable[[float], str],
    result: str,
) -> dict:
    """A numeric prediction judged by the exercises' checker (`mistakes` first, then unit
    slips), followed by the result and the gap: "Right. <result>; your 8 is spot on." An
    unreadable answer, or one not above 0, is no prediction (ParamError naming the box)."""
    got = read_answer(answer, dimension, asked)
    if got <= 0:
        raise ParamError("answer", "Your prediction is more than 0: type one such as the example.")
    v = check_quantity(answer, want, dimension, asked, tolerance, mistakes, False, "Not quite.")
    head = "Right." if v["correct"] else v["message"]
    return {"correct": v["correct"], "message": f"{head} {result}; {gap(got, want, shown)}."}
