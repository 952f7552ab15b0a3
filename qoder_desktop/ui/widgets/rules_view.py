"""The selected session's rules, each with a Revoke button where revoking can reach the
agent, and for each revoked rule whether the agent has been told yet."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui  # (colour classes are built with the first rule, after the frame)
from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import QHeaderView, QPushButton, QTreeWidget, QTreeWidgetItem, QWidget

from qoder_desktop.domain.kinds import RuleBehavior
from qoder_desktop.domain.revocation import RevokeReach
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.plain_text import tooltip
from qoder_desktop.ui.qt_numbers import TAB_FOCUS, USER_ROLE

if TYPE_CHECKING:  # pydantic and the models load after the first paint
    from collections.abc import Callable
    from datetime import datetime

    from qoder_desktop.domain.models import SessionRule

RULE_ID_ROLE = USER_ROLE + 1
COL_RULE, COL_BEHAVIOR, COL_GRANTED, COL_ACTION = range(4)

_BEHAVIOR_COLORS = {RuleBehavior.ALLOW: "#2B8A3E", RuleBehavior.DENY: "#C92A2A",
                    RuleBehavior.ASK: "#E8590C"}

ON_ITS_WAY = "Revoked — reaches the agent with the next request you allow"
ON_ITS_WAY_TIP = ("Until then the agent still holds this rule and runs matching calls "
                  "without asking: its CLI can only be told inside an answer to one of its "
                  "requests, and only in an allow.")
ASKS_AGAIN = "Revoked — matching calls ask again"
ASKS_AGAIN_TIP = ("The next matching call asks you again; the agent drops the rule itself "
                  "with the next request you allow.")
DELIVERED = "Revoked — the agent dropped it"
CANNOT_REVOKE = ("This session has ended: its agent is gone, and the rules it held with "
                 "it. Nothing is left to revoke.")


def local_now() -> datetime:
    """The local date and time now."""
    return _datetime_now()().astimezone()


@functools.cache
def _datetime_now() -> Callable[[], datetime]:
    """`datetime.now`, imported with the first row that shows a time (before the main
    window's first frame `datetime` cost ~1.3 ms) and kept: an ``import`` run at each
    call goes through PySide6's import hook (~4 µs), and a queue of a thousand rows asks
    for the time at each of them."""
    from datetime import datetime

    return datetime.now


def format_time(moment: datetime) -> str:
    """`moment` in local time: the time of day if it is today, else the date and time."""
    local = moment.astimezone()
    if local.date() == local_now().date():
        return local.strftime("%H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


class RulesView(QTreeWidget):
    """A list of session rules: rule text, behaviour, when and by whom, and Revoke.

    Active rules come first; revoked ones stay visible, greyed, marked "Revoked" and
    whether the agent was told yet. Revoke is offered only where it can reach the agent
    (`RevokeReach`); elsewhere the button is disabled and says why.

    Signals:
        revoke_requested(str): the person clicked Revoke on the rule with this id.
    """

    revoke_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rulesView")
        self.setColumnCount(4)
        self.setHeaderLabels(["Rule", "Effect", "Granted", ""])
        self.setRootIsDecorated(False)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QTreeWidget.SelectionMode.NoSelection)
        self.setProperty("focusPolicy", TAB_FOCUS)  # (`qt_numbers`: no `Qt` namespace yet)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_RULE, QHeaderView.ResizeMode.Stretch)
        for column in (COL_BEHAVIOR, COL_GRANTED, COL_ACTION):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self._buttons: dict[str, QPushButton] = {}
        self._rules: list[SessionRule] = []
        self._reach = RevokeReach.NEXT_CALL

    @property
    def reach(self) -> RevokeReach:
        """What revoking a rule of the shown session does."""
        return self._reach

    def set_reach(self, reach: RevokeReach) -> None:
        """Say what revoking does in the shown session (its kind and state)."""
        if reach is not self._reach:
            self._reach = reach
            self.set_rules(self._rules)

    def set_rules(self, rules: list[SessionRule]) -> None:
        """Show `rules` (active first, each group newest first)."""
        self.clear()
        self._buttons.clear()
        self._rules = list(rules)
        ordered = sorted(rules, key=lambda r: r.granted_at, reverse=True)
        ordered.sort(key=lambda r: not r.active)
        for rule in ordered:
            self._add(rule)

    def revoke_button(self, rule_id: str) -> QPushButton | None:
        """The Revoke button of an active rule (None for unknown or revoked rules)."""
        return self._buttons.get(rule_id)

    def item_for(self, rule_id: str) -> QTreeWidgetItem | None:
        """The row showing `rule_id`, or None."""
        for row in range(self.topLevelItemCount()):
            item = self.topLevelItem(row)
            if item is not None and item.data(COL_RULE, RULE_ID_ROLE) == rule_id:
                return item
        return None

    def _add(self, rule: SessionRule) -> None:
        granted = f"{format_time(rule.granted_at)} by {rule.granted_by}"
        item = QTreeWidgetItem([make_visible(str(rule.rule)), rule.behavior.value,
                                make_visible(granted), ""])
        item.setData(COL_RULE, RULE_ID_ROLE, rule.rule_id)
        item.setSizeHint(COL_RULE, QSize(0, 26))
        item.setToolTip(COL_RULE, tooltip(rule.rule))
        self.addTopLevelItem(item)
        if rule.active:
            color = QtGui.QColor(_BEHAVIOR_COLORS.get(rule.behavior, "#495057"))
            item.setForeground(COL_BEHAVIOR, QtGui.QBrush(color))
            button = QPushButton("Revoke")
            button.setObjectName("revokeButton")
            button.setAccessibleName(f"Revoke {make_visible(str(rule.rule))}")
            button.setAccessibleDescription(
                f"Stop the rule {make_visible(str(rule.rule))} from answering for this session")
            if self._reach is RevokeReach.NONE:
                button.setEnabled(False)
                button.setToolTip(CANNOT_REVOKE)
                item.setToolTip(COL_ACTION, CANNOT_REVOKE)
            else:
                button.setToolTip(tooltip(f"Stop {rule.rule} from answering for this session"))
            button.setCursor(QtCore.Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(
                lambda _=False, rid=rule.rule_id: self.revoke_requested.emit(rid))
            self._buttons[rule.rule_id] = button
            hint = button.sizeHint()
            button.setMaximumWidth(hint.width())  # not stretched by a long status beside it
            item.setSizeHint(COL_ACTION, QSize(hint.width() + 8, hint.height() + 2))
            self.setItemWidget(item, COL_ACTION, button)
            return
        text, detail = self._revoked_text(rule)
        item.setText(COL_ACTION, text)
        revoked_at = rule.revoked_at
        if revoked_at is not None:
            detail = f"Revoked {format_time(revoked_at)}. {detail}".strip()
        item.setToolTip(COL_ACTION, detail)
        palette = QtGui.QPalette
        grey = QtGui.QBrush(self.palette().color(palette.ColorGroup.Disabled,
                                                 palette.ColorRole.Text))
        font = item.font(COL_RULE)
        font.setStrikeOut(True)
        item.setFont(COL_RULE, font)
        for column in range(self.columnCount()):
            item.setForeground(column, grey)
        if text in (ON_ITS_WAY, ASKS_AGAIN):  # the agent may still hold it: not greyed out
            ask = QtGui.QColor(_BEHAVIOR_COLORS[RuleBehavior.ASK])
            item.setForeground(COL_ACTION, QtGui.QBrush(ask))


    def _revoked_text(self, rule: SessionRule) -> tuple[str, str]:
        """What a revoked rule's action column says, and its tooltip."""
        delivered = rule.removal_delivered_at
        if delivered is not None:
            return DELIVERED, f"Its removal reached the agent {format_time(delivered)}."
        if not rule.removal_pending or self._reach is RevokeReach.NONE:
            return "Revoked", ""
        if self._reach is RevokeReach.NEXT_CALL:
            return ASKS_AGAIN, ASKS_AGAIN_TIP
        return ON_ITS_WAY, ON_ITS_WAY_TIP
