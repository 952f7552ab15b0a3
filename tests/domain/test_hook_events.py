"""The hook event names we install and listen for are the names the agent's CLI fires:
a misspelt one would be a hook that never runs (checked against the bundled Claude Code
CLI itself)."""

from __future__ import annotations

import mmap

from helpers.cli_rig import BUNDLED_CLI

from qoder_desktop.domain.hook_events import HookEvent, TerminalAgent, ToolEventPhase


def test_every_hook_event_is_one_the_bundled_cli_fires() -> None:
    with BUNDLED_CLI.open("rb") as cli, mmap.mmap(cli.fileno(), 0, access=mmap.ACCESS_READ) as text:
        missing = [event.value for event in HookEvent
                   if text.find(f'"{event.value}"'.encode()) < 0]
    assert missing == []


def test_a_tool_events_phase_is_named_as_its_hook() -> None:
    for phase in ToolEventPhase:
        assert HookEvent(phase.value).name == phase.name


def test_terminal_agents_have_names_for_people() -> None:
    assert TerminalAgent("claude").label == "Claude Code"
    assert TerminalAgent("qoder").label == "Qoder CLI"
