"""NCCL 2.30.7's topology model and channel search, ported: a topology file (as NCCL_TOPO_DUMP_FILE
writes it) in, NCCL's graphs and every channel's ring and tree out.

One module per NCCL file: xml (xml.cc), system (topo.cc), paths (paths.cc), search (search.cc),
connect (connect.cc, rings.cc, trees.cc); run.py runs them in init.cc's order.
"""

from .run import PRESETS, preset_text, topology

__all__ = ["PRESETS", "preset_text", "topology"]
