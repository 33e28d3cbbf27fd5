"""The performance layer against the cited sweeps, read afresh here: every clean sweep followed
within +/-15 % in busbw from 4 MiB and +/-10 % from 256 MiB (wider, and said so, in the 1-4 MiB
LL/LL128 region); its figures the ones bench/performance.py fits; the launch floor, the
network-bound ring, and the shape of the time."""

from __future__ import annotations

import functools
import json
import math
import re
import statistics
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allreduce_explainer import nccl, performance
from allreduce_explainer.cli import main
from allreduce_explainer.nccl.model import performance_call
from allreduce_explainer.nccl.tuning import tables, terms
from allreduce_explainer.performance import fitted, layer
from helpers import DATA, ROOT, examples

SWEEPS = json.loads((DATA / "nccl-tests" / "SWEEPS.json").read_text())["sweeps"]
CLEAN = [s for s in SWEEPS if s["use"] == "fit"]
MiB, GiB = 1 << 20, 1 << 30
# size, count, type, then redop and root where printed (an all-reduce's root is -1; logs before
# nccl-tests printed root have the redop alone), time, algbw, busbw
ROW = re.compile(
    r"^\s*(?:\S+:\s*)?(\d+)\s+\d+\s+\w+\s+(?:[a-z]+\s+(?:-1\s+)?)?([\d.]+)\s+([\d.]+)\s+([\d.]+)"
)


def measured(sweep: dict) -> list[tuple[int, float]]:
    """(bytes, busbw) as published: a log's out-of-place columns (size, count, type, redop, root,
    time, algbw, busbw), or an Azure table's rows (powers of two from 1 KiB, in order)."""
    text = (DATA / "nccl-tests" / sweep["file"]).read_text()
    if sweep["kind"] == "table":
        rows = re.findall(r"^\|\s*[\d.]+[KMG]\s*\|\s*([\d.]+)\s*\|", text, re.M)
        return [(1024 << i, float(b)) for i, b in enumerate(rows)]
    out = []
    for line in text.splitlines():
        m = ROW.match(line)
        if m and not line.lstrip().startswith("#"):
            out.append((int(m.group(1)), float(m.group(4))))
    return out


def pick(sweep: dict, n: int) -> nccl.Candidate:
    s = nccl.System(**sweep["system"], nccl_version=nccl.nearest(sweep["nccl_version"]).version)
    return nccl.choose(
        "AllReduce", n, s, algorithm=sweep["algorithm"], gpus_per_thread=sweep["gpus_per_thread"]
    )


def predicted(sweep: dict, n: int) -> float:
    return pick(sweep, n).busbw_GBps


def low_protocol(sweep: dict, n: int) -> bool:
    """Where NCCL picks LL or LL128: what those reach depends on the NCCL version (two 8 x A100
    servers measured 55 % apart at 1 MiB), so the band there is wider."""
    return pick(sweep, n).protocol != "Simple"


# Rows no single model can follow within the band, and why.
EXCEPTIONS = {
    # Azure's 8 x H100 and 8 x H200 pages (NCCL 2.18.5 and 2.20.5; one model for both, the
    # same NVLink and NVLS) measure 43.70 and 52.96 GB/s at 1 MiB, 21 % apart: the layer sits
    # between them
    ("azure-nd-h200-v5", MiB): 0.20,
    # 191.3 us at 2 MiB against 82.2 at 1 MiB and 151.1 at 4 MiB: a call slower than one of
    # twice its bytes, which no time that grows with size follows
    ("nccl-tests-309-4x8xh100", 2 * MiB): 0.50,
    # two clusters of the same 2 x 8 H100 NDR hardware, both called healthy in nccl-tests#309,
    # measured 118.6 and 103.8 GB/s at 8 MiB (14 % apart): the layer sits between them
    ("nccl-tests-309-2x8xh100-cluster2", 8 * MiB): 0.18,
    # busbw rises 16 % from 64 to 128 MiB (340.67 to 394.17 GB/s) and 36 % from 128 to 256 MiB
    # (535.29): the 128 MiB row lies below any smooth curve through its neighbours (17 % off
    # with its cluster left out in every layer bench/performance.py has fitted)
    ("dstack-gcp-a4-2x8xb200", 128 * MiB): 0.18,
}


