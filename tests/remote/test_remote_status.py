"""``qoder-desktop remote status`` and ``list``: each host reachable or why not, the hook
and its version, our entries, and the tunnel."""

from __future__ import annotations

import pytest
from helpers.remote_desk import Desk

from qoder_desktop.remote.hook_file import hook_version


def test_status_shows_the_hook_its_version_and_the_tunnel(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    home = desk.host.user.home
    assert desk.remote("add", desk.host.alias) == 0
    capsys.readouterr()

    assert desk.remote("status") == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{desk.host.alias} (ssh -F {desk.host.config})"
    assert lines[1].startswith("  reachable: yes — python3 3.")
    assert f"  hook: installed, version {hook_version()} ({home}/.qoder-desktop)" in lines
    assert f"  Claude Code: installed ({home}/.claude/settings.json)" in lines
    assert f"  Qoder CLI: installed ({home}/.qoder/settings.json)" in lines
    assert lines[-1] == "  tunnel: not running (the app is closed)"


def test_status_says_when_the_hook_was_taken_off_by_hand(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    home = desk.host.user.home
    assert desk.remote("add", desk.host.alias) == 0
    (home / ".qoder-desktop" / "qoder-desktop-hook.py").unlink()
    desk.host.user.write(".claude/settings.json", "{}")
    capsys.readouterr()

    assert desk.remote("status", desk.host.alias) == 0

    out = capsys.readouterr().out
    assert f"  hook: not installed ({home}/.qoder-desktop)" in out
    assert f"  Claude Code: not installed ({home}/.claude/settings.json)" in out


def test_status_of_an_unreachable_host_says_why(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    assert desk.remote("add", desk.host.alias) == 0
    desk.host.server.stop()
    capsys.readouterr()

    assert desk.remote("status") == 1

    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  reachable: no — ")
    assert "Connection refused" in lines[1]
    assert lines[-1] == "  tunnel: not running (the app is closed)"


def test_list_names_the_hosts_without_connecting(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    assert desk.remote("list") == 0
    assert "No remote hosts yet" in capsys.readouterr().out
    assert desk.remote("add", desk.host.alias) == 0
    desk.host.server.stop()
    capsys.readouterr()

    assert desk.remote("list") == 0

    out = capsys.readouterr().out
    assert out.startswith(f"{desk.host.alias}: hook {hook_version()} for Claude Code, "
                          f"Qoder CLI in {desk.host.user.home}/.qoder-desktop")
