"""How tool calls read in the transcript: the part a person needs, nothing cut silently."""

from __future__ import annotations

from qoder_desktop.agents.transcript import SUMMARY_LIMIT, summarize_call


def test_a_command_or_a_path_is_the_summary() -> None:
    assert summarize_call("Tool", {"command": "make test", "description": "Run"}) == "make test"
    assert summarize_call("Tool", {"file_path": "/w/notes.md", "content": "x"}) == "/w/notes.md"


def test_a_question_is_summarized_by_its_question_texts() -> None:
    questions = {"questions": [{"question": "Which layout?", "options": []},
                               {"question": "Which colour?", "options": []}]}
    assert summarize_call("Tool", questions) == "Which layout? / Which colour?"


def test_other_inputs_show_their_json_and_long_ones_say_what_was_left_out() -> None:
    assert summarize_call("Tool", {"b": 1, "a": "x"}) == '{"a": "x", "b": 1}'
    long = summarize_call("Tool", {"command": "y" * (SUMMARY_LIMIT + 10)})
    assert long.endswith("… (10 more characters)")
    assert long.startswith("y" * SUMMARY_LIMIT)


def test_the_transcript_and_the_queue_name_the_same_subject() -> None:
    from qoder_desktop.ui.summaries import input_summary

    for tool_input in ({"command": "make test", "description": "Run"},
                       {"query": "qasync nested loop", "allowed_domains": []},
                       {"description": "Find the flaky test", "prompt": "Look at CI"},
                       {"file_path": "/w/a.py", "edits": [{}, {}]},
                       {"server": "x", "limit": 3}):
        assert summarize_call("Tool", tool_input) == input_summary("Tool", tool_input)
