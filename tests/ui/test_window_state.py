"""Remembered window state: geometry and splitters, apart from settings."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json
from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication

from qoder_desktop.ui.windows.main_window import MainWindow


def test_window_state_round_trip(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(780, 560)  # the offscreen screen is 800 x 600
    first.move(QPoint(10, 20))
    first.show()
    qtbot.waitExposed(first)
    first.ui.mainSplitter.setSizes([300, 460])
    first.ui.centerSplitter.setSizes([300, 140])
    path = tmp_path / "state" / "window.json"
    first.save_state(path)
    data = json.loads(path.read_text())
    assert set(data) == {"version", "geometry", "state", "splitters"}
    assert set(data["splitters"]) == {"main", "left", "center"}
    main_sizes = first.ui.mainSplitter.sizes()
    center_sizes = first.ui.centerSplitter.sizes()

    second = MainWindow()
    qtbot.addWidget(second)
    assert second.restore_state(path)
    second.show()
    qtbot.waitExposed(second)
    QApplication.processEvents()
    assert second.size() == first.size()
    assert second.ui.mainSplitter.sizes() == main_sizes
    assert second.ui.centerSplitter.sizes() == center_sizes


def test_window_state_ignores_missing_and_corrupt_files(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win = MainWindow()
    qtbot.addWidget(win)
    assert not win.restore_state(tmp_path / "nothing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert not win.restore_state(bad)
    bad.write_text('{"version": 1, "geometry": "%%%", "splitters": {"main": 3}}')
    assert not win.restore_state(bad)
