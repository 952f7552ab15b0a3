"""A spare's first frame on screen: what the window system shows is the dialog's content
(its backing store made ahead on X11), and what waits for the first paint waits for the
one on screen, not the off-screen render that laid the spare out.

Run offscreen and, through `test_keys_on_xcb.py`, on xcb under Xvfb.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.loop import wait_qt_turns
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import RequestKind
from qoder_desktop.ui.dialogs import ApprovalDialog, BaseDecisionDialog, dialog_for
from qoder_desktop.ui.dialogs.spares import DialogSpares
from tests.ui.test_dialog_spares import _requests, _show_and_capture


@pytest.mark.arming  # (the real delay: the dialog does not change while it is grabbed)
@pytest.mark.parametrize("which", ["bash", "edit", "question", "plan"])
def test_the_first_frame_of_a_spare_on_screen_is_its_content(
        qtbot: QtBot, spares: DialogSpares, make_request: Any, tmp_path: Path,
        which: str) -> None:
    """An approval spare's backing store is made and touched ahead (on X11, with a plain
    fill); what the window system holds once the dialog has painted is the dialog's
    content, nothing left over (the fill shown through anywhere fails this)."""
    request = _requests(make_request, tmp_path)[which]
    dialog = spares.take(request, None)
    qtbot.addWidget(dialog)
    _assert_first_frame_is_content(qtbot, dialog)


def _assert_first_frame_is_content(qtbot: QtBot, dialog: BaseDecisionDialog) -> None:
    """Show `dialog`; once it has painted, the window system holds its content."""
    from PySide6.QtCore import QEvent, QObject

    painted: list[bool] = []

    class _Painted(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and watched is dialog:
                painted.append(True)
            return False

    watch = _Painted(dialog)
    dialog.installEventFilter(watch)
    dialog.show()
    qtbot.waitUntil(lambda: bool(painted), timeout=3000)
    wait_qt_turns(qtbot, 1)  # the turn after the paint: the frame is flushed
    screen = dialog.screen().grabWindow(dialog.winId()).toImage()
    own = dialog.grab().toImage()
    assert not dialog.is_armed()  # (nothing changed between the two: not armed yet)
    if screen.isNull() or screen.size() != own.size():
        pytest.skip("this platform cannot grab a window's own pixels")
    screen = screen.convertToFormat(own.format())
    differing = sum(screen.pixel(x, y) != own.pixel(x, y)
                    for y in range(0, own.height(), 3) for x in range(0, own.width(), 3))
    assert differing == 0, f"{differing} pixels on screen differ from the dialog's content"


@pytest.mark.arming  # (the real delay: the dialog does not change while it is grabbed)
def test_the_approval_spare_makes_its_store_ahead_only_while_no_dialog_is_open(
        qtbot: QtBot, spares: DialogSpares, make_request: Any) -> None:
    """With a dialog on screen, the approval spare rebuilt behind it holds no second
    backing store (as much shared memory again, for a request that waits its turn);
    once that dialog closes, the spare makes it, and the next dialog's first frame is
    its content."""
    if QGuiApplication.platformName() != "xcb":
        pytest.skip("the backing store is made ahead on X11 only (run on xcb too)")
    first_spare = spares.spare(RequestKind.TOOL)
    assert first_spare is not None and first_spare.is_laid_out()
    assert not first_spare.wants_store()  # made at start-up: no dialog was open
    first = spares.take(make_request("Bash", {"command": "make"}, cwd="/work/p"), None)
    qtbot.addWidget(first)
    first.show()
    qtbot.waitUntil(lambda: spares.spare(RequestKind.TOOL) not in (None, first_spare)
                    and spares.is_idle(), timeout=5000)
    rebuilt = spares.spare(RequestKind.TOOL)
    assert rebuilt is not None and rebuilt.is_laid_out()
    assert rebuilt.wants_store(), "a second backing store was made with a dialog on screen"
    first.withdraw()
    qtbot.waitUntil(lambda: not rebuilt.wants_store(), timeout=3000)
    second = spares.take(make_request("Bash", {"command": "make test"}, cwd="/work/p"), None)
    assert second is rebuilt
    qtbot.addWidget(second)
    _assert_first_frame_is_content(qtbot, second)


def test_a_spare_rendered_ahead_is_not_painted_until_it_is_on_screen(
        qtbot: QtBot, make_request: Any) -> None:
    """`when_painted` (the request's ledger row, the next spare) waits for the first
    paint on screen, not the off-screen render that laid the spare out."""
    spare = ApprovalDialog(None, None, staged=True)
    qtbot.addWidget(spare)
    spare.finish_building()
    spare.lay_out()
    wait_qt_turns(qtbot)  # the off-screen render's own turns are over
    spare.load(make_request("Bash", {"command": "make"}, cwd="/work/p"))
    calls: list[str] = []
    spare.when_painted(lambda: calls.append("painted"))
    wait_qt_turns(qtbot)  # a paint (and the turn after it) would have come by now
    assert calls == []
    spare.show()
    qtbot.waitUntil(lambda: calls == ["painted"], timeout=3000)
    spare.when_painted(lambda: calls.append("later"))  # after the paint: the next turn
    qtbot.waitUntil(lambda: calls == ["painted", "later"], timeout=3000)


def test_a_call_after_a_dialogs_first_paint_that_fails_is_reported(
        qtbot: QtBot, make_request: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """As every call after a first paint (`scheduling.FirstPaint`): one that raises
    reaches the error reporter (`sys.excepthook`), and the others still run."""
    errors: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, *_rest: errors.append(kind))
    dialog = dialog_for(make_request("Bash", {"command": "make"}, cwd="/work/p"))
    qtbot.addWidget(dialog)
    calls: list[str] = []

    def fails() -> None:
        raise RuntimeError("a call after the paint fails")

    dialog.when_painted(fails)
    dialog.when_painted(lambda: calls.append("still runs"))
    dialog.show()
    qtbot.waitUntil(lambda: calls == ["still runs"], timeout=3000)
    assert errors == [RuntimeError]


def test_a_dialog_closed_before_it_painted_calls_when_painted_once(
        qtbot: QtBot, make_request: Any) -> None:
    dialog = dialog_for(make_request("Bash", {"command": "make"}, cwd="/work/p"))
    qtbot.addWidget(dialog)
    calls: list[str] = []
    dialog.when_painted(lambda: calls.append("closed"))
    dialog.withdraw()
    assert calls == ["closed"]
    wait_qt_turns(qtbot)  # a second call would come a turn later
    assert calls == ["closed"]


def test_the_view_a_tool_does_not_need_is_hidden_and_gone_once_painted(
        qtbot: QtBot, spares: DialogSpares, make_request: Any) -> None:
    from qoder_desktop.ui.dialogs.inspect_views import DiffPanel, RiskLensView

    dialog = spares.take(make_request("Bash", {"command": "make"}, cwd="/work/p"), None)
    assert all(not panel.isVisibleTo(dialog) for panel in dialog.findChildren(DiffPanel))
    _show_and_capture(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.findChildren(DiffPanel), timeout=3000)
    assert len(dialog.findChildren(RiskLensView)) == 1
