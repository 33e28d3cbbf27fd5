"""Page 10 with NCCL's model: the default, the references, the pasted log's NCCL fit and its
"use the fitted figures", the examples menu, the accuracy band and the rule of thumb, and GPU
memory in GiB."""

import json
import re

import pytest

import helpers
from allreduce_explainer import nccl
from allreduce_explainer.catalog import hardware, measured
from allreduce_explainer.logs import examples, explain
from allreduce_explainer.logs import explain as ex
from allreduce_explainer.performance import fitted
from allreduce_explainer.training import calculator
from allreduce_explainer.widgets import cluster as widget
from helpers import field_of

DATA = helpers.DATA / "nccl-tests"
LOG_309 = (DATA / "nccl-tests-309-16xh100-2nodes-ib-ndr.txt").read_text()


def test_nccl_is_the_default_of_the_calculator_and_the_widget():
    r = calculator.calc()
    assert r == calculator.calc(algorithm="nccl")
    assert r["algorithm"] == "nccl"
    s = widget.cluster()
    assert s["params"]["algorithm"] == "nccl"
    keep = ("allreduce_s", "busbw_GBps", "algbw_GBps", "nccl_algorithm", "nccl_protocol")
    assert {k: s["result"][k] for k in keep} == {k: r[k] for k in keep}
    # the pick, by NCCL's own choice function on the same system
    pick = nccl.choose("AllReduce", 14_000_000_000, nccl.System("H100 SXM", 64, 8, 8, 400))
    assert (r["nccl_algorithm"], r["nccl_protocol"]) == (pick.algorithm, pick.protocol)
    assert r["allreduce_s"] == pytest.approx(pick.time_us * 1e-6)
    text = s["readouts"]["algorithm"]
    assert pick.algorithm in text and pick.protocol in text and "seed" not in text


def test_the_nccl_release_menu_picks_the_model():
    """Four servers of one A100, a 2 MB gradient: both releases run the ring with LL128, and
    2.31.0a7 charges each of its 2(n - 1) = 6 network steps the ring's own LL128 latency, 4.0 us,
    where 2.30.7 charges the tree's, 8.5 (test_releases.py cites the lines). The menu and calc's
    nccl_version reach the model; the newest tagged release is the default; another release is
    refused."""
    assert widget.cluster()["params"]["nccl_version"] == nccl.NCCL_VERSION == "2.30.7"
    own = {}
    for v in ("2.30.7", "2.31.0a7"):
        p = {"params": 1e6, "gpus": 4, "gpus_per_node": 1, "gpu": "A100 SXM", "nccl_version": v}
        s = widget.cluster(p)
        r = s["result"]
        assert (r["nccl_algorithm"], r["nccl_protocol"], r["nccl_version"]) == ("Ring", "LL128", v)
        assert f"NCCL {v}'s choice" in s["readouts"]["algorithm"]
        c = calculator.calc(params=1e6, gpus=4, gpus_per_node=1, gpu="A100 SXM", nccl_version=v)
        own[v] = c["nccl_time_s"]
    assert own["2.30.7"] - own["2.31.0a7"] == pytest.approx(6 * (8.5 - 4.0) * 1e-6)
    assert field_of(widget.cluster, {"nccl_version": "2.29.7"}) == "nccl_version"


def test_the_references_stay_and_nvls_beats_the_bound():
    r = calculator.calc()
    # the line-rate closed forms, and the bound below NCCL's ring across servers
    assert r["times_s"]["ring"] == pytest.approx(2 * 63 / 64 * 14e9 / 50e9)
    assert r["allreduce_s"] >= r["lower_bound_s"]
    s = widget.cluster()
    assert "single ring 551 ms" in s["readouts"]["ideal"]  # one unit for the block: ms
    assert "SHARP" in s["readouts"]["bound"]
    # one server of 8 H100: NCCL picks NVLS, in-network reduction, below the bound
    one = calculator.calc(gpus=8)
    assert one["nccl_algorithm"] == "NVLS"
    assert one["allreduce_s"] < one["lower_bound_s"]


def test_teaching_tree_is_named_and_nccl_algorithms_can_be_forced():
    assert "not NCCL's" in widget.ALGORITHM_TEXT["tree"]
    assert all("seed" not in t for t in widget.ALGORITHM_TEXT.values())
    tree = calculator.calc(algorithm="nccl-tree")
    ring = calculator.calc(algorithm="nccl-ring")
    assert (tree["nccl_algorithm"], ring["nccl_algorithm"]) == ("Tree", "Ring")
    # NCCL's tree across 8 servers is several times faster than the teaching tree
    assert tree["allreduce_s"] * 3 < tree["times_s"]["tree"]


