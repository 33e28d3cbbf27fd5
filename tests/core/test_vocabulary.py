"""The shared parameters are declared once, in vocabulary.py, and every api function narrows
them: a Param of a shared keyword written anew anywhere else in src/ fails here."""

import ast
from pathlib import Path

import pytest

from allreduce_explainer import api, vocabulary
from allreduce_explainer.params import Param

SRC = Path(api.__file__).parent
SHARED = {p.name for p in vocabulary.SHARED} | {"intra_latency_us", "inter_latency_us"}
SPECS = {n: s for n, s in vars(api).items() if n.isupper() and isinstance(s, dict) and s and
         all(isinstance(p, Param) for p in s.values())}  # fmt: skip


def declarations(root: Path) -> list[str]:
    """Each `Param("name", ...)` call of a shared keyword in a module, as file:line name."""
    out = []
    for f in sorted(root.rglob("*.py")):
        for c in ast.walk(ast.parse(f.read_text())):
            if (
                isinstance(c, ast.Call)
                and getattr(c.func, "id", "") == "Param"
                and c.args
                and isinstance(c.args[0], ast.Constant)
                and c.args[0].value in SHARED
            ):
                out.append(f"{f.relative_to(root)}:{c.lineno} {c.args[0].value}")
    return out


def test_each_shared_parameter_is_declared_once_in_the_vocabulary():
    found = declarations(SRC)
    assert all(d.startswith("vocabulary.py:") for d in found), found
    names = [d.split()[-1] for d in found]
    assert sorted(names) == sorted(set(names))  # once each


def test_the_count_finds_a_declaration_planted_elsewhere(tmp_path):
    (tmp_path / "m.py").write_text('P = Param("gpus", 4, "int", "GPUs", 1, 8)\n')
    assert declarations(tmp_path) == ["m.py:1 gpus"]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_api_parameter_of_a_shared_keyword_narrows_the_vocabulary(name):
    for p in SPECS[name].values():
        if p.name not in SHARED:
            continue
        root = p
        while root.narrows is not None:
            root = root.narrows
        assert root in vocabulary.SHARED or root is vocabulary.INTER_BW, (name, p.name)
        assert p.kind == root.kind and p.unit == root.unit, (name, p.name)


def test_the_card_is_one_quantity_in_two_units_with_one_flag():
    gbps, gBps = vocabulary.NIC_GBPS, vocabulary.INTER_BW
    assert gbps.cli_flag == gBps.cli_flag == "--nic-gbps"
    assert gBps.default * 8 == gbps.default
    assert gBps.on_flag().unit == gbps.unit == "Gb/s"


def test_a_narrowing_that_widens_is_refused():
    with pytest.raises(ValueError, match="hi must be at most"):
        vocabulary.GPUS.narrow(hi=vocabulary.GPUS.hi + 1)
    with pytest.raises(ValueError, match="kind and unit"):
        vocabulary.MFU.narrow(unit="%")


if __name__ == "__main__":  # the count: python tests/core/test_vocabulary.py [a package's folder]
    import sys

    found = declarations(Path(sys.argv[1]) if len(sys.argv) > 1 else SRC)
    print("\n".join(found), f"\n{len(found)} declarations of a shared keyword")
