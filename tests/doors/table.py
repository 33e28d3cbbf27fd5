"""The one table from the page's widgets to the command line: for each widget, the command that
asks its question, how its parameters become that command's flags, and the figures both print.

Every widget of the registry is either a `Door` here or named in NO_COMMAND with the reason it
has none (test_doors.py holds the registry to that). A parameter of a widget that the command
line cannot express is held at one value by `draws`, with a comment saying so.
"""

from __future__ import annotations

import hashlib
import random
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .doors import VALUES, Door, Figure, table_cell, unit_cell

GB, MIB = 1e9, 2.0**20


def after(label: str):
    """A readout's text from `label` on: the figure that follows a word ("tree 0.07 s")."""

    def text(s: str) -> str:
        assert label in s, f"no {label!r} in {s!r}"
        return s[s.index(label) + len(label) :]

    return text


@dataclass(frozen=True)
class readout:  # noqa: N801 (read as the function it was: readout("exposed"))
    """The state's readout `key` (from `then`'s label on, if given); the test of labels reads
    which readout a figure is."""

    key: str
    then: Callable[[str], str] | None = None

    def __call__(self, state: dict) -> str:
        return (self.then or str)(state["readouts"][self.key])


def flag(name: str, value) -> list[str]:
    return [name, str(value)]


def one(*values):
    """A draw that always gives the same value: a parameter the command line cannot express."""
    return lambda rng: rng.choice(values)


# ---- busbw: the busbw panel (page 4) and `busbw` -------------------------------------------------


def busbw_argv(p: dict) -> list[str]:
    # link_gbps: the page holds busbw against a link; the command prints no share (page only)
    return [
        "busbw",
        *flag("--gpus", p["gpus"]),
        *flag("--bytes", repr(float(p["bytes"]))),
        *flag("--time-us", repr(float(p["time_us"]))),
        *flag("--collective", p["collective"]),
    ]


BUSBW = Door(
    "busbw",
    busbw_argv,
    (
        Figure("algbw", readout("algbw"), lambda j: j["algbw_GBps"] * GB, "rate", "algbw"),
        Figure("busbw", readout("busbw"), lambda j: j["busbw_GBps"] * GB, "rate", "busbw"),
        Figure("factor", readout("factor", after("= ")), lambda j: j["factor"], "count"),
    ),
    draws={"gpus": lambda rng: rng.randint(1, 4096)},
)  # fmt: skip


# ---- cluster: your cluster (page 10) and `calc` --------------------------------------------------

# the closed forms' names on the page (cluster.IDEAL_TEXT) and under --json's algorithm_times_s
IDEAL = {
    "one ring per card ": "multi-ring",
    "hierarchical ": "hierarchical",
    "single ring ": "ring",
    "teaching tree ": "tree",
}


def calc_argv(p: dict) -> list[str]:
    model = (
        ["--params", repr(float(p["params"]))]
        if p["model"] == "custom"
        else ["--model", p["model"]]
    )
    multi, by_nccl = p["gpus"] > p["gpus_per_node"], p["algorithm"].startswith("nccl")
    return [
        "calc",
        *model,
        *flag("--gpus", p["gpus"]),
        *flag("--gpus-per-node", p["gpus_per_node"]),
        *flag("--gpu", p["gpu"]),
        # calc refuses what it cannot apply: the card in one server, NCCL's release and
        # launches for a teaching model; the page drives at most a server's GPUs per process
        *(flag("--nic-gbps", repr(float(p["nic_gbps"]))) if multi else []),
        *(flag("--gpus-per-process", min(p["gpus_per_process"], p["gpus_per_node"])) if by_nccl
          else []),
        *flag("--algorithm", p["algorithm"]),
        *(flag("--nccl-version", p["nccl_version"]) if by_nccl else []),
        *flag("--grad-dtype", p["grad_dtype"]),
        *flag("--tokens-per-gpu", repr(float(p["tokens_per_gpu"]))),
        *flag("--mfu", repr(float(p["mfu"]))),
        *flag("--intra-latency", repr(float(p["intra_latency_us"]))),
        # one server has no network: calc refuses a latency between servers it cannot apply
        *(flag("--inter-latency", repr(float(p["inter_latency_us"]))) if multi else []),
    ]  # fmt: skip


def _nccl_estimate(j: dict) -> float | None:
    return j.get("nccl_time_s") if j["algorithm_asked"] == j["algorithm"] else None