def test_nccl_refuses_other_gpus_in_the_cli_and_the_page_falls_back():
    assert field_of(calculator.calc, gpu="MI300X", gpus=8) == "gpu"
    s = widget.cluster({"gpu": "MI300X", "gpus": 8})
    assert s["result"]["algorithm"] == "multi-ring"  # the fastest closed form on the mesh
    assert "covers NVIDIA GPUs, not MI300X" in s["readouts"]["algorithm"]


def test_memory_is_compared_in_gib():
    assert hardware.GIB == 2**30
    c = calculator.cluster_for()
    m = calculator.memory(5_100_000_000, c)  # 81.6e9 bytes: above 80e9, below 80 GiB
    assert m["gpu_bytes"] == 80 * 2**30 and m["fits"]
    assert not calculator.memory(5_400_000_000, c)["fits"]  # 86.4e9 > 85.9e9
    assert "80 GiB" in widget.cluster()["readouts"]["memory"]


def test_the_custom_count_is_shown_in_words():
    assert widget.cluster()["readouts"]["params_words"] == "= 7 billion parameters"
    s = widget.cluster({"params": 70_000_000})
    assert s["readouts"]["params_words"] == "= 70 million parameters"


def test_log_panel_shows_both_fits_the_regimes_and_the_prediction():
    s = widget.cluster({"log": LOG_309})
    ref = explain.read_log(LOG_309, net=explain.Network(gpu="H100 SXM", nic_Gbps=400))
    nf = ref["nccl_fit"]
    text = s["readouts"]["log_fit"]
    assert f"{100 * nf['rms_rel_error']:.2g} %" in text and "alpha-beta" in text
    table = s["figures"]["busbw"]["table"]
    assert table["columns"][4] == "likely regime" and "measured / predicted" in table["columns"]
    last = table["rows"][-1]
    assert last[4].startswith(nf["rows"][-1]["regime"]) and "above line rate" in last[4]
    ratio = ref["prediction"]["rows"][-1]["ratio"]
    assert last[table["columns"].index("measured / predicted")] == f"{ratio:.2f}"
    assert "400 GB/s" in s["readouts"]["log_line_rate"]


def test_using_the_fit_reproduces_the_measured_busbw():
    """After "use the fitted figures", the calculator gives the run's busbw."""
    s = widget.cluster({"log": LOG_309})
    apply = s["fit_apply"]
    assert apply["algorithm"] == "nccl" and apply["network"] == "custom"
    after = widget.cluster({"log": LOG_309, **apply})
    p = after["params"]
    measured_row = max(explain.read_log(LOG_309)["rows"], key=lambda x: x["size_bytes"])
    c = calculator.cluster_for(p["gpu"], 16, 8, p["nic_gbps"])
    got = calculator.allreduce(c, p["algorithm"], measured_row["size_bytes"])["busbw_GBps"]
    assert got == pytest.approx(measured_row["busbw_GBps"], rel=0.10)
    # and the table's calculator column says the same
    table = after["figures"]["busbw"]["table"]
    assert float(table["rows"][-1][-1]) == pytest.approx(measured_row["busbw_GBps"], rel=0.10)


def test_memory_readout_is_in_gib_throughout():
    text = widget.cluster()["readouts"]["memory"]
    need = 16 * 7e9 / 2**30  # mixed-precision Adam, 2 + 2 + 12 bytes per parameter
    assert f"no: {need:.0f} GiB needed, 80 GiB on the GPU" in text
    assert f"{16 * 7e9 / 64 / 2**30:.3g} GiB each" in text
    assert " GB" not in text.replace("GiB", "")
    f = widget.facts()
    assert (f["cluster_memory"], f["cluster_h100_memory"]) == (f"{need:.0f} GiB", "80 GiB")


EXAMPLE_FILES = {
    "nvls-1node": "nccl-tests-290-8xh100-1node-nvls.txt",
    "ib-2nodes": "nccl-tests-309-16xh100-2nodes-ib-ndr.txt",
    "ring-1node": "together-8xh100-1node-ring.txt",
    "debug-2nodes": "../nccl-debug/nccl-tests-319-2x8xh100-rdma-plugin-nccl-algo-ring.txt",
}


def test_the_examples_are_the_cited_logs_verbatim_with_their_source():
    sources = {e["file"]: e for e in json.loads((DATA / "SOURCES.json").read_text())["logs"]}
    debug = json.loads((DATA.parent / "nccl-debug" / "SOURCES.json").read_text())["logs"]
    sources |= {f"../nccl-debug/{e['file']}": e | {"file": e["file"]} for e in debug}
    assert set(examples.EXAMPLES) == set(EXAMPLE_FILES)
    for key, name in EXAMPLE_FILES.items():
        e = examples.EXAMPLES[key]
        assert (DATA / name).read_text() == e.text == examples.text(key), key
        cited = sources[name]
        assert (e.file, e.source, e.url, e.where) == tuple(
            cited[k] for k in ("file", "source", "url", "where")
        )
    assert {(DATA / name).read_text() for name in EXAMPLE_FILES.values()} == examples.TEXTS


