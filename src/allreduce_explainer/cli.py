"""The command line: `allreduce-explainer simulate|cost|busbw ...`, tables or --json.

Bad arguments end with status 2 and one line naming the argument, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from . import api, calculator, fit, hardware
from .errors import ParamError
from .latency_model import NCCL_NETWORK_HOP_US, NCCL_NVLINK_HOP_US, NCCL_VERSION
from .topology import H100_NVLINK_GBps, NIC_400G_GBps

PROG = "allreduce-explainer"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, status 2
        self.exit(2, f"{PROG}: error: {message}\n")


def _number(text: str) -> float:
    """A number in any notation Python reads (14e9, 1.5, 8)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _whole(text: str) -> int:
    value = _number(text)
    if value != int(value):
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return int(value)


def _links(
    p: argparse.ArgumentParser, intra_latency: float = 0.0, inter_latency: float = 0.0
) -> None:
    p.add_argument(
        "--intra-bw",
        type=_number,
        default=H100_NVLINK_GBps,
        metavar="GBPS",
        help="link rate inside a server, GB/s per direction "
        f"(default {H100_NVLINK_GBps:g}: H100 SXM NVLink 4)",
    )
    p.add_argument(
        "--inter-bw",
        type=_number,
        default=NIC_400G_GBps,
        metavar="GBPS",
        help="network card per GPU, GB/s per direction "
        f"(default {NIC_400G_GBps:g}: a 400 Gb/s card)",
    )
    p.add_argument(
        "--intra-latency",
        type=_number,
        default=intra_latency,
        metavar="US",
        help=f"latency per message inside a server, us (default {intra_latency:g}"
        + ("" if intra_latency else ": bandwidth only")
        + f"; NCCL {NCCL_VERSION}'s Simple ring charges {NCCL_NVLINK_HOP_US:g} per NVLink "
        "hop)",
    )
    p.add_argument(
        "--inter-latency",
        type=_number,
        default=inter_latency,
        metavar="US",
        help=f"latency per message between servers, us (default {inter_latency:g}; "
        f"NCCL charges {NCCL_NETWORK_HOP_US:g})",
    )


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="All-reduce simulated on real vectors, and its cost.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("simulate", help="run an all-reduce message by message on real vectors")
    s.add_argument("algorithm", choices=api.ALGORITHMS)
    s.add_argument("--gpus", type=_whole, default=4, metavar="N", help="GPUs (default 4)")
    s.add_argument(
        "--gpus-per-node",
        type=_whole,
        metavar="G",
        help="GPUs per server (default: all GPUs in one server)",
    )
    s.add_argument(
        "--length",
        type=_whole,
        metavar="L",
        help="elements per gradient (default 2N; taken from --values if given)",
    )
    s.add_argument(
        "--dtype",
        choices=("int", "fp32", "bf16"),
        default="int",
        help="element type: int (int32, exact), fp32 or bf16 (default int)",
    )
    s.add_argument("--seed", type=_whole, default=0, help="seed of the random gradients")
    s.add_argument(
        "--values",
        metavar="FILE|-",
        help="JSON array of N arrays, the per-GPU gradients (- reads stdin)",
    )
    s.add_argument("--chunks", type=_whole, help="tree only: pipeline chunks per tree (default 2)")
    s.add_argument("--trace", action="store_true", help="include every step's messages and buffers")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    _links(s)

    c = sub.add_parser("cost", help="closed-form alpha-beta time of one all-reduce")
    c.add_argument("algorithm", choices=api.ALGORITHMS)
    c.add_argument("--gpus", type=_whole, required=True, metavar="N")
    c.add_argument(
        "--gpus-per-node",
        type=_whole,
        metavar="G",
        help="GPUs per server (default: all GPUs in one server)",
    )
    c.add_argument(
        "--bytes",
        type=_number,
        required=True,
        metavar="S",
        help="gradient size in bytes per GPU (14e9 = a 7B model in BF16)",
    )
    c.add_argument(
        "--chunks",
        type=_whole,
        help="tree only: pipeline chunks per tree (default: 512 KiB each, as NCCL)",
    )
    c.add_argument("--json", action="store_true", help="print one JSON object")
    _links(c)

    b = sub.add_parser("busbw", help="nccl-tests' algbw and busbw from one measured time")
    b.add_argument("--gpus", type=_whole, required=True, metavar="N")
    b.add_argument(
        "--bytes",
        type=_number,
        required=True,
        metavar="S",
        help="size as nccl-tests counts it (the total for reduce-scatter, all-gather)",
    )
    b.add_argument("--time-us", type=_number, required=True, metavar="T")
    b.add_argument(
        "--collective",
        default="allreduce",
        choices=("allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "reduce"),
    )
    b.add_argument("--json", action="store_true", help="print one JSON object")
    _ddp_parsers(sub)
    _cluster_parsers(sub)
    return p


def _bucket_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bucket-cap-mb",
        type=_number,
        metavar="X",
        help="bucket cap in MiB (2^20 bytes), as DDP's bucket_cap_mb; unset: PyTorch's "
        "default of 25 with a first bucket of 1",
    )
    p.add_argument(
        "--first-bucket-mb",
        type=_number,
        metavar="Y",
        help="cap of the first bucket in MiB (default 1 without --bucket-cap-mb, else the cap)",
    )


