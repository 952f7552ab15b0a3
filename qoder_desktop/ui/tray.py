"""The system tray icon: a pending-count badge, notifications and a request menu.

The tray only formats and shows; the app decides when to notify (the window is not
active) and what opening a request does. All text it shows is plain and bounded.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon, QImage
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from qoder_desktop.domain.models import ApprovalRequest, RequestKind
from qoder_desktop.text.subject import question_texts
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui import icons
from qoder_desktop.ui.plain_text import notification_text, tooltip
from qoder_desktop.ui.summaries import (
    elide,
    input_summary,
    one_line,
    request_summary,
    session_label,
)

if TYPE_CHECKING:
    from PySide6.QtDBus import QDBusConnection

APP_NAME = "Qoder Desktop"
TITLE_LIMIT = 80
BODY_LIMIT = 200
MENU_LIMIT = 10
MESSAGE_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Notification:
    """A notification's plain-text title and body."""

    title: str
    body: str

    @property
    def text(self) -> str:
        """Title and body on one line (what a screen reader would say)."""
        return f"{self.title}: {self.body}" if self.body else self.title


def format_notification(request: ApprovalRequest) -> Notification:
    """How a new request is announced; a question is never announced with "Allow"."""
    session = elide(session_label(request), 40)
    if request.kind is RequestKind.QUESTION:
        question = one_line(question_texts(request.tool_input)) or "The agent has a question."
        return Notification(elide(f"Question from {session}", TITLE_LIMIT),
                            elide(question, BODY_LIMIT))
    if request.kind is RequestKind.PLAN:
        return Notification(elide(f"Plan from {session} is ready for review", TITLE_LIMIT),
                            elide(request_summary(request, BODY_LIMIT), BODY_LIMIT))
    label = elide(one_line(request.label), 40)
    detail = input_summary(request.tool_name, request.tool_input)
    return Notification(elide(f"{label} in {session} wants approval", TITLE_LIMIT),
                        elide(detail, BODY_LIMIT))


_WATCHER = "org.kde.StatusNotifierWatcher"


def status_notifier_host_registered(connection: QDBusConnection | None = None) -> bool:
    """True when Qt shows tray icons and balloons through D-Bus (StatusNotifierItem).

    This is Qt's own test (`QDBusMenuConnection`): a registered StatusNotifierWatcher
    with a host. Then a balloon goes to the freedesktop notification server, which reads
    markup in its body; otherwise Qt draws its own balloon, which shows plain text.
    Asked when the first balloon shows: QtDBus's bindings (~0.4 MB) load only then.
    """
    if not sys.platform.startswith("linux"):
        return False
    from PySide6.QtDBus import QDBusConnection, QDBusInterface

    bus = QDBusConnection.sessionBus() if connection is None else connection
    interface = bus.interface() if bus.isConnected() else None
    if interface is None or not interface.isServiceRegistered(_WATCHER).value():
        return False
    host = QDBusInterface(_WATCHER, "/StatusNotifierWatcher", _WATCHER, bus)
    return bool(host.isValid() and host.property("IsStatusNotifierHostRegistered"))


@functools.cache
def _balloon_reads_markup() -> bool:
    return status_notifier_host_registered()


def balloon_text(body: str, *, markup: bool) -> str:
    """A balloon's body: escaped for a notification server (`markup`), else as it is.

    Qt's own balloon shows plain text: escaping there printed ``&gt;`` and ``&amp;&amp;``
    in place of the command's ``>`` and ``&&``. Hidden characters become markers either way.
    """
    return notification_text(body) if markup else make_visible(body)


def tooltip_text(pending: int) -> str:
    """The tray tooltip for `pending` waiting requests."""
    return f"{APP_NAME} — {pending} pending"


