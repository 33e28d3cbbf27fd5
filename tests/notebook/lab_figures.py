"""Every figure a lab prints, held against another door: the command line (its --json, or its
human view) asked the same question with the same parameters, and where no command answers it,
a formula written here from the page's source.

A lab's printed text is read line by line. The statements of its problems (prompt, hint, given:
the exercises' text, which tests/core/exercises holds) are set aside first. Each other line that
holds a figure must match one of the lab's `Line` patterns, whose named groups say what each
figure is: `f_*` a figure to hold (read back with its unit by tests/doors/reading.py, and held to
the door's value at the half-step of its last printed digit), `v_*` a list of numbers held
element for element, `p_*` a parameter of the question (a GPU's index, the caps a student
tried), which the line's question is asked with. A figure outside every group, or a line with a
figure that no pattern knows, is reported: a lab cannot print a figure no door holds.

A widget's repr in a cell's output (`Cluster()` and its lines) is the widget's record as
records.block renders it, held against the command line's human view (doors.repr_disagreements),
or, for a widget with no record, the page's readouts, each of which tests/doors holds where a
command prints it.
"""

from __future__ import annotations

import ast
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from course import LABS
from doors.doors import cli, disagreements, widget_state
from doors.notebook_repr import repr_disagreements
from doors.reading import FIGURE, Reading, read, read_all
from doors.table import DOORS, nccl_argv, simulate_argv, whiteboard_argv

from allreduce_explainer.widgets import REGISTRY

MIB = 2.0**20
Held = float | Callable[[Reading], bool]  # a value in SI units, or a test of the printed figure


@cache
def ask(*argv: str) -> dict:
    """The command's --json answer (one run per question, however many lines ask it)."""
    out = cli([*argv, "--json"])
    assert out is not None, f"the command line refuses {' '.join(argv)}"
    return json.loads(out)


@cache
def human(*argv: str) -> str:
    """The command's human view, with one space wherever it padded a column or wrapped a line."""
    return " ".join((cli(list(argv)) or "").split())


@dataclass(frozen=True)
class Line:
    """A printed line (matched whole, stripped) and what its groups are: `held(groups, ctx)`
    gives each `f_`/`v_` group's value from another door; ctx holds the lab's problems' givens
    and the `p_` groups of the lines read before this one (a prediction's question)."""

    pattern: str
    held: Callable[[dict, dict], dict[str, Held | list]] = lambda g, ctx: {}


def numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text.replace("−", "-"))]


# ---- the labs' lines, each with the door that holds it ----------------------------------------


def cost(algorithm: str, gpus: int, nbytes: float, per: int, **flags) -> dict:
    extra = [x for k, v in flags.items() for x in (f"--{k.replace('_', '-')}", str(v))]
    return ask("cost", algorithm, "--gpus", str(gpus), "--bytes", repr(float(nbytes)),
               "--gpus-per-node", str(per), *extra)  # fmt: skip


def _naive_and_ring(g: dict, ctx: dict) -> dict:
    n, b = int(g["p_n"]), ctx["P"]["bytes"]
    return {"f_naive": cost("naive", n, b, 8)["time_s"], "f_ring": cost("ring", n, b, 8)["time_s"]}


def _stepper(ctx: dict) -> dict:
    """`simulate ring --trace` at the lab's stepper's parameters (the page's state's)."""
    return ask(*simulate_argv("ring")(ctx["ring_reduce_scatter"]), "--trace")


def _sent(g: dict, ctx: dict) -> dict:
    """A narrated message of the reduce-scatter: its values and what the receiver then holds."""
    j, src, chunk = _stepper(ctx), int(g["p_src"]), int(g["p_chunk"])
    start, stop = j["chunks"][chunk]
    for step in j["trace"][: j["gpus"] - 1]:
        for m in step["messages"]:
            if m["src"] == src and m["start"] == start:
                held = step["buffers"][m["dst"]][start:stop]
                return {"v_values": m["values"], "v_held": held, "p_dst": m["dst"]}
    raise AssertionError(f"simulate sends no chunk {chunk} from GPU {src}")


