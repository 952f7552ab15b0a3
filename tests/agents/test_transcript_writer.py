"""How a session's transcript reads: what ran after an edit, one line per denial, the
CLI's own instructions to the model folded away, plan mode reported."""

from __future__ import annotations

from typing import Any

from qoder_desktop.agents.transcript import readable_result
from qoder_desktop.agents.transcript_store import Transcripts
from qoder_desktop.agents.transcript_writer import TranscriptWriter
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind


class Lines:
    """A sink that keeps the lines as the hub does (an edited call replaces its line)."""

    def __init__(self) -> None:
        self._kept = Transcripts()

    @property
    def lines(self) -> list[TranscriptEvent]:
        return self._kept.lines("s")

    def add_transcript_line(self, event: TranscriptEvent) -> None:
        self._kept.add(event)

    def __getattr__(self, name: str) -> Any:
        return lambda *_args, **_kw: None


def test_an_edited_call_shows_what_ran_with_the_original_folded_under_it() -> None:
    sink = Lines()
    writer = TranscriptWriter("s", sink)  # type: ignore[arg-type]
    original = {"command": "echo 'Hello from the demo' > hello.txt", "description": "d"}
    writer.call("Bash", "t1", original)
    writer.edited("t1", "Bash", original, {**original, "command": "echo edited > hello.txt"})
    [call] = sink.lines
    assert call.text == "echo edited > hello.txt"
    assert call.original_text == "command: echo 'Hello from the demo' > hello.txt"


def test_an_edited_write_names_the_original_content() -> None:
    sink = Lines()
    writer = TranscriptWriter("s", sink)  # type: ignore[arg-type]
    original = {"file_path": "/w/a.txt", "content": "old text"}
    writer.call("Write", "t1", original)
    writer.edited("t1", "Write", original, {**original, "content": "new text"})
    assert sink.lines[0].original_text == "content: old text"
    writer.edited("t2", "Write", original, original)  # unchanged: nothing to mark
    assert len(sink.lines) == 1


def test_a_denial_is_one_line_and_the_cli_echo_of_its_reason_is_dropped() -> None:
    sink = Lines()
    writer = TranscriptWriter("s", sink)  # type: ignore[arg-type]
    writer.call("Bash", "t1", {"command": "ls"})
    writer.denied("t1", "Bash", "no thanks")
    writer.result("t1", "<tool_use_error>no thanks</tool_use_error>", True)
    assert [line.kind for line in sink.lines] == [TranscriptKind.TOOL_CALL,
                                                  TranscriptKind.DENIAL]


def test_the_stop_prompt_after_a_denial_is_only_a_detail() -> None:
    sink = Lines()
    writer = TranscriptWriter("s", sink)  # type: ignore[arg-type]
    writer.call("Bash", "t1", {"command": "ls"})
    writer.denied("t1", "Bash", "no thanks")
    stop = ("The user doesn't want to proceed with this tool use. STOP what you are doing "
            "and wait for the user to tell you how to proceed.")
    writer.result("t1", stop, True)
    folded = sink.lines[-1]
    assert (folded.text, folded.details, folded.is_error) == ("", stop, False)


def test_keep_planning_is_not_an_error() -> None:
    sink = Lines()
    writer = TranscriptWriter("s", sink)  # type: ignore[arg-type]
    writer.denied("t1", "ExitPlanMode", "Keep planning.", keep_planning=True)
    assert not sink.lines[0].is_error


def test_entering_plan_mode_is_reported_and_its_rules_are_folded() -> None:
    sink = Lines()
    writer = TranscriptWriter("s", sink)  # type: ignore[arg-type]
    writer.call("EnterPlanMode", "t1", {})
    assert sink.lines[0].text == ""  # no "{}"
    rules = "Entered plan mode. You should now focus on exploring…\n\nDO NOT write files."
    assert writer.result("t1", rules, False) is True
    result = sink.lines[-1]
    assert "DO NOT" not in result.text and result.details == rules
    writer.call("EnterPlanMode", "t2", {})
    assert writer.result("t2", "<tool_use_error>not now</tool_use_error>", True) is False


def test_readable_result_strips_tags_and_folds_reminders() -> None:
    assert readable_result("<tool_use_error>File does not exist.</tool_use_error>") == (
        "File does not exist.", "")
    shown, details = readable_result(
        "12 lines\n<system-reminder>Whenever you read a file…</system-reminder>")
    assert shown == "12 lines" and "Whenever you read" in details
    assert readable_result("plain output") == ("plain output", "")


def test_a_plan_call_shows_its_title_with_the_plan_folded() -> None:
    sink = Lines()
    writer = TranscriptWriter("s", sink)  # type: ignore[arg-type]
    plan = "# Plan: add a greeting module\n\n1. Create `greeting.py`.\n"
    writer.call("ExitPlanMode", "t1", {"plan": plan})
    assert (sink.lines[0].text, sink.lines[0].details) == ("Plan: add a greeting module", plan)


def test_the_clis_context_note_goes_to_details() -> None:
    shown, details = readable_result(
        "File created successfully at: /w/p.md (file state is current in your context — no "
        "need to Read it back)")
    assert shown == "File created successfully at: /w/p.md"
    assert "in your context" in details
