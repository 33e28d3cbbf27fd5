"""The page widgets: each a pure function from JSON-able parameters to a JSON-able state.

The build calls each with its defaults and inlines the state into the page; the browser's worker
calls the same function (through bridge.py) whenever a reader changes a control. A bad parameter
raises ParamError naming it, which the page shows next to that control.

Each module of this package serves one page and exports RECORDS, its widgets as `Widget` records
(the function, its parameters (params.py), the view that draws its state (views.py) and what its
partial shows around the state: its headline and the other readouts' labels), and
optionally facts() -> dict of the figures its prose quotes ({{ f.NAME }}) and WARM, calls
[(widget, params)] whose first answer is slow (a model to build, a layout to count): the site's
Python snapshot has made them already, so a reader's first choice is as quick as the second (a
widget's own `warm` calls, whose caches are too large for the snapshot every page downloads, the
page's worker makes once Python is ready: bridge.warm_calls). This
registry collects them all, so a new page adds a module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..records import Record
from .views import CHART, PANEL, STEPPER

Readouts = tuple[tuple[str, str], ...]  # (key in the state's readouts, its label on the page)
HEADLINE_MAX = 3  # more than three large figures and none of them is the answer
LAYOUT_PARTS = ("readouts", "chart", "title", "partial")  # what templates/widgets/chart.html draws


@dataclass(frozen=True)
class Widget:
    """One widget: its name (the partial's, the URL's and the worker's), its function and
    parameters, the view (`views.STEPPER`, ...) that draws its state, and for its partial the
    figure's accessible name, a hint under the controls, its headline and its other readouts.

    The headline is the one to three figures that answer the widget's question: every partial
    shows it first, large, right under the controls (`m.headline`). The other readouts come in
    groups the partial places, smaller (a stepper's: "setup" above the step bar, "main" under
    the grid; the cluster's "why", "step", "references" and "log"). A key is shown once: in the
    headline or in one group."""

    name: str
    function: Callable[..., dict]
    spec: Mapping
    view: str
    label: str = ""
    hint: str = ""
    headline: Readouts = ()
    readouts: Mapping[str, Readouts] = field(default_factory=dict)
    # parameters whose first answer is slow, made by the page's worker once Python is ready
    # (bridge.warm_calls), not before the snapshot: what they keep would be downloaded by every
    # page (stage 7's bucketings of all eight models: 300 kB of the snapshot with Brotli)
    warm: tuple[Mapping, ...] = ()
    # whether the snapshot calls it at its defaults; if not, its page's worker does, first, once
    # Python is ready: for a widget of one page whose defaults keep large caches (stage 5's
    # steps: the trees' layouts; stage 7's buckets; the teachers' sheet: every kind's problems)
    in_snapshot: bool = True
    # A chart's or a panel's partial (templates/widgets/chart.html): what it draws under the
    # headline, in order: ("readouts", group), ("chart", caption[, figure]) for the state's
    # chart (or its `figures[figure]`) with the caption of its data table, ("title", text), or
    # ("partial", name) for a piece of layout of its own (templates/widgets/<name>.html).
    layout: tuple[tuple[str, ...], ...] = ()
    # partials drawn between the headline and the layout (templates/widgets/<name>.html): what
    # the reader does before reading the chart, such as a form asking for a prediction
    extras: tuple[str, ...] = ()
    # the judge of the widget's prediction (views.prediction), if it asks one: (parameters, the
    # reader's answer) -> {correct, message}; an unreadable answer raises ParamError("answer")
    predict: Callable[[dict | None, str], dict] | None = None
    # the record of the api question the widget asks, if it has one: its state keeps the answer's
    # figures under "result" (views.result), which the notebook's repr renders with
    # records.block, as the command line's human view renders the same question's answer
    result: Record | None = None

    def __post_init__(self):
        """A figure's headline has one to three figures; no readout is shown twice; the layout
        names parts the chart partial draws and readout groups the record has."""
        n = len(self.headline)
        if self.view in (STEPPER, CHART, PANEL) and not 1 <= n <= HEADLINE_MAX:
            raise ValueError(f"{self.name}: a headline of 1 to {HEADLINE_MAX} figures, not {n}")
        for part in self.layout:
            if part[0] not in LAYOUT_PARTS or (
                part[0] == "readouts" and part[1] not in self.readouts
            ):
                raise ValueError(f"{self.name}: no layout part {part!r}")
        keys = [k for pairs in (self.headline, *self.readouts.values()) for k, _ in pairs]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"{self.name}: readouts shown twice: {', '.join(twice)}")


REGISTRY: dict[str, Widget] = {}
FACTS: list = []  # the modules' facts() functions, called by the build only
WARM: list = []  # the modules' slow first calls, made before the snapshot is taken
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    if not hasattr(_module, "RECORDS"):  # a shared helper, not a page's module
        continue
    REGISTRY.update((w.name, w) for w in _module.RECORDS)
    if hasattr(_module, "facts"):
        FACTS.append(_module.facts)
    WARM.extend(getattr(_module, "WARM", []))

WIDGETS = {name: w.function for name, w in REGISTRY.items()}  # what the worker and build call
# what buildtools/snapshot.mjs calls before it writes the snapshot every page downloads
SNAPSHOT_CALLS = [(n, {}) for n in sorted(REGISTRY) if REGISTRY[n].in_snapshot] + WARM
SPECS = {name: w.spec for name, w in REGISTRY.items()}  # in the order of each widget's controls
