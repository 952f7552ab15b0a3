"""The selected session's permission mode, as a toolbar combo box and a menu."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QComboBox, QMenu, QWidget

from qoder_desktop.domain.kinds import PermissionMode

if TYPE_CHECKING:  # the confirmation loads when first needed, after the first frame
    from qoder_desktop.domain.consent import ModeConsent

MODE_TIP = "The selected session's permission mode"


class ModeSwitcher(QObject):
    """Lets the person switch the selected session's mode; bypass modes need confirming.

    The combo box and the menu always show the session's actual mode, as the hub
    published it (`set_session`): a pick puts them back at once, and a switch shows
    only once the app reports it; a switch that fails leaves the mode the session has.

    Signals:
        mode_requested(str, PermissionMode, object): switch this session to this mode;
            for a mode that needs a confirmation, the third argument is the
            `ModeConsent` the confirmation dialog minted (else None).
    """

    mode_requested = Signal(str, object, object)

    def __init__(self, window: QWidget, menu: QMenu) -> None:
        super().__init__(window)
        self._window = window
        self._session_id: str | None = None
        self._mode = PermissionMode.DEFAULT
        self.combo = QComboBox(window)
        self.combo.setObjectName("modeCombo")
        self.combo.setToolTip(MODE_TIP)
        self.menu = menu.addMenu("Permission &mode")
        self._group = QActionGroup(self)
        self._actions: dict[PermissionMode, QAction] = {}
        for mode in PermissionMode:
            self.combo.addItem(mode.value, mode.value)
            action = self.menu.addAction(mode.value)
            action.setCheckable(True)
            action.triggered.connect(lambda _=False, m=mode: self._chosen(m))
            self._group.addAction(action)
            self._actions[mode] = action
        self.combo.activated.connect(
            lambda index: self._chosen(PermissionMode(self.combo.itemData(index))))
        self.set_session(None, PermissionMode.DEFAULT)

    def set_session(self, session_id: str | None, mode: PermissionMode,
                    enabled: bool = True, why_not: str | None = None) -> None:
        """Show `mode` as the mode of `session_id` (None: no session, disabled);
        `why_not` says why the mode cannot be switched from here (the tooltip)."""
        self._session_id = session_id
        self._mode = mode
        self._show(mode)
        usable = session_id is not None and enabled and why_not is None
        self.combo.setEnabled(usable)
        self.menu.setEnabled(usable)
        self.combo.setToolTip(why_not or MODE_TIP)
        self.menu.setToolTip(why_not or "")

    def _show(self, mode: PermissionMode) -> None:
        self.combo.setCurrentIndex(self.combo.findData(mode.value))
        self._actions[mode].setChecked(True)

    def _chosen(self, mode: PermissionMode) -> None:
        session_id = self._session_id
        if session_id is None or mode is self._mode:
            self._show(self._mode)
            return
        if not mode.needs_confirmation:
            self._show(self._mode)  # the session's mode until the app reports the switch
            self.mode_requested.emit(session_id, mode, None)
            return

        def answered(consent: ModeConsent | None) -> None:
            if self._session_id == session_id:
                self._show(self._mode)  # declined, or shown once the app reports it
            if consent is not None:
                self.mode_requested.emit(session_id, mode, consent)

        from qoder_desktop.ui.windows import confirm

        confirm.confirm_dangerous_mode(self._window, mode, answered, session_id=session_id)
