"""Cards under some PCIe switches and not others: an 8 x H100 server with 4 of its 8 cards,
beside GPUs 0, 2, 4 and 6. A GPU without a card reaches one through its NVLink neighbour (PXN,
paths.cc:815-840); each channel's card and relay, as ncclTopoGetNetDev picks them."""

import re

import pytest

from allreduce_explainer.topology import preset_text, topology

KEPT = (0, 2, 4, 6)


def four_cards() -> str:
    text = preset_text("dgx-h100")
    for i in range(8):
        if i not in KEPT:
            text, n = re.subn(
                rf'\s*<pci busid="[^"]+" class="0x020700"[^>]*>\s*<nic>\s*'
                rf'<net name="mlx5_{i}" dev="{i}"[^/]*/>\s*</nic>\s*</pci>',
                "",
                text,
            )
            assert n == 1
    for j, i in enumerate(KEPT):
        text = text.replace(f'name="mlx5_{i}" dev="{i}"', f'name="mlx5_{j}" dev="{j}"')
    return text


@pytest.fixture(scope="module")
def two():
    return topology(four_cards(), 2)


def test_paths_to_cards(two):
    """Its own card is PIX; every other card, PXN through the GPU beside it."""
    for g, row in enumerate(two["system"]["net_paths"]):
        assert row == ["PIX" if KEPT[n] == g else "PXN" for n in range(4)]


def test_each_channel_enters_beside_its_card_and_leaves_through_a_relay(two):
    for c in two["channels"]:
        nics = c["nics"]
        card = nics["recv"]["net"]
        assert nics["recv"]["rank"] == KEPT[card]  # the ring enters at the card's own GPU
        send = nics["send"]
        relay = KEPT[send["net"]]
        assert send["pxn_via"] == (None if send["rank"] == relay else relay)


def test_graphs(two):
    ring = two["graphs"]["ring"]
    # 8 channels of 24 GB/s (an SM90 speed, search.cc:1058-1059) fit 4 cards of 50: 192 <= 200
    assert (ring["nChannels"], ring["bwInter"], ring["typeInter"]) == (8, 24.0, "PXN")
    assert two["graphs"]["nvls"]["nChannels"] == 4  # one NVLS head per card (search.cc:754-773)
