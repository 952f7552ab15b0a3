"""The transcript shows events in batches: nothing lost or reordered, one repaint a burst.

Events arrive one loop turn each (an agent's tool calls, through the hub); the view
inserts the events of a burst together, at most `BATCH_MS` after the first one.
"""

from __future__ import annotations

import asyncio

import pytest
from helpers.loop import qt_turns, wait_qt_turns
from PySide6.QtCore import QEvent, QObject, Qt
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import Backend, SessionInfo, SessionState
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.ui.widgets import transcript_view
from qoder_desktop.ui.widgets.transcript_view import BATCH_MAX, TranscriptView
from qoder_desktop.ui.windows.main_window import MainWindow


def session(name: str) -> SessionInfo:
    return SessionInfo(name=name, backend=Backend.CLAUDE, cwd=f"/work/{name}",
                       state=SessionState.RUNNING)


def line(session_id: str, text: str, kind: TranscriptKind = TranscriptKind.TOOL_CALL
         ) -> TranscriptEvent:
    return TranscriptEvent(session_id=session_id, kind=kind, text=text, tool_name="Bash")


class Paints(QObject):
    """Counts the paint events a widget gets."""

    def __init__(self, widget: QObject) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


async def until(condition, turns: int = 2000) -> None:  # type: ignore[no-untyped-def]
    """Let the loop run (5 ms a step) until `condition()` holds."""
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")


@pytest.mark.asyncio
async def test_a_burst_on_the_loop_appears_whole_in_order_with_one_repaint(
        window: MainWindow) -> None:
    info = session("burst")
    window.set_sessions([info])
    view = window.ui.transcriptView
    await qt_turns()  # the window's own paints are done
    paints = Paints(view.viewport())
    for n in range(60):  # one loop turn each, as the hub publishes them
        window.append_transcript(line(info.session_id, f"touch f{n}.txt"))
        await asyncio.sleep(0)
        if n == 0:
            assert "touch f0.txt" not in view.toPlainText()  # waits for the rest of its burst
    await until(lambda: view.pending_count() == 0)
    await qt_turns()  # the repaint the batch asked for
    shown = [text for text in view.toPlainText().splitlines() if "touch" in text]
    assert shown == [f"• Bash  touch f{n}.txt" for n in range(60)]
    assert 1 <= paints.count <= 3  # one per event before batching


@pytest.mark.asyncio
async def test_a_steady_stream_does_not_hold_back_its_first_event(
        window: MainWindow) -> None:
    """The interval runs from a batch's first event: later ones never postpone it."""
    info = session("stream")
    window.set_sessions([info])
    view = window.ui.transcriptView
    window.append_transcript(line(info.session_id, "first call"))
    for n in range(BATCH_MAX - 2):  # fewer than make a full batch
        await asyncio.sleep(0.01)
        if "first call" in view.toPlainText():
            break
        window.append_transcript(line(info.session_id, f"call {n}"))
    assert "first call" in view.toPlainText()


def test_switching_sessions_mid_batch_shows_only_the_new_sessions_events(
        window: MainWindow, qtbot: QtBot) -> None:
    a, b = session("a"), session("b")
    held = {a.session_id: [line(a.session_id, "a before")],
            b.session_id: [line(b.session_id, "b so far")]}
    window.session_selected.connect(  # as the app does, from the hub's copy
        lambda sid: window.set_transcript(sid, held[sid]))
    window.set_sessions([a, b])
    view = window.ui.transcriptView
    assert window.selected_session_id() == a.session_id
    qtbot.waitUntil(lambda: "a before" in view.toPlainText())
    window.append_transcript(line(a.session_id, "a in the batch"))
    window.select_session(b.session_id)
    window.append_transcript(line(a.session_id, "a after the switch"))
    window.append_transcript(line(b.session_id, "b new"))
    qtbot.waitUntil(lambda: "b new" in view.toPlainText() and view.pending_count() == 0)
    shown = [text for text in view.toPlainText().splitlines() if text.startswith("•")]
    assert shown == ["• Bash  b so far", "• Bash  b new"]


