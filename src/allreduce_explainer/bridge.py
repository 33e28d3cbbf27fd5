"""What the browser's worker calls: a widget by name, parameters as JSON text, state as JSON text.

Errors never escape as exceptions: a bad parameter comes back as {"ok": false, "error": {"field",
"message"}}, and anything unexpected as an error without a field, so the page can always answer.
"""

from __future__ import annotations

import json

from .errors import ParamError
from .widgets import WIDGETS


def call(name: str, params_json: str) -> str:
    try:
        if name not in WIDGETS:
            raise ParamError("_", f"no widget named {name!r}")
        try:
            params = json.loads(params_json)
        except ValueError:
            raise ParamError("_", "parameters are not valid JSON") from None
        state = WIDGETS[name](params)
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
