"""The Qt binding must not corrupt Python's reference counts.

PySide6 6.12.0 on Python 3.11 drops one reference to `None` on every Qt call that
returns nothing; after a few thousand calls the interpreter aborts with
"deallocating None". pyproject.toml excludes that release; this test catches any
binding that does it again.
"""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot


def test_void_qt_calls_leave_the_refcount_of_none_alone(qtbot: QtBot) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    before = sys.getrefcount(None)
    for index in range(10_000):
        label.setText(str(index))
    assert abs(sys.getrefcount(None) - before) < 100
