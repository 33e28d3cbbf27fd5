"""Record what the command line answered to the README's examples before it became a package
of command records (commit 2b99ef5), for test_readme_golden.py to hold today's CLI to.

    git worktree add /tmp/old-cli 2b99ef5
    python tests/cli/record_golden.py /tmp/old-cli
    git worktree remove /tmp/old-cli

Every example is run by the old code in a fresh interpreter. An example with --json (the old CLI
took it on every command but `figure` and `exercises export`) has its output written, indented,
to tests/cli/readme_json/<name>.json; `exercises export` its bank, byte for byte, to
<name>.<its extension>; `figure` is left out (Kaleido's drawing, not the CLI's answer).
index.json holds each example's README line, its arguments (the repository's files as {root}/,
the example's own as {tmp}/) and its golden file. The old code does not change, so re-recording
rewrites the same files: run it only if the README's examples change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where readme_examples lives
import readme_examples as ex  # noqa: E402

GOLDEN = ex.ROOT / "tests" / "cli" / "readme_json"


def name(argv: list[str]) -> str:
    """The example's command words (`simulate-ring`, `nccl-tests`): its words before the first
    flag that name no file."""
    words = []
    for word in argv:
        if word.startswith("-"):
            break
        if "/" not in word:
            words.append(word)
    return "-".join(words)


def placeholders(argv: list[str], tmp: Path) -> list[str]:
    return [a.replace(str(tmp), "{tmp}").replace(str(ex.ROOT), "{root}") for a in argv]


def run_old(old: Path, argv: list[str], cwd: Path) -> str:
    env = os.environ | {"PYTHONPATH": str(old / "src")}
    p = subprocess.run(
        [sys.executable, "-m", "allreduce_explainer", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    return p.stdout


def record(old: Path) -> dict:
    """Run every example by the code at `old`; write its golden file; return the index."""
    index = {}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for line in ex.lines():
            argv = ex.argv(line, tmp)
            key = name(argv)
            if "--json" in argv:
                golden = f"{key}.json"
                out = json.loads(run_old(old, argv, tmp))
                text = json.dumps(out, indent=1, ensure_ascii=False) + "\n"
                (GOLDEN / golden).write_text(text, encoding="utf-8")
            elif argv[:2] == ["exercises", "export"]:
                written = Path(argv[argv.index("--out") + 1])
                golden = f"{key}{written.suffix}"
                run_old(old, argv, tmp)
                (GOLDEN / golden).write_bytes(written.read_bytes())
            else:
                continue
            index[key] = {"line": line, "argv": placeholders(argv, tmp), "golden": golden}
    return index


def main() -> None:
    old = Path(sys.argv[1]).resolve()
    GOLDEN.mkdir(exist_ok=True)
    index = record(old)
    (GOLDEN / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    print(f"{len(index)} examples recorded from {old} into {GOLDEN}")


if __name__ == "__main__":
    main()
