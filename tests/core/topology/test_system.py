"""Stage 1: a topology file read into NCCL's system (src/graph/topo.cc), bad files refused by
element, the presets read the way an upload is."""

import pytest

from allreduce_explainer.errors import ParamError
from allreduce_explainer.topology import PRESETS, preset_text
from allreduce_explainer.topology import system as S
from allreduce_explainer.topology.xml import bus_id, parse


def build(text):
    return S.from_xml(parse(text))


def nvlink_total(node):
    return sum(lk.bw for lk in node.links if lk.type == S.LINK_NVL)


@pytest.mark.parametrize("name", PRESETS)
def test_presets_read(name):
    s = build(preset_text(name))
    assert len(s.gpus) == len(s.nodes[S.DEV]) == 8
    assert len(s.nets) == 8
    assert len(s.nodes[S.NVS]) == 1  # every NVSwitch chip is one NVS node (topo.cc:849-853)
    assert len(s.nodes[S.CPU]) == 2
    assert sorted(g.rank for g in s.gpus) == list(range(8))


@pytest.mark.parametrize(
    ("name", "links", "per_link"),
    # topo.h:19-24: A100 12 x 20, H100/H200 18 x 20.6, B200 18 x 40.1 GB/s
    [
        ("dgx-a100", 12, 20.0),
        ("dgx-h100", 18, 20.6),
        ("dgx-h200", 18, 20.6),
        ("dgx-b200", 18, 40.1),
    ],
)
def test_nvswitch_link_bandwidth(name, links, per_link):
    s = build(preset_text(name))
    for dev in s.nodes[S.DEV]:
        assert nvlink_total(dev) == pytest.approx(links * per_link, rel=1e-6)


def test_h100_pci_net_and_cpu_bandwidths():
    s = build(preset_text("dgx-h100"))
    dev = s.nodes[S.DEV][0]
    pci = [lk for lk in dev.links if lk.type == S.LINK_PCI]
    assert [lk.bw for lk in pci] == [16 * 240 / 80]  # Gen5 x16 (topo.cc:651-659): 48 GB/s
    assert {n.bw for n in s.nets} == {400000 / 8000}  # topo.cc:418
    cpu = s.nodes[S.CPU][0]
    sys_links = [lk for lk in cpu.links if lk.type == S.LINK_SYS]
    assert [lk.bw for lk in sys_links] == [22.0]  # Sapphire Rapids: SRP_QPI_BW (topo.h:29)
    # ncclTopoSort: the PCI link up is each switch's last link (topo.cc:345-375)
    for sw in s.nodes[S.PCI]:
        assert sw.links[-1].rem.type == S.CPU


def test_bus_id_as_nccl_reads_it():
    assert bus_id("0000:07:00.0") == 0x7000
    assert bus_id("0001:c4:00.0") == 0x1C4000


def test_links_sorted_by_bandwidth():
    s = build(preset_text("dgx-a100"))
    for nodes in s.nodes:
        for n in nodes:
            bws = [lk.bw for lk in n.links if lk.type != S.LINK_PCI]
            assert bws == sorted(bws, reverse=True)


GOOD_GPU = (
    '<pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">'
    '<gpu dev="0" sm="80" rank="0" gdr="1"/></pci>'
)


def wrap(inner, cpu='numaid="0" arch="x86_64" vendor="AuthenticAMD"', version="1"):
    return f'<system version="{version}"><cpu {cpu}>{inner}</cpu></system>'


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("<system", "not well-formed XML at line 1"),
        ('<topology version="1"/>', "root element is <topology>"),
        (wrap(GOOD_GPU, version="2"), 'version="2"'),
        ('<system version="1"></system>', "no <cpu>"),
        (
            wrap(GOOD_GPU.replace(' sm="80"', "")),
            '<gpu dev="0"> under <pci busid="0000:07:00.0"> has no "sm"',
        ),
        (
            wrap(GOOD_GPU.replace('link_width="16"', 'link_width="x"')),
            'link_width="x" is not an integer',
        ),
        (wrap(GOOD_GPU, cpu='arch="x86_64"'), '<cpu> has no "numaid"'),
        (wrap(GOOD_GPU.replace(' rank="0"', "")), "no <gpu> with a rank"),
    ],
)
def test_bad_files_name_the_element(text, says):
    with pytest.raises(ParamError) as e:
        build(text)
    assert e.value.field == "topology"
    assert says in e.value.message


def test_gpu_without_rank_is_left_out():
    """topo.cc:665: a <pci> whose <gpu> has no rank is a GPU outside the communicator."""
    two = GOOD_GPU + GOOD_GPU.replace("07:00", "08:00").replace(' rank="0"', "").replace(
        'dev="0"', 'dev="1"'
    )
    s = build(wrap(two))
    assert [g.rank for g in s.gpus] == [0]
