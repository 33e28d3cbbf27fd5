"""logs/debug.py on the formats a first reader missed, each on a published log (tests/data/
nccl-debug, cited in SOURCES.json) and held against what the log's own lines say, counted here
with plain string operations: a network plugin whose name has spaces; the connection lines of
NCCL 2.4 to 2.11; servers from another rank's comm line or from all_reduce_perf's `#  Rank` hosts;
NCCL_ALGO and the algorithm matrix; a line over the length limit; UTF-16 text; NVLS absent from
releases before it."""

from __future__ import annotations

import json
import re

import pytest

import helpers
from allreduce_explainer.errors import ParamError
from allreduce_explainer.logs import debug, explain, findings

DATA = helpers.DATA / "nccl-debug"
RDMA = "nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt"  # NCCL 2.26.2, NCCL_ALGO=RING
EFA28 = "aws-efa-eks-2x8xa100-nccl-2.8.3.log"  # 'Channel 00 : 1[101d0] -> 8[101c0] ...'
SOCKET24 = "nccl-226-64x1-nccl-2.4-ring-socket.txt"  # 'Ring 00 : 45 -> 46 [send] ...'
IBEXT = "nccl-1814-ibext-plugin-no-gdrdma.txt"  # sends only, none with /GDRDMA
ROCE25 = "nccl-392-2x8-nccl-2.5.7-roce-receive-no-gdrdma.txt"  # receives without /GDRDMA


def _text(name: str) -> str:
    return (DATA / name).read_text()


def _net_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if " via NET/" in line]


def _devices(text: str) -> set[str]:
    """The device after the plugin's name: the first '/<digits>' after 'via NET/'."""
    return {re.search(r"via NET/.+?/(\d+)", line)[1] for line in _net_lines(text)}


def test_every_new_log_is_cited():
    cited = {s["file"] for s in json.loads((DATA / "SOURCES.json").read_text())["logs"]}
    assert {RDMA, EFA28, SOCKET24, IBEXT, ROCE25} <= cited


# ---- the network: names with spaces, old connection lines ---------------------------------------


def test_a_plugin_name_with_spaces_keeps_its_transport_cards_and_gdr():
    """`via NET/NCCL RDMA Plugin v8/0/GDRDMA`: the name is the whole 'NCCL RDMA Plugin v8', the
    device the number after it, and GPUDirect RDMA on; the plugin drives the IB cards."""
    text = _text(RDMA)
    net = debug.read(text)["network"]
    assert net["used_between_servers"] == ["NCCL RDMA Plugin v8"]
    assert net["transport"] == "IB" and net["sharp"] is True
    assert net["cards"] == len(_devices(text)) == 8
    assert net["gpudirect_rdma"] is True
    assert net["gdr_evidence"].endswith("via NET/NCCL RDMA Plugin v8/1/GDRDMA")


@pytest.mark.parametrize(
    "name,transport",
    [(EFA28, "AWS Libfabric (EFA)"), (SOCKET24, "Socket"), (ROCE25, "RoCE"), (IBEXT, "IB")],
    ids=["2.8-channel", "2.4-ring", "2.5-ring-receive", "sends-only"],
)
def test_connection_lines_of_every_release_give_network_cards_and_gdr(name, transport):
    """NCCL 2.8's `Channel 00 : 1[101d0] -> 8[101c0] [send] via NET/AWS Libfabric/0/GDRDMA`,
    2.4's `Ring 00 : 45 -> 46 [send] via NET/Socket/0`, 2.5's `Ring 00 : 15[41000] -> 0[1b000]
    [receive] via NET/IB/0`, a plugin's sends: the devices the lines name, and GPUDirect RDMA on
    where a line says /GDRDMA, off where a receive over RDMA does not, else not said (a send
    may go without it while receives use it; sockets never do)."""
    text = _text(name)
    lines = _net_lines(text)
    if any(line.endswith("/GDRDMA") for line in lines):
        gdr = True
    elif any("[receive] via NET/" in x and "NET/Socket" not in x for x in lines):
        gdr = False
    else:
        gdr = None
    r = debug.read(text)
    assert r["network"]["transport"] == transport
    assert r["network"]["cards"] == len(_devices(text))
    assert r["network"]["gpudirect_rdma"] is gdr
    assert ("gdr_off" in [f["code"] for f in findings.from_debug(r)]) is (gdr is False)


