"""The form that starts a session: every `SessionOptions` field, checked before it goes."""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QWidget

from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.models import Backend, PermissionMode
from qoder_desktop.domain.session_options import SessionOptions, SettingSource
from qoder_desktop.ui.forms.ui_new_session_dialog import Ui_NewSessionDialog
from qoder_desktop.ui.widgets import pickers
from qoder_desktop.ui.widgets.session_list import BACKEND_LABELS
from qoder_desktop.ui.windows import confirm


def _parse_json_object(text: str, what: str) -> dict[str, Any] | None:
    """None for blank text; raises ValueError naming `what` for anything but an object."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object")
    return value


class NewSessionDialog(QDialog):
    """Collects `SessionOptions` for a new session; opened with `open()`, never `exec()`.

    Options that let tools run unapproved (`SessionOptions.risks`) need the person's
    explicit confirmation (asked without blocking) before anything is emitted; the
    emitted options then carry the `ModeConsent` the confirmation box minted.

    Signals:
        submitted(SessionOptions): the person started the session with these options.
    """

    submitted = Signal(object)

    def __init__(self, parent: QWidget | None = None, *,
                 defaults: SessionOptions | None = None,
                 scenarios: list[str] | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_NewSessionDialog()
        self.ui.setupUi(self)
        ui = self.ui
        for backend in Backend:
            if backend not in (Backend.EXTERNAL, Backend.TERMINAL):
                ui.backendCombo.addItem(BACKEND_LABELS[backend], backend.value)
        for mode in PermissionMode:
            ui.modeCombo.addItem(mode.label, mode.value)
        demo = scenarios is not None
        ui.scenarioLabel.setVisible(demo)
        ui.scenarioCombo.setVisible(demo)
        ui.scenarioCombo.addItems(scenarios or [])
        ok = ui.buttonBox.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("&Start session")
        ok.setObjectName("startButton")
        ui.errorLabel.setObjectName("formError")
        ui.errorLabel.hide()
        ui.buttonBox.accepted.connect(self.submit)
        ui.buttonBox.rejected.connect(self.reject)
        ui.browseCwdButton.clicked.connect(self._browse_cwd)
        ui.addDirButton.clicked.connect(self._add_dir)
        ui.removeDirButton.clicked.connect(self._remove_dir)
        ui.addDirsList.currentRowChanged.connect(
            lambda row: ui.removeDirButton.setEnabled(row >= 0))
        ui.limitToolsCheck.toggled.connect(ui.toolsEdit.setEnabled)
        ok.setToolTip("Start the session (Ctrl+Return)")
        ok.setAccessibleDescription("Start the session with these options (Ctrl+Return)")
        ui.buttonBox.button(QDialogButtonBox.StandardButton.Cancel).setAccessibleDescription(
            "Close the form without starting a session")
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self, self.submit,
                      context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._confirming = False
        self.load(defaults or SessionOptions())
        ui.tabs.setCurrentWidget(ui.generalTab)
        ui.promptEdit.setFocus(Qt.FocusReason.OtherFocusReason)  # type at once

    # -- filling in --------------------------------------------------------------------

    def load(self, options: SessionOptions) -> None:
        """Fill every field from `options`."""
        ui = self.ui
        ui.backendCombo.setCurrentIndex(max(0, ui.backendCombo.findData(options.backend.value)))
        ui.nameEdit.setText(options.name)
        ui.cwdEdit.setText(options.cwd)
        ui.promptEdit.setPlainText(options.prompt)
        ui.modeCombo.setCurrentIndex(max(0, ui.modeCombo.findData(options.permission_mode.value)))
        ui.modelEdit.setText(options.model or "")
        if options.scenario:
            ui.scenarioCombo.setCurrentText(options.scenario)
        ui.limitToolsCheck.setChecked(options.tools is not None)
        ui.toolsEdit.setText(pickers.join_list(options.tools))
        ui.allowedEdit.setText(pickers.join_list(options.allowed_tools))
        ui.disallowedEdit.setText(pickers.join_list(options.disallowed_tools))
        ui.addDirsList.clear()
        ui.addDirsList.addItems(options.add_dirs)
        sources = set(options.setting_sources)
        ui.userSourceCheck.setChecked(SettingSource.USER in sources)
        ui.projectSourceCheck.setChecked(SettingSource.PROJECT in sources)
        ui.localSourceCheck.setChecked(SettingSource.LOCAL in sources)
        ui.mcpEdit.setPlainText(json.dumps(options.mcp_servers, indent=2)
                                if options.mcp_servers else "")
        ui.permissionsEdit.setPlainText(json.dumps(options.settings_permissions, indent=2)
                                        if options.settings_permissions else "")

    def _browse_cwd(self) -> None:
        pickers.pick_folder(self, "Choose the session's folder", self.ui.cwdEdit.setText,
                            self.ui.cwdEdit.text())

    def _add_dir(self) -> None:
        def add(path: str) -> None:
            if not self.ui.addDirsList.findItems(path, Qt.MatchFlag.MatchExactly):
                self.ui.addDirsList.addItem(path)

        pickers.pick_folder(self, "Allow access to another folder", add,
                            self.ui.cwdEdit.text())

    def _remove_dir(self) -> None:
        row = self.ui.addDirsList.currentRow()
        if row >= 0:
            self.ui.addDirsList.takeItem(row)

    # -- reading back ------------------------------------------------------------------

    def options(self, *, consent: ModeConsent | None = None) -> SessionOptions:
        """The options as filled in (with the person's `consent` to their risks, if any).

        Raises:
            ValueError: a field is invalid (the message says which, in plain words).
        """
        ui = self.ui
        cwd = os.path.expanduser(ui.cwdEdit.text().strip())
        if not cwd:
            raise ValueError("Choose the folder the agent works in.")
        if not os.path.isdir(cwd):
            raise ValueError(f"The folder {cwd} does not exist.")
        sources = [source for source, box in ((SettingSource.USER, ui.userSourceCheck),
                                              (SettingSource.PROJECT, ui.projectSourceCheck),
                                              (SettingSource.LOCAL, ui.localSourceCheck))
                   if box.isChecked()]
        mcp = _parse_json_object(ui.mcpEdit.toPlainText(), "MCP servers") or {}
        permissions = _parse_json_object(ui.permissionsEdit.toPlainText(),
                                         "Permission settings")
        try:
            return SessionOptions(
                backend=Backend(ui.backendCombo.currentData()),
                prompt=ui.promptEdit.toPlainText().strip(),
                name=ui.nameEdit.text().strip(),
                cwd=os.path.abspath(cwd),
                add_dirs=[ui.addDirsList.item(i).text() for i in range(ui.addDirsList.count())],
                tools=(pickers.split_list(ui.toolsEdit.text())
                       if ui.limitToolsCheck.isChecked() else None),
                allowed_tools=pickers.split_list(ui.allowedEdit.text()),
                disallowed_tools=pickers.split_list(ui.disallowedEdit.text()),
                permission_mode=self.chosen_mode(),
                consent=consent,
                model=ui.modelEdit.text().strip() or None,
                settings_permissions=permissions,
                setting_sources=sources,
                mcp_servers=mcp,
                scenario=(ui.scenarioCombo.currentText() or None)
                if ui.scenarioCombo.isVisibleTo(self) else None,
            )
        except ValidationError as exc:
            raise ValueError("; ".join(err["msg"] for err in exc.errors())) from None

    def chosen_mode(self) -> PermissionMode:
        """The permission mode selected in the form."""
        return PermissionMode(self.ui.modeCombo.currentData())

    def submit(self) -> None:
        """Check the form; for a bypass mode ask first; then emit `submitted` and close."""
        if self._confirming:
            return
        mode = self.chosen_mode()
        try:
            risks = self.options().risks()
        except ValueError as exc:
            self._show_error(str(exc))
            return
        self._show_error("")
        if not risks:
            self._finish(None)
            return
        self._confirming = True
        if mode.needs_confirmation and len(risks) == 1:
            confirm.confirm_dangerous_mode(self, mode, self._confirmed, risks=risks)
        else:
            confirm.confirm_risky_options(self, risks, mode, self._confirmed)

    def _confirmed(self, consent: ModeConsent | None) -> None:
        self._confirming = False
        if consent is not None:
            self._finish(consent)
        else:
            self._show_error("The session was not started: choose options that ask "
                             "before tools run, or confirm them.")

    def _finish(self, consent: ModeConsent | None) -> None:
        try:
            options = self.options(consent=consent)
        except ValueError as exc:
            self._show_error(str(exc))
            return
        self.submitted.emit(options)
        self.accept()

    def _show_error(self, text: str) -> None:
        self.ui.errorLabel.setText(text)
        self.ui.errorLabel.setVisible(bool(text))