def _cell(ctx: dict, after: int) -> float:
    """What the predicted GPU holds in the first cell of the predicted chunk after `after`
    steps of the reduce-scatter."""
    j = _stepper(ctx)
    return j["trace"][after - 1]["buffers"][int(ctx["p_gpu"])][j["chunks"][int(ctx["p_chunk"])][0]]


def _verdict_cell(g: dict, ctx: dict) -> dict:
    j, step, gpu = _stepper(ctx), int(g["p_step"]), int(g["p_gpu"])
    start = j["chunks"][int(ctx["p_chunk"])][0]
    sent = next(m for m in j["trace"][step - 1]["messages"] if m["dst"] == gpu)
    return {
        "f_cell": _cell(ctx, step),
        "f_sent": sent["values"][0] if sent["start"] == start else float("nan"),
        "p_src": sent["src"],
        "f_own": j["trace"][step - 2]["buffers"][gpu][start],
        "f_gpus": step + 1,
    }


def _bf16_order(g: dict, ctx: dict) -> dict:
    order = [[int(x)] for x in numbers(g["p_order"])]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(order, f)
    j = ask("simulate", "ring", "--gpus", str(len(order)), "--values", f.name, "--dtype", "bf16")
    Path(f.name).unlink()
    return {"f_ring": j["results"][0][0], "f_exact": j["target"][0]}


def _busbw(g: dict, ctx: dict) -> dict:
    q = ctx["Q"]
    j = ask("busbw", "--gpus", g["p_n"], "--bytes", str(q["bytes"]), "--time-us", str(q["time_us"]))
    return {"f_algbw": j["algbw_GBps"] * 1e9, "f_busbw": j["busbw_GBps"] * 1e9}


