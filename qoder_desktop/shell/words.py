"""Shell command analysis for the session-rule matcher and the risk lens.

`analyze` is a strict, quote-aware scanner for the POSIX shell subset that a rule may
auto-allow: simple commands joined by `&&`, `||`, `;`, `|` and `&`. Anything it cannot
fully account for (expansions, substitutions, redirections, subshells, brace groups,
comments, line continuations, newlines, invisible characters, assignments, reserved
words, unbalanced quotes) is reported as a `ShellProblem`; an analysis with problems is
never auto-allowed by a specifier rule. The scanner keeps going after a problem, so the
segments it returns are still a best effort for deny rules and for display.

The generous counterpart, for deny and ask rules, is `shell_candidates`.

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum

from qoder_desktop.shell.commands import ASSIGNMENT
from qoder_desktop.text.visible import has_hidden, is_hidden


class ShellProblem(StrEnum):
    """Why a command cannot be auto-allowed by a specifier rule."""

    EMPTY = "empty command"
    UNTERMINATED_QUOTE = "unterminated quote"
    TRAILING_BACKSLASH = "trailing backslash"
    LINE_CONTINUATION = "line continuation"
    NEWLINE = "newline"
    INVISIBLE_CHARACTER = "control or invisible character"
    VARIABLE_EXPANSION = "variable expansion ($)"
    PARAMETER_EXPANSION = "parameter expansion (${...})"
    COMMAND_SUBSTITUTION = "command substitution ($(...) or backticks)"
    PROCESS_SUBSTITUTION = "process substitution (<(...) or >(...))"
    SUBSHELL = "subshell or grouping parentheses"
    BRACE = "brace group or brace expansion"
    REDIRECTION = "redirection"
    HEREDOC = "here-document or here-string"
    COMMENT = "comment"
    NEGATION = "'!' (negation or history expansion)"
    ASSIGNMENT = "variable assignment"
    RESERVED_WORD = "shell reserved word"
    CASE_TERMINATOR = "case terminator (;; or ;&)"


#: Operators that join simple commands into a compound command.
SEPARATORS = ("&&", "||", ";", "|", "&")

RESERVED_WORDS = frozenset({
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "function", "time", "coproc", "in", "[[", "]]", "!", "{", "}",
})

_OK_SPACE = frozenset(" \t")
#: A run of characters that the scanner takes into the current word one by one anyway:
#: none of them starts a quote, an escape, an operator, a comment or a flagged character.
_PLAIN_RUN = re.compile(r"[^ \t\n\r'\"\\$`{}!()#<>;&|]+")
_FLAGGED_CHARS = {
    "$": ShellProblem.VARIABLE_EXPANSION, "`": ShellProblem.COMMAND_SUBSTITUTION,
    "{": ShellProblem.BRACE, "}": ShellProblem.BRACE, "!": ShellProblem.NEGATION,
}


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command (a segment) of a command line.

    Attributes:
        text: its source text, with surrounding whitespace removed.
        words: its words after quote removal (the argv the shell would build).
    """

    text: str
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """The result of `analyze`.

    Attributes:
        command: the analysed command line, unchanged.
        commands: the simple commands in order (best effort when there are problems).
        operators: the operators between them (`len(operators) == len(commands) - 1`
            when the line parsed cleanly).
        problems: every reason the line is not safely parseable, in order found.
    """

    command: str
    commands: tuple[SimpleCommand, ...]
    operators: tuple[str, ...]
    problems: tuple[ShellProblem, ...]

    @property
    def ok(self) -> bool:
        """True when the line is fully understood and free of risky syntax."""
        return not self.problems and bool(self.commands)

    @property
    def is_compound(self) -> bool:
        """True when the line has more than one simple command."""
        return len(self.commands) > 1

    def structure(self) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
        """The argv of every command plus the operators: equal structures run the same."""
        return tuple(c.words for c in self.commands), self.operators


def is_invisible(ch: str) -> bool:
    """True for control, format (bidi, zero-width) and unusual space characters.

    The definition is `text.visible.is_hidden`, the one the views use to show them.
    """
    return is_hidden(ch)


