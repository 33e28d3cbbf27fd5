"""The log readers on what real jobs print (issue 47, item 5): CollNet's state only from what
enables it, findings with the cards and algorithms the log allows, ring lines cut by NCCL 2.4-2.22,
several communicators in one log, NCCL's 64-channel maximum, NVLS from an explicit channel count,
a binary file's size. Each case is a cited published log of tests/data/nccl-debug (SOURCES.json),
a published log trimmed or joined, or lines built as NCCL's source prints them (file:line of the
tag named)."""

from __future__ import annotations

import pytest

import helpers
from allreduce_explainer import nccl
from allreduce_explainer.errors import ParamError
from allreduce_explainer.logs import debug, explain, findings

DATA = helpers.DATA / "nccl-debug"
# NVIDIA/nccl-tests#319: 2 x 8 H100, NCCL 2.26.2, HPC-X's RDMA and SHARP plugins loaded,
# NCCL_ALGO=RING, NCCL_COLLNET_ENABLE never echoed (page 10's debug example)
RING_ONLY = DATA / "nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt"
HEADS_24 = DATA / "nccl-1453-3x8xh100-ib-nvls-heads.txt"  # NVIDIA/nccl#1453: 3 x 8, rank 0
PREFIX = "host:1:2 [0] NCCL INFO "


def _text(path=RING_ONLY) -> str:
    return path.read_text()


def _codes(d: dict) -> list[str]:
    return [f["code"] for f in findings.from_debug(d)]


def _with_line_after(text: str, anchor: str, line: str) -> str:
    """The log with `line` inserted after the first line containing `anchor`, as the same
    thread prints it (its prefix copied)."""
    lines = text.splitlines()
    k = next(i for i, x in enumerate(lines) if anchor in x)
    head = lines[k][: lines[k].index("NCCL INFO ") + len("NCCL INFO ")]
    return "\n".join([*lines[: k + 1], head + line, *lines[k + 1 :]]) + "\n"


# ---- a. CollNet's state from what enables it --------------------------------------------------


def test_a_sharp_plugin_without_the_enable_variable_is_collnet_off():
    # 2.26.2 prints "16 collnet channels" as comm->nChannels (src/init.cc:1219 in v2.26.2-1)
    # and echoes NCCL_COLLNET_ENABLE whenever it is set (init.cc:821-829): never echoed, off
    d = debug.read(_text())
    c = d["collnet"]
    assert (c["state"], c["supported"], c["plugin"]) == ("off", False, "SHARP")
    assert c["channels"] == d["coll_channels"] == 16 and c["channels_are_collnet"] is False
    assert "Loaded collnet plugin SHARP" in c["evidence"]
    assert "collnet_off" in _codes(d)


@pytest.mark.parametrize(("value", "state"), [("1", "on"), ("0", "off")])
def test_a_the_echoed_variable_decides(value, state):
    # src/init.cc:825 in v2.26.2-1: INFO(NCCL_ALL, "NCCL_COLLNET_ENABLE set by environment to %s.")
    text = _with_line_after(
        _text(), "Loaded collnet plugin", f"NCCL_COLLNET_ENABLE set by environment to {value}."
    )
    c = debug.read(text)["collnet"]
    assert c["state"] == state and c["enable"] == value
    assert "NCCL_COLLNET_ENABLE" in c["evidence"]


def test_a_a_v9_lookup_that_fails_before_v8_loads_is_not_a_missing_plugin():
    # NVIDIA/nccl#1584 (2.24.3): "Failed to find ncclCollNetPlugin_v9", then "Loaded collnet
    # plugin SHARP (v8)"; no NCCL_COLLNET_ENABLE among its consecutive init lines
    d = debug.read((DATA / "nccl-1584-1x8-nccl-2.24.3-sharp-no-prefix.txt").read_text())
    assert d["collnet"]["state"] == "off"
    assert "Loaded collnet plugin" in d["collnet"]["evidence"]


