"""The exercise kinds, one module per page (named for its slug: `ring_reduce_scatter.py` holds
the kinds of the page `ring-reduce-scatter`), their shared helpers in `common.py`. Each kind
draws its numbers from a random.Random and asks the core for the answer and for every figure of
the worked solution, so the page's widgets and the exercises cannot disagree.

This registry collects every function a module marks with `@titled`, in the order the modules
define them, so a new page adds a module and nothing else. Which page asks which kinds is the
pages' front matter (`exercises:`), the one place that says it: the core does not read the
content, and a stage's number is its place among the pages.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from collections.abc import Callable

from .common import Problem

KINDS: dict[str, Callable[[random.Random], Problem]] = {}
PAGE_OF: dict[str, str] = {}  # kind -> its module's name, the page's slug with underscores
_FIRST: dict[str, str] = {}  # module -> its first kind
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _kind in vars(_module).values():
        if hasattr(_kind, "title") and getattr(_kind, "__module__", "") == _module.__name__:
            KINDS[_kind.__name__] = _kind
            PAGE_OF[_kind.__name__] = _info.name
            _FIRST.setdefault(_info.name, _kind.__name__)

TITLES = {name: kind.title for name, kind in KINDS.items()}
# A teacher's sheet by default: the first kind of every page's module (each module defines its
# kinds in the order its page lists them); the build passes the same kinds in the pages' order.
SHEET_KINDS = tuple(_FIRST.values())
