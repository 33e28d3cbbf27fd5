"""The port against what NCCL printed on servers of a preset's layout.

These logs are in tests/data/nccl-debug (SOURCES.json gives each URL); their topology files were
not published, so each is held against the preset of its server's published layout: 8 H100 SXM
on NVSwitch, one 400 Gb/s card per GPU under the GPU's PCIe switch (HGX H100 with 8 ConnectX-7,
nccl-tests#319; AWS p5.48xlarge, where NCCL sees one fused EFA device per GPU). Every ring NCCL
printed, and every rank's tree line (its parent and children), must equal the port's. The logs
were written by NCCL 2.20 to 2.26; their rings and trees are what 2.30.7's search gives too.
"""

from pathlib import Path

import pytest

from allreduce_explainer.logs import debug
from allreduce_explainer.topology import preset_text, topology

DATA = Path(__file__).parents[2] / "data" / "nccl-debug"

LOGS = [  # file, preset, servers, rings printed, tree lines printed
    ("aws-p5-2x8xh100-efa-nccl-2.22.3.log", "dgx-h100", 2, 16, 256),
    ("aws-p5-2x8xh100-efa-nccl-2.20.3-tuner.log", "dgx-h100", 2, 16, 256),
    ("nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt", "dgx-h100", 2, 2, 16),
    ("nccl-tests-319-rank0-rings-rank11-comm.txt", "dgx-h100", 2, 16, 0),
    ("nccl-tests-213-1x8-16channels.txt", "dgx-h100", 1, 0, 32),
]


@pytest.fixture(scope="module")
def ported():
    cache = {}

    def get(preset, servers):
        if (preset, servers) not in cache:
            cache[preset, servers] = topology(preset_text(preset), servers)
        return cache[preset, servers]

    return get


@pytest.mark.parametrize(("file", "preset", "servers", "rings", "lines"), LOGS)
def test_every_printed_ring_and_tree_line_equal(ported, file, preset, servers, rings, lines):
    log = debug.read((DATA / file).read_text(encoding="utf-8", errors="replace"))
    mine = {c["channel"]: c for c in ported(preset, servers)["channels"]}
    seen_rings = seen_lines = 0
    for c in log["channels"]:
        ours = mine[c["channel"]]
        if c["ring"] and not c["ring_truncated"]:
            assert c["ring"] == ours["ring"], f"channel {c['channel']}"
            seen_rings += 1
        for rank, parent in (c["tree"] or {"parent": {}})["parent"].items():
            assert ours["tree"]["parent"][rank] == parent, f"channel {c['channel']} rank {rank}"
            assert ours["tree"]["children"][rank] == c["tree"]["children"][rank]
            seen_lines += 1
    assert (seen_rings, seen_lines) == (rings, lines)
    if log["coll_channels"]:
        assert len(mine) == log["coll_channels"]
