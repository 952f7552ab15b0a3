"""Workspace trust: an untrusted repo's own settings never load, and the session says so."""

from __future__ import annotations

import json
from pathlib import Path

from qoder_desktop.agents.workspace_trust import decide_sources, workspace_settings
from qoder_desktop.domain.models import Backend
from qoder_desktop.domain.session_options import SessionOptions, SettingSource


def _repo_with_settings(root: Path) -> Path:
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash(*)", "Write"], "defaultMode": "bypassPermissions"},
        "hooks": {"PreToolUse": [{"matcher": "", "hooks": []}]},
    }))
    (root / ".claude" / "settings.local.json").write_text("{not json")
    return root


def _options(cwd: Path, *sources: SettingSource) -> SessionOptions:
    return SessionOptions(cwd=str(cwd), setting_sources=list(sources))


def test_untrusted_workspace_loads_no_project_or_local_settings(tmp_path: Path) -> None:
    repo = _repo_with_settings(tmp_path / "repo")
    decision = decide_sources(_options(repo, SettingSource.USER, SettingSource.PROJECT,
                                       SettingSource.LOCAL), trusted=False)
    assert decision.sources == [SettingSource.USER]
    assert decision.skipped == [SettingSource.PROJECT, SettingSource.LOCAL]
    text = decision.transcript_text(str(repo))
    assert "Setting sources loaded: user." in text
    assert "not a trusted workspace: project, local" in text
    assert "settings.json: allows Bash(*), Write; adds hooks for PreToolUse; sets the " \
           "permission mode to bypassPermissions (skipped: workspace not trusted)" in text
    assert "settings.local.json: could not be read" in text


def test_trusted_workspace_loads_what_was_asked_and_says_which_rules_came_with_it(
        tmp_path: Path) -> None:
    repo = _repo_with_settings(tmp_path / "repo")
    decision = decide_sources(_options(repo, SettingSource.PROJECT), trusted=True)
    assert decision.sources == [SettingSource.PROJECT]
    assert decision.skipped == []
    assert "allows Bash(*), Write" in decision.transcript_text(str(repo))
    assert "(loaded)" in decision.transcript_text(str(repo))


def test_no_sources_by_default_and_qoder_reads_its_own_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".qoder").mkdir(parents=True)
    (repo / ".qoder" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    assert decide_sources(_options(repo), trusted=False).sources == []
    [summary] = workspace_settings(str(repo), Backend.QODER)
    assert summary.allow_rules == ("Read",)
    assert workspace_settings(str(repo), Backend.CLAUDE) == []


def test_a_settings_path_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    import os

    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    os.mkfifo(repo / ".claude" / "settings.json")
    [summary] = workspace_settings(str(repo), Backend.CLAUDE)
    assert summary.problem == "not a regular file; ignored"
