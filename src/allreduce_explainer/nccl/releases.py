"""The NCCL releases whose tuning code is ported, and the branches that differ between them.

The constants (constants.py) are the same in both: NCCL 2.31 moved them from
src/graph/tuning.cc:146-212 and 623-627 into src/tuning/cost_model.cc:140-226 unchanged. What
changed is how the refactored model (src/tuning/{ring,tree,collnet,tuning}.cc, commit 1fc949c5
"Refactor NCCL tuning and algorithm selection") reads the graphs and picks; each such branch is
one field of a `Release`, with the lines of both releases.

The newest is 2.31.0a7: NVIDIA/nccl has no 2.31 release tag yet (the newest tag is v2.30.7-1);
its `dev` branch is at 2.31.0a7 (makefiles/version.mk: NCCL_MINOR 31, NCCL_PATCH 0, NCCL_SUFFIX
a7), a pre-release, ported as such. Lines below are of the commit of each record.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParamError
from .versions import parse_version


@dataclass(frozen=True)
class Release:
    """One ported release: its version as NCCL prints it, the commit read, and its branches."""

    version: str
    commit: str
    # the ring's per-channel bandwidth across servers: bwInter from 2 servers (ring.cc:35-36), or
    # bwIntra up to 2 servers and bwInter from 3 (tuning.cc:306)
    ring_inter_from_two_servers: bool
    # the tree's: min(bwInter, bwIntra) (tree.cc:28), or as the ring's above (tuning.cc:306)
    tree_least_of_intra_inter: bool
    # with one GPU per server every algorithm's network latency is the tree's (tuning.cc:387-388),
    # or each its own (ring.cc:52-53, tree.cc:47-48, collnet.cc and nvls.cc alike)
    one_gpu_net_latency_of_tree: bool
    # CollNet's all-reduce bandwidth: carried over from the reduce-scatter pass of the same loop,
    # ppn x min(bwIntra, 0.9 bwInter), without the x 0.85 on Hopper (whose test compares the
    # generation's index with 90), and off unless every GPU of a server is a head
    # (collnet.cc:35-57, 75-88); or nChannels x bwIntra, x 0.85 from Hopper (tuning.cc:306-348)
    collnet_allreduce_from_reduce_scatter: bool
    # among equal times NCCL picks the last pair in table order: the candidates are pushed on a
    # list's front and the first strictly less is kept (tuning.cc:36-37, 141, 161); or the first
    # (enqueue.cc:2035-2044)
    ties_to_last: bool

    @property
    def key(self) -> tuple[int, int, int]:
        return parse_version(self.version)


V2_30_7 = Release(  # tag v2.30.7-1
    "2.30.7",
    "5067397c2676d5aed50042fc39e5c8ee96eb0027",
    ring_inter_from_two_servers=False,
    tree_least_of_intra_inter=False,
    one_gpu_net_latency_of_tree=True,
    collnet_allreduce_from_reduce_scatter=False,
    ties_to_last=False,
)
V2_31_0A7 = Release(  # branch dev, the commit titled "NCCL 2.31.0a7-1" (same tuning at its tip)
    "2.31.0a7",
    "db761c8818b93be7d875d5346cbeb92e6e3d7fc8",
    ring_inter_from_two_servers=True,
    tree_least_of_intra_inter=True,
    one_gpu_net_latency_of_tree=False,
    collnet_allreduce_from_reduce_scatter=True,
    ties_to_last=True,
)
RELEASES = (V2_31_0A7, V2_30_7)  # newest first
NEWEST = RELEASES[0]
# The release a System asks unless told (the pages, the CLI): the newest *release* ported. 2.31.0a7
# is a pre-release (no tag), and its CollNet branch reads like a bug of the alpha; it is one flag
# away (--nccl-version 2.31.0a7, the calculator's menu) until a 2.31 release is tagged.
DEFAULT = V2_30_7
VERSIONS = tuple(r.version for r in RELEASES)


def release(version: str) -> Release:
    """The ported release of that version; a ParamError naming nccl_version otherwise."""
    for r in RELEASES:
        if version == r.version:
            return r
    raise ParamError(
        "nccl_version", f"the ported NCCL releases are {', '.join(VERSIONS)}, got {version!r}"
    )


def nearest(printed: str | None) -> Release:
    """The ported model for a version a log printed: the newest ported release not newer than it
    (2.31.2 -> 2.31.0a7, 2.28.9 -> 2.30.7), else the oldest ported. A log that prints none is
    read as one older than every port: a published run is a release's, and 2.31.0a7 is not one."""
    v = parse_version(printed) or (0, 0, 0)
    return next((r for r in RELEASES if r.key <= v), RELEASES[-1])
