"""A second local user standing in for a remote host's account (see `sshd`).

`RemoteUser` is a fresh account that logs in with a key only, with its own HOME in a
folder every user can reach. Its HOMEs folder is named for the test run's process, so
`sweep_stale_users` can remove what a run that was killed before its teardown left.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ACCOUNT_TIMEOUT = 10.0
HOMES_PREFIX = "qd-remote-homes-"


def _account_tool(argv: list[str]) -> None:
    """Run useradd / usermod / userdel, again while another test run holds the lock on
    /etc/passwd (they fail at once instead of waiting for it)."""
    deadline = time.monotonic() + ACCOUNT_TIMEOUT
    while True:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode == 0 or (argv[0] == "userdel" and "does not exist" in done.stderr):
            return
        if "lock" not in done.stderr or time.monotonic() > deadline:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
        time.sleep(0.05)


@dataclass
class RemoteUser:
    """A fresh local account that logs in with the rig's client key only.

    Attributes:
        name: the account name.
        home: its HOME (its own, 0700), under a folder every user can reach.
    """

    name: str
    home: Path

    @property
    def uid(self) -> int:
        """The account's user id."""
        return self.home.stat().st_uid

    @classmethod
    def create(cls, base: Path, public_key: str) -> RemoteUser:
        """Add the account (``useradd``), its HOME and its ``authorized_keys``."""
        name = f"qdr{secrets.token_hex(5)}"
        home = base / name
        _account_tool(["useradd", "--no-create-home", "--home-dir", str(home),
                       "--shell", "/bin/sh", "--user-group", name])
        # A locked password ("!") makes sshd refuse even a key; "*" is key-only.
        _account_tool(["usermod", "-p", "*", name])
        user = cls(name, home)
        home.mkdir(mode=0o700)
        ssh_dir = home / ".ssh"
        ssh_dir.mkdir(mode=0o700)
        (ssh_dir / "authorized_keys").write_text(public_key, encoding="ascii")
        os.chmod(ssh_dir / "authorized_keys", 0o600)
        user.chown_tree(home)
        return user

    def chown_tree(self, path: Path) -> None:
        """Give `path` and everything in it to this user (files the test put there)."""
        ids = self._ids()
        os.lchown(path, *ids)
        for parent, dirs, files in os.walk(path):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(parent, name), *ids)

    def _ids(self) -> tuple[int, int]:
        record = pwd.getpwnam(self.name)
        return record.pw_uid, record.pw_gid

    def set_path(self, path: str) -> None:
        """The PATH of this user's ssh sessions (``~/.ssh/environment``), e.g. a folder
        without python3 to stand for a host that has none."""
        environment = self.home / ".ssh" / "environment"
        environment.write_text(f"PATH={path}\n", encoding="utf-8")
        os.chmod(environment, 0o600)
        self.chown_tree(environment.parent)

    def write(self, relative: str, text: str, mode: int = 0o600) -> Path:
        """Write a file into this user's HOME as the user would own it."""
        target = self.home / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        os.chmod(target, mode)
        for part in [*reversed(target.relative_to(self.home).parents), Path(relative)]:
            if str(part) != ".":
                os.lchown(self.home / part, *self._ids())
        return target

    def delete(self) -> None:
        """Remove the account and its HOME."""
        _account_tool(["userdel", "--force", self.name])
        shutil.rmtree(self.home, ignore_errors=True)


def sweep_stale_users(temp: Path) -> None:
    """Remove the test users and HOMEs that a test run which is gone left behind (it was
    killed before its teardown): their folder is named for the run's process id."""
    for base in temp.glob(f"{HOMES_PREFIX}*-*"):
        pid_text = base.name[len(HOMES_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # that run is still going
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        for record in pwd.getpwall():
            if record.pw_dir.startswith(f"{base}/"):
                _account_tool(["userdel", "--force", record.pw_name])
        shutil.rmtree(base, ignore_errors=True)
