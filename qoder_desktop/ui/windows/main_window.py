"""The main window: sessions, the selected session's transcript and rules, and the queue.

The window is a view. It is given value objects (`SessionInfo`, `ApprovalRequest`,
`TranscriptEvent`, `SessionRule`) and tells the app what the person wants through
signals; it never awaits, never touches storage and never talks to an SDK or the broker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, Signal
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

from qoder_desktop.ui import window_state
from qoder_desktop.ui.forms.ui_main_window import Ui_MainWindow
from qoder_desktop.ui.windows.help_menu import HelpMenu
from qoder_desktop.ui.windows.pending_display import PendingDisplay
from qoder_desktop.ui.windows.session_form_opener import NewSessionOpener
from qoder_desktop.ui.windows.session_pane import SessionIntents, SessionPane

if TYPE_CHECKING:  # pydantic, the models and the form load after the first paint
    from PySide6.QtGui import QCloseEvent, QHideEvent, QShowEvent
    from PySide6.QtWidgets import QMessageBox

    from qoder_desktop.domain.models import ApprovalRequest, SessionInfo, SessionRule
    from qoder_desktop.domain.session_options import SessionOptions, TranscriptEvent
    from qoder_desktop.ui.windows.new_session_form import NewSessionDialog

STATUS_TIMEOUT_MS = 10_000
SESSIONS_PANE_WIDTH = 580


class MainWindow(QMainWindow):
    """Sessions on the left, the selected transcript in the middle, queue and rules right.

    Signals:
        new_session_requested(SessionOptions): start a session with these options.
        prompt_requested(str, str): send a follow-up prompt (session id, text).
        interrupt_requested(str): interrupt the session's current turn.
        stop_requested(str): stop the session.
        mode_change_requested(str, PermissionMode, object): switch the session's
            permission mode; a risky one with the person's `ModeConsent` from the
            confirmation dialog (None for a safe mode).
        revoke_requested(str): revoke the session rule with this id.
        open_request_requested(str): open the dialog of the pending request with this id.
        session_selected(str): this session was selected; the app answers with its
            `set_transcript` and `set_rules` (the window keeps no copy of them).
        settings_requested(): open the settings.
        history_requested(): open the decision history (View → History).
        connect_agent_requested(): show how to connect an agent started elsewhere.
        quit_requested(): quit the app (asked first while requests wait; see
            `request_quit`).
        visibility_changed(bool): the window was shown (True) or hidden (False).
    """

    new_session_requested = Signal(object)
    prompt_requested = Signal(str, str)
    interrupt_requested = Signal(str)
    stop_requested = Signal(str)
    mode_change_requested = Signal(str, object, object)
    revoke_requested = Signal(str)
    open_request_requested = Signal(str)
    session_selected = Signal(str)
    settings_requested = Signal()
    history_requested = Signal()
    connect_agent_requested = Signal()
    quit_requested = Signal()
    visibility_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None, *,
                 scenarios: list[str] | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_MainWindow()
        self.ui.setupUi(self)  # (its icon is the application's, set after the first frame)
        self._quitting = False
        self._quit_box: QMessageBox | None = None
        self._new_session = NewSessionOpener(self, self.new_session_requested, scenarios)
        self.help = HelpMenu(self, self.ui.shortcutsAction, self.ui.aboutAction)
        self._setup_views()
        self.session_pane = SessionPane(self, self.ui, SessionIntents(
            selected=self.session_selected, prompt=self.prompt_requested,
            interrupt=self.interrupt_requested, stop=self.stop_requested,
            history=self.history_requested))
        """The sessions list and the selected session (header, prompt, transcript, rules)."""
        self.modes = self.session_pane.modes
        self.mode_combo = self.modes.combo
        self.ui.mainToolBar.addAction(self.ui.settingsAction)
        self._connect()
        self._update_pending_display()
        window_state.fit_to_screen(self, center=True)
        self._share_width()

    # -- setup -------------------------------------------------------------------------

    def _setup_views(self) -> None:
        ui = self.ui
        # The toolbar's layout took its spacing and margins from the style when it was
        # made, before the form named it, so `QToolBar#mainToolBar` had not matched yet.
        ui.mainToolBar.ensurePolished()
        QCoreApplication.sendEvent(ui.mainToolBar, QEvent(QEvent.Type.StyleChange))
        ui.mainSplitter.setStretchFactor(0, 0)
        ui.mainSplitter.setStretchFactor(1, 1)
        ui.mainSplitter.setSizes([560, 840])
        ui.leftSplitter.setSizes([440, 320])
        ui.centerSplitter.setStretchFactor(0, 1)
        ui.centerSplitter.setStretchFactor(1, 0)
        ui.centerSplitter.setSizes([620, 160])
        self._pending_display = PendingDisplay(self, ui)

    def _share_width(self) -> None:
        """Give the sessions side about 43 % of the (fitted) window, at most
        `SESSIONS_PANE_WIDTH`: every column of the sessions list shows at 1366 px."""
        left = min(SESSIONS_PANE_WIDTH, round(self.width() * 0.43))
        self.ui.mainSplitter.setSizes([left, max(1, self.width() - left)])

    def _connect(self) -> None:
        ui = self.ui
        ui.newSessionAction.triggered.connect(self.open_new_session_form)
        ui.settingsAction.triggered.connect(self.settings_requested)
        ui.connectAgentAction.triggered.connect(self.connect_agent_requested)
        ui.quitAction.triggered.connect(self.request_quit)
        ui.openNextAction.triggered.connect(self._open_oldest)
        self.history_action = ui.viewMenu.addAction("&History…")
        self.history_action.setObjectName("historyAction")
        # (as text: PySide6 weighs `setShortcut`'s overloads by building the `Qt` namespace)
        self.history_action.setProperty("shortcut", "Ctrl+H")
        self.history_action.setToolTip("Every request and who decided it (Ctrl+H)")
        self.history_action.triggered.connect(self.history_requested)
        ui.rulesView.revoke_requested.connect(self.revoke_requested)
        ui.queueView.open_requested.connect(self.open_request_requested)
        self.modes.mode_requested.connect(self.mode_change_requested)

    def finish_after_first_frame(self) -> None:
        """What the first frame does not need and would delay (the transcript's viewport
        set-up, see `TranscriptView.finish_set_up`; the sessions list's model, see
        `SessionPane.show_rows`); the app calls this after it."""
        self.ui.transcriptView.finish_set_up()
        self.session_pane.show_rows()

    # -- sessions (the session pane shows them) ----------------------------------------

    def set_sessions(self, sessions: list[SessionInfo]) -> None:
        """Show exactly `sessions` (keeps the selection when that session is still there)."""
        self.session_pane.set_sessions(sessions)

    def update_session(self, info: SessionInfo) -> None:
        """Add or refresh one session's row.

        A new session started here (Claude or Qoder) is selected; one that arrives by
        itself (an external or terminal agent) only when nothing is selected.
        """
        self.session_pane.update_session(info)

    def forget_session(self, session_id: str, forgotten: int) -> None:
        """Take an ended session's row out (the hub no longer lists it); the list then
        says that `forgotten` older ended sessions are in View → History."""
        self.session_pane.forget_session(session_id, forgotten)

    def select_session(self, session_id: str) -> None:
        """Select the session's row (and show its transcript and rules)."""
        self.session_pane.select(session_id)

    def selected_session_id(self) -> str | None:
        """The id of the selected session, or None."""
        return self.session_pane.current

    def append_transcript(self, event: TranscriptEvent) -> None:
        """Show one new event if its session is the selected one."""
        self.session_pane.append_transcript(event)

    def set_transcript(self, session_id: str, events: list[TranscriptEvent]) -> None:
        """Show a session's transcript as the hub keeps it (already bounded there) if it
        is selected."""
        self.session_pane.set_transcript(session_id, events)

    def set_rules(self, session_id: str, rules: list[SessionRule]) -> None:
        """Show a session's rules (active and revoked) if it is selected."""
        self.session_pane.set_rules(session_id, rules)

    # -- pending requests --------------------------------------------------------------

    def set_pending(self, requests: list[ApprovalRequest]) -> None:
        """Show the requests waiting for a person (all sessions) in the order given, the
        broker's (oldest first; the window sorts nothing); counts follow from them.

        Called after every broker event, with up to thousands of requests: the queue and
        the sessions list update only what changed, the session header only when the
        selected session's count changed.
        """
        self.session_pane.set_pending_counts(dict(Counter(r.session_id for r in requests)))
        self.ui.queueView.set_requests(requests)
        self._update_pending_display()

    def pending_count(self) -> int:
        """How many requests wait (the queue's rows: the window keeps no other list)."""
        return self.ui.queueView.topLevelItemCount()

    def set_tray_available(self, available: bool) -> None:
        """Without a tray, the title and a status-bar badge show the pending count."""
        self._pending_display.tray_available = available
        self._update_pending_display()

    def _update_pending_display(self) -> None:
        self._pending_display.show_count(self.pending_count())

    def _open_oldest(self) -> None:
        first = self.ui.queueView.first_request_id()
        if first is not None:
            self.open_request_requested.emit(first)

    # -- status ------------------------------------------------------------------------

    def show_status(self, text: str) -> None:
        """Show a short message in the status bar."""
        self.ui.statusBar.showMessage(" ".join(text.split()), STATUS_TIMEOUT_MS)

    def add_status_widget(self, widget: QWidget) -> None:
        """Keep `widget` at the right of the status bar (e.g. the remote hosts' state)."""
        self.ui.statusBar.addPermanentWidget(widget)

    def clear_status(self, text: str) -> None:
        """Take `text` off the status bar if it still shows (a wait that has ended)."""
        if self.ui.statusBar.currentMessage() == " ".join(text.split()):
            self.ui.statusBar.clearMessage()

    # -- new session form --------------------------------------------------------------

    def set_new_session_defaults(self, defaults: SessionOptions) -> None:
        """What the new-session form starts with (from the settings)."""
        self._new_session.defaults = defaults

    def set_scratch_folder(self, make_folder: Callable[[], str] | None) -> None:
        """In demo mode: what makes the fresh scratch folder a new session starts in."""
        self._new_session.scratch_folder = make_folder

    def set_demo_scenarios(self, scenarios: list[str] | None) -> None:
        """Scenario names for the scripted model (None hides the scenario field)."""
        self._new_session.scenarios = scenarios

    @property
    def new_session_dialog(self) -> NewSessionDialog | None:
        """The new-session form while it is open."""
        return self._new_session.dialog

    def open_new_session_form(self) -> NewSessionDialog:
        """Open the new-session form (window-modal, non-blocking) and return it."""
        return self._new_session.open()

    # -- window state and closing ------------------------------------------------------

    def _splitters(self) -> dict[str, QSplitter]:
        ui = self.ui
        return {"main": ui.mainSplitter, "left": ui.leftSplitter, "center": ui.centerSplitter}

    def save_state(self, path: Path) -> None:
        """Remember geometry and splitter positions in `path` (raises OSError)."""
        window_state.save_window_state(path, self, self._splitters())

    def restore_state(self, path: Path) -> bool:
        """Restore what `save_state` wrote, kept on the screen's available area; False
        when there was nothing usable (the default size, fitted to the screen, stays)."""
        restored = window_state.restore_window_state(path, self, self._splitters())
        window_state.fit_to_screen(self)
        return restored

    def request_quit(self) -> None:
        """Quit (emit `quit_requested`); while requests wait, ask first (non-blocking)."""
        waiting = self.pending_count()
        if not waiting:
            self.quit_requested.emit()
            return
        if self._quit_box is not None:
            self._quit_box.raise_()
            return
        self.bring_to_front()

        def closed() -> None:
            self._quit_box = None

        from qoder_desktop.ui.windows.quit_confirm import confirm_quit

        self._quit_box = confirm_quit(self, waiting, self.quit_requested.emit)
        self._quit_box.finished.connect(closed)

    def set_quitting(self, quitting: bool = True) -> None:
        """Let the next close really close the window (the app is quitting)."""
        self._quitting = quitting

    def bring_to_front(self) -> None:
        """Show the window (restored if minimized), raise it and give it focus."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def showEvent(self, event: QShowEvent) -> None:
        """Tell listeners (the tray menu) that the window shows."""
        super().showEvent(event)
        self.visibility_changed.emit(True)

    def hideEvent(self, event: QHideEvent) -> None:
        """Tell listeners (the tray menu) that the window is hidden."""
        super().hideEvent(event)
        self.visibility_changed.emit(False)

    def closeEvent(self, event: QCloseEvent) -> None:
        """With a tray, closing hides the window; without one it asks the app to quit."""
        if self._quitting:
            event.accept()
            return
        event.ignore()
        if self._pending_display.tray_available:
            self.hide()
        else:
            self.request_quit()

