"""Sensitive files and folders: writes to them (and, for us, any use) always ask.

Claude Code asks about edits to these even under a matching allow rule ("... which is a
sensitive file"), so our own matcher never auto-allows a file tool or a shell command
that names one. The lists follow the bundled CLI's own (agent settings, version control,
shell start-up files, package-manager and build-tool configuration) plus a few folders
that hold secrets (`~/.ssh`, `~/.gnupg`, ...). Names are compared case-insensitively,
at any depth: `.git` anywhere in a path makes it sensitive.

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
import os

#: Files that are sensitive wherever they are (compared case-insensitively).
SENSITIVE_FILES = frozenset({
    ".gitconfig", ".gitmodules", ".gitattributes", ".bashrc", ".bash_profile", ".zshrc",
    ".zprofile", ".profile", ".zshenv", ".zlogin", ".zlogout", ".bash_login",
    ".bash_aliases", ".bash_logout", ".cshrc", ".tcshrc", ".login", ".logout", ".kshrc",
    ".mkshrc", ".inputrc", ".envrc", ".ripgreprc", ".mcp.json", ".claude.json",
    ".qoder.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnp.cjs", ".pnp.loader.mjs",
    ".pnp.js", ".pnp.data.json", ".pnpmfile.cjs", "bunfig.toml", ".bunfig.toml",
    ".bazelrc", ".bazelversion", ".bazeliskrc", ".pre-commit-config.yaml", "lefthook.yml",
    ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml", "gradle-wrapper.properties",
    "maven-wrapper.properties", ".devcontainer.json", "pyrightconfig.json", ".netrc",
    ".pgpass", ".pypirc", ".git-credentials", "authorized_keys",
})
#: Folders whose whole content is sensitive, wherever they are.
SENSITIVE_DIRS = frozenset({
    ".git", ".claude", ".qoder", ".vscode", ".idea", ".husky", ".cargo", ".devcontainer",
    ".yarn", ".mvn", ".ssh", ".gnupg", ".aws", ".kube", ".docker", ".azure",
})
#: Nested folders that are sensitive (as consecutive path components).
SENSITIVE_NESTED_DIRS = (
    (".config", "git"), (".config", "fish"), (".config", "gcloud"), (".config", "gh"),
    (".config", "systemd"), (".config", "autostart"), (".local", "share", "applications"),
)


def _fold(name: str) -> str:
    """Case-fold a path component as the CLI does (dotless i and long s included)."""
    return name.lower().replace("\u0131", "i").replace("\u017f", "s")


@functools.lru_cache(maxsize=4096)
def sensitive_part(path: str) -> str | None:
    """The sensitive part of an absolute or relative path, or None when it has none.

    Returns the path from the sensitive component on (`/w/.git/config` → `.git/config`,
    `/home/u/.bashrc` → `.bashrc`), which is what a reason shows. Cached: command
    words and folders repeat.
    """
    slashed = path.replace("\\", "/")
    if not slashed.startswith(".") and "/." not in slashed:
        # Every sensitive folder (and nested folder) starts with a dot, and case folding
        # never makes one: only the last component can be a sensitive file.
        last = slashed.rstrip("/").rsplit("/", 1)[-1]
        return last if last and _fold(last) in SENSITIVE_FILES else None
    parts = [p for p in slashed.split("/") if p]
    folded = [_fold(p) for p in parts]
    for index, name in enumerate(folded):
        if name in SENSITIVE_DIRS:
            return "/".join(parts[index:])
        for nested in SENSITIVE_NESTED_DIRS:
            if tuple(folded[index:index + len(nested)]) == nested:
                return "/".join(parts[index:])
    if folded and folded[-1] in SENSITIVE_FILES:
        return parts[-1]
    return None


def sensitive_reason(path: str, cwd: str) -> str | None:
    """Why using `path` must ask ("sensitive file .git/config"), or None.

    Both the path as written (made absolute against `cwd`) and the real path (symlinks
    resolved) are checked, so a link to a sensitive file is sensitive too.
    """
    if not path or "\x00" in path:
        return None
    lexical = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
    try:
        real = os.path.realpath(lexical)
    except (OSError, ValueError):
        real = lexical
    return resolved_reason(lexical, real)


def resolved_reason(lexical: str, real: str) -> str | None:
    """`sensitive_reason` for a path already made absolute (`lexical`) and resolved (`real`)."""
    for candidate in (lexical, real) if real != lexical else (lexical,):
        part = sensitive_part(candidate)
        if part is not None:
            return f"sensitive file {part}"
    return None
