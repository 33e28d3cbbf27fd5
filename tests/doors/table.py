"""The one table from the page's widgets to the command line: for each widget, the command that
asks its question, how its parameters become that command's flags, and the figures both print.

Every widget of the registry is either a `Door` here or named in NO_COMMAND with the reason it
has none (test_doors.py holds the registry to that). A parameter of a widget that the command
line cannot express is held at one value by `draws`, with a comment saying so.
"""

from __future__ import annotations

import random

from .doors import Door, Figure

GB, MIB = 1e9, 2.0**20


def after(label: str):
    """A readout's text from `label` on: the figure that follows a word ("tree 0.07 s")."""

    def text(s: str) -> str:
        assert label in s, f"no {label!r} in {s!r}"
        return s[s.index(label) + len(label) :]

    return text


def readout(key: str, then=None):
    """The state's readout `key` (from `then`'s label on, if given)."""
    return lambda state: (then or str)(state["readouts"][key])


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
)


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
    return [
        "calc",
        *model,
        *flag("--gpus", p["gpus"]),
        *flag("--gpus-per-node", p["gpus_per_node"]),
        *flag("--gpu", p["gpu"]),
        *flag("--nic-gbps", repr(float(p["nic_gbps"]))),
        # the page drives at most a server's GPUs from one process; the CLI refuses more
        *flag("--gpus-per-process", min(p["gpus_per_process"], p["gpus_per_node"])),
        *flag("--algorithm", p["algorithm"]),
        *flag("--nccl-version", p["nccl_version"]),
        *flag("--grad-dtype", p["grad_dtype"]),
        *flag("--tokens-per-gpu", repr(float(p["tokens_per_gpu"]))),
        *flag("--mfu", repr(float(p["mfu"]))),
        *flag("--intra-latency", repr(float(p["intra_latency_us"]))),
        *flag("--inter-latency", repr(float(p["inter_latency_us"]))),
    ]


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
               "time", "NCCL's own estimate"),
        Figure("model states", readout("memory"), lambda j: j["memory"]["bytes_per_gpu"],
               "bytes", "model states per GPU"),
        Figure("sharded", readout("memory", after("GPU")),
               lambda j: None if j["memory"]["fits"] else j["memory"]["sharded_bytes_per_gpu"],
               "bytes",
               "sharded over the GPUs"),
        *(
            Figure(f"closed form {name}", readout("ideal", after(text)),
                   lambda j, name=name: j["algorithm_times_s"][name], "time",
                   rf"\n{name} +")
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


DOORS = {d.widget: d for d in (BUSBW, CLUSTER)}

# Widgets with no command of their own, and why
NO_COMMAND = {
    "exercise": "an exercise's own check; `exercises export` writes the same problems as a bank",
    "exercise_sheet": "the teacher's sheet; `exercises export` writes its banks",
}


def rng_for(name: str) -> random.Random:
    """Each widget's draws from its own fixed seed: a failure is the same state on every run."""
    return random.Random(f"doors:{name}")
