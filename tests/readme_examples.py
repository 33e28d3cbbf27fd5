"""The README's CLI examples, as argument lists a test can run: the code block that follows
"## The library and the command line", each file an example names replaced by one from tests/data
or written into a temporary folder (the gradients and the probe, which no log holds)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).parents[1]
DATA = ROOT / "tests" / "data"
PROG = "allreduce-explainer"

# the example's file -> a cited one in tests/data
LOGS = {
    "all_reduce_perf.log": DATA / "allreduce_current.txt",
    "job.log": DATA / "nccl-debug" / "aws-p5-2x8xh100-efa-nccl-2.22.3.log",
}
# the example's file -> its contents: per-GPU values (4 GPUs), written for the run
VALUES = {
    "grads.json": [[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400], [1000, 2000, 3000, 4000]],
    "probe.json": [[1e8, 1.0], [1.0, -1e8], [-1e8, 1e8], [1.0, 1.0]],
}


def lines() -> list[str]:
    """The README's command lines for the CLI (the `python -m` one included), as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The library and the command line", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line.strip() for line in block.splitlines() if line.strip()]


def argv(line: str, tmp: Path) -> list[str]:
    """The example's arguments after the program's name, its files substituted; any file it
    writes goes into `tmp`."""
    words = shlex.split(line)
    words = words[3:] if words[:3] == ["python", "-m", "allreduce_explainer"] else words[1:]
    out = []
    for i, w in enumerate(words):
        if w in LOGS:
            w = str(LOGS[w])
        elif w in VALUES:
            path = tmp / w
            path.write_text(json.dumps(VALUES[w]), encoding="utf-8")
            w = str(path)
        elif i and words[i - 1] == "--out":
            w = str(tmp / w)
        out.append(w)
    return out


def key_paths(value, prefix: str = "") -> set[str]:
    """Every key of a JSON value as a path ("rows[].bytes"), so a test sees a key lost anywhere."""
    if isinstance(value, dict):
        out = set()
        for k, v in value.items():
            out |= {f"{prefix}{k}"} | key_paths(v, f"{prefix}{k}.")
        return out
    if isinstance(value, list):
        return set().union(*(key_paths(v, prefix.rstrip(".") + "[].") for v in value))
    return set()
