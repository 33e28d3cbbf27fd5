"""Stage 10's view of a NCCL_DEBUG=INFO log (logs/debug.py read it): what NCCL says about the
reader's system in a few sentences, the findings with their evidence, and one channel's ring or
tree drawn on the servers (widgets/diagram.py's layout, client/js/diagram.js draws it).

The ranks are drawn as the comm line places them: rank r on server r // localRanks (how mpirun
and srun number ranks by default); at most MAX_SERVERS servers are drawn, and a ring's hops to a
rank not drawn are left out and said.
"""

from __future__ import annotations

from urllib.parse import urlencode

from . import diagram
from .ring import RING

STEPPER_PAGE = "ring-reduce-scatter/index.html"  # stage 2's page, from the site's root
STEPPER = "ring_reduce_scatter"  # its widget, whose URL parameters the link sets

MAX_SERVERS = 4  # servers drawn (each up to 8 GPUs): a 360 px screen still reads the ranks
MAX_FINDINGS = 8


def _drawn(topo: dict) -> tuple[int, int] | None:
    """(servers drawn, GPUs per server), or None when the log does not give the layout."""
    n, per = topo["ranks"], topo["gpus_per_node"]
    if not n or not per or per > 8 or n % per:
        return None
    return min(n // per, MAX_SERVERS), per


def _pairs(channel: dict, view: str) -> list[tuple[int, int]]:
    if view == "tree":
        t = channel["tree"] or {"parent": {}}
        return [(up, int(r)) for r, up in t["parent"].items() if up >= 0]
    ring = channel["ring"] or []
    if channel["ring_truncated"] or len(ring) < 2:
        return list(zip(ring, ring[1:], strict=False))
    return list(zip(ring, ring[1:] + ring[:1], strict=True))


def state(topo: dict | None, channel: int, view: str) -> dict | None:
    """The debug part of the log panel's state (None without debug lines): summary, findings,
    and the diagram of `channel`'s ring or tree (`view`)."""
    if topo is None:
        return None
    chans = topo["channels"]
    pick = next((c for c in chans if c["channel"] == channel), chans[0] if chans else None)
    out: dict = {"channel": pick["channel"] if pick else None, "view": view}
    out["step_link"] = step_link(pick)
    shape = _drawn(topo)
    if pick and shape:
        servers, per = shape
        lay = diagram.servers(servers, per)
        shown = servers * per
        pairs = _pairs(pick, view)
        kept = [(a, b) for a, b in pairs if a < shown and b < shown]
        out["diagram"] = diagram.public(lay)
        out["frame"] = {"arrows": diagram.hops(lay, kept)}
        out["left_out"] = len(pairs) - len(kept)
        out["label"] = _label(pick, view, kept, len(pairs) - len(kept))
    return out


def step_link(channel: dict | None) -> str | None:
    """Stage 2's stepper running this channel's ring, as a link from the site's root (the page
    prefixes its base), or None when the ring does not fit the stepper: cut short in the log,
    not every rank once, or longer than its GPU limit. One number per GPU, so no chunk is empty."""
    ring = (channel or {}).get("ring") or []
    fits = 2 <= len(ring) <= RING["gpus"].hi and sorted(ring) == list(range(len(ring)))
    if not fits or channel["ring_truncated"]:
        return None
    n = len(ring)
    query = {"gpus": n, "length": n, "order": ",".join(map(str, ring))}
    return STEPPER_PAGE + "?" + urlencode({f"{STEPPER}.{k}": v for k, v in query.items()}, safe=",")


def _label(channel: dict, view: str, pairs, left_out: int) -> str:
    """The diagram in words (its accessible name): who sends to whom."""
    what = "tree" if view == "tree" else "ring"
    hops = "; ".join(f"GPU {a} → GPU {b}" for a, b in pairs[:40])
    more = f"; {left_out} links to servers not drawn" if left_out else ""
    return f"Channel {channel['channel']}'s {what}: {hops or 'not printed in the log'}{more}"


def summary(topo: dict | None) -> str:
    """What the log says about the system, in one paragraph."""
    if topo is None:
        return "No NCCL_DEBUG=INFO lines in the log: run with NCCL_DEBUG=INFO to see the rings."
    net, nvls, coll = topo["network"], topo["nvls"], topo["collnet"]
    parts = [f"NCCL {topo['nccl_version']}" if topo["nccl_version"] else "NCCL (version not shown)"]
    if topo["ranks"]:
        where = f" on {topo['nodes']} server(s) of {topo['gpus_per_node']}" if topo["nodes"] else ""
        parts.append(f"{topo['ranks']} ranks{where}")
    if topo["coll_channels"] or topo["channels"]:
        parts.append(f"{topo['coll_channels'] or len(topo['channels'])} channels")
    if net["transport"]:
        cards = f", {net['cards']} network devices per server" if net["cards"] else ""
        gdr = {True: ", GPUDirect RDMA on", False: ", GPUDirect RDMA off"}.get(
            net["gpudirect_rdma"], ""
        )
        parts.append(f"network {net['transport']}{cards}{gdr}")
    said = {"unknown": "not said"}  # on, off, or absent: a release from before it
    parts.append(
        f"NVLS {said.get(nvls['state'], nvls['state'])}, "
        f"CollNet {said.get(coll['state'], coll['state'])}"
    )
    return "; ".join(parts) + "."


def findings_text(found: list[dict]) -> str:
    """Each finding and its evidence line, one paragraph each (a readout's text)."""
    if not found:
        return "No findings: nothing in the log stands out."
    out = []
    for f in found[:MAX_FINDINGS]:
        ev = f"\n    evidence: {f['evidence']}" if f["evidence"] else ""
        out.append(f"{f['message']}{ev}")
    return "\n\n".join(out)
