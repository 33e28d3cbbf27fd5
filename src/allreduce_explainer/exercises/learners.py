"""A learner's own problems inside a course platform: each exercise's seed drawn from the
learner's id (SCORM's `cmi.core.student_id`) and the exercise's name, so two learners get
different problems and one learner gets the same problem again when the attempt resumes.

The seed is a stable hash (SHA-256, the same under CPython and Pyodide, unlike `hash()`), mapped
into the question banks' range, from BANK_SEED up: never a seed a page or the teacher's sheet
shows with its worked solution.
"""

from __future__ import annotations

import hashlib

from . import MAX_SEED
from .export import BANK_SEED

SPAN = MAX_SEED - BANK_SEED  # learner seeds are BANK_SEED to MAX_SEED - 1


def learner_seed(student: str, name: str) -> int:
    """The seed of exercise `name` (a page's instance name, such as "exercise-ring_time") for
    the learner `student`: the first 8 bytes of SHA-256 over both, NUL-separated so that no two
    pairs share a text, taken modulo SPAN above BANK_SEED."""
    digest = hashlib.sha256(f"{student}\0{name}".encode()).digest()
    return BANK_SEED + int.from_bytes(digest[:8], "big") % SPAN