CLUSTER = Door(
    "cluster",
    calc_argv,
    (
        Figure("all-reduce", readout("allreduce"), lambda j: j["allreduce_s"], "time",
               "all-reduce per step"),
        Figure("share, no overlap", readout("share_no_overlap"), lambda j: j["share_no_overlap"],
               "share", "share of the step, no overlap"),
        Figure("share, overlap", readout("share_with_overlap"),
               lambda j: j["share_with_overlap"], "share", "share with DDP's bucketed overlap"),
        Figure("busbw", readout("busbw"), lambda j: j["busbw_GBps"] * GB, "rate",
               "bus bandwidth"),
        Figure("algbw", readout("busbw", after("algbw")), lambda j: j["algbw_GBps"] * GB,
               "rate", r"\balgbw\b"),
        Figure("gradient", readout("gradient"), lambda j: j["gradient_bytes"], "bytes",
               "bytes reduced: the gradient"),
        Figure("compute", readout("compute"), lambda j: j["compute_s"], "time",
               "compute per step"),
        Figure("exposed", readout("exposed"), lambda j: j["exposed_s"], "time",
               "all-reduce exposed with DDP's overlap"),
        Figure("DDP buckets", readout("exposed", after("after")), lambda j: j["buckets"],
               "count", "DDP buckets"),
        Figure("lower bound", readout("bound"), lambda j: j["lower_bound_s"], "time",
               "lower bound"),
        Figure("NCCL's estimate", readout("algorithm", after("estimate")), _nccl_estimate,
               "time", "NCCL's estimate"),
        Figure("model states", readout("memory"), lambda j: j["memory"]["bytes_per_gpu"],
               "bytes", "model states per GPU"),
        Figure("sharded", readout("memory", after("GPU")),
               lambda j: None if j["memory"]["fits"] else j["memory"]["sharded_bytes_per_gpu"],
               "bytes",
               "sharded over the GPUs"),
        *(
            Figure(f"closed form {name}", readout("ideal", after(text)),
                   lambda j, name=name: j["algorithm_times_s"][name], "time",
                   unit_cell(name))
            for text, name in IDEAL.items()
        ),
    ),
    draws={
        # the calculator's CLI times NVIDIA GPUs only (NCCL's model); the page falls back to a
        # closed form on the MI300X and a custom GPU (cluster._calc says why): page only
        "gpu": lambda rng: rng.choice(["A100 SXM", "H100 SXM", "H200 SXM", "B200"]),
        "gpus_per_node": lambda rng: rng.choice([1, 2, 4, 8]),
        "gpus": lambda rng: rng.choice([8, 16, 32, 64, 128, 512]),
    },
)  # fmt: skip


# ---- ddp_buckets: DDP's buckets (page 7) and `ddp` -----------------------------------------------


def ddp_argv(p: dict) -> list[str]:
    # the first bucket "the cap" is the CLI's default: the cap, in the sweep each swept cap
    # (--first-bucket-mb CAP would hold the sweep's first bucket at this one cap)
    first = flag("--first-bucket-mb", 1.0) if p["first_bucket"] == "1mib" else []
    return [
        "ddp",
        *flag("--model", p["model"]),
        *flag("--gpus", p["gpus"]),
        *flag("--gpus-per-node", p["gpus_per_node"]),
        *flag("--bucket-cap-mb", repr(float(p["bucket_cap_mb"]))),
        *first,
        *flag("--batch", p["batch"]),
        *flag("--mfu", repr(float(p["mfu"]))),
        *flag("--grad-bytes", {"fp32": 4, "bf16": 2}[p["grad_dtype"]]),
        # one server has no network: `ddp` refuses a card it cannot use, as the page leaves it
        *(flag("--nic-gbps", repr(float(p["nic_gbps"]))) if p["gpus"] > p["gpus_per_node"]
          else []),
    ]  # fmt: skip


def cell(column: str, row: int = 0, unit: str = "", figure: str = ""):
    """A cell of a chart's data table (of `figure`, else the main one), with the unit its
    column's header names ("end (ms)")."""

    def text(state: dict) -> str:
        table = state["figures"][figure]["table"] if figure else state["table"]
        if not -len(table["rows"]) <= row < len(table["rows"]):
            return ""  # no such row shown: no figure
        return f"{table['rows'][row][table['columns'].index(column)]} {unit}"

    return text


def head_cell(column: str, row: int = 0):
    """A cell of the main table whose column names its unit in its head ("communication (ms)",
    records.columns): the cell with that unit."""

    def text(state: dict) -> str:
        table = state["table"]
        [head] = [h for h in table["columns"] if h.startswith(f"{column} (")]
        return f"{table['rows'][row][table['columns'].index(head)]} {head[len(column) + 2 : -1]}"

    return text


def timeline(key: str, row: int = 0):
    return lambda j: j["bucket_timeline"][row][key]


DDP_DRAWS = {
    # the page's GPU menu has no flag on `ddp`, which times H100 SXM servers only: page only
    "gpu": one("H100 SXM"),
    "model": lambda rng: rng.choice(["gpt2", "bert-base", "resnet50", "gpt2-xl"]),
    "gpus": lambda rng: rng.choice([2, 8, 16, 64, 512, 1024]),
}
DDP = Door(
    "ddp_buckets",
    ddp_argv,
    (
        Figure("gradient", readout("gradient"), lambda j: j["gradient_bytes"], "bytes", "gradient"),
        Figure("first bucket", readout("first"), lambda j: j["first_bucket_bytes"], "bytes",
               "first bucket's cap"),
        Figure("buckets", readout("buckets"), lambda j: len(j["buckets"]), "count",
               r"\n +buckets "),
        Figure("backward pass", readout("backward"), lambda j: j["backward_s"], "time",
               "backward pass"),
        Figure("all-reduces", readout("allreduce"), lambda j: j["allreduce_total_s"], "time",
               "all-reduces, in all"),
        Figure("exposed", readout("exposed"), lambda j: j["exposed_s"], "time",
               "exposed after the backward pass"),
        Figure("communication ends", lambda s: after("end at")(s["summary"]),
               lambda j: j["comm_end_s"], "time", "communication ends"),
        Figure("first bucket's size", cell("size"), timeline("bytes"), "bytes", r"\n +1 +\d+ "),
        Figure("first bucket's end", cell("end (ms)", unit="ms"), timeline("end_s"), "time"),
        Figure("first bucket's start", cell("start (ms)", unit="ms"), timeline("start_s"), "time"),
    ),
    draws=DDP_DRAWS,
)  # fmt: skip


def ddp_sweep_argv(p: dict) -> list[str]:
    return [*ddp_argv(p), "--sweep"]


