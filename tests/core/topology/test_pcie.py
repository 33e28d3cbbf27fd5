"""A PCIe-only server with its one card under one of two switches: the path types and
bandwidths as paths.cc defines them, and the search's single channel."""

import pytest

from allreduce_explainer.topology import topology

CPU = 'arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85"'  # Skylake: QPI 10 GB/s


def gpu(bus, dev):
    return (
        f'<pci busid="0000:{bus}:00.0" class="0x030000" vendor="0x10de" device="0x1eb8" '
        f'link_speed="8 GT/s" link_width="16"><gpu dev="{dev}" sm="75" rank="{dev}" gdr="1"/></pci>'
    )


def nic(bus, dev):
    return (
        f'<pci busid="0000:{bus}:00.0" class="0x020000" link_speed="8 GT/s" link_width="16"><nic>'
        f'<net name="mlx5_{dev}" dev="{dev}" speed="100000" port="1" guid="0x1" gdr="1"/>'
        "</nic></pci>"
    )


def switch(bus, inner):
    return (
        f'<pci busid="0000:{bus}:00.0" class="0x060400" link_speed="8 GT/s" link_width="16">'
        f"{inner}</pci>"
    )


SOCKET0 = switch("02", gpu("03", 0) + gpu("04", 1) + nic("05", 0))
SOCKET1 = switch("82", gpu("83", 2) + gpu("84", 3))
XML = (
    f'<system version="1"><cpu numaid="0" {CPU}>{SOCKET0}</cpu>'
    f'<cpu numaid="1" {CPU}>{SOCKET1}</cpu></system>'
)


@pytest.fixture(scope="module")
def one():
    return topology(XML)


def test_path_types(one):
    """PIX through one switch, SYS across the CPUs (paths.cc:87-90); the card: PIX from the
    GPUs beside it, SYS from the others (no NVLink peer for PXN, paths.cc:815-840)."""
    pix, sys_ = ["LOC", "PIX", "SYS", "SYS"], ["SYS", "SYS", "LOC", "PIX"]
    assert one["system"]["gpu_paths"] == [
        pix,
        pix[1::-1] + pix[2:],
        sys_,
        sys_[:2] + ["PIX", "LOC"],
    ]
    assert one["system"]["net_paths"] == [["PIX"], ["PIX"], ["SYS"], ["SYS"]]


def test_path_bandwidths(one):
    """Gen3 x16: 16 lanes x 60 (x100 Mb/s) / 80 = 12 GB/s (topo.cc:651-659); across the CPUs
    the Skylake QPI's 10 GB/s (topo.h:28)."""
    assert one["system"]["gpu_path_bw"][0] == [5000.0, 12.0, 10.0, 10.0]


def test_single_channel_in_pci_order(one):
    """The search tries the PCI order first (search.cc:862-865); 10 GB/s < 25 is not doubled
    in the search (search.cc:1039), only by the postset's copy (connect.cc:459-460)."""
    ring = one["graphs"]["ring"]
    assert (ring["nChannels"], ring["bwIntra"], ring["typeIntra"]) == (1, 10.0, "SYS")
    assert [c["ring"] for c in one["channels"]] == [[0, 1, 2, 3]] * 2


def test_two_servers_go_back_to_the_card_through_the_cpus():
    r = topology(XML, 2)
    assert r["graphs"]["ring"]["typeInter"] == "SYS"
    assert r["channels"][0]["ring"] == list(range(8))
