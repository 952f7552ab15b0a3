"""Workspace trust: a repository's own settings files may answer for the user.

A cloned repo's `.claude/settings.json` (or `.qoder/settings.json`) can pre-allow tools
or add hooks that return "allow". Until the user trusts a workspace, sessions there do
not load the project and local setting sources, and the session says what it skipped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoder_desktop.domain.models import Backend
from qoder_desktop.domain.session_options import SessionOptions, SettingSource

MAX_SETTINGS_BYTES = 1_000_000
WORKSPACE_SOURCES = (SettingSource.PROJECT, SettingSource.LOCAL)


@dataclass(frozen=True)
class SettingsFileSummary:
    """What one workspace settings file would change: its allow rules and hooks."""

    path: Path
    source: SettingSource
    allow_rules: tuple[str, ...] = ()
    hook_events: tuple[str, ...] = ()
    default_mode: str | None = None
    problem: str | None = None

    def describe(self) -> str:
        """One plain-text line for the transcript."""
        if self.problem:
            return f"{self.path.name}: {self.problem}"
        parts = []
        if self.allow_rules:
            parts.append("allows " + ", ".join(self.allow_rules))
        if self.hook_events:
            parts.append("adds hooks for " + ", ".join(self.hook_events))
        if self.default_mode:
            parts.append(f"sets the permission mode to {self.default_mode}")
        return f"{self.path.name}: " + ("; ".join(parts) if parts else "no permission changes")


@dataclass(frozen=True)
class TrustDecision:
    """Which setting sources a session loads, and what was held back."""

    sources: list[SettingSource]
    skipped: list[SettingSource] = field(default_factory=list)
    files: list[SettingsFileSummary] = field(default_factory=list)

    def transcript_text(self, cwd: str) -> str:
        """The note the session view shows at its start ("" when there is nothing to say:
        no settings loaded, none held back, no settings files in the folder)."""
        if not (self.sources or self.skipped or self.files):
            return ""
        loaded = ", ".join(source.value for source in self.sources) or "none"
        lines = [f"Setting sources loaded: {loaded}."]
        if self.skipped:
            lines.append(f"Not loaded because {cwd} is not a trusted workspace: "
                         + ", ".join(s.value for s in self.skipped)
                         + ". Trust it in Settings to load them.")
        for summary in self.files:
            if summary.source in self.sources:
                state = "loaded"
            elif summary.source in self.skipped:
                state = "skipped: workspace not trusted"
            else:
                state = "not loaded: source not selected"
            lines.append(f"  {summary.describe()} ({state})")
        return "\n".join(lines)


def _settings_dir(backend: Backend) -> str:
    return ".qoder" if backend is Backend.QODER else ".claude"


def summarize_settings_file(path: Path, source: SettingSource) -> SettingsFileSummary | None:
    """Read the permission-relevant parts of one settings file (None if it does not exist)."""
    try:
        info = path.stat()
    except OSError:
        return None
    if not path.is_file():
        return SettingsFileSummary(path, source, problem="not a regular file; ignored")
    if info.st_size > MAX_SETTINGS_BYTES:
        return SettingsFileSummary(path, source, problem="larger than 1 MB; not read")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return SettingsFileSummary(path, source, problem=f"could not be read ({exc})")
    if not isinstance(data, dict):
        return SettingsFileSummary(path, source, problem="not a JSON object")
    raw_permissions = data.get("permissions")
    permissions: dict[str, Any] = raw_permissions if isinstance(raw_permissions, dict) else {}
    raw_allow = permissions.get("allow")
    allow: list[Any] = raw_allow if isinstance(raw_allow, list) else []
    raw_hooks = data.get("hooks")
    hooks: dict[str, Any] = raw_hooks if isinstance(raw_hooks, dict) else {}
    mode = permissions.get("defaultMode")
    return SettingsFileSummary(
        path, source, allow_rules=tuple(str(rule) for rule in allow),
        hook_events=tuple(sorted(str(name) for name in hooks)),
        default_mode=str(mode) if mode else None)


def workspace_settings(cwd: str, backend: Backend) -> list[SettingsFileSummary]:
    """The project and local settings files of a workspace, summarized."""
    folder = Path(cwd) / _settings_dir(backend)
    found = []
    for name, source in (("settings.json", SettingSource.PROJECT),
                         ("settings.local.json", SettingSource.LOCAL)):
        summary = summarize_settings_file(folder / name, source)
        if summary is not None:
            found.append(summary)
    return found


def decide_sources(options: SessionOptions, trusted: bool) -> TrustDecision:
    """The setting sources a session may load given whether its workspace is trusted."""
    requested = list(dict.fromkeys(options.setting_sources))
    skipped = [] if trusted else [s for s in requested if s in WORKSPACE_SOURCES]
    sources = [s for s in requested if s not in skipped]
    files = workspace_settings(os.path.abspath(options.cwd), options.backend)
    return TrustDecision(sources=sources, skipped=skipped, files=files)
