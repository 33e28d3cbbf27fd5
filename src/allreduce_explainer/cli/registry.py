"""One record per command, in click's shape on argparse: its name, help, the function that
answers it (declared by its spec, params.takes), the flags the command line adds (a file read in
place of the value), and its human view. The parser, the help, the errors, --json and the tests
read COMMANDS; adding a command is one record here and its view.

argparse, not click: the core is standard library only (it runs in Pyodide), and the command line
ships in the same package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .. import api
from ..params import Param
from ..topology import PRESETS
from ..training import memory
from . import files, views

ADAM_TEXT = " + ".join(map(str, memory.BYTES_PER_PARAM.values()))  # 2 + 2 + 12


@dataclass(frozen=True)
class Command:
    name: str  # "calc"; "exercises export" for a command inside a group
    help: str
    function: Callable[..., dict]  # declared by its spec: function.spec
    view: Callable[[dict], str]  # the result as a reader at a terminal reads it
    description: str = ""
    files: dict[str, tuple[Param, Callable]] = field(default_factory=dict)  # flag, reader
    required: tuple[str, ...] = ()  # defaulted in the library, required on the command line
    one_of: tuple[str, ...] = ()  # exactly one of these flags is given
    skip: tuple[str, ...] = ()  # parameters of the spec the command line does not offer
    json: bool = True  # a --json switch
    widget_params: bool = False  # any other --name value goes to `params` (figure)

    @property
    def spec(self) -> dict[str, Param]:
        return self.function.spec

    def flags(self) -> list[Param]:
        """The command line's parameters in the spec's order: each labelled Param but `skip`,
        in its flag's unit, a file's flag in place of the value it reads."""
        out = []
        for p in self.spec.values():
            if p.name in self.files:
                out.append(self.files[p.name][0])
            elif p.label and p.name not in self.skip:
                out.append(p.on_flag())
        return out

    def flag_of(self, name: str) -> str:
        """The flag (or positional argument) that set a ParamError's field."""
        for p in self.flags():
            if p.name == name:
                return p.cli_flag if p.cli_flag.startswith("-") else p.metavar or p.name
        return "--" + name.replace("_", "-")

    def call(self, given: dict) -> dict:
        """The function on the flags' values, each file read into the value it holds."""
        read = {k: r(given[k]) for k, (_, r) in self.files.items() if given.get(k) is not None}
        return self.function(**(given | read))


LOG = {"log": (files.LOG_FLAG, files.read_log)}

