"""The main window's new-session form: what it starts with and the one open copy of it.

`NewSessionOpener` keeps the form's defaults (from the settings), the demo's scenario
names and scratch folder, and opens the form (`windows.new_session_form`, with its
pydantic model) when the person asks for it; the window itself is built and painted
without that module, which start-up loads right after the first paint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6 import QtCore  # (`Qt` is taken when first used: after the first frame)
from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:  # pydantic and the form load after the first paint
    from qoder_desktop.domain.session_options import SessionOptions
    from qoder_desktop.ui.windows.new_session_form import NewSessionDialog


class NewSessionOpener:
    """Opens the new-session form over `parent` (one at a time), filled in with the
    defaults; a submitted form is passed on to `submitted`."""

    def __init__(self, parent: QWidget, submitted: SignalInstance,
                 scenarios: list[str] | None = None) -> None:
        self._parent = parent
        self._submitted = submitted
        self.defaults: SessionOptions | None = None
        """What the form starts with; None: the options' own defaults."""
        self.scenarios = scenarios
        """Scenario names for the scripted model (None hides the scenario field)."""
        self.scratch_folder: Callable[[], str] | None = None
        """In demo mode: what makes the fresh scratch folder a new session starts in."""
        self.dialog: NewSessionDialog | None = None
        """The form while it is open."""

    def open(self) -> NewSessionDialog:
        """Open the form (window-modal, non-blocking), or raise the open one; returns it."""
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            return self.dialog
        from qoder_desktop.domain.session_options import SessionOptions
        from qoder_desktop.ui.windows.new_session_form import NewSessionDialog

        defaults = self.defaults if self.defaults is not None else SessionOptions()
        if self.scratch_folder is not None:
            defaults = defaults.model_copy(update={"cwd": self.scratch_folder()})
        dialog = NewSessionDialog(self._parent, defaults=defaults, scenarios=self.scenarios)
        dialog.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.submitted.connect(self._submitted)
        dialog.destroyed.connect(self._closed)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _closed(self) -> None:
        self.dialog = None