@pytest.mark.parametrize("key", sorted(EXAMPLE_FILES))
def test_loading_an_example_fits_as_parsing_its_file(key):
    """The oracle: the file of tests/data read by logs.explain, as the CLI reads it."""
    text = (DATA / EXAMPLE_FILES[key]).read_text()
    s = widget.cluster({"example": key})
    assert s["params"]["example"] == key and s["params"]["log"] == text
    ref = explain.read_log(text, net=explain.Network(gpu="H100 SXM", nic_Gbps=400))
    assert s["readouts"]["log_fit"] == widget.cluster({"log": text})["readouts"]["log_fit"]
    fit = ref["fit"]
    assert f"busbw {fit['busbw_GBps']:.4g} GB/s" in s["readouts"]["log_fit"]
    assert examples.EXAMPLES[key].url in s["readouts"]["log_status"]
    # the measured points drawn are the file's rows, in order
    rows = [r for r in ref["rows"] if r["time_us"] and r["size_bytes"] > 0]
    drawn = s["figures"]["busbw"]["figure"]["data"][0]
    assert drawn["x"] == [r["size_bytes"] for r in rows]
    assert drawn["y"] == [r["busbw_GBps"] for r in rows]


def test_a_paste_wins_over_the_menu_and_the_menu_switches_examples():
    s = widget.cluster({"example": "ib-2nodes", "log": "my own log"})
    assert (s["params"]["example"], s["params"]["log"]) == ("", "my own log")
    # the box holds one example's text: choosing another replaces it
    first = widget.cluster({"example": "ib-2nodes"})["params"]
    s = widget.cluster({**first, "example": "ring-1node"})
    assert s["params"]["log"] == (DATA / EXAMPLE_FILES["ring-1node"]).read_text()
    assert widget.cluster({"example": "ib-2nodes", "run": 1})["params"]["log_file"] == ""
    assert field_of(widget.cluster, {"example": "no-such-run"}) == "example"


def test_band_facts_are_the_layers_validation_and_nccls_own_miss():
    """The bands quoted are fitted.VALIDATION's row for the default cluster's class (64 H100s,
    8 a server, one process per GPU) at 4-64 MiB: its median and its own nine-in-ten figure,
    never another class's; NCCL's own mid-size miss is computed
    here from each cited log parsed afresh, NCCL's own busbw against its out-of-place busbw at
    1-64 MiB."""

    f = widget.facts()
    klass = "Hopper, across servers, one process per GPU"
    assert f["band_class"] == klass
    (mid,) = [v[3:] for v in fitted.VALIDATION if v[:3] == (klass, 4 << 20, 64 << 20)]
    assert f["band_mid_median"] == f"{100 * mid[0]:.0f} %"
    assert f["band_mid_within"] == f"{100 * mid[1]:.0f} %"
    covered, judged = fitted.COVERAGE
    assert 0 < covered < judged and f["band_coverage"] == f"{100 * covered / judged:.0f} %"
    misses = []
    for c in measured.CURVES:
        rows = explain.read_log((DATA / c.file).read_text())["rows"]
        system = nccl.System(c.gpu, c.gpus, c.gpus_per_node, c.gpus_per_node, c.nic_Gbps or 400)
        algo = None if c.algorithm == "nccl" else "Ring"
        for r in rows:
            if 2**20 <= r["size_bytes"] <= 2**26:
                own = nccl.choose("AllReduce", r["size_bytes"], system, algorithm=algo)
                misses.append(own.nccl_busbw_GBps / r["busbw_GBps"] - 1)
    assert f["nccl_own_mid"] == f"{100 * max(misses):.0f} %"
    assert max(misses) > 0.5 > mid[0]  # NCCL's own far off at mid sizes; the layer close


def test_rule_of_thumb_is_the_cards_yardstick():
    f = widget.facts()
    assert f["cluster_rule_yardstick"] == "400 GB/s"  # 8 cards × 400 Gb/s ÷ 8
    assert f["cluster_rule_floor"] == "320 GB/s" and f["cluster_rule_share"] == "80 %"
    # NCCL's model on the default passes its own rule
    assert calculator.calc()["busbw_GBps"] > 320


# ---- The headline: the answer first, figures held against an oracle written here ------------

H100_PEAK_FLOPS = 989e12  # dense BF16 (NVIDIA's H100 SXM data sheet), the GPU's default