def test_nccl_2_4_trees_and_rings_read_in_their_own_order():
    """2.4 prints `Channel 00 :    0   1` (no channel count) and each tree `up->rank->down0/
    down1/down2` (src/init.cc:541 and 824 in v2.4.8-1): lines made with those formats."""
    places = [(0, -1, 0, 1, -1, -1), (1, 1, 0, -1, -1, -1)]  # channel, up, rank, down0-2
    trees = "".join(f" [{c}] {up}->{r}->{a}/{b}/{d}" for c, up, r, a, b, d in places)
    text = "h:1:2 [0] NCCL INFO Channel 00 :    0   1\nh:1:2 [0] NCCL INFO Trees" + trees
    r = debug.read(text)
    assert r["channels"][0]["ring"] == [0, 1] and r["ranks"] == 2
    assert [c["tree"]["parent"]["0"] for c in r["channels"]] == [-1, 1]
    assert [c["tree"]["children"]["0"] for c in r["channels"]] == [[1], []]


def test_a_trees_line_nccl_cut_keeps_its_whole_channels():
    """NCCL writes the Trees line into 1,024 bytes (src/init.cc:1486-1497 in 2.30.7): with 64
    channels it stops mid-entry, wherever the ranks' widths put the cut (here every place in
    the last 30 characters); every entry before the cut is read, the cut one is not."""
    entries = [f" [{c}] {c % 7 + 1}/-1/-1->0->-1" for c in range(64)]
    full = "Trees" + "".join(entries)
    for end in range(1023 - 30, 1024):
        line = full[:end]
        whole = [c for c in range(64) if len("Trees" + "".join(entries[: c + 1])) <= end]
        r = debug.read("h:1:2 [0] NCCL INFO " + line)
        assert [c["channel"] for c in r["channels"]] == whole, end
        assert [c["tree"]["children"]["0"] for c in r["channels"]] == [[c % 7 + 1] for c in whole]


# ---- servers ------------------------------------------------------------------------------------


def test_servers_come_from_the_rank_lines_hosts():
    """NCCL 2.8 prints no nNodes: the 16 `#   Rank` lines' two hosts give 2 servers of 8."""
    text = _text(EFA28)
    hosts = [line.split(" on ")[1].split()[0] for line in text.splitlines() if "#   Rank" in line]
    r = debug.read(text)
    assert (r["ranks"], r["nodes"], r["gpus_per_node"]) == (
        len(hosts),
        len(set(hosts)),
        len(hosts) // len(set(hosts)),
    )
    assert "2 host(s)" in r["nodes_evidence"]
    assert explain.read_debug(text)["run"]["servers"] == r["nodes"]  # the run block agrees


def test_servers_come_from_any_rank_s_comm_line():
    """Rank 0's rings with only rank 11's comm line: its nNodes 2 localRanks 8 hold for all."""
    r = debug.read(_text("nccl-tests-319-rank0-rings-rank11-comm.txt"))
    assert (r["ranks"], r["nodes"], r["gpus_per_node"]) == (16, 2, 8)
    assert "rank 11 nRanks 16 nNodes 2" in r["nodes_evidence"]


# ---- NCCL_ALGO ----------------------------------------------------------------------------------


def test_nccl_algo_ring_makes_every_row_ring_with_a_finding():
    text = _text(RDMA)
    r = explain.read_debug(text)
    assert len(r["rows"]) == 32 and {row["algorithm"] for row in r["rows"]} == {"Ring"}
    forced = next(f for f in r["findings"] if f["code"] == "tuning_forced")
    assert forced["evidence"].endswith("NCCL INFO NCCL_ALGO set by environment to RING")
    assert "NCCL_ALGO=RING" in r["algorithm_basis"]
    unset = "\n".join(x for x in text.splitlines() if "NCCL_ALGO" not in x and "Matrix" not in x)
    free = explain.read_debug(unset)
    assert {row["algorithm"] for row in free["rows"]} != {"Ring"}  # the model's own picks differ
    assert "tuning_forced" not in [f["code"] for f in free["findings"]]


def test_the_algorithm_matrix_alone_restricts_the_algorithms():
    """Without the NCCL_ALGO line, the matrix NCCL printed says the same: its AllReduce row."""
    text = _text(RDMA)
    lines = text.splitlines()
    head = next(x for x in lines if "Function |" in x).split("|")
    row = next(x for x in lines if "AllReduce |" in x).split("|")
    on = [a for a, v in zip(head[2].split(), row[2].split(), strict=True) if v != "0"]
    env = debug.read(text.replace("NCCL_ALGO set by environment to RING", "x"))["tuning_env"]
    assert env["algorithms"] == on == ["Ring"] and env["NCCL_ALGO"] is None


