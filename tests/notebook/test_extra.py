"""Without the `notebook` extra, the notebook module says which extra to install: in a fresh
Python where anywidget (or Jinja2) cannot be imported, as in an environment without them, `show`
names `pip install 'allreduce-explainer[notebook]'`, and the server extension still imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import ROOT

# A Python whose imports of BLOCKED fail as a missing module's do (ModuleNotFoundError, with its
# name), then the two ways a notebook user reaches the widgets
PROBE = """
import json, sys

class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Missing())
import allreduce_explainer.notebook as nb
import allreduce_explainer.notebook.server
got = {}
try:
    from allreduce_explainer.notebook import show
except ImportError as e:
    got["from_import"] = [type(e).__name__, str(e)]
try:
    nb.Widget
except ImportError as e:
    got["attribute"] = [type(e).__name__, str(e)]
print(json.dumps(got))
"""


def _probed(blocked: str, probe: str = PROBE) -> dict:
    """What `probe` prints (the two ways' errors) in a fresh Python that sees only this
    checkout's src, with BLOCKED = `blocked`."""
    r = subprocess.run(
        [sys.executable, "-c", f"BLOCKED = {blocked!r}\n{probe}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("blocked", ["anywidget", "jinja2"])
def test_without_the_extra_show_names_the_extra_to_install(blocked):
    got = _probed(blocked)
    assert set(got) == {"from_import", "attribute"}, got
    for kind, message in got.values():
        assert kind == "ModuleNotFoundError", message
        assert "pip install 'allreduce-explainer[notebook]'" in message, message
        assert blocked in message, message


def test_an_unrelated_missing_module_is_not_blamed_on_the_extra():
    """Only the extra's modules get the extra's message: a missing module of anything else
    (here the core's own `bridge`) keeps its own error."""
    probe = PROBE.replace('name.partition(".")[0] == BLOCKED', "name == BLOCKED")
    for _kind, message in _probed("allreduce_explainer.bridge", probe).values():
        assert "notebook` extra" not in message and "bridge" in message, message
