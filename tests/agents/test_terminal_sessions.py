"""A terminal agent's session info as its CLI's requests show it (`agents.terminal_sessions`)."""

from __future__ import annotations

from qoder_desktop.agents.terminal_sessions import (
    first_terminal_info,
    followed_terminal_info,
    known_mode,
)
from qoder_desktop.domain.models import Backend, PermissionMode, SessionState


def test_a_first_request_names_the_session_for_its_host_agent_and_folder() -> None:
    info = first_terminal_info("s1", "Claude Code", "/home/ana/proj/", None, "build-box")
    assert info.name == "build-box · Claude Code · proj"
    assert info.backend is Backend.TERMINAL and info.state is SessionState.RUNNING
    assert info.permission_mode is PermissionMode.DEFAULT and info.host == "build-box"
    assert first_terminal_info("s2", "Claude Code", "", None, None).name == "Claude Code"


def test_a_mode_the_cli_reports_is_kept_and_an_unknown_one_is_not_taken() -> None:
    assert known_mode("plan") is PermissionMode.PLAN
    assert known_mode("bypass-everything") is None and known_mode(None) is None
    info = first_terminal_info("s1", "Claude Code", "/w", PermissionMode.PLAN, None)
    assert info.permission_mode is PermissionMode.PLAN


def test_a_request_changes_the_info_only_for_a_new_mode_or_a_resumed_session() -> None:
    info = first_terminal_info("s1", "Claude Code", "/w", PermissionMode.DEFAULT, None)
    assert followed_terminal_info(info, PermissionMode.DEFAULT) is None
    assert followed_terminal_info(info, None) is None
    changed = followed_terminal_info(info, PermissionMode.ACCEPT_EDITS)
    assert changed is not None and changed.permission_mode is PermissionMode.ACCEPT_EDITS
    ended = info.model_copy(update={"state": SessionState.STOPPED})
    resumed = followed_terminal_info(ended, None)
    assert resumed is not None and resumed.state is SessionState.RUNNING
    assert resumed.permission_mode is PermissionMode.DEFAULT
