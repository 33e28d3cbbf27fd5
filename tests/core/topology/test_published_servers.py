"""Published lines of single servers whose layout the issue names (tests/data/topology,
SOURCES.json): every printed Trees line (parent and child) and ring equal the port's, and
the channel count NCCL ran (the highest channel printed + 1) equals the port's."""

import json
from pathlib import Path

import pytest

from allreduce_explainer.logs import debug
from allreduce_explainer.topology import preset_text, topology

DATA = Path(__file__).parents[2] / "data" / "topology"
SOURCES = json.loads((DATA / "SOURCES.json").read_text())["logs"]


def dgx2_eight_v100() -> str:
    """8 V100 (sm 70) with 6 NVLinks each to a DGX-2's NVSwitches (NVIDIA's DGX-2 guide), two
    per PCIe switch under two Skylake CPUs; inside a server only the NVLinks carry channels."""
    cpu = 'arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85"'
    out = ['<system version="1">']
    for numa in (0, 1):
        out.append(f'<cpu numaid="{numa}" {cpu}>')
        for sw in range(2):
            k = numa * 2 + sw
            out.append(f'<pci busid="0000:{0x10 * k + 1:02x}:00.0" class="0x060400" '
                       'link_speed="8 GT/s" link_width="16">')  # fmt: skip
            for j in range(2):
                g = k * 2 + j
                out.append(
                    f'<pci busid="0000:{0x10 * k + 2 + j:02x}:00.0" class="0x030200" '
                    f'link_speed="8 GT/s" link_width="16"><gpu dev="{g}" sm="70" rank="{g}" '
                    'gdr="1"><nvlink target="0000:c0:00.0" count="6" tclass="0x068000"/>'
                    "</gpu></pci>"
                )
            out.append("</pci>")
        out.append("</cpu>")
    out.append("</system>")
    return "".join(out)


def server(source: dict) -> str:
    return preset_text(source["preset"]) if source["preset"] else dgx2_eight_v100()


@pytest.mark.parametrize("source", SOURCES, ids=[s["file"] for s in SOURCES])
def test_printed_lines_equal(source):
    log = debug.read((DATA / source["file"]).read_text())
    ours = topology(server(source))["channels"]
    assert len(ours) == max(c["channel"] for c in log["channels"]) + 1
    for c in log["channels"]:
        mine = ours[c["channel"]]
        if c["ring"]:
            assert c["ring"] == mine["ring"]
        for rank, parent in c["tree"]["parent"].items():
            assert mine["tree"]["parent"][rank] == parent
            assert mine["tree"]["children"][rank] == c["tree"]["children"][rank]