@pytest.mark.parametrize(("count", "state"), [(16, "on"), (0, "off")])
def test_a_in_2_20_the_collnet_count_is_collnets(count, state):
    # src/init.cc:1256 in v2.20.5-1 prints comm->collNetChannels
    text = (
        f"{PREFIX}NCCL version 2.20.5+cuda12.3\n"
        f"{PREFIX}NET/Plugin: Loaded collnet plugin SHARP (v7)\n"
        f"{PREFIX}comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
        f"{PREFIX}16 coll channels, {count} collnet channels, 0 nvls channels, 16 p2p channels, "
        "2 p2p channels per peer\n"
    )
    c = debug.read(text)["collnet"]
    assert c["state"] == state and c["channels_are_collnet"] is True


# ---- b. the cards and the algorithms the log allows ---------------------------------------------


def _trimmed() -> str:
    """The log as a trimmed copy keeps it: rank 0's connection line only (devices 1-7 gone)."""
    keep = [x for x in _text().splitlines()
            if not ("NCCL INFO Channel" in x and "via NET" in x and " [0] " not in x)]  # fmt: skip
    assert sum("via NET" in x for x in keep) == 1
    return "\n".join(keep) + "\n"


def test_b_a_trimmed_log_keeps_the_cards_net_ib_lists():
    d = debug.read(_trimmed())
    assert d["network"]["cards"] == len(d["network"]["card_names"]) == 8
    # without the NET/IB list, one connection line of eight GPUs says nothing of the cards
    bare = "\n".join(x for x in _trimmed().splitlines() if "NET/IB : Using" not in x)
    assert debug.read(bare)["network"]["cards"] is None
    # the whole log's connection lines come from all eight GPUs of a server: eight devices
    assert debug.read(_text())["network"]["cards"] == 8


@pytest.mark.parametrize("text", [_text(), _trimmed()], ids=["whole", "trimmed"])
def test_b_a_ring_only_run_is_fitted_predicted_and_found_as_rings(text):
    """NCCL_ALGO=RING: every regime fitted, every row's pick and every prediction is a ring's,
    the prediction is NCCL's ring time (choose_among with Ring alone, the oracle), and a busbw
    held against too low a card rate is found on eight cards and a ring, not one card and a
    tree (T5 of the teaching review; the correctness review's "1 cards", "the fit names Tree")."""
    r = explain.read_debug(text, net=explain.Network("H100 SXM", 20.0))
    run = explain.read_log(text, net=explain.Network("H100 SXM", 20.0))
    nf, pred = run["nccl_fit"], run["prediction"]
    assert {x["algorithm"] for x in nf["rows"]} == {"Ring"}
    assert {x["regime"].split("/")[0] for x in nf["regimes"]} == {"Ring"}
    assert {x["algorithm"] for x in r["rows"]} == {"Ring"}
    s = nccl.System("H100 SXM", 16, 8, 8, 20.0, nccl_version=nccl.nearest("2.26.2").version)
    for row in pred["rows"]:
        ring = nccl.choose_among("AllReduce", row["bytes"], s, ["Ring"])
        assert row["algorithm"] == "Ring"
        assert row["busbw_GBps"] == pytest.approx(ring.busbw_GBps)
    free = nccl.choose("AllReduce", 1 << 31, s)
    at = next(x for x in pred["rows"] if x["bytes"] == 1 << 31)
    assert free.algorithm != "Ring" and at["busbw_GBps"] != pytest.approx(free.busbw_GBps)
    above = next(f for f in r["findings"] if f["code"] == "busbw_above_line_rate")
    assert "8 cards x 20 Gb/s" in above["message"] and "names Ring" in above["message"]
    assert "Tree" not in above["message"] and "1 cards" not in above["message"]


