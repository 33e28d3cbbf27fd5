"""Parameters declared once, as Params, for the three front doors: the widgets, the library
(api) and the command line.

From a widget's spec come its checks (validated), the page's controls
(templates/widgets/_macros.html, `param` and `controls`), the URL parameters and the course page's
table of them (build.widget_docs). From an api function's spec come its checks and its CLI
subcommand's flags (cli/generate.py), so a ParamError names the flag that set the field.

A module writes `SPEC = spec(Param(...), ...)` and calls `validated(params, SPEC)` first. Checks
that tie two parameters together (whole servers, two trees × chunks) stay in the caller, after
this one.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from .errors import ParamError
from .validate import count, number

KINDS = ("int", "float", "choice", "name", "text", "data", "bool")
F = TypeVar("F", bound=Callable[..., Any])
POSITIVE = math.ulp(0.0)  # the least float above 0: lo=POSITIVE reads "greater than 0"


class _Required:
    """The default of a parameter the caller must give (an api function's positional one)."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()


@dataclass(frozen=True)
class Param:
    """One parameter of a widget or of an api function.

    kind: int (a whole number in [lo, hi]), float (a finite number in [lo, hi]), choice (one of
    `choices`), name (a value the caller resolves itself, accepting other spellings: a model, a
    GPU), text (a string), data (any JSON, checked by the caller: the edited gradients), bool.
    A widget's parameter with a label gets a control (a number box or a select); one without has
    none. An api parameter's label and unit are its CLI flag's help.
    """

    name: str
    default: object
    kind: str = "float"
    label: str = ""
    lo: float | None = None
    hi: float | None = None
    step: float | str | None = None  # the number box's step; None: 1 for int, "any" for float
    choices: tuple[tuple[object, str], ...] = ()  # (value, text) of a select, in order
    unit: str = ""  # of lo and hi, for the error messages
    optional: bool = False  # null is allowed: the widget then chooses the value
    nudge: tuple[int, str] | None = None  # − k / + k buttons beside the box: (k, what k adds)
    # a select's last choices, shown apart under a heading (an <optgroup>): (heading, values)
    more: tuple[str, tuple] | None = None
    flag: str = ""  # the CLI's flag, if not "--" + name with "-" for "_"; no dash: positional
    metavar: str = ""  # the CLI's placeholder for the value in --help
    # the flag's unit where it is not the library's: (unit, k), the flag's value is k × the
    # keyword's (the card: Gb/s as sold on the command line, GB/s as the model computes)
    flag_unit: tuple[str, float] | None = None
    # a flag this parameter had, refused with how to give it now: (old flag, the sentence)
    gone: tuple[str, str] | None = None
    # the api function's Param a widget's narrows (narrowed): its name is the api's keyword
    narrows: Param | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {KINDS}")
        if self.more and (not self.more[1] or self.values()[-len(self.more[1]) :] != self.more[1]):
            raise ValueError(f"{self.name}: `more` must name the last choices, in their order")

    @property
    def control(self) -> str | None:
        """The control the page draws: "number", "select" or None."""
        if not self.label:
            return None
        return "select" if self.kind in ("choice", "name") else "number"

    @property
    def box_step(self) -> float | str:
        if self.step is not None:
            return self.step
        return 1 if self.kind == "int" else "any"

    @property
    def cli_flag(self) -> str:
        """The CLI's flag that sets this parameter (a ParamError on it names this)."""
        return self.flag or "--" + self.name.replace("_", "-")

    def on_flag(self) -> Param:
        """This parameter as its CLI flag takes it: default, range and unit in the flag's unit."""
        if self.flag_unit is None:
            return self
        unit, k = self.flag_unit

        def scaled(x):  # POSITIVE stays "greater than 0"
            number = isinstance(x, (int, float)) and not isinstance(x, bool)
            return x * k if number and x != POSITIVE else x

        return replace(
            self, default=scaled(self.default), lo=scaled(self.lo), hi=scaled(self.hi),
            unit=unit, flag_unit=None,
        )  # fmt: skip

    def from_flag(self, value):
        """The flag's value in the library's unit."""
        if self.flag_unit is None or value is None:
            return value
        return value / self.flag_unit[1]

    def range_text(self) -> str:
        """The values a number may take, as --help prints them: "1 to 4,096", "above 0",
        "0 or more"; "" for a parameter without bounds or not a number."""
        if self.kind not in ("int", "float") or (self.lo is None and self.hi is None):
            return ""
        hi = f"at most {_limit(self.hi)}" if self.hi is not None else ""
        if self.lo is None:
            return hi
        if self.lo == POSITIVE:
            return "above 0" + (f", {hi}" if hi else "")
        if self.hi is not None:
            return f"{_text(self.lo)} to {_limit(self.hi)}"
        return "0 or more" if self.lo == 0 else f"at least {_text(self.lo)}"

    def values(self) -> tuple:
        return tuple(v for v, _ in self.choices)

    def narrow(self, **changes) -> Param:
        """This parameter as one api function takes it: the same quantity (kind and unit), a
        range inside this one's, its own default, help or keyword, so the shared parameters
        (vocabulary.py) are declared once and each function states only how it differs."""
        p = replace(self, narrows=self, **changes)
        wrong = narrowing_errors(p)
        if wrong:
            raise ValueError(f"{p.name} narrows {self.name}: {'; '.join(wrong)}")
        return p

    def in_unit(self, name: str, unit: str, k: float, label: str = "") -> Param:
        """The same quantity under another keyword in another unit, 1 of it being k of this
        one's (the card: the model's inter_bw in GB/s is nic_Gbps / 8); the flag keeps this
        one's unit (flag_unit), so the command line says one thing in one unit."""

        def scaled(x):  # POSITIVE stays "greater than 0"
            number = isinstance(x, (int, float)) and not isinstance(x, bool)
            return x / k if number and x != POSITIVE else x

        return replace(
            self, name=name, default=scaled(self.default), lo=scaled(self.lo),
            hi=scaled(self.hi), unit=unit, label=label or self.label,
            flag=self.cli_flag, flag_unit=(self.unit, k),
        )  # fmt: skip

    def menu(self) -> tuple[tuple[str, tuple], ...]:
        """A select's choices as (heading, choices) groups: the first with no heading, then
        `more`'s under its own, so a long menu leads with the few a reader wants first."""
        if not self.more:
            return (("", self.choices),)
        k = len(self.choices) - len(self.more[1])
        return (("", self.choices[:k]), (self.more[0], self.choices[k:]))

    def check(self, value):
        """The value, checked (an int kind comes back as an int); a ParamError names the field."""
        if value is None and self.optional:
            return None
        if value is REQUIRED:
            raise ParamError(self.name, "is required")
        if self.kind == "int":
            return count(self.name, value, self.lo, self.hi)
        if self.kind == "float":
            return self._number(value)
        if self.kind == "choice" and value not in self.values():
            raise ParamError(self.name, f"must be one of {', '.join(map(str, self.values()))}")
        if self.kind == "bool" and not isinstance(value, bool):
            raise ParamError(self.name, "must be true or false")
        if self.kind == "text" and not isinstance(value, str):
            raise ParamError(self.name, "must be text")
        return value

    def _number(self, value):
        v = number(self.name, value)
        unit = f" {self.unit}" if self.unit else ""
        if self.lo is not None and v < self.lo:
            if self.lo == 0:
                raise ParamError(self.name, "must be 0 or more")
            if v <= 0 < self.lo:
                raise ParamError(self.name, "must be greater than 0")
            raise ParamError(self.name, f"must be at least {_text(self.lo)}{unit}")
        if self.hi is not None and v > self.hi:
            raise ParamError(self.name, f"must be at most {_text(self.hi)}{unit}")
        return value


def _text(x: float) -> str:
    """A limit as a message prints it: 100,000 and 0.001, not 100000.0 and 1e-03; a whole number
    up to ten digits in full (1,073,741,824 MiB), a larger one as 1e+12."""
    if float(x).is_integer() and abs(x) < 1e10:
        return f"{x:,.0f}"
    return f"{x:g}"


def _limit(x: float) -> str:
    """An upper limit as --help prints it: a power of two past ten digits as 2^63, not as
    9.22337e+18."""
    n = int(x) if float(x).is_integer() else 0
    if n >= 1e10 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return _text(x)


def narrowed(base: Param, name: str = "", *, as_flag: bool = False, **changes) -> Param:
    """A widget's parameter made from an api function's, so the two cannot drift apart: the
    same kind and unit, the api's default unless `changes` states one, a range inside the api's
    and choices among its values (a name the api resolves may become a choice among names:
    the page's menu); the widget gives its own label (and nudge, menu texts).
    `name` is the widget's URL name where it differs from the api's keyword (a public
    contract); `api_args` maps it back, so the renaming is written here, once.
    `as_flag`: the control asks in the unit of the api's flag, not the library's (the card in
    Gb/s as it is sold, where the model takes GB/s), its default and range in that unit (and
    `changes` too); `api_args` hands the api its own unit (Param.from_flag), so a page asks
    the card as the command line does and never converts it itself."""
    if as_flag and base.flag_unit is None:
        raise ValueError(f"{base.name} has no flag in another unit to ask in")
    p = replace(
        base.on_flag() if as_flag else base, name=name or base.name, flag="", metavar="",
        flag_unit=None, gone=None, narrows=base, **changes,
    )  # fmt: skip
    wrong = narrowing_errors(p)
    if wrong:
        raise ValueError(f"{p.name} narrows {base.name}: {'; '.join(wrong)}")
    return p


def narrowing_errors(p: Param) -> list[str]:
    """What makes p not a narrowing of the api Param it names: a kind or unit of its own (but a
    choice among names), a range reaching outside the api's, a choice the api refuses, a
    default the api refuses."""
    if p.narrows is None:
        return []
    base, out = p.narrows.on_flag() if in_flag_unit(p) else p.narrows, list[str]()
    kinds = (base.kind, "choice") if base.kind == "name" else (base.kind,)
    if p.kind not in kinds or p.unit != base.unit:
        out.append(f"kind and unit must stay {base.kind} {base.unit!r}")
    if base.lo is not None and (p.lo is None or p.lo < base.lo):
        out.append(f"lo must be at least {base.lo}")
    if base.hi is not None and (p.hi is None or p.hi > base.hi):
        out.append(f"hi must be at most {base.hi}")
    if base.choices and not set(p.values()) <= set(base.values()):
        out.append(f"choices must be among {base.values()}")
    if p.default is REQUIRED or (p.default is None and p.optional):
        return out  # no default to check: the caller gives one, or the function picks it
    try:
        base.check(p.default)
    except ParamError as e:
        out.append(f"the api refuses its default {p.default!r}: {e.message}")
    return out


def in_flag_unit(p: Param) -> bool:
    """Whether a widget's parameter asks in its api Param's flag unit (narrowed's `as_flag`:
    the card in Gb/s for the model's GB/s), not the library's."""
    base = p.narrows
    return base is not None and base.flag_unit is not None and p.unit == base.flag_unit[0]


def api_args(p: dict, s: dict[str, Param], to: dict[str, Param] | None = None) -> dict:
    """A widget's validated parameters that narrow an api function's, under the api's names
    and in its units (a value asked in the flag's unit comes back in the library's): the
    keywords for the api or the engine behind it. `to`: only those narrowing that api spec's
    Params (a page that also narrows another function's, such as a pasted log's)."""
    return {
        q.narrows.name: q.narrows.from_flag(p[name]) if in_flag_unit(q) else p[name]
        for name, q in s.items()
        if q.narrows is not None and (to is None or to.get(q.narrows.name) is q.narrows)
    }


def spec(*params: Param) -> dict[str, Param]:
    """Parameters by name, in the order of a widget's controls and URL table, or of CLI flags."""
    return {p.name: p for p in params}


def defaults(s: dict[str, Param]) -> dict:
    return {name: p.default for name, p in s.items()}


def validated(params, s: dict[str, Param], of: str = "this widget") -> dict:
    """The parameters over the defaults, each checked; unknown names are refused (a typo in a
    link or a keyword should not pass unseen), saying whose parameters they are not (`of`)."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParamError("_", "parameters must be an object")
    unknown = sorted(set(params) - set(s))
    if unknown:
        known = f" (its parameters: {', '.join(s)})" if s and of != "this widget" else ""
        raise ParamError(str(unknown[0])[:40], f"is not a parameter of {of}{known}")
    merged = {**defaults(s), **params}
    return {name: p.check(merged[name]) for name, p in s.items()}


def takes(s: dict[str, Param]) -> Callable[[F], F]:
    """An api function whose typed signature is its spec's: the same names in the same order,
    each default the Param's and each annotation its kind's (`annotation`); the leading ones may
    be given by position, as the library has always taken them (`estimate("ring", 64, 1e9)`),
    and from a required one that follows a defaulted one on they are keyword-only (`kinds`). The
    signature is checked here, when the module loads, so it cannot drift from the spec; callers
    (and mypy, and help()) see real parameters, and the function receives them validated. A
    keyword the spec lacks is refused naming it (validated)."""

    def wrap(f: F) -> F:
        wrong = signature_errors(inspect.signature(f), s)
        if wrong:
            raise TypeError(f"{f.__name__}'s signature is not its spec's: {'; '.join(wrong)}")

        sig = inspect.signature(f)

        @functools.wraps(f)
        def call(*args, **kwargs):
            given = sig.bind_partial(*args, **kwargs).arguments if args else kwargs
            return f(**validated(given, s, f"{f.__name__}()"))

        call.spec = s  # type: ignore[attr-defined]
        return cast(F, call)

    return wrap


def kinds(s: dict[str, Param]) -> dict[str, inspect._ParameterKind]:
    """Each parameter's kind in a spec's signature: positional-or-keyword, and keyword-only from
    the first required Param that follows a defaulted one on, as Python requires."""
    out: dict[str, inspect._ParameterKind] = {}
    defaulted = keyword_only = False
    for p in s.values():
        required = p.default is REQUIRED
        keyword_only |= required and defaulted
        defaulted |= not required
        out[p.name] = (
            inspect.Parameter.KEYWORD_ONLY
            if keyword_only
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
    return out


def annotation(p: Param) -> str:
    """The Python type a Param's kind takes, as a signature writes it: "int", "float | None"
    (an optional one), "str" for a name, a text or a choice of strings, "object" for data."""
    if p.kind == "choice":
        base = "int" if all(isinstance(v, int) for v in p.values()) else "str"
    else:
        base = {"name": "str", "text": "str", "data": "object"}.get(p.kind, p.kind)
    return f"{base} | None" if p.optional and base != "object" else base


def signature_errors(sig: inspect.Signature, s: dict[str, Param]) -> list[str]:
    """How a function's signature departs from its spec: another name or order, a parameter
    of another kind than `kinds` gives, a default or an annotation that is not the Param's."""
    params = list(sig.parameters.values())
    if [q.name for q in params] != list(s):
        return [f"parameters {[q.name for q in params]} are not the spec's {list(s)}"]
    out = []
    for q in params:
        p = s[q.name]
        want = inspect.Parameter.empty if p.default is REQUIRED else p.default
        if q.kind is not kinds(s)[q.name]:
            out.append(f"{q.name} is {q.kind.description}, not {kinds(s)[q.name].description}")
        if q.default != want or type(q.default) is not type(want):
            out.append(f"{q.name}'s default is {q.default!r}, the spec's {want!r}")
        written = q.annotation  # text under `from __future__ import annotations`
        if not isinstance(written, str):
            written = inspect.formatannotation(written)
        if written != annotation(p):
            out.append(f"{q.name} is annotated {written!r}, the spec's {annotation(p)!r}")
    return out


def signature_text(s: dict[str, Param]) -> str:
    """The signature a spec asks for, as source text (what `takes` checks a function against):
    print it to write a new api function's."""
    args, star = [], kinds(s)
    for p in s.values():
        if star[p.name] is inspect.Parameter.KEYWORD_ONLY and "*" not in args:
            args.append("*")
        default = "" if p.default is REQUIRED else f" = {p.default!r}"
        args.append(f"{p.name}: {annotation(p)}{default}")
    return "(" + ", ".join(args) + ")"


# ---- Parameters and choices several widgets share ------------------------------------------

DTYPE_TEXT = {"int": "int32 (exact)", "fp32": "fp32", "bf16": "bf16"}
DTYPE = Param("dtype", "int", "choice", "Number type", choices=tuple(DTYPE_TEXT.items()))
# a long table's rows: the first screenful, or every one once the reader asks ("show all")
ROWS = Param("rows", "first", "choice", choices=(("first", "the first rows"), ("all", "all rows")))
VALUES = Param("values", None, "data")  # one list of numbers per GPU, as edited in a stepper
