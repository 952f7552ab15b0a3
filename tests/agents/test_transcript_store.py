"""What the hub keeps of transcripts: a running session its newest lines, an ended one a
tail, all ended sessions together a bounded number; what is no longer kept is said in
one line at the top, and the decisions stay in the ledger."""

from __future__ import annotations

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.agents.transcript_store import ENDED_TAIL, Transcripts, not_kept_note
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import SessionState
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


def _line(session_id: str, text: str, kind: TranscriptKind = TranscriptKind.USER_PROMPT,
          tool_use_id: str | None = None, original_text: str | None = None) -> TranscriptEvent:
    return TranscriptEvent(session_id=session_id, kind=kind, text=text,
                           tool_use_id=tool_use_id, original_text=original_text)


def _texts(lines: list[TranscriptEvent]) -> list[str]:
    return [line.text for line in lines]


def test_an_ended_terminal_session_keeps_its_tail_and_says_what_it_no_longer_keeps(
        db: Database) -> None:
    ledger = Ledger(db)
    hub = SessionHub(db, ledger, ApprovalBroker(db, ledger), lambda *args: None)  # type: ignore[arg-type,return-value]
    hub.terminal_session("cli-1", "Claude Code", "/work/project")
    for number in range(ENDED_TAIL + 50):
        hub.add_transcript_line(_line("cli-1", f"line {number}"))
    assert len(hub.transcript("cli-1")) == ENDED_TAIL + 50  # running: all of it

    hub.state_changed("cli-1", SessionState.STOPPED, None)  # its CLI exited
    shown = hub.transcript("cli-1")
    assert shown[0].text == not_kept_note(50) and shown[0].kind is TranscriptKind.SYSTEM
    assert _texts(shown[1:]) == [f"line {n}" for n in range(50, ENDED_TAIL + 50)]

    hub.terminal_session("cli-1", "Claude Code", "/work/project")  # resumed in a new CLI
    assert hub.session("cli-1").state is SessionState.RUNNING
    for number in range(ENDED_TAIL + 50, ENDED_TAIL + 60):
        hub.add_transcript_line(_line("cli-1", f"line {number}"))
    assert len(hub.transcript("cli-1")) == 1 + ENDED_TAIL + 10  # nothing more dropped


def test_ended_sessions_together_keep_a_bounded_number_the_longest_ended_first() -> None:
    kept = Transcripts(limit=10, ended_tail=3, ended_lines=5)
    for session_id in ("a", "b"):
        for number in range(4):
            kept.add(_line(session_id, f"{session_id}{number}"))
    kept.ended("a")
    assert _texts(kept.lines("a")) == [not_kept_note(1), "a1", "a2", "a3"]
    kept.ended("b")  # 6 lines ended: over 5, so "a", which ended first, gives up its own
    assert _texts(kept.lines("a")) == [not_kept_note(4)]
    assert _texts(kept.lines("b")) == [not_kept_note(1), "b1", "b2", "b3"]
    kept.add(_line("b", "b4"))  # a late line of an ended session
    assert _texts(kept.lines("b")) == [not_kept_note(2), "b2", "b3", "b4"]

    for number in range(12):
        kept.add(_line("c", f"c{number}"))  # running: its newest `limit` lines
    assert _texts(kept.lines("c")) == [not_kept_note(2)] + [f"c{n}" for n in range(2, 12)]
    assert kept.kept() == 3 + 10


def test_an_edited_call_still_replaces_its_line() -> None:
    kept = Transcripts(limit=10, ended_tail=3, ended_lines=5)
    kept.add(_line("a", "rm -r build", kind=TranscriptKind.TOOL_CALL, tool_use_id="t1"))
    kept.add(_line("a", "rm -r build/tmp", kind=TranscriptKind.TOOL_CALL, tool_use_id="t1",
                   original_text="rm -r build"))
    assert _texts(kept.lines("a")) == ["rm -r build/tmp"]