@pytest.mark.parametrize(
    "value,words,want",
    [  # the examples of src/graph/tuning.cc:45-53 (2.30.7), read for an all-reduce
        ("ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", "algo",
         ["Tree", "CollNetDirect"]),
        ("LL,Simple;allreduce:^LL", "proto", ["LL128", "Simple"]),
        ("^LL128;allreduce:LL128", "proto", ["LL128"]),
        ("^LL128", "proto", ["LL", "Simple"]),
        ("RING", "algo", ["Ring"]),
        ("Tree,CollNet", "algo", ["Tree", "CollNetDirect"]),  # 2.6-2.13's name
    ],
)  # fmt: skip
def test_nccl_algo_values_read_as_nccl_s_parse_list(value, words, want):
    table = debug.ALGO_WORDS if words == "algo" else debug.PROTO_WORDS
    assert debug.enabled(value, table) == want


# ---- lines too long, UTF-16 ---------------------------------------------------------------------


def test_a_line_over_the_limit_is_not_read_but_named():
    """Rank 0's ring line run past MAX_LINE: read cut, it gave a ring of ~2,000 'ranks'."""
    text = _text(RDMA)
    ring = next(x for x in text.splitlines() if "Channel 00/16 :" in x)
    long = ring + "".join(f" {k % 16:2d}" for k in range(debug.MAX_LINE // 3))
    assert len(long) > debug.MAX_LINE
    r = debug.read(text.replace(ring, long))
    assert r["ranks"] == 16
    assert next(c for c in r["channels"] if c["channel"] == 0)["ring"] is None
    cut = r["long_lines"]
    assert cut["count"] == 1 and cut["lines"][0]["chars"] == len(long)
    f = next(f for f in findings.from_debug(r) if f["code"] == "long_line")
    assert f["evidence"].startswith(ring[:100]) and f"{len(long):,}" in f["message"]
    with pytest.raises(ParamError, match="over the 4,000"):
        debug.read(long)  # alone, nothing is read: refused, saying why


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_reads_as_its_utf8(codec):
    """A UTF-16 file as the CLI and the page get it (its bytes decoded as UTF-8): the same
    reading, rows included, and a finding that says so."""
    text = _text(RDMA)
    arrived = text.encode(codec).decode("utf-8", "replace")
    want, got = explain.read_debug(text), explain.read_debug(arrived)
    assert got["encoding"] == "UTF-16" and want["encoding"] == "UTF-8"
    for key in ("ranks", "nodes", "network", "channels", "tuning_env", "rows"):
        assert got[key] == want[key], key
    assert [f["code"] for f in got["findings"]] == [f["code"] for f in want["findings"]] + ["utf16"]


def test_utf16_without_nccl_lines_is_refused_as_utf16():
    arrived = "hello\nworld\n".encode("utf-16").decode("utf-8", "replace")
    with pytest.raises(ParamError, match="UTF-16") as e:
        debug.read(arrived)
    assert e.value.field == "log"


# ---- NVLS and CollNet before their releases -----------------------------------------------------


@pytest.mark.parametrize(
    "version,state", [("2.16.5", "absent"), ("2.17.1", "off"), ("2.8.3", "absent")]
)
def test_nvls_is_absent_before_2_17_and_off_after(version, state):
    """NVLS came with v2.17.1-1 (its first tag defining NCCL_ALGO_NVLS): before it, absent,
    whatever the log says of multicast; from it, as the log says."""
    text = (
        f"NCCL version {version}+cuda11.8\n"
        "h:1:1 [0] NCCL INFO NVLS multicast support is not available on dev 0\n"
    )
    r = debug.read(text)
    assert r["nvls"]["state"] == state and r["nvls"]["supported"] is False
    found = {f["code"]: f["message"] for f in findings.from_debug(r)}
    assert ("nvls_off" in found) is (state == "off")
    predates = found.get("old_version", "predates :").split("predates ")[1].split(":")[0]
    assert ("NVLS" in predates.split(", ")) is (state == "absent")


def test_the_2_8_log_says_nvls_absent_not_unknown():
    r = debug.read(_text(EFA28))
    assert r["nvls"] == {
        "supported": False,
        "channels": None,
        "evidence": "[1,0]<stdout>:NCCL version 2.8.3+cuda11.2",
        "state": "absent",
    }
    assert (
        "NVLS" in next(f for f in findings.from_debug(r) if f["code"] == "old_version")["message"]
    )


# ---- the calculator's settings: the run's launch -------------------------------------------------


def test_the_calculator_settings_take_the_runs_gpus_per_process():
    """all_reduce_perf's header ('nThread 1 nGpus 1') says how the run was launched: the
    settings carry it; a log with no all_reduce_perf run says nothing of it."""
    text = _text(EFA28)
    header = next(x for x in text.splitlines() if "nGpus" in x).split()
    g = int(header[header.index("nGpus") + 1])
    assert explain.read_debug(text)["calculator"]["gpus_per_process"] == g == 1
    assert "gpus_per_process" not in explain.read_debug(_text(SOCKET24))["calculator"]
