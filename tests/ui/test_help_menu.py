"""Help › Keyboard shortcuts (F1) and Help › About: what a person sees in them."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QApplication

from qoder_desktop import __version__
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.diagnostics.about import about_info
from qoder_desktop.ui.windows.help_dialogs import SHORTCUTS
from qoder_desktop.ui.windows.main_window import MainWindow

README = Path(__file__).resolve().parents[2] / "README.md"


def _window(qtbot) -> MainWindow:  # type: ignore[no-untyped-def]
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    return window


def test_the_help_menu_has_both_entries(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = _window(qtbot)
    titles = [a.text() for a in window.ui.menuBar.actions()]
    assert titles[-1] == "&Help"
    entries = [a.text() for a in window.ui.helpMenu.actions() if not a.isSeparator()]
    assert entries == ["&Keyboard shortcuts", "&About Qoder Desktop"]


def test_f1_lists_the_readme_keys_and_the_window_keys(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = _window(qtbot)
    qtbot.keyClick(window, Qt.Key.Key_F1)
    dialog = window.help.shortcuts_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    table = dialog.table
    rows = [tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())]
    assert rows == list(SHORTCUTS)
    # Every key of the README's keyboard table is in the list.
    section = README.read_text(encoding="utf-8").split("\n## Keyboard\n")[1].split("\n## ")[0]
    readme_keys = re.findall(r"^\| ([^|]+?) \|", section, re.M)
    assert len(readme_keys) > 4
    listed = {keys for _where, keys, _what in SHORTCUTS}
    for keys in readme_keys:
        if keys not in ("keys", "---"):
            assert keys in listed, keys
    # And every shortcut of the window's menus.
    shortcuts = {action.text(): action.shortcut().toString()
                 for action in window.findChildren(type(window.ui.newSessionAction))
                 if action.shortcut().toString()}
    assert len(shortcuts) > 3
    for text, shortcut in shortcuts.items():
        assert shortcut in listed, (text, shortcut)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible())


def test_about_shows_versions_folders_and_opens_the_log(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = _window(qtbot)
    paths = AppPaths.under(tmp_path)
    window.help.about_source = lambda: about_info(paths)
    window.ui.aboutAction.trigger()
    dialog = window.help.about_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    assert dialog.findChild(type(dialog.log_link), "aboutTitle").text() == (
        f"Qoder Desktop {__version__}")
    table = dialog.details
    shown = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", shown["claude-agent-sdk"])
    assert re.fullmatch(r"\d+\.\d+\.\d+ \(bundled\)", shown["claude CLI"])
    assert "qoder-agent-sdk" in shown and "qoder CLI" in shown and "Qt" in shown
    assert shown["Sessions, rules and decisions"] == str(paths.data_dir)
    assert shown["Settings"] == str(paths.config_dir)
    opened: list[QUrl] = []
    dialog.open_url = opened.append
    dialog.log_link.linkActivated.emit(dialog.log_url.toString())
    assert opened == [QUrl.fromLocalFile(str(paths.log_file))]
    assert str(paths.log_file) in dialog.log_link.text()


def test_about_shows_every_row_without_scrolling(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = _window(qtbot)
    window.help.about_source = lambda: about_info(AppPaths.under(tmp_path))
    dialog = window.help.open_about()
    qtbot.waitExposed(dialog)
    QApplication.processEvents()
    assert dialog.details.verticalScrollBar().maximum() == 0
    assert dialog.height() <= 768 - 40
