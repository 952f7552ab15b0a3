"""Requests as desktop notifications with buttons (the Qt side of `qoder_desktop.notifications`).

Approvals get "Allow once", "Deny" and "Open…"; questions and plans only "Answer…" (a
question is never announced with "Allow"). "Allow once" is offered only when the
notification shows the whole request: one input value, shown exactly as it runs (no
hidden characters, nothing collapsed or cut), and it acts only once the arming delay
(the dialogs' `ARMING_DELAY_MS`) has passed since the notification appeared. A press
becomes a `Decision` on `decided`, the same path as a dialog's, at most once per
request. A request marked while it waits ("covered by your new rule", `update()`) is
shown again with the mark; its "Allow once" still needs the person's press, after the
arming delay again. When a request is answered or withdrawn anywhere else, `withdraw()`
closes its notification. Without a notification service (or when one refuses a notification)
`fall_back` asks for the tray balloon instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from qoder_desktop.domain.models import ApprovalRequest, Decision, RequestKind
from qoder_desktop.domain.workspace import is_inside
from qoder_desktop.notifications.desktop import open_service
from qoder_desktop.notifications.service import NoteAction, NoteSpec, ServiceStatus
from qoder_desktop.text.visible import has_hidden, hidden_in_request_texts
from qoder_desktop.ui.dialogs.arming import ARMING_DELAY_MS
from qoder_desktop.ui.plain_text import notification_text
from qoder_desktop.ui.summaries import covered_note, one_line
from qoder_desktop.ui.tray import APP_NAME, format_notification

log = logging.getLogger(__name__)

ALLOW, DENY, OPEN, ANSWER = "allow", "deny", "open", "answer"
NOTIFICATION_DENY = "The user denied this tool call from a desktop notification."
TOO_EARLY = ("Allow once on a notification did nothing: it was pressed within "
             f"{ARMING_DELAY_MS} ms of the notification appearing. Answer in the dialog.")
ALLOW_LIMIT = 120
"""The longest value offered with "Allow once": servers show about three body lines."""
_NOT_EXECUTED = frozenset({"description"})
"""Input keys that describe a call but do not change what runs."""


def whole_value(request: ApprovalRequest) -> str | None:
    """The request's one input value when a notification can show all of it, else None.

    That is: a tool call whose input is a single string (besides a description), shown
    character for character — no hidden characters (`text.visible`), no line breaks or
    runs of spaces that a one-line body would collapse, at most `ALLOW_LIMIT` long — and
    whose other fields (title, reason, blocked path, names) hide nothing either. A
    blocked path outside the session's folders needs the dialog.
    """
    if request.kind is not RequestKind.TOOL:
        return None
    if request.blocked_path and not is_inside(request.blocked_path,
                                              (request.cwd, *request.add_dirs)):
        return None  # a path outside the session's folders: the dialog says more
    values = [v for k, v in request.tool_input.items() if k not in _NOT_EXECUTED]
    if len(values) != 1 or not isinstance(values[0], str):
        return None
    value = values[0]
    if not value or has_hidden(value) or one_line(value) != value or len(value) > ALLOW_LIMIT:
        return None
    return None if hidden_in_request_texts(request) else value


def actions_for(request: ApprovalRequest) -> tuple[NoteAction, ...]:
    """The buttons a request's notification offers."""
    if request.kind is not RequestKind.TOOL:
        return (NoteAction(ANSWER, "Answer…"),)
    allow = (NoteAction(ALLOW, "Allow once"),) if whole_value(request) is not None else ()
    return (*allow, NoteAction(DENY, "Deny"), NoteAction(OPEN, "Open…"))


def note_for(request: ApprovalRequest) -> NoteSpec:
    """The notification for `request`: plain text, hidden characters made visible."""
    note = format_notification(request)
    whole = whole_value(request)
    body = whole if whole is not None else note.body
    mark = covered_note(request) if request.granted_while_waiting else None
    if mark is not None:  # (after the value: the value stays whole and first)
        body = f"{body}\n{mark}"
    return NoteSpec(request.request_id, note.title, notification_text(body),
                    actions_for(request))


