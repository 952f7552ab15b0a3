"""Installing our PermissionRequest hook into real-world Claude Code / qodercli settings."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qoder_desktop.__main__ import main
from qoder_desktop.terminal.install import (
    BACKUP_SUFFIX,
    HOOK_TIMEOUT_SECONDS,
    Agent,
    Change,
    InstallError,
    hook_command,
    install,
    is_our_command,
    settings_path,
    status,
    uninstall,
)

REAL_WORLD: dict[str, Any] = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "env": {"GREETING": "grüß dich — 你好 🚀"},
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"],
                    "defaultMode": "default"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "~/bin/audit.sh"}]}],
        "PermissionRequest": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": "notify-send 'claude asks'"}]}],
    },
    "statusLine": {"type": "command", "command": "echo hi"},
}


def _claude_file(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def _write(path: Path, data: Any) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, indent=4, ensure_ascii=False).encode("utf-8")
    path.write_bytes(raw)
    return raw


def _our_hooks(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [hook for group in data.get("hooks", {}).get("PermissionRequest", [])
            for hook in group["hooks"] if is_our_command(hook["command"])]


def test_install_keeps_every_other_key_and_hook(isolated_home: Path) -> None:
    path = _claude_file(isolated_home)
    original = _write(path, REAL_WORLD)
    assert install(Agent.CLAUDE) is Change.WRITTEN
    data = json.loads(path.read_text(encoding="utf-8"))
    [ours] = _our_hooks(data)
    assert ours["timeout"] == HOOK_TIMEOUT_SECONDS >= 600
    assert ours["command"] == hook_command(Agent.CLAUDE)
    without_ours = json.loads(path.read_text(encoding="utf-8"))
    without_ours["hooks"]["PermissionRequest"] = without_ours["hooks"]["PermissionRequest"][:1]
    assert without_ours == REAL_WORLD
    assert "你好 🚀" in path.read_text(encoding="utf-8")  # unicode stays readable
    assert path.with_name("settings.json" + BACKUP_SUFFIX).read_bytes() == original


def test_install_twice_changes_nothing_and_uninstall_restores_the_rest(
        isolated_home: Path) -> None:
    path = _claude_file(isolated_home)
    _write(path, REAL_WORLD)
    install(Agent.CLAUDE)
    after_first = path.read_bytes()
    assert install(Agent.CLAUDE) is Change.UNCHANGED
    assert path.read_bytes() == after_first
    assert uninstall(Agent.CLAUDE) is Change.WRITTEN
    assert json.loads(path.read_text(encoding="utf-8")) == REAL_WORLD
    assert uninstall(Agent.CLAUDE) is Change.UNCHANGED


def test_install_into_a_missing_file_and_uninstall_leaves_no_empty_hooks(
        isolated_home: Path) -> None:
    path = settings_path(Agent.QODER)
    assert path == isolated_home / ".qoder" / "settings.json"
    assert install(Agent.QODER) is Change.WRITTEN
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.with_name("settings.json" + BACKUP_SUFFIX).exists()
    assert status(Agent.QODER).installed and status(Agent.QODER).current
    uninstall(Agent.QODER)
    assert json.loads(path.read_text(encoding="utf-8")) == {}
    assert not status(Agent.QODER).installed


def test_an_older_install_is_replaced_not_duplicated(isolated_home: Path) -> None:
    path = _claude_file(isolated_home)
    stale = hook_command(Agent.CLAUDE, python="/old/venv/bin/python")
    _write(path, {"hooks": {"PermissionRequest": [{"hooks": [
        {"type": "command", "command": stale},
        {"type": "command", "command": "other-tool"}]}]}})
    before = status(Agent.CLAUDE)
    assert before.installed and not before.current
    install(Agent.CLAUDE)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [h["command"] for h in _our_hooks(data)] == [hook_command(Agent.CLAUDE)]
    assert {"type": "command", "command": "other-tool"} in data["hooks"]["PermissionRequest"][0][
        "hooks"]


def test_claude_config_dir_is_honoured(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    install(Agent.CLAUDE)
    assert _our_hooks(json.loads((tmp_path / "cfg" / "settings.json").read_text()))


@pytest.mark.parametrize("content", [
    b'{"model": "opus",, }', b"\xff\xfe not utf-8", b"[1, 2]",
    b'{"hooks": {"PermissionRequest": {"oops": 1}}}', b'{"hooks": "none"}'])
def test_a_file_that_does_not_parse_is_refused_and_untouched(
        isolated_home: Path, content: bytes) -> None:
    path = _claude_file(isolated_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(InstallError, match="untouched"):
        install(Agent.CLAUDE)
    with pytest.raises(InstallError, match="untouched"):
        uninstall(Agent.CLAUDE)
    assert path.read_bytes() == content
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    assert "untouched" in status(Agent.CLAUDE).describe()


def test_a_read_only_file_is_refused_with_a_clear_message(isolated_home: Path) -> None:
    path = _claude_file(isolated_home)
    original = _write(path, REAL_WORLD)
    path.chmod(0o444)
    with pytest.raises(InstallError, match="read-only"):
        install(Agent.CLAUDE)
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_a_symlinked_file_is_written_through_to_its_target(isolated_home: Path,
                                                           tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    target = dotfiles / "claude-settings.json"
    _write(target, REAL_WORLD)
    target.chmod(0o640)
    link = _claude_file(isolated_home)
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    install(Agent.CLAUDE)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert _our_hooks(json.loads(target.read_text(encoding="utf-8")))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert (dotfiles / ("claude-settings.json" + BACKUP_SUFFIX)).exists()


def test_the_hook_command_runs_this_interpreter_from_any_shell(tmp_path: Path) -> None:
    python = str(tmp_path / "my venv" / "bin" / "python3")
    command = hook_command(Agent.QODER, python=python)
    assert shlex.split(command) == [python, "-m", "qoder_desktop", "hook", "permission-request",
                                    "--agent", "qoder"]
    assert is_our_command(command)
    assert is_our_command("/usr/local/bin/qoder-desktop hook permission-request --agent claude")
    assert not is_our_command("echo qoder_desktop hook")
    assert not is_our_command("my-hook permission-request")


def test_the_command_line(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hooks", "status"]) == 0
    assert "not installed" in capsys.readouterr().out
    assert main(["hooks", "install", "--agent", "all"]) == 0
    out = capsys.readouterr().out
    assert "Claude Code: installed" in out and "Qoder CLI: installed" in out
    assert main(["hooks", "uninstall", "--agent", "qoder"]) == 0
    assert main(["hooks", "status"]) == 0
    out = capsys.readouterr().out
    assert "Claude Code: installed" in out and "Qoder CLI: not installed" in out
    _claude_file(isolated_home).write_text("{broken")
    assert main(["hooks", "install", "--agent", "claude"]) == 1
    captured = capsys.readouterr()
    assert "Claude Code: skipped:" in captured.out and "not valid JSON" in captured.out
    assert "nothing could be done" in captured.err


def test_the_hook_path_loads_no_qt_sdk_or_pydantic() -> None:
    code = ("import sys, qoder_desktop.__main__, qoder_desktop.terminal.hook_client, "
            "qoder_desktop.terminal.commands; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'shiboken6', 'qasync', 'claude_agent_sdk', 'qoder_agent_sdk', "
            "'pydantic', 'mcp', 'starlette')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_the_longest_wait_in_settings_ends_before_the_cli_kills_the_hook() -> None:
    from qoder_desktop.config.settings import TERMINAL_WAIT_MAX, Settings
    from qoder_desktop.terminal.hook_client import ANSWER_SLACK

    assert TERMINAL_WAIT_MAX + ANSWER_SLACK < HOOK_TIMEOUT_SECONDS
    assert Settings().terminal_wait_seconds <= TERMINAL_WAIT_MAX