def _ddp_parsers(sub) -> None:
    k = sub.add_parser(
        "buckets",
        help="PyTorch DDP's steady-state gradient buckets for given parameter sizes",
        description="Gradients become ready in reverse model order; buckets are filled in that "
        "order and printed in the order they are all-reduced, as lists of parameter indices "
        "numbered in model order.",
    )
    k.add_argument(
        "--param-bytes",
        required=True,
        metavar="B1,B2,...",
        help="parameter sizes in BYTES, in model order, separated by commas",
    )
    _bucket_flags(k)
    k.add_argument("--json", action="store_true", help="print one JSON object")

    d = sub.add_parser(
        "ddp",
        help="a real model under DDP: buckets, backward pass and exposed communication",
    )
    d.add_argument(
        "--model",
        required=True,
        metavar="NAME",
        help=f"one of {', '.join(api.models.MODELS)}; any case or spelling (llama-3-8b), or an "
        "unambiguous prefix",
    )
    d.add_argument("--gpus", type=_whole, required=True, metavar="N")
    d.add_argument(
        "--gpus-per-node",
        type=_whole,
        metavar="G",
        help="GPUs per server (default: all GPUs in one server)",
    )
    _bucket_flags(d)
    d.add_argument("--batch", type=_whole, metavar="B", help="samples per GPU (default: per model)")
    d.add_argument(
        "--mfu",
        type=_number,
        default=calculator.DEFAULT_MFU,
        help=f"share of peak FLOP/s achieved (default {calculator.DEFAULT_MFU:g}, an assumption)",
    )
    d.add_argument(
        "--peak-tflops",
        type=_number,
        default=hardware.H100_SXM.peak_bf16_tflops,
        metavar="T",
        help=f"GPU peak, TFLOP/s (default {hardware.H100_SXM.peak_bf16_tflops:g}: "
        "H100 SXM dense BF16)",
    )
    d.add_argument(
        "--grad-bytes",
        type=_whole,
        default=calculator.GRAD_BYTES["fp32"],
        choices=sorted(calculator.GRAD_BYTES.values()),
        help="bytes per gradient element: 4 (FP32, default) or 2 (BF16)",
    )
    d.add_argument(
        "--sweep", action="store_true", help="also sweep the bucket cap from 0.1 MiB to the model"
    )
    d.add_argument("--json", action="store_true", help="print one JSON object")
    _links(d, NCCL_NVLINK_HOP_US, NCCL_NETWORK_HOP_US)


