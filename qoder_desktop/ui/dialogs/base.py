"""What every decision dialog shares: its safety life cycle — arming, the input's
origin, exactly-once answer, withdraw — and the request it holds. Staging a spare
(built in parts, laid out while hidden, first paint seen) is `ui/dialogs/staging.py`.

A decision dialog takes a value object (`ApprovalRequest`), shows it, and emits one
`models.Decision` through `decided` (a controller may `await dialog.decision()`). It
never awaits, never touches storage or the broker, and opens with `show()`/`open()`
(never `exec()`, which would nest an event loop under qasync).

Life cycle (qutebrowser's question objects): a dialog ends exactly once, either
*answered* (the user decided: `decided` is emitted, then the dialog closes) or
*withdrawn* (the agent cancelled the request: `withdraw()` closes it and nothing is
emitted). After either, clicks, shortcuts and `close()` do nothing more.

Keys: Escape is the dialog's safe answer (deny / cancel) and, like every decision key
and button, is inert until the arming delay has passed. Closing the window through the
window manager is the same safe answer even before arming — it can never allow anything.

The dialog's Ctrl chords work whatever has focus (`chords.ChordKeeper`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import (
    QCloseEvent,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import QDialog, QLabel, QPushButton, QVBoxLayout, QWidget

from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.dialogs.arming import ArmingGate
from qoder_desktop.ui.dialogs.chords import ChordKeeper
from qoder_desktop.ui.dialogs.input_origin import InputNote, InputOrigin
from qoder_desktop.ui.dialogs.staging import StagedDialog

DIALOG_PROPERTY = "decisionDialog"
"""Dynamic property set on every decision dialog; the app stylesheet (`resources/style.qss`)
scopes the dialogs' look with it (`QDialog[decisionDialog="true"] ...`)."""
HELD_NOTE = "Release {keys} to enable the buttons and keys."
"""What a dialog says while a held key keeps it unarmed (its line is always reserved)."""


class DialogWithdrawn(Exception):
    """The dialog closed without the person's answer (the request was withdrawn or
    answered elsewhere)."""


def button_text(text: str) -> str:
    """Model text made safe for a button/check box/group title: visible, `&` literal."""
    return make_visible(text).replace("&", "&&")


