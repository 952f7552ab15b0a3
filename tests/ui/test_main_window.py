"""The main window, driven through clicks and key presses (offscreen)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QModelIndex, Qt
from PySide6.QtGui import QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLabel, QMessageBox, QWidget

from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    PermissionMode,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
    utc_now,
)
from qoder_desktop.domain.session_options import (
    SessionOptions,
    SettingSource,
    TranscriptEvent,
    TranscriptKind,
)
from qoder_desktop.ui.summaries import request_summary
from qoder_desktop.ui.widgets import pickers
from qoder_desktop.ui.widgets.queue_view import (
    COL_KIND,
    COL_SESSION,
    COL_TIME,
    COL_WHAT,
    FITTED_COLUMNS,
    MAX_SESSION_WIDTH,
)
from qoder_desktop.ui.widgets.rules_view import COL_ACTION
from qoder_desktop.ui.widgets.session_list import COL_NAME, COL_PENDING, COLUMNS, SESSION_ID_ROLE
from qoder_desktop.ui.widgets.transcript_view import KIND_PROPERTY
from qoder_desktop.ui.windows import confirm
from qoder_desktop.ui.windows.main_window import MainWindow
from qoder_desktop.ui.windows.new_session_form import NewSessionDialog


def session(name: str, **kw: object) -> SessionInfo:
    defaults: dict[str, object] = {"backend": Backend.CLAUDE, "cwd": f"/work/{name}",
                                   "state": SessionState.RUNNING}
    defaults.update(kw)
    return SessionInfo(name=name, **defaults)  # type: ignore[arg-type]


def request(info: SessionInfo, tool: str = "Bash", minutes_ago: int = 0,
            **tool_input: object) -> ApprovalRequest:
    return ApprovalRequest(session_id=info.session_id, session_name=info.name,
                           backend=info.backend, tool_name=tool,
                           tool_input=tool_input or {"command": "ls"},
                           received_at=utc_now() - timedelta(minutes=minutes_ago))


@pytest.fixture
def no_confirm(monkeypatch: pytest.MonkeyPatch) -> list[PermissionMode]:
    """Replace the confirmation box with one that the person declines."""
    asked: list[PermissionMode] = []

    def fake(parent: QWidget, mode: PermissionMode,
             on_done: Callable[[ModeConsent | None], None], **_kw: object) -> None:
        asked.append(mode)
        on_done(None)

    monkeypatch.setattr(confirm, "confirm_dangerous_mode", fake)
    return asked


def cell(win: MainWindow, row: int, column: str) -> str:
    model = win.ui.sessionsView.model()
    return model.index(row, COLUMNS.index(column)).data()


def test_sessions_list_shows_backend_cwd_mode_state_and_pending(window: MainWindow) -> None:
    a = session("api", permission_mode=PermissionMode.ACCEPT_EDITS,
                state=SessionState.WAITING)
    b = session("docs", backend=Backend.QODER, cwd="/srv/docs", state=SessionState.IDLE)
    window.set_sessions([a, b])
    window.set_pending([request(a), request(a, "Write", file_path="/work/api/x.py"),
                        request(b)])
    assert [cell(window, 0, c) for c in COLUMNS] == [
        "api", "Claude", "api", "acceptEdits", "Waiting", "2"]
    assert [cell(window, 1, c) for c in COLUMNS] == [
        "docs", "Qoder", "docs", "default", "Idle", "1"]
    window.set_pending([])
    assert cell(window, 0, "Pending") == "–"
    window.update_session(a.model_copy(update={"state": SessionState.STOPPED}))
    assert cell(window, 0, "State") == "Stopped"


def test_clicking_a_session_selects_it_and_shows_its_transcript(window: MainWindow,
                                                                qtbot) -> None:  # type: ignore[no-untyped-def]
    a, b = session("a"), session("b")
    window.set_sessions([a, b])
    held = {b.session_id: [TranscriptEvent(session_id=b.session_id,
                                           kind=TranscriptKind.USER_PROMPT, text="hello from b")]}
    window.session_selected.connect(  # as the app does, from the hub's copy
        lambda sid: window.set_transcript(sid, held.get(sid, [])))
    window.set_transcript(b.session_id, held[b.session_id])
    assert "hello from b" not in window.ui.transcriptView.toPlainText()  # b is not selected
    view = window.ui.sessionsView
    rect = view.visualRect(view.model().index(1, 0))
    with qtbot.waitSignal(window.session_selected) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [b.session_id]
    assert window.selected_session_id() == b.session_id
    assert "hello from b" in window.ui.transcriptView.toPlainText()
    assert window.ui.sessionTitle.text() == "b"
    window.append_transcript(TranscriptEvent(session_id=a.session_id,
                                             kind=TranscriptKind.ASSISTANT_TEXT, text="for a"))
    window.append_transcript(TranscriptEvent(session_id=b.session_id,
                                             kind=TranscriptKind.ASSISTANT_TEXT, text="for b"))
    qtbot.waitUntil(lambda: "for b" in window.ui.transcriptView.toPlainText())
    assert "for a" not in window.ui.transcriptView.toPlainText()


def test_transcript_styles_each_kind_and_never_renders_markup(window: MainWindow,
                                                              qtbot) -> None:  # type: ignore[no-untyped-def]
    info = session("t")
    window.set_sessions([info])
    hostile = "<b>bold</b><img src=x>"
    for kind in TranscriptKind:
        window.append_transcript(TranscriptEvent(session_id=info.session_id, kind=kind,
                                                 text=f"{kind.value}: {hostile}",
                                                 tool_name="Bash"))
    view = window.ui.transcriptView
    qtbot.waitUntil(lambda: view.pending_count() == 0)
    text = view.toPlainText()
    assert text.count(hostile) == len(TranscriptKind)
    assert "<img" not in view.toHtml()
    looks: dict[str, tuple[object, ...]] = {}
    block = view.document().begin()
    while block.isValid():
        kind = block.blockFormat().property(KIND_PROPERTY)
        if kind and kind not in looks and hostile in block.text():
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
            fmt = cursor.charFormat()
            looks[kind] = (block.text().split(":")[0], fmt.foreground().color().name(),
                           fmt.fontItalic(), fmt.fontFixedPitch(),
                           block.blockFormat().background().color().name(
                               block.blockFormat().background().color().NameFormat.HexArgb),
                           block.blockFormat().leftMargin())
        block = block.next()
    assert set(looks) == {kind.value for kind in TranscriptKind}
    assert len(set(looks.values())) == len(TranscriptKind)


def test_tool_result_is_bounded_and_an_error_result_is_marked(window: MainWindow,
                                                              qtbot) -> None:  # type: ignore[no-untyped-def]
    info = session("t")
    window.set_sessions([info])
    window.append_transcript(TranscriptEvent(
        session_id=info.session_id, kind=TranscriptKind.TOOL_RESULT, is_error=True,
        text="\n".join(f"line {n}" for n in range(500))))
    qtbot.waitUntil(lambda: "line 0" in window.ui.transcriptView.toPlainText())
    text = window.ui.transcriptView.toPlainText()
    assert "line 0" in text and "line 499" not in text and "more lines" in text


def test_revoke_button_emits_the_rule_id_and_revoked_rules_are_marked(
        window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    info = session("r")
    window.set_sessions([info])
    active = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                         rule=RuleValue.parse("Bash(npm test:*)"))
    other = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                        rule=RuleValue.parse("Read"))
    revoked = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                          rule=RuleValue.parse("Edit"), revoked_at=utc_now())
    window.set_rules(info.session_id, [active, other, revoked])
    rules = window.ui.rulesView
    button = rules.revoke_button(active.rule_id)
    assert button is not None and button.isVisible()
    with qtbot.waitSignal(window.revoke_requested) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert blocker.args == [active.rule_id]
    assert rules.revoke_button(revoked.rule_id) is None
    item = rules.item_for(revoked.rule_id)
    assert item is not None
    assert item.text(COL_ACTION).startswith("Revoked")
    assert item.font(0).strikeOut()
    active_item = rules.item_for(active.rule_id)
    assert active_item is not None
    assert item.foreground(0).color() != active_item.foreground(0).color()


def test_queue_shows_the_order_given_and_sorts_nothing(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The broker's order is the one order (received, then queued): the window shows
    the list as given, and Ctrl+O opens the first of it."""
    a = session("a")
    window.set_sessions([a])
    later, earlier = request(a, minutes_ago=1), request(a, "Write", minutes_ago=5,
                                                        file_path="/work/a/x.py")
    window.set_pending([later, earlier])
    assert window.ui.queueView.request_ids() == [later.request_id, earlier.request_id]
    with qtbot.waitSignal(window.open_request_requested) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert blocker.args == [later.request_id]


