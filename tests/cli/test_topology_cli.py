"""The `topology` command: a file or a preset in, NCCL's graphs and channels out, in the shape
nccl-debug gives channels."""

import json
import subprocess
import sys

from allreduce_explainer.topology import preset_text

CLI = [sys.executable, "-m", "allreduce_explainer"]


def run(*args, stdin=None):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, input=stdin)


def test_json_shape_and_channels_like_nccl_debug(tmp_path):
    f = tmp_path / "topo.xml"
    f.write_text(preset_text("dgx-a100"))
    out = run("topology", str(f), "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert set(r["graphs"]) == {"ring", "tree", "nvls"}
    ring = r["graphs"]["ring"]
    for key in ("pattern", "nChannels", "bwIntra", "bwInter", "typeIntra", "typeInter",
                "sameChannels"):  # fmt: skip
        assert key in ring
    assert len(r["channels"]) == r["coll_channels"] == 2 * ring["nChannels"]
    for i, c in enumerate(r["channels"]):
        assert c["channel"] == i
        assert sorted(c["ring"]) == list(range(8))
        assert set(c["tree"]) == {"roots", "parent", "children"}


def test_file_and_preset_take_one_path(tmp_path):
    f = tmp_path / "topo.xml"
    f.write_text(preset_text("dgx-a100"))
    by_file = json.loads(run("topology", str(f), "--json").stdout)
    by_name = json.loads(run("topology", "dgx-a100", "--json").stdout)
    by_stdin = json.loads(run("topology", "-", "--json", stdin=preset_text("dgx-a100")).stdout)
    assert by_file == by_name == by_stdin


def test_human_view():
    out = run("topology", "dgx-a100")
    assert out.returncode == 0
    assert "RING" in out.stdout and "channel  0: ring 0 " in out.stdout


def test_bad_file_names_the_element(tmp_path):
    f = tmp_path / "bad.xml"
    f.write_text('<system version="1"><cpu arch="x86_64"/></system>')
    out = run("topology", str(f))
    assert out.returncode != 0
    assert '<cpu> has no "numaid" attribute' in out.stderr
    assert "Traceback" not in out.stderr


def test_human_view_names_each_channels_cards():
    out = run("topology", "dgx-h100", "--servers", "2")
    assert out.returncode == 0, out.stderr
    assert "in by mlx5_0 at rank 0, out by mlx5_1 at rank 1" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 80


def test_a_log_with_graph_lines_is_a_topology():
    """A log's `=== System` block is read as the topology, and the log's own search is held
    against the port's (tests/data/topology/graph, nccl-tests#350)."""
    from pathlib import Path

    log = (
        Path(__file__).parents[1]
        / "data"
        / "topology"
        / "graph"
        / "nccl-tests-350-a100-pcie-2x1.txt"
    )
    out = run("topology", str(log), "--servers", "2", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["gpus_per_server"] == 1 and r["system"]["cpus"] == 2
    assert r["log"]["nccl_version"] == "2.16.5"
    assert (r["log"]["fields_equal"], r["log"]["fields"]) == (16, 16)
    human = run("topology", str(log), "--servers", "2")
    assert "the log's own search (NCCL 2.16.5, 2 servers): 16 of 16 fields" in human.stdout


def test_a_bad_graph_line_is_named():
    text = "h:1:2 [0] NCCL INFO === System : maxBw 24.0 totalBw 24.0 ===\n"
    text += "h:1:2 [0] NCCL INFO CPU/0 (1/2/-1)\nh:1:2 [0] NCCL INFO + WAT[1.0] - GPU/1 (0)\n"
    text += "h:1:2 [0] NCCL INFO ==========================================\n"
    out = run("topology", "-", stdin=text)
    assert out.returncode != 0
    assert "line 3: not a link" in out.stderr
    assert "Traceback" not in out.stderr
