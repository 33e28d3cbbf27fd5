"""The notebook's door onto a widget's answer: `show(name, **params)` printed (its repr, the
answer's record as records.block renders it), held against the command line's human view for
the same question."""

from __future__ import annotations

from allreduce_explainer.widgets import REGISTRY

from .doors import cli
from .table import DOORS

# the door whose command line asks what the widget asks (page 7 always sweeps the caps)
REPR_DOOR = {"cluster": "cluster", "ddp_buckets": "ddp_buckets/sweep"}


def repr_disagreements(name: str, params: dict, rows: list[str] | None = None) -> list[str]:
    """Each line of the notebook widget's repr ("  label: figure", its answer's record; `rows`
    where a lab printed it, else the widget's at `params` now) that the command line's human
    view for the same parameters does not print as "label  figure" (its pairs; a note may follow
    the figure) or "figure label" (its title's "8 samples per GPU")."""
    from allreduce_explainer.notebook import show

    w = show(name, **params)
    argv = DOORS[REPR_DOOR[name]].argv(w.state["params"])
    said = " ".join((cli(argv) or "").split())  # one space where it padded or wrapped
    rows = repr(w).split("\n")[1:] if rows is None else rows
    assert rows, f"{name}: the repr shows no figure"
    labels = sorted((q.label for q in REGISTRY[name].result.fields), key=len, reverse=True)
    out = []
    for row in rows:  # a label may hold ": " itself ("bytes reduced: the gradient")
        label = next((x for x in labels if row.strip().startswith(f"{x}: ")), None)
        if label is None:
            out.append(f"repr {row.strip()!r} names no field of {name}'s record")
            continue
        figure = row.strip()[len(label) + 2 :]
        if f"{label} {figure}" not in said and f"{figure} {label}" not in said:
            out.append(f"repr {row.strip()!r} but {' '.join(argv)} prints no such line")
    return out
