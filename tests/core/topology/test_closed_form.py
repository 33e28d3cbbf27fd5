"""The search against the closed form the tuning model falls back on where no preset is the server
(nccl/topology.py), on the presets: they agree on every graph but one, which the port's booking
explains (and where the model takes the search's, tests/core/topology/test_searched.py)."""

import pytest

from allreduce_explainer.nccl import topology as closed
from allreduce_explainer.topology import preset_text, topology
from helpers import FAST

SLOW = pytest.mark.skipif(FAST, reason="the search runs its whole budget: about 20 s")
CASES = [
    ("dgx-a100", "A100", 1),
    pytest.param("dgx-a100", "A100", 2, marks=SLOW),
    ("dgx-h100", "H100", 1),
    ("dgx-h100", "H100", 2),
    ("dgx-h200", "H200", 1),
    ("dgx-h200", "H200", 2),
    ("dgx-b200", "B200", 1),
    pytest.param("dgx-b200", "B200", 2, marks=SLOW),
]
NAMES = {"ring": "Ring", "tree": "Tree", "nvls": "NVLS"}


def both(preset, gpu, servers):
    ours = topology(preset_text(preset), servers)["graphs"]
    theirs = closed.closed_form(closed.System(gpu=gpu, gpus=8 * servers))
    out = {}
    for key, name in NAMES.items():
        g, t = ours[key], theirs.get(name)
        out[key] = (
            (g["nChannels"], g["bwIntra"], g["bwInter"]) if g else None,
            (t.n_channels, t.bw_intra, t.bw_inter) if t else None,
        )
    return out


@pytest.mark.parametrize(("preset", "gpu", "servers"), CASES)
def test_search_and_closed_form(preset, gpu, servers):
    for key, (ours, theirs) in both(preset, gpu, servers).items():
        if (preset, servers, key) == ("dgx-b200", 1, "tree"):
            # The closed form lets 16 tree channels of 50 GB/s share 18 x 40.1 = 721.8 GB/s
            # per GPU (totalBw x 8/7, search.cc:1167-1168); the search keeps pass 1's
            # sameChannels, so every channel's chain sends from the same seven GPUs and
            # 16 x 50 = 800 does not fit: it stays at 45 (search.cc:1254-1287).
            assert (ours, theirs) == ((16, 45.0, 45.0), (16, 50.0, 50.0))
            continue
        assert ours == theirs, key
