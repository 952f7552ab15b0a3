"""The generous side of shell analysis: what deny and ask rules look at.

`deny_candidates` splits the raw text on every shell metacharacter (ignoring quotes),
strips assignments and common wrappers (`sudo`, `timeout 5`, `env X=1`, ...) and looks
inside `sh -c '...'` and `eval`, so that a deny or ask rule sees every command that
could possibly run, even in a line that `shell_words.analyze` rejects.

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import re
import shlex

from qoder_desktop.shell.words import ASSIGNMENT

_LOOSE_SPLIT = re.compile(r"\$\(|\$\{|<\(|>\(|&&|\|\||[;&|()`{}\n\r]")
_WRAPPERS = frozenset({
    "sudo", "doas", "nohup", "nice", "ionice", "time", "timeout", "command", "builtin",
    "exec", "env", "stdbuf", "xargs", "chrt", "taskset", "unbuffer", "caffeinate", "!",
})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")


def lenient_words(text: str) -> tuple[str, ...]:
    """Best-effort words of `text` after quote removal; never raises.

    Falls back to whitespace splitting with quote characters removed when the text
    does not tokenize (for example an unterminated quote).
    """
    try:
        lexer = shlex.shlex(text, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        return tuple(lexer)
    except ValueError:
        return tuple(w for w in (part.replace("'", "").replace('"', "").replace("\\", "")
                                 for part in text.split()) if w)


def command_starts(words: tuple[str, ...], _depth: int = 0) -> list[tuple[str, ...]]:
    """Where the real command may start once assignments and wrappers are dropped.

    Best effort for deny rules: `sudo -n nice -n 5 rm -rf x` yields `rm -rf x` among
    others. A wrapper option may or may not take a separate value (`sudo -u root rm`),
    so both readings are returned. The words themselves always come first.
    """
    found = [words]
    rest = words
    while rest and ASSIGNMENT.match(rest[0]):
        rest = rest[1:]
    if rest != words:
        found.append(rest)
    if not rest or _depth > 4 or rest[0].rsplit("/", 1)[-1] not in _WRAPPERS:
        return found
    pos, after_option = 1, False
    while pos < len(rest) and (rest[pos].startswith("-") or _DURATION.match(rest[pos])
                               or ASSIGNMENT.match(rest[pos])):
        after_option = rest[pos].startswith("-")
        pos += 1
    starts = [pos, pos + 1] if after_option else [pos]
    for start in starts:
        if start < len(rest):
            for item in command_starts(rest[start:], _depth + 1):
                if item not in found:
                    found.append(item)
    return found


def loose_segments(command: str) -> tuple[str, ...]:
    """Split raw text on every shell metacharacter, ignoring quotes; never raises."""
    pieces = (p.strip() for p in _LOOSE_SPLIT.split(command))
    return tuple(p for p in pieces if p)


def deny_candidates(command: str, _depth: int = 0) -> list[tuple[str, tuple[str, ...]]]:
    """Every (text, words) that a deny or ask rule should be tried against.

    Includes the whole stripped line and every loose segment, each also with wrappers
    and assignments stripped (see `command_starts`) and with the command's folder
    dropped (`/bin/rm` → `rm`), and, recursively, the scripts of `sh -c SCRIPT` and
    of `eval ...`.
    """
    found: list[tuple[str, tuple[str, ...]]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()

    def add(text: str, words: tuple[str, ...]) -> None:
        key = (text, words)
        if key not in seen:
            seen.add(key)
            found.append(key)

    whole = command.strip() if isinstance(command, str) else ""
    if not whole:
        return found
    add(whole, lenient_words(whole))
    for segment in (whole, *loose_segments(whole)):
        words = lenient_words(segment)
        add(segment, words)
        variants = command_starts(words)
        for variant in list(variants):
            if variant and "/" in variant[0]:
                variants.append((variant[0].rsplit("/", 1)[-1], *variant[1:]))
        for variant in variants:
            add(" ".join(variant), variant)
            if _depth < 3 and variant:
                head = variant[0].rsplit("/", 1)[-1]
                inner: str | None = None
                if head in _SHELLS and "-c" in variant[1:]:
                    at = variant.index("-c", 1)
                    inner = variant[at + 1] if at + 1 < len(variant) else None
                elif head == "eval":
                    inner = " ".join(variant[1:])
                if inner:
                    for item in deny_candidates(inner, _depth + 1):
                        add(*item)
    return found
