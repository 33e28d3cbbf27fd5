"""The three sources of time the site quotes, each with one name and one line style everywhere.

A time on these pages comes from one of three places, and a reader must never have to guess
which: the whiteboard model (the lock-step alpha-beta closed forms that teach), NCCL's estimate
(the time NCCL's own tuning code computes and chooses on, ported), and the fitted time (NCCL's
choice timed as published all_reduce_perf runs of that size measure it: the performance layer).
Every chart draws a source in its style (the colour stays the algorithm's), every legend, readout,
help text and prose sentence names it by `name`, and the build refuses the retired names.
"""

from __future__ import annotations

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
# Names the pages used for these sources before they had one each; the build refuses them.
RETIRED = (
    "NCCL's own figure",
    "NCCL's own cost model",
    "NCCL's own estimate",
    "as runs measure it",
    "as published runs of this size measure it",
    "this site's time for NCCL's pick",
    "timed as published runs",
    "'s own model",
)
