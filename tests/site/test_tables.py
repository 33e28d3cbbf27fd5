"""A long table folds at one count: Python's views.FOLD (the rows a folded table sends) and
chart.js's (where it folds a table Python sent whole) are the same."""

from __future__ import annotations

import re

from allreduce_explainer.widgets import views
from tests.helpers import ROOT


def test_chart_js_folds_at_pythons_count():
    js = (ROOT / "client" / "js" / "chart.js").read_text()
    assert [int(x) for x in re.findall(r"var FOLD = (\d+);", js)] == [views.FOLD]
