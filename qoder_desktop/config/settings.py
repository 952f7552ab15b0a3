"""User settings: a pydantic model kept as JSON in the platform config folder.

Loading never fails: a missing file gives the defaults; a broken file or a bad value
gives the defaults for what is broken, keeps the original as
``settings.json.broken-<timestamp>`` and says what was wrong. Secrets never live here
(see `secrets`). Remembered window state is kept apart, in `AppPaths.state_dir`.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from qoder_desktop.config.private_file import write_private
from qoder_desktop.domain.models import Backend, PermissionMode, RuleValue
from qoder_desktop.domain.workspace import is_inside

TERMINAL_WAIT_MAX = 840
"""The longest wait for a terminal prompt: below the installed hook's timeout (900 s)."""
SETTINGS_VERSION = 1
"""The settings format this app reads and writes."""


def _tool_rule(text: str) -> str:
    return str(RuleValue.parse(text))


def _workspace(text: str) -> str:
    expanded = os.path.expanduser(text.strip())
    if not os.path.isabs(expanded):
        raise ValueError("a trusted workspace must be an absolute path")
    return os.path.normpath(expanded)


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


ToolRule = Annotated[str, AfterValidator(_tool_rule)]
WorkspacePath = Annotated[str, AfterValidator(_workspace)]


class NotificationSettings(BaseModel):
    """When and how the desktop announces new requests."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = True
    only_when_inactive: bool = True
    sound: bool = False


AWAY_PORT = 8765
"""Away mode's HTTPS port (the certificate page listens on the next one)."""


