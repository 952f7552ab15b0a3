"""The generous side of shell analysis: what deny and ask rules look at.

`deny_candidates` splits the raw text on every shell metacharacter (ignoring quotes),
strips assignments and wrappers (`sudo`, `pkexec`, `timeout 5`, `env X=1`, `xargs`, ...;
the one list is `shell_commands`) and looks inside `sh -c '...'`, `tcsh -c`, `su -c`,
`eval` and the like, so that a deny or ask rule sees every command that could possibly
run, even in a line that `shell_words.analyze` rejects. Words come from the same lexer
as the strict side (`shell_words`), in its best-effort mode.

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
import re

from qoder_desktop.shell import commands as shell_commands
from qoder_desktop.shell import words as shell_words

_LOOSE_SPLIT = re.compile(r"\$\(|\$\{|<\(|>\(|&&|\|\||[;&|()`{}\n\r<>]")
_MAX_CANDIDATES = 512


def lenient_words(text: str) -> tuple[str, ...]:
    """Best-effort words of `text` after quote removal; never raises.

    Uses the strict lexer's best effort (it keeps going after a problem, so an
    unterminated quote runs to the end of the text); the words of every segment it
    finds are joined. With an unterminated quote, the text is split on whitespace with
    the quote characters removed instead.
    """
    analysis = shell_words.analyze(text)
    if shell_words.ShellProblem.UNTERMINATED_QUOTE in analysis.problems:
        return tuple(w for w in (part.replace("'", "").replace('"', "").replace("\\", "")
                                 for part in text.split()) if w)
    found = analysis.commands
    if len(found) == 1:
        return found[0].words
    return tuple(word for command in found for word in command.words)


def command_starts(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Where the real command may start once assignments and wrappers are dropped.

    See `shell_commands.command_starts`; the words themselves always come first.
    """
    return shell_commands.command_starts(words)


def loose_segments(command: str) -> tuple[str, ...]:
    """Split raw text on every shell metacharacter, ignoring quotes; never raises."""
    pieces = (p.strip() for p in _LOOSE_SPLIT.split(command))
    return tuple(p for p in pieces if p)


@functools.lru_cache(maxsize=1024)
def _runs_itself(head: str) -> bool:
    """True when a command named `head` is what runs, with nothing inside it: no
    folder in the name, no assignment, no wrapper, shell, `eval` or script runner (then
    `command_starts(words)` is `[words]` and `inner_scripts(words)` is empty)."""
    return ("/" not in head and head not in shell_commands.WRAPPERS
            and shell_commands.ASSIGNMENT.match(head) is None and head != "eval"
            and head not in shell_commands.SCRIPT_RUNNERS and not shell_commands.is_shell(head))


def plain_candidates(command: str, analysis: shell_words.ShellAnalysis,
                     ) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """`deny_candidates(command)` from the command's own analysis (`analysis` is
    `shell_words.analyze(command)`), for the common case only: one plain command with
    no surrounding whitespace that runs itself (see `_runs_itself`); None for any other
    line. Then the lexer's one segment is among the candidates already."""
    found = analysis.commands
    if len(found) != 1 or command != command.strip() or not shell_words.is_plain_line(command):
        return None
    words = found[0].words
    if not _runs_itself(words[0]):
        return None
    joined = " ".join(words)
    return ((command, words),) if joined == command else ((command, words), (joined, words))


def deny_candidates(command: str, _depth: int = 0) -> list[tuple[str, tuple[str, ...]]]:
    """Every (text, words) that a deny or ask rule should be tried against.

    Includes the whole stripped line, every segment the lexer finds and every loose
    segment, each also with wrappers and assignments stripped and with the command's
    folder dropped (`/bin/rm` → `rm`), and, recursively, the scripts that shells, `eval`,
    `su -c` and the like would run.
    """
    whole = command.strip() if isinstance(command, str) else ""
    if not whole:
        return []
    whole_words = lenient_words(whole)
    plain = shell_words.is_plain_line(whole)
    if plain and whole_words and _runs_itself(whole_words[0]):
        # The common case: one plain command that is no wrapper, assignment, shell or
        # script runner and names no folder: the line and its words spelled one space
        # apart are all there is (tests/rules/test_fast_paths.py checks this).
        joined = " ".join(whole_words)
        if joined == whole:
            return [(whole, whole_words)]
        return [(whole, whole_words), (joined, whole_words)]
    found: list[tuple[str, tuple[str, ...]]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()

    def add(text: str, words: tuple[str, ...]) -> None:
        key = (text, words)
        if key not in seen and len(found) < _MAX_CANDIDATES:
            seen.add(key)
            found.append(key)

    add(whole, whole_words)
    if plain:
        # Nothing to split on and no quotes: the lexer's one segment and the one loose
        # segment are both the line itself, with these words.
        segments = [(whole, whole_words)]
    else:
        segments = [(c.text, c.words) for c in shell_words.analyze(whole).commands]
        segments += [(s, lenient_words(s)) for s in loose_segments(whole)]
    for segment, words in dict.fromkeys(segments):  # a repeated segment adds nothing new
        add(segment, words)
        for variant in command_starts(words):
            add(" ".join(variant), variant)
            if _depth >= 3:
                continue
            for inner in shell_commands.inner_scripts(variant):
                for item in deny_candidates(inner, _depth + 1):
                    add(*item)
    return found
