"""The NCCL releases whose tuning code is ported, and the branches that differ between them.

The constants (constants.py) are the same in 2.30.7 and 2.31.0a7: NCCL 2.31 moved them from
src/graph/tuning.cc:146-212 and 623-627 into src/tuning/cost_model.cc:140-226 unchanged. What
changed is how the refactored model (src/tuning/{ring,tree,collnet,tuning}.cc, commit 1fc949c5
"Refactor NCCL tuning and algorithm selection") reads the graphs and picks; each such branch is
one field of a `Release`, with the lines of both releases.

The oldest ported is 2.27.7 (tag v2.27.7-1), and only where its tuning.cc and search.cc differ
from 2.30.7's in what the port models (`git diff v2.27.7-1 v2.30.7-1 -- src/graph/tuning.cc
src/graph/search.cc`, read 2026-12-08), with its NVLS support test (transport/nvls.cc:160): NVLS's
bandwidth, Blackwell's tables and search speeds, NVLSTree's network latency and size correction,
and NVLS from 3 GPUs, the fields below; its constants that differ stand apart in constants.py.
The rest of the port is 2.30.7's for it: enqueue.cc, init.cc, connect.cc and the rest of
transport/nvls.cc changed between the two tags too and were not audited. NCCL 2.27.7 picked NVLS
on 6 and 7 of a B200 server's GPUs (and, on an H200 server whose run prints no version, on 5)
where 2.30.7's model picks Ring (tests/core/nccl/test_nvls_2_27.py): a run's version decides its
pick, so a log of 2.27.5 to 2.27.7 is modelled by 2.27.7 (nearest(); the branches it ports are
the same from 2.27.5). Older logs keep the default: 2.19 to 2.26 share 2.27.7's NVLS branch but
were not compared line by line, and taking them to 2.27.7 moves the performance layer's fit
(bench/performance.py), a step left to a refit of its own. Whichever release picks, the layer
times the pick with the default's terms (model.timing_system says why).

The newest ported is 2.31.0a7: NVIDIA/nccl has no 2.31 release tag (the newest tag is v2.30.7-1);
its `dev` branch is at 2.31.0a7 (makefiles/version.mk: NCCL_MINOR 31, NCCL_PATCH 0, NCCL_SUFFIX
a7), a pre-release, ported as such. Lines below are of the commit of each record.

NCCL has released more than is ported: PUBLISHED lists every release the project knows of, where
its source is and when it was read, and `status()` says so in one sentence, which the README, the
site's quick reference and `--nccl-version`'s help print (tests/core/nccl/test_releases.py holds
the README to it). NVIDIA/nccl was last fetched on FETCHED: its newest tag is v2.30.7-1 and `dev`
is still at 2.31.0a7 (the snapshot's newest commit on any branch or pull request is of
2026-06-13), so 2.31.2, 2.32.3 and 2.32.6, known from their release notes only, are not ported.
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
    # the oldest NCCL whose model this release stands for (nearest()): the first tag whose
    # tuning.cc and search.cc branches that the port models are this release's
    since: str = "2.28.3"
    # NVLS's all-reduce bandwidth is min(bwIntra, bwInter) per channel, x 5/6 to algorithm
    # bandwidth, NVLSTree's min(bwIntra, bwInter, or bwInter/2 from 3 servers), neither capped nor
    # skipped below 2 channels (2.27.7 tuning.cc:267-276, 324); or bwIntra x nvlsEfficiency x
    # (nChannels - 1)/nChannels x 2, capped by bwInter, x nRanks/nsteps (2.30.7 tuning.cc:309-323,
    # 380), the branch from 2.28.3 (its tuning.cc:290-293)
    nvls_bw_least_of_graph: bool = False
    # 2.27.7's tables where 2.30.7's differ: Blackwell's per-channel rows twice Hopper's
    # (tuning.cc:176, 182, 188), NVLSTree's network latency 14 us (tuning.cc:155), no NVLSTree size
    # correction (tuning.cc:569 corrects the tree only), Blackwell's search speeds without 45 GB/s
    # inside nor 86 and 80 across (search.cc:962-963)
    tables_of_2_27: bool = False
    # NVLS (and NVLSTree) only with 3 or more GPUs in a server: nvlsSupport stays 0 when
    # gpuCount <= 2 (nvls.cc:160 at v2.27.7, still at v2.28.3); 2.30.7 needs 2 (its nvls.cc:262)
    nvls_from_three_gpus: bool = False

    @property
    def key(self) -> tuple[int, int, int]:
        return parse_version(self.version)


V2_27_7 = Release(  # tag v2.27.7-1: only the branches of tuning.cc and search.cc that differ
    "2.27.7",
    "593de54e52679b51428571c13271e2ea9f91b1b1",
    ring_inter_from_two_servers=False,
    tree_least_of_intra_inter=False,
    one_gpu_net_latency_of_tree=True,
    collnet_allreduce_from_reduce_scatter=False,
    ties_to_last=False,
    since="2.27.5",  # 2.27.3's Blackwell speeds differ (search.cc:913 at v2.27.3-1)
    nvls_bw_least_of_graph=True,
    tables_of_2_27=True,
    nvls_from_three_gpus=True,
)
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
    since="2.31.0",
)
RELEASES = (V2_31_0A7, V2_30_7, V2_27_7)  # newest first
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
    """The ported model for a version a log printed: the newest ported release whose model it
    runs, from the release's `since` (2.31.2 -> 2.31.0a7, 2.28.9 -> 2.30.7, 2.27.7 -> 2.27.7).
    A log older than every `since`, or that prints none, is read with the default: a published
    run is a release's, and 2.31.0a7 is not one."""
    v = parse_version(printed)
    if v is None:
        return DEFAULT
    return next((r for r in RELEASES if parse_version(r.since) <= v), DEFAULT)