# The best cap the page names and the one `ddp --sweep` names (the review's T1 and T2)
DDP_SWEEP = Door(
    "ddp_buckets",
    ddp_sweep_argv,
    (
        Figure("best cap", readout("best"), lambda j: j["best_bucket_mb"] * MIB, "bytes",
               "best bucket cap"),
        Figure("exposed at the best cap", readout("best_exposed"), lambda j: j["best_exposed_s"],
               "time", "exposed at the best cap"),
    ),
    draws=DDP_DRAWS,
    id="ddp_buckets/sweep",
)  # fmt: skip


# ---- shard_memory: sharding (page 8) and `shard` -------------------------------------------------


def shard_argv(p: dict) -> list[str]:
    return [
        "shard",
        *flag("--model", p["model"]),
        *flag("--gpus", p["gpus"]),
        *flag("--gpus-per-node", p["gpus_per_node"]),
        *flag("--gpu", p["gpu"]),
        # "400 Gb/s"; one server has no network: shard refuses a card it cannot use
        *(flag("--nic-gbps", repr(float(p["network"].split()[0])))
          if p["gpus"] > p["gpus_per_node"] else []),
        *flag("--comm-model", p["comm_model"]),
        *flag("--tokens-per-gpu", repr(float(p["tokens_per_gpu"]))),
        *flag("--mfu", repr(float(p["mfu"]))),
    ]  # fmt: skip


# the strategies: their --json key, their row in the page's table and the CLI's
STRATEGIES = {
    "ddp": "DDP",
    "zero1": "ZeRO-1",
    "zero2": "ZeRO-2",
    "zero3": "ZeRO-3 / FSDP",
    "hsdp": "HSDP",
}


def strategy(key: str, field: str, part: str | None = None):
    def value(j: dict) -> float:
        v = j["strategies"][key][field]
        return v[part] if part else v

    return value


def shard_figures(i: int, key: str, label: str) -> tuple[Figure, ...]:
    row = re.escape(label)
    return (
        Figure(f"{label} memory", cell("total (GiB)", i, "GiB"),
               strategy(key, "memory_bytes_per_gpu", "total"), "bytes", table_cell(row, 0, "GiB")),
        Figure(f"{label} sent", cell("sent per GPU", i), strategy(key, "comm_bytes_per_gpu"),
               "bytes", table_cell(row, 1, "GB")),
        Figure(f"{label} communication", head_cell("communication", i),
               strategy(key, "comm_s"), "time", unit_cell(row, 2)),
    )  # fmt: skip


def tokens(key: str):
    """The tokens from which a strategy's collectives hide; None where it sends nothing."""
    return lambda j: (
        j["overlap"][key]["critical_tokens_per_gpu"] if j["overlap"][key]["bus_GBps"] else None
    )


def bus(key: str):
    return lambda j: j["overlap"][key]["bus_GBps"] * GB if j["overlap"][key]["bus_GBps"] else None


def comm_bytes(key: str):
    return lambda j: j["strategies"][key]["comm_bytes_per_gpu"]


SHARD = Door(
    "shard_memory",
    shard_argv,
    (
        Figure("DDP's communication", readout("ddp_comm"), strategy("ddp", "comm_s"), "time"),
        Figure("ZeRO-3's communication", readout("zero3_comm"), strategy("zero3", "comm_s"),
               "time"),
        Figure("compute", readout("compute"), lambda j: j["compute_s"], "time"),
        Figure("ZeRO-3 bytes over DDP's", readout("ratio"),
               lambda j: comm_bytes("zero3")(j) / comm_bytes("ddp")(j), "count"),
        Figure("FSDP hides from", readout("zero3_tokens"), tokens("zero3"), "tokens",
               r"ZeRO-3 / FSDP: the collectives hide behind compute from", up=True),
        Figure("HSDP hides from", readout("hsdp_tokens"), tokens("hsdp"), "tokens",
               r"HSDP: the collectives hide behind compute from", up=True),
        Figure("FSDP's bus", readout("zero3_tokens"), bus("zero3"), "rate"),
        Figure("HSDP's bus", readout("hsdp_tokens"), bus("hsdp"), "rate"),
        *(f for i, (k, label) in enumerate(STRATEGIES.items()) for f in shard_figures(i, k, label)),
    ),
    draws={"gpus": lambda rng: rng.choice([2, 8, 16, 64, 256, 1024])},
)  # fmt: skip


# ---- latency: ring against tree (page 5) and `nccl`, `cost` -------------------------------------

GIB8, MIB1 = 2**33, 2**20


def nccl_argv(p: dict, nbytes: int, algorithm: str | None = None) -> list[str]:
    """`nccl` on the latency page's cluster: H100 servers, one card of the page's Gb/s per GPU."""
    g = p["gpus_per_node"]
    return [
        "nccl",
        *flag("--gpus", p["gpus"]),
        *flag("--gpus-per-node", g),
        *flag("--nics-per-node", g),
        *flag("--nic-gbps", repr(float(p["nic_gbps"]))),
        *flag("--bytes", nbytes),
        *(flag("--algorithm", algorithm) if algorithm else []),
    ]


def whiteboard_argv(p: dict, algorithm: str, nbytes: int) -> list[str]:
    """`cost` as the whiteboard model: every GPU its own server, α and the card the page's."""
    return [
        "cost",
        algorithm,
        *flag("--gpus", p["gpus"]),
        *flag("--gpus-per-node", 1),
        *flag("--bytes", nbytes),
        *flag("--inter-latency", repr(float(p["latency_us"]))),
        *flag("--nic-gbps", repr(float(p["nic_gbps"]))),
    ]


def latency_argv(p: dict) -> dict[str, list[str]]:
    return {
        "ring": nccl_argv(p, GIB8, "Ring"),
        "tree": nccl_argv(p, GIB8, "Tree"),
        "pick": nccl_argv(p, GIB8),
        "ring 1 MiB": nccl_argv(p, MIB1, "Ring"),
        "board ring": whiteboard_argv(p, "ring", MIB1),
        "board tree": whiteboard_argv(p, "tree", MIB1),
    }