def _latency_setup(g: dict, ctx: dict) -> dict:
    p = ctx["latency"]
    return {"f_servers": p["gpus"] // p["gpus_per_node"]}


def crossing(first: Callable[[float], float], second: Callable[[float], float]):
    """A size printed as where `first` catches up with `second`: below the printed figure's
    half-step `first` is slower, above it not (each time from the command line)."""

    def test(r: Reading) -> bool:
        lo, hi = r.value - r.half, r.value + r.half
        return first(lo) > second(lo) and first(hi) <= second(hi)

    return test


def _nccl_time(ctx: dict, algorithm: str | None) -> Callable[[float], float]:
    return lambda size: ask(*nccl_argv(ctx["latency"], int(size), algorithm))["rows"][0][
        "nccl_time_us"
    ]


def _board_time(ctx: dict, algorithm: str) -> Callable[[float], float]:
    return lambda size: ask(*whiteboard_argv(ctx["latency"], algorithm, int(size)))["time_s"]


def _picks(ctx: dict, text: str) -> bool:
    """What NCCL picks by size ("Tree LL from 8 B; Tree LL128 from 174 kB; ..."): its pick
    (`nccl`, no algorithm forced) is each from its printed size on, and another just below."""
    pick = lambda size: "{algorithm} {protocol}".format(  # noqa: E731
        **ask(*nccl_argv(ctx["latency"], int(size)))["rows"][0]
    )
    for part in text.split("; "):
        name, _, size = part.partition(" from ")
        r = read(size, "bytes")
        if pick(r.value + r.half) != name:
            return False
        if r.value > 8 and pick(r.value - r.half - 1) == name:
            return False
    return True


def _latency_verdict(g: dict, ctx: dict) -> dict:
    ring, tree = _nccl_time(ctx, "Ring"), _nccl_time(ctx, "Tree")
    board = crossing(_board_time(ctx, "ring"), _board_time(ctx, "tree"))
    return {
        "f_crossing": crossing(ring, tree),
        "f_board": board,
        "f_picks": lambda r: _picks(ctx, g["f_picks"]),
    }


def _ring_tree(g: dict, ctx: dict) -> dict:
    q = ctx["P"]
    links = {"inter_latency": q["latency_us"], "nic_gbps": q["gbps"] * 8}
    return {
        f"f_{a}": cost(a, q["gpus"], q["bytes"], 1, **links)["time_s"] for a in ("ring", "tree")
    }


def _busiest_card(g: dict, ctx: dict) -> dict:
    q = ctx["Q"]
    j = cost(g["p_alg"], q["servers"] * q["gpus_per_node"], q["bytes"], q["gpus_per_node"])
    return {"f_card": j["bytes_per_nic_max"], "f_time": j["time_s"]}


def ddp(ctx: dict, *flags: str) -> dict:
    p = ctx["ddp_buckets"]
    return ask("ddp", "--model", p["model"], "--gpus", str(p["gpus"]), "--gpus-per-node",
               str(p["gpus_per_node"]), "--first-bucket-mb", "1", *flags)  # fmt: skip


def _ddp_verdict(g: dict, ctx: dict) -> dict:
    j = ddp(ctx, "--bucket-cap-mb", "25", "--sweep")
    best = j["best_bucket_mb"]
    return {
        "f_best": best * MIB,
        "f_best_exposed": j["best_exposed_s"],
        "f_default": j["exposed_s"],
        "f_times": best / 25 if g.get("f_times") else None,
        "f_yours": best / float(numbers(g["p_cap"])[0]) if g.get("p_cap") else None,
        "f_one": j["sweep"][-1]["exposed_s"],
    }


def _zero(g: dict, ctx: dict) -> dict:
    q = ctx["Q"]
    model = next(m["key"] for m in ask("presets")["models"] if m["params"] == q["params"])
    j = ask("shard", "--model", model, "--gpus", str(q["gpus"]), "--gpus-per-node",
            str(q["gpus_per_node"]))  # fmt: skip
    return {"f_gib": j["strategies"][g["p_k"]]["memory_bytes_per_gpu"]["total"]}


def _per_byte(g: dict, ctx: dict) -> dict:
    """Bytes each GPU sends per byte of the buffer: the ring's from `cost` (2(n - 1)/n); NVLS's
    from the page's formula, (n + 1)/n (no command times NVLS's bytes: page 9, "NVLS sends")."""
    n, size = ctx["Q"]["gpus"], ctx["Q"]["bytes"]
    if g["p_k"] == "ring":
        return {"f_x": cost("ring", n, size, n)["bytes_sent_per_gpu_max"] / size}
    return {"f_x": (n + 1) / n}


CALC = ("calc", "--model", "llama-3-8b", "--gpus", "64", "--gpus-per-node", "8", "--gpu", "h100")


def _calc_row(g: dict, ctx: dict) -> dict:
    """A line of the calculator's record as the lab prints it (`print(c)`): the same label and
    figure as `calc`'s human view prints for the same question."""
    said, label, value = human(*CALC), g["p_label"], g["f_value"]
    return {"f_value": lambda r: f"{label} {value}" in said or f"{value} {label}" in said}


CALC_FIELDS = sorted(REGISTRY["cluster"].result.fields, key=lambda q: -len(q.label))
CALC_LABELS = "|".join(re.escape(q.label) for q in CALC_FIELDS)
LINES: dict[str, tuple[Line, ...]] = {
    "01-why-allreduce": (
        Line(r"n = (?P<p_n>\d+): naive (?P<f_naive>[\d.]+ s), ring (?P<f_ring>[\d.]+ s)",
             _naive_and_ring),
    ),
    "02-ring-reduce-scatter": (
        Line(r"n = (?P<p_n>\d+) GPUs; the chunks are cells (?P<v_chunks>\[\[.*\]\]) "
             r"\(\[start, stop\) each\)",
             lambda g, ctx: {"v_chunks": sum(_stepper(ctx)["chunks"], [])}),
        Line(r"GPU (?P<p_gpu>\d+): (?P<v_inputs>\[.*\])",
             lambda g, ctx: {"v_inputs": _stepper(ctx)["inputs"][int(g["p_gpu"])]}),
        Line(r"Step (?P<p_step>\d+): every GPU sends one chunk to the next GPU, which adds it to "
             r"its own\."),
        Line(r"GPU (?P<p_src>\d+) sends chunk (?P<p_chunk>\d+) \((?P<v_values>.*?)\) to GPU "
             r"(?P<p_dst>\d+), which now holds (?P<v_held>.*)\.", _sent),
        Line(r"Predict: After step (?P<p_step>\d+), what will GPU (?P<p_gpu>\d+) hold in the "
             r"first cell of chunk (?P<p_chunk>\d+)\?"),
        Line(r"my prediction: (?P<f_cell>-?\d+)", lambda g, ctx: {
            "f_cell": _cell(ctx, int(ctx["p_step"]))}),
        Line(r"✓ Correct\. You said (?P<p_said>-?\d+); after step (?P<p_step>\d+), GPU "
             r"(?P<p_gpu>\d+) holds (?P<f_cell>-?\d+) there: the (?P<f_sent>-?\d+) GPU "
             r"(?P<p_src>\d+) sends plus its own (?P<f_own>-?\d+), the sum of (?P<f_gpus>\d+) "
             r"GPUs' numbers\.", _verdict_cell),
    ),
    "03-ring-all-gather": (
        Line(r"(?P<p_order>\[[\d, ]+\]): ring (?P<f_ring>\d+), exactly rounded (?P<f_exact>\d+), "
             r"all GPUs agree: (?P<p_agree>True|False)", _bf16_order),
    ),
    "04-what-each-gpu-sends": (
        Line(r"n = (?P<p_n>\d+): algbw (?P<f_algbw>[\d.]+ GB/s), busbw (?P<f_busbw>[\d.]+ GB/s)",
             _busbw),
    ),
    "05-latency-ring-vs-tree": (
        Line(r"n = (?P<p_gpus>\d+) GPUs in N = (?P<f_servers>\d+) servers of (?P<p_per>\d+), "
             r"(?P<p_latency>[\d.]+ µs) between servers, cards of (?P<p_card>[\d.]+ Gb/s)",
             _latency_setup),
        Line(r"my prediction: (?P<f_crossing>[\d.]+ [kMG]B)", lambda g, ctx: {
            "f_crossing": crossing(_nccl_time(ctx, "Ring"), _nccl_time(ctx, "Tree"))}),
        Line(r"✓ Right: NCCL's estimate has its ring catch up with its tree at "
             r"(?P<f_crossing>[\d.]+ [kMG]B); your (?P<p_said>[\d.]+ [kMG]B) is spot on\. The "
             r"whiteboard model's curves \(the second chart, every GPU on its own server\) cross "
             r"at (?P<f_board>[\d.]+ [kMG]B); NCCL picks (?P<f_picks>.*)\.", _latency_verdict),
        Line(r"ring (?P<f_ring>[\d.]+ µs), tree (?P<f_tree>[\d.]+ µs)", _ring_tree),
    ),
    "06-across-servers": (
        Line(r"(?P<p_alg>ring|multi-ring|hierarchical): busiest card (?P<f_card>[\d.]+ GB), "
             r"(?P<f_time>[\d.]+ s)", _busiest_card),
    ),
    "07-ddp-buckets": (
        Line(r"(?P<p_model>GPT-2 small): (?P<f_params>[\d,]+) parameters in "
             r"(?P<f_tensors>\d+) tensors",
             lambda g, ctx: {"f_params": ddp(ctx)["params"], "f_tensors": sum(
                 b["tensors"] for b in ddp(ctx)["bucket_timeline"])}),
        Line(r"n = (?P<p_gpus>\d+) GPUs in N = (?P<f_servers>\d+) servers of (?P<p_per>\d+)",
             lambda g, ctx: {"f_servers": int(g["p_gpus"]) // int(g["p_per"])}),
        Line(r"PyTorch's default cap: (?P<f_cap>[\d.]+ MiB), the first (?P<f_first>[\d.]+ MiB)",
             lambda g, ctx: {"f_cap": ddp(ctx)["bucket_cap_bytes"],
                             "f_first": ddp(ctx)["first_bucket_bytes"]}),
        Line(r"Predict: Will the best bucket cap, the one that leaves the least all-reduce exposed "
             r"after the backward pass, be above or below PyTorch's default of "
             r"(?P<f_cap>[\d.]+ MiB)\?",
             lambda g, ctx: {"f_cap": ddp(ctx)["bucket_cap_bytes"]}),
        Line(r"your best cap: (?P<p_cap>\d+ MiB), (?P<f_exposed>[\d.]+ ms) exposed",
             lambda g, ctx: {"f_exposed": ddp(ctx, "--bucket-cap-mb", g["p_cap"].split()[0])[
                 "exposed_s"]}),
        Line(r"the default's: (?P<f_exposed>[\d.]+ ms) exposed",
             lambda g, ctx: {"f_exposed": ddp(ctx, "--bucket-cap-mb", "25")["exposed_s"]}),
        Line(r"✓ Right\. The best cap is (?P<f_best>[\d.]+ MiB), leaving "
             r"(?P<f_best_exposed>[\d.]+ ms) exposed against the default's (?P<f_default>[\d.]+ "
             r"ms): (?:you said above; the best is (?P<f_times>[\d.]+) times the default|"
             r"(?P<f_yours>[\d.]+) times your (?P<p_cap>\d+ MiB))\. One bucket of everything "
             r"\((?P<f_one>[\d.]+ ms)\) beats the default\.", _ddp_verdict),
    ),
    "08-sharded-data-parallel": (
        Line(r"(?P<p_k>ddp|zero1|zero2|zero3|hsdp): (?P<f_gib>[\d.]+ GiB) per GPU", _zero),
    ),
    "09-in-network-reduction": (
        Line(r"(?P<p_k>nvls|ring): (?P<f_x>[\d.]+ bytes) sent per byte of buffer", _per_byte),
    ),
    "10-your-cluster": (
        Line(rf"(?P<p_label>{CALC_LABELS}): (?P<f_value>.+)", _calc_row),
    ),
}  # fmt: skip


# ---- reading a lab's output --------------------------------------------------------------------


def problems(lab: str) -> dict[str, dict]:
    """The problems a lab draws (`P = labs.problem("kind", k=v)` in its cells), by name: their
    givens, and their statements, which a lab prints and which are the exercises' text."""
    from allreduce_explainer.exercises import labs

    out = {}
    for name, call in re.findall(r"(\w+) = labs\.problem\(([^)]*)\)", _source(lab)):
        node = ast.parse(f"f({call})").body[0].value
        kind = ast.literal_eval(node.args[0])
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        out[name] = labs.problem(kind, **kwargs)
    return out


def context(lab: str) -> dict:
    """What a lab's lines are asked with: its problems' givens by name (P, Q), and the states of the
    widgets it shows (their parameters, as the page's worker settles them)."""
    ctx = {kind: p.given for kind, p in problems(lab).items()}
    for name, params in re.findall(r'show\("(\w+)"((?:, \w+=[^,)]+)*)\)', _source(lab)):
        kwargs = dict(re.findall(r"(\w+)=([^,)]+)", params))
        state = widget_state(name, {k: ast.literal_eval(v) for k, v in kwargs.items()})
        ctx[name] = state["params"]
    return ctx


def _source(lab: str) -> str:
    nb = json.loads((LABS / "source" / lab / f"{lab}.ipynb").read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def statements(lab: str) -> list[str]:
    """The exercises' text a lab prints: each problem's prompt, hint and given."""
    out = []
    for p in problems(lab).values():
        out += [p.prompt, f"Hint: {p.hint}", str(p.given)]
    return sorted(out, key=len, reverse=True)


REPR = re.compile(r"^([A-Z][A-Za-z]+)\((.*)\)$")


def contradictions(lab: str, text: str) -> list[str]:
    """Each figure of a lab's printed text that another door contradicts, or that no door
    holds, as a sentence naming the lab, the line and the figure."""
    for s in statements(lab):
        text = text.replace(s, "")
    ctx, out, lines = context(lab), [], text.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k].strip()
        k += 1
        m = REPR.match(line)
        if m and any(cls == m[1] for cls in _classes()):
            rows = []
            while k < len(lines) and lines[k].startswith("  "):
                rows.append(lines[k])
                k += 1
            out += [f"{lab}: {x}" for x in _repr_held(m[1], m[2], rows)]
            continue
        if read_all(line):
            out += [f"{lab}: {x}" for x in _held(lab, line, ctx)]
    return out


def _classes() -> list[str]:
    from allreduce_explainer.notebook.widget import CLASSES

    return [c.__name__ for c in CLASSES.values()]


def _repr_held(cls: str, args: str, rows: list[str]) -> list[str]:
    """A widget's repr, held: its record's lines against the command line's human view, or its
    readouts (the page's, each held by tests/doors where a command prints it)."""
    from allreduce_explainer.notebook.widget import CLASSES

    name = next(n for n, c in CLASSES.items() if c.__name__ == cls)
    params = eval(f"dict({args})", {})  # the repr's own keywords: numbers and strings
    if REGISTRY[name].result is not None:
        return repr_disagreements(name, params, rows)
    state = widget_state(name, params)
    labels = dict(REGISTRY[name].headline)
    shown = [f"  {labels[k]}: {state['readouts'][k]}" for k in labels if k in state["readouts"]]
    out = [] if rows == shown else [f"{cls} repr {rows} is not the page's readouts {shown}"]
    door = next((d for d in DOORS.values() if d.widget == name and not d.id), None)
    return out + (disagreements(door, params) or [] if door else [])


def _held(lab: str, line: str, ctx: dict) -> list[str]:
    for rule in LINES.get(lab, ()):
        m = re.fullmatch(rule.pattern, line)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        ctx.update((k, v) for k, v in groups.items() if k.startswith("p_"))
        out = _uncovered(line, m)
        held = rule.held(groups, ctx)
        for key, text in groups.items():
            if key[:2] not in ("f_", "v_"):
                continue
            exact = held.get(key)
            if exact is None:
                out.append(f"{line!r}: no door gives its {key[2:]} ({text})")
            elif key.startswith("v_"):
                if numbers(text) != [float(x) for x in (exact if isinstance(exact, list) else [])]:
                    out.append(f"{line!r}: {key[2:]} {text} but the command line {exact}")
            elif not _holds(text, exact):
                shown = "" if callable(exact) else f" but the command line {exact:.6g}"
                out.append(f"{line!r}: {key[2:]} {text}{shown}")
        return out
    return [f"{line!r}: a figure no door holds"]


def _holds(text: str, exact: Held) -> bool:
    r = read(text)
    return exact(r) if callable(exact) else r.holds(exact)


def _uncovered(line: str, m: re.Match) -> list[str]:
    """The figures of a line outside every group of its pattern."""
    spans = [m.span(k) for k, v in m.groupdict().items() if v is not None]
    return [
        f"{line!r}: {f.group(0)!r} is in no group of its pattern"
        for f in FIGURE.finditer(line)
        if not any(a <= f.start() and f.end() <= b for a, b in spans)
    ]


def printed(nb) -> str:
    """What a lab's cells printed and showed as text, output after output (a widget's repr is
    its `text/plain`)."""
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else ():
            text = o.get("text", "") or o.get("data", {}).get("text/plain", "")
            out.append(text if text.endswith("\n") else text + "\n")
    return "".join(out)


# ---- plants: a lab that prints a figure off, or in a wrong unit ----------------------------------

OTHER_UNIT = {"s": "ms", "ms": "µs", "µs": "ms", "GB": "GiB", "MiB": "MB", "MB": "MiB",
              "GB/s": "Gb/s", "GiB": "GB", "kB": "KiB", "bytes": "kB"}  # fmt: skip


def planted(lab: str, text: str, how: str) -> str:
    """The lab's text with the first figure a pattern holds (an `f_` group) off: its number
    times 1.01 (`how` "1.01"), or its unit another of the same quantity ("unit")."""
    skip = statements(lab)
    for line in text.split("\n"):
        if any(line.strip() and line.strip() in s for s in skip):
            continue
        for rule in LINES.get(lab, ()):
            m = re.fullmatch(rule.pattern, line.strip())
            if not m:
                continue
            for key, value in m.groupdict().items():
                f = FIGURE.fullmatch(value or "")
                if not key.startswith("f_") or f is None:
                    continue
                if how == "unit" and f["unit"] not in OTHER_UNIT:
                    continue
                if how == "unit":
                    new = f"{f['number']} {OTHER_UNIT[f['unit']]}"
                else:
                    x = float(f["number"].replace(",", "")) * 1.01
                    new = f"{x:.{len(f['number'].partition('.')[2]) + 1}f}" + (
                        f" {f['unit']}" if f["unit"] else "")  # fmt: skip
                return text.replace(line, line.replace(value, new, 1), 1)
    raise AssertionError(f"{lab} prints no figure a pattern holds, with a unit: {how}")
