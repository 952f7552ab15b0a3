"""Decision dialogs and the factory that picks one for a request.

`dialog_for(request)` builds the dialog for `request.kind`. If building fails (for
example a malformed AskUserQuestion input), it raises `DialogBuildError` whose message
says why; the caller must then fail closed, i.e. answer the request with a deny (or
`Decision.error`) carrying that message, never with an allow.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from qoder_desktop.domain.models import ApprovalRequest, RequestKind
from qoder_desktop.ui.dialogs.approval import ApprovalDialog
from qoder_desktop.ui.dialogs.base import BaseDecisionDialog
from qoder_desktop.ui.dialogs.plan import PlanDialog
from qoder_desktop.ui.dialogs.question import QuestionDialog

__all__ = ["ApprovalDialog", "BaseDecisionDialog", "DialogBuildError", "PlanDialog",
           "QuestionDialog", "dialog_for"]


class DialogBuildError(Exception):
    """No dialog could be built for a request; the message is fit for a deny."""


def dialog_for(request: ApprovalRequest, parent: QWidget | None = None) -> BaseDecisionDialog:
    """The dialog for `request`, chosen by `request.kind` (not yet shown).

    Raises:
        DialogBuildError: when the dialog cannot be built; fail closed with its message.
    """
    try:
        if request.kind is RequestKind.QUESTION:
            return QuestionDialog(request, parent)
        if request.kind is RequestKind.PLAN:
            return PlanDialog(request, parent)
        return ApprovalDialog(request, parent)
    except Exception as exc:
        raise DialogBuildError(f"Qoder Desktop could not show this request: {exc}") from exc
