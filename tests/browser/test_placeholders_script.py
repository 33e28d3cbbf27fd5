"""buildtools/placeholders.py regenerates an embed's picture in Chromium, at its frame's size."""

from __future__ import annotations

from buildtools.placeholders import write_all
from helpers import png_size
from sitebuild.embeds import frame_size


def test_the_script_regenerates_one_embeds_picture(browser, server, tmp_path):
    (made,) = write_all(browser, server, ["latency"], tmp_path)
    assert made == tmp_path / "latency.png"
    assert png_size(made.read_bytes()) == frame_size("latency")
