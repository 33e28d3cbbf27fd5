"""Reading NCCL's verbatim source excerpts (tests/data/nccl/, one folder per later release) and the
numbers of a C initializer, for the tests that hold the port of each release to its source."""

from __future__ import annotations

import functools
import re

import helpers
from allreduce_explainer.nccl import constants as K
from allreduce_explainer.nccl.releases import V2_30_7, Release, release

NUM = r"(?:\d+\.\d*|\.\d+|\d+)"
# the per-channel bandwidth tables, in the order every release's source declares them
BANDWIDTH_TABLES = (
    K.LL_MAX_BW_GBPS,
    K.PER_CH_MAX_RING_LL128_BW_GBPS,
    K.PER_CH_MAX_TREE_LL128_BW_GBPS,
    K.PER_CH_MAX_TREE_BW_GBPS,
    K.PER_CH_MAX_NVLS_TREE_BW_GBPS,
)


def bandwidth_tables_from(first: int) -> list[tuple]:
    """Each bandwidth table with the line its initializer starts on in a source where the first
    starts on line `first` (they stand 7 lines apart in every release's source)."""
    return [(table, first + 7 * i) for i, table in enumerate(BANDWIDTH_TABLES)]


@functools.cache
def excerpt(name: str, version: str = V2_30_7.version) -> dict[int, str]:
    """Line number -> text of one excerpt of a release (2.30.7's in tests/data/nccl/, a later
    one's in tests/data/nccl/<version>/); its header must name the release's commit."""
    r: Release = release(version)
    folder = helpers.DATA / "nccl" / ("" if r is V2_30_7 else version)
    text = (folder / f"{name}.txt").read_text(encoding="utf-8")
    assert f"commit {r.commit} (NCCL {r.version})" in text.splitlines()[0]
    out = {}
    for raw in text.splitlines():
        if not raw.startswith("#"):
            n, _, line = raw.partition(": ")
            out[int(n)] = line
    return out


def numbers(text: str) -> list[float]:
    """The numbers of a C initializer, comments dropped, `2*141.0` multiplied out."""
    text = re.sub(r"/\*.*?\*/", "", text).split("//")[0]
    out = []
    for a, b in re.findall(rf"({NUM})f?(?:\s*\*\s*({NUM}))?", text):
        out.append(float(a) * (float(b) if b else 1.0))
    return out


def groups(text: str) -> list[tuple[float, ...]]:
    text = re.sub(r"/\*.*?\*/", "", text)
    return [tuple(numbers(g)) for g in re.findall(r"\{([^{}]*)\}", text)]
