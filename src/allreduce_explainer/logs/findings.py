"""What a debug log and its all_reduce_perf rows say about a run, in teaching terms: each finding
a code, a sentence and the log line it rests on (the evidence), so a reader can check it.

The findings: traffic fell back to sockets; GPUDirect RDMA off; fewer channels than cards;
NVLS off (on Hopper, a lost speed-up); CollNet off across servers; the algorithms or protocols
NCCL_ALGO / NCCL_PROTO left NCCL; lines too long to read; a UTF-16 log; busbw above the cards'
rate (NVLS or the two-server tree send about S per GPU where busbw counts a ring's 2(n-1)/n x S);
one process driving every GPU (`-g 8`), which sets a latency floor; an old release's missing
algorithms (NVLS and CollNet then absent, not off); and the rows where NCCL's model picks another
algorithm than NCCL's tuning lines say it ran.
"""

from __future__ import annotations

import re

from .debug import MAX_LINE, MAXCHANNELS, is_hopper

NGPUS = re.compile(r"#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)")


def _f(code: str, message: str, evidence: str | None) -> dict:
    return {"code": code, "message": message, "evidence": evidence}


def from_debug(d: dict) -> list[dict]:
    """Findings from the NCCL_DEBUG=INFO lines alone."""
    out = []
    net, nodes = d["network"], d["nodes"]
    multi = nodes is None or nodes > 1
    if multi and (net["transport"] == "Socket" or "Socket" in net["used_between_servers"]):
        out.append(
            _f(
                "sockets",
                "Traffic between servers fell back to TCP sockets (NET/Socket): NCCL found no "
                "RDMA card (InfiniBand, RoCE) or network plugin it could use, so every byte goes "
                "through the kernel's TCP stack and the bus bandwidth stays at a few GB/s. Check "
                "NCCL_IB_DISABLE, NCCL_NET, the plugin's library and that the cards are visible "
                "inside the container.",
                net["evidence"],
            )
        )
    if net["gpudirect_rdma"] is False:
        out.append(
            _f(
                "gdr_off",
                "GPUDirect RDMA is off: the card cannot read the GPU's memory directly, so "
                "every message is copied through host memory first (load nvidia_peermem, or "
                "check NCCL_NET_GDR_LEVEL).",
                net["gdr_evidence"],
            )
        )
    cards, ch = net["cards"], d["coll_channels"]
    if nodes and nodes > 1 and cards and ch and ch < cards:
        out.append(
            _f(
                "few_channels",
                f"NCCL built {ch} channels for {cards} network cards per server: a channel's "
                "ring leaves the server through one card, so with fewer channels than cards "
                f"some cards carry no ring traffic ({cards - ch} of {cards} at most idle).",
                d["channels_evidence"],
            )
        )
    nvls = d["nvls"]
    if nvls["state"] == "off":
        hopper = is_hopper(d.get("device"))
        out.append(
            _f(
                "nvls_off",
                (
                    "NVLS is off on Hopper GPUs: the NVSwitch can add the GPUs' data itself "
                    "(NVLink SHARP), which lets an all-reduce send about half the bytes a ring "
                    "sends; without it NCCL uses rings and trees only. Fabric Manager, the "
                    "driver or NCCL_NVLS_ENABLE=0 are the usual causes."
                    if hopper
                    else "NVLS (reduction inside the NVSwitch) is not available: NCCL uses "
                    "rings and trees only. On Hopper or later GPUs with NVSwitch this is a lost "
                    "speed-up (Fabric Manager, the driver or NCCL_NVLS_ENABLE=0)."
                ),
                nvls["evidence"],
            )
        )
    coll = d["collnet"]
    if multi and coll["state"] == "off":
        out.append(
            _f(
                "collnet_off",
                "CollNet is off: no in-network reduction (InfiniBand "
                "SHARP switches) between servers, so the reduction is done by the GPUs over "
                "rings and trees. It needs SHARP switches, the SHARP plugin and "
                "NCCL_COLLNET_ENABLE=1.",
                coll["evidence"],
            )
        )
    out += _forced(d["tuning_env"]) + _unread(d) + _shape(d)
    missing = [a for a in d["available"]["not_yet"] if a != "PAT"]  # PAT: no all-reduce
    if d["nccl_version"] and missing:
        out.append(
            _f(
                "old_version",
                f"NCCL {d['nccl_version']} predates {', '.join(missing)}: this log is explained "
                "with the algorithms that release had.",
                d["version_evidence"],
            )
        )
    return out


def _forced(env: dict) -> list[dict]:
    """NCCL_ALGO / NCCL_PROTO: the rows' algorithms are NCCL's picks among what they leave."""
    if env["algorithms"] is None and env["protocols"] is None:
        return []
    left = [f"the {kind} {', '.join(env[key]) or 'none'}"
            for key, kind in (("algorithms", "algorithm(s)"), ("protocols", "protocol(s)"))
            if env[key] is not None]  # fmt: skip
    said = " and ".join(f"{k}={env[k]}" for k in ("NCCL_ALGO", "NCCL_PROTO") if env[k])
    return [
        _f(
            "tuning_forced",
            f"The environment restricts NCCL ({said or 'its algorithm matrix'}): an all-reduce "
            f"may use only {' and '.join(left)}, so each row names NCCL's choice among "
            "those, not its free choice.",
            env["evidence"][0] if env["evidence"] else None,
        )
    ]


