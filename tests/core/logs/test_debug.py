"""logs/debug.py on real NCCL_DEBUG=INFO logs (tests/data/nccl-debug, cited in SOURCES.json, each
with what a reader finds in it by eye) and on generated lines: the version, ranks, servers, rings,
trees, network, NVLS, CollNet and tuning lines; prefixes of every launcher; hostile input."""

from __future__ import annotations

import contextlib
import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

import helpers
from allreduce_explainer.errors import ParamError
from allreduce_explainer.exercises import problem
from allreduce_explainer.logs import debug, explain, findings
from allreduce_explainer.nccl import versions

DATA = helpers.DATA / "nccl-debug"
SOURCES = json.loads((DATA / "SOURCES.json").read_text())["logs"]
IDS = [s["file"] for s in SOURCES]


def _read(source: dict) -> dict:
    return debug.read((DATA / source["file"]).read_text())


def test_every_file_is_cited_and_every_citation_has_its_file():
    files = {p.name for p in DATA.iterdir() if p.name != "SOURCES.json"}
    assert files == set(IDS)
    for s in SOURCES:
        assert s["url"].startswith("https://github.com/") and s["where"] and s["expect"]


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_each_log_reads_as_a_reader_sees_it(source):
    r, e = _read(source), source["expect"]
    for key in ("nccl_version", "ranks", "nodes", "gpus_per_node", "coll_channels"):
        if key in e:
            assert r[key] == e[key], key
    if "channels" in e:
        assert len(r["channels"]) == e["channels"]
    if "ring0" in e:
        ch0 = r["channels"][0]
        assert ch0["channel"] == 0 and ch0["ring"] == e["ring0"]
        assert ch0["ring_truncated"] is e.get("ring0_truncated", False)
    if "tree0_root" in e:
        tree = r["channels"][0]["tree"]
        assert tree["roots"] == [e["tree0_root"]]
        assert tree["children"][str(e["tree0_root"])] == e["tree0_children_of_root"]
    for ch, key in ((0, "tree0_parent"), (10, "tree10_children")):
        if key in e:
            tree = next(c for c in r["channels"] if c["channel"] == ch)["tree"]
            part = tree["parent"] if key.endswith("parent") else tree["children"]
            assert {k: part[k] for k in e[key]} == e[key]
    net = r["network"]
    for key in ("transport", "cards", "gpudirect_rdma", "sharp"):
        if key in e:
            assert net[key] == e[key], key
    for ch, tree in e.get("trees", {}).items():
        got = next(c for c in r["channels"] if c["channel"] == int(ch))["tree"]
        for part, want in tree.items():
            assert {k: got[part][k] for k in want} == want, (ch, part)
    if "nvls" in e:
        assert r["nvls"]["supported"] is e["nvls"]
    if "nvls_state" in e:
        assert r["nvls"]["state"] == e["nvls_state"]
    if "tuning_algorithms" in e:
        assert r["tuning_env"]["algorithms"] == e["tuning_algorithms"]
    if "collnet" in e:
        assert r["collnet"]["supported"] is e["collnet"]
    if "not_yet" in e:
        assert r["available"]["not_yet"] == e["not_yet"]
    if "calls" in e:
        got = [[c["bytes"], c["algorithm"], c["protocol"], c["count"]] for c in r["calls"]]
        assert got == e["calls"]
    if "findings" in e:
        assert [f["code"] for f in findings.from_debug(r)] == e["findings"]


@pytest.mark.parametrize("source", [s for s in SOURCES if "ring0" in s["expect"]], ids=str)
def test_ring_of_channel_0_is_a_permutation_starting_at_rank_0(source):
    r = _read(source)
    for c in r["channels"]:
        if c["ring"] and not c["ring_truncated"]:
            assert sorted(c["ring"]) == list(range(r["ranks"]))
            assert c["ring"][0] == 0  # rank 0 prints the rings from itself (rings.cc:48)


def test_a_whole_log_s_trees_are_trees():
    """Every channel of the whole p5 log: one root, each rank's parent lists it as a child."""
    r = debug.read((DATA / SOURCES[0]["file"]).read_text())
    for c in r["channels"]:
        t = c["tree"]
        assert len(t["roots"]) == 1 and len(t["parent"]) == r["ranks"]
        for rank, up in t["parent"].items():
            if up >= 0:
                assert int(rank) in t["children"][str(up)]