@pytest.mark.parametrize("sweep", CLEAN, ids=[s["key"] for s in CLEAN])
def test_every_clean_sweep_is_followed(sweep):
    rows = [(n, b) for n, b in measured(sweep) if MiB <= n <= 16 * GiB]
    assert rows, sweep["file"]
    for n, busbw in rows:
        miss = predicted(sweep, n) / busbw - 1
        band = 0.10 if n >= 256 * MiB else 0.40 if low_protocol(sweep, n) else 0.15
        band = EXCEPTIONS.get((sweep["key"], n), band)
        assert abs(miss) <= band, (sweep["key"], n, f"{miss:+.1%}")


def test_the_ll_region_is_the_one_wider_band():
    """Where NCCL picks Simple every clean sweep is within 15 % from 1 MiB; where it picks LL or
    LL128 some are not (so the wider band above is needed, and says where), none above 16 MiB."""
    rows = [(s, n, b) for s in CLEAN for n, b in measured(s) if MiB <= n < 256 * MiB]
    low = [(n, abs(predicted(s, n) / b - 1)) for s, n, b in rows if low_protocol(s, n)]
    assert max(e for _, e in low) > 0.15
    assert max(n for n, e in low if e > 0.15) <= 16 * MiB


def test_the_fitted_figures_are_the_fit_of_the_sweeps():
    """fitted.py is what bench/performance.py finds on SWEEPS.json: every figure traceable."""
    sys.path.insert(0, str(ROOT / "bench"))
    import performance as bench  # bench/performance.py

    sweeps = bench.sweeps()
    assert list(sweeps) == list(fitted.FITTED_ON) == [s["key"] for s in CLEAN]
    launch = bench.launch_floor(sweeps)
    rows = [r for sw in sweeps.values() for r in bench.timed_rows(sw, *bench.FIT_RANGE)]
    again = bench.fit(rows, launch)
    p = fitted.PARAMETERS
    assert again.ramp_power == pytest.approx(p.ramp_power, rel=1e-4)
    assert launch == pytest.approx(p.launch_us_per_gpu, rel=1e-4)
    for field in ("ramp_bytes", "latency", "protocol", "asymptote"):
        assert getattr(again, field) == pytest.approx(getattr(p, field), rel=1e-4), field


