"""Published all_reduce_perf logs that your-cluster's log panel can load, so that a class without
a cluster can do the lab path (one with the job's NCCL_DEBUG=INFO lines, so the reader of rings,
trees and the network has a real log too): each module holds one log of tests/data/, copied
verbatim as TEXT, with its SOURCE (the url and what was kept) and a LABEL for the menu. They are
Python modules because the site ships the package's .py files only (sitebuild/python_assets.py).
"""

from __future__ import annotations

from . import debug_2nodes, ib_2nodes, nvls_1node, ring_1node

# key (the widget's `example` parameter, in the URL) -> module, in the menu's order
EXAMPLES = {
    "nvls-1node": nvls_1node,
    "ib-2nodes": ib_2nodes,
    "ring-1node": ring_1node,
    "debug-2nodes": debug_2nodes,  # with the job's NCCL_DEBUG=INFO lines: rings, trees, network
}
TEXTS = frozenset(m.TEXT for m in EXAMPLES.values())


def text(key: str) -> str:
    """The log of example `key`."""
    return EXAMPLES[key].TEXT
