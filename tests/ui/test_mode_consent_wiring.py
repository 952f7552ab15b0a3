"""Risky modes through the whole desktop wiring: only the person's press in the real
confirmation box switches a running session (a Qoder session on a scripted CLI peer,
through the SDK's real control protocol), on the app's qasync loop."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.loop import run, settle
from helpers.qoder_harness import QoderHarness
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.models import PermissionMode, SessionState
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp

EDITS = PermissionMode.ACCEPT_EDITS
SWITCH = {"subtype": "set_permission_mode", "mode": "acceptEdits"}


@pytest.fixture
def harness(tmp_path: Path, loop: AppEventLoop) -> Iterator[QoderHarness]:
    """Scripted Qoder peers behind a real hub, broker and SQLite file."""
    harness = QoderHarness.open(tmp_path)
    yield harness
    run(loop, harness.close())


@pytest.fixture
def desktop(harness: QoderHarness, qtbot: QtBot, tmp_path: Path,
            loop: AppEventLoop) -> Iterator[DesktopApp]:
    """The whole desktop wiring on the harness's hub and broker, its window shown."""
    app = DesktopApp(harness.broker, harness.hub, SecretStore(), Settings(),
                     tmp_path / "settings.json")
    app.window.show()
    qtbot.waitExposed(app.window)
    yield app
    # Not left to pytest-qt, whose close would ask the app to quit (no tray here).
    run(loop, app.sessions.stop_all())  # stops the sessions, stops rendering them
    app.dialogs.close_all()
    app.bridge.unsubscribe()
    app.tray.dispose()
    app.window.set_quitting()
    app.window.close()
    app.window.deleteLater()


def _open_box(desktop: DesktopApp) -> QMessageBox | None:
    box = desktop.window.findChild(QMessageBox, "confirmDangerousMode")
    return box if box is not None and box.isVisible() else None


def test_only_the_persons_confirmation_in_the_dialog_switches_to_a_risky_mode(
        desktop: DesktopApp, harness: QoderHarness, loop: AppEventLoop, qtbot: QtBot) -> None:
    status = desktop.window.ui.statusBar.currentMessage

    async def scenario() -> None:
        session_id, peer = await harness.start()
        await settle(lambda: desktop.window.mode_combo.isEnabled())

        # A caller without the dialog (what the controller did with confirmed=True).
        desktop.sessions.change_mode(session_id, EDITS)
        await settle(lambda: "needs the person's confirmation in the confirmation dialog"
                     in status())
        assert SWITCH not in peer.sdk_requests

        combo = desktop.window.mode_combo
        combo.setFocus()
        qtbot.keyClick(combo, Qt.Key.Key_Down)  # acceptEdits: the box asks
        await settle(lambda: _open_box(desktop) is not None)
        box = _open_box(desktop)
        assert box is not None
        qtbot.keyClick(box, Qt.Key.Key_Escape)  # declined
        await settle(lambda: _open_box(desktop) is None)
        assert combo.currentData() == PermissionMode.DEFAULT.value
        assert SWITCH not in peer.sdk_requests

        qtbot.keyClick(combo, Qt.Key.Key_Down)
        await settle(lambda: _open_box(desktop) is not None)
        box = _open_box(desktop)
        assert box is not None
        accept = next(b for b in box.buttons()
                      if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
        qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)  # the person confirms
        await settle(lambda: SWITCH in peer.sdk_requests)
        await settle(lambda: harness.hub.session(session_id).permission_mode is EDITS)
        await settle(lambda: combo.currentData() == EDITS.value)

    run(loop, scenario(), timeout=30)


def test_permission_mode_accept_edits_on_the_command_line_starts_only_once_confirmed(
        desktop: DesktopApp, harness: QoderHarness, loop: AppEventLoop, qtbot: QtBot) -> None:
    from qoder_desktop.cli import parse_app_args
    from qoder_desktop.ui.start_up import start_from_args

    args = parse_app_args(["--backend", "qoder", "--prompt", "Tidy up", "--cwd",
                           str(harness.workspace), "--permission-mode", "acceptEdits"])

    async def scenario() -> str:
        start_from_args(args, desktop)
        await settle(lambda: _open_box(desktop) is not None)
        box = _open_box(desktop)
        assert box is not None and "every file edit is made without asking you" in box.text()
        qtbot.keyClick(box, Qt.Key.Key_Escape)  # declined: nothing starts
        await settle(lambda: _open_box(desktop) is None)
        assert harness.hub.sessions() == []

        start_from_args(args, desktop)
        await settle(lambda: _open_box(desktop) is not None)
        box = _open_box(desktop)
        assert box is not None
        accept = next(b for b in box.buttons()
                      if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
        qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
        await settle(lambda: len(harness.hub.sessions()) == 1
                     and harness.hub.sessions()[0].session_id in harness.peers
                     and bool(harness.peers[harness.hub.sessions()[0].session_id].lines))
        return harness.hub.sessions()[0].session_id

    session_id = run(loop, scenario(), timeout=30)
    info = harness.hub.session(session_id)
    assert info.permission_mode is EDITS
    assert info.state is not SessionState.FAILED  # the start spent the box's consent


def _shown_mode(desktop: DesktopApp) -> tuple[str, list[str]]:
    """The mode the toolbar's combo box shows, and the checked entries of the mode menu."""
    modes = desktop.window.modes
    return (str(desktop.window.mode_combo.currentData()),
            [action.text() for action in modes.menu.actions() if action.isChecked()])


def test_the_mode_shown_is_the_hubs_until_it_reports_the_switch(
        desktop: DesktopApp, harness: QoderHarness, loop: AppEventLoop) -> None:
    async def scenario() -> None:
        session_id, peer = await harness.start()
        await settle(lambda: desktop.window.mode_combo.isEnabled())
        plan = next(a for a in desktop.window.modes.menu.actions() if a.text() == "plan")
        plan.trigger()  # the person picks plan in the Session menu
        assert _shown_mode(desktop) == ("default", ["default"])  # not switched yet
        await settle(lambda: harness.hub.session(session_id).permission_mode
                     is PermissionMode.PLAN)
        await settle(lambda: _shown_mode(desktop) == ("plan", ["plan"]))
        assert {"subtype": "set_permission_mode", "mode": "plan"} in peer.sdk_requests

    run(loop, scenario(), timeout=30)


def test_a_mode_switch_that_fails_leaves_the_mode_the_session_has(
        desktop: DesktopApp, harness: QoderHarness, loop: AppEventLoop) -> None:
    status = desktop.window.ui.statusBar.currentMessage

    async def scenario() -> None:
        # an agent started elsewhere: its CLI runs outside the app, which cannot switch it
        # (the window offers no switch for it; the intent comes anyway, as a pick made
        # just before the session's row changed would)
        info = harness.hub.external_session("an MCP client")
        await settle(lambda: desktop.window.selected_session_id() == info.session_id)
        assert not desktop.window.mode_combo.isEnabled()
        desktop.window.mode_change_requested.emit(info.session_id, PermissionMode.PLAN, None)
        await settle(lambda: "permission mode" in status())
        assert harness.hub.session(info.session_id).permission_mode is PermissionMode.DEFAULT
        assert _shown_mode(desktop) == ("default", ["default"])

    run(loop, scenario(), timeout=30)
