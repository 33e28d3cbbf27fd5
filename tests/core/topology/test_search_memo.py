"""The search's shortcuts (what Search remembers of a search tree, within a try and across tries
that search alike) change nothing it decides: against the plain recursion NCCL runs, every try
ends with the same budget left and the same saved graph, and the answer is the same. With NCCL's
budgets most tries that run out find nothing better anyway, so smaller budgets (a test's, not
NCCL's) also make the tries end where the steps a shortcut counts decide what is found."""

import pytest

from allreduce_explainer.topology import preset_text, topology
from allreduce_explainer.topology import search as S
from helpers import DATA, FAST

SLOW = pytest.mark.skipif(FAST, reason="the plain recursion runs every try's whole budget")
CASES = [  # (file, servers, steps per try or None for NCCL's)
    ("dgx-h100", 1, None),
    pytest.param("dgx-h100", 2, None, marks=SLOW),
    pytest.param("dgx-b200", 1, None, marks=SLOW),
    ("panlichen-8x3090-topo.xml", 1, None),
    ("yccl-4xa6000-topo.xml", 2, None),
    ("dgx-a100", 2, 3000),
    ("dgx-b200", 2, 3000),
]


def run(text: str, servers: int) -> tuple[dict, list[tuple]]:
    """The answer, and each try's budget left and saved graph (its channels in use)."""
    tries = []
    rec = S.Search.rec

    def traced(self, g, save, time):
        rec(self, g, save, time)
        if g.n_channels == 0:
            used = save.n_channels * len(self.s.gpus)
            tries.append((time.left, save.n_channels, save.bw_intra, save.bw_inter,
                          save.intra[:used], save.inter[: 2 * save.n_channels]))  # fmt: skip

    S.Search.rec = traced
    try:
        return topology(text, servers), tries
    finally:
        S.Search.rec = rec


@pytest.mark.parametrize(("name", "servers", "budget"), CASES)
def test_shortcuts_decide_as_the_plain_recursion(name, servers, budget, monkeypatch):
    text = (
        (DATA / "topology" / "dumps" / name).read_text()
        if name.endswith(".xml")
        else preset_text(name)
    )
    if budget:
        monkeypatch.setattr(S, "TIMEOUT", budget)
        monkeypatch.setattr(S, "TIMEOUT_TREE", budget)
        monkeypatch.setattr(S, "TIMEOUT_SAMECHANNELS", budget // 8)
    fast = run(text, servers)
    # the plain recursion: nothing remembered, every try runs rec from scratch
    monkeypatch.setattr(S.Search, "_remembered", lambda self, key, g, save, time, explore:
                        explore(g, save, time))  # fmt: skip
    plain = run(text, servers)
    assert fast[1] == plain[1]
    assert fast[0] == plain[0]
    assert len(plain[1]) > 3  # the search loosened its constraints at least a few times