class Tray(QObject):
    """Wraps `QSystemTrayIcon`: badge, tooltip, notifications and a context menu.

    Signals:
        open_request(str): open the request with this id (from a notification or menu).
        activate_window(): the icon was clicked; bring the main window forward.
        toggle_window(): the menu's Show/Hide window entry was chosen.
        open_history(): the menu's History entry was chosen.
        away_toggled(bool): the menu's Away mode item was checked (on) or unchecked.
        quit_requested(): the menu's Quit entry was chosen.
    """

    open_request = Signal(str)
    activate_window = Signal()
    toggle_window = Signal()
    open_history = Signal()
    away_toggled = Signal(bool)
    quit_requested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._listed: list[ApprovalRequest] = []
        """The first `MENU_LIMIT` waiting requests (what the menu lists)."""
        self._count = 0
        self._hosts: list[str] = []
        self._away_on = False
        self._away_line = ""
        self._icons: dict[int, QIcon] = {}
        self._last_notified: str | None = None
        self._window_visible = True
        self._icon = QSystemTrayIcon(self._icon_for(0), self)
        self._icon.setToolTip(tooltip_text(0))
        self._menu = QMenu()
        self._disposed = False
        self._menu.setObjectName("trayMenu")
        self._icon.setContextMenu(self._menu)
        self._icon.activated.connect(self._activated)
        self._icon.messageClicked.connect(self._message_clicked)
        self._rebuild_menu()

    @staticmethod
    def is_available() -> bool:
        """True when the desktop has a system tray to put the icon in."""
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        """Put the icon in the tray."""
        self._icon.show()

    def hide(self) -> None:
        """Take the icon out of the tray."""
        self._icon.hide()

    def dispose(self) -> None:
        """Hide the icon and free the menu (call before the app quits); idempotent."""
        if self._disposed:
            return
        self._disposed = True
        self._icon.hide()
        self._icon.setContextMenu(None)  # type: ignore[arg-type]
        self._menu.deleteLater()

    # -- state -------------------------------------------------------------------------

    def set_pending(self, requests: list[ApprovalRequest]) -> None:
        """Show how many requests wait (badge, tooltip) and list them in the menu, in the
        order given (the broker's: oldest first)."""
        self._listed = list(requests[:MENU_LIMIT])
        count = self._count = len(requests)
        self._icon.setIcon(self._icon_for(count))
        self._show_tooltip()
        self._rebuild_menu()

    def set_remote_hosts(self, states: list[str]) -> None:
        """Show each remote host's tunnel (``box: connected``) in the tooltip and menu."""
        self._hosts = list(states)
        self._show_tooltip()
        self._rebuild_menu()

    def set_away(self, on: bool, line: str) -> None:
        """Show whether Away mode is on (its menu item checked) and where (`line`, in the
        tooltip)."""
        self._away_on = on
        self._away_line = line if on else ""
        self._show_tooltip()
        self._rebuild_menu()

    def away_on(self) -> bool:
        """Whether the menu shows Away mode on."""
        return self._away_on

    def _show_tooltip(self) -> None:
        lines = [tooltip_text(self._count), *self._hosts]
        if self._away_line:
            lines.append(self._away_line)
        # (a host's state carries its name and ssh's own words: never read as markup)
        self._icon.setToolTip(tooltip("\n".join(lines)))

    def set_window_visible(self, visible: bool) -> None:
        """Tell the tray whether the main window shows (for the Show/Hide entry)."""
        self._window_visible = visible
        self._rebuild_menu()

    def notify(self, request: ApprovalRequest, *, sound: bool = False) -> Notification:
        """Announce a new request; clicking the message opens it.

        Args:
            request: the request that just arrived.
            sound: also ring the system bell.

        Returns:
            The notification's text (also when the desktop cannot show messages).
        """
        note = format_notification(request)
        self._last_notified = request.request_id
        if self._icon.isVisible() and QSystemTrayIcon.supportsMessages():
            body = balloon_text(note.body, markup=_balloon_reads_markup())
            self._icon.showMessage(note.title, body, self._icon.icon(), MESSAGE_TIMEOUT_MS)
        if sound:
            QApplication.beep()
        return note

    def withdraw(self, request_id: str) -> None:
        """The request was answered or withdrawn: hide its balloon if it still shows.

        (Qt hides the balloon it shows when given an empty message.) Clicking a balloon
        of an answered request then opens nothing.
        """
        if self._last_notified != request_id:
            return
        self._last_notified = None
        if self._icon.isVisible() and QSystemTrayIcon.supportsMessages():
            self._icon.showMessage("", "", QIcon(), 0)

    # -- queries (tests, wiring) -------------------------------------------------------

    def tooltip(self) -> str:
        """The current tooltip text."""
        return self._icon.toolTip()

    def icon_image(self, size: int = 64) -> QImage:
        """The current icon rendered at `size` pixels."""
        return self._icon.icon().pixmap(size, size).toImage()

    def last_notified(self) -> str | None:
        """The id of the most recently announced request."""
        return self._last_notified

    def menu(self) -> QMenu:
        """The context menu."""
        return self._menu

    # -- internals ---------------------------------------------------------------------

    def _icon_for(self, count: int) -> QIcon:
        key = min(count, 100)
        if key not in self._icons:
            self._icons[key] = icons.tray_icon(key)
        return self._icons[key]

    def _rebuild_menu(self) -> None:
        if self._disposed:  # (the app quits: its menu is gone)
            return
        menu = self._menu
        menu.clear()
        count = self._count
        header = menu.addAction(f"{count} pending" if count else "Nothing is waiting for you")
        header.setEnabled(False)
        for state in self._hosts:
            menu.addAction(make_visible(state).replace("&", "&&")).setEnabled(False)
        for request in self._listed:
            text = f"{elide(session_label(request), 30)} — {request_summary(request, 60)}"
            action = menu.addAction(text.replace("&", "&&"))
            action.setData(request.request_id)
            action.triggered.connect(
                lambda _=False, rid=request.request_id: self.open_request.emit(rid))
        if count > MENU_LIMIT:
            more = menu.addAction(f"… and {count - MENU_LIMIT} more")
            more.triggered.connect(self.activate_window)
        menu.addSeparator()
        away = QAction("Away mode", menu)
        away.setObjectName("awayAction")
        away.setCheckable(True)
        away.setChecked(self._away_on)
        away.setToolTip("Paired phones may answer while you are away")
        away.triggered.connect(self.away_toggled)
        menu.addAction(away)
        history = QAction("History…", menu)
        history.setObjectName("historyAction")
        history.triggered.connect(self.open_history)
        menu.addAction(history)
        toggle = QAction("Hide window" if self._window_visible else "Show window", menu)
        toggle.setObjectName("toggleWindowAction")
        toggle.triggered.connect(self.toggle_window)
        menu.addAction(toggle)
        quit_action = QAction("Quit", menu)
        quit_action.setObjectName("quitAction")
        quit_action.triggered.connect(self.quit_requested)
        menu.addAction(quit_action)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            self.activate_window.emit()

    def _message_clicked(self) -> None:
        if self._last_notified is not None:
            self.open_request.emit(self._last_notified)
        else:
            self.activate_window.emit()
