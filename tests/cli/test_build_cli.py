"""`build.py`'s site address: `--url`, else AE_SITE_URL, checked once; without one the build says
in one line on stderr that it writes no oEmbed files (the Builder itself is replaced here)."""

from __future__ import annotations

import pytest

import build
from sitebuild.embeds import SITE_URL_ENV


@pytest.fixture
def built(monkeypatch):
    """What each build was given, (address, whether SCORM packages keep their solutions),
    instead of building."""
    given = []

    class Recorder:
        def __init__(self, out, url, scorm_solutions=False):
            given.append((url, scorm_solutions))

        def build(self):
            pass

    monkeypatch.setattr(build, "Builder", Recorder)
    monkeypatch.delenv(SITE_URL_ENV, raising=False)
    return given


def test_without_an_address_the_build_says_so_once(built, tmp_path, capsys):
    build.main(["--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert built == [("", False)]
    assert err.count("\n") == 1 and "--url" in err and SITE_URL_ENV in err and "oEmbed" in err


def test_the_flag_or_the_environment_gives_the_address(built, tmp_path, monkeypatch, capsys):
    build.main(["--out", str(tmp_path), "--url", "https://ex.org/ae"])
    monkeypatch.setenv(SITE_URL_ENV, "https://host.example/course/")
    build.main(["--out", str(tmp_path)])
    build.main(["--out", str(tmp_path), "--url", "http://127.0.0.1:8000/"])  # the flag wins
    urls = [url for url, _ in built]
    assert urls == ["https://ex.org/ae/", "https://host.example/course/", "http://127.0.0.1:8000/"]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("url", ["example.org/ae", "../", "ftp://x.org/", "https://x.org/?a=1"])
def test_a_bad_address_exits_2_naming_the_flag(built, tmp_path, url, capsys):
    with pytest.raises(SystemExit) as e:
        build.main(["--out", str(tmp_path), "--url", url])
    assert e.value.code == 2 and built == []
    err = capsys.readouterr().err
    assert "argument --url" in err and "Traceback" not in err


def test_the_scorm_packages_keep_their_solutions_only_when_asked(built, tmp_path):
    build.main(["--out", str(tmp_path)])
    build.main(["--out", str(tmp_path), "--scorm-solutions"])
    assert [solutions for _, solutions in built] == [False, True]