class BaseDecisionDialog(StagedDialog):
    """Base for the approval, question and plan dialogs.

    Subclasses build their widgets in `__init__` (a part of them may be left to
    `build_step()`, see `StagedDialog.build_later`), register their decision buttons with
    `guard()` and their keys with `add_shortcut()`, put the request's content in with
    `_fill()`, and implement `escape_decision()`. A dialog built without a request (a
    spare, see `ui/dialogs/spares.py`) is filled later by `load()`, exactly once, and
    can never be shown before that.

    Signals:
        decided(object): the user's `models.Decision`; emitted at most once.
        shown(): the dialog was shown (for tests and benchmarks).
    """

    decided = Signal(object)
    shown = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._request: ApprovalRequest | None = None
        self._finished = False
        self._withdrawn = False
        self._decision: Decision | None = None
        self._decision_buttons: list[QPushButton] = []
        self._shortcuts: list[QShortcut] = []
        self._chords = ChordKeeper(self, lambda: self._finished)
        self.gate = ArmingGate(self)
        self.gate.set_ready_check(self._ready_to_arm)
        self.gate.armed_changed.connect(self._on_armed_changed)
        self.held_note = QLabel(self)
        """Says which held key keeps the buttons disabled ("Release Ctrl to enable …")."""
        self.held_note.setObjectName("heldKeysNote")
        self.held_note.setTextFormat(Qt.TextFormat.PlainText)
        # Its line is kept while hidden, so the dialog does not jump when it appears.
        self.held_note.setText(HELD_NOTE.format(keys="Ctrl"))
        policy = self.held_note.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.held_note.setSizePolicy(policy)
        self.held_note.hide()
        self.gate.waiting_for_release.connect(self._on_waiting_for_release)
        self.origin = InputOrigin.instance()
        self.input_note = InputNote(self)
        self.setModal(False)
        self.setSizeGripEnabled(True)
        # The look comes from the application stylesheet, scoped by this property: a
        # per-dialog setStyleSheet() would re-parse it and re-polish every child on each
        # dialog built (milliseconds on the request → dialog path).
        self.setProperty(DIALOG_PROPERTY, True)

    @property
    def request(self) -> ApprovalRequest:
        """The request this dialog decides (a spare holds none until `load`)."""
        if self._request is None:
            raise RuntimeError("this decision dialog holds no request yet")
        return self._request

    def is_loaded(self) -> bool:
        """True once the dialog holds its request (and shows all of it)."""
        return self._request is not None

    def load(self, request: ApprovalRequest) -> None:
        """Put `request` in this dialog: all of its content, before it can be shown.

        A dialog shows one request, once: loading a second one raises. When filling in
        fails, the dialog stays unloaded (so it can never be shown) and the error
        propagates; the caller fails closed.
        """
        if self._request is not None or self._finished:
            raise RuntimeError("a decision dialog shows one request, once")
        try:
            self.finish_building()  # a spare taken half-built is completed first
        except BaseException:
            self._finish()
            raise
        self._request = request
        try:
            self._fill(request)
        except BaseException:
            self._request = None
            self._finish()
            raise

    # -- for subclasses --------------------------------------------------------------
    def built(self) -> None:
        """Built: the notes take their place now, so showing does not change the layout."""
        self._place_held_note()

    def _fill(self, request: ApprovalRequest) -> None:
        """Show `request` in the widgets built by `__init__` (subclasses override)."""
        raise NotImplementedError

    def update_request(self, request: ApprovalRequest) -> bool:
        """Show `request`, a newer state of the waiting request (a rule granted meanwhile
        covers it), and start the arming delay again: what the keys answer changed.
        False, and nothing changes, once finished or for another request."""
        held = self._request
        if self._finished or held is None or held.request_id != request.request_id:
            return False
        self._request = request
        self._refill(request)
        self.gate.start()
        return True

    def _refill(self, request: ApprovalRequest) -> None:
        """Show what changed in a newer state of the request (subclasses override)."""

    def guard(self, button: QPushButton, slot: Callable[[], None],
              condition: Callable[[], bool] | None = None, *,
              approves: bool = False) -> None:
        """Make `button` a decision button: inert until armed (and `condition()`); an
        `approves` one counts no injected click or key (see `input_origin`)."""
        button.setAutoDefault(False)
        button.setDefault(False)
        self._decision_buttons.append(button)
        self.gate.guard(button, condition)
        button.clicked.connect(lambda: self.run_armed(slot, approves=approves))

    def add_shortcut(self, keys: Sequence[str], slot: Callable[[], None], *,
                     armed: bool = True, approves: bool = False) -> list[QShortcut]:
        """Bind key sequences to `slot`; with `armed`, they do nothing before arming;
        `approves` keys count only from a keyboard (see `guard`)."""
        created = []
        for key in keys:
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.setAutoRepeat(False)
            self._chords.add(QKeySequence(key))
            if armed:
                shortcut.activated.connect(lambda s=slot: self.run_armed(s, approves=approves))
                shortcut.setEnabled(False)
                self._shortcuts.append(shortcut)
            else:
                shortcut.activated.connect(slot)
            created.append(shortcut)
        return created

    def run_armed(self, slot: Callable[[], None], *, approves: bool = False) -> None:
        """Call `slot` only when armed and not finished; when it `approves`, only for a
        key or click from a keyboard or mouse (the dialog says why it ignored one)."""
        if self.gate.is_armed() and not self._finished and (
                not approves or self.input_note.allows(self.origin.check(self))):
            slot()

    @Slot()
    def refresh_buttons(self) -> None:
        """Re-evaluate the decision buttons' enabled state (after a validity change)."""
        if not self._finished:
            self.gate.refresh()

    def emit_decision(self, decision: Decision) -> bool:
        """Emit `decision` (once) and close. Returns False when already finished."""
        if self._finished:
            return False
        self._finish()
        self._decision = decision
        self.decided.emit(decision)
        code = QDialog.DialogCode.Accepted if decision.kind.allows else QDialog.DialogCode.Rejected
        self.done(code.value)
        return True

    def escape_decision(self) -> Decision:
        """The safe answer for Escape and closing the window (subclasses override)."""
        return Decision.deny("The user closed the dialog.")

    # -- public API ------------------------------------------------------------------
    async def decision(self) -> Decision:
        """Wait for the person's answer: `answer = await dialog.decision()` (qtrio
        style, as `ui/windows/confirm.py`'s `Confirmation`). For controllers: a view
        never awaits. Cancelling the wait closes the dialog (as a withdrawal).

        Raises:
            DialogWithdrawn: the dialog closed without an answer.
        """
        answer = self._decision
        if not self._finished:
            answered: asyncio.Future[Decision | None] = (
                asyncio.get_running_loop().create_future())

            def settle(decision: object = None) -> None:
                if not answered.done():
                    answered.set_result(decision if isinstance(decision, Decision) else None)

            self.decided.connect(settle)
            self.finished.connect(lambda _code: settle())
            try:
                answer = await answered  # (the dialog may be deleted once this returns)
            except asyncio.CancelledError:
                self.withdraw()
                raise
        if answer is None:
            raise DialogWithdrawn("the decision dialog closed without an answer")
        return answer

    def is_armed(self) -> bool:
        """True once the arming delay has passed since the dialog was shown."""
        return self.gate.is_armed()

    def is_finished(self) -> bool:
        """True after a decision was emitted or the request was withdrawn."""
        return self._finished

    def is_withdrawn(self) -> bool:
        """True after `withdraw()`."""
        return self._withdrawn

    def withdraw(self) -> None:
        """The agent withdrew the request: close at once and emit nothing, ever."""
        if self._finished:
            return
        self._withdrawn = True
        self._finish()
        self.done(QDialog.DialogCode.Rejected.value)

    # -- Qt overrides ----------------------------------------------------------------
    def setVisible(self, visible: bool) -> None:
        """A dialog without its request (an unfilled spare) is never shown."""
        if visible and self._request is None:
            raise RuntimeError("a decision dialog is never shown without its request")
        super().setVisible(visible)

    def showEvent(self, event: QShowEvent) -> None:
        """Start the arming delay and announce `shown`."""
        super().showEvent(event)
        if not self._finished:
            self._place_held_note()
            self.origin.attach(self, self.input_note.tell, after=self.when_painted)
            self.input_note.warn(self.origin.unchecked_note())
            self.gate.start()
            self.focus_safe_choice()
            self._chords.follow_focus()
        self.shown.emit()

    def content_complete(self) -> bool:
        """True when everything the person must see is in the dialog (the gate arms only
        then); subclasses with content worked out over loop turns override it."""
        return True

    def _ready_to_arm(self) -> bool:
        """Everything is in the dialog, and approving input can be judged (on X11 the
        input check starts after the first frame: `InputOrigin.attach`)."""
        return self.origin.is_checking() and self.content_complete()

    def focus_safe_choice(self) -> None:
        """Put keyboard focus on the safe choice (subclasses override)."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Escape gives the safe answer once armed; plain Return never clicks anything."""
        key = event.key()
        if key == Qt.Key.Key_Escape and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            event.accept()
            self.run_armed(self._escape)
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            event.accept()
            return
        super().keyPressEvent(event)

    def done(self, result: int) -> None:
        """Stop watching the focus (and the input's origin) once closed."""
        self._chords.stop()
        self.origin.detach(self)
        super().done(result)

    def reject(self) -> None:
        """Closing the window (or any other reject) is the safe answer, exactly once."""
        if not self._finished:
            self.emit_decision(self.escape_decision())
        else:
            super().reject()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing counts as the safe answer (see `reject`)."""
        if not self._finished:
            self.emit_decision(self.escape_decision())
        event.accept()

    # -- internals -------------------------------------------------------------------
    def _escape(self) -> None:
        self.emit_decision(self.escape_decision())

    def _place_held_note(self) -> None:
        """Put the held-key and input notes above the button row (the layout's last item)."""
        layout = self.layout()
        for note in (self.held_note, self.input_note):
            if isinstance(layout, QVBoxLayout) and layout.indexOf(note) < 0:
                layout.insertWidget(max(layout.count() - 1, 0), note)

    def _on_waiting_for_release(self, keys: str) -> None:
        if keys and not self._finished:
            self.held_note.setText(HELD_NOTE.format(keys=keys))
            self.held_note.show()
        else:
            self.held_note.hide()

    def _finish(self) -> None:
        self._finished = True
        self.gate.disarm()
        # (the ready check refers back to this dialog: let go, it is freed by reference
        # counts, not in a batch of the garbage collector's on the loop)
        self.gate.set_ready_check(_never_ready)
        for button in self._decision_buttons:
            button.setEnabled(False)
        for shortcut in self._shortcuts:
            shortcut.setEnabled(False)

    def _on_armed_changed(self, armed: bool) -> None:
        for shortcut in self._shortcuts:
            shortcut.setEnabled(armed and not self._finished)


def _never_ready() -> bool:
    """The ready check of a finished dialog's gate: it never arms again."""
    return False
