"""nccl/versions.py against NVIDIA/nccl's release notes: Tree in 2.4, LL128 in 2.5, CollNet in
2.6, NVLS in 2.17, NVLSTree in 2.18, PAT in 2.23; the tuning lines' indices as nccl_tuner.h."""

from __future__ import annotations

import pytest

from allreduce_explainer.nccl import ALGORITHMS, PROTOCOLS, versions


@pytest.mark.parametrize(
    "version,has,lacks",
    [
        ("2.3.7", ["Ring"], ["Tree", "LL128"]),
        ("2.4.8", ["Tree", "Ring"], ["LL128", "CollNetDirect"]),
        ("2.5.6+cuda10.0", ["LL128"], ["CollNetDirect"]),
        ("2.16.5", ["CollNetDirect", "CollNetChain"], ["NVLS", "NVLSTree"]),
        ("2.17.1", ["NVLS"], ["NVLSTree"]),
        ("2.18.1", ["NVLSTree"], ["PAT"]),
        ("2.23.4", ["PAT"], []),
        ("2.30.7", list(ALGORITHMS), []),
    ],
)
def test_each_release_has_what_its_notes_say(version, has, lacks):
    a = versions.available(version)
    names = a["algorithms"] + a["protocols"]
    assert all(x in names for x in has) and not any(x in names for x in lacks)


def test_an_unknown_version_allows_everything():
    a = versions.available(None)
    assert set(ALGORITHMS) <= set(a["algorithms"]) and a["protocols"] == list(PROTOCOLS)


def test_the_indices_are_nccl_s():
    # src/include/plugin/nccl_tuner.h:28-40 in 2.30.7
    assert versions.ALGORITHM_INDEX == (
        "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"
    )  # fmt: skip
    assert versions.PROTOCOL_INDEX == ("LL", "LL128", "Simple")
