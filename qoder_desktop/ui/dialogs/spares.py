"""Spare decision dialogs, built while the loop is idle, so a request only fills one in.

Building an approval dialog (its form, JSON editor, inspection views, session-grant
section) and showing it for the first time (style polish of every widget, the native
window, the first layout) was most of the time between a request and its dialog on
screen. `DialogSpares` does that work ahead, one step per loop turn: after start-up,
and again once a dialog taken from it has painted (or closed). A request takes the
spare of its kind and `load()`s it, so the whole request is in the dialog before
`show()`, exactly as in a dialog built for it; with no spare at hand (two requests in a
row) a dialog is built for the request as before. The steps take their turns through
`ui/scheduling.py` (`TurnSteps`); the rebuild waits for the taken dialog's first paint
(`StagedDialog.when_painted`, a `FirstPaint`).

On X11 the approval spare also readies its backing store (`StagedDialog.ready_store`:
the first paint then draws into memory already there) only while no dialog taken from
it is open: with a dialog on screen, a second store ahead would hold as much shared
memory again (~2.3 MB) for a request that has to wait its turn anyway; the store is
made once that dialog closes, or by the next dialog's own first paint.

A spare holds no request: it cannot be shown (`BaseDecisionDialog.setVisible` refuses),
it is filled once and never reused, and a spare whose filling fails is dropped (the
caller fails closed with the message, as for a dialog that could not be built).
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterator
from functools import partial

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from qoder_desktop.diagnostics.memory import return_free_memory
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    PermissionSuggestion,
    RequestKind,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.ui.dialogs import (
    ApprovalDialog,
    BaseDecisionDialog,
    DialogBuildError,
    PlanDialog,
    QuestionDialog,
    dialog_for,
)
from qoder_desktop.ui.scheduling import TurnSteps

log = logging.getLogger(__name__)

SpareBuilder = Callable[[ApprovalRequest | None, QWidget | None], BaseDecisionDialog]
SPARE_KINDS: dict[RequestKind, SpareBuilder] = {
    RequestKind.TOOL: ApprovalDialog,
    RequestKind.QUESTION: QuestionDialog,
    RequestKind.PLAN: PlanDialog,
}
"""The dialog class each kind of request is shown in; one spare of each is kept."""


def warm_up_requests(cwd: str) -> list[ApprovalRequest]:
    """Requests that exercise a dialog's first-time work (fonts, the risk lens, the
    JSON highlighter, markdown): rendered once off screen, never shown or answered."""
    question: dict[str, object] = {"questions": [{
        "question": "Which layout?", "header": "Layout", "multiSelect": False,
        "options": [{"label": "Sidebar", "description": "A list on the left",
                     "preview": "## Sidebar\n\n- fast\n- `code`"},
                    {"label": "Tabs", "description": "One tab per item"}]}]}

    def request(tool_name: str, tool_input: dict[str, object],
                *suggestions: PermissionSuggestion) -> ApprovalRequest:
        return ApprovalRequest(session_id="warm-up", session_name="warm-up",
                               backend=Backend.CLAUDE, tool_name=tool_name,
                               tool_input=tool_input, cwd=cwd, suggestions=suggestions)

    # shaped like the CLI's: a description and its "don't ask again" suggestion
    dont_ask = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(ls:*)"),),
                                    behavior=RuleBehavior.ALLOW, destination="localSettings")
    return [request("Bash", {"command": "ls -la ~/project | grep -v x > out.txt",
                             "description": "List the project"}, dont_ask),
            request("AskUserQuestion", question),
            request("ExitPlanMode", {"plan": "# Plan\n\n1. Read `a.py`\n2. **Fix** the bug"})]


class DialogSpares(QObject):
    """Keeps one spare decision dialog of each kind, built ahead while the loop is idle.

    Nothing is built until `start()`; `take()` works either way (without a spare it
    builds a dialog for the request, as `dialog_for` does).
    """

    def __init__(self, parent_widget: QWidget | None = None) -> None:
        super().__init__()
        self._parent_widget = parent_widget
        self._spares: dict[RequestKind, BaseDecisionDialog] = {}
        self._steps: deque[Callable[[], None]] = deque()
        self._running = False
        self._warm_cwd: str | None = None
        self._turns = TurnSteps(self)
        self._taken: list[BaseDecisionDialog] = []
        """Dialogs taken (filled in or built) that have not finished yet."""

    def start(self, warm_up_cwd: str | None = None) -> None:
        """Begin keeping spares; with `warm_up_cwd`, first render one dialog of each
        kind off screen (and drop it), so the first real one pays no first-time costs."""
        self._running = True
        self._warm_cwd = warm_up_cwd
        self._schedule()

    def stop(self) -> None:
        """Stop building and drop every spare (the app is quitting)."""
        self._running = False
        self._turns.cancel()
        self._steps.clear()
        for spare in self._spares.values():
            spare.deleteLater()
        self._spares.clear()

    def spare(self, kind: RequestKind) -> BaseDecisionDialog | None:
        """The spare kept for `kind` now, if any (for tests and diagnostics)."""
        return self._spares.get(kind)

    def is_idle(self) -> bool:
        """True when no building step is waiting."""
        return not self._steps and not self._turns.is_running()

    def take(self, request: ApprovalRequest, parent: QWidget | None) -> BaseDecisionDialog:
        """The dialog for `request`: the spare of its kind filled in, or a new one.

        Raises:
            DialogBuildError: the request cannot be shown; fail closed with the message.
        """
        self._turns.cancel()  # no building until this dialog has painted (`when_painted`)
        try:
            dialog = self._filled(request, parent)
        except DialogBuildError:
            self._schedule()
            raise
        self._taken.append(dialog)
        dialog.finished.connect(partial(self._taken_finished, dialog))
        if self._running:
            dialog.when_painted(self._schedule)
        return dialog

    def _taken_finished(self, dialog: BaseDecisionDialog, _code: int) -> None:
        """A dialog taken from here closed: with none left open, a spare without its
        backing store readies it now."""
        with contextlib.suppress(ValueError):
            self._taken.remove(dialog)
        self._schedule()

    def _dialog_open(self) -> bool:
        """True while a dialog taken from here is open (not finished)."""
        self._taken = [d for d in self._taken if isValid(d) and not d.is_finished()]
        return bool(self._taken)

    def _filled(self, request: ApprovalRequest, parent: QWidget | None) -> BaseDecisionDialog:
        spare = (self._spares.pop(request.kind, None) if parent is self._parent_widget
                 else None)
        if spare is None:
            return dialog_for(request, parent)
        try:
            spare.load(request)
        except Exception as exc:
            spare.deleteLater()
            raise DialogBuildError(f"Qoder Desktop could not show this request: {exc}") from exc
        return spare

    # -- building, one step per loop turn ------------------------------------------------
    def _schedule(self) -> None:
        """Queue the steps that make the missing spares (once each)."""
        if not self._running:
            return
        if self._warm_cwd is not None:
            for request in warm_up_requests(self._warm_cwd):
                self._steps.append(partial(self._warm, request))
            self._warm_cwd = None
        queued = {getattr(step, "kind", None) for step in self._steps}
        for kind in SPARE_KINDS:
            if kind not in self._spares and kind not in queued:
                build = _Step(kind, self._build)
                self._steps.append(build)
        for kind, spare in self._spares.items():
            if spare.wants_store():
                self._steps.append(partial(self._ready_store, kind, spare))
        if self._steps and not self._turns.is_running():
            self._turns.run(self._building())

    def _building(self) -> Iterator[None]:
        """The queued steps, one per loop turn, while spares are kept; then, in a turn of
        its own, the heap pages that building (and the dialog taken, the warm-up) freed
        go back to the system (`return_free_memory`: ~0.9 MB after a live session's
        first dialog, in ~0.4 ms; glibc would keep them for later allocations)."""
        while self._running and self._steps:
            step = self._steps.popleft()
            try:
                step()
            except Exception:  # a spare is an optimisation: a request builds its own dialog
                log.exception("could not build a spare dialog")
            yield
            if self._running and not self._steps:
                return_free_memory()

    def _build(self, kind: RequestKind) -> None:
        if kind in self._spares:
            return
        spare = (ApprovalDialog(None, self._parent_widget, staged=True)
                 if kind is RequestKind.TOOL else SPARE_KINDS[kind](None, self._parent_widget))
        self._spares[kind] = spare
        self._steps.appendleft(partial(self._ready_store, kind, spare))
        self._steps.appendleft(lambda: self._prepare(kind, spare))
        self._steps.appendleft(lambda: self._build_part(kind, spare))

    def _build_part(self, kind: RequestKind, spare: BaseDecisionDialog) -> None:
        """One more part of a staged spare (a request taking it meanwhile builds the
        rest at once, in `load`)."""
        if self._spares.get(kind) is spare and spare.build_step():
            self._steps.appendleft(lambda: self._build_part(kind, spare))

    def _prepare(self, kind: RequestKind, spare: BaseDecisionDialog) -> None:
        """What the first `show()` would do, minus the showing (`lay_out`), one part per
        loop turn: its longest part alone was the longest wait of a withdrawal or a
        click that came while the spare was prepared."""
        for part in reversed(spare.lay_out_parts()):
            self._steps.appendleft(partial(self._lay_out_part, kind, spare, part))

    def _lay_out_part(self, kind: RequestKind, spare: BaseDecisionDialog,
                      part: Callable[[], object]) -> None:
        if self._spares.get(kind) is spare:  # (not taken meanwhile)
            part()

    def _ready_store(self, kind: RequestKind, spare: BaseDecisionDialog) -> None:
        """The spare's X11 backing store, unless a dialog taken from here is open (its
        `_taken_finished` brings this step back)."""
        if self._spares.get(kind) is spare and not self._dialog_open():
            spare.ready_store()

    def _warm(self, request: ApprovalRequest) -> None:
        dialog = dialog_for(request, self._parent_widget)
        try:
            dialog.grab()
        finally:
            dialog.deleteLater()


class _Step:
    """A building step for one kind of spare (so a kind is queued at most once)."""

    def __init__(self, kind: RequestKind, run: Callable[[RequestKind], None]) -> None:
        self.kind = kind
        self._run = run

    def __call__(self) -> None:
        self._run(self.kind)
