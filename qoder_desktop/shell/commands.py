"""What runs inside a shell command: the one list of wrappers and shells.

Used by every part of the shell analysis: the strict allow side (`shell_words` and the
rule matcher), the generous deny/ask side (`shell_candidates`) and the risk lens
(`shell_risk`). Adding a wrapper here teaches all three at once.

- A *wrapper* runs another command given as its arguments (`sudo rm x`, `env X=1 rm`,
  `timeout 5 rm`, `xargs rm`, `pkexec rm`, ...). Where that command starts depends on the
  wrapper's options, so the generous side tries every position after the wrapper.
- A *shell* runs a script given with `-c` (`sh -c 'rm x'`, `tcsh -c ...`, `busybox sh -c`).
- A *script runner* takes shell code as an argument in some other way (`eval`,
  `su -c`, `runuser -c`, `flock -c`, `watch 'cmd'`, `ssh host 'cmd'`).

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
import re

#: Commands followed directly by the command they run, after their own options and
#: option values (`sudo -u root rm`, `timeout 5 rm`, `env X=1 rm`, `nice -n 5 rm`).
PREFIX_WRAPPERS = frozenset({
    "sudo", "doas", "pkexec", "run0", "su", "runuser", "env", "nohup", "timeout", "nice",
    "ionice", "stdbuf", "xargs", "time", "command", "builtin", "exec", "chroot", "unshare",
    "setsid", "nsenter", "flock", "chrt", "taskset", "unbuffer", "caffeinate", "busybox",
    "fakeroot", "firejail", "bwrap", "systemd-run", "strace", "ltrace", "valgrind",
    "catchsegv", "rlwrap", "sg", "numactl", "cgexec", "proot", "torsocks", "proxychains",
    "proxychains4", "dbus-launch", "dbus-run-session", "xvfb-run", "sshpass", "!", "{",
})
#: Commands that run another command given somewhere in their arguments: the prefix
#: wrappers, plus `find -exec`, `watch`, `parallel`, `at`, shell keywords before a
#: command in a loosely split line (`then rm x`), ...
WRAPPERS = PREFIX_WRAPPERS | frozenset({
    "find", "fd", "watch", "parallel", "script", "gdb", "newgrp", "tsp", "at", "batch",
    "then", "do", "else", "if", "while", "until", "(",
})
#: Commands that raise privileges (the risk lens points at them).
PRIVILEGE = frozenset({"sudo", "doas", "su", "pkexec", "run0", "runuser"})
#: Options of privilege wrappers that take a separate value (`sudo -u root rm`).
PRIVILEGE_VALUE_OPTIONS = frozenset({
    "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "-c",
})
#: Shells that run a script given with `-c`.
SHELLS = frozenset({
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "pdksh", "oksh", "loksh", "yash", "posh",
    "ash", "tcsh", "csh", "fish", "rbash", "elvish", "xonsh", "nu", "pwsh",
})
#: Commands whose arguments may be shell code (besides `shell -c`).
SCRIPT_RUNNERS = frozenset({"eval", "su", "runuser", "flock", "watch", "ssh", "parallel",
                            "script", "find", "xargs", "tsp", "at", "batch", "sshpass"})
#: Commands that change the shell's working folder.
FOLDER_CHANGERS = frozenset({"cd", "pushd", "popd", "chdir"})
#: Commands that read a file as shell code.
SOURCE_COMMANDS = frozenset({"source", "."})

#: A shell variable assignment at the start of a word (`X=1`, `A+=1`, `a[0]=1`).
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_SHELL_NAME = re.compile(r"^(?:[a-z]*sh|fish|pwsh|nu|elvish|xonsh)(?:[0-9.]*|\.exe)?$")


def command_name(word: str) -> str:
    """The bare name of a command word (`/usr/bin/rm` → `rm`, `bash5.2` stays)."""
    return word.rsplit("/", 1)[-1]


def is_shell(name: str) -> bool:
    """True for a shell that may run a `-c` script (`bash`, `/bin/sh`, `tcsh`, `zsh5`)."""
    base = command_name(name)
    return base in SHELLS or _SHELL_NAME.match(base) is not None


@functools.lru_cache(maxsize=1024)
def runs_other_code(name: str) -> bool:
    """True when the command runs another command or shell code it is given.

    Such a command is never allowed by a prefix or wildcard rule: the rule names the
    wrapper, not what it runs. Cached: command names repeat.
    """
    base = command_name(name)
    return (base in WRAPPERS or base in SCRIPT_RUNNERS or base in SOURCE_COMMANDS
            or is_shell(base))


def inner_scripts(words: tuple[str, ...]) -> list[str]:
    """Shell code this command may run, read generously (for deny and ask rules).

    `bash -c SCRIPT`, `bash -ec SCRIPT`, `su -c SCRIPT`, `eval ARGS`, `watch CMD`,
    `ssh host CMD`, ...: every argument that may be a script is returned, plus, for
    `eval`, all arguments joined.
    """
    if not words:
        return []
    head = command_name(words[0])
    args = words[1:]
    if head == "eval":
        return [" ".join(args), *args] if args else []
    if is_shell(head):
        takes_c = any((a.startswith("-") and not a.startswith("--") and "c" in a[1:])
                      or a == "--command" for a in args)
        return list(args) if takes_c else []
    if head in SCRIPT_RUNNERS:
        return list(args)
    return []


def command_starts(words: tuple[str, ...], limit: int = 64) -> list[tuple[str, ...]]:
    """Every place the command that really runs may start (for deny and ask rules).

    The words themselves come first; then, for leading assignments (`X=1 rm`) and for
    each wrapper (`sudo -u root nice -n 5 rm -rf x`), every later position, since where
    a wrapper's own options end depends on the wrapper. Folders are dropped from the
    command name (`/bin/rm` → `rm`). At most `limit` variants.
    """
    found: list[tuple[str, ...]] = []
    queue = [words]
    while queue and len(found) < limit:
        current = queue.pop(0)
        if not current or current in found:
            continue
        found.append(current)
        if "/" in current[0]:
            queue.append((command_name(current[0]), *current[1:]))
        if _is_assignment(current[0]):
            queue.append(current[1:])
        elif command_name(current[0]) in WRAPPERS:
            queue.extend(current[start:] for start in range(1, min(len(current), 10)))
    return found


def _is_assignment(word: str) -> bool:
    return ASSIGNMENT.match(word) is not None
