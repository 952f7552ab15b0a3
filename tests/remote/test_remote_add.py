"""``qoder-desktop remote add`` against a real sshd: what lands on the host, with which
modes and in which settings; a second add changes nothing; a settings file that does not
parse and a host without python3 are refused with the reason."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from helpers.remote_desk import Desk
from keyring.backends import fail

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.remote.hook_file import hook_version


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _our_commands(settings: Path) -> list[str]:
    data: dict[str, Any] = json.loads(settings.read_text())
    return [hook["command"] for group in data.get("hooks", {}).get("PermissionRequest", [])
            for hook in group["hooks"] if "qoder-desktop-hook.py" in hook["command"]]


def test_add_deploys_the_hook_the_token_and_our_settings_entry(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    user = desk.host.user

    assert desk.remote("add", desk.host.alias) == 0

    out = capsys.readouterr().out
    folder = user.home / ".qoder-desktop"
    hook = folder / "qoder-desktop-hook.py"
    token_file = folder / "desk.token"
    assert (_mode(folder), _mode(hook), _mode(token_file)) == (0o700, 0o700, 0o600)
    assert {p.stat().st_uid for p in (folder, hook, token_file)} == {user.uid}
    token = desk.token(desk.host.alias)
    assert token and token_file.read_text().strip() == token
    assert token not in out
    assert token not in desk.registry.path.read_text()  # the desk keeps it in the keyring
    assert _mode(desk.registry.path) == 0o600
    for settings in (user.home / ".claude" / "settings.json",
                     user.home / ".qoder" / "settings.json"):
        [command] = _our_commands(settings)
        assert command.split()[1:3] == [str(hook), "hook"], command
        assert _mode(settings) == 0o600
    assert f"hook {hook_version()} put" in out
    [known] = desk.registry.hosts()
    assert (known.name, known.home, known.agents) == (desk.host.alias, str(user.home),
                                                      ["claude", "qoder"])
    assert known.remote_socket == str(folder / "desk.sock")


def test_adding_again_changes_nothing(desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    home = desk.host.user.home
    assert desk.remote("add", desk.host.alias) == 0
    files = [home / ".claude" / "settings.json", home / ".qoder" / "settings.json",
             home / ".qoder-desktop" / "desk.token", home / ".qoder-desktop" /
             "qoder-desktop-hook.py"]
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    token = desk.token(desk.host.alias)
    capsys.readouterr()

    assert desk.remote("add", desk.host.alias) == 0

    out = capsys.readouterr().out
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before
    assert desk.token(desk.host.alias) == token
    assert "Claude Code: already installed" in out and "Qoder CLI: already installed" in out
    assert "already there" in out
    assert not list((home / ".claude").glob("*.bak-qoder-desktop"))
    assert len(desk.registry.hosts()) == 1


def test_other_settings_are_kept_and_the_old_file_is_backed_up(desk: Desk) -> None:
    original = {"model": "opus", "hooks": {"PermissionRequest": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit"}]}],
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "lint"}]}]}}
    text = json.dumps(original, indent=4)
    settings = desk.host.user.write(".claude/settings.json", text)

    assert desk.remote("add", desk.host.alias) == 0

    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert data["hooks"]["PermissionRequest"][0] == original["hooks"]["PermissionRequest"][0]
    assert len(_our_commands(settings)) == 1
    backup = settings.with_name("settings.json.bak-qoder-desktop")
    assert backup.read_text() == text


def test_settings_that_do_not_parse_are_left_untouched_with_the_reason(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    broken = '{"model": "opus",,}'
    settings = desk.host.user.write(".claude/settings.json", broken)

    assert desk.remote("add", desk.host.alias) == 0  # Qoder CLI's settings still got it

    out = capsys.readouterr().out
    assert settings.read_text() == broken
    assert not settings.with_name("settings.json.bak-qoder-desktop").exists()
    assert f"Claude Code: skipped: {settings} is not valid JSON" in out
    assert "it was left untouched" in out
    assert _our_commands(desk.host.user.home / ".qoder" / "settings.json")
    assert desk.registry.hosts()[0].agents == ["qoder"]


def test_a_host_without_python3_is_refused_and_left_as_it_was(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    desk.host.user.set_path("/opt/no-python-here")

    assert desk.remote("add", desk.host.alias) == 1

    out = capsys.readouterr().out
    assert (f"{desk.host.alias} has no python3 on the PATH of an ssh command "
            "(/opt/no-python-here); the hook needs python3 3.8 or newer") in out
    assert not (desk.host.user.home / ".qoder-desktop").exists()
    assert not (desk.host.user.home / ".claude").exists()
    assert desk.registry.hosts() == []
    assert desk.token(desk.host.alias) is None


def test_an_unreachable_host_says_why(desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    assert desk.remote("add", desk.host.closed_alias) == 1

    out = capsys.readouterr().out
    assert f"{desk.host.closed_alias}: not reachable: " in out
    assert "Connection refused" in out
    assert desk.registry.hosts() == []


def test_without_a_keyring_nothing_is_deployed(desk: Desk,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    desk.store = SecretStore(fail.Keyring())

    assert desk.remote("add", desk.host.alias) == 1

    out = capsys.readouterr().out
    assert "kept in the OS keyring only" in out
    assert not (desk.host.user.home / ".qoder-desktop").exists()
    assert desk.registry.hosts() == []


def test_an_unknown_host_key_says_what_to_do(desk: Desk,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    empty = desk.host.config.with_name("empty_known_hosts")
    empty.write_text("")
    config = desk.host.config.with_name("strict_config")
    config.write_text(desk.host.config.read_text().replace(str(desk.host.known_hosts),
                                                           str(empty)))

    code = desk.remote("add", desk.host.alias, "--ssh-config", str(config), config=False)

    out = capsys.readouterr().out
    assert code == 1
    assert "Host key verification failed" in out
    assert f"connect once with `ssh {desk.host.alias}`" in out
    assert not empty.read_text()  # nothing was accepted for the person
    assert not (desk.host.user.home / ".qoder-desktop").exists()


def test_a_key_the_host_refuses_says_no_password_is_asked(
        desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    (desk.host.user.home / ".ssh" / "authorized_keys").write_text("")

    assert desk.remote("add", desk.host.alias) == 1

    out = capsys.readouterr().out
    assert "Permission denied" in out
    assert "ssh may not ask for a password or a passphrase here" in out
