"""Install our `PermissionRequest` hook into the user settings of Claude Code and qodercli.

Both CLIs run every command hook under ``hooks.PermissionRequest`` of their user
settings right before they show their own permission prompt (Claude Code:
``$CLAUDE_CONFIG_DIR/settings.json`` or ``~/.claude/settings.json``; qodercli:
``~/.qoder/settings.json``). Our entry runs ``<this python> -m qoder_desktop hook
permission-request --agent <agent>``, which asks the running app (see `hook_client`).

Editing a person's settings file is done carefully: every other key and hook is kept,
installing twice changes nothing, a file that does not parse (or whose ``hooks`` are not
the expected shape) is refused and left byte for byte as it was, a read-only file is
refused, a symlinked file is written through to its target, and each write goes to a
temporary file that replaces the original (same permissions) after a copy of the
original was kept as ``settings.json.bak-qoder-desktop``. Stdlib only (runs from the
command line in a blink).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from qoder_desktop.domain import hook_events

HOOK_EVENT = hook_events.HookEvent.PERMISSION_REQUEST
HOOK_TIMEOUT_SECONDS = 900
"""The CLI kills the hook after this long; it must exceed the app's longest wait."""
BACKUP_SUFFIX = ".bak-qoder-desktop"
_ENTRY_POINT_NAMES = ("qoder-desktop", "qoder-desktop.exe", "qoder-desktop-hook.py")
"""The programs our hook command runs: the app's entry point, or the standalone hook file
that `qoder-desktop remote add` puts on a remote host."""
_NEW_FILE_MODE = 0o600


Agent = hook_events.TerminalAgent
"""The terminal agents whose settings we can edit (`domain.hook_events.TerminalAgent`)."""


class InstallError(RuntimeError):
    """The settings file could not be changed; the message says why, for people."""


def settings_path(agent: Agent, environ: Mapping[str, str] | None = None) -> Path:
    """The user settings file the agent's CLI reads."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    if agent is Agent.CLAUDE:
        config_dir = env.get("CLAUDE_CONFIG_DIR", "").strip()
        return Path(config_dir).expanduser() / "settings.json" if config_dir else (
            home / ".claude" / "settings.json")
    return home / ".qoder" / "settings.json"


def hook_command(agent: Agent, python: str | None = None) -> str:
    """The shell command of our hook: this interpreter, so no venv needs to be active."""
    return shlex.join([python or sys.executable, "-m", "qoder_desktop",
                       *hook_events.hook_arguments(agent.value)])


def is_our_command(command: object) -> bool:
    """True for a hook command that runs ``qoder_desktop hook permission-request``."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for index in range(1, len(words) - 1):
        if tuple(words[index:index + 2]) == hook_events.HOOK_COMMAND:
            before = words[index - 1]
            if before == "qoder_desktop" or os.path.basename(before) in _ENTRY_POINT_NAMES:
                return True
    return False


def our_entry(agent: Agent, python: str | None = None,
              command: str | None = None) -> dict[str, Any]:
    """The matcher group we add under ``hooks.PermissionRequest`` (`command`: another
    hook command than this interpreter's, e.g. the standalone hook on a remote host)."""
    return {"matcher": "*", "hooks": [{"type": "command",
                                       "command": command or hook_command(agent, python),
                                       "timeout": HOOK_TIMEOUT_SECONDS}]}


# -- reading and checking -----------------------------------------------------------------


