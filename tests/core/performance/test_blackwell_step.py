"""The B200 server's step at large sizes, held against the cited run and NCCL's source.

stas00/ml-engineering's P6-B200 table (tests/data/nccl-tests/stas00-8xb200-p6-1node-torch.md,
NCCL 2.27.7) rises from 740.64 GB/s at 4 GiB to 839.07 at 8 GiB. The layer has no such step, and
bench/PERFORMANCE.md says why no factor is fitted for it: in NCCL 2.27.7 an NVLS all-reduce runs
on nvlsChannels at every size (src/enqueue.cc:1845-1847) and its chunk, the one thing that changes
with the size, reaches NCCL_NVLS_CHUNKSIZE (src/transport/nvls.cc:152, 128 KiB) from
64 x nvlsChannels x nHeads x that chunk (src/enqueue.cc:2013-2014), 24 channels on one B200
server (NVLS_NCHANNELS_SM100_NVL, nvls.cc:149) and one head per GPU: 1.5 GiB, below the step.
"""

from __future__ import annotations

import re
import sys

from allreduce_explainer import nccl
from helpers import DATA, ROOT

GiB = 1 << 30
ROW = re.compile(r"^\|\s*(\d+)(KiB|MiB|GiB)\s*\|\s*([\d.]+)GBps\s*\|", re.M)


def table() -> list[tuple[int, float]]:
    """(bytes, one node's busbw) of the cited table, read afresh."""
    text = (DATA / "nccl-tests" / "stas00-8xb200-p6-1node-torch.md").read_text()
    shift = {"KiB": 10, "MiB": 20, "GiB": 30}
    return [(int(n) << shift[u], float(b)) for n, u, b in ROW.findall(text)]


def test_the_step_is_where_the_run_has_it_and_not_where_nvls_changes_its_chunk():
    rows = dict(table())
    assert (rows[4 * GiB], rows[8 * GiB]) == (740.64, 839.07)  # the cited figures
    rises = {n: rows[2 * n] / rows[n] for n in rows if n >= GiB and 2 * n in rows}
    assert max(rises, key=rises.get) == 4 * GiB  # the largest rise from 1 GiB: 4 -> 8 GiB
    assert rises[4 * GiB] > 1.13 and all(r < 1.02 for n, r in rises.items() if n != 4 * GiB)
    chunk_switch = 64 * 24 * 8 * (128 << 10)  # enqueue.cc:2014, nvls.cc:149 and 152
    assert chunk_switch == 1.5 * GiB < 4 * GiB
    sys.path.insert(0, str(ROOT / "bench"))
    import performance as bench

    assert bench.nvls_chunk_switch_bytes(24, 8) == chunk_switch
    report = (ROOT / "bench" / "PERFORMANCE.md").read_text()
    assert "from 4 GiB to 8 GiB (×1.133)" in report and "= 1.5 GiB, below the" in report


def test_the_layer_has_no_step_there():
    """What the report says is missing is missing: the layer's B200 one-server busbw rises by
    under 2 % from 4 to 8 GiB (NCCL's choice, NCCL 2.27.7's nearest ported release)."""
    s = nccl.System("B200", 8, 8, nccl_version=nccl.nearest("2.27.7").version)
    at = {n: nccl.choose("AllReduce", n, s).busbw_GBps for n in (4 * GiB, 8 * GiB)}
    assert at[8 * GiB] / at[4 * GiB] < 1.02
