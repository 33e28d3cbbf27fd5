"""Stage 10's topology widget against the command line's `topology --json` for every preset:
the channels, the chosen channel's ring (drawn and stepped) and tree, the search's reasons and
where the ring crosses the CPUs, the last held against the preset file itself."""

from __future__ import annotations

import contextlib
import io
import json
import re
import xml.etree.ElementTree as ET

import pytest

from allreduce_explainer import api, bridge
from allreduce_explainer.cli import main
from allreduce_explainer.topology import PRESETS, preset_text
from allreduce_explainer.widgets.nccltopo import nccl_topology
from helpers import ROOT


def cli_json(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["topology", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


def cpu_of_rank(xml_text: str) -> dict[int, int]:
    """Each GPU's CPU, read from the file: the <cpu> element it sits under."""
    out = {}
    for k, cpu in enumerate(ET.fromstring(xml_text).iter("cpu")):
        for gpu in cpu.iter("gpu"):
            out[int(gpu.get("rank"))] = k
    return out


def arrow_pairs(frame: dict) -> set[tuple[int, int]]:
    return {(a[0], a[1]) for a in frame["arrows"]}


@pytest.mark.parametrize("preset", list(PRESETS))
def test_state_against_the_cli(preset):
    j = cli_json(preset)
    channel = len(j["channels"]) - 1  # the last: a channel after NCCL's doubling
    s = nccl_topology({"preset": preset, "channel": channel})
    assert int(s["readouts"]["channels"]) == j["coll_channels"] == len(j["channels"])
    ring = j["channels"][channel]["ring"]
    assert s["readouts"]["ring"].startswith(" → ".join(map(str, [*ring, ring[0]])))
    # drawn: the ring's hops over the server, every GPU once
    assert arrow_pairs(s["frames"][0]) == set(zip(ring, ring[1:] + ring[:1], strict=True))
    assert sorted(n["gpu"] for n in s["diagram"]["nodes"]) == list(range(j["ranks"]))
    # stepped: in step 1 every GPU sends to the one after it in this ring
    nxt = dict(zip(ring, ring[1:] + ring[:1], strict=True))
    assert {(m[0], m[1]) for m in s["frames"][1]["moves"]} == set(nxt.items())
    assert len(s["frames"]) == len(ring)  # the start, then n - 1 steps
    assert s["readouts"]["reasons"] == "\n".join(j["reasons"])
    assert s["readouts"]["why"] == "\n".join(j["channels"][channel]["why"])
    tree = nccl_topology({"preset": preset, "channel": channel, "draw": "tree"})
    parents = j["channels"][channel]["tree"]["parent"]
    want = {(up, int(r)) for r, up in parents.items() if up >= 0}
    assert arrow_pairs(tree["frames"][0]) == want


@pytest.mark.parametrize("preset", list(PRESETS))
def test_reasons_follow_the_search_and_the_file(preset):
    j = cli_json(preset)
    g = j["graphs"]["ring"]
    said = "\n".join(j["reasons"])
    m = re.search(r"fitted (\d+) channels? at ([\d.]+) GB/s", said)
    n0, bw0 = int(m.group(1)), float(m.group(2))
    if "split in two" in said:  # ncclTopoDupChannels: twice the channels (at most 32), half each
        assert (g["nChannels"], g["bwIntra"]) == (min(2 * n0, 32), bw0 / 2)
    else:
        assert (g["nChannels"], g["bwIntra"]) == (n0, bw0)
    assert f"so {j['coll_channels']} channels" in said
    # where the ring goes from one CPU's GPUs to another's: the file's <cpu> elements
    cpus = cpu_of_rank(preset_text(preset))
    ring = j["channels"][0]["ring"]
    crossings = [(a, b) for a, b in zip(ring, ring[1:] + ring[:1], strict=True)
                 if cpus[a] != cpus[b]]  # fmt: skip
    why = " ".join(j["channels"][0]["why"])
    assert re.findall(r"GPU (\d+) → GPU (\d+)", why) == [(str(a), str(b)) for a, b in crossings]


def test_two_servers_say_which_card():
    j = cli_json("dgx-h100", "--servers", "2")
    s = nccl_topology({"preset": "dgx-h100", "servers": 2, "channel": 1})
    nics = j["channels"][1]["nics"]
    assert f"card {nics['recv']['name']}" in s["readouts"]["why"]
    assert f"card {nics['send']['name']}" in s["readouts"]["why"]
    ring = j["channels"][1]["ring"]
    assert arrow_pairs(s["frames"][0]) == set(zip(ring, ring[1:] + ring[:1], strict=True))
    assert len(s["diagram"]["nodes"]) == 16


def test_own_file_takes_the_presets_path_and_a_bad_one_names_the_element():
    by_file = nccl_topology({"file": preset_text("dgx-a100")})
    by_name = nccl_topology({"preset": "dgx-a100"})
    assert by_file["readouts"] == by_name["readouts"]
    bad = json.loads(bridge.call("nccl_topology", json.dumps({"file": "<system><cpu>"})))
    assert not bad["ok"] and bad["error"]["field"] == "file"
    assert bad["error"]["message"]
    far = json.loads(bridge.call("nccl_topology", json.dumps({"channel": 63})))
    assert not far["ok"] and far["error"]["field"] == "channel"


def quadratic(path: str, samples: int = 50) -> list[tuple[float, float]]:
    """Points along an arrow's curve ('Mx y Qcx cy x y', its head after a second M)."""
    m, q = path[1:].split("M")[0].split("Q")
    (x1, y1), (cx, cy, x2, y2) = map(float, m.split()), map(float, q.split())
    return [((1 - t) ** 2 * x1 + 2 * (1 - t) * t * cx + t * t * x2,
             (1 - t) ** 2 * y1 + 2 * (1 - t) * t * cy + t * t * y2)
            for t in (k / samples for k in range(samples + 1))]  # fmt: skip


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("draw", ["ring", "tree"])
def test_hops_along_the_row_pass_between_the_switches_and_the_card_names(preset, draw):
    """Every arrow between two GPUs of one row, either way (a ring's way back runs right to
    left), bows above the row: under the PCIe switches' boxes and never down into the cards'
    names printed under the row (13 px text on its baseline)."""
    for channel in (0, 1):
        s = nccl_topology({"preset": preset, "channel": channel, "draw": draw})
        d = s["diagram"]
        at = {i: n for i, n in enumerate(d["nodes"])}
        pci_bottom = max(b["y"] + b["h"] for b in d["boxes"] if b["label"] == "PCIe")
        names_top = min(c["y"] for c in d["captions"]) - 13
        along = [a for a in s["frames"][0]["arrows"] if at[a[7]]["y"] == at[a[8]]["y"]]
        assert along, "no hop along the row"
        for a in along:
            ys = [y for _, y in quadratic(a[3])]
            assert pci_bottom < min(ys) and max(ys) < names_top, (a[0], a[1], min(ys), max(ys))


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("servers", [1, 2])
def test_hops_over_other_gpus_pass_over_the_labels_of_the_hops_between_neighbours(preset, servers):
    """A hop along the row that passes over other GPUs (one server's way back, 0 → 7 on the first
    of two) bows above the labels of the hops between neighbours (12 px text, diagram.js writes
    it 4 px under the label's point, about 7 px a character): the values a step sends stay
    readable. Two hops that meet at a GPU may cross beside it."""
    s = nccl_topology({"preset": preset, "servers": servers})
    at = {i: n for i, n in enumerate(s["diagram"]["nodes"])}

    def over(a) -> bool:
        lo, hi = sorted((at[a[7]]["x"], at[a[8]]["x"]))
        return any(n["y"] == at[a[7]]["y"] and lo < n["x"] < hi for n in at.values())

    crossed = 0
    for frame in s["frames"][1:]:
        along = [a for a in frame["arrows"] if at[a[7]]["y"] == at[a[8]]["y"]]
        for b in (a for a in along if over(a)):
            row = at[b[7]]["y"]
            labels = [a for a in along if at[a[7]]["y"] == row and not over(a) and a[4]]
            for lab in (a for a in labels if not {a[7], a[8]} & {b[7], b[8]}):
                half = len(lab[4]) * 7 / 2 + 2
                above = [y for x, y in quadratic(b[3]) if abs(x - lab[5]) <= half]
                crossed += bool(above)
                assert all(y + 1.5 < lab[6] + 4 - 12 for y in above), (b[:2], lab[:2], lab[4])
    assert crossed, "no hop over other GPUs passes over a label"


def test_card_captions_fit_their_column_and_keep_every_card_counted():
    """A published 4 x RTX A6000 server (tests/data/topology/dumps, yccl) hangs three virtual
    interfaces on one card: its caption is the first name, cut, and "+2", short enough that no
    caption runs into the next one's column; a name that fits is shown whole."""
    text = (ROOT / "tests/data/topology/dumps/yccl-4xa6000-topo.xml").read_text()
    structure = api.nccl_topology(topology=text, topology_servers=1)["structure"]
    names = [n["name"] for n in structure["nodes"] if n["kind"] == "nic"]
    captions = nccl_topology({"file": text})["diagram"]["captions"]
    assert len(captions) == len(names) and any(", " in n for n in names)
    for c, name in zip(sorted(x["text"] for x in captions), sorted(names), strict=True):
        assert len(c) <= 9
        parts = name.split(", ")
        if len(parts) > 1:
            assert c.endswith(f"+{len(parts) - 1}")
        if len(name) <= 9:
            assert c == name
        else:
            assert parts[0].startswith(c.split("…")[0].split("+")[0])
    xs = sorted(x["x"] for x in captions)
    assert all(b - a >= 58 for a, b in zip(xs, xs[1:]))  # each in a column of its own
