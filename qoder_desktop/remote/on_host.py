"""The script `deploy` runs on a remote host (``python3 -`` over ssh): deploy, remove or
report our hook there.

It is sent with the text of `terminal.install` and of `domain.hook_events`, which it
imports (run here as modules, so the settings of
the agents on the host are edited with exactly the rules of a local install: atomic,
with a backup, idempotent, invalid JSON left untouched, only our entry removed), the
standalone hook and what to do (`PAYLOAD`: the action, the agents, the token). It prints
one JSON object: what it did, per file and per agent.

Runs on the host's python3 (≥ 3.8), standard library only: it must not import
``qoder_desktop``, and it must not use syntax or library calls newer than 3.8.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import pathlib
import shlex
import stat
import sys
import types
from typing import Any

FOLDER_MODE = 0o700
HOOK_MODE = 0o700
TOKEN_MODE = 0o600


class HostProblem(Exception):
    """Something on the host stops the action; the message says what, for people."""


_HOOK_EVENTS_IMPORT = "from qoder_desktop.domain import hook_events\n"


def _install_module(source: str, hook_events_source: str) -> Any:
    """`terminal.install`, from its text and that of `domain.hook_events`, which it is
    handed instead of importing it (`StrEnum` supplied on pythons before 3.11)."""
    if not hasattr(enum, "StrEnum"):

        class StrEnum(str, enum.Enum):  # noqa: UP042 - runs on pythons before 3.11
            """`enum.StrEnum` of Python 3.11, for older pythons."""

            def __str__(self) -> str:
                return str(self.value)

        enum.StrEnum = StrEnum  # type: ignore[misc,assignment]
    if _HOOK_EVENTS_IMPORT not in source:
        raise HostProblem("terminal.install no longer imports hook_events as the deploy "
                          "script expects")
    hook_events = _run_module("hook_events", hook_events_source)
    return _run_module("install", source.replace(_HOOK_EVENTS_IMPORT, ""),
                       hook_events=hook_events)


def _run_module(name: str, source: str, **names: Any) -> Any:
    """Run `source` as a new module (knowing `names`) and return it."""
    module = types.ModuleType("qoder_desktop_remote_" + name)
    module.__dict__.update(names)
    sys.modules[module.__name__] = module
    exec(compile(source, "<qoder-desktop " + name + ">", "exec"), module.__dict__)
    return module


def _private_folder(folder: str, create: bool) -> bool:
    """Check (and make) our folder: a real folder of this user, 0700. False: absent.

    Raises:
        HostProblem: it is a symlink, not a folder, or someone else's (left untouched).
    """
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return False
        os.mkdir(folder, FOLDER_MODE)
        info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise HostProblem(f"{folder} is not a folder (a symlink or a file); it was left "
                          "untouched. Move it away, then try again.")
    if info.st_uid != os.getuid():
        raise HostProblem(f"{folder} belongs to another user; it was left untouched.")
    if stat.S_IMODE(info.st_mode) != FOLDER_MODE:
        os.chmod(folder, FOLDER_MODE)
    return True


def _write_file(install: Any, path: str, content: str, mode: int) -> str:
    """Write `content` to `path` atomically with `mode` (`install.write_atomically`):
    "written" or "unchanged"."""
    try:
        info = os.lstat(path)
        with open(path, encoding="utf-8") as stream:
            same = stream.read() == content
        if same and stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == mode:
            return "unchanged"
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    install.write_atomically(pathlib.Path(path), content.encode("utf-8"), mode)
    return "written"


def _hook_version(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("HOOK_VERSION = "):
                    value = line[len("HOOK_VERSION = "):].strip()
                    return value.strip("'\"")
    except (OSError, UnicodeDecodeError):
        return ""
    return ""


def hook_command(install: Any, hook: str, agent: str) -> str:
    """The command the agent's CLI runs: this python3 and the standalone hook."""
    return shlex.join([sys.executable, hook, *install.hook_events.hook_arguments(agent)])


def _paths(payload: dict[str, Any]) -> tuple[str, str, str]:
    """(our folder, the hook, the token) in this user's HOME.

    Raises:
        HostProblem: HOME is not an absolute path.
    """
    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):
        raise HostProblem(f"HOME is not an absolute path ({home!r}); nothing was changed.")
    folder = os.path.join(home, payload["folder"])
    return (folder, os.path.join(folder, payload["hook_name"]),
            os.path.join(folder, payload["token_name"]))


def deploy(payload: dict[str, Any], install: Any, hook_text: str) -> dict[str, Any]:
    """Put the hook and the token in the private folder and our entry in the settings."""
    folder, hook, token = _paths(payload)
    _private_folder(folder, create=True)
    result: dict[str, Any] = {"folder": folder, "python": sys.executable,
                              "hook": _write_file(install, hook, hook_text, HOOK_MODE),
                              "token": _write_file(install, token, payload["token"] + "\n",
                                                   TOKEN_MODE),
                              "agents": {}}
    for name in payload["agents"]:
        agent = install.Agent(name)
        path = str(install.settings_path(agent))
        try:
            change = install.install(agent, command=hook_command(install, hook, name))
        except install.InstallError as exc:
            result["agents"][name] = {"path": path, "problem": str(exc)}
            continue
        result["agents"][name] = {"path": path, "change": str(change)}
    return result


def remove(payload: dict[str, Any], install: Any) -> dict[str, Any]:
    """Take our entry out of the settings; then the hook, the token and the folder.

    The hook and the token stay when an agent's settings could not be changed (they
    still name the hook), so a CLI there never runs a missing file.
    """
    folder, hook, token = _paths(payload)
    result: dict[str, Any] = {"folder": folder, "agents": {}, "files": "absent"}
    for agent in install.Agent:
        path = str(install.settings_path(agent))
        try:
            change = install.uninstall(agent)
        except install.InstallError as exc:
            result["agents"][agent.value] = {"path": path, "problem": str(exc)}
            continue
        result["agents"][agent.value] = {"path": path, "change": str(change)}
    if any("problem" in entry for entry in result["agents"].values()):
        result["files"] = "kept"
        return result
    if not _private_folder(folder, create=False):
        return result
    for path in (hook, token):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    try:
        os.rmdir(folder)
        result["files"] = "removed"
    except OSError:
        result["files"] = "folder kept (it holds other files)"
    return result


def report(payload: dict[str, Any], install: Any) -> dict[str, Any]:
    """Whether the hook, the token and our entries are there."""
    folder, hook, token = _paths(payload)
    result: dict[str, Any] = {"folder": folder, "hook": None, "token": False, "agents": {}}
    if _private_folder(folder, create=False):
        if os.path.isfile(hook):
            result["hook"] = _hook_version(hook) or "unknown"
        result["token"] = os.path.isfile(token)
    for agent in install.Agent:
        found = install.status(agent, command=hook_command(install, hook, agent.value))
        result["agents"][agent.value] = {"path": str(found.path), "installed": found.installed,
                                         "current": found.current, "problem": found.problem}
    return result


def main(payload: dict[str, Any], install_source: str, hook_events_source: str,
         hook_text: str) -> int:
    """Run `payload["action"]` and print its result as one JSON object."""
    try:
        install = _install_module(install_source, hook_events_source)
        action = payload["action"]
        if action == "deploy":
            result = deploy(payload, install, hook_text)
        elif action == "remove":
            result = remove(payload, install)
        else:
            result = report(payload, install)
    except HostProblem as exc:
        result = {"error": str(exc)}
    except OSError as exc:
        result = {"error": f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")}
    sys.stdout.write(json.dumps(result) + "\n")
    return 0