class RequestNotifier(QObject):
    """Announces requests as desktop notifications and turns presses into decisions.

    A press counts only from the notification server that showed that notification
    (`notifications.freedesktop`): when another process takes the service over, every
    open notification is forgotten (`gone`; its request waits in the dialog) and new
    ones go to the new server.

    Signals:
        decided(str, object): a button answered request_id with a `Decision`.
        open_request(str): open this request's dialog ("Open…", "Answer…", a click).
        fall_back(object): no notification service took this request: use the tray.
        shown(str): the service shows request_id's notification (tests, logs).
        armed(str): request_id's "Allow once" acts from now on.
        ignored(str): a press did nothing; the message says why (for the status line).
        gone(str): request_id's notification went away unanswered (closed by the
            server, or the server was replaced); its request still waits.

    Args:
        arming_delay_ms: how long "Allow once" stays inert after a notification appears.
    """

    decided = Signal(str, object)
    open_request = Signal(str)
    fall_back = Signal(object)
    shown = Signal(str)
    armed = Signal(str)
    ignored = Signal(str)
    gone = Signal(str)

    def __init__(self, parent: QObject | None = None, *,
                 arming_delay_ms: int = ARMING_DELAY_MS) -> None:
        super().__init__(parent)
        self._service = open_service(APP_NAME, self._on_action, self._on_gone)
        self.arming_delay_ms = arming_delay_ms
        """How long "Allow once" stays inert after a notification appears (ms)."""
        self._requests: dict[str, ApprovalRequest] = {}
        self._armed: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def available(self) -> bool:
        """True once a notification service answered (`start`)."""
        return self._service.available

    async def start(self) -> ServiceStatus:
        """Look for the desktop's notification service; until then, `fall_back` is used."""
        return await self._service.start()

    def announce(self, request: ApprovalRequest) -> None:
        """Show a notification for a new request (or ask for the tray balloon)."""
        if not self._service.available:
            self.fall_back.emit(request)
            return
        self._requests[request.request_id] = request
        self._armed.discard(request.request_id)
        self._spawn(self._show(request))

    def update(self, request: ApprovalRequest) -> None:
        """A waiting request changed (a rule granted meanwhile covers it): a notification
        still up for it is shown again, replaced, with its "Allow once" inert until the
        arming delay has passed again. Nothing shows that was not up already."""
        if request.request_id in self._requests:
            self.announce(request)

    def withdraw(self, request_id: str) -> None:
        """The request was answered or withdrawn: close its notification."""
        self._armed.discard(request_id)
        if self._requests.pop(request_id, None) is not None:
            self._spawn(self._service.close(request_id))

    def is_showing(self, request_id: str) -> bool:
        """True while request_id's notification is up."""
        return request_id in self._requests and self._service.is_shown(request_id)

    async def close_all(self) -> None:
        """Close every notification and leave the session bus (the app is quitting)."""
        self._requests.clear()
        self._armed.clear()
        await self._service.stop()

    # -- internals ---------------------------------------------------------------------

    async def _show(self, request: ApprovalRequest) -> None:
        request_id = request.request_id
        note = note_for(request)
        if self._service.replaced:  # the service changed hands: it may be a stand-in
            note = replace(note, actions=tuple(action for action in note.actions
                                               if action.key != ALLOW))
        ok = await self._service.show(note)
        if request_id not in self._requests:  # answered while the service was asked
            await self._service.close(request_id)
            return
        if not ok:
            self._requests.pop(request_id, None)
            self.fall_back.emit(request)
            return
        QTimer.singleShot(self.arming_delay_ms, self, lambda: self._arm(request))
        self.shown.emit(request_id)

    def _arm(self, request: ApprovalRequest) -> None:
        request_id = request.request_id
        if self._requests.get(request_id) is request:  # (not one shown again since)
            self._armed.add(request_id)
            self.armed.emit(request_id)

    def _on_action(self, request_id: str, action: str) -> None:
        request = self._requests.get(request_id)
        if request is None:
            return  # answered, withdrawn or pressed already: nothing to do
        if action == ALLOW:
            value = whole_value(request)
            if request_id not in self._armed or value is None:
                log.info("ignored Allow once on a notification before it was armed")
                self.ignored.emit(TOO_EARLY)
                return
            self._forget(request_id)
            self.decided.emit(request_id, Decision.allow_once(dict(request.tool_input)))
        elif action == DENY and request.kind is RequestKind.TOOL:
            self._forget(request_id)
            self.decided.emit(request_id, Decision.deny(NOTIFICATION_DENY))
        else:  # Open…, Answer…, or a click on the body
            self._forget(request_id)
            self.open_request.emit(request_id)

    def _on_gone(self, request_id: str) -> None:
        if request_id in self._requests:
            self._forget(request_id)
            self.gone.emit(request_id)

    def _forget(self, request_id: str) -> None:
        self._requests.pop(request_id, None)
        self._armed.discard(request_id)

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("a desktop notification failed: %s", finished.exception())

        task.add_done_callback(done)
