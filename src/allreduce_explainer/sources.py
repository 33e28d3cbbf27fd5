"""The three sources of time the site quotes, each with one name and one line style everywhere.

A time on these pages comes from one of three places, and a reader must never have to guess
which: the whiteboard model (the lock-step alpha-beta closed forms that teach), NCCL's estimate
(the time NCCL's own tuning code computes and chooses on, ported), and the fitted time (NCCL's
choice timed as published all_reduce_perf runs of that size measure it: the performance layer).
Every chart draws a source in its style (the colour stays the algorithm's), every legend, readout,
help text and prose sentence names it by `name`, and the build refuses the retired names.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    key: str
    name: str  # in a sentence, after "the" where it reads so: "NCCL's estimate"
    legend: str  # a chart's legend and a table's column
    dash: str  # Plotly's line dash
    width: float
    meaning: str  # the glossary's definition and the CLI's help


WHITEBOARD = Source(
    "whiteboard",
    "whiteboard model",
    "whiteboard model",
    "dash",
    2.5,
    "the lock-step alpha-beta model that teaches: every message pays a start-up cost alpha and "
    "its bytes over the link's bandwidth, step after step; not a clock for real hardware",
)
ESTIMATE = Source(
    "estimate",
    "NCCL's estimate",
    "NCCL's estimate",
    "dot",
    1.5,
    "the time NCCL's own tuning code computes for an algorithm and protocol, from its constant "
    "bandwidths and latencies; NCCL picks the pair with the least, so it decides the choice",
)
FITTED = Source(
    "fitted",
    "fitted time",
    "fitted time",
    "solid",
    2.5,
    "NCCL's choice timed as published all_reduce_perf runs of that size measure it: factors "
    "fitted on whole published sweeps (the performance layer), with the validation's band",
)
SOURCES = (WHITEBOARD, ESTIMATE, FITTED)
# A line that is no source of time (a link's line rate, a yardstick): thin, grey, dash-dot.
REFERENCE_DASH = "dashdot"
# Names the site used for these sources before they had one each. The build refuses them on
# every page (prose, lesson texts, widgets), in the CLI's help and in the notebooks, and the
# tests in the CLI's human output (sitebuild/doors.py): a reader meets one name per source.
# Each is a pattern: "NCCL's model", "NCCL's cost model", "NCCL 2.30.7's own cost model",
# "NCCL 2.30.7's own time model", "its own cost model", "NCCL's model's time" (the fitted
# time, or the port's estimate: say which), and the older names kept from the first list.
RETIRED = (
    r"NCCL(?: \d[\w.]*)? ?'s (?:own )?(?:cost |time )?model",  # "2.30.7 's": a fact's tags
    r"\bits own (?:cost |time )?model",
    r"NCCL's own (?:figure|estimate|time|choice and time)",
    r"as (?:published )?runs (?:of this size )?measure it",
    r"this site's time for NCCL's pick",
    r"timed as published runs",
    r"'s own model",
)
_RETIRED = re.compile("|".join(f"(?:{r})" for r in RETIRED))


def retired(text: str) -> list[str]:
    """The retired names of sources of time in `text` (spaces and line breaks read as one
    space, HTML's escapes and a typographic apostrophe as the characters they stand for)."""
    text = " ".join(html.unescape(text).replace("\u2019", "'").split())
    return [m.group() for m in _RETIRED.finditer(text)]