def test_b_the_page_table_follows_the_allowed_set():
    """Page 10's debug example: the log table's "likely regime" and "NCCL predicts" columns."""
    from allreduce_explainer.widgets import logview

    text = logview.examples.text("debug-2nodes")
    run = logview._explained(text, 1, None, 8, "H100 SXM", 400.0)
    assert {x["algorithm"] for x in run["nccl_fit"]["rows"]} == {"Ring"}
    assert {x["algorithm"] for x in run["prediction"]["rows"]} == {"Ring"}


# ---- c. ring lines cut at 20 ranks by NCCL 2.4-2.22 -------------------------------------------


def dump_line(values: list[int], prefix: str) -> str:
    """dumpLine of src/graph/rings.cc:9-19 (v2.5.6-1 to v2.22.3-1): the prefix, then at most
    MAXWIDTH = 20 values as " %3d", in a line of PREFIXLEN + 5 x MAXWIDTH characters."""
    width, prefixlen, length = 20, 15, 15 + 5 * 20
    line = list(prefix[:prefixlen].ljust(length))
    at = len(prefix)
    for i, v in enumerate(values[:width]):
        cell = f" {v:3d}"
        line[at + 4 * i : at + 4 * i + 4] = cell
    return "".join(line[:length])


def _rings_32(version: str, comm: bool) -> str:
    ring = [0, *range(31, 0, -1)]  # a 32-rank ring, as NCCL prints it from rank 0
    lines = [f"{PREFIX}NCCL version {version}+cuda12.2"]
    if comm:
        lines.append(f"{PREFIX}comm 0x1 rank 0 nRanks 32 nNodes 4 localRanks 8 localRank 0 MNNVL 0")
    for ch in range(2):  # rings.cc:41: sprintf(prefix, "Channel %02d/%02d : ", r, nrings)
        lines.append(PREFIX + dump_line(ring, f"Channel {ch:02d}/02 : ").rstrip())
    return "\n".join(lines) + "\n"


def test_c_the_oracle_prints_as_a_published_2_22_log():
    # aws-p5-2x8xh100-efa-nccl-2.22.3.log (KeitaW/p5-nccl-test-2024-07-19): ring 0 of 16 ranks
    ring = [0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14, 15, 8]
    line = dump_line(ring, "Channel 00/16 : ")
    published = (DATA / "aws-p5-2x8xh100-efa-nccl-2.22.3.log").read_text()
    assert line.rstrip() in published


def test_c_a_cut_ring_gives_no_rank_count_and_is_found():
    d = debug.read(_rings_32("2.22.3", comm=False))
    assert d["ranks"] is None
    assert all(c["ring_truncated"] and len(c["ring"]) == 20 for c in d["channels"])
    assert d["rings_cut"] == {"channels": 2, "max_ranks": 20, "ranks": None}
    assert "rings_cut" in _codes(d)


def test_c_with_a_comm_line_the_ranks_are_its_and_the_cut_is_found():
    d = debug.read(_rings_32("2.22.3", comm=True))
    assert d["ranks"] == 32 and d["rings_cut"]["ranks"] == 32
    f = next(f for f in findings.from_debug(d) if f["code"] == "rings_cut")
    assert "stop at 20 of the 32 ranks" in f["message"]
    assert f["evidence"].startswith("channel 0: 0 31 30")


def test_c_whole_rings_of_twenty_are_whole():
    ring = list(range(20))
    comm = f"{PREFIX}comm 0x1 rank 0 nRanks 20 nNodes 1 localRanks 20 localRank 0 MNNVL 0\n"
    old = f"{PREFIX}NCCL version 2.22.3+cuda12.2\n{comm}{PREFIX}" + dump_line(
        ring, "Channel 00/01 : "
    )
    d = debug.read(old)
    assert d["ranks"] == 20 and d["rings_cut"] is None and not d["channels"][0]["ring_truncated"]
    new = f"{PREFIX}NCCL version 2.23.4+cuda12.2\n{PREFIX}Channel 00/01 : " + " ".join(
        map(str, ring)
    )
    d = debug.read(new)  # 2.23 marks a cut with "...": twenty ranks without it are the ring
    assert d["ranks"] == 20 and d["rings_cut"] is None