@pytest.mark.parametrize("model", ["gpt2", "llama3-8b", "llama3-70b"])
def test_the_headline_is_the_all_reduce_time_and_its_share_of_the_step(model):
    """64 H100s in servers of 8 with a 400 Gb/s card per GPU, the widget's defaults: the time is
    NCCL's own pick on that system, which moves the gradient's bytes at its bus bandwidth
    (time = S · 2(n−1)/n ÷ busbw); the share is that time over compute + that time, compute
    being 6·P·T at 40 % of the peak."""
    s = widget.cluster({"model": model})
    assert [k for k, _ in widget.RECORDS[0].headline] == [
        "allreduce", "share_no_overlap", "share_with_overlap"
    ]  # fmt: skip
    params = calculator.models.get(model).params
    size = 2 * params  # BF16 gradients
    pick = nccl.choose("AllReduce", size, nccl.System("H100 SXM", 64, 8, 8, 400))
    time = pick.time_us * 1e-6
    assert time == pytest.approx(size * 2 * 63 / 64 / (pick.busbw_GBps * 1e9), rel=1e-9)
    compute = 6 * params * 16384 / (H100_PEAK_FLOPS * 0.4)
    share = time / (compute + time)
    r = s["result"]
    assert (r["allreduce_s"], r["compute_s"]) == pytest.approx((time, compute), rel=1e-9)
    assert r["share_no_overlap"] == pytest.approx(share, rel=1e-9)
    exposed = r["exposed_s"]
    assert 0 <= exposed <= time
    # the headline writes these figures, in the pages' one format for each
    ro = s["readouts"]
    assert ro["allreduce"] == widget.fmt.seconds(time)
    assert ro["share_no_overlap"] == widget.pct(share)
    assert ro["share_with_overlap"] == widget.pct(exposed / (compute + exposed))
    assert ro["exposed"] == f"{widget.fmt.seconds(exposed)} after {r['buckets']} buckets"


@pytest.mark.parametrize("model", ["gpt2", "llama3-70b"])
def test_the_headline_of_a_single_ring_is_its_closed_form(model):
    """A ring over 64 GPUs crosses 8 servers' cards: 2(n−1)/n · S at the card's 50 GB/s."""
    s = widget.cluster({"model": model, "algorithm": "ring"})
    size = 2 * calculator.models.get(model).params
    time = 2 * 63 / 64 * size / 50e9
    assert s["result"]["allreduce_s"] == pytest.approx(time, rel=1e-12)
    assert s["readouts"]["allreduce"] == widget.fmt.seconds(time)


def test_the_menu_leads_with_three_models_and_keeps_every_old_value():
    """NCCL's choice, a single ring and one ring per card first; the five others under "more
    models"; every value an old link may carry is still accepted and computed."""
    p = widget.SPEC["algorithm"]
    (first, main), (heading, more) = p.menu()
    assert first == "" and [v for v, _ in main] == ["nccl", "ring", "multi-ring"]
    assert heading == "more models"
    old = ("nccl", "nccl-ring", "nccl-tree", "ring", "multi-ring", "tree", "hierarchical", "auto")
    assert sorted(v for v, _ in main + more) == sorted(old)
    for value in old:
        s = widget.cluster({"algorithm": value, "gpus": 16})
        assert s["params"]["algorithm"] == value
        assert s["result"]["algorithm_asked"] == value
    assert field_of(widget.cluster, {"algorithm": "rings"}) == "algorithm"


def test_an_opened_file_is_not_sent_back_unless_the_widget_changed_it():
    """views.unchanged_left_out: the opened log, as asked, is left out of the answer's params
    (widget.js keeps the page's copy); an example clears it and the cleared value is sent."""
    log = examples.text("ib-2nodes")
    kept = widget.cluster({"log_file": log})
    assert "log_file" not in kept["params"]
    assert kept["readouts"]["log_fit"] == widget.cluster({"log": log})["readouts"]["log_fit"]
    cleared = widget.cluster({"log_file": log, "example": "ring-1node"})
    assert cleared["params"]["log_file"] == ""
    assert widget.cluster({})["params"]["log_file"] == ""


@pytest.mark.parametrize(
    "path", sorted((helpers.DATA / "nccl-debug").glob("*.[tl][xo][tg]")), ids=lambda p: p.name
)
def test_the_reader_never_lists_a_line_it_used_as_unreadable(path):
    """Every published NCCL_DEBUG=INFO excerpt, pasted: no line with NCCL's INFO tag, nor a row
    of its algorithm matrix, is listed among the lines that could not be read."""
    text = path.read_text(encoding="utf-8")
    if len(text.encode()) > widget_max_bytes():
        pytest.skip("larger than the panel takes")
    lines = text.splitlines()
    listed = re.findall(
        r"^line (\d+):", widget.cluster({"log": text})["readouts"]["log_skipped"], re.M
    )
    used = [n for n in map(int, listed) if "NCCL INFO " in lines[n - 1] or "|" in lines[n - 1]]
    assert used == []


def widget_max_bytes() -> int:

    return ex.MAX_LOG_BYTES
