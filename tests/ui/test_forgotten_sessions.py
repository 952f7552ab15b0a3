"""The sessions list of a week on the desk: rows of older ended sessions go, and the
list says how many are no longer listed, with a link to the history that has them."""

from __future__ import annotations

from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from qoder_desktop.agents.ended_sessions import ENDED_SESSIONS_KEPT
from qoder_desktop.domain.models import SessionState
from qoder_desktop.ui.wiring import DesktopApp


def _ended_agent(desktop: DesktopApp, name: str) -> str:
    session_id = desktop.hub.external_session(name).session_id
    desktop.hub.state_changed(session_id, SessionState.STOPPED, None)
    return session_id


def test_the_list_shows_the_sessions_the_hub_keeps_and_says_where_the_rest_are(
        desktop: DesktopApp, qtbot: QtBot) -> None:
    window = desktop.window
    window.show()
    qtbot.waitExposed(window)
    running = desktop.hub.external_session("still running").session_id
    ended = [_ended_agent(desktop, f"agent {n}") for n in range(ENDED_SESSIONS_KEPT)]
    model, note = window.session_pane.model, window.session_pane.forgotten_note
    assert not note.isVisible()  # nothing forgotten yet: nothing to say
    qobjects = len(window.findChildren(QObject))

    window.select_session(ended[0])
    _ended_agent(desktop, "one more")
    assert window.selected_session_id() is None  # the selected one went: nothing selected
    assert window.ui.sessionTitle.text() == "No session selected"
    _ended_agent(desktop, "and another")

    shown = {info.session_id for info in model.sessions()}
    assert shown == {running, *ended[2:]} | {info.session_id for info in desktop.hub.sessions()}
    assert model.rowCount() == 1 + ENDED_SESSIONS_KEPT
    assert model.row_of(ended[0]) is None and model.row_of(ended[1]) is None
    assert note.isVisible()
    # Saying so makes no new objects: a long run's count of live Qt objects stays flat.
    assert len(window.findChildren(QObject)) == qobjects
    assert note.accessibleName() == ("2 older ended sessions are no longer listed here; "
                                     "every request and decision is in View → History.")
    with qtbot.waitSignal(window.history_requested, timeout=2000):
        note.linkActivated.emit("history")
