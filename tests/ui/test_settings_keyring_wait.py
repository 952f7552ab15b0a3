"""Settings while the keyring is slow: a stored secret is never shown as "Not set"."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers.app_side import app_side
from helpers.loop import run, settle
from helpers.memory_keyring import MemoryKeyring, SlowKeyring
from pytestqt.qtbot import QtBot

from qoder_desktop.config.secrets import SERVICE_NAME, SecretName, SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.store.database import Database
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.windows.settings_dialog import NOT_SET_TEXT, STORED_TEXT, WAITING_TEXT
from qoder_desktop.ui.wiring import DesktopApp

KEY = "sk-ant-stored-while-the-keyring-is-slow-0123"


def test_a_slow_keyring_shows_waiting_then_what_is_stored(
        db: Database, loop: AppEventLoop, qtbot: QtBot, tmp_path: Path) -> None:
    slow = SlowKeyring()
    slow.passwords[(SERVICE_NAME, SecretName.ANTHROPIC_API_KEY.value)] = KEY
    _ledger, broker, hub = app_side(db)
    app = DesktopApp(broker, hub, SecretStore(slow, extra_allowed=(MemoryKeyring,)),
                     Settings(), tmp_path / "settings.json")
    qtbot.addWidget(app.window)
    seen: set[str] = set()

    async def scenario() -> None:
        app.open_settings()
        dialog = app.settings_dialog
        assert dialog is not None

        def key_status() -> str:
            status = dialog.secret_status(SecretName.ANTHROPIC_API_KEY)
            seen.add(status)
            return status

        key_status()
        await settle(lambda: key_status() == WAITING_TEXT)
        await asyncio.sleep(0)
        assert key_status() == WAITING_TEXT
        slow.release.set()  # the keyring answers
        await settle(lambda: key_status() == STORED_TEXT)
        await settle(lambda: dialog.secret_status(SecretName.QODER_TOKEN) == NOT_SET_TEXT)

    try:
        run(loop, scenario())
        assert NOT_SET_TEXT not in seen  # the stored key never looked missing
    finally:
        slow.release.set()
        if app.settings_dialog is not None:
            app.settings_dialog.close()
        app.bridge.unsubscribe()
        app.tray.dispose()
