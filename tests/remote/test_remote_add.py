"""``qoder-desktop remote add`` against a real sshd: what lands on the host, with which
modes, and in which settings."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from helpers.remote_desk import Desk

from qoder_desktop.remote.hook_file import hook_version


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


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
    assert token
    assert token_file.read_text().strip() == token
    assert token not in out
    for settings in (user.home / ".claude" / "settings.json",
                     user.home / ".qoder" / "settings.json"):
        groups = json.loads(settings.read_text())["hooks"]["PermissionRequest"]
        command = groups[0]["hooks"][0]["command"]
        assert command.split()[1:3] == [str(hook), "hook"], command
        assert _mode(settings) == 0o600
    assert f"hook {hook_version()} put" in out
    [known] = desk.registry.hosts()
    assert (known.name, known.home, known.agents) == (desk.host.alias, str(user.home),
                                                      ["claude", "qoder"])
