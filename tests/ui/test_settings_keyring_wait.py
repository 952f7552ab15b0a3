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


def _keyring_checks(loop: asyncio.AbstractEventLoop | None = None
                    ) -> list[asyncio.Task[object]]:
    """The Settings keyring checks still running on `loop` (the running one)."""
    return [task for task in asyncio.all_tasks(loop)
            if not task.done() and "_refresh_keyring" in repr(task.get_coro())]


def _hung_keyring_app(db: Database, qtbot: QtBot, tmp_path: Path,
                      slow: SlowKeyring) -> DesktopApp:
    _ledger, broker, hub = app_side(db)
    app = DesktopApp(broker, hub, SecretStore(slow, extra_allowed=(MemoryKeyring,)),
                     Settings(), tmp_path / "settings.json")
    qtbot.addWidget(app.window)
    return app


def test_closing_settings_while_the_keyring_hangs_ends_the_check(
        db: Database, loop: AppEventLoop, qtbot: QtBot, tmp_path: Path) -> None:
    """A keyring behind an unlock prompt: the person closes Settings; the check that
    filled it ends then, not when the keyring answers (or never), and says nothing."""
    slow = SlowKeyring()
    app = _hung_keyring_app(db, qtbot, tmp_path, slow)
    reported: list[str] = []
    app.window.show_status = reported.append  # type: ignore[method-assign]

    async def scenario() -> None:
        app.open_settings()
        dialog = app.settings_dialog
        assert dialog is not None
        await settle(lambda: dialog.secret_status(SecretName.ANTHROPIC_API_KEY)
                     == WAITING_TEXT)
        assert _keyring_checks()
        dialog.reject()
        await settle(lambda: not _keyring_checks())

    try:
        run(loop, scenario())
        assert reported == []  # a check ended by the close is no failure
    finally:
        slow.release.set()
        app.bridge.unsubscribe()
        app.tray.dispose()


def test_quitting_while_the_keyring_hangs_leaves_no_task_pending(
        db: Database, loop: AppEventLoop, qtbot: QtBot, tmp_path: Path) -> None:
    """Quitting with Settings open and the keyring not answering: the quit ends the
    keyring check instead of leaving it pending when the loop stops."""
    slow = SlowKeyring()
    app = _hung_keyring_app(db, qtbot, tmp_path, slow)
    try:
        app.open_settings()
        dialog = app.settings_dialog
        assert dialog is not None
        run(loop, settle(lambda: dialog.secret_status(SecretName.ANTHROPIC_API_KEY)
                         == WAITING_TEXT))
        quitting = app.quit()
        loop.run_until_complete(quitting)  # its last step quits the app, stopping the loop
        assert quitting.exception() is None
        assert _keyring_checks(loop) == []
    finally:
        slow.release.set()


def test_quitting_while_a_secret_waits_for_the_keyring_leaves_no_task_pending(
        db: Database, loop: AppEventLoop, qtbot: QtBot, tmp_path: Path) -> None:
    """Settings saved and closed, its secret still waiting on a hung keyring, then the
    person quits: the quit stops waiting for it instead of leaving it pending."""
    slow = SlowKeyring()
    app = _hung_keyring_app(db, qtbot, tmp_path, slow)
    try:
        app.settings_control.store_secret(SecretName.ANTHROPIC_API_KEY.value, KEY)
        run(loop, settle(lambda: slow.calls >= 1))  # the keyring holds the write
        quitting = app.quit()
        loop.run_until_complete(quitting)
        assert quitting.exception() is None
        assert [task for task in asyncio.all_tasks(loop) if not task.done()] == []
    finally:
        slow.release.set()
