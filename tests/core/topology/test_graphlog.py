"""A log's GRAPH lines as the topology: the printer's inverse, and the log's own search held
against the port's.

Three oracles, none of them the reader itself:
- a preset read as XML and printed as NCCL 2.30.7 prints it (ncclTopoPrint, topo.cc:285-343),
  then read back from the print, gives the same graphs and channels as the XML does;
- the paths NCCL printed after the system (`GPU/81000 :GPU/81000 (0/5000.000000/LOC) ...`,
  ncclTopoPrintPaths) equal the paths the port computes on the system read from the same lines;
- the search NCCL printed (`Pattern 4, crossNic 0, nChannels 1, bw 24/24, type LOC/PHB,
  sameChannels 1` and the channel lines) equals the port's, field by field, on every published
  pair (tests/data/topology/SOURCES.json, graph_pairs), except the differences listed with
  their reason, which must stay exactly as listed.
"""

import itertools
import json
import re
from pathlib import Path

import pytest

from allreduce_explainer.errors import ParamError
from allreduce_explainer.logs import debug
from allreduce_explainer.topology import graphlog, logcheck, run
from allreduce_explainer.topology.system import GPU, NET, PATH_TYPE

DATA = Path(__file__).parents[2] / "data" / "topology"
PAIRS = json.loads((DATA / "SOURCES.json").read_text())["graph_pairs"]

# file -> {difference: why}; empty where every printed field and channel line is equal
EXPECTED: dict[str, dict[str, str]] = {
    "graph/nccl-tests-350-a100-pcie-2x1.txt": {},
    "graph/nccl-tests-329-t600-1x1.txt": {},
    "graph/rdma-ib-tutorial-ring2-node0-p40-3x1.txt": {},
    "graph/rdma-ib-tutorial-ring2-node1-p40-3x1.txt": {},
    "graph/rdma-ib-tutorial-ring2-node2-p40-3x1.txt": {},
    "graph/nccl-miner-2gpu-nvlink-1x2.txt": {},
    "graph/nccl-miner-4gpu-h100-p2p-off-rank1-4x1.txt": {},
    "graph/nccl-miner-8gpu-v100-p2p-off-rank0-8x1.txt": {},
    "graph/nccl-miner-4gpu-h100-p2p-off-rank2-4x1.txt": {},
    "graph/nccl-miner-3gpu-a-series-p2p-off-rank0-3x1.txt": {},
}


def as_log(lines: list[str], prefix: str = "host:1:2 [0] NCCL INFO ") -> str:
    return "\n".join(prefix + ln for ln in lines) + "\n"


def unnamed(channels: list[dict]) -> list[dict]:
    """The channels without the cards' device names, which the print does not carry (the
    reasons name a card by its device name when the file gives one, else by NET/<id>)."""
    out = json.loads(json.dumps(channels))
    for c in out:
        for side in c.get("nics", {}).values():
            side.pop("name")
        c["why"] = [re.sub(r"card \S+( through|,)", r"card ?\1", w) for w in c.get("why", [])]
    return out


@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.parametrize("preset", list(run.PRESETS))
def test_printed_preset_reads_back_to_the_same_search(preset, servers):
    xml = run.preset_text(preset)
    printed = graphlog.print_system(run.load(xml))
    from_xml, from_log = run.topology(xml, servers), run.topology(as_log(printed), servers)
    assert from_log["graphs"] == from_xml["graphs"]
    assert unnamed(from_log["channels"]) == unnamed(from_xml["channels"])
    assert from_log["system"]["gpu_paths"] == from_xml["system"]["gpu_paths"]
    assert from_log["system"]["net_paths"] == from_xml["system"]["net_paths"]
    # the print of what was read is the print read: nothing lost on the way
    assert graphlog.print_system(run.load(as_log(printed))) == printed


def test_printed_header_is_what_the_search_init_computes():
    s = run.load(run.preset_text("dgx-h100"))
    header = graphlog.print_system(s)[0]
    assert header == "=== System : maxBw 370.8 totalBw 370.8 ==="  # 18 NVLinks x 20.6 GB/s


PATH = re.compile(r"(GPU|NET|CPU|NVS|PCI|NIC)/([0-9a-fA-F-]+) \((\d+)/([\d.]+)/(\w+)\)")


def local(name: str) -> str:
    """`GPU/0-7000` (2.21 on: system id and local id) or `GPU/7000` (before) as `GPU/7000`."""
    kind, ident = name.upper().split("/")
    return f"{kind}/{ident.split('-')[-1]}"


