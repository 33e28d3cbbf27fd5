"""The page widgets: each a pure function from JSON-able parameters to a JSON-able state.

The build calls each with its defaults and inlines the state into the page; the browser's worker
calls the same function (through bridge.py) whenever a reader changes a control. A bad parameter
raises ParamError naming it, which the page shows next to that control.

Each module of this package serves one page and exports WIDGETS, a dict name -> function, and
SPECS, a dict name -> its parameters (params.py), and
optionally facts() -> dict of the figures its prose quotes ({{ f.NAME }}) and WARM, calls
[(widget, params)] whose first answer is slow (a model to build, a layout to count): the site's
Python snapshot has made them already, so a reader's first choice is as quick as the second. This
registry collects them all, so a new page adds a module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

WIDGETS: dict = {}
SPECS: dict = {}  # name -> {parameter name: Param}, in the order of the widget's controls
FACTS: list = []  # the modules' facts() functions, called by the build only
WARM: list = []  # the modules' slow first calls, made before the snapshot is taken
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    if hasattr(_module, "WIDGETS"):  # a page's module, not a shared helper
        WIDGETS.update(_module.WIDGETS)
        SPECS.update(_module.SPECS)
        if hasattr(_module, "facts"):
            FACTS.append(_module.facts)
        WARM.extend(getattr(_module, "WARM", []))
