"""``qoder-desktop remote remove`` against a real sshd: only our entry leaves the agents'
settings, then the hook, the token and the host's record go; nothing is taken away while
a settings file still names the hook."""

from __future__ import annotations

import json

import pytest
from helpers.remote_desk import Desk

OTHER_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit"}]}


def test_remove_takes_only_our_entry_and_our_files(desk: Desk,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    home = desk.host.user.home
    settings = desk.host.user.write(".claude/settings.json", json.dumps(
        {"model": "opus", "hooks": {"PermissionRequest": [OTHER_HOOK]}}))
    assert desk.remote("add", desk.host.alias) == 0
    capsys.readouterr()

    assert desk.remote("remove", desk.host.alias) == 0

    out = capsys.readouterr().out
    assert json.loads(settings.read_text()) == {"model": "opus",
                                                "hooks": {"PermissionRequest": [OTHER_HOOK]}}
    assert json.loads((home / ".qoder" / "settings.json").read_text()) == {}
    assert not (home / ".qoder-desktop").exists()
    assert desk.token(desk.host.alias) is None
    assert desk.registry.hosts() == []
    assert "Claude Code: removed" in out
    assert f"{desk.host.alias}: removed from this desk's remote hosts" in out


def test_remove_keeps_the_hook_while_a_settings_file_still_names_it(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    home = desk.host.user.home
    assert desk.remote("add", desk.host.alias) == 0
    settings = home / ".claude" / "settings.json"
    broken = settings.read_text() + "}"
    desk.host.user.write(".claude/settings.json", broken)
    capsys.readouterr()

    assert desk.remote("remove", desk.host.alias) == 1

    out = capsys.readouterr().out
    assert settings.read_text() == broken
    assert "is not valid JSON" in out
    assert (home / ".qoder-desktop" / "qoder-desktop-hook.py").exists()
    assert desk.token(desk.host.alias) is not None
    assert [host.name for host in desk.registry.hosts()] == [desk.host.alias]


def test_an_unreachable_host_is_kept_unless_forgotten(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    assert desk.remote("add", desk.host.alias) == 0
    desk.host.server.stop()
    capsys.readouterr()

    assert desk.remote("remove", desk.host.alias) == 1
    kept = capsys.readouterr().out
    assert desk.remote("remove", desk.host.alias, "--forget") == 0
    forgotten = capsys.readouterr().out

    assert "Connection refused" in kept and "use --forget" in kept
    assert "forgotten here" in forgotten
    assert desk.registry.hosts() == []
    assert desk.token(desk.host.alias) is None
    assert (desk.host.user.home / ".qoder-desktop").exists()  # nobody could reach it