def nccl_row(key: str, scale: float = 1.0):
    return lambda j: j["rows"][0][key] * scale


ROW_1MIB = 17  # the page's tables show every eighth size, 8 B * 2**i: 1 MiB is row 17
LATENCY = Door(
    "latency",
    latency_argv,
    (
        Figure("ring at 8 GiB", readout("nccl_8gib", after("ring")), nccl_row("nccl_time_us", 1e-6),
               "time", table_cell(str(GIB8), 4, "us"), command="ring"),
        Figure("tree at 8 GiB", readout("nccl_8gib", after("tree")), nccl_row("nccl_time_us", 1e-6),
               "time", table_cell(str(GIB8), 4, "us"), command="tree"),
        Figure("NCCL's pick at 8 GiB", readout("nccl_pick_8gib"), nccl_row("nccl_time_us", 1e-6),
               "time", table_cell(str(GIB8), 4, "us"), command="pick"),
        Figure("ring at 1 MiB", cell("NCCL ring", ROW_1MIB), nccl_row("nccl_time_us", 1e-6), "time",
               command="ring 1 MiB"),
        Figure("whiteboard ring at 1 MiB", cell("whiteboard ring", ROW_1MIB, figure="whiteboard"),
               lambda j: j["time_s"], "time", "time", command="board ring"),
        Figure("whiteboard tree at 1 MiB", cell("whiteboard tree", ROW_1MIB, figure="whiteboard"),
               lambda j: j["time_s"], "time", "time", command="board tree"),
    ),
    draws={
        "gpus": lambda rng: rng.choice([8, 16, 64, 256, 1024]),
        "gpus_per_node": lambda rng: rng.choice([1, 2, 4, 8]),
    },
)  # fmt: skip


def curve_argv(p: dict) -> list[str]:
    g = p["gpus_per_node"]
    algorithm = [] if p["algorithm"] == "nccl" else flag("--algorithm", p["algorithm"])
    return [
        "nccl",
        *flag("--gpus", g * p["servers"]),
        *flag("--gpus-per-node", g),
        *flag("--nics-per-node", g),
        *flag("--gpu", p["gpu"]),
        *flag("--nic-gbps", repr(float(p["nic_gbps"]))),
        *flag("--bytes", GIB8),
        *algorithm,
    ]


BUSBW_CURVE = Door(
    "busbw_curve",
    curve_argv,
    (
        Figure("fitted busbw at 8 GiB", readout("model"), nccl_row("busbw_GBps", GB), "rate",
               table_cell(str(GIB8), 3, "GB/s")),
        Figure("NCCL's estimate at 8 GiB", readout("nccl_own"), nccl_row("nccl_busbw_GBps", GB),
               "rate", table_cell(str(GIB8), 5, "GB/s")),
    ),
    draws={"servers": lambda rng: rng.choice([1, 2, 4, 64, 512])},
)  # fmt: skip


# ---- servers_compare: across servers (page 6) and `cost`, `nccl` --------------------------------


def servers_argv(p: dict) -> dict[str, list[str]]:
    g, n = p["gpus_per_node"], p["gpus_per_node"] * p["servers"]
    common = [
        *flag("--gpus", n),
        *flag("--gpus-per-node", g),
        *flag("--bytes", repr(float(p["gradient_gb"]) * GB)),
        *flag("--intra-bw", repr(float(p["intra_bw"]))),
        *flag("--intra-latency", repr(float(p["intra_latency"]))),
    ]
    if p["servers"] > 1:  # one server has no network: `cost` refuses its rate and latency
        common += [*flag("--nic-gbps", repr(float(p["nic_gbps"]))),
                   *flag("--inter-latency", repr(float(p["inter_latency"])))]  # fmt: skip
    # NCCL's choice: H100 SXM servers, one card of the page's rate per GPU (its note says so)
    nccl = [
        "nccl",
        *flag("--gpus", n),
        *flag("--gpus-per-node", g),
        *flag("--nics-per-node", g),
        *flag("--nic-gbps", repr(float(p["nic_gbps"]))),
        *flag("--bytes", repr(float(p["gradient_gb"]) * GB)),
    ]
    return {m: ["cost", m, *common] for m in SERVER_METHODS} | {"nccl": nccl}


SERVER_METHODS = {"ring": "ring", "multi-ring": "multi_ring", "hierarchical": "hierarchical"}


def server_figures(method: str, key: str) -> tuple[Figure, ...]:
    return (
        Figure(f"{method} time", readout(f"{key}_time"), lambda j: j["time_s"], "time", "time",
               command=method),
        Figure(f"{method} across servers", readout(f"{key}_total"), lambda j: j["bytes_inter_node"],
               "bytes", r"\n +across servers ", command=method),
        Figure(f"{method} busiest card", readout(f"{key}_card"), lambda j: j["bytes_per_nic_max"],
               "bytes", r"\n +across servers ", human_index=1, command=method),
        Figure(f"{method} network steps", readout(f"{key}_steps"), lambda j: j["network_steps"],
               "count", "steps", human_index=1, command=method),
    )  # fmt: skip


SERVERS = Door(
    "servers_compare",
    servers_argv,
    (
        *(f for m, k in SERVER_METHODS.items() for f in server_figures(m, k)),
        Figure("NCCL's choice", readout("nccl_time"), nccl_row("time_us", 1e-6), "time",
               command="nccl"),
    ),
    draws={
        "servers": lambda rng: rng.choice([1, 2, 4, 8, 64]),
        # NCCL's model takes cards of 1 to 3,200 Gb/s: past that the page leaves its figure out
        # and `nccl` refuses, so the draws stay inside
        "nic_gbps": lambda rng: rng.uniform(1, 3200),
    },
)  # fmt: skip


