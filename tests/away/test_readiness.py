"""The self-check's "away mode" line: this install can serve the phone page, and an
install missing a page file or a library Away mode imports late says so instead of
failing when the person turns Away mode on."""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

import pytest

from qoder_desktop.away.readiness import check_away, page_files, uvicorn_protocols
from qoder_desktop.away.server import PageFiles
from qoder_desktop.diagnostics.report import Status

PAGE = Path(str(resources.files("qoder_desktop.away").joinpath("page")))


def test_this_install_can_serve_every_file_of_the_phone_page() -> None:
    result = check_away()
    assert result.status is Status.OK, result.line()
    found, missing = page_files()
    assert missing == []
    # the walk from index.html reaches every file the page folder holds
    assert sorted(found) == sorted(p.name for p in PAGE.iterdir() if p.is_file())
    assert "websockets" in result.found and "segno" in result.found
    assert any("websockets_sansio_impl" in name for name in uvicorn_protocols())


def test_a_page_missing_a_script_fails_with_advice(tmp_path: Path) -> None:
    copy = tmp_path / "page"
    shutil.copytree(PAGE, copy)
    (copy / "keys.js").unlink()  # app.js imports it
    result = check_away(PageFiles(copy))
    assert result.status is Status.FAIL
    assert "missing keys.js" in result.found and "reinstall" in result.advice


def test_a_library_left_out_fails_not_crashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "segno", None)  # as in a bundle without it
    result = check_away()
    assert result.status is Status.FAIL
    assert "segno" in result.found and "Away mode cannot start" in result.advice
