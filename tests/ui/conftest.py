"""View tests: offscreen Qt, Qt warnings fail the test, helpers to open decision dialogs."""
# ruff: noqa: E402  (the app's lean imports are applied before the views and PySide6 load)

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qoder_desktop.ui.lean_imports import apply_lean_imports

apply_lean_imports()  # as the app's entry point does, before the views and PySide6 load

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.loop import app_loop
from helpers.loop import run as run_on_loop
from helpers.notification_server import NotificationServer, private_bus
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.approval.pending import PendingApproval
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, SessionInfo
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.ui import icons
from qoder_desktop.ui.dialogs import arming
from qoder_desktop.ui.dialogs.spares import DialogSpares
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.widgets.preview import PreviewPane
from qoder_desktop.ui.windows.main_window import MainWindow
from qoder_desktop.ui.wiring import DesktopApp

_HERE = Path(__file__).resolve().parent
OFFSCREEN_NOISE = r"^This plugin does not support (propagateSizeHints|raise)\(\)$"
"""The offscreen platform says this for resizable or raised top levels; not our bug."""
SHORT_ARMING_MS = 10
"""The arming delay of view tests that are not about arming (the app's is 400 ms)."""


def pytest_configure(config: pytest.Config) -> None:
    """Register the `arming` marker."""
    config.addinivalue_line("markers", "arming: a test about the arming delay; the dialogs "
                                       "keep the real 400 ms delay")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Any QtWarningMsg or QtCriticalMsg logged during a view test fails it."""
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def short_arming(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Dialogs arm after `SHORT_ARMING_MS`, except in tests marked `arming`.

    Most view tests only wait the delay out before pressing a key; the tests about the
    delay itself (marked `arming`) keep the app's real one.

    Returns:
        The delay dialogs made during the test use, in milliseconds.
    """
    if request.node.get_closest_marker("arming") is not None:
        return arming.ARMING_DELAY_MS
    monkeypatch.setattr(arming, "ARMING_DELAY_MS", SHORT_ARMING_MS)
    return SHORT_ARMING_MS


@pytest.fixture(scope="session", autouse=True)
def app_stylesheet(qapp: QApplication) -> None:
    """The app's stylesheet, as `run_gui` sets it: views and dialogs look as in the app.

    The decision dialogs' look lives there too (scoped to them), not on each dialog.
    """
    qapp.setStyleSheet(icons.stylesheet())


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[AppEventLoop]:
    """The app's loop on the test's QApplication, for tests that drive it by hand."""
    yield from app_loop(qapp)


def _make_request(tool_name: str = "Bash", tool_input: dict | None = None,
                  **fields: object) -> ApprovalRequest:
    values: dict[str, object] = {"session_id": "s-1", "session_name": "demo",
                                 "backend": Backend.CLAUDE}
    values.update(fields)
    return ApprovalRequest(tool_name=tool_name, tool_input=tool_input or {}, **values)


@pytest.fixture
def make_request() -> Callable[..., ApprovalRequest]:
    """`make_request(tool_name, tool_input, **fields)`: an ApprovalRequest with defaults."""
    return _make_request


@pytest.fixture
def approval_of(db: Database, loop: AppEventLoop) -> Callable[[ApprovalRequest], PendingApproval]:
    """`approval_of(request)`: the request's `PendingApproval` on the app's loop, its
    rows in a real ledger (the sessions of `make_request` are in the database)."""
    db.upsert_session(SessionInfo(session_id="s-1", name="demo", backend=Backend.CLAUDE,
                                  cwd="/tmp"))
    ledger = Ledger(db)
    return lambda request: PendingApproval(request, ledger, loop=loop)


@pytest.fixture
def open_dialog(qtbot) -> Callable:  # type: ignore[no-untyped-def]
    """Show a decision dialog, make it the active window and (by default) wait until armed.

    Returns a function `open(dialog, arm=True) -> (dialog, decisions)` where `decisions`
    collects everything the dialog emits through `decided`.
    """

    def _open(dialog, *, arm: bool = True):  # type: ignore[no-untyped-def]
        decisions: list[Decision] = []
        dialog.decided.connect(decisions.append)
        qtbot.addWidget(dialog)
        with qtbot.waitSignal(dialog.shown, timeout=2000):
            dialog.show()
        dialog.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog, timeout=2000)
        if arm:
            qtbot.waitUntil(dialog.is_armed, timeout=2000)
        return dialog, decisions

    return _open


@pytest.fixture
def desktop(db: Database, loop: AppEventLoop, qtbot: QtBot,
            tmp_path: Path) -> Iterator[DesktopApp]:
    """The whole desktop wiring on a real broker, hub and SQLite file; three sessions
    (s0, s1, s2) are in the database, and starting an agent fails the test."""
    for index in range(3):
        db.upsert_session(SessionInfo(session_id=f"s{index}", name=f"session {index}",
                                      backend=Backend.CLAUDE, cwd=str(tmp_path)))
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)

    def no_sessions(*_args: Any) -> Any:
        raise AssertionError("these tests start no agent")

    hub = SessionHub(db, ledger, broker, no_sessions)
    app = DesktopApp(broker, hub, SecretStore(), Settings(), tmp_path / "settings.json")
    qtbot.addWidget(app.window)
    yield app
    app.dialogs.close_all()
    app.bridge.unsubscribe()
    app.hub.close()
    app.tray.dispose()


@pytest.fixture
def window(qtbot: QtBot) -> MainWindow:
    """A main window on screen (1300×800), as a person first sees it."""
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1300, 800)
    win.show()
    qtbot.waitExposed(win)
    win.finish_after_first_frame()  # as the app does after the first frame
    return win


@pytest.fixture
def pane(qtbot: QtBot) -> PreviewPane:
    """A preview pane of 600×400 on screen (exposed), as in a question dialog."""
    widget = PreviewPane()
    widget.resize(600, 400)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def spares(qtbot: QtBot) -> Iterator[DialogSpares]:
    """A spare-dialog pool that has built its spares (stopped after the test)."""
    pool = DialogSpares(None)
    pool.start()
    qtbot.waitUntil(pool.is_idle, timeout=5000)
    yield pool
    pool.stop()


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private session bus (never the user's); the app finds it in the environment."""
    with private_bus(tmp_path / "bus") as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address


@pytest.fixture
def server(bus: str, loop: AppEventLoop) -> Iterator[NotificationServer]:
    """The desktop's notification server on `bus`, answering on the app's loop."""
    notifications = NotificationServer()
    run_on_loop(loop, notifications.start(bus), timeout=30)
    yield notifications
    notifications.stop()