# ---- the first pages: scaling and sends (page 1), steps (page 5), and `cost` ---------------------


def scaling_argv(p: dict) -> dict[str, list[str]]:
    n, nbytes = p["gpus"], float(p["params_b"]) * 1e9 * 2  # a BF16 gradient
    line = [*flag("--gpus", n), *flag("--gpus-per-node", min(n, 8)), *flag("--bytes", repr(nbytes))]
    return {m: ["cost", m, *line] for m in ("naive", "ring")}


SCALING = Door(
    "scaling",
    scaling_argv,
    (
        Figure("naive", readout("naive"), lambda j: j["time_s"], "time", "time", command="naive"),
        Figure("ring", readout("ring"), lambda j: j["time_s"], "time", "time", command="ring"),
        Figure("gradient", readout("gradient"), lambda j: j["bytes"], "bytes", command="ring"),
    ),
    draws={"gpus": lambda rng: rng.choice([1, 2, 4, 8, 16, 64, 512, 1024])},
)  # fmt: skip


def sends_argv(p: dict) -> dict[str, list[str]]:
    line = [*flag("--gpus", p["gpus"]), *flag("--bytes", repr(float(p["gradient_gb"]) * GB))]
    return {m: ["cost", m, *line] for m in ("naive", "ring")}


SENDS = Door(
    "sends",
    sends_argv,
    (
        Figure("ring sends", readout("ring"), lambda j: j["bytes_sent_per_gpu_max"], "bytes",
               "sent per GPU, most", command="ring"),
        Figure("naive root sends", readout("root"), lambda j: j["bytes_sent_per_gpu_max"], "bytes",
               "sent per GPU, most", command="naive"),
    ),
    draws={"gpus": lambda rng: rng.randint(2, 4096)},
)  # fmt: skip


def steps_argv(p: dict) -> dict[str, list[str]]:
    return {
        m: ["cost", m, *flag("--gpus", p["gpus"]), *flag("--bytes", 8)] for m in ("ring", "tree")
    }


STEPS = Door(
    "steps",
    steps_argv,
    (
        Figure("ring steps", readout("ring"), lambda j: j["steps"], "count", "steps",
               command="ring"),
        Figure("tree steps", readout("tree"), lambda j: j["steps"], "count", "steps",
               command="tree"),
    ),
)  # fmt: skip


# ---- the steppers (pages 2, 3, 5, 6) and `simulate` ----------------------------------------------


def simulate_argv(algorithm: str, *extra: str):
    def argv(p: dict) -> list[str]:
        gpus = p["gpus"] if "gpus" in p else p["servers"] * p["gpus_per_node"]
        return [
            "simulate",
            algorithm,
            *flag("--gpus", gpus),
            *flag("--length", p["length"]),
            *flag("--seed", p["seed"]),
            *flag("--dtype", p.get("dtype", "int")),
            *[x for name in extra for x in flag(f"--{name.replace('_', '-')}", p[name])],
        ]

    return argv


def sent(gpu: int, share: float = 1.0):
    """The bytes GPU `gpu` sends in the whole all-reduce (a share of it: a ring's reduce-scatter
    and its all-gather each send half, n - 1 of its 2(n - 1) steps)."""
    return lambda j: j["bytes_sent_per_gpu"][gpu] * share


def sent_cell(gpu: int):
    """The view's per-GPU table: what GPU `gpu` sends, in bytes."""
    return table_cell(str(gpu), 0, "B")


SAME_NUMBERS = (
    Figure("inputs", lambda s: s["inputs"], lambda j: j["inputs"], VALUES),
    Figure("exact sum", lambda s: s["target"], lambda j: j["target"], VALUES),
)
SMALL = {
    "gpus": lambda rng: rng.randint(2, 8),
    "length": lambda rng: rng.choice([4, 8, 16, 7]),
    "seed": lambda rng: rng.randint(0, 1000),
}


def even(value):
    """A ring stepper's bytes are half the all-reduce's when the chunks are equal; with unequal
    chunks a GPU sends different chunks in the two halves, so the half is no oracle there."""
    return lambda j: value(j) if j["length"] % j["gpus"] == 0 else None


SENDS_LINE = re.compile(r"GPU (\d+) sends chunk \d+ \((.*?)\) to GPU (\d+), which now holds (.*)\.")


def narrated_sends(state: dict) -> str:
    """Every message the narration tells, step by step: "GPU a sends chunk c (values) to GPU b,
    which now holds (values)", as its numbers (sender, values, receiver, what it holds)."""
    lines = (line for frame in state["frames"] for line in frame["narration"])
    return " ; ".join(" ".join(m.groups()) for m in map(SENDS_LINE.fullmatch, lines) if m)


def traced_sends(half: int):
    """The same from `simulate --trace`: the reduce-scatter's steps (half 0) or the
    all-gather's (half 1) of the ring, each message's sender, values, receiver and what the
    receiver's buffer holds in those places after the step."""

    def numbers(j: dict) -> list:
        steps = j["trace"][1:] if j["trace"] and not j["trace"][0]["messages"] else j["trace"]
        n = j["gpus"] - 1
        out = []
        for step in steps[half * n : (half + 1) * n]:
            for m in sorted(step["messages"], key=lambda m: m["src"]):
                held = step["buffers"][m["dst"]][m["start"] : m["stop"]]
                out += [m["src"], *m["values"], m["dst"], *held]
        return out

    return numbers


