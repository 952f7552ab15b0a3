"""The folders a differential case runs in, and how case text names them.

A case never names a real path: it writes ``{cwd}`` (the session's workspace),
``{elsewhere}`` (a folder outside the workspace), ``{extra}`` (a folder passed as an
add-dir) and ``{home}`` (the fake HOME the CLI and our checker both see). :func:`build`
makes these folders under a scratch root, with the files and symlinks the cases expect,
and :meth:`Sandbox.fill` replaces the placeholders in a rule or a tool input.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLACEHOLDERS = ("{cwd}", "{elsewhere}", "{extra}", "{home}")
# Privilege wrappers never run for real: the sandbox puts stand-ins first on PATH.
SHIMMED = ("sudo", "pkexec", "doas", "su")
SHIM = "#!/bin/sh\necho \"differential stand-in: $(basename \"$0\") not run\" >&2\nexit 1\n"


@dataclass(frozen=True)
class Sandbox:
    """One set of scratch folders; ``config`` is the CLI's CLAUDE_CONFIG_DIR."""

    root: Path
    workspace: Path
    elsewhere: Path
    extra: Path
    home: Path
    config: Path
    shims: Path

    def path_env(self) -> str:
        """``PATH`` with the stand-ins for privilege wrappers first."""
        return os.pathsep.join([str(self.shims), os.environ.get("PATH", os.defpath)])

    def values(self) -> dict[str, str]:
        """Placeholder → absolute path."""
        return {
            "{cwd}": str(self.workspace),
            "{elsewhere}": str(self.elsewhere),
            "{extra}": str(self.extra),
            "{home}": str(self.home),
        }

    def fill(self, value: Any) -> Any:
        """``value`` (deep copy) with every placeholder in its strings replaced."""
        if isinstance(value, str):
            for key, path in self.values().items():
                value = value.replace(key, path)
            return value
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value


def unfill_text(box: Sandbox, text: str) -> str:
    """``text`` with the sandbox's paths put back as placeholders (longest path first)."""
    pairs = sorted(box.values().items(), key=lambda kv: -len(kv[1]))
    for key, path in pairs:
        text = text.replace(path, key)
    return text.replace(str(box.root), "{root}")


def build(root: Path) -> Sandbox:
    """Create the folders, files and symlinks under ``root`` (which must not exist yet).

    The workspace holds a source tree, a ``.git/config``, and two symlinks that leave it:
    ``out-link`` (a folder link to ``elsewhere``) and ``notes-link.txt`` (a file link into
    it). ``shims`` holds stand-ins for sudo and friends. Files that cases write or edit
    are *not* created, so Write/Edit calls pass the CLI's "read it first" check and
    reach the permission decision.
    """
    root.mkdir(parents=True)
    box = Sandbox(
        root=root,
        workspace=root / "workspace",
        elsewhere=root / "elsewhere",
        extra=root / "extra",
        home=root / "home",
        config=root / "claude-config",
        shims=root / "shims",
    )
    for folder in (box.workspace / "src" / "pkg", box.workspace / ".git", box.elsewhere,
                   box.extra / "docs", box.home / ".ssh", box.config, box.shims):
        folder.mkdir(parents=True, exist_ok=True)
    files = {
        box.workspace / "README.md": "# sandbox\n",
        box.workspace / "src" / "main.py": "print('main')\n",
        box.workspace / "src" / "pkg" / "util.py": "VALUE = 1\n",
        box.workspace / ".git" / "config": "[core]\n\tbare = false\n",
        box.elsewhere / "notes.txt": "notes outside the workspace\n",
        box.extra / "docs" / "guide.md": "# guide\n",
        box.home / ".profile": "# profile\n",
        box.home / ".ssh" / "known_hosts": "",
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    for name in SHIMMED:
        shim = box.shims / name
        shim.write_text(SHIM, encoding="utf-8")
        shim.chmod(0o755)
    os.symlink(box.elsewhere, box.workspace / "out-link")
    os.symlink(box.elsewhere / "notes.txt", box.workspace / "notes-link.txt")
    os.symlink(box.workspace / "src" / "pkg", box.workspace / "deep-link")
    return box