def _shape(d: dict) -> list[dict]:
    """Rings cut by an old release, channels past NCCL's maximum, several communicators."""
    out = []
    cut = d.get("rings_cut")
    if cut:
        ring = next(c for c in d["channels"] if c["ring_truncated"] and c["ring"])
        version = d["nccl_version"] or "(version not printed)"
        said = (
            f"stop at {cut['max_ranks']} of the {cut['ranks']} ranks: their tails are missing"
            if cut["ranks"]
            else f"stop at exactly {cut['max_ranks']} ranks, where such a release cuts: their "
            "tails may be missing, so the rank count is not taken from them"
        )
        out.append(
            _f(
                "rings_cut",
                f"NCCL {version} prints at most {cut['max_ranks']} ranks of a ring, with no mark "
                f"(src/graph/rings.cc before 2.23): {cut['channels']} ring line(s) {said}. Only "
                "a rank's 'comm ... nRanks' line or the '#  Rank' lines give the count.",
                f"channel {ring['channel']}: {' '.join(map(str, ring['ring']))}",
            )
        )
    over = d.get("over_max_channels") or []
    if over:
        out.append(
            _f(
                "channels_over_max",
                f"{len(over)} line(s) name a channel past NCCL's maximum of {MAXCHANNELS} "
                "(MAXCHANNELS, src/include/device.h): no NCCL release builds that many, so "
                "they were not read; the log was edited or is not NCCL's.",
                over[0]["text"],
            )
        )
    comms = d.get("communicators") or []
    if len(comms) > 1:
        each = "; ".join(
            f"{c['ranks']} ranks, {c['coll_channels'] or len(c['channels'])} channels"
            for c in comms
        )
        out.append(
            _f(
                "communicators",
                f"The log holds {len(comms)} communicators ({each}): a training job prints "
                "one block per communicator (data- and tensor-parallel groups each have their "
                f"own). The top-level figures are the one of {d['ranks']} ranks (the largest "
                "that printed rings or trees); each is read on its own under communicators, "
                "not mixed.",
                "; ".join(c["evidence"] or c["comm"] for c in comms[:3]),
            )
        )
    return out


def _unread(d: dict) -> list[dict]:
    """Lines too long to read, and a UTF-16 log read as text."""
    out = []
    long = d["long_lines"]
    if long["count"]:
        first = long["lines"][0]
        out.append(
            _f(
                "long_line",
                f"{long['count']} line(s) of NCCL's were not read: longer than {MAX_LINE:,} "
                f"characters (line {first['line']}: {first['chars']:,}). Cut there, a ring would "
                "name the wrong ranks; NCCL's own lines are shorter, so the log was probably "
                "joined or damaged.",
                first["head"] + " ...",
            )
        )
    if d["encoding"] == "UTF-16":
        out.append(
            _f(
                "utf16",
                "The log is UTF-16 text (as Windows PowerShell's > writes it): it was read as "
                "text, its NUL bytes dropped.",
                None,
            )
        )
    return out


def from_run(run: dict, text: str) -> list[dict]:
    """Findings from the all_reduce_perf rows explained (explain_run's result)."""
    out = []
    nf = run.get("nccl_fit") or {}
    rate = nf.get("line_rate") or {}
    above = rate.get("rows_above") or []
    if above:
        rows = {r["bytes"]: r for r in nf["rows"]}
        top = rows[above[-1]]
        algo = top["algorithm"]  # the regime the fit names at that size
        if algo == "Ring":  # the fit names only what the log allows (explain.allowed)
            text = (
                f"busbw passes the cards' rate ({rate['GBps']:g} GB/s, {rate['basis']}) at "
                f"{len(above)} sizes, and the fit names Ring there, which sends what busbw "
                "counts, 2(n-1)/n x S per GPU: a ring cannot beat its links, so the rate or "
                "the cards given are below what the run used (pass the card's rate as sold "
                "and the cards per server)."
            )
        else:
            why = (
                "NVLS, where the NVSwitch adds the data and each GPU sends about S"
                if algo and algo.startswith("NVLS")
                else "the tree across two servers, where each GPU sends about S over the network"
                if algo == "Tree"
                else "in-network reduction or a tree, which sends about S per GPU"
            )
            text = (
                f"busbw passes the cards' rate ({rate['GBps']:g} GB/s, {rate['basis']}) at "
                f"{len(above)} sizes. busbw assumes a ring, which sends 2(n-1)/n x S per GPU; "
                f"the fit names {algo} here: {why}; so busbw can exceed the link rate "
                "without any link going faster."
            )
        out.append(
            _f(
                "busbw_above_line_rate",
                text,
                f"{top['bytes']} B: busbw {top['measured_busbw_GBps']:.1f} GB/s",
            )
        )
    g = run.get("gpus_per_thread") or 1
    if g > 1:
        m = NGPUS.search(text)
        out.append(
            _f(
                "one_process",
                f"One process drives {g} GPUs (all_reduce_perf -g {g}): it launches every GPU's "
                "kernel in turn, which sets a latency floor that one process per GPU "
                "(mpirun -np N ... -g 1) does not have; the smallest sizes are slower than the "
                "network would make them.",
                m[0] if m else None,
            )
        )
    wrong = [r for r in run["rows"] if r.get("nccl_ran") and not r["nccl_ran"]["agrees"]]
    if wrong:
        r = wrong[0]
        out.append(
            _f(
                "model_disagrees",
                f"At {len(wrong)} sizes NCCL's tuning lines name another algorithm than the "
                f"model picks: at {r['size_bytes']} B the model picks "
                f"{r['algorithm']}/{r['protocol']}, NCCL ran "
                f"{r['nccl_ran']['algorithm']}/{r['nccl_ran']['protocol']} (its tuner, a "
                "plugin or an environment variable decided otherwise).",
                r["nccl_ran"]["evidence"],
            )
        )
    return out