def _load(path: Path) -> tuple[dict[str, Any], bytes | None]:
    """(settings, original bytes or None when the file does not exist)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise InstallError(f"Could not read {path}: {exc.strerror or exc}") from exc
    if not raw.strip():
        return {}, raw
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); it was left untouched. "
                           "Fix it, then try again.") from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; it was left untouched.")
    return data, raw


def _permission_groups(data: dict[str, Any], path: Path) -> list[Any]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"'hooks' in {path} is not an object; it was left untouched.")
    groups = hooks.get(HOOK_EVENT, [])
    if not isinstance(groups, list):
        raise InstallError(f"'hooks.{HOOK_EVENT}' in {path} is not a list; it was left "
                           "untouched.")
    return groups


def _without_ours(groups: list[Any]) -> list[Any]:
    """The matcher groups with our commands taken out (groups left empty are dropped)."""
    kept: list[Any] = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            kept.append(group)
            continue
        remaining = [hook for hook in inner
                     if not (isinstance(hook, dict) and is_our_command(hook.get("command")))]
        if len(remaining) == len(inner):
            kept.append(group)
        elif remaining:
            kept.append({**group, "hooks": remaining})
    return kept


def _our_commands(groups: list[Any]) -> list[str]:
    found = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        for hook in inner if isinstance(inner, list) else []:
            if isinstance(hook, dict) and is_our_command(hook.get("command")):
                found.append(str(hook["command"]))
    return found


def _with_groups(data: dict[str, Any], groups: list[Any]) -> dict[str, Any]:
    result = dict(data)
    hooks = dict(result.get("hooks", {}))
    if groups:
        hooks[HOOK_EVENT] = groups
    else:
        hooks.pop(HOOK_EVENT, None)
    if hooks:
        result["hooks"] = hooks
    else:
        result.pop("hooks", None)
    return result


# -- writing ------------------------------------------------------------------------------


def _write(path: Path, data: dict[str, Any], original: bytes | None) -> None:
    """Write `data` to `path` (through a symlink) atomically, keeping a backup."""
    target = Path(os.path.realpath(path))
    if original is not None:
        mode = stat.S_IMODE(target.stat().st_mode)
        if not mode & stat.S_IWUSR:
            raise InstallError(f"{target} is read-only; it was left untouched. Make it "
                               "writable, then try again.")
    else:
        mode = _NEW_FILE_MODE
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if original is not None:
            write_atomically(target.with_name(target.name + BACKUP_SUFFIX), original, mode)
        write_atomically(target, text.encode("utf-8"), mode)
    except OSError as exc:
        raise InstallError(f"Could not write {target}: {exc.strerror or exc}") from exc


def write_atomically(target: Path, content: bytes, mode: int) -> None:
    """Replace `target` with `content` (mode `mode`): a temporary file beside it, flushed
    to the disk, then renamed over it; on a failure `target` is left as it was. The
    deploy script on a remote host writes the hook and its token with it too."""
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


# -- the three commands ---------------------------------------------------------------------


class Change(StrEnum):
    """What install/uninstall did."""

    WRITTEN = "written"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class HookStatus:
    """Whether our hook is in one agent's settings.

    Attributes:
        agent: the agent.
        path: its user settings file.
        installed: our hook is there.
        current: it runs this very interpreter (False: installed by another install).
        problem: why the file could not be read, or "".
    """

    agent: Agent
    path: Path
    installed: bool
    current: bool
    problem: str = ""

    def describe(self) -> str:
        """One sentence for people."""
        if self.problem:
            return f"{self.agent.label}: {self.problem}"
        if not self.installed:
            return f"{self.agent.label}: not installed ({self.path})"
        if not self.current:
            return (f"{self.agent.label}: installed by another Qoder Desktop install; "
                    f"install again to use this one ({self.path})")
        return f"{self.agent.label}: installed ({self.path})"


def install(agent: Agent, *, environ: Mapping[str, str] | None = None,
            python: str | None = None, command: str | None = None) -> Change:
    """Add our hook to the agent's user settings (idempotent); `command` replaces the
    default hook command (see `our_entry`).

    Raises:
        InstallError: the file is invalid, read-only or could not be written.
    """
    path = settings_path(agent, environ)
    data, original = _load(path)
    groups = _permission_groups(data, path)
    updated = _with_groups(data, [*_without_ours(groups), our_entry(agent, python, command)])
    if updated == data:
        return Change.UNCHANGED
    _write(path, updated, original)
    return Change.WRITTEN


def uninstall(agent: Agent, *, environ: Mapping[str, str] | None = None) -> Change:
    """Take our hook (only ours) out of the agent's user settings.

    Raises:
        InstallError: the file is invalid, read-only or could not be written.
    """
    path = settings_path(agent, environ)
    data, original = _load(path)
    if original is None:
        return Change.UNCHANGED
    groups = _permission_groups(data, path)
    if not _our_commands(groups):
        return Change.UNCHANGED
    _write(path, _with_groups(data, _without_ours(groups)), original)
    return Change.WRITTEN


def status(agent: Agent, *, environ: Mapping[str, str] | None = None,
           python: str | None = None, command: str | None = None) -> HookStatus:
    """Whether our hook is installed for `agent` (never raises); `current` compares with
    `command` when given (see `our_entry`)."""
    path = settings_path(agent, environ)
    try:
        data, _original = _load(path)
        commands = _our_commands(_permission_groups(data, path))
    except InstallError as exc:
        return HookStatus(agent, path, False, False, str(exc))
    expected = command or hook_command(agent, python)
    return HookStatus(agent, path, bool(commands), expected in commands)
