"""Run a command on a remote host with the person's own ``ssh``.

Everything about reaching the host (port, user, keys, agent, ``ProxyJump``,
``ControlMaster``) comes from their OpenSSH configuration, or from the file given with
``--ssh-config`` (``ssh -F``). We add only ``BatchMode=yes`` (never ask for a password or
a passphrase: a command line without a terminal must not hang) and a connect timeout.
What we send (scripts, the token) goes on ``ssh``'s stdin, never on a command line.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

SSH_PROGRAM = "ssh"
CONNECT_TIMEOUT = 15
"""Seconds ``ssh`` may take to reach the host."""
RUN_TIMEOUT = 120.0
"""Seconds one remote step may take in all."""
SSH_FAILED = 255
"""``ssh``'s own exit status when it could not connect or log in."""


class Unreachable(RuntimeError):
    """``ssh`` could not reach or log in to the host; the message is ssh's reason."""


@dataclass(frozen=True)
class RemoteResult:
    """What a remote command did.

    Attributes:
        status: its exit status.
        stdout: what it printed.
        stderr: what it (or the remote shell) said on stderr.
    """

    status: int
    stdout: str
    stderr: str

    def last_error(self) -> str:
        """The last non-empty line of stderr (the reason), or ""."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def ssh_prefix(ssh_config: str | None = None) -> list[str]:
    """The ``ssh`` argv up to the destination."""
    prefix = [SSH_PROGRAM]
    if ssh_config:
        prefix += ["-F", ssh_config]
    return [*prefix, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}", "-T"]


def run_remote(destination: str, command: Sequence[str], *, stdin: str = "",
               ssh_config: str | None = None, timeout: float = RUN_TIMEOUT) -> RemoteResult:
    """Run `command` (quoted for the remote shell) on `destination` with `stdin`.

    Raises:
        Unreachable: ``ssh`` could not connect or log in (its reason), or took too long.
    """
    argv = [*ssh_prefix(ssh_config), destination, shlex.join(command)]
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except FileNotFoundError:
        raise Unreachable("the ssh program was not found; install OpenSSH's client "
                          "(e.g. apt-get install openssh-client)") from None
    except subprocess.TimeoutExpired:
        raise Unreachable(f"no answer within {timeout:g} s") from None
    result = RemoteResult(done.returncode, done.stdout, done.stderr)
    if done.returncode == SSH_FAILED:
        raise Unreachable(explain_failure(result.last_error(), destination))
    return result


_HINTS = (
    ("Host key verification failed",
     "connect once with `ssh {host}` in a terminal to check and accept its host key"),
    ("Permission denied",
     "ssh may not ask for a password or a passphrase here (BatchMode): use a key that "
     "has none, or load it into your ssh-agent (ssh-add)"),
    ("Could not resolve hostname",
     "check the name, or add a Host entry for it to your ssh config"),
)


def explain_failure(reason: str, host: str = "HOST") -> str:
    """ssh's reason, with what to do about it when it is a usual one."""
    if not reason:
        return "ssh failed without saying why"
    for needle, hint in _HINTS:
        if needle in reason:
            return f"{reason} ({hint.format(host=host)})"
    return reason
