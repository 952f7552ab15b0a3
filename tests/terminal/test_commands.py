"""``qoder-desktop hooks``, in process: a second install says "already" and writes nothing
twice, a named agent is changed found or not, uninstall removes ours from both. In the
test's own HOME and PATH. (Through the real entry point, with no agent, agents found on
PATH and a broken settings file: test_hooks_command.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qoder_desktop.terminal.commands import hooks_main
from qoder_desktop.terminal.install import is_our_command


@pytest.fixture
def home(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's HOME, with no agent CLI on PATH and no agent override variables."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for name in ("CLAUDE_CONFIG_DIR", "QODERCLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    return isolated_home


def _hooks(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = hooks_main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _ours(settings: Path) -> list[str]:
    if not settings.exists():
        return []
    data = json.loads(settings.read_text(encoding="utf-8"))
    return [hook["command"] for group in data.get("hooks", {}).get("PermissionRequest", [])
            for hook in group.get("hooks", []) if is_our_command(hook.get("command"))]


def test_install_changes_the_agent_that_is_there_and_again_says_already(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / ".claude").mkdir()  # Claude Code's settings folder: it is installed here
    settings = home / ".claude" / "settings.json"
    code, lines, _err = _hooks("install", capsys=capsys)
    assert code == 0
    assert lines[0] == f"Claude Code: installed ({settings})"
    assert lines[1].startswith("Qoder CLI: skipped: ")
    assert len(_ours(settings)) == 1
    assert not (home / ".qoder").exists()

    code, lines, _err = _hooks("install", capsys=capsys)
    assert code == 0 and lines[0] == f"Claude Code: already installed ({settings})"
    assert len(_ours(settings)) == 1  # not twice


def test_a_named_agent_is_changed_found_or_not(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _err = _hooks("install", "--agent", "qoder", capsys=capsys)
    assert code == 0
    assert lines == [f"Qoder CLI: installed ({home / '.qoder' / 'settings.json'})"]


def test_status_and_uninstall_look_at_both_agents(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claude = home / ".claude" / "settings.json"
    _hooks("install", "--agent", "claude", capsys=capsys)
    code, lines, _err = _hooks("status", capsys=capsys)
    assert code == 0
    assert lines[0] == f"Claude Code: installed ({claude})"
    assert lines[1].startswith("Qoder CLI: not installed (")
    assert lines[1].endswith("; qodercli / qoder not found")

    code, lines, _err = _hooks("uninstall", capsys=capsys)
    assert code == 0
    assert lines[0] == f"Claude Code: uninstalled ({claude})"
    assert lines[1].startswith("Qoder CLI: already not installed (")
    assert _ours(claude) == []