def ring_door(name: str, half: int) -> Door:
    """A ring stepper: half of `simulate ring`'s all-reduce, its steps, bytes and messages."""
    return Door(
        name,
        lambda p: {"": simulate_argv("ring")(p), "trace": [*simulate_argv("ring")(p), "--trace"]},
        (
            *SAME_NUMBERS,
            Figure("steps", readout("steps"), lambda j: j["steps"] / 2, "count"),
            Figure("sent", readout("sent"), even(sent(0, 0.5)), "bytes"),
            Figure("the narration's messages", narrated_sends, traced_sends(half), VALUES,
                   command="trace"),
        ),
        draws=SMALL,
    )  # fmt: skip


NETWORK_LINE = re.compile(r"(\d+) messages, (\d+) of them between servers")


def narrated_network(state: dict) -> str:
    lines = (frame["narration"][0] for frame in state["frames"])
    return " ".join(" ".join(m.groups()) for m in map(NETWORK_LINE.search, lines) if m)


def traced_network(j: dict) -> list[int]:
    """Each step's messages and those between servers, from `simulate --trace`."""
    steps = [s for s in j["trace"] if s["messages"]]
    return [x for s in steps for x in (len(s["messages"]),
            sum(m["link"] == "inter" for m in s["messages"]))]  # fmt: skip


NAIVE = Door(
    "naive",
    simulate_argv("naive"),
    (
        *SAME_NUMBERS,
        Figure("GPU 0 sends", readout("root_sent"), sent(0), "bytes", sent_cell(0)),
        Figure("every other GPU sends", readout("other_sent"), sent(1), "bytes", sent_cell(1)),
    ),
    draws={"seed": SMALL["seed"]},
)  # fmt: skip
TREE = Door(
    "tree_allreduce",
    simulate_argv("tree", "chunks"),
    (*SAME_NUMBERS, Figure("steps", readout("steps"), lambda j: j["steps"], "count", "steps")),
    draws={"seed": SMALL["seed"], "length": lambda rng: rng.randint(8, 32)},
)  # fmt: skip
SERVER_STEPPER = Door(
    "servers_stepper",
    lambda p: {"": simulate_argv(p["method"], "gpus_per_node")(p),
               "trace": [*simulate_argv(p["method"], "gpus_per_node")(p), "--trace"]},
    (
        *SAME_NUMBERS,
        Figure("the narration's messages", narrated_network, traced_network, VALUES,
               command="trace"),
        Figure("over the network", readout("total"), lambda j: j["bytes_inter_node"], "bytes",
               r"\n +across servers "),
        Figure("per card", readout("per_card"), lambda j: j["bytes_per_nic_max"], "bytes",
               r"\n +across servers ", human_index=1),
        Figure("network steps", readout("network_steps"), lambda j: j["network_steps"], "count",
               r"\n +steps ", human_index=1),
        Figure("steps", readout("network_steps", after("of")), lambda j: j["steps"], "count",
               r"\n +steps "),
    ),
    draws={"seed": SMALL["seed"]},
)  # fmt: skip


# ---- orders: the order of the additions (page 9) and `orders` -----------------------------------

ORDER_LENGTH = 8  # the elements the page shows, one table row each
ORDER_METHODS = {"serial": "serial", "ring": "ring", "tree": "tree", "nvls": "nvls"}


