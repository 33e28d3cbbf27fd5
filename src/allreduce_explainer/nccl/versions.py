"""Which algorithms and protocols each NCCL release has, so that a log of an old release is not
explained with an algorithm it did not have.

Read from NVIDIA/nccl's release tags: the first tag whose `src/include` defines each
`NCCL_ALGO_*` / `NCCL_PROTO_*` (in 2.30.7 they live in src/include/plugin/nccl_tuner.h:27-40;
`git grep '#define NCCL_ALGO_' <tag> -- src/include` on each tag):

- Tree and Ring: v2.4.2-1 (2.3.7 has rings only; the tree came with 2.4, src/enqueue.cu);
- LL128: v2.5.6-1 (absent from v2.4.2-1's sources);
- CollNet: v2.6.4-1 (NCCL_ALGO_COLLNET 2); split into CollNetDirect and CollNetChain in
  v2.14.3-1 (v2.13.4-1 still has the single NCCL_ALGO_COLLNET);
- NVLS: v2.17.1-1; NVLSTree: v2.18.1-1; PAT: v2.23.4-1 (AllGather and ReduceScatter only).

LL is older than every tag here. The numbers NCCL prints in its tuning lines before 2.24
(`<bytes> Bytes -> Algo <a> proto <p> time <t>`, src/enqueue.cc:1613 in v2.22.3-1) are these
indices; from 2.24 it prints the names (`ncclAlgoStr`, src/init.cc:53 in v2.30.7-1).
"""

from __future__ import annotations

import re

# (algorithm or protocol, the first release that has it), in NCCL's index order
ALGORITHM_SINCE = (
    ("Tree", (2, 4, 2)),
    ("Ring", (1, 0, 0)),
    ("CollNetDirect", (2, 6, 4)),  # "CollNet" until 2.14
    ("CollNetChain", (2, 14, 3)),
    ("NVLS", (2, 17, 1)),
    ("NVLSTree", (2, 18, 1)),
    ("PAT", (2, 23, 4)),
)
PROTOCOL_SINCE = (("LL", (1, 0, 0)), ("LL128", (2, 5, 6)), ("Simple", (1, 0, 0)))
ALGORITHM_INDEX = tuple(a for a, _ in ALGORITHM_SINCE)  # Algo <n> in a tuning line
PROTOCOL_INDEX = tuple(p for p, _ in PROTOCOL_SINCE)
VERSION = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,4})")
SOURCE = "NVIDIA/nccl release tags, first tag defining each NCCL_ALGO_* / NCCL_PROTO_*"


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) of '2.22.3' or '2.22.3+cuda12.2'; None if not a version."""
    m = VERSION.match(text or "")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def available(version: str | None) -> dict:
    """The algorithms and protocols a release has (every one of them when the version is not
    known), and what the table is read from."""
    v = parse_version(version)
    algos = [a for a, since in ALGORITHM_SINCE if v is None or v >= since]
    protos = [p for p, since in PROTOCOL_SINCE if v is None or v >= since]
    missing = [a for a in ALGORITHM_INDEX if a not in algos]
    return {
        "version": version,
        "algorithms": algos,
        "protocols": protos,
        "not_yet": missing,
        "source": SOURCE,
    }


def table() -> list[dict]:
    """One row per algorithm and protocol: the release it first appears in."""
    rows = [{"name": a, "kind": "algorithm", "since": ".".join(map(str, s))} for a, s in
            ALGORITHM_SINCE]  # fmt: skip
    rows += [{"name": p, "kind": "protocol", "since": ".".join(map(str, s))} for p, s in
             PROTOCOL_SINCE]  # fmt: skip
    return rows