def test_the_launch_floor_is_what_one_thread_for_8_gpus_measures():
    """together's -g 8 ring: 8 B to 64 KiB all take 34.5-35.7 us (one thread launching eight
    GPUs' kernels); the layer's floor for 8 GPUs per thread is within 5 % of their median, and
    one process per GPU has none."""
    ring = next(s for s in CLEAN if s["key"] == "together-8xh100-ring")
    text = (DATA / "nccl-tests" / ring["file"]).read_text()
    small = sorted(
        float(m.group(2))
        for m in (
            re.match(r"^\s*(\d+)\s+\d+\s+float\s+sum\s+-1\s+([\d.]+)", x) for x in text.splitlines()
        )
        if m and int(m.group(1)) <= 64 << 10
    )
    median = small[len(small) // 2]
    s = nccl.System("H100 SXM", 8, 8)
    c = nccl.choose("AllReduce", 1024, s, algorithm="Ring", gpus_per_thread=8)
    assert c.time_us == pytest.approx(median, rel=0.05)
    assert nccl.choose("AllReduce", 1024, s, algorithm="Ring").time_us < 0.6 * median


def test_a_ring_limited_by_its_cards_gets_no_nvlink_factor():
    """nccl-tests#309, 4 servers x 8 H100, 8 x 400 Gb/s cards each: 365.84 GB/s measured.
    NCCL's own ring is 8 cards x 48 GB/s = 384; the one-server ring's NVLink asymptote must not
    lift it (it gave 388-392 before): the layer's ring across servers is at most NCCL's own."""
    for servers in (4, 8):
        s = nccl.System("H100 SXM", 8 * servers, 8, 8, 400.0)
        c = nccl.choose("AllReduce", 8 * GiB, s, algorithm="Ring")
        assert c.busbw_GBps <= c.nccl_busbw_GBps <= 384.0 + 1e-9
        assert abs(c.busbw_GBps / 365.84 - 1) < 0.06


def test_an_across_servers_factor_is_not_applied_to_one_server():
    """The one Blackwell sweep (GCP A4, 2 x 8 B200, NVLSTree) runs 38 % above NCCL's own
    figure at 8 GiB (683.52 GB/s against 496): that factor belongs to NVLSTree across servers;
    one server of B200s (no sweep fitted) keeps NCCL's own NVLS figure."""
    across = nccl.choose("AllReduce", 8 * GiB, nccl.System("B200", 16, 8, 8, 400.0))
    assert across.algorithm == "NVLSTree" and abs(across.busbw_GBps / 683.52 - 1) < 0.05
    one = nccl.choose("AllReduce", 8 * GiB, nccl.System("B200", 8, 8))
    assert one.algorithm == "NVLS" and one.busbw_GBps <= one.nccl_busbw_GBps


GENERATION = {"A100 SXM": "Ampere", "H100 SXM": "Hopper", "H200 SXM": "Hopper", "B200": "Blackwell"}
EDGES = (64 << 10, MiB, 4 * MiB, 64 * MiB, 256 * MiB, GiB, math.inf)


def sweep_class(s: dict) -> str:
    """Generation x one server or across servers x launch mode, named here from SWEEPS.json."""
    sysd = s["system"]
    scope = "one server" if sysd["gpus"] == sysd["gpus_per_node"] else "across servers"
    launch = "one process per GPU" if s["gpus_per_thread"] == 1 else "one process for several GPUs"
    return f"{GENERATION[sysd['gpu']]}, {scope}, {launch}"


def bus_time_us(n: int, busbw: float, gpus: int) -> float:
    return n / (busbw * 1e3) * 2 * (gpus - 1) / gpus


def launch_floor(sweeps: list[dict]) -> float:
    """The launch floor from these sweeps alone: per sweep with one thread for G > 1 GPUs, its
    16-64 KiB rows' median time over G; the median of those (0 with none)."""
    per = []
    for s in sweeps:
        gpus, g = s["system"]["gpus"], s["gpus_per_thread"]
        small = [bus_time_us(n, b, gpus) for n, b in measured(s) if 16 << 10 <= n <= 64 << 10]
        if g > 1 and small:
            per.append(statistics.median(small) / g)
    return statistics.median(per) if per else 0.0


@functools.cache
def held_out() -> tuple[tuple[str, str, str, int, float], ...]:
    """(sweep, cluster, class, bytes, predicted / measured busbw - 1) for every fitted row from
    64 KiB to 8 GiB: each cluster of SWEEPS.json left out of the fit (every factor and the launch
    floor, computed here, refitted without it), its rows' busbw predicted and held against the
    published figures read afresh."""
    sys.path.insert(0, str(ROOT / "bench"))
    import performance as bench  # bench/performance.py: the fit itself

    lo, hi = bench.FIT_RANGE
    sweeps = bench.sweeps()
    out = []
    for cluster in {s["cluster"] for s in CLEAN}:
        others = [s for s in CLEAN if s["cluster"] != cluster]
        rows = [r for s in others for r in bench.timed_rows(sweeps[s["key"]], lo, hi)]
        p = bench.fit(rows, launch_floor(others))
        for s in (s for s in CLEAN if s["cluster"] == cluster):
            system = nccl.System(**s["system"])
            for n, busbw in measured(s):
                if not lo <= n <= hi:
                    continue
                c = pick(s, n)
                e = tables(system)[(c.algorithm, c.protocol)]
                lat, bw = terms(system, "AllReduce", c.algorithm, c.protocol, e, n)
                call = performance_call(
                    system, c.algorithm, c.protocol, lat, bw, n, s["gpus_per_thread"]
                )
                ours = n / (layer.time_us(p, call) * 1e3) * 2 * (system.gpus - 1) / system.gpus
                out.append((s["key"], cluster, sweep_class(s), n, ours / busbw - 1))
    return tuple(out)


def size_band(n: int) -> tuple[int, float]:
    return next(b for b in zip(EDGES, EDGES[1:]) if b[0] <= n < b[1])


def same(a: int, b: int) -> bool:
    """Two sizes in one size band."""
    return size_band(a) == size_band(b)


def near(a: int, b: int) -> bool:
    """Two sizes in one size band or in two next to each other (a band's figure takes both)."""
    return abs(EDGES.index(size_band(a)[0]) - EDGES.index(size_band(b)[0])) <= 1


def ninth(es: list[float]) -> float:
    """The ceil(0.9 n)-th smallest."""
    return sorted(es)[math.ceil(0.9 * len(es) - 1e-9) - 1]


def band_figure(rows: list[tuple[int, float]], n: int) -> float:
    """A band's figure at size n from (bytes, |error|) rows of one class: nine in ten of the rows
    at n's size band and the bands either side, never less than nine in ten of n's band's own."""
    return max(ninth([e for m, e in rows if same(m, n)]), ninth([e for m, e in rows if near(m, n)]))


def test_each_class_band_is_its_clusters_predicted_by_the_others():
    """Every (class, size band) of fitted.VALIDATION recomputed here from the held-out rows:
    per class and band the median, the band's figure (band_figure: nine in ten, the ceil(0.9 n)-th
    smallest, of the class's rows at the band and the bands either side, never below its own
    rows'), and the worst |error|, rows, runs and clusters."""
    errors: dict[tuple, list[tuple[str, str, float]]] = {}
    for key, cluster, klass, n, e in held_out():
        errors.setdefault((klass, *size_band(n)), []).append((key, cluster, abs(e)))
    assert {v[:3] for v in fitted.VALIDATION} == set(errors)
    for klass, b_lo, b_hi, median, within, worst, n_rows, runs, clusters in fitted.VALIDATION:
        got = errors[(klass, b_lo, b_hi)]
        es = [e for _, _, e in got]
        assert median == pytest.approx(statistics.median(es), abs=2e-4)
        window = [abs(e) for *_, k, n, e in held_out() if k == klass and near(n, b_lo)]
        inside = [e for e in window if e <= within + 2e-4]
        assert len(inside) >= 0.9 * len(window)  # nine in ten of the neighbourhood within it
        assert len([e for e in es if e <= within + 2e-4]) >= 0.9 * len(es)  # and of its own
        assert within == pytest.approx(
            band_figure([(n, abs(e)) for *_, k, n, e in held_out() if k == klass], b_lo), abs=2e-4
        )
        assert worst == pytest.approx(max(es), abs=2e-4)
        assert (n_rows, runs, clusters) == (
            len(es),
            len({k for k, _, _ in got}),
            len({c for _, c, _ in got}),
        )


def test_a_band_is_its_own_class_s_and_borrows_no_other_s():
    """A band's figures are its class's own held-out rows' at that size band and, for its figure,
    the bands either side (recomputed here from the rows), shown whether or not the class earned
    the band; no other class's row changes them: a Hopper server at 64 KiB-1 MiB is not told
    Blackwell's 173 %."""
    by_class: dict[tuple, list[float]] = {}
    for _, _, klass, n, e in held_out():
        by_class.setdefault((klass, *size_band(n)), []).append(abs(e))
    for (klass, lo, _hi), es in by_class.items():
        b = performance.band(klass, lo)
        assert b["worst"] == pytest.approx(max(es), abs=2e-4)
        assert b["median"] == pytest.approx(statistics.median(es), abs=2e-4)
        mine = [(n, abs(e)) for *_, k, n, e in held_out() if k == klass]
        assert b["nine_in_ten"] == pytest.approx(band_figure(mine, lo), abs=2e-4)
    hopper = performance.band("Hopper, one server, one process for several GPUs", 64 << 10)
    every = max(abs(e) for *_, n, e in held_out() if 64 << 10 <= n < MiB)
    assert hopper["validated"] and hopper["nine_in_ten"] < hopper["worst"] < every


def test_the_held_out_targets_are_reported_as_they_are():
    """On runs the fit has not seen (each cluster left out): 64 KiB-4 MiB rows within 15 % (the
    target is 60 %), 4-128 MiB within 15 % (80 %), from 256 MiB within 10 % (90 %), and a row's
    band covering its error (90 %) over the rows whose class states a band there (two clusters
    of its class or more), the band being the one its class would state had the row's cluster
    never been published: the figure of its class's other clusters' rows at its size band and
    the bands either side (band_figure), whose median over the rows judged is the band's width.
    bench/PERFORMANCE.md prints each as recomputed here, met or not met as it is; the
    4-128 MiB and 256 MiB targets are held here as met."""
    targets = {"64 KiB–4 MiB within 15%": (64 << 10, 4 * MiB - 1, 0.15, 0.60)}
    targets["4–128 MiB within 15%"] = (4 * MiB, 128 * MiB, 0.15, 0.80)
    targets["from 256 MiB within 10%"] = (256 * MiB, math.inf, 0.10, 0.90)
    got = {}
    for what, (lo, hi, within, share) in targets.items():
        es = [abs(e) for *_, n, e in held_out() if lo <= n <= hi]
        ok = sum(e <= within for e in es)
        got[what] = (ok, len(es), ok >= share * len(es))
    assert got["4–128 MiB within 15%"][2] and got["from 256 MiB within 10%"][2]
    clusters: dict[tuple, set[str]] = {}
    for _, cluster, klass, n, _ in held_out():
        clusters.setdefault((klass, *size_band(n)), set()).add(cluster)
    covered = stated = 0
    widths = []
    for _, cluster, klass, n, e in held_out():
        if len(clusters[(klass, *size_band(n))]) >= 2:
            others = [(m, abs(x)) for _, c, k, m, x in held_out() if c != cluster and k == klass]
            figure = band_figure(others, n)
            stated += 1
            covered += abs(e) <= figure + 1e-9
            widths.append(figure)
    assert (covered, stated) == fitted.COVERAGE == (132, 150)  # 88.0 %; 112 from one band alone
    width = f"median width ±{statistics.median(widths):.1%}"
    assert width == "median width ±15.3%"
    got["the band without the row's cluster covers its error"] = (
        covered,
        stated,
        covered >= 0.9 * stated,
    )
    report = (ROOT / "bench" / "PERFORMANCE.md").read_text()
    for what, (ok, n, met) in got.items():
        line = next(x for x in report.splitlines() if x.startswith(f"| {what} |"))
        assert f"| {ok} of {n} (" in line and line.endswith("| met |" if met else "| not met |")
    assert width in report


def test_small_messages_within_15_percent_where_runs_earn_a_band():
    """64 KiB - 1 MiB, where the launch and the latency set the time: each class whose band
    is stated there (two clusters or more) is predicted within 15 % at the median, leaving each
    cluster out (the figures the test above recomputes). One cluster's figure is no claim: it
    is reported (bench/PERFORMANCE.md), not stated."""
    small = [v for v in fitted.VALIDATION if v[1:3] == (64 << 10, MiB)]
    stated = [v for v in small if v[8] >= 2]
    assert stated and len(small) > len(stated)
    for klass, _, _, median, *_ in stated:
        assert median <= 0.15, klass


def test_a_band_is_stated_only_where_two_clusters_of_its_class_earned_it():
    """A row carries its class's band; one server of B200s and A100s across servers (never
    fitted) carry validated: false and no figure; one server of H100s with one process per GPU
    (one cluster) validated: false, its cluster's figure shown beside "not checked"; a class
    two or more clusters earned (B200s across servers, the default 64 H100s) a band."""
    for s, g, validated, shown in (
        (nccl.System("B200", 8, 8), 1, False, False),
        (nccl.System("B200", 16, 8), 1, True, True),
        (nccl.System("H100 SXM", 8, 8), 1, False, True),
        (nccl.System("A100 SXM", 16, 8), 1, False, False),
        (nccl.System("H100 SXM", 64, 8), 1, True, True),
        (nccl.System("A100 SXM", 8, 8), 8, True, True),
    ):
        row = nccl.sweep("AllReduce", [64 * MiB], s, gpus_per_thread=g)["rows"][0]
        b = row["band"]
        assert b["class"] == nccl.band_class(s, g) and b["validated"] is validated
        assert (b["median"] is None) is (b["nine_in_ten"] is None) is (not shown)
        text = performance.words(b["class"], 64 * MiB)
        assert ("not checked" in text) is (not validated) and ("%" in text) is shown
    assert (
        performance.band("Hopper, across servers, one process per GPU", 1024)["validated"] is False
    )


def test_the_cli_table_shows_one_cluster_s_figure_as_unchecked_and_none_without_runs(capsys):

    assert main(["nccl", "--gpus", "16", "--gpu", "A100", "--sizes", "1M:1G"]) == 0
    rows = [x for x in capsys.readouterr().out.splitlines() if x.strip()[:1].isdigit()]
    assert rows and all(x.endswith("unchecked") and "%" not in x for x in rows)
    assert main(["nccl", "--gpus", "8", "--gpu", "H100", "--bytes", "1G"]) == 0
    rows = [x for x in capsys.readouterr().out.splitlines() if x.strip()[:1].isdigit()]
    assert len(rows) == 1 and "unchecked: ≤" in rows[0]
    assert main(["nccl", "--gpus", "64", "--gpu", "H100", "--bytes", "1G"]) == 0
    rows = [x for x in capsys.readouterr().out.splitlines() if x.strip()[:1].isdigit()]
    assert len(rows) == 1 and "%" in rows[0]


SYSTEMS = st.builds(
    nccl.System,
    gpu=st.sampled_from(["A100 SXM", "H100 SXM", "H200 SXM", "B200"]),
    gpus=st.sampled_from([8, 16, 64, 512]),
    nics_per_node=st.sampled_from([4, 8]),
    nic_Gbps=st.sampled_from([100.0, 200.0, 400.0, 800.0]),
)


@settings(max_examples=examples(60), deadline=None)
@given(SYSTEMS, st.integers(1, 1 << 35), st.integers(1, 1 << 35), st.sampled_from([1, 8]))
def test_a_bigger_call_never_takes_less_time(s, a, b, per_thread):
    """For one (algorithm, protocol), a bigger message never takes less time in the layer
    (NCCL's own terms grow with size; the ramp only slows a small message down)."""
    lo, hi = sorted((a, b))
    for (algo, proto), e in tables(s).items():
        # NCCL's own tree correction is not monotonic (tuning.cc:620-627); it corrects NVLSTree
        # too on Blackwell (tuning.cc:643), where a B200 pair once gave a bigger call less time
        if algo == "Tree" or (algo == "NVLSTree" and s.compcap >= 100):
            continue

        def t(n: int, algo=algo, proto=proto, e=e) -> float:
            lat, bw = terms(s, "AllReduce", algo, proto, e, n)
            return layer.time_us(
                fitted.PARAMETERS, performance_call(s, algo, proto, lat, bw, n, per_thread)
            )

        assert t(lo) <= t(hi) * (1 + 1e-12)


HELD = [s for s in SWEEPS if s["use"] == "holdout" and s["kind"] == "payload"]
HELD_LOGS = [s for s in SWEEPS if s["use"] == "holdout" and s["kind"] == "log"]
SOURCES = {
    s["file"]: s for s in json.loads((DATA / "nccl-tests" / "SOURCES.json").read_text())["logs"]
}
DEVICE = re.compile(r"^#\s+Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device", re.M)


def payload_rows(sweep: dict) -> list[tuple[int, float]]:
    """all_reduce_bench.py's markdown rows, read here: '|   64KiB |   2.93GBps | ...'."""
    text = (DATA / "nccl-tests" / sweep["file"]).read_text()
    unit = {"KiB": 1 << 10, "MiB": MiB, "GiB": GiB}
    rows = re.findall(r"^\|\s*(\d+)(KiB|MiB|GiB)\s*\|\s*([\d.]+)GBps", text, re.M)
    return [(int(n) * unit[u], float(b)) for n, u, b in rows]


@pytest.mark.parametrize("sweep", HELD, ids=[s["key"] for s in HELD])
def test_a_held_out_sweep_is_never_fitted_and_followed_from_64_mib(sweep):
    """The PyTorch sweeps (stas00/ml-engineering: 8 x H200 and 8 x B200, one process per GPU,
    NCCL 2.27.7) are in no fit; the H200 is followed within 3 % from 64 MiB to 4 GiB, the B200
    within 7.5 % from 128 MiB (7.2 % at 1 GiB since the ramp left the ring's LL128, issue 47:
    its NVLS ramp is the one NVLSTree across servers fits; at 64 MiB it is 26 % over, the B200
    mid-size miss the review names); below, each call timed alone carries a launch
    all_reduce_perf hides, so they are predicted faster, never slower, than measured; and the
    B200's step at 8 GiB (740.64 -> 839.07 GB/s) is a miss the report names."""
    sys.path.insert(0, str(ROOT / "bench"))
    import performance as bench  # bench/performance.py

    assert sweep["key"] not in fitted.FITTED_ON and sweep["gpus_per_thread"] == 1
    rows = payload_rows(sweep)
    assert bench.sweeps("holdout")[sweep["key"]]["rows"] == rows
    h200 = sweep["system"]["gpu"] == "H200 SXM"
    within, start = (0.03, 64 * MiB) if h200 else (0.075, 128 * MiB)
    for n, busbw in rows:
        miss = predicted(sweep, n) / busbw - 1
        if start <= n <= 4 * GiB:
            assert abs(miss) <= within, (n, f"{miss:+.1%}")
        elif 64 << 10 <= n < start:
            assert miss > 0, (n, f"{miss:+.1%}")
    report = (ROOT / "bench" / "PERFORMANCE.md").read_text()
    assert f"| {sweep['key']} |" in report and "740.64 GB/s at 4 GiB to 839.07" in report


def gpus_from_rows(text: str) -> int:
    """The GPU count nccl-tests used, from its all-reduce rows: busbw = algbw x 2(n-1)/n
    (all_reduce.cu), so n = 2 / (2 - busbw / algbw), read off the largest row."""
    rows = [ROW.match(x) for x in text.splitlines() if not x.lstrip().startswith("#")]
    algbw, busbw = (float(v) for v in [m for m in rows if m][-1].group(3, 4))
    return round(2 / (2 - busbw / algbw))


def printed_nccl_version(text: str) -> str | None:
    """The release a log prints: its 'NCCL version 2.16.2+cuda11.6' line, or nccl-tests' newer
    header 'nccl-library=22902' (X x 10000 + Y x 100 + Z from 2.9: NCCL_VERSION in NCCL's
    src/nccl.h.in:26)."""
    line = re.search(r"^NCCL version (\d+\.\d+\.\d+)", text, re.M)
    if line:
        return line.group(1)
    code = re.search(r"nccl-library=(\d+)", text)
    if code:
        n = int(code.group(1))
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return None


@pytest.mark.parametrize("sweep", HELD_LOGS, ids=[s["key"] for s in HELD_LOGS])
def test_a_held_out_nccl_tests_run_is_cited_read_as_published_and_never_fitted(sweep):
    """The all_reduce_perf runs held out for validation (SWEEPS.json 'holdout', kind 'log'): each
    cited at a commit in SOURCES.json; its GPUs, servers and launch mode those its own '#  Rank'
    lines print (one Pid per rank: one process per GPU); the rows bench/performance.py predicts
    the out-of-place rows read here by regex; in no fit."""
    sys.path.insert(0, str(ROOT / "bench"))
    import performance as bench  # bench/performance.py

    src = SOURCES[sweep["file"]]
    assert re.match(
        r"https://github\.com/[^/]+/[^/]+/(blob/[0-9a-f]{40}/|issues/|pull/)", src["url"]
    )
    assert sweep["url"] == src["url"] and src["where"] and src["hardware_basis"]
    text = (DATA / "nccl-tests" / sweep["file"]).read_text()
    system = sweep["system"]
    assert system["gpus"] == src["gpus"] == gpus_from_rows(text)
    ranks = DEVICE.findall(text)
    if ranks:  # a log published without its device lines is held to its rows' GPU count alone
        hosts = {host for _, _, host in ranks}
        per_host = len(ranks) // len(hosts)
        assert (len(ranks), len(hosts), per_host) == (system["gpus"], src["hardware"]["nodes"], 8)
        assert system["gpus_per_node"] == per_host == src["hardware"]["gpus_per_node"]
        one_per_gpu = len({pid for _, pid, _ in ranks}) == len(ranks)
        assert (sweep["gpus_per_thread"] == 1) == one_per_gpu
    assert sweep["nccl_version"] == printed_nccl_version(text)
    # rows printed as 0.00 GB/s (the smallest sizes) carry no busbw to predict
    rows = [(n, busbw) for n, busbw in measured(sweep) if busbw > 0]
    assert bench.sweeps("holdout")[sweep["key"]]["rows"] == rows
    assert sweep["key"] not in fitted.FITTED_ON


def test_the_gpu_count_points_are_the_pages_and_the_report_prints_each():
    """stas00/ml-engineering's 8 GiB figures on 4 to 8 GPUs of one H200 and one B200 node:
    each figure is in the verbatim excerpt, on its GPU count's row of its GPU's table (busbw,
    then busbw with NVLS off); NVLS off is the Ring in the port too; bench/PERFORMANCE.md
    prints every point with the layer's busbw, recomputed here."""
    points = json.loads((DATA / "nccl-tests" / "SWEEPS.json").read_text())["points"]
    count = [p for p in points if p["about"] == "gpu count"]
    assert len(count) == 20
    text = (DATA / "nccl-tests" / count[0]["file"]).read_text()
    tables = dict(zip(("H200 SXM", "B200"), text.split("| GPUs |")[1:], strict=True))
    report = (ROOT / "bench" / "PERFORMANCE.md").read_text()
    for p in count:
        n = p["system"]["gpus"]
        cells = r" \|\s+(\w+)\s+\|\s+([\d.]+)GBps \|\s+([\d.]+)GBps"
        row = re.search(rf"^\|\s+{n}{cells}", tables[p["system"]["gpu"]], re.M)
        assert row and float(row.group(2 if p["nvls"] else 3)) == p["busbw_GBps"]
        assert p["picked"] == (row.group(1) if p["nvls"] else "Ring")
        s = nccl.System(**p["system"], nccl_version=nccl.nearest(p["nccl_version"]).version)
        c = nccl.choose("AllReduce", p["size_bytes"], s, algorithm=p["algorithm"])
        assert p["nvls"] or c.algorithm == "Ring"
        miss = c.busbw_GBps / p["busbw_GBps"] - 1
        assert f"| {p['busbw_GBps']:.1f} | {c.busbw_GBps:.1f} | {miss:+.1%} |" in report