def orders_argv(p: dict) -> dict[str, list[str]]:
    bucket = int(p["bucket_mb"]) * MIB
    size = {"fp32": 4, "bf16": 2, "fp16": 2}[p["dtype"]]
    line = [
        "orders",
        *flag("--gpus", p["gpus"]),
        *flag("--dtype", p["dtype"]),
        *flag("--kind", p["kind"]),
        *flag("--seed", p["seed"]),
        *flag("--length", ORDER_LENGTH),
    ]
    # inside the bucket: the gradient's first element in its middle
    middle = (int(bucket) // size - ORDER_LENGTH) // 2
    return {
        "alone": line,
        "inside": [*line, *flag("--bytes", int(bucket)), *flag("--offset", middle)],
    }


def method_figures(method: str) -> tuple[Figure, ...]:
    key = f"values_{method}"
    return (
        Figure(f"{method}'s results", readout(key, lambda t: t.split(" (")[0]),
               lambda j: j["methods"][method]["result"], VALUES, command="alone"),
        Figure(f"{method}'s worst ulps", readout(key, after("max")),
               lambda j: j["methods"][method]["max_ulp"], "count", table_cell(method, 1),
               command="alone"),
        Figure(f"{method}'s mean ulps", readout(key, after("mean")),
               lambda j: j["methods"][method]["mean_ulp"], "count", table_cell(method, 2),
               command="alone"),
    )  # fmt: skip


ORDERS = Door(
    "orders",
    orders_argv,
    (
        Figure("exact sum", lambda s: ", ".join(r[1] for r in s["table"]["rows"]),
               lambda j: j["exact"], VALUES, command="alone"),
        *(f for m in ORDER_METHODS for f in method_figures(m)),
        Figure("NCCL's pick in the bucket, its time", readout("cost"),
               lambda j: j["nccl"]["time_us"] * 1e-6, "time", "NCCL's pick", command="inside"),
        Figure("its channels", readout("bucket", after("in ")), lambda j: j["nccl"]["ring"][
            "channels"] if j["nccl"]["algorithm"] == "Ring" else None, "count",
            command="inside"),
    ),
    draws={"gpus": lambda rng: rng.choice([2, 3, 4, 8, 16, 64]),
           "seed": lambda rng: rng.randint(0, 1000)},
)  # fmt: skip


# ---- innetwork_bandwidth: in-network reduction (page 9) and `nccl` ------------------------------

ACROSS = ("Ring", "NVLSTree", "CollNetDirect", "NVLS")
NCCL_ROW = r"\d+(?= +(?:Ring|Tree|NVLS|NVLSTree|CollNetDirect|CollNetChain|PAT) )"  # a size's row


def innetwork_argv(p: dict) -> dict[str, list[str]]:
    nbytes, g = int(p["size_mb"] * MIB), p["gpus"]
    card = [*flag("--nic-gbps", 400), *flag("--gpu", p["gpu"]), *flag("--bytes", nbytes)]
    one = ["nccl", *flag("--gpus", g), *flag("--gpus-per-node", g), *flag("--nics-per-node", g)]
    many = [
        "nccl",
        *flag("--gpus", 8 * p["servers"]),
        *flag("--gpus-per-node", 8),
        *flag("--nics-per-node", 8),
        "--in-network-reduction",
    ]
    return {
        "Ring": [*one, *card, *flag("--algorithm", "Ring")],
        "NVLS": [*one, *card, *flag("--algorithm", "NVLS")],
    } | {f"across {a}": [*many, *card, *flag("--algorithm", a)] for a in ACROSS}  # fmt: skip


def fitted(key: str, scale: float):
    return lambda j: j["rows"][0][key] * scale


def innetwork_figures(a: str, key: str, command: str) -> tuple[Figure, ...]:
    time = readout(key, after("busbw, ")) if command in ("Ring", "NVLS") else readout(key)
    busbw = readout(key) if command in ("Ring", "NVLS") else readout(key, after("("))
    return (
        Figure(f"{command}: time", time, fitted("time_us", 1e-6), "time",
               table_cell(NCCL_ROW, 2, "us"), command=command),
        Figure(f"{command}: busbw", busbw, fitted("busbw_GBps", GB), "rate",
               table_cell(NCCL_ROW, 3, "GB/s"), command=command),
    )  # fmt: skip


INNETWORK = Door(
    "innetwork_bandwidth",
    innetwork_argv,
    (
        *innetwork_figures("Ring", "ring_nccl", "Ring"),
        *innetwork_figures("NVLS", "nvls_nccl", "NVLS"),
        *(f for a in ACROSS for f in innetwork_figures(a, f"across_{a.lower()}", f"across {a}")),
    ),
    draws={"servers": lambda rng: rng.choice([2, 4, 8, 64, 512])},
)  # fmt: skip


# ---- the log panel of your cluster (page 10) and `nccl-tests`, `nccl-debug` ----------------------

_LOGS = Path(tempfile.mkdtemp(prefix="doors-"))  # the logs the page holds, as files for the CLI


def log_file(text: str) -> str:
    """A file holding the page's log (the CLI reads a file), one per text."""
    path = _LOGS / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.log"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return str(path)


def logs_argv(p: dict) -> dict[str, list[str]]:
    log = log_file(p["log"])
    card = [*flag("--gpu", p["gpu"]), *flag("--nic-gbps", repr(float(p["nic_gbps"])))]
    return {"tests": ["nccl-tests", log, *card], "debug": ["nccl-debug", log, *card]}


def fit(key: str, scale: float = 1.0, part: str = "fit"):
    """A fit's figure; None where the log has no rows to fit (the page says "—")."""
    return lambda j: j[part][key] * scale if j.get(part) else None


def log_text(key: str, label: str, stop: str | None = None):
    """The log panel's readout `key` from `label` on (up to `stop`)."""

    def text(state: dict) -> str:
        s = state["readouts"][key]
        if label not in s:  # no log, or no such lines in it: no figure to read
            return ""
        s = after(label)(s)
        return s.split(stop)[0] if stop else s

    return text


def row(i: int, key: str, scale: float, part: str = ""):
    """Row i of the log's rows (or of its `part`, the prediction's); None with no rows."""
    return lambda j: (j[part] if part else j)["rows"][i][key] * scale if j["rows"] else None


def debug(key: str):
    return lambda j: j[key] if j.get("nccl_version") else None


FIT_LINE = "Alpha-beta line fitted to"
NCCL_FIT = "NCCL's regimes fitted to"
LOGS = Door(
    "cluster",
    logs_argv,
    (
        Figure("alpha-beta latency", log_text("log_fit", "latency", NCCL_FIT),
               fit("latency_us", 1e-6), "time", command="tests"),
        Figure("alpha-beta algbw", log_text("log_fit", "algbw", NCCL_FIT), fit("algbw_GBps", GB),
               "rate", command="tests"),
        Figure("alpha-beta busbw", log_text("log_fit", "busbw", NCCL_FIT), fit("busbw_GBps", GB),
               "rate", command="tests"),
        Figure("alpha-beta rms", log_text("log_fit", "rms relative error", NCCL_FIT),
               fit("rms_rel_error"), "share", "alpha-beta fit: rms", command="tests"),
        Figure("NCCL fit rms", log_text("log_fit", NCCL_FIT), fit("rms_rel_error", part="nccl_fit"),
               "share", "NCCL model fit: rms", command="tests"),
        Figure("NCCL fit busbw", log_text("log_fit", "likely regimes"),
               fit("busbw_GBps", GB, "nccl_fit"), "rate", "fitted busbw", command="tests"),
        Figure("NCCL fit latency", log_text("log_fit", "at the largest size"),
               fit("latency_us", 1e-6, "nccl_fit"), "time", "fitted busbw", human_index=0,
               command="tests"),
        Figure("measured busbw, first row", cell("measured busbw (GB/s)", 0, "GB/s", "busbw"),
               row(0, "busbw_GBps", GB), "rate", command="tests"),
        Figure("measured busbw, last row shown", cell("measured busbw (GB/s)", 5, "GB/s", "busbw"),
               row(5, "busbw_GBps", GB), "rate", command="tests"),
        Figure("NCCL predicts, row 6", cell("predicted (GB/s)", 5, "GB/s", "busbw"),
               row(5, "busbw_GBps", GB, "prediction"), "rate",
               command="tests"),
        Figure("ranks", log_text("log_debug", ";"), debug("ranks"), "count", command="debug"),
        Figure("servers", log_text("log_debug", " on "), debug("nodes"), "count",
               command="debug"),
        Figure("channels", log_text("log_debug", " of "), debug("coll_channels"), "count",
               index=1, command="debug"),
    ),
    draws={"example": lambda rng: rng.choice(["nvls-1node", "ib-2nodes", "ring-1node",
                                               "debug-2nodes"])},
    id="cluster/log",
    vary=("example",),
)  # fmt: skip


# ---- nccl_line: one all_reduce_perf line (page 4) and `busbw`, `nccl-tests` ----------------------


def line_argv(p: dict) -> dict[str, list[str]]:
    """The line's size and out-of-place time (its 1st and 6th columns, as nccl-tests prints
    them) to `busbw`; the line itself, as a log, to `nccl-tests`."""
    cells = p["line"].split()
    return {
        "busbw": ["busbw", *flag("--gpus", p["gpus"]), *flag("--bytes", cells[0]),
                  *flag("--time-us", cells[5]), *flag("--collective", p["collective"])],
    } | ({  # nccl-tests reads all_reduce_perf's lines: another test's line is not its question
        "tests": ["nccl-tests", log_file(p["line"] + "\n"), *flag("--gpus", p["gpus"])],
    } if p["collective"] == "allreduce" else {})  # fmt: skip


def first_row(key: str, scale: float, part: str = ""):
    return lambda j: (j["rows"][0][part] if part else j["rows"][0])[key] * scale


NCCL_LINE = Door(
    "nccl_line",
    line_argv,
    (
        Figure("algbw = S / t", readout("algbw"), lambda j: j["algbw_GBps"] * GB, "rate",
               "algbw", command="busbw"),
        Figure("busbw", readout("busbw"), lambda j: j["busbw_GBps"] * GB, "rate", "busbw",
               command="busbw"),
        Figure("out-of-place time", readout("oop_time"), first_row("time_us", 1e-6), "time",
               command="tests"),
        Figure("out-of-place algbw", readout("oop_algbw"), first_row("algbw_GBps", GB), "rate",
               command="tests"),
        Figure("out-of-place busbw, the line's column", readout("oop_busbw"),
               first_row("busbw_GBps", GB), "rate", command="tests"),
        # nccl-tests' view prints the busbw of the GPUs given (--gpus), as the page's readout
        Figure("busbw for the GPUs given", readout("busbw"),
               lambda j: j["nccl_fit"]["rows"][0]["measured_busbw_GBps"] * GB, "rate",
               table_cell(r"\d+", 0, "GB/s"), command="tests"),
        Figure("in-place time", readout("ip_time"), first_row("time_us", 1e-6, "in_place"),
               "time", command="tests"),
        Figure("in-place busbw", readout("ip_busbw"), first_row("busbw_GBps", GB, "in_place"),
               "rate", command="tests"),
    ),
    vary=("gpus", "collective", "link_gbps"),
    draws={"gpus": lambda rng: rng.randint(1, 4096),
           "collective": lambda rng: rng.choice(["allreduce", "allreduce", "allgather", "reduce"])},
)  # fmt: skip


# ---- nccl_topology: your server as NCCL's search sees it (page 10) and `topology` ---------------

NCCL_TOPOLOGY = Door(
    "nccl_topology",
    # the page's own file is held empty (a preset's text is what `topology PRESET` reads)
    lambda p: ["topology", p["preset"], *flag("--servers", p["servers"])],
    (
        Figure("channels NCCL runs", readout("channels"), lambda j: j["coll_channels"], "count"),
        Figure("the ring search's channels", readout("found"),
               lambda j: j["graphs"]["ring"]["nChannels"], "count"),
        Figure("its bandwidth per channel", readout("found", after(" at ")),
               lambda j: j["graphs"]["ring"]["bwIntra"] * GB, "rate"),
    ),
    draws={"file": one(""), "servers": one(1), "channel": lambda rng: rng.randint(0, 15)},
    vary=("preset", "channel", "draw"),
)  # fmt: skip


DOORS = {d.name: d for d in (
    BUSBW, CLUSTER, DDP, DDP_SWEEP, SHARD, LATENCY, BUSBW_CURVE, SERVERS, SCALING, SENDS, STEPS,
    ring_door("ring_reduce_scatter", 0), ring_door("ring_all_gather", 1), NAIVE, TREE,
    SERVER_STEPPER, ORDERS, INNETWORK, LOGS, NCCL_LINE, NCCL_TOPOLOGY,
)}  # fmt: skip

# Widgets with no command of their own, and why
NO_COMMAND = {
    "exercise": "an exercise's own check; `exercises export` writes the same problems as a bank "
    "(tests/core/exercises hold the bank to the page's answers)",
    "exercise_sheet": "the teacher's sheet; `exercises export` writes its banks",
    "innetwork_stepper": "the switch's reduction (NVLS) message by message: `simulate` has no "
    "NVLS method",
    "shard_stepper": "ZeRO's reduce-scatter, update and all-gather on real vectors: `simulate` "
    "runs all-reduces only, and `shard` gives the costs, not the steps",
}


def rng_for(name: str) -> random.Random:
    """Each widget's draws from its own fixed seed: a failure is the same state on every run."""
    return random.Random(f"doors:{name}")
