"""The main window's first frame comes before asyncio, the database and start-up load;
what needs them waits for them, and what goes wrong meanwhile is still shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.app import ErrorsBeforeFrame
from qoder_desktop.ui.error_reporter import TITLE, ErrorReporter


def _app_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               QODER_DESKTOP_HOME=str(tmp_path / "qoder"), XDG_RUNTIME_DIR=str(tmp_path))
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    return env


FRAME_PROBE = """
import json, os, sys
from PySide6 import QtCore  # (its `Qt` namespace only when the check needs it)
from PySide6.QtCore import QEvent, QObject, QTimer
from qoder_desktop.ui.windows.main_window import MainWindow

LATER = ("jsonschema", "hashlib", "socket", "asyncio", "qasync", "qoder_desktop.store.database",
         "qoder_desktop.ui.event_loop", "qoder_desktop.ui.error_reporter",
         "qoder_desktop.ui.start_up")
NOT_FOR_THE_FRAME = ("locale", "pkgutil", "html", "datetime")  # (argparse's gettext: locale)
QT_LATER = {"QtGui": ("QTextFormat", "QTextCharFormat", "QIcon", "QPainter", "QBrush",
                      "QFont"),
            "QtWidgets": ("QMessageBox",)}  # classes the first frame needs not build
report = {}

def loop_running():  # the app's asyncio loop runs: start-up has begun
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and asyncio._get_running_loop() is not None

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and "at the first paint" not in report:
            report["at the first paint"] = [name for name in LATER if name in sys.modules]
            report["resources read with"] = [name for name in ("importlib.resources",)
                                              if name in sys.modules]
            report["modules the frame does not need"] = [
                name for name in NOT_FOR_THE_FRAME if name in sys.modules]
            report["Qt classes built"] = [  # (PySide6 puts a class in its module when built)
                name for module, names in QT_LATER.items() for name in names
                if name in vars(sys.modules["PySide6." + module])]
            self.poll = QTimer()
            self.poll.timeout.connect(self.check)
            self.poll.start(5)
        return False

    def check(self):
        if loop_running():
            report["when the loop runs"] = [name for name in LATER if name in sys.modules]
            report["transcript opaque"] = self.window.ui.transcriptView.viewport(
                ).testAttribute(QtCore.Qt.WidgetAttribute.WA_OpaquePaintEvent)
            report["sessions list has its model"] = (
                self.window.ui.sessionsView.model() is self.window.session_pane.model)
            print(json.dumps(report), flush=True)
            os._exit(0)

watch = FirstPaint()
shown = MainWindow.show

def show(self):
    watch.window = self
    self.installEventFilter(watch)
    shown(self)

MainWindow.show = show
finish = MainWindow.finish_after_first_frame

def finish_after_first_frame(self):  # (the frame is on the display)
    report["Qt namespace built by the frame"] = "Qt" in vars(QtCore)
    finish(self)

MainWindow.finish_after_first_frame = finish_after_first_frame
from qoder_desktop.__main__ import main
sys.exit(main([]))
"""


def test_the_first_frame_is_painted_before_asyncio_the_database_and_start_up_load(
        tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", FRAME_PROBE], env=_app_env(tmp_path),
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=60,
                          check=False)
    report = json.loads(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "{}")
    assert report.get("at the first paint") == [], done.stderr
    assert report["Qt classes built"] == []
    assert report["resources read with"] == []  # (the scenarios are read for --help)
    # a start without arguments builds no argparse parser (its gettext lookups load
    # locale); the resources' own loader reads the stylesheet; html and datetime load
    # with the first text to escape and the first row with a time
    assert report["modules the frame does not need"] == []
    # jsonschema: bound unrun by the deferrals `lean_imports_after_first_frame` sets up
    # hashlib (the instance server's name) and socket: a launch holding the data folder's
    # lock is the only one there and asks no other instance before its frame
    assert report["when the loop runs"] == ["jsonschema", "hashlib", "socket", "asyncio",
                                            "qasync",
                                            "qoder_desktop.store.database",
                                            "qoder_desktop.ui.event_loop",
                                            "qoder_desktop.ui.error_reporter",
                                            "qoder_desktop.ui.start_up"]
    assert report["transcript opaque"] is True  # set up after the frame
    # PySide6 builds the ~90 enums of its `Qt` namespace (~25 ms) at its first use: the
    # frame's code uses `qt_numbers`, and the sessions list takes its model after it
    assert report["Qt namespace built by the frame"] is False
    assert report["sessions list has its model"] is True


STORAGE_PROBE = """
import json, os, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from qoder_desktop.config.paths import AppPaths

