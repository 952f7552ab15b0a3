"""The main window's new-session form: it opens filled in with the defaults, only one
copy at a time, in demo mode in a fresh scratch folder each time, and what the person
starts is passed on to the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.ui.windows.session_form_opener import NewSessionOpener


class Window(QObject):
    """Where the opener passes a submitted form (the main window's signal)."""

    submitted = Signal(object)


def opener_on(qtbot: QtBot, **kw: object) -> tuple[NewSessionOpener, Window, QMainWindow]:
    main = QMainWindow()
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    window = Window(main)
    return NewSessionOpener(main, window.submitted, **kw), window, main  # type: ignore[arg-type]


def test_the_form_opens_with_the_defaults_and_only_once(qtbot: QtBot, tmp_path: Path) -> None:
    opener, _, _ = opener_on(qtbot)
    opener.defaults = SessionOptions(cwd=str(tmp_path), model="claude-test")
    dialog = opener.open()
    qtbot.waitExposed(dialog)
    assert dialog.ui.cwdEdit.text() == str(tmp_path)
    assert opener.open() is dialog
    assert dialog.ui.scenarioCombo.isHidden()


def test_what_the_person_starts_reaches_the_window(qtbot: QtBot, tmp_path: Path) -> None:
    opener, window, _ = opener_on(qtbot)
    opener.defaults = SessionOptions(cwd=str(tmp_path))
    dialog = opener.open()
    with qtbot.waitSignal(window.submitted) as started:
        dialog.submit()
    assert isinstance(started.args[0], SessionOptions)
    assert started.args[0].cwd == str(tmp_path)
    qtbot.waitUntil(lambda: opener.dialog is None)  # closed: the next open is a new form


def test_in_demo_mode_each_form_gets_a_fresh_scratch_folder(qtbot: QtBot, tmp_path: Path) -> None:
    opener, _, _ = opener_on(qtbot, scenarios=["happy", "deny"])
    folders = iter([tmp_path / "scratch-1", tmp_path / "scratch-2"])
    opener.scratch_folder = lambda: str(next(folders))
    first = opener.open()
    assert first.ui.cwdEdit.text() == str(tmp_path / "scratch-1")
    assert not first.ui.scenarioCombo.isHidden()
    first.reject()
    qtbot.waitUntil(lambda: opener.dialog is None)
    assert opener.open().ui.cwdEdit.text() == str(tmp_path / "scratch-2")