class _Scanner:
    """The state machine behind `analyze`; one instance per command line."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.problems: dict[ShellProblem, None] = {}
        self.commands: list[SimpleCommand] = []
        self.operators: list[str] = []
        self.words: list[str] = []
        self.raw_first: str | None = None
        self.cur: list[str] | None = None
        self.word_start = 0
        self.seg_start = 0

    def flag(self, problem: ShellProblem) -> None:
        self.problems[problem] = None

    def char(self, ch: str) -> None:
        if self.cur is None:
            self.cur = []
            self.word_start = self.i
        self.cur.append(ch)

    def end_word(self) -> None:
        if self.cur is not None:
            if not self.words:
                self.raw_first = self.s[self.word_start:self.i]
            self.words.append("".join(self.cur))
            self.cur = None

    def end_segment(self, op: str | None, op_len: int) -> None:
        self.end_word()
        text = self.s[self.seg_start:self.i].strip(" \t\n\r")
        if not self.words:
            self.flag(ShellProblem.EMPTY)
        else:
            first = self.raw_first or ""
            if ASSIGNMENT.match(first):
                self.flag(ShellProblem.ASSIGNMENT)
            if first in RESERVED_WORDS:
                self.flag(ShellProblem.RESERVED_WORD)
            self.commands.append(SimpleCommand(text, tuple(self.words)))
        self.words = []
        self.raw_first = None
        if op is not None:
            self.operators.append(op)
        self.i += op_len
        self.seg_start = self.i

    def single_quoted(self) -> None:
        end = self.s.find("'", self.i + 1)
        if self.cur is None:
            self.cur = []
            self.word_start = self.i
        if end < 0:
            self.flag(ShellProblem.UNTERMINATED_QUOTE)
            self.cur.append(self.s[self.i + 1:])
            self.i = len(self.s)
            return
        self.cur.append(self.s[self.i + 1:end])
        self.i = end + 1

    def double_quoted(self) -> None:
        s, j = self.s, self.i + 1
        if self.cur is None:
            self.cur = []
            self.word_start = self.i
        while j < len(s):
            ch = s[j]
            if ch == '"':
                self.i = j + 1
                return
            if ch == "\\" and j + 1 < len(s):
                nxt = s[j + 1]
                if nxt in "\n\r":
                    self.flag(ShellProblem.LINE_CONTINUATION)
                    j += 2
                    continue
                if nxt in '$`"\\':
                    self.cur.append(nxt)
                    j += 2
                    continue
            elif ch == "$":
                self.flag(_dollar_problem(s, j))
            elif ch == "`":
                self.flag(ShellProblem.COMMAND_SUBSTITUTION)
            elif ch in "\n\r":
                self.flag(ShellProblem.NEWLINE)
            elif ch == "!":
                self.flag(ShellProblem.NEGATION)
            self.cur.append(ch)
            j += 1
        self.flag(ShellProblem.UNTERMINATED_QUOTE)
        self.i = len(s)

    def redirection(self) -> None:
        s, i = self.s, self.i
        if self.cur is not None and all(c.isdigit() for c in self.cur):
            self.cur = None  # `2>`: the digits are a file descriptor, not a word
        else:
            self.end_word()
        self.flag(ShellProblem.REDIRECTION)
        nxt = s[i + 1] if i + 1 < len(s) else ""
        if nxt == "(":
            self.flag(ShellProblem.PROCESS_SUBSTITUTION)
        elif s[i] == "<" and nxt == "<":
            self.flag(ShellProblem.HEREDOC)
        j = i + 1
        while j < len(s) and s[j] in "<>&|":
            j += 1
        self.i = j

    def run(self) -> ShellAnalysis:
        s = self.s
        if has_hidden(s):
            self.flag(ShellProblem.INVISIBLE_CHARACTER)
        plain = _PLAIN_RUN.match
        while self.i < len(s):
            run = plain(s, self.i)
            if run is not None:  # ordinary characters: into the word in one step
                if self.cur is None:
                    self.cur = []
                    self.word_start = self.i
                self.cur.append(run.group())
                self.i = run.end()
                continue
            ch = s[self.i]
            two = s[self.i:self.i + 2]
            if ch in _OK_SPACE:
                self.end_word()
                self.i += 1
            elif ch in "\n\r":
                self.flag(ShellProblem.NEWLINE)
                self.end_segment("\n", 1)
            elif ch == "'":
                self.single_quoted()
            elif ch == '"':
                self.double_quoted()
            elif ch == "\\":
                if self.i + 1 >= len(s):
                    self.flag(ShellProblem.TRAILING_BACKSLASH)
                    self.i += 1
                elif s[self.i + 1] in "\n\r":
                    self.flag(ShellProblem.LINE_CONTINUATION)
                    self.i += 2
                else:
                    self.char(s[self.i + 1])
                    self.i += 2
            elif ch in _FLAGGED_CHARS:
                self.flag(_dollar_problem(s, self.i) if ch == "$" else _FLAGGED_CHARS[ch])
                self.char(ch)
                self.i += 1
            elif ch in "()":
                self.flag(ShellProblem.SUBSHELL)
                self.end_segment(ch, 1)
            elif ch == "#" and self.cur is None:
                self.flag(ShellProblem.COMMENT)
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif ch in "<>" or two in ("&>", "|&"):
                if two == "|&":
                    self.flag(ShellProblem.REDIRECTION)
                    self.end_segment("|", 2)
                else:
                    self.redirection()
            elif two in (";;", ";&"):
                self.flag(ShellProblem.CASE_TERMINATOR)
                self.end_segment(two, 2)
            elif two in ("&&", "||"):
                self.end_segment(two, 2)
            elif ch in ";|&":
                self.end_segment(ch, 1)
            else:
                self.char(ch)
                self.i += 1
        self.end_segment(None, 0)
        return ShellAnalysis(self.s, tuple(self.commands), tuple(self.operators),
                             tuple(self.problems))


def _dollar_problem(s: str, i: int) -> ShellProblem:
    nxt = s[i + 1] if i + 1 < len(s) else ""
    if nxt == "(":
        return ShellProblem.COMMAND_SUBSTITUTION
    if nxt == "{":
        return ShellProblem.PARAMETER_EXPANSION
    return ShellProblem.VARIABLE_EXPANSION


#: A line of plain words only (no quote, escape, operator, comment, newline or flagged
#: character): one simple command whose words are split at spaces and tabs.
_PLAIN_LINE = re.compile(r"[^\n\r'\"\\$`{}!()#<>;&|]*")


def is_plain_line(text: str) -> bool:
    """True when `text` holds no quote, escape, operator, comment, newline or character
    the analyzer flags: words and blanks only (it is one simple command, or empty)."""
    return _PLAIN_LINE.fullmatch(text) is not None


RECENT_LINES = 1024
"""How many command lines' analyses are kept. An agent repeats its commands within a
stretch of work, and rule texts are analyzed on every call, so they stay; most lines come
once (``touch s42.txt``): at ~0.5 KB an analysis, 4,096 of them held 2 MB of one-off
lines after a few thousand requests."""


@functools.lru_cache(maxsize=RECENT_LINES)
def _analyze_text(command: str) -> ShellAnalysis:
    if not is_plain_line(command):
        return _Scanner(command).run()
    # What the scanner finds in such a line, without going through it character by
    # character (tests/rules/test_fast_paths.py checks the two agree).
    problems: list[ShellProblem] = []
    if command.isascii() and command.isprintable():
        words = tuple(command.split())  # printable ASCII: its only blank is the space
    else:
        if has_hidden(command):
            problems.append(ShellProblem.INVISIBLE_CHARACTER)
        words = tuple(w for w in command.replace("\t", " ").split(" ") if w)
    if not words:
        problems.append(ShellProblem.EMPTY)
        return ShellAnalysis(command, (), (), tuple(problems))
    if ASSIGNMENT.match(words[0]):
        problems.append(ShellProblem.ASSIGNMENT)
    if words[0] in RESERVED_WORDS:
        problems.append(ShellProblem.RESERVED_WORD)
    simple = SimpleCommand(command.strip(" \t"), words)
    return ShellAnalysis(command, (simple,), (), tuple(problems))


def analyze(command: str) -> ShellAnalysis:
    """Split a command line into simple commands and list what makes it unsafe.

    The result is immutable, so analyses of recent command lines (and of rule texts,
    which are matched on every tool call) are cached.

    Args:
        command: the shell command line, as the Bash tool would run it.

    Returns:
        The analysis; `analysis.ok` is True only for a line made purely of simple
        commands with plain (optionally quoted) words joined by `&&`, `||`, `;`, `|`
        or `&`. An empty or whitespace-only line is never ok.
    """
    if not isinstance(command, str):
        return ShellAnalysis(str(command), (), (), (ShellProblem.EMPTY,))
    return _analyze_text(command)
