"""GPU colours shared by every page and chart: Okabe & Ito's palette, then Paul Tol's muted one.

Both were designed to stay distinguishable under the common colour-vision deficiencies; colour is
never the only cue (every GPU is also labelled by number).
"""

GPU_COLOURS = [
    # Okabe & Ito, "Color Universal Design" (2008), black replaced by grey
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#999999",
    # Paul Tol, "muted" qualitative scheme (personal.sron.nl/~pault)
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#DDCC77",
    "#CC6677",
    "#882255",
]


def gpu_css(selector: str = ":root") -> str:
    """The GPU colours as the CSS variables --gpu-0, --gpu-1, ... that the views' cells use: the
    site's static/gpu-colours.css, and a notebook widget's box."""
    lines = "".join(f"  --gpu-{i}: {c};\n" for i, c in enumerate(GPU_COLOURS))
    return f"{selector} {{\n{lines}}}\n"


# One colour per algorithm in every chart (Okabe & Ito); "measured" is an nccl-tests log's points.
SERIES = {
    "ring": "#0072B2",
    "naive": "#D55E00",
    "tree": "#009E73",
    "hierarchical": "#CC79A7",
    "multi-ring": "#56B4E9",
    "measured": "#D55E00",  # vermillion: black would vanish on the dark theme
}
# The grey of everything that is not a series: guide lines, legend keys, "you are here" markers.
NEUTRAL = "#888888"