class AwaySettings(BaseModel):
    """Away mode (a paired phone answers while the person is away): where it listens,
    for how long, and whether it starts with the app."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    on_at_start: bool = False
    """Turn Away mode on when the app starts (it is off by default)."""
    host: str | None = None
    """The address the person chose last (an IP literal of this machine)."""
    port: int = Field(default=AWAY_PORT, ge=1024, le=65534)
    time_limit_hours: float = Field(default=4.0, gt=0, le=72)
    """Away mode turns itself off after this long."""
    off_when_back: bool = True
    """Turn Away mode off when the desk sees the person again (a key, a click, an
    answer given at the desk)."""
    back_after_idle_s: int = Field(default=60, ge=0, le=3600)
    """A key or click counts as being back only after the desk saw none for this long
    (setting Away mode up at the desk does not end it)."""
    list_loopback: bool = False
    """Developers and tests: offer 127.0.0.1 and ::1 in the address list too."""

    @field_validator("host", mode="before")
    @classmethod
    def _blank_host(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip() or None
        return value


class Settings(BaseModel):
    """Everything the user can set. Unknown fields are errors, so typos get reported."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    version: int = SETTINGS_VERSION
    default_backend: Backend = Backend.CLAUDE
    default_permission_mode: PermissionMode = PermissionMode.DEFAULT
    default_model: str | None = None
    default_allowed_tools: list[ToolRule] = Field(default_factory=list)
    default_disallowed_tools: list[ToolRule] = Field(default_factory=list)
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    trusted_workspaces: list[WorkspacePath] = Field(default_factory=list)
    anthropic_base_url: str | None = None
    gateway_port: int = Field(default=8765, ge=1024, le=65535)
    terminal_wait_seconds: int = Field(default=180, ge=10, le=TERMINAL_WAIT_MAX)
    """How long a terminal agent's prompt waits for an answer here before the terminal
    asks instead (below the hook's own timeout)."""
    away: AwaySettings = Field(default_factory=AwaySettings)

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if not 1 <= value <= SETTINGS_VERSION:
            raise ValueError(f"unknown settings version {value} (this app writes "
                             f"version {SETTINGS_VERSION})")
        return value

    @field_validator("default_permission_mode")
    @classmethod
    def _safe_default_mode(cls, value: PermissionMode) -> PermissionMode:
        if value.needs_confirmation:
            raise ValueError(
                f"'{value.value}' cannot be the default permission mode: {value.risk_text}. "
                "Choose it for a single session instead.")
        return value

    @field_validator("default_model", "anthropic_base_url", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value

    @field_validator("anthropic_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("must be an http:// or https:// URL with a host")
        return value

    @field_validator("default_allowed_tools", "default_disallowed_tools",
                     "trusted_workspaces")
    @classmethod
    def _no_duplicates(cls, value: list[str]) -> list[str]:
        return _dedupe(value)

    def is_trusted(self, path: str | os.PathLike[str]) -> bool:
        """True if `path` (absolute, `~` expanded) is a trusted workspace or inside one,
        as written and with symlinks resolved (`domain.workspace.is_inside`)."""
        return is_inside(os.path.expanduser(os.fspath(path)), self.trusted_workspaces)


@dataclass(frozen=True)
class SettingsLoad:
    """What `load_settings` found.

    Attributes:
        settings: usable settings (defaults wherever the file was broken).
        problems: one human-readable line per thing that was wrong.
        broken_copy: where the original file was kept, if it had problems.
    """

    settings: Settings
    problems: tuple[str, ...] = ()
    broken_copy: Path | None = None

    @property
    def ok(self) -> bool:
        """True when the file (or its absence) gave no problems."""
        return not self.problems


def load_settings(path: str | os.PathLike[str]) -> SettingsLoad:
    """Read settings from `path`, repairing what is broken without losing anything.

    A file with invalid values is copied to ``<name>.broken-<timestamp>`` and rewritten
    with the repaired settings; a file that is not JSON at all is moved there.
    """
    file = Path(path)
    try:
        text = file.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return SettingsLoad(Settings())
    except OSError as exc:
        return SettingsLoad(Settings(), (f"Cannot read the settings file {file}: "
                                         f"{exc.strerror or exc}; using the defaults.",))
    except UnicodeDecodeError:
        return _unreadable(file, "it is not UTF-8 text")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _unreadable(file, f"it is not valid JSON (line {exc.lineno}, column "
                                 f"{exc.colno}: {exc.msg})")
    if not isinstance(data, dict):
        return _unreadable(file, "it must hold a JSON object")
    settings, problems = _validate_leniently(data)
    if not problems:
        return SettingsLoad(settings)
    broken = _broken_name(file)
    try:
        shutil.copy2(file, broken)
        os.chmod(broken, 0o600)
        save_settings(settings, file)
    except OSError as exc:
        problems.append(f"Could not keep or repair {file}: {exc}.")
        return SettingsLoad(settings, tuple(problems))
    problems.append(f"The original file was kept as {broken}; the repaired settings "
                    "were saved.")
    return SettingsLoad(settings, tuple(problems), broken)


def save_settings(settings: Settings, path: str | os.PathLike[str]) -> None:
    """Write settings atomically (temp file, fsync, rename), readable by the owner only."""
    write_private(Path(path), settings.model_dump_json(indent=2) + "\n")


def _broken_name(file: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = file.with_name(f"{file.name}.broken-{stamp}")
    number = 1
    while candidate.exists():
        candidate = file.with_name(f"{file.name}.broken-{stamp}-{number}")
        number += 1
    return candidate


def _unreadable(file: Path, why: str) -> SettingsLoad:
    broken = _broken_name(file)
    try:
        os.replace(file, broken)
    except OSError as exc:
        return SettingsLoad(Settings(), (f"The settings file {file} is unusable ({why}) and "
                                         f"could not be moved aside: {exc}. Using the "
                                         "defaults.",))
    return SettingsLoad(
        Settings(),
        (f"The settings file {file} is unusable: {why}. Using the default settings; the "
         f"file was kept as {broken}.",),
        broken)


_SECRET_WORDS = ("key", "token", "secret", "password")


def _describe(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "(settings)"
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        hint = ""
        if any(word in where.lower() for word in _SECRET_WORDS):
            hint = " Secrets belong in the system keyring, never in settings.json."
        return f"{where}: unknown setting, ignored.{hint}"
    if error["loc"] and isinstance(error["loc"][-1], int):
        return f"{where}: {message}; this entry is ignored."
    return f"{where}: {message}; using the default instead."


def _sort_key(loc: tuple[Any, ...]) -> list[tuple[int, Any]]:
    return [(0, part) if isinstance(part, int) else (1, str(part)) for part in loc]


def _drop(data: dict[str, Any], loc: tuple[Any, ...]) -> dict[str, Any]:
    """Remove the value at `loc` (or failing that its top-level field) from `data`."""
    if not loc:
        return {}
    try:
        container: Any = data
        for part in loc[:-1]:
            container = container[part]
        del container[loc[-1]]
    except (KeyError, IndexError, TypeError):
        data.pop(str(loc[0]), None)
    return data


def _validate_leniently(raw: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Validate, dropping each invalid value (so its default applies) until it passes."""
    data = copy.deepcopy(raw)
    problems: list[str] = []
    for _attempt in range(50):
        try:
            return Settings.model_validate(data), problems
        except ValidationError as exc:
            errors = exc.errors()
        problems.extend(_describe(error) for error in errors)
        for loc in sorted((tuple(e["loc"]) for e in errors), key=_sort_key, reverse=True):
            data = _drop(data, loc)
    problems.append("Too many problems; using the default settings.")
    return Settings(), problems
