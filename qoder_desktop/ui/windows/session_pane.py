"""The main window's sessions and the selected one: its row, header, actions, prompt,
permission mode, transcript and rules.

A view part: it shows the `SessionInfo`s the hub publishes (through the window) and
keeps no session state of its own; which session is selected is the only thing it
holds. Intents go out through the window's signals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelection, QObject, SignalInstance
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QMainWindow, QSizePolicy, QWidget

from qoder_desktop.domain.kinds import Backend, PermissionMode, SessionState
from qoder_desktop.domain.revocation import RevokeReach, revoke_reach
from qoder_desktop.ui.forms.ui_main_window import Ui_MainWindow
from qoder_desktop.ui.plain_text import set_plain, tooltip
from qoder_desktop.ui.qt_numbers import LINKS_ACCESSIBLE, RICH_TEXT
from qoder_desktop.ui.widgets.mode_switch import ModeSwitcher
from qoder_desktop.ui.widgets.session_list import (
    SessionTableModel,
    attach_sessions_model,
    fit_folder_column,
    session_details,
    setup_sessions_view,
)

if TYPE_CHECKING:  # pydantic and the models load after the first paint
    from qoder_desktop.domain.models import SessionInfo, SessionRule
    from qoder_desktop.domain.session_options import TranscriptEvent

_LIVE = (SessionState.STARTING, SessionState.RUNNING, SessionState.WAITING, SessionState.IDLE)
_BUSY = (SessionState.RUNNING, SessionState.WAITING)
_IN_APP = (Backend.CLAUDE, Backend.QODER)
"""Sessions the app started and drives through an SDK adapter."""

DRIVEN_ELSEWHERE = {
    Backend.TERMINAL: "This agent runs in your terminal; answer its prompts here, "
                      "drive it there",
    Backend.EXTERNAL: "This agent runs outside the app and asks through the approval "
                      "gateway; answer its prompts here, drive it where it runs",
}
"""Why the prompt, interrupt, stop and the mode switch are off for a session the app
did not start: it has no adapter here, its own CLI takes those."""


class SessionIntents:
    """The window's signals the session pane emits (session id first; `history` opens
    View → History)."""

    def __init__(self, *, selected: SignalInstance, prompt: SignalInstance,
                 interrupt: SignalInstance, stop: SignalInstance,
                 history: SignalInstance) -> None:
        self.selected, self.prompt = selected, prompt
        self.interrupt, self.stop = interrupt, stop
        self.history = history


HISTORY_PLACE = "View → History"


def forgotten_text(count: int) -> str:
    """What the sessions list says under its rows once `count` older ended sessions
    are no longer listed (the note links `HISTORY_PLACE` to the history)."""
    sessions = "session is" if count == 1 else "sessions are"
    return (f"{count:,} older ended {sessions} no longer listed here; every request "
            f"and decision is in {HISTORY_PLACE}.")


class SessionPane(QObject):
    """The sessions list, and the selected session's header, actions, prompt, mode,
    transcript and rules in `window`'s form `ui`.

    The transcript and rules are not kept here either: the hub holds each session's
    transcript and the store its rules; the pane shows the selected session's, which
    the app sends when `intents.selected` fires.
    """

    def __init__(self, window: QMainWindow, ui: Ui_MainWindow, intents: SessionIntents) -> None:
        super().__init__(window)
        self._ui = ui
        self._intents = intents
        self.model = SessionTableModel(self)
        """The sessions' rows: what the hub published, with their pending counts."""
        self._current: str | None = None
        self._rows_shown = False  # (`show_rows`: after the first frame)
        setup_sessions_view(ui.sessionsView)
        self.forgotten_note = QLabel(ui.sessionsPane)
        """Under the rows: how many older ended sessions are no longer listed (hidden
        until one is), with a link to the history, which has them all."""
        self.forgotten_note.setObjectName("forgottenSessionsNote")
        self.forgotten_note.setProperty("role", "hint")
        self.forgotten_note.setWordWrap(True)
        # (as numbers from `qt_numbers`: no `Qt` namespace before the first frame)
        self.forgotten_note.setProperty("textFormat", RICH_TEXT)
        self.forgotten_note.setProperty("textInteractionFlags", LINKS_ACCESSIBLE)
        self.forgotten_note.linkActivated.connect(lambda _link: intents.history.emit())
        self.forgotten_note.hide()
        self._say_forgotten(0)  # its rich text's objects now, not in the middle of a long run
        ui.sessionsLayout.addWidget(self.forgotten_note)
        # (window-wide, as it always was: PySide6 took no `context` with a callable)
        QShortcut(QKeySequence("Ctrl+Return"), ui.promptEdit, self.send_prompt)
        self.modes = ModeSwitcher(window, ui.sessionMenu)
        ui.mainToolBar.addWidget(QLabel("  Mode: ", window))
        ui.mainToolBar.addWidget(self.modes.combo)
        spacer = QWidget(window)
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        ui.mainToolBar.addWidget(spacer)
        ui.promptAction.triggered.connect(ui.promptEdit.setFocus)
        ui.interruptAction.triggered.connect(lambda: self._emit_for_current(intents.interrupt))
        ui.stopAction.triggered.connect(lambda: self._emit_for_current(intents.stop))
        ui.sendButton.clicked.connect(self.send_prompt)
        self._own_tips = {control: control.toolTip() for control in self._driving(ui)}
        self._own_placeholder = ui.promptEdit.placeholderText()
        ui.promptEdit.textChanged.connect(self._update_actions)
        self._update_header()

    def show_rows(self) -> None:
        """Give the sessions list its model, once: after the window's first frame
        (`attach_sessions_model` says why), or before the first use of its rows."""
        if not self._rows_shown:
            self._rows_shown = True
            attach_sessions_model(self._ui.sessionsView, self.model)
            self._ui.sessionsView.selectionModel().selectionChanged.connect(
                self._selection_changed)

    # -- the sessions ------------------------------------------------------------------

    def set_sessions(self, sessions: list[SessionInfo]) -> None:
        """Show exactly `sessions` (keeps the selection when that session is still there)."""
        self.show_rows()
        current = self._current
        self.model.set_sessions(sessions)
        if current is not None and self.model.row_of(current) is not None:
            self.select(current)
        elif sessions:
            self.select(sessions[0].session_id)
        else:
            self._set_current(None)

    def update_session(self, info: SessionInfo) -> None:
        """Add or refresh one session's row (see `MainWindow.update_session`)."""
        self.show_rows()
        is_new = self.model.row_of(info.session_id) is None
        self.model.update_session(info)
        if is_new:
            fit_folder_column(self._ui.sessionsView, self.model)
        if self._current is None or (is_new and info.backend in _IN_APP):
            self.select(info.session_id)
        elif info.session_id == self._current:
            self._update_header()

    def forget_session(self, session_id: str, forgotten: int) -> None:
        """Take an ended session's row out; the note under the rows says that
        `forgotten` older ended sessions are in the history (nothing is selected
        if it was the selected one)."""
        self.show_rows()
        if session_id == self._current:
            self._ui.sessionsView.selectionModel().clear()  # its current row too
        self.model.remove_session(session_id)
        if forgotten:
            self._say_forgotten(forgotten)
            self.forgotten_note.show()

    def _say_forgotten(self, count: int) -> None:
        text = forgotten_text(count)
        self.forgotten_note.setText(text.replace(
            HISTORY_PLACE, f'<a href="history">{HISTORY_PLACE}</a>'))
        self.forgotten_note.setAccessibleName(text)

    def set_pending_counts(self, counts: dict[str, int]) -> None:
        """Each session's waiting requests; the header follows when the selected
        session's count changed."""
        current = self._current
        before = self.model.pending_count(current) if current is not None else 0
        self.model.set_pending_counts(counts)
        if current is not None and self.model.pending_count(current) != before:
            self._update_header()

    def select(self, session_id: str) -> None:
        """Select the session's row (and show its transcript and rules)."""
        self.show_rows()
        row = self.model.row_of(session_id)
        if row is not None:
            self._ui.sessionsView.selectRow(row)

    @property
    def current(self) -> str | None:
        """The id of the selected session, or None."""
        return self._current

    def _selection_changed(self, _sel: QItemSelection, _old: QItemSelection) -> None:
        rows = self._ui.sessionsView.selectionModel().selectedRows()
        info = self.model.session_at(rows[0].row()) if rows else None
        self._set_current(info.session_id if info else None)

    def _set_current(self, session_id: str | None) -> None:
        if session_id == self._current:
            return
        self._current = session_id
        self._ui.promptEdit.clear()
        self._ui.transcriptView.set_events([])  # the app answers `selected` with them
        self._ui.rulesView.set_rules([])
        self._update_header()
        if session_id is not None:
            self._intents.selected.emit(session_id)

    def _update_header(self) -> None:
        ui = self._ui
        info = self.model.session(self._current) if self._current else None
        if info is None:
            ui.sessionTitle.setText("No session selected")
            ui.sessionDetails.setText("Start a session with File › New session (Ctrl+N).")
        else:
            set_plain(ui.sessionTitle, info.name)
            set_plain(ui.sessionDetails,
                      session_details(info, self.model.pending_count(info.session_id)))
            ui.sessionDetails.setToolTip(tooltip(info.cwd))
        self._update_actions()

    @staticmethod
    def _driving(ui: Ui_MainWindow) -> tuple[QAction | QWidget, ...]:
        """The controls that drive a session (an in-app one only)."""
        return (ui.promptEdit, ui.sendButton, ui.promptAction, ui.interruptAction,
                ui.stopAction)

    def _update_actions(self) -> None:
        info = self.model.session(self._current) if self._current else None
        why_not = DRIVEN_ELSEWHERE.get(info.backend) if info is not None else None
        live = info is not None and info.state in _LIVE and why_not is None
        ui = self._ui
        ui.promptEdit.setEnabled(live)
        ui.sendButton.setEnabled(live and bool(ui.promptEdit.toPlainText().strip()))
        ui.promptAction.setEnabled(live)
        ui.interruptAction.setEnabled(live and info is not None and info.state in _BUSY)
        ui.stopAction.setEnabled(live)
        for control, own_tip in self._own_tips.items():
            control.setToolTip(why_not or own_tip)
        ui.promptEdit.setPlaceholderText(why_not or self._own_placeholder)
        self.modes.set_session(self._current, info.permission_mode if info else
                               PermissionMode.DEFAULT, enabled=live, why_not=why_not)
        ui.rulesView.set_reach(revoke_reach(info.backend, info.state) if info is not None
                               else RevokeReach.NONE)

    # -- the selected session's transcript and rules -----------------------------------

    def append_transcript(self, event: TranscriptEvent) -> None:
        """Show one new event if its session is the selected one."""
        if event.session_id == self._current:
            self._ui.transcriptView.append_event(event)

    def set_transcript(self, session_id: str, events: list[TranscriptEvent]) -> None:
        """Show a session's transcript as the hub keeps it (capped there,
        `hub.TRANSCRIPT_LIMIT`) if it is selected."""
        if session_id == self._current:
            self._ui.transcriptView.set_events(list(events))

    def set_rules(self, session_id: str, rules: list[SessionRule]) -> None:
        """Show a session's rules (active and revoked) if it is selected."""
        if session_id == self._current:
            self._ui.rulesView.set_rules(rules)

    # -- intents -----------------------------------------------------------------------

    def _emit_for_current(self, signal: SignalInstance) -> None:
        if self._current is not None:
            signal.emit(self._current)

    def send_prompt(self) -> None:
        """Send the prompt field's text to the selected session (and clear the field)."""
        text = self._ui.promptEdit.toPlainText().strip()
        if self._current is None or not text or not self._ui.promptEdit.isEnabled():
            return
        self._intents.prompt.emit(self._current, text)
        self._ui.promptEdit.clear()
