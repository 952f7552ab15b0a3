"""`qoder-desktop hooks install|uninstall|status` as a person runs it (the real entry point).

Every run has a scratch HOME, CLAUDE_CONFIG_DIR and PATH: the real ~/.claude and ~/.qoder
are never touched.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.entry_point import run_cli, scratch_env

from qoder_desktop.terminal.install import is_our_command


def _fake_cli(bin_dir: Path, name: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text("#!/bin/sh\necho 1.0.0\n")
    script.chmod(0o755)


def _ours(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [hook["command"] for group in data.get("hooks", {}).get("PermissionRequest", [])
            for hook in group["hooks"] if is_our_command(hook["command"])]


def test_with_no_agent_on_this_machine_nothing_is_written_and_it_exits_1(
        tmp_path: Path) -> None:
    env = scratch_env(tmp_path)
    run = run_cli(env, "hooks", "install")
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("Claude Code: skipped: claude not found")
    assert lines[1].startswith("Qoder CLI: skipped: qodercli / qoder not found")
    assert "--agent claude" in lines[0] and "--agent qoder" in lines[1]
    assert "nothing could be done" in run.stderr
    assert list((tmp_path / "home").iterdir()) == []  # no ~/.claude, no ~/.qoder


def test_default_install_changes_the_agents_found_and_reports_each(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _fake_cli(bin_dir, "claude")
    claude_dir = tmp_path / "claude-config"
    env = scratch_env(tmp_path, (bin_dir,), CLAUDE_CONFIG_DIR=str(claude_dir))
    run = run_cli(env, "hooks", "install")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"Claude Code: installed ({claude_dir / 'settings.json'})",
        "Qoder CLI: skipped: qodercli / qoder not found (not on PATH, no "
        f"{tmp_path / 'home' / '.qoder'}); use --agent qoder to change its settings anyway",
    ]
    assert len(_ours(claude_dir / "settings.json")) == 1
    assert not (tmp_path / "home" / ".qoder").exists()

    again = run_cli(env, "hooks", "install")
    assert again.returncode == 0
    assert again.stdout.splitlines()[0] == (
        f"Claude Code: already installed ({claude_dir / 'settings.json'})")

    forced = run_cli(env, "hooks", "install", "--agent", "qoder")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.startswith("Qoder CLI: installed (")
    assert len(_ours(tmp_path / "home" / ".qoder" / "settings.json")) == 1


def test_a_broken_claude_settings_file_does_not_stop_the_qoder_hook(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _fake_cli(bin_dir, "qodercli")
    claude_dir = tmp_path / "claude-config"
    claude_dir.mkdir()
    broken = claude_dir / "settings.json"
    broken.write_bytes(b'{"model": "opus",\n')
    env = scratch_env(tmp_path, (bin_dir,), CLAUDE_CONFIG_DIR=str(claude_dir))
    qoder_file = tmp_path / "home" / ".qoder" / "settings.json"

    run = run_cli(env, "hooks", "install")
    assert run.returncode == 0, run.stderr  # the Qoder hook went in
    claude_line, qoder_line = run.stdout.splitlines()
    assert claude_line.startswith(f"Claude Code: skipped: {broken} is not valid JSON")
    assert "left untouched" in claude_line
    assert qoder_line == f"Qoder CLI: installed ({qoder_file})"
    assert broken.read_bytes() == b'{"model": "opus",\n'

    status = run_cli(env, "hooks", "status")
    assert status.returncode == 0
    assert status.stdout.splitlines()[1] == f"Qoder CLI: installed ({qoder_file})"
    assert "not valid JSON" in status.stdout.splitlines()[0]

    only_claude = run_cli(env, "hooks", "install", "--agent", "claude")
    assert only_claude.returncode == 1  # the one agent asked for could not be done
    assert "nothing could be done" in only_claude.stderr

    removed = run_cli(env, "hooks", "uninstall")
    assert removed.returncode == 0
    assert removed.stdout.splitlines()[1] == f"Qoder CLI: uninstalled ({qoder_file})"
    assert _ours(qoder_file) == []
    again = run_cli(env, "hooks", "uninstall")
    assert again.returncode == 0
    assert again.stdout.splitlines()[1] == f"Qoder CLI: already not installed ({qoder_file})"


def test_status_says_when_an_agent_is_not_on_this_machine(tmp_path: Path) -> None:
    env = scratch_env(tmp_path)
    run = run_cli(env, "hooks", "status")
    assert run.returncode == 0
    assert run.stdout.splitlines() == [
        f"Claude Code: not installed ({tmp_path / 'home' / '.claude' / 'settings.json'}); "
        "claude not found",
        f"Qoder CLI: not installed ({tmp_path / 'home' / '.qoder' / 'settings.json'}); "
        "qodercli / qoder not found",
    ]
