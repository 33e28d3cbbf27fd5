"""Check yourself: the exercise widgets (one problem, and a teacher's sheet), from the core's
exercises package."""

from ..exercises import WIDGETS

__all__ = ["WIDGETS"]