def test_set_events_drops_what_waited_and_shows_exactly_its_events(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.append_event(line("s", "stale"))
    view.set_events([line("s", "one"), line("s", "two")])
    assert view.pending_count() == 0
    view.append_event(line("s", "three"))
    qtbot.waitUntil(lambda: view.pending_count() == 0)
    assert view.toPlainText().splitlines() == ["• Bash  one", "• Bash  two", "• Bash  three"]


def test_a_scrolled_up_view_stays_put_and_one_at_the_end_follows(
        window: MainWindow, qtbot: QtBot) -> None:
    info = session("scroll")
    window.set_sessions([info])
    view = window.ui.transcriptView
    bar = view.verticalScrollBar()
    window.set_transcript(info.session_id,
                                [line(info.session_id, f"old {n}") for n in range(300)])
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    for n in range(20):  # at the end: the view follows the batch
        window.append_transcript(line(info.session_id, f"new {n}"))
    qtbot.waitUntil(lambda: "new 19" in view.toPlainText())
    assert bar.value() == bar.maximum()
    bar.setValue(bar.maximum() // 3)  # the person scrolls up to read
    kept = bar.value()
    for n in range(20):
        window.append_transcript(line(info.session_id, f"later {n}"))
    qtbot.waitUntil(lambda: "later 19" in view.toPlainText())
    assert bar.value() == kept < bar.maximum()


def test_a_full_batch_is_shown_at_once(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    for n in range(BATCH_MAX):
        view.append_event(line("s", f"call {n}"))
    assert view.pending_count() == 0
    assert view.toPlainText().splitlines()[-1] == f"• Bash  call {BATCH_MAX - 1}"


def test_batches_keep_only_the_newest_max_blocks(qtbot: QtBot,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcript_view, "MAX_BLOCKS", 50)
    view = TranscriptView()
    qtbot.addWidget(view)
    for n in range(130):
        view.append_event(line("s", f"call {n}"))
    qtbot.waitUntil(lambda: view.pending_count() == 0)
    lines = view.toPlainText().splitlines()
    assert view.document().blockCount() == 50
    assert lines == [f"• Bash  call {n}" for n in range(80, 130)]


@pytest.mark.parametrize("styled", [False, True], ids=["native", "app stylesheet"])
def test_the_opaque_viewport_looks_like_a_plain_text_edit(qtbot: QtBot, styled: bool) -> None:
    """The view paints its own background (Qt paints nothing beneath it): pixel for pixel
    what a plain QTextEdit with the same document shows."""
    from PySide6.QtWidgets import QTextEdit, QWidget

    from qoder_desktop.ui import icons

    host = QWidget()
    qtbot.addWidget(host)
    if styled:
        host.setStyleSheet(icons.stylesheet())
    view, plain = TranscriptView(host), QTextEdit(host)
    view.setObjectName("transcriptView")
    plain.setObjectName("transcriptView")
    view.set_events([line("s", f"touch f{n}.txt",
                          TranscriptKind.TOOL_CALL if n % 2 else TranscriptKind.TOOL_RESULT)
                     for n in range(40)])
    plain.setDocument(view.document().clone(plain))
    plain.setReadOnly(True)
    for widget, x in ((view, 0), (plain, 420)):
        widget.setGeometry(x, 0, 400, 300)
    host.resize(820, 300)
    host.show()
    qtbot.waitExposed(host)
    # Neither shows a caret (the view's, for the keyboard, blinks while it has focus).
    host.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    host.setFocus()
    plain.verticalScrollBar().setValue(view.verticalScrollBar().value())
    wait_qt_turns(qtbot)  # both have repainted after the scroll
    assert view.grab().toImage() == plain.grab().toImage()


def test_only_the_first_block_of_an_event_is_spaced_from_the_one_before(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.set_events([line("s", "one\ntwo\nthree", TranscriptKind.TOOL_RESULT),
                     line("s", "asks\nmore", TranscriptKind.USER_PROMPT),
                     line("s", "touch a\ntouch b")])
    margins = []
    block = view.document().begin()
    while block.isValid():
        margins.append((block.text()[:5].strip(), block.blockFormat().topMargin()))
        block = block.next()
    assert margins == [("one", 6), ("two", 0), ("three", 0),
                       ("You", 12), ("asks", 0), ("more", 0),
                       ("• Bas", 6), ("touch", 0)]


def test_an_event_that_cannot_be_shown_does_not_take_its_batch_with_it(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    real = transcript_view._bounded

    def bounded(text: str, kind: TranscriptKind) -> str:
        if text == "bad":
            raise ValueError("cannot show this")
        return real(text, kind)

    monkeypatch.setattr(transcript_view, "_bounded", bounded)
    view = TranscriptView()
    qtbot.addWidget(view)
    for text in ("before", "bad", "after"):
        view.append_event(line("s", text))
    qtbot.waitUntil(lambda: view.pending_count() == 0)
    shown = view.toPlainText()
    assert "before" in shown and "after" in shown
    assert "could not be shown" in caplog.text


@pytest.mark.parametrize("first", ["set_events", "append_event"])
def test_the_viewport_is_made_opaque_and_mouse_tracked_before_the_first_event_shows(
        qtbot: QtBot, first: str) -> None:
    """Left out of the constructor (the main window's first frame does without it), the
    viewport's set-up comes before any event is drawn."""
    view = TranscriptView()
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    viewport = view.viewport()
    assert not viewport.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    if first == "set_events":
        view.set_events([line("s1", "echo one")])
    else:
        view.append_event(line("s1", "echo one"))
        view.flush()
    assert viewport.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    assert viewport.hasMouseTracking()
    assert "echo one" in view.toPlainText()


def test_the_main_window_sets_its_transcript_up_after_its_first_frame(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    viewport = window.ui.transcriptView.viewport()
    assert not viewport.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    window.finish_after_first_frame()
    assert viewport.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    assert viewport.hasMouseTracking()
