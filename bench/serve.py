"""A fresh clone's `make serve`, before and after the set-up was split in two layers, in one run:
the time to the first HTTP answer (and how much of it is set-up), the virtual environment's size
and number of installed distributions, and node_modules' size.

Each commit is cloned from this repository into a temporary folder: a fresh clone has no .venv,
no node_modules, no site/ and no build tool cache (node_modules/.cache). `make serve` runs there on
a free port; the set-up ends when make echoes the build's command, and the clock stops at the first
answer of http://127.0.0.1:<port>/ (the server starts once the build is done), then the server is
stopped. Unless --warm-caches, pip and npm get empty cache folders, as on a new machine, so the
time includes the downloads. The commits run one after the other, `--rounds` times, alternating.

    python3 bench/serve.py [--before COMMIT] [--after COMMIT] [--rounds 1] [--warm-caches] [--write]

--write: bench/SERVE.md. Standard library only: it runs before any set-up.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the last commit whose `make serve` installed the whole locked toolchain (requirements-dev.lock)
BEFORE = "56f29a7403b982edb9af7a3c4fdb22aac61a7858"
WAIT_S = 1800
MB = 1024 * 1024


@dataclass
class Run:
    label: str
    commit: str
    setup_s: float
    answer_s: float
    venv_bytes: int
    distributions: int
    node_bytes: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def disk_bytes(path: Path) -> int:
    """What `du -sk` counts (blocks on disk, hard links once), in bytes."""
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) * 1024


def distributions(venv: Path) -> int:
    """Installed distributions: each *.dist-info in the venv (pip, the project itself included)."""
    return sum(1 for _ in venv.glob("lib/python*/site-packages/*.dist-info"))


def answered(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def watch(proc: subprocess.Popen, log: Path, marks: dict[str, float], start: float) -> None:
    """Copy make's output to `log`, noting when it echoes the build's command."""
    with log.open("w") as out:
        for line in proc.stdout:
            out.write(line)
            if "build.py --serve" in line and "setup" not in marks:
                marks["setup"] = time.perf_counter() - start


def serve_once(label: str, commit: str, work: Path, warm: bool) -> Run:
    """Clone `commit` into `work`, run `make serve` there until its first answer, then stop it."""
    clone = work / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
    env = dict(os.environ)
    if not warm:
        env["PIP_CACHE_DIR"] = str(work / "pip-cache")
        env["npm_config_cache"] = str(work / "npm-cache")
    port = free_port()
    marks: dict[str, float] = {}
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["make", "serve", f"PORT={port}"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # make, the build and the server in one group, stopped together
    )
    log = work / "make.log"
    reader = threading.Thread(target=watch, args=(proc, log, marks, start), daemon=True)
    reader.start()
    try:
        while not answered(port):
            if proc.poll() is not None:
                tail = "".join(log.read_text().splitlines(keepends=True)[-30:])
                raise SystemExit(f"{label}: make serve ended ({proc.returncode}):\n{tail}")
            if time.perf_counter() - start > WAIT_S:
                raise SystemExit(f"{label}: no answer after {WAIT_S} s")
            time.sleep(0.2)
        answer = time.perf_counter() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    reader.join(timeout=10)
    venv = clone / ".venv"
    return Run(
        label,
        commit[:12],
        marks.get("setup", float("nan")),
        answer,
        disk_bytes(venv),
        distributions(venv),
        disk_bytes(clone / "node_modules"),
    )


def resolve(rev: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def report(runs: list[Run], argv: str, loads: tuple[float, float], warm: bool) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    caches = (
        "the machine's pip and npm caches (warm)"
        if warm
        else "empty pip and npm caches, as on a new machine: every package is fetched from the "
        "indexes pip and npm are configured with (here partly a local mirror, so a new user's "
        "network adds most to the row that fetches most)"
    )
    lines = [
        "# A fresh clone's `make serve`, before and after",
        "",
        f"`python3 bench/serve.py{argv}`, {now}, on {platform.machine()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores shared with other work (load average "
        f"{loads[0]:.1f} at the start, {loads[1]:.1f} at the end); {caches}. Each row is a fresh "
        "clone of the commit in a temporary folder: `make serve` from nothing to the first HTTP "
        "answer (set-up: until make starts the build; the rest is the site's build, the same "
        "code in both), then the environment it left.",
        "",
        "| | commit | first answer s | set-up s | build s | .venv MB | distributions in .venv "
        "| node_modules MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.label} | {r.commit} | {r.answer_s:.0f} | {r.setup_s:.0f} | "
            f"{r.answer_s - r.setup_s:.0f} | "
            f"{r.venv_bytes / MB:.0f} | {r.distributions} | {r.node_bytes / MB:.0f} |"
        )
    lines += [
        "",
        "Distributions count every `*.dist-info` in site-packages: the lock's packages, pip and "
        "setuptools of the venv, and the project's own editable install. node_modules holds "
        "the build's tool cache too (`node_modules/.cache`). The build's seconds depend on how "
        "busy the shared cores were; the set-up's and the sizes are this change's.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help="commit whose make serve installed everything")
    ap.add_argument("--after", default="HEAD", help="commit with the build layer (default HEAD)")
    ap.add_argument("--rounds", type=int, default=1, help="fresh clones of each commit")
    ap.add_argument("--warm-caches", action="store_true", help="keep the machine's pip/npm caches")
    ap.add_argument("--write", action="store_true", help="write bench/SERVE.md")
    a = ap.parse_args()
    commits = {"before": resolve(a.before), "after": resolve(a.after)}
    load0 = os.getloadavg()[0]
    runs = []
    for i in range(a.rounds):
        order = list(commits.items()) if i % 2 == 0 else list(commits.items())[::-1]
        for label, commit in order:
            with tempfile.TemporaryDirectory(prefix=f"serve-{label}-") as work:
                run = serve_once(label, commit, Path(work), a.warm_caches)
            print(
                f"{label} {run.commit}: {run.answer_s:.0f} s (set-up {run.setup_s:.0f} s), "
                f".venv {run.venv_bytes / MB:.0f} MB, {run.distributions} distributions, "
                f"node_modules {run.node_bytes / MB:.0f} MB",
                flush=True,
            )
            runs.append(run)
    flags = [
        ("--before " + a.before, a.before != BEFORE),
        ("--after " + a.after, a.after != "HEAD"),
        (f"--rounds {a.rounds}", a.rounds != 1),
        ("--warm-caches", a.warm_caches),
        ("--write", a.write),
    ]
    argv = "".join(f" {flag}" for flag, on in flags if on)
    text = report(
        sorted(runs, key=lambda r: r.label != "before"),
        argv,
        (load0, os.getloadavg()[0]),
        a.warm_caches,
    )
    if a.write:
        (ROOT / "bench" / "SERVE.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
