"""The main window's rough edges: quitting while requests wait, new sessions selected,
session names readable in the list, demo sessions in fresh scratch folders."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from qoder_desktop.domain.models import ApprovalRequest, Backend, SessionInfo, SessionState
from qoder_desktop.ui.plain_text import might_be_rich
from qoder_desktop.ui.widgets.session_list import COL_NAME
from qoder_desktop.ui.windows.main_window import MainWindow
from qoder_desktop.ui.windows.quit_confirm import QUIT_BUTTON_TEXT


def _session(name: str, backend: Backend = Backend.CLAUDE) -> SessionInfo:
    return SessionInfo(name=name, backend=backend, cwd=f"/work/{name}",
                       state=SessionState.RUNNING)


def _request(info: SessionInfo) -> ApprovalRequest:
    return ApprovalRequest(session_id=info.session_id, session_name=info.name,
                           backend=info.backend, tool_name="Bash",
                           tool_input={"command": "ls"})


def _quit_box(window: MainWindow) -> QMessageBox | None:
    return window.findChild(QMessageBox, "confirmQuit")


def test_ctrl_q_without_pending_requests_quits_at_once(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.quit_requested, timeout=2000):
        qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert _quit_box(window) is None


def test_ctrl_q_while_requests_wait_asks_first_and_cancel_keeps_running(
        window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    info = _session("busy")
    window.update_session(info)
    window.set_pending([_request(info), _request(info)])
    quits: list[bool] = []
    window.quit_requested.connect(lambda: quits.append(True))
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    box = _quit_box(window)
    assert box is not None and box.isVisible()
    assert "2 requests are waiting" in box.text()
    assert "denies them" in box.informativeText()
    assert box.defaultButton() is box.escapeButton()  # Cancel: the safe choice
    window.request_quit()  # a second Ctrl+Q opens no second box
    assert len(window.findChildren(QMessageBox, "confirmQuit")) == 1
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not box.isVisible())
    QApplication.processEvents()
    assert quits == []


def test_quitting_from_the_question_emits_quit_once(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    info = _session("busy")
    window.update_session(info)
    window.set_pending([_request(info)])
    window.request_quit()
    box = _quit_box(window)
    assert box is not None and box.text() == "1 request is waiting for your answer."
    [quit_button] = [b for b in box.buttons() if b.text() == QUIT_BUTTON_TEXT]
    with qtbot.waitSignal(window.quit_requested, timeout=2000):
        quit_button.click()


def test_closing_the_window_without_a_tray_asks_too(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.set_tray_available(False)
    info = _session("busy")
    window.update_session(info)
    window.set_pending([_request(info)])
    quits: list[bool] = []
    window.quit_requested.connect(lambda: quits.append(True))
    window.close()
    assert _quit_box(window) is not None and quits == []


def test_a_new_session_started_here_is_selected(window: MainWindow) -> None:
    first, second = _session("first"), _session("second", Backend.QODER)
    window.update_session(first)
    assert window.selected_session_id() == first.session_id
    window.update_session(second)
    assert window.selected_session_id() == second.session_id
    window.update_session(first.model_copy(update={"state": SessionState.IDLE}))
    assert window.selected_session_id() == second.session_id  # an update is not new


def test_an_agent_arriving_by_itself_does_not_take_the_selection(window: MainWindow) -> None:
    mine = _session("mine")
    window.update_session(mine)
    for backend in (Backend.TERMINAL, Backend.EXTERNAL):
        window.update_session(_session(f"{backend.value} agent", backend))
        assert window.selected_session_id() == mine.session_id


def test_long_session_names_are_elided_in_the_middle_and_whole_in_the_tooltip(
        window: MainWindow) -> None:
    view = window.ui.sessionsView
    window.update_session(_session("a"))
    long_name = "Claude · " + "very-long-project-folder-name-" * 4 + "end"
    window.update_session(_session(long_name))
    assert view.textElideMode() is Qt.TextElideMode.ElideMiddle
    model = view.model()
    index = model.index(1, COL_NAME)
    tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[0] == long_name and not might_be_rich(tip)


def test_in_demo_mode_each_new_session_form_starts_in_a_fresh_scratch_folder(
        window: MainWindow, tmp_path: Path) -> None:
    made: list[str] = []

    def scratch() -> str:
        folder = tmp_path / f"workspace-{len(made)}"
        folder.mkdir()
        made.append(str(folder))
        return str(folder)

    window.set_scratch_folder(scratch)
    form = window.open_new_session_form()
    assert form.ui.cwdEdit.text() == made[0]
    assert form.options().cwd == made[0]
    form.reject()
    form.close()
    QApplication.processEvents()
    again = window.open_new_session_form()
    assert again.ui.cwdEdit.text() == made[1] != made[0]
    again.reject()


def test_without_demo_the_form_starts_in_the_default_folder(window: MainWindow) -> None:
    form = window.open_new_session_form()
    assert form.ui.cwdEdit.text() == os.getcwd()
    form.reject()


def test_the_form_starts_with_the_defaults_the_app_set_and_submits_to_the_window(
        window: MainWindow, tmp_path: Path) -> None:
    from qoder_desktop.domain.models import PermissionMode
    from qoder_desktop.domain.session_options import SessionOptions

    window.set_new_session_defaults(SessionOptions(
        backend=Backend.QODER, permission_mode=PermissionMode.PLAN, model="model-from-settings",
        cwd=str(tmp_path)))
    submitted: list[SessionOptions] = []
    window.new_session_requested.connect(submitted.append)
    form = window.open_new_session_form()
    assert window.new_session_dialog is form
    options = form.options()
    assert (options.backend, options.permission_mode, options.model, options.cwd) == (
        Backend.QODER, PermissionMode.PLAN, "model-from-settings", str(tmp_path))
    form.ui.promptEdit.setPlainText("hello")
    form.findChild(QPushButton, "startButton").click()
    assert [(o.backend, o.prompt) for o in submitted] == [(Backend.QODER, "hello")]
