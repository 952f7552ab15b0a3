"""Every rule of the app's stylesheet reaches a window the first time it is shown.

Qt matches a widget against the stylesheet when it is first polished. A property or
object name set after that (or read by a layout before it) leaves the widget looking as
if the rule did not exist until something re-polishes it: the pane headers were never
bold and the toolbar never padded, though `style.qss` says so. Re-setting the
application's stylesheet re-polishes everything, so a window that looks the same
before and after it got every rule the first time.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QLabel, QWidget
from test_dialog_fit import DIALOGS

from qoder_desktop.ui import icons
from qoder_desktop.ui.dialogs.base import BaseDecisionDialog
from qoder_desktop.ui.windows.main_window import MainWindow
from qoder_desktop.ui.windows.pairing_dialog import PairingDialog

WINDOWS: dict[str, Callable[[], QWidget]] = {"main window": MainWindow, **DIALOGS}


def _shown_image(widget: QWidget) -> QImage:
    QApplication.processEvents()
    return widget.grab().toImage()


@pytest.mark.parametrize("name", list(WINDOWS))
def test_the_window_looks_the_same_after_its_stylesheet_is_applied_again(
        qtbot, qapp: QApplication, name: str) -> None:  # type: ignore[no-untyped-def]
    window = WINDOWS[name]()
    qtbot.addWidget(window)
    window.resize(1200, 700)
    window.show()
    qtbot.waitExposed(window)
    if isinstance(window, BaseDecisionDialog):  # (arming enables the buttons)
        qtbot.waitUntil(window.is_armed, timeout=2000)
    elif isinstance(window, PairingDialog):
        qtbot.waitUntil(window.gate.is_armed, timeout=2000)
    first = _shown_image(window)
    qapp.setStyleSheet(icons.stylesheet())  # the same sheet: everything re-polished
    again = _shown_image(window)
    assert first == again, f"{name} changed when re-polished: a stylesheet rule missed it"


def test_the_pane_headers_are_bold_and_the_toolbar_padded_as_the_sheet_says(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    headers = [window.findChild(QLabel, name)
               for name in ("sessionsHeader", "queueHeader", "rulesHeader")]
    plain = QLabel("Sessions", window)
    plain.show()
    for header in headers:
        assert header is not None
        assert header.font().bold() and not plain.font().bold(), header.objectName()
        assert header.sizeHint().height() > plain.sizeHint().height()  # its padding
    assert window.ui.mainToolBar.layout().spacing() == 4  # `spacing: 4px`
