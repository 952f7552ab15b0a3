"""A person's answer the ledger cannot record: denied, and the person is told in the
status bar and in the dialog in front of them; the disk taking writes again is told too."""

from __future__ import annotations

import asyncio

from helpers.disk_faults import fill_disk, free_disk
from helpers.loop import run, settle
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.store.database import Database
from qoder_desktop.ui.dialogs.storage_notice import storage_notice
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp

DENIED = "Could not record your answer — the call was denied: "


def _write(path: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="session 0", backend=Backend.CLAUDE,
                           tool_name="Write", cwd="/tmp",
                           tool_input={"file_path": path, "content": "x" * 20_000})


def test_an_allow_the_full_disk_cannot_record_is_told_and_written_once_there_is_room(
        desktop: DesktopApp, loop: AppEventLoop, db: Database, qtbot: QtBot) -> None:
    first, second = _write("/tmp/a.txt"), _write("/tmp/b.txt")
    status = desktop.window.ui.statusBar
    ledger = desktop.broker._ledger  # type: ignore[attr-defined]

    async def scenario() -> tuple[Decision, Decision]:
        asking = [asyncio.ensure_future(desktop.broker.request(r)) for r in (first, second)]
        await settle(lambda: len(ledger.pending("s0")) == 2)  # both rows are written
        dialog = desktop.dialogs.dialog(first.request_id)
        assert dialog is not None
        await settle(dialog.is_armed)
        fill_disk(db)
        allow = dialog.findChild(QPushButton, "allowOnceButton")
        qtbot.mouseClick(allow, Qt.MouseButton.LeftButton)  # the person allows
        denied = await asyncio.wait_for(asking[0], 10)
        # the next request's dialog opens, and says what happened to the answer before
        await settle(lambda: desktop.dialogs.dialog(second.request_id) is not None)
        after = desktop.dialogs.dialog(second.request_id)
        assert after is not None
        await settle(lambda: storage_notice(after) is not None
                     and storage_notice(after).isVisible())  # type: ignore[union-attr]
        notice = storage_notice(after)
        assert notice is not None and notice.text().startswith(DENIED)
        assert "the disk is full" in notice.text()
        assert status.currentMessage() == " ".join(notice.text().split())
        assert {e.entry_id for e in ledger.pending("s0")} == {first.request_id,
                                                              second.request_id}
        free_disk(db)  # room again: the next answer is written, the kept one with it
        await settle(after.is_armed)
        qtbot.mouseClick(after.findChild(QPushButton, "denyButton"),
                         Qt.MouseButton.LeftButton)
        answered = await asyncio.wait_for(asking[1], 10)
        await settle(lambda: not desktop.bridge.unwritten())
        return denied, answered

    denied, answered = run(loop, scenario())
    assert denied.kind is DecisionKind.ERROR  # the agent got a deny (fail closed)
    assert answered.kind is DecisionKind.DENY
    assert "every outcome kept in memory is recorded" in status.currentMessage()
    assert ledger.pending("s0") == []
    entry = next(e for e in ledger.entries("s0") if e.entry_id == first.request_id)
    assert entry.outcome is DecisionKind.ERROR and "the disk is full" in (entry.message or "")