def printed_paths(block: graphlog.Block) -> dict[str, dict[str, tuple[str, str]]]:
    """ncclTopoPrintPaths' lines of the block's thread: source -> target -> (bw as printed,
    type); the bandwidth stays text since its precision changed (`%f`, then `%.1f` in 2.21)."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for _, msg in block.after:
        m = re.match(r"^((?:GPU|NET)/[0-9a-fA-F-]+) :(.*)$", msg)
        if m:
            out[local(m.group(1))] = {
                local(f"{t}/{i}"): (bw, ty) for t, i, _, bw, ty in PATH.findall(m.group(2))
            }
    return out


def legacy_name(node) -> str:
    return f"{['GPU', 'PCI', 'NVS', 'CPU', 'NIC', 'NET'][node.type]}/{node.id & ((1 << 56) - 1):X}"


@pytest.mark.parametrize("pair", PAIRS, ids=[p["file"] for p in PAIRS])
def test_paths_equal_the_printed_paths(pair):
    text = (DATA / pair["file"]).read_text()
    s, block = graphlog.read(text)
    run.prepare(s, pair["servers"])
    seen = 0
    for src, targets in printed_paths(block).items():
        node = next((g for g in s.gpus + s.nets if legacy_name(g) == src), None)
        assert node is not None, src
        for dst, (bw, ty) in targets.items():
            for t in (GPU, NET):
                for i, other in enumerate(s.nodes[t]):
                    if legacy_name(other) == dst:
                        path = node.paths[t][i]
                        assert PATH_TYPE[path.type] == ty, (src, dst)
                        digits = len(bw.partition(".")[2])  # printed as NCCL's printf does
                        assert f"{path.bw:.{digits}f}" == bw, (src, dst)
                        seen += 1
    assert seen >= 1


@pytest.mark.parametrize("pair", PAIRS, ids=[p["file"] for p in PAIRS])
def test_published_pair_search_equal_but_the_listed_differences(pair):
    text = (DATA / pair["file"]).read_text()
    r = logcheck.check(text)
    # only the rank that prints `NCCL version` gives it; the others' version is the source's
    assert r["nccl_version"] == (pair["nccl"] if "NCCL version" in text else None)
    assert sorted(r["differences"]) == sorted(EXPECTED[pair["file"]])
    assert all(g["printed"] is not None for g in r["graphs"])  # both graphs were printed
    assert r["fields"] == 16 and r["channels"] >= 2


RING_LINE = re.compile(r"NCCL INFO Ring (\d+) : (-?\d+) -> (\d+) -> (-?\d+)\s*$", re.M)
PRINTS_RINGS = [p for p in PAIRS if "Trees [0]" in (DATA / p["file"]).read_text()]


def channels_ran(pair: dict, searched: int) -> int:
    """The channels NCCL ran: the port's count, capped by NCCL_MAX_NCHANNELS where the job set
    it (ncclTopoPostset, connect.cc:464 in 2.20.5: after the search and the duplication, so
    the search's printed lines do not depend on it; the first channels are kept)."""
    cap = pair.get("env", {}).get("NCCL_MAX_NCHANNELS")
    return min(searched, int(cap)) if cap else searched


@pytest.mark.parametrize("pair", PRINTS_RINGS, ids=[p["file"] for p in PRINTS_RINGS])
def test_pair_ring_and_tree_lines_equal(pair):
    """A pair that also printed its rings and trees: the port's channels on the log's own
    system, for the servers the job ran on, give every `Channel NN :` ring, every `Ring NN :
    prev -> rank -> next` and every `Trees` line the log printed (read by the nccl-debug reader
    and a regex of its own, not by graphlog), and as many channels as NCCL ran."""
    text = (DATA / pair["file"]).read_text()
    log = debug.read(text)
    mine = run.topology(text, pair["servers"])["channels"]
    ran = log["coll_channels"] or max(c["channel"] for c in log["channels"]) + 1
    assert ran == channels_ran(pair, len(mine))
    seen = 0
    for c in log["channels"]:
        ours = mine[c["channel"]]
        if c["ring"]:
            assert c["ring"] == ours["ring"]
            seen += 1
        for rank, parent in c["tree"]["parent"].items():
            assert ours["tree"]["parent"][rank] == parent
            assert ours["tree"]["children"][rank] == c["tree"]["children"][rank]
            seen += 1
    for m in RING_LINE.finditer(text):
        ring = mine[int(m.group(1))]["ring"]
        prev, rank, nxt = (int(x) for x in m.group(2, 3, 4))
        at = ring.index(rank)
        assert (ring[at - 1], ring[(at + 1) % len(ring)]) == (prev, nxt), m.group(0)
        seen += 1
    assert seen >= 2


def test_legacy_ids_and_net_fields_read():
    s, block = graphlog.read((DATA / "graph/nccl-tests-350-a100-pcie-2x1.txt").read_text())
    assert block.version == "2.16.5"
    assert [n.dev for n in s.nets] == [1, 0]  # in the order printed: CPU/1's card first
    assert [round(n.bw, 3) for n in s.nets] == [25.0, 3.125]
    assert [n.asic for n in s.nets] == [0x7A852D0003F6CEB8, 0xB8E2CE0003F6CEB8]
    assert [(g.rank, g.busid) for g in s.gpus] == [(0, "0000:81:00.0")]
    cpu = s.nodes[3][0]
    assert (cpu.arch, cpu.vendor, cpu.model) == (1, 2, -1)  # x86, AMD


def test_version_bound_on_the_searched_channels():
    assert logcheck.searched_channels("2.19.3") == 16  # MAXCHANNELS 32 until 2.24
    assert logcheck.searched_channels("2.25.1") == 32
    assert logcheck.searched_channels(None) == 32


def test_the_thread_that_printed_first_is_read_alone():
    """Ranks print their systems interleaved: only the first thread's lines are read."""
    a = graphlog.print_system(run.load(run.preset_text("dgx-a100")))
    b = graphlog.print_system(run.load(run.preset_text("dgx-h100")))
    tagged = [("h:1:2 [0] NCCL INFO " + x, "h:1:3 [1] NCCL INFO " + y)
              for x, y in itertools.zip_longest(a, b, fillvalue="")]  # fmt: skip
    text = "\n".join(ln for pair in tagged for ln in pair)
    s, _ = graphlog.read(text)
    assert {d.sm for d in s.nodes[8]} == {80}  # the A100's, not the H100's


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda ls: ls[:3] + ["+ FOO[1.0] - GPU/0-1"] + ls[3:], "line 4: not a link"),
        (
            lambda ls: ls[:3] + ["       + PCI[24.0] - GPU/0-1 (0)"] + ls[3:],
            "line 4: its indentation",
        ),
        (lambda ls: ls[:-1], "no closing"),
        (
            lambda ls: ls[:2] + ["PCI/0-1 (0)"] + ls[2:],
            "line 3: the print starts each tree at a CPU",
        ),
        (lambda ls: [ls[0], ls[1].replace("(1/", "(x/")] + ls[2:], "line 2: cannot read (x/"),
    ],
)
def test_bad_lines_are_named(edit, message):
    lines = graphlog.print_system(run.load(run.preset_text("dgx-a100")))
    with pytest.raises(ParamError) as e:
        run.topology("\n".join(edit(lines)))
    assert e.value.field == "topology"
    assert message in e.value.message


