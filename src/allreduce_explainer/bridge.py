"""What the browser's worker calls: a widget by name, parameters as JSON text, state as JSON text.

Errors never escape as exceptions: a bad parameter comes back as {"ok": false, "error": {"field",
"message"}}, and anything unexpected as an error without a field, so the page can always answer.
"""

from __future__ import annotations

import json

from .errors import ParamError
from .widgets import REGISTRY, WIDGETS
from .widgets.exercises import bank_file, learner_seeds


def predict(request) -> dict:
    """A reader's prediction judged by its widget (client/js/predict.js): {widget, params,
    answer} -> {correct, message}. An answer that cannot be read is refused naming "answer"."""
    if not isinstance(request, dict):
        raise ParamError("_", "a prediction is {widget, params, answer}")
    name = request.get("widget")
    judge = REGISTRY[name].predict if isinstance(name, str) and name in REGISTRY else None
    if judge is None:
        raise ParamError("widget", f"no widget named {name!r} asks for a prediction")
    return judge(request.get("params"), request.get("answer"))


# What a page may call by name: every widget, the teacher's sheet's bank files, a course
# package's learner seeds (client/js/scorm.js) and the predictions' verdicts
CALLS = WIDGETS | {"bank_file": bank_file, "learner_seeds": learner_seeds, "predict": predict}

# Long text parameters the worker has handed over once (client/js/worker.js), by name
_KEPT: dict[str, str] = {}


def keep(name: str, text: str) -> None:
    """Keep a long text parameter (an opened log of up to a megabyte) for the calls that follow,
    which send {"kept": name} in its place: encoding, copying, decoding and hashing a megabyte
    inside every call's JSON was most of a call's time with a log open (bench/site.py)."""
    _KEPT[name] = text


def _restored(params: object) -> object:
    """The parameters with each kept text put back where a call left its name."""
    if not isinstance(params, dict):
        return params
    return {k: _KEPT[k] if v == {"kept": k} and k in _KEPT else v for k, v in params.items()}


def warm_calls(names_json: str) -> str:
    """The worker's warm-up for a page's widgets (client/js/worker.js), as JSON: "first", each
    widget's slow first calls ([name, parameters as JSON]: its defaults if the snapshot did not
    make them, then its own `warm`), made once; "again", the widgets by
    name, called at their defaults in turn for the rest of the warm-up."""
    names = [n for n in json.loads(names_json) if n in REGISTRY]
    first = [
        [n, json.dumps(params)]
        for n in names
        for params in ((() if REGISTRY[n].in_snapshot else ({},)) + REGISTRY[n].warm)
    ]
    return json.dumps({"first": first, "again": names})


def call(name: str, params_json: str) -> str:
    try:
        if name not in CALLS:
            raise ParamError("_", f"no widget named {name!r}")
        try:
            params = json.loads(params_json)
        except ValueError:
            raise ParamError("_", "parameters are not valid JSON") from None
        state = CALLS[name](_restored(params))
        return json.dumps({"ok": True, "state": state}, allow_nan=False)
    except ParamError as e:
        return json.dumps({"ok": False, "error": {"field": e.field, "message": e.message}})
    except Exception as e:  # noqa: BLE001 - the page must get an answer, whatever happened
        return json.dumps(
            {
                "ok": False,
                "error": {"field": None, "message": f"internal error: {type(e).__name__}"},
            }
        )
