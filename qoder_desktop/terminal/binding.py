"""Which terminal session a hook request belongs to: bound to what its own hook proves.

Any process of the user can hold the hook token and send a request that names any
session id, folder and transcript. So a session is never bound to a claim made first:

- A transcript path is followed only when it has the shape the CLI itself writes:
  ``<projects>/<slug of the cwd>/<session id>.jsonl`` under the agent's projects folder
  (Claude Code: ``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``; qodercli:
  ``$QODER_CONFIG_DIR/projects`` or ``~/.qoder/projects``), the slug folder a real folder
  and the file a regular file of this user, neither of them a symlink.
- On Linux the kernel names the process on the other end of the socket (``SO_PEERCRED``):
  the agent CLI is the parent of our hook command, past the one ``sh -c`` the CLI runs
  hooks under. A session is bound to that process (pid and start time):
  a request from another process that names the same session id is not merged into it
  but shown as a session of its own, so it can neither withdraw the other's requests
  nor add lines to its transcript. When the bound process has ended (the person resumed
  the session in a new CLI), a request with the same transcript takes the binding over.
  The CLI's own environment (``/proc/<pid>/environ``) tells where its projects folder is,
  and its working folder (``/proc/<pid>/cwd``) is one the transcript may be named for.
- Elsewhere (no ``/proc``), requests are merged only when they name the same checked
  transcript (or both none).

What this cannot do: the process tree does not tell the CLI's hook from a command the
CLI's own agent runs (both are its children), so such a request lands in that session,
where it does come from; and any process of the user can still write into the real
transcript file itself. Binding keeps a claim from choosing *which* session and file.

Qt-free, stdlib only.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import stat
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoder_desktop.domain.hook_events import HOOK_COMMAND, TerminalAgent

log = logging.getLogger(__name__)

SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"})
"""Processes between the CLI and our hook command (the CLI runs hooks under ``sh -c``)."""
MAX_SLUG = 200
"""The CLI cuts longer folder slugs and adds a hash of the whole path."""
_LONG_SLUG_TAIL = re.compile(r"-[0-9a-z]{1,16}")
_CONFIG_ENV: dict[str, str] = {TerminalAgent.CLAUDE: "CLAUDE_CONFIG_DIR",
                               TerminalAgent.QODER: "QODER_CONFIG_DIR"}
_CONFIG_NAME: dict[str, str] = {TerminalAgent.CLAUDE: ".claude", TerminalAgent.QODER: ".qoder"}
_ENV_KEYS = frozenset({"HOME", *_CONFIG_ENV.values()})


@dataclass(frozen=True)
class CliProcess:
    """The process that ran a hook (Linux, from the socket's peer credentials)."""

    pid: int
    started: int
    """Its start time (clock ticks after boot): a reused pid is another process."""
    cwd: str | None
    environ: Mapping[str, str]
    """The few variables that say where its config is (HOME, *_CONFIG_DIR)."""

    @property
    def identity(self) -> tuple[int, int]:
        """What tells this process apart from every other, ever."""
        return self.pid, self.started

    def alive(self) -> bool:
        """True while this very process still runs."""
        found = _proc_stat(self.pid)
        return found is not None and found[2] == self.started


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(command name, parent pid, start time) of `pid`, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stream:
            text = stream.read().decode(errors="replace")
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        return name, int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _is_hook_command(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            argv = stream.read().split(b"\0")
    except OSError:
        return False
    return all(word.encode() in argv for word in HOOK_COMMAND)


def _environ(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as stream:
            raw = stream.read(1024 * 1024)
    except OSError:
        return {}
    found = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        name = key.decode(errors="replace")
        if sep and name in _ENV_KEYS:
            found[name] = os.fsdecode(value)
    return found


def peer_cli(sock: Any) -> CliProcess | None:
    """The agent CLI that ran the hook on the other end of `sock` (Linux), else None.

    The peer is our hook command (then the CLI is above it, past any shell) or, for a
    client that is not our hook command, the client itself.
    """
    peercred = getattr(socket, "SO_PEERCRED", None)
    if sock is None or peercred is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
        pid, uid, _gid = struct.unpack("3i", raw)
    except (OSError, struct.error):
        return None
    if uid != os.getuid() or pid <= 0:
        return None
    found = _proc_stat(pid)
    if found is not None and _is_hook_command(pid):
        pid = found[1]
        found = _proc_stat(pid)
        if found is not None and found[0] in SHELLS and found[1] > 1:
            pid = found[1]  # the one ``sh -c`` the CLI runs its hooks under
            found = _proc_stat(pid)
    if found is None or pid <= 1:
        return None
    try:
        cwd: str | None = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        cwd = None
    return CliProcess(pid, found[2], cwd, _environ(pid))


def slug(path: str) -> str:
    """The CLI's folder name for a working folder: every UTF-16 unit that is not an ASCII
    letter or digit becomes ``-`` (longer than `MAX_SLUG`: cut, plus a hash)."""
    encoded = path.encode("utf-16-le", errors="surrogatepass")
    units = (int.from_bytes(encoded[i:i + 2], "little") for i in range(0, len(encoded), 2))
    return "".join(chr(unit) if chr(unit).isascii() and chr(unit).isalnum() else "-"
                   for unit in units)


def _slug_matches(folder: str, cwd: str) -> bool:
    expected = slug(cwd)
    if len(expected) <= MAX_SLUG:
        return folder == expected
    head, tail = folder[:MAX_SLUG], folder[MAX_SLUG:]
    return head == expected[:MAX_SLUG] and _LONG_SLUG_TAIL.fullmatch(tail) is not None


def _folders_for(cwd: str) -> Iterable[str]:
    """`cwd` and the folders above it (the CLI names the file for the folder it started
    in, while the ``cwd`` it reports follows the agent's ``cd``)."""
    if not os.path.isabs(cwd):
        return
    current = os.path.normpath(cwd)
    while True:
        yield current
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def projects_dirs(agent: str, *environs: Mapping[str, str]) -> list[str]:
    """The agent's projects folders, as each environment (the CLI's, the app's) says."""
    found: list[str] = []
    for env in environs:
        config = env.get(_CONFIG_ENV.get(agent, ""), "").strip()
        home = env.get("HOME", "").strip()
        for base in (config, os.path.join(home, _CONFIG_NAME.get(agent, "")) if home else ""):
            if base and os.path.isabs(os.path.expanduser(base)):
                folder = os.path.realpath(os.path.join(os.path.expanduser(base), "projects"))
                if folder not in found:
                    found.append(folder)
    return found


def checked_transcript(agent: str, session_id: str, cwd: str, path: str,
                       cli: CliProcess | None,
                       environ: Mapping[str, str] | None = None) -> Path | None:
    """`path` (its projects folder resolved) when it is the transcript the CLI itself
    writes for this session, else None (with a log line saying why)."""
    reason = _transcript_problem(agent, session_id, cwd, path, cli,
                                 os.environ if environ is None else environ)
    if reason:
        log.warning("terminal hooks: not following the transcript %r of session %r: %s",
                    path, session_id, reason)
        return None
    folder, name = os.path.split(path)
    projects, slug_name = os.path.split(folder)
    return Path(os.path.realpath(projects)) / slug_name / name


def _transcript_problem(agent: str, session_id: str, cwd: str, path: str,
                        cli: CliProcess | None, environ: Mapping[str, str]) -> str:
    if not os.path.isabs(path) or os.path.normpath(path) != path:
        return "not a plain absolute path"
    folder, name = os.path.split(path)
    if "/" in session_id or session_id in (".", "..") or name != f"{session_id}.jsonl":
        return "its file is not named for the session"
    projects, slug_name = os.path.split(folder)
    roots = projects_dirs(agent, *([cli.environ] if cli else []), environ)
    if os.path.realpath(projects) not in roots:
        return "not in the agent's projects folder"
    cwds = [*_folders_for(cwd), *([cli.cwd] if cli and cli.cwd else [])]
    if not any(_slug_matches(slug_name, each) for each in cwds):
        return "its folder is not named for the session's working folder"
    for place, want in ((folder, stat.S_ISDIR), (path, stat.S_ISREG)):
        try:
            info = os.lstat(place)
        except OSError:
            return "it does not exist"
        if not want(info.st_mode):
            return "a symlink or not a regular file/folder"
        if info.st_uid != os.getuid():
            return "not owned by this user"
    return ""


@dataclass(frozen=True)
class Binding:
    """What a request proves about its session: the agent, the checked transcript and,
    on Linux, the CLI process that ran the hook."""

    agent: str
    transcript: Path | None
    cli: CliProcess | None
    host: str | None = None
    """The remote host whose own socket the request came in on (None: this machine).
    Requests from different hosts are never one session, whatever id they claim."""

    def agrees(self, other: Binding) -> bool:
        """True when `other` comes from the same session as this binding."""
        if self.agent != other.agent or self.host != other.host:
            return False
        if self.cli is not None and other.cli is not None:
            return self.cli.identity == other.cli.identity
        if self.cli is not None or other.cli is not None:
            return False
        return self.transcript == other.transcript


class SessionBindings:
    """The CLI's session ids and the app's sessions they are bound to (one for this
    machine's hook server and every remote host's, so no app id is given twice)."""

    def __init__(self) -> None:
        self._bound: dict[str, list[tuple[Binding, str]]] = {}
        self._used: set[str] = set()

    def resolve(self, session_id: str, binding: Binding) -> str:
        """The app's session id for a request naming `session_id` with `binding`.

        The first request binds the CLI's own id; a request that disagrees with every
        binding of that id gets a session of its own (``<id>~2``, …) unless the process a
        binding names has ended and the request shows the same transcript. An app id is
        never given twice, so no claimed id can land in another's session.
        """
        entries = self._bound.setdefault(session_id, [])
        for index, (bound, app_id) in enumerate(entries):
            if bound.agrees(binding):
                if bound.transcript is None and binding.transcript is not None:
                    entries[index] = (binding, app_id)
                return app_id
        for index, (bound, app_id) in enumerate(entries):
            if (bound.agent == binding.agent and bound.transcript is not None
                    and bound.transcript == binding.transcript and bound.cli is not None
                    and binding.cli is not None and not bound.cli.alive()):
                entries[index] = (binding, app_id)
                return app_id
        app_id, number = session_id, 1
        while app_id in self._used:
            number += 1
            app_id = f"{session_id}~{number}"
        if entries:
            log.warning("terminal hooks: a request names session %r but comes from another "
                        "process or transcript than the one that session is bound to; it "
                        "is shown as the separate session %r", session_id, app_id)
        entries.append((binding, app_id))
        self._used.add(app_id)
        return app_id

    def forget(self, app_id: str) -> None:
        """The app no longer lists the ended session `app_id`: drop its binding. The id
        stays given (never given twice): a later request naming the same CLI session
        gets a session of its own."""
        for session_id, entries in list(self._bound.items()):
            kept = [(bound, given) for bound, given in entries if given != app_id]
            if len(kept) != len(entries):
                if kept:
                    self._bound[session_id] = kept
                else:
                    del self._bound[session_id]
                return