# ---- every release known, ported or not ----------------------------------------------------------

FETCHED = "2026-12-08"  # the last fetch of NVIDIA/nccl: its tags and its dev branch read
NEWEST_TAG = "v2.30.7-1"


@dataclass(frozen=True)
class Published:
    """One NCCL release: when NVIDIA published it, where its source is (None: not reachable), the
    day that source was read, and what it brought, as its release notes say."""

    version: str
    published: str
    source: str | None
    read: str | None
    notes: str

    @property
    def ported(self) -> bool:
        return self.version in VERSIONS


PUBLISHED = (  # newest first
    Published("2.32.6", "November 2026", None, None, "a pipeline-based cost model for Ring, Tree, "
              "NVLS and NVLSTree; the tuner plugin interface v7"),
    Published("2.32.3", "September 2026", None, None, "PAT between servers with NVLS inside them, "
              "for all-gather and reduce-scatter"),
    Published("2.31.2", "August 2026", None, None, "per-collective algorithm selection "
              "(ncclCollConfig_t)"),
    Published("2.31.0a7", "June 2026 (pre-release)", "branch dev, commit db761c8", "2026-12-03",
              "the refactored tuning (src/tuning/), ported as V2_31_0A7"),
    Published("2.30.7", "June 2026", f"tag {NEWEST_TAG}", "2026-11-30",
              "ported as V2_30_7, the default"),
    Published("2.27.7", "July 2025 (its tag)", "tag v2.27.7-1, where its tuning.cc and "
              "search.cc differ from 2.30.7's", "2026-12-08", "ported as V2_27_7, the model of "
              "logs of 2.27.5 to 2.27.7"),
)  # fmt: skip


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _ported(p: Published) -> str:
    kind = "the pre-release " if "a" in p.version.split(".")[-1] else ""
    default = "; the default" if p.version == DEFAULT.version else ""
    return f"{kind}{p.version} ({p.source}, read {p.read}{default})"


def status() -> str:
    """Which NCCL releases exist and which are ported, with the day each source was read: one
    sentence, the only place this is said (README, quick reference, --nccl-version's help)."""
    oldest_first = PUBLISHED[::-1]
    ported = [_ported(p) for p in oldest_first if p.ported]
    out = f"Ported from NCCL's source: {_names(ported)}."
    missing = [f"{p.version} ({p.published})" for p in oldest_first if not p.ported]
    if missing:
        out += (
            f" Released since, but not ported: {_names(missing)}, known from their release "
            f"notes only: NVIDIA/nccl as fetched on {FETCHED} holds none of their source (its "
            f"newest tag is {NEWEST_TAG}, its dev branch at {NEWEST.version})."
        )
    return out


def brief() -> str:
    """status() in one short clause, for a sentence of the course page: the releases that exist
    beyond the ported ones, and the day their source was looked for."""
    missing = [p.version for p in PUBLISHED[::-1] if not p.ported]
    if not missing:
        return ""
    return f"NCCL {_names(missing)} are released but not ported: no source on {FETCHED}"


def help_text() -> str:
    """`--nccl-version`'s help: the choices, and what exists beyond them."""
    missing = [p.version for p in PUBLISHED[::-1] if not p.ported]
    return (
        f"the NCCL release whose tuning model picks: {DEFAULT.version} (tag {NEWEST_TAG}), "
        f"{V2_27_7.version} (its NVLS bandwidth and tables) or {NEWEST.version} (the dev "
        f"branch's pre-release); {_names(missing)} are released but "
        f"their source was not reachable on {FETCHED}, so they are not ported"
    )
