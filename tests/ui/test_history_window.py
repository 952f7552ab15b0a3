"""The decision history window on the app's wiring (qasync loop, offscreen): opened from
View → History and the tray, paged over a large ledger, filtered, counted, a row opened
whole, the view exported, and a rule revoked from the row that ran under it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.loop import run, settle
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from benchmarks.ledger_rows import GRANT, MARKER, fill_ledger
from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecisionKind,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.history import PAGE_SIZE
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.widgets.rules_view import ASKS_AGAIN, COL_ACTION
from qoder_desktop.ui.windows.history_window import COLUMNS, HistoryWindow
from qoder_desktop.ui.wiring import DesktopApp

ROWS = 3000


def _app(db: Database, tmp_path: Path, qtbot: QtBot) -> DesktopApp:
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)

    def no_sessions(*_args: Any) -> Any:
        raise AssertionError("these tests start no agent")

    hub = SessionHub(db, ledger, broker, no_sessions)
    app = DesktopApp(broker, hub, SecretStore(), Settings(), tmp_path / "settings.json",
                     ledger_path=db.path)
    qtbot.addWidget(app.window)
    return app


def _close(app: DesktopApp) -> None:
    app.history.close()
    app.dialogs.close_all()
    app.bridge.unsubscribe()
    app.hub.close()
    app.tray.dispose()


@pytest.fixture
def big_app(tmp_path: Path, loop: AppEventLoop, qtbot: QtBot) -> Iterator[DesktopApp]:
    """The wiring over a generated ledger of `ROWS` requests."""
    db = Database.open(fill_ledger(tmp_path / "ledger.sqlite3", ROWS))
    app = _app(db, tmp_path, qtbot)
    yield app
    _close(app)
    db.close()


def _open(app: DesktopApp, loop: AppEventLoop) -> HistoryWindow:
    app.window.history_action.trigger()
    window = app.history.window
    assert window is not None and window.isVisible()
    run(loop, settle(lambda: app.history.model is not None
                     and app.history.model.rowCount() > 0 and window.totals is not None))
    return window


def _cells(window: HistoryWindow, title: str) -> list[str]:
    model = window.table.model()
    column = COLUMNS.index(title)
    return [model.index(row, column).data() for row in range(model.rowCount())]


def test_history_opens_from_the_view_menu_and_the_tray_and_pages_as_it_scrolls(
        big_app: DesktopApp, loop: AppEventLoop) -> None:
    window = _open(big_app, loop)
    assert window.table.model().rowCount() == PAGE_SIZE  # a page, not the whole ledger
    assert window.totals_label.text().startswith(f"{ROWS:,} requests")
    totals = window.totals
    assert window.headline.text() == (
        f"You approved {totals.approved_by_you:,} · ran without you "
        f"{totals.ran_without_you:,} (the agent's CLI, under its session grants)")
    assert totals.ran_without_you == totals.by_decider[
        "the agent's CLI, under its session grant"] > 0
    window.table.scrollToBottom()
    run(loop, settle(lambda: window.table.model().rowCount() >= 2 * PAGE_SIZE))
    tray_entry = next(a for a in big_app.tray.menu().actions()
                      if a.objectName() == "historyAction")
    tray_entry.trigger()
    assert big_app.history.window is window  # one window, raised again


def test_filters_narrow_the_rows_and_the_counts_follow(
        big_app: DesktopApp, loop: AppEventLoop, qtbot: QtBot) -> None:
    window = _open(big_app, loop)
    window.outcome_combo.setCurrentIndex(window.outcome_combo.findData("deny"))
    run(loop, settle(lambda: set(_cells(window, "Outcome")) == {"denied"}
                     and window.totals.by_outcome.keys() == {"deny"}))
    denied = window.totals.total
    assert 0 < denied < ROWS and window.totals.by_outcome == {"deny": denied}
    window.outcome_combo.setCurrentIndex(0)
    window.decider_combo.setCurrentIndex(window.decider_combo.findData("cli"))
    run(loop, settle(lambda: window.totals.by_decider.keys()
                     == {"the agent's CLI, under its session grant"}
                     and all(who.startswith("the agent's CLI")
                             for who in _cells(window, "Decided by"))))
    window.decider_combo.setCurrentIndex(0)
    qtbot.keyClicks(window.search, MARKER)
    expected = len(range(0, ROWS, 997))
    run(loop, settle(lambda: window.table.model().rowCount() == expected
                     and window.totals.total == expected))
    assert all(MARKER in text for text in _cells(window, "Input as asked"))


def test_opening_a_row_shows_it_whole_with_the_grant_it_ran_under(
        big_app: DesktopApp, loop: AppEventLoop) -> None:
    window = _open(big_app, loop)
    window.decider_combo.setCurrentIndex(window.decider_combo.findData("cli"))
    run(loop, settle(lambda: set(_cells(window, "Decided by")) == {
        f"the agent's CLI, under its session grant (we read it as {GRANT})"}))
    window.open_row(0)
    run(loop, settle(lambda: "Input as asked:" in window.detail.text.toPlainText()))
    text = window.detail.text.toPlainText()
    assert f"Decided by: the agent's CLI, under its session grant (we read it as {GRANT})" \
        in text
    assert '"command": "npm test' in text and "Input as run: as asked" in text
    assert window.detail.rules.topLevelItemCount() == 1
    assert window.detail.rules.topLevelItem(0).text(0) == GRANT


def test_export_writes_the_current_view_off_the_gui_thread_with_progress(
        big_app: DesktopApp, loop: AppEventLoop, tmp_path: Path) -> None:
    window = _open(big_app, loop)
    window.outcome_combo.setCurrentIndex(window.outcome_combo.findData("allow_once"))
    run(loop, settle(lambda: window.totals.by_outcome.keys() == {"allow_once"}
                     and set(_cells(window, "Outcome")) == {"allowed once"}))
    shown: list[tuple[int, int]] = []
    original = window.set_export_progress

    def spy(done: int, total: int) -> None:
        shown.append((done, total))
        original(done, total)

    window.set_export_progress = spy  # type: ignore[method-assign]
    window.choose_export("csv")
    dialog = window.findChild(QFileDialog)
    assert dialog is not None and dialog.isVisible()  # open(), the window stays usable
    out = tmp_path / "allowed.csv"
    dialog.fileSelected.emit(str(out))
    run(loop, settle(lambda: window.status.text().startswith("Wrote"), timeout=60))
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == window.totals.total
    assert {row["status"] for row in rows} == {"allow_once"}
    assert shown[-1] == (len(rows), len(rows)) and window.export_csv.isEnabled()


@pytest.fixture
def live_app(db: Database, loop: AppEventLoop, qtbot: QtBot,
             tmp_path: Path) -> Iterator[DesktopApp]:
    """The wiring over an empty ledger with one running session."""
    db.upsert_session(SessionInfo(session_id="s0", name="session 0", backend=Backend.CLAUDE,
                                  cwd=str(tmp_path), state=SessionState.RUNNING))
    app = _app(db, tmp_path, qtbot)
    yield app
    _close(app)


def test_a_demo_decision_appears_and_its_grant_is_revoked_from_its_row(
        live_app: DesktopApp, db: Database, loop: AppEventLoop, qtbot: QtBot) -> None:
    request = ApprovalRequest(session_id="s0", session_name="session 0",
                              backend=Backend.CLAUDE, tool_name="Bash",
                              tool_input={"command": "make build"}, cwd="/tmp")

    async def decide() -> Any:
        task = asyncio.ensure_future(live_app.broker.request(request))
        await settle(lambda: live_app.dialogs.open_dialogs())
        [dialog] = live_app.dialogs.open_dialogs()
        await settle(dialog.is_armed)
        qtbot.keyClick(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        return await task

    assert run(loop, decide()).kind is DecisionKind.ALLOW_ONCE
    rule = SessionRule(session_id="s0", behavior=RuleBehavior.ALLOW,
                       rule=RuleValue.parse("Bash(npm test:*)"))
    db.add_rules([rule])
    Ledger(db).record_rule_allowed(
        ApprovalRequest(session_id="s0", session_name="session 0", backend=Backend.CLAUDE,
                        tool_name="Bash", tool_input={"command": "npm test -- a"},
                        tool_use_id="toolu_1"), "Bash(npm test:*)")
    db.flush()
    window = _open(live_app, loop)
    assert _cells(window, "Decided by") == [
        "the agent's CLI, under its session grant (we read it as Bash(npm test:*))", "you"]
    assert "you 1" in window.totals_label.text()
    assert window.headline.text().startswith("You approved 1 · ran without you 1 ")
    window.open_row(0)
    run(loop, settle(lambda: window.detail.rules.revoke_button(rule.rule_id) is not None))
    button = window.detail.rules.revoke_button(rule.rule_id)
    assert button is not None and button.isEnabled()
    button.click()
    stored = db.get_rule(rule.rule_id)
    assert stored is not None and stored.revoked_at is not None
    run(loop, settle(lambda: (item := window.detail.rules.item_for(rule.rule_id)) is not None
                     and item.text(COL_ACTION) == ASKS_AGAIN))
    window.open_row(1)  # the person's own allow ran under no rule
    run(loop, settle(lambda: "Decided by: you" in window.detail.text.toPlainText()))
    assert window.detail.rules.topLevelItemCount() == 0
    assert "nothing to revoke" in window.detail.rules_note.text()


def test_opening_the_history_again_shows_what_was_decided_since(
        live_app: DesktopApp, db: Database, loop: AppEventLoop) -> None:
    ledger = Ledger(db)

    def ran(command: str, use_id: str) -> None:
        ledger.record_rule_allowed(
            ApprovalRequest(session_id="s0", session_name="session 0", backend=Backend.CLAUDE,
                            tool_name="Bash", tool_input={"command": command},
                            tool_use_id=use_id), "Bash(npm test:*)")

    ran("npm test -- first", "toolu_1")
    window = _open(live_app, loop)
    assert window.table.model().rowCount() == 1
    ran("npm test -- second", "toolu_2")
    live_app.window.history_action.trigger()
    assert live_app.history.window is window
    run(loop, settle(lambda: _cells(window, "Input as asked")
                     == ["npm test -- second", "npm test -- first"]
                     and window.totals.total == 2))


def test_an_agents_markup_in_a_row_is_never_read_as_rich_text_in_its_tooltip(
        live_app: DesktopApp, db: Database, loop: AppEventLoop) -> None:
    """Tooltips render rich text by default; a command or session the agent wrote shows
    as the characters it is, in the cell's tooltip and in the session filter's."""
    markup = "<img src='file:///etc/passwd'><b>rm</b>"
    db.upsert_session(SessionInfo(session_id=markup, name="", backend=Backend.TERMINAL,
                                  cwd="/tmp", state=SessionState.RUNNING))
    Ledger(db).record_rule_allowed(
        ApprovalRequest(session_id=markup, session_name="", backend=Backend.TERMINAL,
                        tool_name="Bash", tool_input={"command": markup},
                        tool_use_id="toolu_markup"), "Bash")
    db.flush()
    window = _open(live_app, loop)
    model = window.table.model()
    tips = [model.index(0, column).data(Qt.ItemDataRole.ToolTipRole)
            for column in range(model.columnCount())]
    assert any("&lt;b&gt;rm&lt;/b&gt;" in (tip or "") for tip in tips), tips  # escaped …
    assert not any("<b>" in (tip or "") or "<img" in (tip or "") for tip in tips)  # … only
    run(loop, settle(lambda: window.session_combo.count() > 1))
    session_tips = [window.session_combo.itemData(i, Qt.ItemDataRole.ToolTipRole)
                    for i in range(1, window.session_combo.count())]
    assert session_tips and all("<img" not in tip for tip in session_tips)


def test_each_row_shows_its_host_and_the_host_filter_narrows_to_one(
        live_app: DesktopApp, db: Database, loop: AppEventLoop) -> None:
    """A request from a remote host shows that host, one made here "This computer"; the
    host filter lists both and shows one host's rows only. A host name the agent's side
    chose stays the characters it is, in the cell, its tooltip and the filter."""
    markup = "<b>box</b>"
    ledger = Ledger(db)
    for host, command, use_id in ((None, "make local", "toolu_l"),
                                  ("box", "make remote", "toolu_b"),
                                  (markup, "make marked", "toolu_m")):
        ledger.record_rule_allowed(
            ApprovalRequest(session_id="s0", session_name="session 0", backend=Backend.CLAUDE,
                            tool_name="Bash", tool_input={"command": command},
                            tool_use_id=use_id, host=host), "Bash(make:*)")
    db.flush()
    window = _open(live_app, loop)
    assert _cells(window, "Host") == [markup, "box", "This computer"]
    host_column = COLUMNS.index("Host")
    tip = window.table.model().index(0, host_column).data(Qt.ItemDataRole.ToolTipRole)
    assert "&lt;b&gt;box&lt;/b&gt;" in tip and "<b>" not in tip
    run(loop, settle(lambda: window.host_combo.count() == 4))
    assert [window.host_combo.itemText(i) for i in range(4)] == [
        "All hosts", "This computer", markup, "box"]  # by name

    window.host_combo.setCurrentIndex(window.host_combo.findData("box"))
    run(loop, settle(lambda: _cells(window, "Input as asked") == ["make remote"]
                     and window.totals.total == 1))
    window.host_combo.setCurrentIndex(window.host_combo.findText("This computer"))
    run(loop, settle(lambda: _cells(window, "Input as asked") == ["make local"]
                     and window.totals.total == 1))
    window.host_combo.setCurrentIndex(0)
    run(loop, settle(lambda: window.table.model().rowCount() == 3
                     and window.totals.total == 3))