COMMANDS = (
    Command("simulate", "run an all-reduce message by message on real vectors", api.simulate,
            views.simulate,
            files={"values": (files.values_flag("gradients"), files.read_values)}),
    Command("cost", "closed-form alpha-beta time of one all-reduce", api.estimate, views.cost),
    Command("busbw", "nccl-tests' algbw and busbw from one measured time", api.busbw,
            views.busbw),
    Command("buckets", "PyTorch DDP's steady-state gradient buckets for given parameter sizes",
            api.buckets, views.buckets,
            description="Gradients become ready in reverse model order; buckets are filled in "
            "that order and printed in the order they are all-reduced, as lists of parameter "
            "indices numbered in model order."),
    Command("ddp", "a real model under DDP: buckets, backward pass and exposed communication",
            api.ddp, views.ddp, required=("model", "gpus"),
            # timed by the fitted time of NCCL's choice, which has its own latencies and NVLink
            # rate: the whiteboard model's (the library's timing="lock-step") are not offered
            skip=("intra_bw", "intra_latency", "inter_latency")),
    Command("calc", "all-reduce time per step, bus bandwidth and share of a step for a model "
            "on a cluster", api.calc, views.calc, required=("gpus",), one_of=("model", "params"),
            description="Defaults: a BF16 gradient, H100 SXM servers of 8, one "
            f"{api.NIC_GBPS.default:g} Gb/s card per GPU, timed as NCCL would run it "
            f"(--algorithm {api.CALC['algorithm'].default}: NCCL's choice and its fitted time); "
            "--algorithm ring gives the single ring of the first page, bandwidth only (no "
            "latency)."),
    Command("presets", "the calculator's models, GPUs and network cards", api.presets,
            views.presets),
    Command("nccl-tests", "read all_reduce_perf output and fit latency and bus bandwidth to it",
            api.nccl_tests, views.nccl_tests, files=LOG),
    Command("nccl-debug", "read NCCL_DEBUG=INFO output: version, servers, rings, trees, "
            "network, findings", api.nccl_debug, views.nccl_debug, files=LOG,
            description="Reads what NCCL prints at start-up under NCCL_DEBUG=INFO (and the "
            "tuning lines under NCCL_DEBUG_SUBSYS=INIT,TUNING), alone or mixed with "
            "all_reduce_perf output: nccl_version, ranks, nodes, gpus_per_node, network, nvls, "
            "collnet, channels [{channel, ring, tree}], calls [{collective, bytes, algorithm, "
            "protocol}], findings [{code, message, evidence}] and, with rows, each row's "
            "algorithm and protocol."),
    Command("topology", "NCCL's topology search on a server's topology file: its channels, "
            "rings and trees", api.nccl_topology, views.topology,
            files={"topology": (files.TOPOLOGY_FLAG, files.read_topology)},
            description="Runs NCCL 2.30.7's search (src/graph/search.cc, ported) on a file "
            "NCCL_TOPO_DUMP_FILE wrote, on the system a log's NCCL_DEBUG_SUBSYS=GRAPH lines "
            "print (then `log` holds the log's own search next to the port's), or on a "
            "preset (" + ", ".join(PRESETS) + "), for a "
            "job on --servers such servers: graphs {ring, tree, nvls} each with pattern, "
            "nChannels, bwIntra, bwInter (GB/s per channel), typeIntra, typeInter, "
            "sameChannels and its channels; channels [{channel, ring, tree}] as nccl-debug "
            "gives them, one per channel NCCL runs after its duplication."),
    Command("shard", "memory and communication per GPU of DDP, ZeRO-1, ZeRO-2, ZeRO-3/FSDP "
            "and HSDP", api.shard, views.shard, skip=("intra_latency_us", "inter_latency_us"),
            description=f"Mixed-precision Adam: {ADAM_TEXT} bytes per parameter (ZeRO paper). "
            "memory_bytes_per_gpu is an object {params, grads, optimizer, total} in bytes; "
            "comm_bytes_per_gpu the bytes each GPU sends per step; comm_s the fitted time of "
            "NCCL's choice (--comm-model ring: a single flat ring); "
            "overlap.zero3/hsdp.critical_tokens_per_gpu the tokens per GPU from which the "
            "collectives hide behind compute; fits compares the model states (no activations) "
            "with the GPU's memory in GiB."),
    Command("orders", "the same sum in each method's order: serial, NCCL's ring and trees, "
            "NVLS", api.orders, views.orders,
            files={"values": (files.values_flag("values", "; else drawn from --seed"),
                              files.read_values)},
            description="Each method's result per element, whether every GPU holds the same "
            "bits, and its distance in ulps from the exactly rounded sum (exact)."),
    Command("figure", "write a widget's chart as SVG or PNG, in the site's theme (needs the "
            "[figures] extra and a Chrome or Chromium)", files.figure, views.figure,
            json=False, widget_params=True,
            description="Any other --name value is the widget's parameter (e.g. --gpus 64); "
            "values are read as JSON when they can be (numbers, true, lists), else as text."),
    Command("nccl", f"NCCL {api.NCCL_VERSION}'s choice of algorithm and protocol, its estimate "
            "and the fitted time", api.nccl_sweep, views.nccl, one_of=("bytes", "sizes"),
            description="Every (algorithm, protocol) NCCL weighs for a call, the one it picks, "
            "NCCL's estimate (the time its tuning code computes and picks on) and the fitted "
            "time (what published all_reduce_perf runs of that size measure: the performance "
            "layer)."),
    Command("exercises export", "a question bank: Moodle XML, QTI (a .zip Canvas imports), "
            "GIFT or CSV", files.export_bank, views.export, json=False,
            description="COUNT problems of each kind, seeds SEED, SEED+1, ...; each with its "
            "answer and tolerance as the site checks them, the worked solution as feedback and "
            "its link."),
)  # fmt: skip

GROUPS = {"exercises": "the generated exercises, for course platforms"}  # a command's group
BY_NAME = {c.name: c for c in COMMANDS}
