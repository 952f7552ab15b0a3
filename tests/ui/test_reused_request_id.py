"""A CLI cancel for a reused request id closes every dialog with it (on the app's loop).

A Qoder session through the real SDK against the scripted CLI peer, with the real
broker, bridge, dialog queue, main window and a SQLite ledger.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.qoder_harness import QoderHarness
from pytestqt.qtbot import QtBot

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.models import DecidedBy, DecisionKind
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


async def settle(condition: Any, what: str, timeout: float = 10.0) -> None:
    """Let Qt and asyncio run until `condition()` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


@pytest.fixture
def rig(loop: AppEventLoop, qtbot: QtBot, tmp_path: Path
        ) -> Iterator[tuple[QoderHarness, DesktopApp]]:
    """The desktop on a hub whose Qoder sessions talk to scripted peers."""
    harness = QoderHarness.open(tmp_path)
    app = DesktopApp(harness.broker, harness.hub, SecretStore(), Settings(),
                     tmp_path / "settings.json")
    try:
        yield harness, app
    finally:
        loop.run_until_complete(harness.hub.stop_all())
        app.dialogs.close_all()
        app.bridge.unsubscribe()
        app.tray.dispose()
        app.window.close()
        app.window.deleteLater()
        harness.db.close()


def test_a_cancel_for_a_reused_id_closes_both_dialogs_and_records_both_withdrawn(
        rig: tuple[QoderHarness, DesktopApp], loop: AppEventLoop) -> None:
    harness, app = rig

    async def scenario() -> str:
        session_id, peer = await harness.start()
        peer.ask("Bash", {"command": "make first"}, request_id="cli-req-reused")
        peer.ask("Bash", {"command": "make second"}, request_id="cli-req-reused")
        queue = app.window.ui.queueView
        await settle(lambda: len(queue.request_ids()) == 2, "both requests in the queue")
        await settle(lambda: app.dialogs.open_dialogs(), "a dialog")
        shown = app.dialogs.open_dialogs()[0].request.tool_input["command"]
        assert shown == "make first"

        peer.cancel("cli-req-reused")
        await settle(lambda: not app.dialogs.open_dialogs() and not queue.request_ids(),
                     "every dialog and queue row to go")
        # Nothing comes back: the dialogs open only for what the broker holds, and it
        # holds neither request (the second's dialog would open once the first closed,
        # were it still pending); the barrier shows the CLI's side was all handled.
        assert harness.broker.pending() == []
        assert app.dialogs.open_dialogs() == []
        await peer.barrier()
        assert peer.responses_for("cli-req-reused") == []
        return session_id

    session_id = loop.run_until_complete(asyncio.wait_for(scenario(), 30))
    rows = [e for e in harness.ledger.entries(session_id) if e.entry_type == "approval"]
    assert [(r.outcome, r.decided_by) for r in rows] == [
        (DecisionKind.WITHDRAWN, DecidedBy.WITHDRAWN)] * 2
