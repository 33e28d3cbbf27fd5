"""Every path of this repository that a docstring, a comment or a document names exists.

Files move (the core went into subject folders; tests into folders that mirror it), and a
docstring that still sends a reader to the flat package's fit module after it became
`logs/alphabeta.py` is a wrong signpost. Paths of other projects (NCCL's `src/enqueue.cc`,
PyTorch's test folders) are not this repository's and are left alone: checked are paths under
this repository's own top-level folders whose folders all exist here, paths inside the package
(`logs/parse.py`), and bare `.py` names outside string literals.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import PurePosixPath

from helpers import ROOT

PACKAGE = ROOT / "src" / "allreduce_explainer"
TOP = ("src/allreduce_explainer", "tests", "sitebuild", "templates", "client", "content", "docs")
TOP += ("bench", "buildtools")
SUBJECTS = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
# A path under one of our top-level folders, or under one of the package's subject folders
ROOTED = re.compile(rf"(?<![\w/.-])((?:{'|'.join(TOP)})/[\w./-]*\w)")
INSIDE = re.compile(rf"(?<![\w/.-])((?:{'|'.join(SUBJECTS)})/\w+\.py)\b")
BARE = re.compile(r"(?<![\w/.\"'<>-])(\w+\.py)\b(?![\"'])")  # not a string literal
WRITTEN = (".py", ".mjs", ".js", ".html", ".md", ".toml", ".yaml", ".cff")
MADE = ("site/", "test-artifacts/", "node_modules/", "client/notebook.bundle.js")  # built or
# installed, not kept in git (the last is the sdist's copy of the notebook bundle, hatch_build.py)


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def _exists(path: str, files: set[str], dirs: set[str]) -> bool:
    """Whether a path names something of ours; a path through a folder we do not have names
    another project's file, and counts as found."""
    path = path.rstrip("/.")
    if str(PurePosixPath(path).parent) not in dirs:
        return True
    return path in files or path in dirs or any(f.startswith(f"{path}.") for f in files)


def named_paths() -> list[tuple[str, int, str]]:
    """(file, line, path) for every path of ours that a kept text file names and git lacks."""
    files = set(tracked())
    dirs = {str(p) for f in files for p in PurePosixPath(f).parents}
    inside = {f.removeprefix("src/allreduce_explainer/") for f in files}
    names = {f.rsplit("/", 1)[-1] for f in files}
    missing = []
    for name in sorted(files):
        if not name.endswith(WRITTEN) or name.startswith("tests/data/"):
            continue
        for i, line in enumerate((ROOT / name).read_text().splitlines(), 1):
            for match in ROOTED.finditer(line):
                path, after = match[1], line[match.end() : match.end() + 1]
                if "*" not in path and after != "<" and not _exists(path, files, dirs):
                    missing.append((name, i, path))  # `test_<page>.py` is a pattern, not a path
            for path in INSIDE.findall(line):
                if path not in inside and f"src/allreduce_explainer/{path}" not in files:
                    missing.append((name, i, path))
            for path in BARE.findall(line):
                if path not in names:
                    missing.append((name, i, path))
    return missing


def test_every_path_a_file_names_exists():
    missing = [m for m in named_paths() if not m[2].startswith(MADE)]
    assert missing == [], "\n".join(f"{f}:{i}: {p}" for f, i, p in missing)