def test_no_system_block_says_how_to_get_one():
    with pytest.raises(ParamError) as e:
        graphlog.read("h:1:2 [0] NCCL INFO Channel 00/02 :    0   1\n")
    assert "NCCL_DEBUG_SUBSYS=GRAPH" in e.value.message


def test_sm_from_nvlink_bandwidth():
    for preset, sm in (("dgx-a100", 80), ("dgx-h100", 90), ("dgx-b200", 100)):
        printed = graphlog.print_system(run.load(run.preset_text(preset)))
        assert graphlog.sm_from_nvlink(graphlog.read(as_log(printed))[0]) == sm


def test_ranks_from_this_servers_init_lines():
    """Since 2.28 a GPU's rank is not in the system print: it comes from the same server's
    `Init START` lines (rank and busId), not from another server's."""
    printed = graphlog.print_system(run.load(run.preset_text("dgx-h100")))
    s0 = run.load(run.preset_text("dgx-h100"))
    buses = [g.id & 0xFFFFFFFFFF for g in s0.gpus]
    init = (
        "{h}:1:2 [0] NCCL INFO comm 0x1 rank {r} nranks 16 cudaDev {d} nvmlDev {d} "
        "busId {b:x} commId 0x2 - Init START"
    )
    other = [init.format(h="hB", r=8 + i, d=i, b=b) for i, b in enumerate(buses)]
    mine = [init.format(h="hA", r=7 - i, d=i, b=b) for i, b in enumerate(buses)]
    text = "\n".join(other + mine) + "\n" + as_log(printed, "hA:1:2 [0] NCCL INFO ")
    s, _ = graphlog.read(text)
    assert {g.id & 0xFFFFFFFFFF: g.rank for g in s.gpus} == {b: 7 - i for i, b in enumerate(buses)}