# ---- d. several communicators -------------------------------------------------------------------


def test_d_two_communicators_are_read_as_two():
    """A 16-rank job's log (its rows, its counts) followed by a 24-rank job's: not 24 ranks with
    the first's 16 coll channels and the first's rows fitted as 24 GPUs."""
    text = _text() + HEADS_24.read_text()
    r = explain.read_debug(text, net=explain.Network("H100 SXM", 400.0))
    assert r["ranks"] == 24  # the largest that printed rings, as before
    assert r["run"]["gpus"] == 16  # the rows' own '#  Rank' lines
    comms = {c["ranks"]: c for c in r["communicators"]}
    assert set(comms) == {16, 24}
    assert comms[16]["coll_channels"] == 16 and len(comms[16]["rows"]) == 32
    assert comms[16]["channels"][0]["ring"] == [0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14,
                                                15, 8]  # fmt: skip
    assert comms[24]["rows"] == [] and comms[24]["nodes"] == 3
    assert comms[24]["channels"][0]["ring"][:3] == [0, 7, 6]
    # the 24-rank job's channels from its own ring lines, not the 16-rank job's count line
    assert "coll channels" not in r["evidence"]["channels"]
    assert r["evidence"]["channels"].startswith("[0] h100clust-worker-1:227602:227667 [0]")
    f = next(f for f in r["findings"] if f["code"] == "communicators")
    assert "2 communicators" in f["message"]


def test_d_one_communicator_lists_none():
    assert explain.read_debug(_text())["communicators"] == []


# ---- g. NCCL's limits, NVLS's explicit zero, a binary file's size -------------------------------


def test_g_ten_thousand_channels_are_not_read():
    lines = [f"{PREFIX}comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0"]
    lines += [f"{PREFIX}Channel {c:02d}/10000 :  0  1" for c in range(10_000)]
    lines.append(f"{PREFIX}10000 coll channels, 0 nvls channels, 10000 p2p channels, 2 p2p "
                 "channels per peer")  # fmt: skip
    d = debug.read("\n".join(lines))
    assert d["channels"] == [] and d["coll_channels"] is None
    assert "channels_over_max" in _codes(d)
    ok = debug.read("\n".join([lines[0], f"{PREFIX}Channel 63/64 :  0  1"]))
    assert [c["channel"] for c in ok["channels"]] == [63] and "channels_over_max" not in _codes(ok)


def test_g_zero_nvls_channels_is_nvls_off():
    # the 2.18 line (src/init.cc:1066 in v2.18.1-1): "%d coll channels, %d nvls channels, ..."
    text = (
        f"{PREFIX}NCCL version 2.18.1+cuda12.1\n"
        f"{PREFIX}comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n"
        f"{PREFIX}32 coll channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n"
    )
    n = debug.read(text)["nvls"]
    assert (n["state"], n["channels"]) == ("off", 0) and "0 nvls channels" in n["evidence"]


def test_g_a_binary_files_size_is_its_bytes():
    raw = bytes(range(128, 256)) * 6250  # 800,000 bytes, none of them UTF-8
    text = explain.LogText(raw.decode("utf-8", "replace"), len(raw), "job.log")
    assert len(text.encode("utf-8")) > explain.MAX_LOG_BYTES  # what was counted before
    explain.check_size(text)  # 800,000 bytes: under the limit
    with pytest.raises(ParamError, match="job.log: has no NCCL_DEBUG=INFO lines"):
        explain.read_debug(text)
    big = explain.LogText("x", explain.MAX_LOG_BYTES + 5)
    with pytest.raises(ParamError, match=f"is {explain.MAX_LOG_BYTES + 5:,} bytes"):
        explain.check_size(big)
