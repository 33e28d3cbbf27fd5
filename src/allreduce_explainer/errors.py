"""One error type for bad parameters, so every caller can name the field that caused it."""


class ParamError(ValueError):
    """A parameter out of range or of the wrong type; `field` names it for the page and the CLI."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