def _cluster_parsers(sub) -> None:
    """Stage 8: calc, presets, nccl-tests."""
    c = sub.add_parser(
        "calc",
        help="all-reduce time per step, bus bandwidth and share of a step for a model on a cluster",
        description="Defaults are stage 1's case: a BF16 gradient, H100 SXM servers of 8, one "
        "400 Gb/s card per GPU, the single ring, bandwidth only (no latency).",
    )
    which = c.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--model",
        metavar="NAME",
        help=f"one of {', '.join(calculator.PRESET_MODELS)} (any case or spelling, or a prefix)",
    )
    which.add_argument(
        "--params",
        type=_number,
        metavar="P",
        help="a custom parameter count (7e9): a uniform stack of transformer layers",
    )
    c.add_argument("--gpus", type=_whole, required=True, metavar="N")
    c.add_argument(
        "--gpus-per-node", type=_whole, metavar="G", help="GPUs per server (default: the GPU's, 8)"
    )
    c.add_argument(
        "--gpu",
        default="H100 SXM",
        metavar="NAME",
        help="A100 SXM, H100 SXM, H200 SXM, B200 or MI300X (any case, or a prefix: h100)",
    )
    c.add_argument(
        "--nic-gbps",
        type=_number,
        default=hardware.NIC_400G_Gbps,
        metavar="R",
        help="network card per GPU, Gb/s on the wire "
        f"(default {hardware.NIC_400G_Gbps:g} = {hardware.NIC_400G['GBps']:g} GB/s)",
    )
    c.add_argument("--algorithm", choices=calculator.ALGORITHMS, default="ring")
    c.add_argument("--grad-dtype", choices=tuple(calculator.GRAD_BYTES), default="bf16")
    c.add_argument(
        "--tokens-per-gpu",
        type=_number,
        default=calculator.DEFAULT_TOKENS,
        metavar="T",
        help=f"tokens per GPU per step (default {calculator.DEFAULT_TOKENS:,}, an assumption)",
    )
    c.add_argument(
        "--mfu",
        type=_number,
        default=calculator.DEFAULT_MFU,
        metavar="U",
        help=f"share of peak achieved (default {calculator.DEFAULT_MFU:g}; Llama 3: 0.38-0.43)",
    )
    c.add_argument(
        "--intra-latency",
        type=_number,
        default=0.0,
        metavar="US",
        help="latency per message inside a server, us "
        f"(default 0; NCCL charges {NCCL_NVLINK_HOP_US:g})",
    )
    c.add_argument(
        "--inter-latency",
        type=_number,
        default=0.0,
        metavar="US",
        help="latency per message between servers, us "
        f"(default 0; NCCL charges {NCCL_NETWORK_HOP_US:g})",
    )
    c.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("presets", help="the calculator's models, GPUs and network cards")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    n = sub.add_parser(
        "nccl-tests",
        help="read all_reduce_perf output and fit latency and bus bandwidth to it",
    )
    n.add_argument(
        "file",
        metavar="FILE|-",
        help=f"the output (- reads stdin); at most {fit.MAX_LOG_BYTES / 1e6:g} MB",
    )
    n.add_argument(
        "--gpus",
        type=_whole,
        metavar="N",
        help="GPUs in the run (default: counted from the '#  Rank' lines)",
    )
    n.add_argument("--json", action="store_true", help="print one JSON object")


ARGUMENT_OF = {  # ParamError field -> the flag that set it
    "gpus": "--gpus",
    "gpus_per_node": "--gpus-per-node",
    "length": "--length",
    "dtype": "--dtype",
    "seed": "--seed",
    "values": "--values",
    "bytes": "--bytes",
    "intra_bw": "--intra-bw",
    "inter_bw": "--inter-bw",
    "intra_latency": "--intra-latency",
    "inter_latency": "--inter-latency",
    "chunks": "--chunks",
    "time_us": "--time-us",
    "collective": "--collective",
    "algorithm": "algorithm",
    "param_bytes": "--param-bytes",
    "bucket_cap_mb": "--bucket-cap-mb",
    "first_bucket_mb": "--first-bucket-mb",
    "model": "--model",
    "batch": "--batch",
    "mfu": "--mfu",
    "peak_tflops": "--peak-tflops",
    "grad_bytes": "--grad-bytes",
    "params": "--params",
    "gpu": "--gpu",
    "nic_gbps": "--nic-gbps",
    "grad_dtype": "--grad-dtype",
    "tokens_per_gpu": "--tokens-per-gpu",
    "intra_latency_us": "--intra-latency",
    "inter_latency_us": "--inter-latency",
    "log": "FILE",
}


