"""The core's import graph against the layer order docs/ARCHITECTURE.md declares (tests/imports.py
reads both): no cycle, no import upward or sideways, every subject placed."""

from __future__ import annotations

from pathlib import Path

import imports

PKG = imports.PACKAGE


def test_no_import_cycle():
    f = imports.figures()
    assert f["module_cycles"] == []
    assert f["top_level_cycles"] == []


def test_every_import_points_down_the_documented_layers():
    bad = imports.figures()["against_order"]
    assert bad == [], "\n".join(f"{e.source} -> {e.target} (line {e.line})" for e in bad)


def test_every_top_level_module_and_folder_has_a_layer():
    placed = {node for layer in imports.layers() for node in layer}
    present = {imports.top(m) for m in imports.modules() if m != imports.PACKAGE}
    assert present - {"__init__"} <= placed
    assert placed <= present, f"the document names what is not there: {placed - present}"


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / imports.PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


ORDER = """<!-- layers: top first -->
```text
top  the adapters
low  the ground
```
"""


def test_the_walk_finds_a_cycle_an_upward_import_and_one_hidden_in_a_function(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "top.py": "from . import low\n",
            "low/__init__.py": "",
            "low/a.py": "def f():\n    from .. import top\n",  # upward, inside a function
            "low/b.py": "from .c import x\n",
            "low/c.py": "from allreduce_explainer.low import b\nx = 1\n",  # b <-> c
        },
    )
    f = imports.figures(src, imports.layers(ORDER))
    assert f["module_cycles"] == [["allreduce_explainer.low.b", "allreduce_explainer.low.c"]]
    assert f["top_level_cycles"] == [["low", "top"]]
    [up] = f["against_order"]
    assert (up.source, up.target, up.line) == (
        "allreduce_explainer.low.a",
        "allreduce_explainer.top",
        2,
    )


def test_a_layer_may_not_import_its_own_layer_nor_an_unplaced_node(tmp_path):
    order = ORDER.replace("top  the adapters", "top, side  the adapters")
    src = _package(
        tmp_path,
        {"__init__.py": "", "top.py": "from . import side, stray\n", "side.py": "", "stray.py": ""},
    )
    bad = imports.figures(src, imports.layers(order))["against_order"]
    assert sorted(e.target for e in bad) == [
        "allreduce_explainer.side",
        "allreduce_explainer.stray",
    ]
    assert imports.figures(src, imports.layers(order), within=True)["against_order"][0].target == (
        "allreduce_explainer.stray"
    )


def test_other_subjects_reach_nccl_only_through_its_face():
    bad = imports.figures()["past_faces"]
    assert bad == [], "\n".join(f"{e.source} -> {e.target} (line {e.line})" for e in bad)


def test_the_face_rule_finds_a_module_a_name_off_the_list_and_an_attribute_chain(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "nccl/__init__.py": "from .topology import System, GPUS\n__all__ = ['System']\n",
            "nccl/topology.py": "System = GPUS = 1\n",
            "nccl/tuning.py": "from .topology import GPUS\n",  # inside the package: allowed
            "good.py": "from . import nccl\nfrom .nccl import System\nx = nccl.System\n",
            "sub.py": "from .nccl.topology import System\n",  # a module past the face
            "name.py": "from .nccl import GPUS, topology\n",  # off the list; a module
            "chain.py": "from . import nccl\nx = nccl.topology.GPUS\n",  # an attribute chain
        },
    )
    bad = imports.past_face(src, "nccl")
    nccl = f"{PKG}.nccl"
    assert sorted((e.source.rsplit(".", 1)[1], e.target, e.line) for e in bad) == [
        ("chain", f"{nccl}.topology", 2),
        ("name", f"{nccl}.GPUS", 1),
        ("name", f"{nccl}.topology", 1),
        ("sub", f"{nccl}.topology.System", 1),
    ]