AppPaths.default().ensure().database.mkdir()  # a folder where the database file should be
report = {}

def look():
    for widget in QApplication.topLevelWidgets():
        if (isinstance(widget, QMessageBox) and widget.objectName() == "storageErrorBox"
                and widget.isVisible()):
            report.update(title=widget.windowTitle(), text=widget.text(),
                          ways_in=[name for name in ("qoder_desktop.ui.wiring",
                                                     "qoder_desktop.terminal.server")
                                   if name in sys.modules])
            widget.reject()  # the person closes the box
            return
    QTimer.singleShot(5, look)

QTimer.singleShot(0, look)
from qoder_desktop.__main__ import main
code = main([])
print(json.dumps(dict(report, code=code)), flush=True)
"""


def test_a_database_that_cannot_open_is_shown_after_the_frame_and_nothing_starts(
        tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", STORAGE_PROBE], env=_app_env(tmp_path),
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=60,
                          check=False)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["title"] == "Qoder Desktop cannot start"
    assert report["text"].startswith("Cannot open the database file ")
    assert report["text"].endswith("Qoder Desktop will close.")
    assert report["ways_in"] == []  # no server, no wiring: nothing could be asked
    assert report["code"] == 1
    assert "qoder-desktop: Cannot open the database file" in done.stderr


class _Emitter(QObject):
    fired = Signal()


@pytest.fixture
def early_errors() -> Iterator[ErrorsBeforeFrame]:
    previous = sys.excepthook
    errors = ErrorsBeforeFrame()
    try:
        yield errors
    finally:
        sys.excepthook = previous


def _error_boxes() -> list[QMessageBox]:
    return [widget for widget in QApplication.topLevelWidgets()
            if isinstance(widget, QMessageBox) and widget.windowTitle() == TITLE
            and widget.isVisible()]


def test_an_error_in_a_slot_before_the_reporter_exists_is_shown_once_it_does(
        qtbot: QtBot, tmp_path: Path, early_errors: ErrorsBeforeFrame) -> None:
    emitter = _Emitter()

    def broken_slot() -> None:
        raise RuntimeError("the first paint broke")

    emitter.fired.connect(broken_slot)
    emitter.fired.emit()  # Qt hands the slot's error to sys.excepthook
    assert _error_boxes() == []  # nothing can show it yet
    reporter = ErrorReporter(tmp_path / "qoder-desktop.log")
    early_errors.hand_to(reporter.excepthook)
    try:
        assert sys.excepthook == reporter.excepthook
        qtbot.waitUntil(lambda: len(_error_boxes()) == 1)
        [box] = _error_boxes()
        assert "RuntimeError: the first paint broke" in box.text()
    finally:
        for box in _error_boxes():
            box.done(0)


def test_errors_kept_when_the_app_ends_before_its_reporter_go_to_the_previous_hook(
        early_errors: ErrorsBeforeFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[BaseException] = []
    monkeypatch.setattr(early_errors, "_previous",
                        lambda _kind, error, _tb: printed.append(error))
    early_errors(ValueError, ValueError("a broken window"), None)
    early_errors.close()
    assert [str(error) for error in printed] == ["a broken window"]
    early_errors.close()  # once only
    assert len(printed) == 1
