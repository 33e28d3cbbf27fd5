"""Every widget whose record has a prediction judge draws its form on its page (a chart needs
`extras=("_predict",)`, a stepper's partial has it), with its question at the page's defaults,
and the course page lists each of those questions from the registry."""

from __future__ import annotations

import re

from allreduce_explainer.widgets import REGISTRY
from helpers import soup


def _pages(built):
    for path in built.glob("*/index.html"):
        yield path, soup(path)


def test_every_prediction_draws_its_form_with_its_question(built):
    asking = {name for name, w in REGISTRY.items() if w.predict}
    found = {}
    for path, page in _pages(built):
        for el in page.select("[data-widget]"):
            name = el["data-widget"]
            if name in asking and name not in found:
                forms = el.select("[data-role=predict]")
                assert len(forms) == 1, (path.parent.name, name)
                found[name] = forms[0].select_one("[data-role=predict-question]").get_text()
    assert set(found) == asking
    for name, question in found.items():
        assert question == REGISTRY[name].function()["prediction"]["question"]


def test_the_course_page_lists_every_question(built):
    text = soup(built / "use-in-your-course" / "index.html").get_text()
    asking = [w for w in REGISTRY.values() if w.predict]
    assert re.search(rf"\b{len(asking)} widgets ask the reader to predict", text)
    for w in asking:
        assert w.function()["prediction"]["question"] in text, w.name