def test_queue_is_oldest_first_and_enter_or_double_click_opens(window: MainWindow,
                                                               qtbot) -> None:  # type: ignore[no-untyped-def]
    a, b = session("a"), session("b")
    window.set_sessions([a, b])
    newest = request(a, minutes_ago=0)
    oldest = request(b, "AskUserQuestion", minutes_ago=9,
                     questions=[{"question": "Which colour?", "header": "C", "options": []}])
    middle = request(a, "Write", minutes_ago=4, file_path="/work/a/x.py")
    window.set_pending([oldest, middle, newest])  # the broker's order
    queue = window.ui.queueView
    assert queue.request_ids() == [oldest.request_id, middle.request_id, newest.request_id]
    first, last = queue.topLevelItem(0), queue.topLevelItem(2)
    assert first is not None and last is not None
    assert first.text(2) == "Question"
    assert window.ui.queueHeader.text() == "Waiting for you (3)"
    queue.setFocus()
    with qtbot.waitSignal(window.open_request_requested) as blocker:
        qtbot.keyClick(queue, Qt.Key.Key_Return)
    assert blocker.args == [oldest.request_id]
    rect = queue.visualItemRect(last)
    qtbot.mouseClick(queue.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(window.open_request_requested) as blocker:
        qtbot.mouseDClick(queue.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [newest.request_id]
    with qtbot.waitSignal(window.open_request_requested) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert blocker.args == [oldest.request_id]


def test_queue_updates_rows_in_place_and_keeps_the_current_request(
        window: MainWindow) -> None:
    a, b = session("a"), session("b")
    window.set_sessions([a, b])
    first, second, third = (request(a, minutes_ago=9), request(b, minutes_ago=5),
                            request(a, minutes_ago=3))
    window.set_pending([first, second, third])  # the broker's order
    queue = window.ui.queueView
    rows = {rid: queue.item_for(rid) for rid in queue.request_ids()}
    assert queue.current_request_id() == first.request_id  # the oldest, at first
    chosen = rows[second.request_id]
    assert chosen is not None
    queue.setCurrentItem(chosen)
    newest = request(b, "Write", minutes_ago=0, file_path="/work/b/x.py")
    older = request(b, minutes_ago=7)
    # first answered; two arrived, one received before the others still waiting
    window.set_pending([older, second, third, newest])
    assert queue.request_ids() == [older.request_id, second.request_id, third.request_id,
                                   newest.request_id]
    assert queue.item_for(second.request_id) is rows[second.request_id]  # untouched rows
    assert queue.item_for(third.request_id) is rows[third.request_id]
    assert queue.item_for(first.request_id) is None
    assert queue.current_request_id() == second.request_id
    assert [queue.topLevelItem(n).text(COL_KIND) for n in range(4)] == [  # type: ignore[union-attr]
        "Approval"] * 4
    assert queue.topLevelItem(3).text(COL_WHAT) == request_summary(newest, 200)  # type: ignore[union-attr]
    assert queue.index_of(newest.request_id).row() == 3
    assert not queue.index_of(first.request_id).isValid()
    assert cell(window, 0, "Pending") == "1" and cell(window, 1, "Pending") == "3"
    window.set_pending([third, newest])  # the current one left: the oldest is current
    assert queue.request_ids() == [third.request_id, newest.request_id]
    assert queue.current_request_id() == third.request_id
    assert window.ui.queueHeader.text() == "Waiting for you (2)"
    window.set_pending([])
    assert queue.request_ids() == [] and queue.topLevelItemCount() == 0
    assert queue.current_request_id() is None


def test_queue_tooltips_are_made_when_asked_for(window: MainWindow) -> None:
    info = session("tips")
    window.set_sessions([info])
    long = request(info, command="echo " + "x" * 700)
    window.set_pending([long])
    queue = window.ui.queueView
    item = queue.item_for(long.request_id)
    assert item is not None and item.toolTip(COL_WHAT) == ""
    rect = queue.visualItemRect(item)
    event = QHelpEvent(QEvent.Type.ToolTip, rect.center(),
                       queue.viewport().mapToGlobal(rect.center()))
    QApplication.sendEvent(queue.viewport(), event)
    assert item.toolTip(COL_WHAT) == request_summary(long, 600)
    assert item.toolTip(COL_TIME) == long.received_at.astimezone().strftime("%c")
    assert item.toolTip(COL_SESSION) == "tips"


def test_queue_columns_fit_their_widest_cell_like_resize_to_contents(
        window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    short, named = session("a"), session("a-rather-long-session-name")
    window.set_sessions([short, named])
    queue = window.ui.queueView
    header = queue.header()

    def fitted() -> list[int]:
        return [max(queue.sizeHintForColumn(c), header.sectionSizeHint(c))
                for c in FITTED_COLUMNS]

    question = request(short, "AskUserQuestion",
                       questions=[{"question": "Go?", "header": "G", "options": []}])
    window.set_pending([question, request(short)])  # the broker's order
    assert [header.sectionSize(c) for c in FITTED_COLUMNS] == fitted()
    narrow = header.sectionSize(COL_SESSION)
    window.set_pending([question, request(short), request(named)])
    assert [header.sectionSize(c) for c in FITTED_COLUMNS] == fitted()
    assert header.sectionSize(COL_SESSION) > narrow
    window.set_pending([question])  # the long name left: the column narrows again
    assert [header.sectionSize(c) for c in FITTED_COLUMNS] == fitted()
    huge = session("n" * 300)
    window.set_sessions([short, named, huge])
    window.set_pending([request(huge)])
    assert header.sectionSize(COL_SESSION) == MAX_SESSION_WIDTH < fitted()[1]
    header.resizeSection(COL_KIND, 150)  # by hand: the column keeps it
    window.set_pending([request(short), request(huge)])
    assert header.sectionSize(COL_KIND) == 150


def test_pending_counts_repaint_only_the_pending_cells_that_changed(
        window: MainWindow) -> None:
    a, b, c = session("a"), session("b"), session("c")
    window.set_sessions([a, b, c])
    model = window.ui.sessionsView.model()
    changes: list[tuple[int, int, int, int]] = []

    def record(top: QModelIndex, bottom: QModelIndex, *_roles: object) -> None:
        changes.append((top.row(), top.column(), bottom.row(), bottom.column()))

    model.dataChanged.connect(record)
    window.set_pending([request(a), request(c)])
    assert sorted(changes) == [(0, COL_PENDING, 0, COL_PENDING), (2, COL_PENDING, 2, COL_PENDING)]
    changes.clear()
    window.set_pending([request(a), request(c), request(c)])
    assert changes == [(2, COL_PENDING, 2, COL_PENDING)]
    changes.clear()
    window.set_pending([request(a), request(c), request(c)])  # same counts: nothing
    assert changes == []
    index = model.index(2, COL_PENDING)
    font = index.data(Qt.ItemDataRole.FontRole)
    assert font.bold() and index.data() == "2"
    assert model.index(0, COL_NAME).data(Qt.ItemDataRole.FontRole).bold()
    assert model.index(1, COL_PENDING).data(Qt.ItemDataRole.FontRole) is None
    assert "Pending requests: 2" in index.data(Qt.ItemDataRole.ToolTipRole)


def test_follow_up_prompt_interrupt_and_stop(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    info = session("p", state=SessionState.RUNNING)
    window.set_sessions([info])
    edit = window.ui.promptEdit
    assert not window.ui.sendButton.isEnabled()
    qtbot.keyClicks(edit, "  now add tests  ")
    with qtbot.waitSignal(window.prompt_requested) as blocker:
        qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert blocker.args == [info.session_id, "now add tests"]
    assert edit.toPlainText() == ""
    qtbot.keyClicks(edit, "again")
    with qtbot.waitSignal(window.prompt_requested):
        qtbot.mouseClick(window.ui.sendButton, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(window.interrupt_requested) as blocker:
        window.ui.interruptAction.trigger()
    assert blocker.args == [info.session_id]
    with qtbot.waitSignal(window.stop_requested) as blocker:
        window.ui.stopAction.trigger()
    assert blocker.args == [info.session_id]
    window.update_session(info.model_copy(update={"state": SessionState.STOPPED}))
    assert not window.ui.stopAction.isEnabled()
    assert not window.ui.interruptAction.isEnabled()
    assert not edit.isEnabled()


@pytest.mark.parametrize(("backend", "why"), [
    (Backend.TERMINAL, "This agent runs in your terminal; answer its prompts here, "
                       "drive it there"),
    (Backend.EXTERNAL, "This agent runs outside the app and asks through the approval "
                       "gateway; answer its prompts here, drive it where it runs")])
def test_a_session_started_elsewhere_is_answered_here_and_driven_there(  # type: ignore[no-untyped-def]
        window: MainWindow, qtbot, backend: Backend, why: str) -> None:
    """The app has no adapter for a terminal or gateway agent: its prompt, interrupt,
    stop and mode switch are off, saying why; an in-app session keeps them."""
    outside = session("outside", backend=backend, state=SessionState.RUNNING)
    in_app = session("in-app", state=SessionState.RUNNING)
    window.set_sessions([outside, in_app])
    window.select_session(outside.session_id)
    ui = window.ui
    driving = (ui.promptEdit, ui.sendButton, ui.promptAction, ui.interruptAction,
               ui.stopAction, window.mode_combo)
    assert [control.isEnabled() for control in driving] == [False] * 6
    assert {control.toolTip() for control in driving} == {why}
    assert ui.promptEdit.placeholderText() == why
    stops: list[str] = []
    window.stop_requested.connect(stops.append)
    qtbot.keyClick(window, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)
    ui.stopAction.trigger()  # (a disabled action does nothing)
    assert stops == []
    window.select_session(in_app.session_id)
    assert [control.isEnabled() for control in driving] == [True, False, True, True, True,
                                                            True]  # send: nothing typed
    assert why not in {control.toolTip() for control in driving}
    assert ui.stopAction.toolTip() == "Stop the selected session (Ctrl+Shift+W)"
    assert window.mode_combo.toolTip() == "The selected session's permission mode"
    assert ui.promptEdit.placeholderText().startswith("Send a follow-up prompt")
    with qtbot.waitSignal(window.stop_requested) as blocker:
        ui.stopAction.trigger()
    assert blocker.args == [in_app.session_id]


def test_mode_switch_asks_before_a_mode_that_lets_tools_run_unapproved(  # type: ignore[no-untyped-def]
        window: MainWindow, qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    info = session("m")
    window.set_sessions([info])
    combo = window.mode_combo
    combo.setFocus()
    asked: list[PermissionMode] = []
    real = confirm.confirm_dangerous_mode

    def declined(parent: QWidget, mode: PermissionMode,
                 on_done: Callable[[ModeConsent | None], None], **_kw: object) -> None:
        asked.append(mode)
        on_done(None)

    monkeypatch.setattr(confirm, "confirm_dangerous_mode", declined)
    with qtbot.assertNotEmitted(window.mode_change_requested):
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert asked == [PermissionMode.ACCEPT_EDITS]
    assert combo.currentData() == PermissionMode.DEFAULT.value
    with qtbot.assertNotEmitted(window.mode_change_requested):
        qtbot.keyClick(combo, Qt.Key.Key_End)
    assert asked == [PermissionMode.ACCEPT_EDITS, PermissionMode.YOLO]
    assert combo.currentData() == PermissionMode.DEFAULT.value
    monkeypatch.setattr(confirm, "confirm_dangerous_mode", real)  # the person confirms
    with qtbot.waitSignal(window.mode_change_requested) as blocker:
        qtbot.keyClick(combo, Qt.Key.Key_End)
        box = window.findChild(QMessageBox, "confirmDangerousMode")
        assert box is not None
        accept = next(b for b in box.buttons()
                      if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
        qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
    session_id, mode, consent = blocker.args
    assert (session_id, mode) == (info.session_id, PermissionMode.YOLO)
    assert isinstance(consent, ModeConsent)
    assert (consent.session_id, consent.mode) == (info.session_id, PermissionMode.YOLO)


def test_mode_menu_follows_the_session_and_asks_before_bypass(
        window: MainWindow, qtbot, no_confirm: list[PermissionMode]) -> None:  # type: ignore[no-untyped-def]
    info = session("m", permission_mode=PermissionMode.PLAN)
    window.set_sessions([info])
    actions = {a.text(): a for a in window.modes.menu.actions()}
    assert actions["plan"].isChecked()
    with qtbot.assertNotEmitted(window.mode_change_requested):
        actions["bypassPermissions"].trigger()
    assert no_confirm == [PermissionMode.BYPASS]
    assert actions["plan"].isChecked()
    with qtbot.waitSignal(window.mode_change_requested) as blocker:
        actions["default"].trigger()
    assert blocker.args == [info.session_id, PermissionMode.DEFAULT, None]
    window.update_session(info.model_copy(update={"permission_mode": PermissionMode.AUTO}))
    assert actions["auto"].isChecked()
    assert window.mode_combo.currentText() == "auto"
    window.update_session(info.model_copy(update={"state": SessionState.FAILED}))
    assert not window.modes.menu.isEnabled() and not window.mode_combo.isEnabled()


def test_visibility_is_reported_and_bring_to_front_restores(
        window: MainWindow, qtbot, qtlog) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.visibility_changed) as blocker:
        window.hide()
    assert blocker.args == [False]
    with qtbot.waitSignal(window.visibility_changed) as blocker, qtlog.disabled():
        window.bring_to_front()  # offscreen warns that it cannot raise windows
    assert blocker.args == [True]
    assert window.isVisible()


def _open_form(window: MainWindow, qtbot) -> NewSessionDialog:  # type: ignore[no-untyped-def]
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    dialog = window.new_session_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def _start(dialog: NewSessionDialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    ok = dialog.ui.buttonBox.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)


def test_new_session_form_emits_every_field(window: MainWindow, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    work, extra = tmp_path / "work", tmp_path / "extra"
    work.mkdir()
    extra.mkdir()
    chosen = iter([str(work), str(extra)])
    monkeypatch.setattr(pickers, "pick_folder",
                        lambda parent, title, on_chosen, start="": on_chosen(next(chosen)))
    window.set_demo_scenarios(["bash", "question"])
    dialog = _open_form(window, qtbot)
    ui = dialog.ui
    ui.backendCombo.setFocus()
    qtbot.keyClick(ui.backendCombo, Qt.Key.Key_Down)
    qtbot.keyClicks(ui.nameEdit, "refactor")
    ui.cwdEdit.clear()
    qtbot.mouseClick(ui.browseCwdButton, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(ui.promptEdit, "Tidy the imports")
    ui.modeCombo.setFocus()
    qtbot.keyClick(ui.modeCombo, Qt.Key.Key_Down)
    qtbot.keyClick(ui.modeCombo, Qt.Key.Key_Down)  # plan (acceptEdits would need a confirmation)
    qtbot.keyClicks(ui.modelEdit, "claude-sonnet")
    ui.scenarioCombo.setFocus()
    qtbot.keyClick(ui.scenarioCombo, Qt.Key.Key_Down)
    qtbot.mouseClick(ui.addDirButton, Qt.MouseButton.LeftButton)
    ui.limitToolsCheck.click()
    qtbot.keyClicks(ui.toolsEdit, "Read, Grep")
    qtbot.keyClicks(ui.allowedEdit, 'Read, Bash(git commit -m "a, b")')
    qtbot.keyClicks(ui.disallowedEdit, "WebFetch")
    ui.userSourceCheck.click()
    ui.localSourceCheck.click()
    qtbot.keyClicks(ui.mcpEdit, '{"docs": {"command": "docs-mcp"}}')
    qtbot.keyClicks(ui.permissionsEdit, '{"deny": ["Read(./.env)"]}')
    with qtbot.waitSignal(window.new_session_requested) as blocker:
        _start(dialog, qtbot)
    options: SessionOptions = blocker.args[0]
    assert options == SessionOptions(
        backend=Backend.QODER, prompt="Tidy the imports", name="refactor", cwd=str(work),
        add_dirs=[str(extra)], tools=["Read", "Grep"],
        allowed_tools=["Read", 'Bash(git commit -m "a, b")'], disallowed_tools=["WebFetch"],
        permission_mode=PermissionMode.PLAN, model="claude-sonnet",
        settings_permissions={"deny": ["Read(./.env)"]},
        setting_sources=[SettingSource.USER, SettingSource.LOCAL],
        mcp_servers={"docs": {"command": "docs-mcp"}}, scenario="question")
    qtbot.waitUntil(lambda: not dialog.isVisible())


def test_title_and_status_badge_show_pending_without_a_tray(window: MainWindow) -> None:
    info = session("x")
    window.set_sessions([info])
    window.set_pending([request(info), request(info), request(info)])
    assert window.windowTitle() == "Qoder Desktop"
    badge = window.findChild(QLabel, "pendingBadge")
    assert badge is not None and not badge.isVisible()
    window.set_tray_available(False)
    assert window.windowTitle() == "Qoder Desktop (3 pending)"
    assert badge.isVisible() and badge.text() == "3 pending"
    window.set_pending([])
    assert window.windowTitle() == "Qoder Desktop"
    assert not badge.isVisible()


def test_menu_actions_emit_settings_and_quit(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.settings_requested):
        window.ui.settingsAction.trigger()
    with qtbot.waitSignal(window.quit_requested):
        qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)


def test_closing_hides_with_a_tray_and_quits_without_one(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.close()
    assert not window.isVisible()
    window.show()
    window.set_tray_available(False)
    with qtbot.waitSignal(window.quit_requested):
        window.close()
    assert window.isVisible()
    window.set_quitting()
    window.close()
    assert not window.isVisible()


def test_a_remote_hosts_session_names_its_host_in_the_list(window: MainWindow) -> None:
    remote = session("box · Claude Code · api").model_copy(update={"host": "box"})
    window.set_sessions([session("here"), remote])
    model = window.ui.sessionsView.model()

    assert "Host: box" in model.index(1, COL_NAME).data(Qt.ItemDataRole.ToolTipRole)
    assert "Host:" not in model.index(0, COL_NAME).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(1, COL_NAME).data() == "box · Claude Code · api"


def test_sessions_are_listed_per_host_this_computers_first(window: MainWindow) -> None:
    """Each host's sessions sit together (this computer's first, then by host name), in
    the order they came within a host; a new one joins the end of its host's rows and
    the selected session stays selected."""
    def on(host: str, name: str) -> SessionInfo:
        return session(f"{host} · Claude Code · {name}", backend=Backend.TERMINAL,
                       host=host)

    window.set_sessions([on("zed", "api"), session("here"), on("box", "web"),
                         on("zed", "docs"), on("box", "db")])
    model = window.ui.sessionsView.model()

    def names() -> list[str]:
        return [model.index(row, COL_NAME).data() for row in range(model.rowCount())]

    assert names() == ["here", "box · Claude Code · web", "box · Claude Code · db",
                       "zed · Claude Code · api", "zed · Claude Code · docs"]
    selected = model.index(3, 0).data(SESSION_ID_ROLE)
    window.session_pane.select(selected)
    window.update_session(on("box", "ci"))
    window.update_session(session("there", backend=Backend.TERMINAL))
    assert names() == ["here", "there", "box · Claude Code · web", "box · Claude Code · db",
                       "box · Claude Code · ci", "zed · Claude Code · api",
                       "zed · Claude Code · docs"]
    assert window.session_pane.current == selected
    current = window.ui.sessionsView.currentIndex()
    assert current.data(SESSION_ID_ROLE) == selected
