"""The order lab against an order model written here from NCCL v2.30.7-1's source alone: the
call's split into channels (src/enqueue.cc:583-713, with LL's traffic x 4 at :461 and
comm->nChannels tested at :666, 675), each part's chunk (calcCollChunking, :2221-2321), the
ring's loop (src/device/all_reduce.h:34-81) run forwards, and the trees as connect.cc builds
them (a chain inside each server, ncclGetDtree's trees across servers). Each element's sum is
then numpy's or ml_dtypes' in that order; the lab must match it bit for bit on every element of
windows placed on every channel and chunk boundary of a 1 MiB bucket."""

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from allreduce_explainer import api, dtypes
from allreduce_explainer.nccl.topology import tree_pattern
from allreduce_explainer.nccl.tuning import comm_channels, graphs
from allreduce_explainer.simulation import orders

NP = {"fp32": np.float32, "bf16": ml_dtypes.bfloat16, "fp16": np.float16}
MIB = 1 << 20


def div_up(a, b):
    return -(-a // b)


def call_channels(nbytes, nranks, algo, proto, comm_nc):
    """topoGetAlgoInfo's channel tuning (enqueue.cc:2088-2092): the thresholds of comm.h:49-51,
    x nRanks for the ring's LL (tuning.cc:594), and maxThreads of tuning.cc:244-256."""
    threshold = {"LL": 8, "LL128": 8, "Simple": 64}[proto]
    if (algo, proto) == ("Ring", "LL"):
        threshold *= nranks
    nt = {"LL": 512, "LL128": 640, "Simple": 512}[proto]
    nc = comm_nc
    while nbytes < nc * nt * threshold:
        if nc >= 2:
            nc -= 1
        else:
            break
    return nc


def chunk_size(algo, proto, nbytes, nranks, nnodes):
    """calcCollChunking (enqueue.cc:2221-2227, 2286-2294, 2321) for nChannels = 1."""
    buff = {"LL": 8 * 512 * 8 * 16, "LL128": 120 * 640 * 8 * 8, "Simple": 1 << 22}[proto]
    step = buff // 8
    steps = 4 if (proto, algo) == ("Simple", "Ring") else 1
    chunk = step * steps
    if proto == "LL":
        chunk //= 2
    if proto == "LL128":
        chunk = chunk // 16 * 15
    if (algo, proto) == ("Tree", "LL128"):
        ppn = nranks / nnodes
        nsteps = 1 + int(np.log2(nnodes)) + 0.1 * ppn
        while nbytes // chunk < nsteps * 64 / ppn and chunk > 131072:
            chunk //= 2
        while nbytes // chunk < nsteps * 16 / ppn and chunk > 32768:
            chunk //= 2
    grain = {"LL": 16, "LL128": 32 * 8 // 16 * 15 * 8, "Simple": 512}[proto]  # device.h:328-333
    return chunk // grain * grain


def cbd_parts(count, elt, proto, algo, nranks, nnodes, comm_nc):
    """scheduleCollTasksToPlan for one all-reduce alone in its plan, line by line, then
    ncclCollCbdPart (device.h:337-361): [(channel, first element, elements, chunkCount)]."""
    nc = call_channels(count * elt, nranks, algo, proto, comm_nc)
    task_traffic = count * elt * 2  # enqueue.cc:2738, ncclFuncTrafficPerByte(AllReduce) = 2
    if proto == "LL":
        task_traffic *= 4  # :461
    traffic = max(32 << 10, task_traffic)  # :597
    n_channels = min(nc, comm_nc)  # :598-599
    traffic_per_channel = div_up(traffic // n_channels, 16) * 16  # :618
    channel_id, current = 0, 0
    per_byte = 2 * (4 if proto == "LL" else 1)  # :657-658
    cell = div_up(div_up(32 << 10, per_byte), 16) * 16
    per_cell = cell // elt
    cells = div_up(count * elt, cell)
    traffic_per_cell = cell * per_byte
    cells_per_channel = min(cells, div_up(traffic_per_channel, traffic_per_cell))
    if channel_id + 1 == comm_nc:  # :666
        lo = cells
    else:
        lo = min(cells, div_up(traffic_per_channel - current, traffic_per_cell))
    mid = (cells - lo) // cells_per_channel
    hi = (cells - lo) % cells_per_channel
    used = (1 if lo else 0) + mid + (1 if hi else 0)
    if comm_nc < channel_id + used:  # :675
        mid = comm_nc - channel_id - 2
        cells_per_channel = (cells - lo) // (mid + 1)
        hi = cells_per_channel + (cells - lo) % (mid + 1)
    if hi == 0 and mid != 0:
        hi, mid = cells_per_channel, mid - 1
    assert lo != 0
    count_mid = cells_per_channel * per_cell if mid else 0
    count_lo, count_hi = lo * per_cell, hi * per_cell
    if count_hi:
        count_hi -= cells * per_cell - count
    else:
        count_lo -= cells * per_cell - count
    used = (1 if count_lo else 0) + mid + (1 if hi else 0)
    channel_lo, channel_hi = channel_id, channel_id + used - 1
    parts = []
    for c in range(channel_lo, channel_hi + 1):
        if c == channel_lo:
            at, n = 0, count_lo
        elif c == channel_hi:
            at, n = count_lo + mid * count_mid, count_hi
        else:
            at, n = count_lo + (c - channel_lo - 1) * count_mid, count_mid
        chunk = chunk_size(algo, proto, n * elt, nranks, nnodes) // elt
        parts.append((c, at, n, chunk))
    return parts


def ring_starts(count, parts, nranks, elt):
    """For every element: (channel, ring position whose step 0 sends it), runRing forwards."""
    channel = np.zeros(count, dtype=int)
    start = np.zeros(count, dtype=int)
    for c, grid, part_count, chunk_count in parts:
        loop = nranks * chunk_count
        for elem in range(0, part_count, loop):
            rem = part_count - elem
            if rem < loop:
                chunk_count = div_up(div_up(rem, nranks), 16 // elt) * (16 // elt)
            for ring_ix in range(nranks):
                chunk = (ring_ix + nranks - 1) % nranks  # all_reduce.h:43, step 0
                a = grid + elem + chunk * chunk_count
                b = grid + elem + min(chunk * chunk_count + chunk_count, rem)
                channel[a:b], start[a:b] = c, ring_ix
    return channel, start


def connect_trees(nranks, g, pattern, k, comm_nc):
    """Each channel's tree.down per rank and its root, as ncclTopoPreset and connectTrees set
    them: servers of g ranks chained in rank order, children of server d attached to its
    rank child0Index / child1Index (connect.cc:55-57) after the chain's, d0 before d1; trees.cc
    for the servers; channels [k, 2k) the second tree, copies past 2k by copyChannels."""
    nodes = nranks // g
    c0 = 0 if pattern == "TREE" else 1
    c1 = 1 if pattern == "SPLIT_TREE" else 0

    def btree(n, r):
        bit = 1
        while bit < n:
            if bit & r:
                break
            bit <<= 1
        if r == 0:
            return -1, -1, (bit >> 1 if n > 1 else -1)
        up = (r ^ bit) | (bit << 1)
        if up >= n:
            up = r ^ bit
        low = bit >> 1
        d0 = -1 if low == 0 else r - low
        d1 = -1 if low == 0 else r + low
        while d1 >= n:
            d1 = -1 if low == 0 else r + low
            low >>= 1
        return up, d0, d1

    def second(n, r):
        if n % 2 == 1:
            u, d0, d1 = btree(n, (r - 1 + n) % n)
            return tuple(-1 if x == -1 else (x + 1) % n for x in (u, d0, d1))
        u, d0, d1 = btree(n, n - 1 - r)
        return tuple(-1 if x == -1 else n - 1 - x for x in (u, d0, d1))

    trees = []
    for which in (btree, second):
        down = {r: [] for r in range(nranks)}
        up = {r: -1 for r in range(nranks)}
        for r in range(nranks):
            i = r % g
            up[r] = -1 if i == 0 else r - 1
            if i < g - 1:
                down[r].append(r + 1)
        for node in range(nodes):
            u, d0, d1 = which(nodes, node)
            if u != -1:
                up[node * g] = u * g + c0  # which of the parent's ranks does not change the sum
            if d0 != -1:
                down[node * g + c0].append(d0 * g)
            if d1 != -1:
                down[node * g + c1].append(d1 * g)
        roots = [r for r in range(nranks) if up[r] == -1]
        assert len(roots) == 1
        trees.append((down, roots[0]))
    per_channel = [trees[0]] * k + [trees[1]] * k
    while len(per_channel) < comm_nc:
        per_channel.append(per_channel[len(per_channel) - 2 * k])
    return per_channel


def np_ring(col, order, name):
    t = NP[name]
    acc = t(col[order[0]])
    for r in order[1:]:
        acc = t(acc + t(col[r]))
    return acc


def np_tree(col, down, root, name):
    t = NP[name]

    def up(v):
        acc = t(col[v])
        for c in down[v]:
            acc = t(acc + up(c))
        return acc

    return up(root)


def boundaries(*labels) -> list[int]:
    """The elements where any of the per-element labels changes (a new channel or chunk)."""
    change = np.zeros(len(labels[0]) - 1, dtype=bool)
    for lab in labels:
        change |= np.diff(lab) != 0
    return [0, *(np.flatnonzero(change) + 1).tolist()]


@pytest.mark.parametrize(("gpus", "name"), [(4, "bf16"), (6, "fp16"), (8, "bf16"), (8, "fp32")])
def test_multi_channel_ll_ring_and_trees_at_1_mib_match_nccls_order(gpus, name):
    dt = dtypes.FLOATS[name]
    elt = dt.itemsize
    count = MIB // elt
    system = api._order_system(gpus, api.DEFAULT_GPU)
    comm_nc = comm_channels(system)
    head = api.orders(gpus=gpus, dtype=name, length=8, bytes=MIB)
    ring_plan, tree_plan = head["nccl"]["ring"], head["nccl"]["tree"]
    assert ring_plan["protocol"] == "LL" and ring_plan["channels"] > 1  # the case under test
    nodes = system.nodes
    ring_parts = cbd_parts(count, elt, "LL", "Ring", gpus, nodes, comm_nc)
    tree_parts = cbd_parts(count, elt, tree_plan["protocol"], "Tree", gpus, nodes, comm_nc)
    assert [tuple(p) for p in ring_plan["parts"]] == ring_parts
    assert [tuple(p) for p in tree_plan["parts"]] == tree_parts
    channel, start = ring_starts(count, ring_parts, gpus, elt)
    gr = graphs(system)
    k = min(gr["Ring"].n_channels, gr["Tree"].n_channels)
    trees = connect_trees(gpus, system.gpus_per_node, tree_pattern(system), k, comm_nc)
    tree_channel = np.zeros(count, dtype=int)
    for c, at, n, _ in tree_parts:
        tree_channel[at : at + n] = c
    width = 64
    rng = np.random.default_rng(gpus)
    checked = 0
    edges = boundaries(channel, start, tree_channel)
    assert len(edges) > 2 * gpus  # several channels, each of several chunks
    for edge in edges[:: max(1, len(edges) // 12)]:
        at = min(max(0, edge - width // 2), count - width)
        values = orders.draw("wide", gpus, width, dt, int(rng.integers(1 << 30)))
        r = api.orders(gpus=gpus, dtype=name, values=values, bytes=MIB, offset=at)
        for j in range(width):
            col = [row[j] for row in values]
            first = int(start[at + j])
            want = np_ring(col, [(first + s) % gpus for s in range(gpus)], name)
            assert r["ring_first"][j] == first
            assert r["methods"]["ring"]["result"][j] == float(want)
            down, root = trees[tree_channel[at + j]]
            want = np_tree(col, down, root, name)
            assert r["methods"]["tree"]["result"][j] == float(want)
            checked += 1
    assert checked >= 8 * width


def test_nccls_split_of_100_000_bytes_on_8_gpus():
    """The review's worked case: BF16 on 8 GPUs, Ring LL, 3 channels of 18,432, 18,432 and
    13,136 elements (the old split, without LL's x 4, gave 6,144 / 22,528 / 21,328)."""
    system = api._order_system(8, api.DEFAULT_GPU)
    want = cbd_parts(50_000, 2, "LL", "Ring", 8, 1, comm_channels(system))
    assert [n for _, _, n, _ in want] == [18_432, 18_432, 13_136]
    r = api.orders(gpus=8, length=8, bytes=100_000)
    assert [p[2] for p in r["nccl"]["ring"]["parts"]] == [18_432, 18_432, 13_136]


@pytest.mark.parametrize(
    ("gpus", "gpu"), [(16, "H100 SXM"), (24, "H100 SXM"), (32, "A100 SXM"), (12, "A100 SXM")]
)
def test_trees_across_servers_match_connect_cc(gpus, gpu):
    """Several servers: the chain in each, the servers' heads in NCCL's two trees, attached as
    the search's pattern says (TREE on H100 with a card per GPU, BALANCED_TREE on A100)."""
    name = "bf16"
    dt = dtypes.FLOATS[name]
    system = api._order_system(gpus, gpu)
    assert system.nodes > 1
    gr = graphs(system)
    k = min(gr["Ring"].n_channels, gr["Tree"].n_channels)
    comm_nc = comm_channels(system)
    trees = connect_trees(gpus, system.gpus_per_node, tree_pattern(system), k, comm_nc)
    nbytes = 64 * MIB
    head = api.orders(gpus=gpus, length=8, bytes=nbytes, gpu=gpu)
    parts = [tuple(p) for p in head["nccl"]["tree"]["parts"]]
    assert len({p[0] // k % 2 for p in parts}) == 2  # both trees are used
    for c, at, _, _ in parts[:: max(1, len(parts) // 6)]:
        values = orders.draw("wide", gpus, 16, dt, c)
        r = api.orders(gpus=gpus, dtype=name, values=values, bytes=nbytes, offset=at, gpu=gpu)
        down, root = trees[c]
        for j in range(16):
            want = np_tree([row[j] for row in values], down, root, name)
            assert r["methods"]["tree"]["result"][j] == float(want)
        assert all(r["tree_index"][j] == c // k % 2 for j in range(16))


def test_a_debug_logs_rings_apply_per_channel():
    """Rings from a log ("Channel 00/24 : 0 2 1 3", ...), one per channel: channel c's element
    whose chunk starts at ring position s is added by rings[c mod len][s], [s + 1], ...; a log
    listing the search's channels only repeats them, as connect.cc:448-456 duplicates them. A
    ring position is the distance from rank 0 along the ring (init.cc:797-802), so a ring
    written from another GPU is read from rank 0."""
    gpus, name = 4, "bf16"
    dt = dtypes.FLOATS[name]
    count = MIB // dt.itemsize
    rings = [[0, 2, 1, 3], [3, 1, 0, 2], [1, 0, 3, 2]]
    system = api._order_system(gpus, api.DEFAULT_GPU)
    parts = cbd_parts(count, dt.itemsize, "LL", "Ring", gpus, 1, comm_channels(system))
    channel, start = ring_starts(count, parts, gpus, dt.itemsize)
    text = ";".join(" ".join(map(str, r)) for r in rings)
    width = 32
    for edge in boundaries(channel, start)[:: max(1, len(parts) // 4)]:
        at = min(max(0, edge - width // 2), count - width)
        values = orders.draw("wide", gpus, width, dt, edge)
        r = api.orders(gpus=gpus, dtype=name, values=values, bytes=MIB, offset=at, rings=text)
        for j in range(width):
            listed = rings[channel[at + j] % len(rings)]
            ring = listed[listed.index(0) :] + listed[: listed.index(0)]
            order = [ring[(start[at + j] + k) % gpus] for k in range(gpus)]
            assert r["ring_first"][j] == order[0]
            want = np_ring([row[j] for row in values], order, name)
            assert r["methods"]["ring"]["result"][j] == float(want)


def test_the_one_server_tree_is_the_chain_a_published_log_prints():
    """NVIDIA/nccl-tests#213's log of one server of 8 GPUs (tests/data/nccl-debug) prints
    "Trees [c] down0/down1/down2->rank->up" for ranks 2 and 4 on all 16 channels: the chain,
    3 -> 2 -> 1 and 5 -> 4 -> 3. The lab's trees on 8 GPUs of one server say the same."""
    log = Path(__file__).parents[2] / "data" / "nccl-debug" / "nccl-tests-213-1x8-16channels.txt"
    seen = 0
    for line in log.read_text().splitlines():
        if "NCCL INFO Trees" not in line:
            continue
        for d0, d1, d2, rank, up in re.findall(
            r"\[\d+\] (-?\d+)/(-?\d+)/(-?\d+)->(\d+)->(-?\d+)", line
        ):
            down = [int(d) for d in (d0, d1, d2) if d != "-1"]
            for t in (0, 1):  # one server: both trees are the chain
                assert orders.tree_children(8, 8, "BALANCED_TREE")[t][int(rank)] == down
                assert orders.tree_roots(8, 8)[t] == 0
            assert int(up) == int(rank) - 1
            seen += 1
    assert seen == 32


def test_a_ring_written_from_any_gpu_sums_as_the_same_ring():
    """NCCL prints every ring from rank 0 (src/graph/rings.cc:40-48) and indexes a rank by its
    distance from rank 0 (src/init.cc:797-802): the same cycle from another start is the same
    ring, so every rotation of every channel's ring gives the same bits and the same first GPU
    (the review's 48 cases gave 4,584 of 12,288 elements wrong before)."""
    gpus, name = 4, "bf16"
    rings = [[0, 2, 1, 3], [0, 3, 1, 2]]
    values = orders.draw("wide", gpus, 64, dtypes.FLOATS[name], 7)
    answers = set()
    for a in range(gpus):
        for b in range(gpus):
            turned = [rings[0][a:] + rings[0][:a], rings[1][b:] + rings[1][:b]]
            text = ";".join(",".join(map(str, r)) for r in turned)
            r = api.orders(gpus=gpus, dtype=name, values=values, bytes=MIB, rings=text)
            answers.add((tuple(r["methods"]["ring"]["result"]), tuple(r["ring_first"])))
    assert len(answers) == 1


# NVIDIA/nccl#671 ("Understand the tree topology", https://github.com/NVIDIA/nccl/issues/671), the
# log in sjeaugey's comment of 2022-04-15: rank 0 of one server of 4 GPUs, NCCL 2.12
ISSUE_671_RANK0 = (
    "como:60725:60748 [0] NCCL INFO Trees [0] 3/-1/-1->0->-1 [1] -1/-1/-1->0->3 "
    "[2] 3/-1/-1->0->-1 [3] -1/-1/-1->0->3 [4] 3/-1/-1->0->-1 [5] -1/-1/-1->0->3 "
    "[6] 3/-1/-1->0->-1 [7] -1/-1/-1->0->3"
)


def test_a_published_one_server_chain_is_not_rank_order():
    """Page 3's sentence: inside one server NCCL chains the GPUs in its tree search's order for
    the channel, not always rank order. In #671's log GPU 0 heads channel 0's chain with GPU 3
    after it, and ends channel 1's under GPU 3; rank order would put GPU 1 after GPU 0 and GPU
    0 at the head of every channel."""
    places = re.findall(r"\[(\d+)\] (-?\d+)/(-?\d+)/(-?\d+)->0->(-?\d+)", ISSUE_671_RANK0)
    by_channel = {int(c): (int(d0), int(up)) for c, d0, _, _, up in places}
    assert by_channel[0] == (3, -1) and by_channel[1] == (-1, 3)
    rank_order = orders.tree_children(4, 4, "TREE")[0]
    assert rank_order[0] == [1] != [by_channel[0][0]]


def test_chains_from_a_log_set_each_channels_tree_sum():
    """--chains: channel c's chain, head first, as the Trees lines link it (#671's channel 0
    starts 0 -> 3, channel 1 ends 3 -> 0). Each element is summed up its channel's chain, each
    GPU its own value then its child's partial sum (all_reduce.h:86-118); the oracle is numpy's
    on the same chain, and the default is rank order's."""
    gpus, name = 4, "bf16"
    dt = dtypes.FLOATS[name]
    chains = [[0, 3, 2, 1], [1, 2, 3, 0]]
    system = api._order_system(gpus, api.DEFAULT_GPU)
    best = api._order_plans(system, MIB, dt)
    parts = best["tree"].parts
    text = ";".join(",".join(map(str, c)) for c in chains)
    width = 32
    count = MIB // dt.itemsize
    for at in (0, count // 3, count - width):
        values = orders.draw("wide", gpus, width, dt, at)
        r = api.orders(gpus=gpus, dtype=name, values=values, bytes=MIB, offset=at, chains=text)
        plain = api.orders(gpus=gpus, dtype=name, values=values, bytes=MIB, offset=at)
        for j in range(width):
            ch = orders.part_of(at + j, parts).channel
            chain = chains[ch % len(chains)]
            down = {v: [] for v in range(gpus)} | {u: [c] for u, c in zip(chain, chain[1:])}
            want = np_tree([row[j] for row in values], down, chain[0], name)
            assert r["methods"]["tree"]["result"][j] == float(want)
            line = {v: [v + 1] if v + 1 < gpus else [] for v in range(gpus)}
            assert plain["methods"]["tree"]["result"][j] == float(
                np_tree([row[j] for row in values], line, 0, name)
            )
        assert r["methods"]["tree"]["ranks_agree"]
