"""What the rules pane says about revoking: offered only where it can reach the agent,
and for each revoked rule whether the agent has been told yet (offscreen)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from datetime import timedelta

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import (
    Backend,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
    utc_now,
)
from qoder_desktop.ui.widgets.rules_view import (
    ASKS_AGAIN,
    CANNOT_REVOKE,
    COL_ACTION,
    DELIVERED,
    ON_ITS_WAY,
)
from qoder_desktop.ui.windows.main_window import MainWindow


def _session(backend: Backend, state: SessionState = SessionState.RUNNING) -> SessionInfo:
    return SessionInfo(name=f"{backend.value} session", backend=backend, cwd="/work/p",
                       state=state)


def _rules(info: SessionInfo) -> tuple[SessionRule, SessionRule, SessionRule]:
    now = utc_now()
    active = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                         rule=RuleValue.parse("Bash(npm test:*)"))
    on_its_way = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                             rule=RuleValue.parse("Bash(touch marker.txt)"), revoked_at=now)
    delivered = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                            rule=RuleValue.parse("Edit"), revoked_at=now - timedelta(minutes=2),
                            removal_delivered_at=now - timedelta(minutes=1))
    return active, on_its_way, delivered


def _action(window: MainWindow, rule: SessionRule) -> tuple[str, str]:
    item = window.ui.rulesView.item_for(rule.rule_id)
    assert item is not None
    return item.text(COL_ACTION), item.toolTip(COL_ACTION)


def test_a_terminal_session_says_a_revocation_is_on_its_way_until_delivered(
        window: MainWindow, qtbot: QtBot) -> None:
    info = _session(Backend.TERMINAL)
    window.set_sessions([info])
    active, on_its_way, delivered = _rules(info)
    window.set_rules(info.session_id, [active, on_its_way, delivered])
    text, tip = _action(window, on_its_way)
    assert text == ON_ITS_WAY
    assert "still holds this rule" in tip and "only in an allow" in tip
    text, tip = _action(window, delivered)
    assert text == DELIVERED and "reached the agent" in tip
    view = window.ui.rulesView
    waiting_item, done_item = view.item_for(on_its_way.rule_id), view.item_for(delivered.rule_id)
    assert waiting_item is not None and done_item is not None
    # The agent still holds the rule on its way: that line is not greyed out like the rest.
    assert (waiting_item.foreground(COL_ACTION).color()
            != done_item.foreground(COL_ACTION).color())
    button = window.ui.rulesView.revoke_button(active.rule_id)
    assert button is not None and button.isEnabled()
    with qtbot.waitSignal(window.revoke_requested) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert blocker.args == [active.rule_id]
    # The hub publishes the rules again once an answer carried the removal.
    window.set_rules(info.session_id, [active, on_its_way.model_copy(
        update={"removal_delivered_at": utc_now()}), delivered])
    assert _action(window, on_its_way)[0] == DELIVERED


def test_a_gateway_session_waits_for_its_next_allow_too(window: MainWindow) -> None:
    info = _session(Backend.EXTERNAL)
    window.set_sessions([info])
    _active, on_its_way, _delivered = _rules(info)
    window.set_rules(info.session_id, [on_its_way])
    assert _action(window, on_its_way)[0] == ON_ITS_WAY


def test_an_in_app_session_asks_again_at_once(window: MainWindow) -> None:
    info = _session(Backend.CLAUDE)
    window.set_sessions([info])
    _active, on_its_way, _delivered = _rules(info)
    window.set_rules(info.session_id, [on_its_way])
    text, tip = _action(window, on_its_way)
    assert text == ASKS_AGAIN and "asks you again" in tip


def test_an_ended_session_offers_no_revoke_and_says_why(window: MainWindow,
                                                       qtbot: QtBot) -> None:
    info = _session(Backend.QODER)
    window.set_sessions([info])
    active, on_its_way, _delivered = _rules(info)
    window.set_rules(info.session_id, [active, on_its_way])
    button = window.ui.rulesView.revoke_button(active.rule_id)
    assert button is not None and button.isEnabled()
    window.update_session(info.model_copy(update={"state": SessionState.STOPPED}))
    button = window.ui.rulesView.revoke_button(active.rule_id)
    assert button is not None and not button.isEnabled()
    assert button.toolTip() == CANNOT_REVOKE
    with qtbot.assertNotEmitted(window.revoke_requested):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert _action(window, on_its_way)[0] == "Revoked"  # nothing is on its way any more
