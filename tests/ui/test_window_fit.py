"""The main window fits the screen it opens on (1366×768 under Xvfb, 800×600 offscreen),
and the sessions list fits its pane: no horizontal scroll bar, the folder's last part
readable, two sessions of one scenario told apart by it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QApplication, QWidget

from qoder_desktop.domain.models import Backend, SessionInfo, SessionState
from qoder_desktop.ui import window_state
from qoder_desktop.ui.widgets.session_list import COL_CWD, COL_NAME, COLUMNS, FOLDER_WIDTH_MIN
from qoder_desktop.ui.windows.main_window import MainWindow


def _on_screen(window: QWidget, widget: QWidget) -> QRect:
    """Where `widget` lies, in the screen's coordinates."""
    return QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())


def _assert_fits(window: MainWindow) -> None:
    available = window.screen().availableGeometry()
    assert available.contains(window.frameGeometry()), (window.frameGeometry(), available)
    assert window.height() <= available.height() - window_state.FRAME_ALLOWANCE[1]
    inside = QRect(window.mapToGlobal(QPoint(0, 0)), window.size())
    for pane in (window.ui.rulesView, window.ui.queueView, window.ui.promptEdit,
                 window.ui.sendButton, window.ui.statusBar):
        assert inside.contains(_on_screen(window, pane)), pane.objectName()
        assert pane.isVisible() and pane.height() > 0 and pane.width() > 0, pane.objectName()


def test_a_new_window_fits_the_screen_with_rules_and_status_bar_showing(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    _assert_fits(window)
    assert window.ui.rulesView.height() >= 60  # a rule or two readable, not a sliver


def test_a_window_saved_on_a_larger_screen_is_restored_within_this_one(
        qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    big = MainWindow()
    qtbot.addWidget(big)
    big.ui.mainSplitter.setSizes([500, 700])
    path = tmp_path / "window.json"
    big.save_state(path)
    # What a 1920×1200 screen left: a large window far to the right and down.
    blob = big.saveGeometry()
    data = json.loads(path.read_text())
    probe = MainWindow()
    qtbot.addWidget(probe)
    probe.setGeometry(1500, 900, 1800, 1100)
    data["geometry"] = window_state.capture(probe, {})["geometry"]
    path.write_text(json.dumps(data))
    assert blob.size() > 0
    again = MainWindow()
    qtbot.addWidget(again)
    assert again.restore_state(path)
    again.show()
    qtbot.waitExposed(again)
    QApplication.processEvents()
    _assert_fits(again)


def test_fitted_rect_keeps_a_window_that_fits_and_pulls_one_that_does_not() -> None:
    screen = QRect(0, 0, 1366, 768)
    small = QRect(100, 50, 900, 600)
    assert window_state.fitted_rect(small, screen) == small
    fitted = window_state.fitted_rect(QRect(600, 300, 1360, 820), screen)
    assert screen.contains(fitted) and fitted.height() <= 768 - 40
    lost = window_state.fitted_rect(QRect(5000, 5000, 400, 300), screen)
    assert screen.contains(lost) and lost.size() == QRect(0, 0, 400, 300).size()


def _session(name: str, cwd: str) -> SessionInfo:
    return SessionInfo(name=name, backend=Backend.CLAUDE, cwd=cwd, state=SessionState.RUNNING)


def test_sessions_list_fits_its_pane_and_tells_sessions_of_one_scenario_apart(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    root = "/tmp/qoder-demo-3k2j1/scratch"
    first = _session("Demo (write_edit) · a long scenario name for the list", root + "-a81f")
    second = _session("Demo (write_edit) · a long scenario name for the list", root + "-c07e")
    window.update_session(first)
    window.update_session(second)
    QApplication.processEvents()
    view = window.ui.sessionsView
    header = view.horizontalHeader()
    model = view.model()
    total = sum(header.sectionSize(c) for c in range(len(COLUMNS)))
    if window.screen().availableGeometry().width() >= 1366:  # on xcb under Xvfb
        assert total <= view.viewport().width()  # every column shows
        assert not view.horizontalScrollBar().isVisible()
        assert header.sectionSize(COL_NAME) >= 140  # a name of ~18 characters, whole
    else:  # offscreen (800 px): the pane is narrower, but the columns keep their widths
        assert header.sectionSize(COL_CWD) >= FOLDER_WIDTH_MIN
    shown = [model.index(r, COL_CWD).data() for r in range(2)]
    assert shown == ["scratch-a81f", "scratch-c07e"]
    metrics = view.fontMetrics()
    for text in shown:  # whole, not elided
        assert metrics.horizontalAdvance(text) < header.sectionSize(COL_CWD) - 6
    heading = QFont(header.font())
    heading.setWeight(QFont.Weight.DemiBold)  # as the stylesheet draws the headers
    header_metrics = QFontMetrics(heading)
    for column, title in enumerate(COLUMNS):  # every header whole (not "olde"), padded
        assert header_metrics.horizontalAdvance(title) + 12 <= header.sectionSize(column), title
    assert header.sectionSize(COL_NAME) >= 100
    tip = model.index(0, COL_CWD).data(Qt.ItemDataRole.ToolTipRole)
    assert root + "-a81f" in tip