def test_the_ring_crosses_servers_where_the_comm_says():
    """Ring 0 of the 2 x 8 log: ranks 0-7 on one server, 8-15 on the other (the '#  Rank' lines),
    so the ring leaves each server exactly once."""
    ring = _read(SOURCES[0])["channels"][0]["ring"]
    hops = list(zip(ring, ring[1:] + ring[:1], strict=True))
    assert sum(a // 8 != b // 8 for a, b in hops) == 2


# ---- generated lines ---------------------------------------------------------------------------

PREFIXES = st.sampled_from(
    ["", "[0] ", "[1,3]<stdout>:", "3: ", "[rank3]:", "(WorkerDict pid=12) ", "2026-01-01T00:00Z "]
)


@given(
    prefix=PREFIXES,
    n=st.integers(2, 64),
    per=st.sampled_from([1, 2, 4, 8]),
    seed=st.randoms(use_true_random=False),
)
def test_generated_comm_ring_and_tree_lines_read_back(prefix, n, per, seed):
    ring = list(range(1, n))
    seed.shuffle(ring)
    ring = [0, *ring]
    nodes = max(1, n // per)
    head = f"{prefix}host-a:123:456 [0] NCCL INFO "
    width = len(str(n - 1))
    ring_text = "".join(f" {r:>{width}}" for r in ring)
    lines = [
        f"{head}NCCL version 2.21.5+cuda12.4",
        f"{head}comm 0x5f00 rank 0 nRanks {n} nNodes {nodes} localRanks {per} localRank 0 MNNVL 0",
        f"{head}Channel 00/02 :{ring_text}",
    ]
    for i, rank in enumerate(ring):  # a chain along the ring as channel 0's tree
        up = ring[i - 1] if i else -1
        down = ring[i + 1] if i + 1 < n else -1
        lines.append(
            f"{prefix}host-a:123:{900 + rank} [0] NCCL INFO Trees [0] {down}/-1/-1->{rank}->{up}"
        )
    r = debug.read("\n".join(lines))
    assert (r["nccl_version"], r["ranks"], r["nodes"], r["gpus_per_node"]) == (
        "2.21.5",
        n,
        nodes,
        per,
    )
    c = r["channels"][0]
    assert c["ring"] == ring and c["ring_truncated"] is False
    assert c["tree"]["roots"] == [0]
    assert [c["tree"]["parent"][str(x)] for x in ring] == [-1, *ring[:-1]]


@given(
    coll=st.sampled_from(["AllReduce", "AllGather", "ReduceScatter"]),
    nbytes=st.integers(1, 1 << 40),
    a=st.integers(0, len(versions.ALGORITHM_INDEX) - 1),
    p=st.integers(0, 2),
    named=st.booleans(),
    prefix=PREFIXES,
)
def test_generated_tuning_lines_read_back(coll, nbytes, a, p, named, prefix):
    algo, proto = versions.ALGORITHM_INDEX[a], versions.PROTOCOL_INDEX[p]
    if named:  # 2.24 and later (enqueue.cc:822 in 2.30.7)
        msg = f"{coll}: {nbytes} Bytes -> Algo {algo} proto {proto} channel{{Lo..Hi}}={{0..7}}"
    else:  # before 2.24, the indices (enqueue.cc:1613 in 2.22.3)
        msg = f"{nbytes} Bytes -> Algo {a} proto {p} time 12.500000"
    r = debug.read(f"{prefix}h:1:1 [0] NCCL INFO {msg}\n" * 3)
    (call,) = r["calls"]
    assert (call["bytes"], call["algorithm"], call["protocol"], call["count"]) == (
        nbytes,
        algo,
        proto,
        3,
    )
    assert call["collective"] == (coll if named else None)


@given(st.text(max_size=300))
def test_any_text_is_read_or_refused_with_a_message(text):
    try:
        r = debug.read(text)
    except ParamError as e:
        assert e.field == "log" and "NCCL_DEBUG=INFO" in e.message
    else:
        assert r["lines_read"] >= 1


def test_not_nccl_output_is_refused_with_a_message():
    with pytest.raises(ParamError, match="NCCL_DEBUG=INFO"):
        debug.read("#  size count type\n 8 2 float sum -1 10.0 0.00 0.00 0\n")


@pytest.mark.parametrize(
    "hostile",
    [
        "Channel 00/32 :" + " 1" * 500_000,  # one 1 MB line
        "NCCL INFO Trees" + " [0] 1/1/1->1->1" * 60_000,
        "\x00\xff\x01binary" * 100_000,
        ("NCCL INFO comm 0x rank rank rank " + "9" * 90 + "\n") * 8_000,
        "x" * 999_000,
    ],
    ids=["huge-ring-line", "huge-trees-line", "binary", "near-miss", "noise"],
)
def test_hostile_input_is_answered_quickly(hostile):
    t = time.perf_counter()
    with contextlib.suppress(ParamError):
        debug.read(hostile)
    assert time.perf_counter() - t < 1.0


def test_the_size_cap_is_explain_s():
    with pytest.raises(ParamError, match="at most"):
        explain.read_debug("NCCL version 2.22.3\n" + "x" * explain.MAX_LOG_BYTES)


# ---- findings and the rows' algorithms ---------------------------------------------------------


def test_the_p5_log_end_to_end():
    """The whole p5 log with its card rate: every row named, NVLSTree at the large sizes (the
    log says NVLS is on), and busbw above the cards' 400 GB/s explained by NVLS."""
    text = (DATA / SOURCES[0]["file"]).read_text()
    r = explain.read_debug(text, net=explain.Network(nic_Gbps=400.0))
    assert len(r["rows"]) == 32 and all(row["algorithm"] for row in r["rows"])
    assert r["rows"][-1]["algorithm"] == "NVLSTree"
    codes = [f["code"] for f in r["findings"]]
    assert "busbw_above_line_rate" in codes and "collnet_off" in codes
    assert all(f["evidence"] for f in r["findings"])
    assert r["calculator"] == {
        "gpus": 16,
        "gpus_per_node": 8,
        "gpus_per_process": 1,  # the all_reduce_perf header's nGpus 1
        "gpu": "H100 SXM",
        "network": "custom",
        "nic_gbps": 400.0,
        "algorithm": "nccl",
    }


def test_nvls_off_removes_nvls_from_the_rows():
    text = (
        (DATA / SOURCES[0]["file"])
        .read_text()
        .replace("NVLS multicast support is available", "NVLS multicast support is not available")
    )
    r = explain.read_debug(text, net=explain.Network(nic_Gbps=400.0))
    assert not any(row["algorithm"].startswith("NVLS") for row in r["rows"])
    assert "nvls_off" in [f["code"] for f in r["findings"]]


def test_an_old_release_is_explained_with_its_own_algorithms():
    topo = debug.read("NCCL version 2.16.5+cuda11.8\nx:1:1 [0] NCCL INFO Using network IB\n")
    algos, protos = explain.allowed(topo)
    assert "NVLS" not in algos and "NVLSTree" not in algos and "Tree" in algos
    assert protos == ["LL", "LL128", "Simple"]


def test_tuning_lines_are_held_against_the_model():
    """A tuning line at a row's size: the row says what NCCL ran and whether the model agrees."""
    head = "[1,0]<stdout>:h:1:1 [0] NCCL INFO "
    log = (DATA / SOURCES[0]["file"]).read_text()
    extra = f"{head}17179869184 Bytes -> Algo 1 proto 2 time 30000.0\n"
    r = explain.read_debug(extra + log, net=explain.Network(nic_Gbps=400.0))
    last = r["rows"][-1]
    assert last["nccl_ran"]["algorithm"] == "Ring" and last["nccl_ran"]["agrees"] is False
    assert "model_disagrees" in [f["code"] for f in r["findings"]]


def test_one_process_for_every_gpu_is_a_finding():
    text = (helpers.DATA / "nccl-tests" / "together-8xh100-1node-ring.txt").read_text()
    if "nGpus 8" not in text:
        pytest.skip("the log runs one process per GPU")
    r = explain.read_debug(
        "x:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0\n" + text
    )
    assert "one_process" in [f["code"] for f in r["findings"]]


@given(st.integers(0, 10_000))
def test_the_ring_exercise_s_line_reads_back_through_the_reader(seed):
    """Stage 10's exercise prints a Channel line as NCCL does: the reader gets its ring back."""

    p = problem("debug_ring_next", seed)
    line = next(x for x in p.prompt.splitlines() if "NCCL INFO Channel" in x)
    assert debug.read(line)["channels"][0]["ring"] == p.given["ring"]