def _link_args(a) -> dict:
    return {
        "intra_bw": a.intra_bw,
        "inter_bw": a.inter_bw,
        "intra_latency": a.intra_latency,
        "inter_latency": a.inter_latency,
    }


def _read_values(source: str):
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        raise ParamError("values", f"cannot read {source}: {e.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise ParamError("values", f"not valid JSON ({e.msg}, line {e.lineno})") from None


def run(a) -> dict:
    if a.command == "simulate":
        values = _read_values(a.values) if a.values else None
        return api.simulate(
            a.algorithm,
            a.gpus,
            a.gpus_per_node,
            a.length,
            a.dtype,
            a.seed,
            values,
            a.trace,
            a.chunks,
            **_link_args(a),
        )
    if a.command == "cost":
        return api.estimate(
            a.algorithm, a.gpus, a.bytes, a.gpus_per_node, a.chunks, **_link_args(a)
        )
    if a.command == "buckets":
        return api.buckets(a.param_bytes, a.bucket_cap_mb, a.first_bucket_mb)
    if a.command == "ddp":
        return api.ddp(
            a.model,
            a.gpus,
            a.gpus_per_node,
            a.bucket_cap_mb,
            a.first_bucket_mb,
            a.batch,
            a.mfu,
            a.peak_tflops,
            a.grad_bytes,
            a.sweep,
            **_link_args(a),
        )
    if a.command == "calc":
        return api.calc(
            a.model,
            a.params,
            grad_dtype=a.grad_dtype,
            algorithm=a.algorithm,
            tokens_per_gpu=a.tokens_per_gpu,
            mfu=a.mfu,
            gpu=a.gpu,
            gpus=a.gpus,
            gpus_per_node=a.gpus_per_node,
            nic_Gbps=a.nic_gbps,
            intra_latency_us=a.intra_latency,
            inter_latency_us=a.inter_latency,
        )
    if a.command == "presets":
        return api.presets()
    if a.command == "nccl-tests":
        return api.nccl_tests(_read_log(a.file), a.gpus)
    return api.busbw(a.gpus, a.bytes, a.time_us, a.collective)


def _read_log(source: str) -> str:
    """At most fit.MAX_LOG_BYTES and one byte is read: enough to refuse a longer log unread."""
    limit = fit.MAX_LOG_BYTES + 1
    try:
        if source == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with open(source, "rb") as f:
                data = f.read(limit)
    except OSError as e:
        raise ParamError("log", f"cannot read {source}: {e.strerror}") from None
    if len(data) >= limit:
        raise ParamError("log", f"is larger than {fit.MAX_LOG_TEXT}: keep the runs you need")
    return data.decode("utf-8", "replace")


def table(result: dict) -> str:
    """A readable two-column table of the scalar results (lists are summarised)."""
    rows = []
    for key, value in result.items():
        if key == "trace":
            continue
        if isinstance(value, list):
            value = value if len(str(value)) <= 60 else f"[{len(value)} items]"
        elif isinstance(value, float):
            value = f"{value:.6g}"
        rows.append((key, str(value)))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    a = p.parse_args(argv)
    try:
        result = run(a)
    except ParamError as e:
        p.exit(2, f"{PROG}: error: argument {ARGUMENT_OF.get(e.field, e.field)}: {e.message}\n")
    print(json.dumps(result) if a.json else table(result))
    return 0
