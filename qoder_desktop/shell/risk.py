"""The risk lens: what a person should notice in a shell command before allowing it.

`analyze_command` tokenizes a Bash command (quotes, escapes, `$(…)`, backticks, process
substitution, comments) and reports spans of the original string that deserve a second
look: pipes (especially into an interpreter), redirections, `sudo`, recursive `rm`,
interpreters running inline code (`python -c`, `node -e`, `bash -c`, …), command
substitution, chained commands and paths outside the workspace.

This is a lens for people, not a security boundary: it never decides anything, it only
points, and it errs on the side of pointing at too much. A path argument (absolute, from
`~`, with `..` or a folder part) is outside the workspace as `domain.workspace` says: as
written and through its symbolic links. Qt-free.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from qoder_desktop.domain.workspace import inside_forms, path_forms
from qoder_desktop.shell import commands as shell_commands
from qoder_desktop.shell.risk_scan import CONTROL, Op, ShellScanner, Token, Word


class RiskKind(StrEnum):
    """What sort of thing a finding points at."""

    PIPE = "pipe"
    PIPE_TO_INTERPRETER = "pipe_to_interpreter"
    REDIRECTION = "redirection"
    SUDO = "sudo"
    RECURSIVE_DELETE = "recursive_delete"
    INTERPRETER = "interpreter"
    SUBSTITUTION = "substitution"
    OUTSIDE_WORKSPACE = "outside_workspace"
    CHAIN = "chain"


class Severity(StrEnum):
    """How loudly the view should point at a finding."""

    INFO = "info"
    WARNING = "warning"
    DANGER = "danger"


@dataclass(frozen=True)
class RiskFinding:
    """One span of a command worth a second look.

    Attributes:
        start: offset of the first character in the command string.
        end: offset just past the last character.
        kind: what was found.
        explanation: one plain sentence for the person deciding.
        severity: how loudly to show it.
    """

    start: int
    end: int
    kind: RiskKind
    explanation: str
    severity: Severity = Severity.WARNING


_ASSIGNMENT = shell_commands.ASSIGNMENT
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SUDO = shell_commands.PRIVILEGE
_SUDO_ARG_OPTIONS = shell_commands.PRIVILEGE_VALUE_OPTIONS
_WRAPPERS = shell_commands.PREFIX_WRAPPERS
_INLINE_FLAGS: list[tuple[re.Pattern[str], set[str], set[str]]] = [
    # (interpreter name, short flag letters, long options) that take inline code
    (re.compile(r"^(?:python|pypy)[0-9.]*$"), {"c"}, set()),
    (re.compile(r"^(?:node|nodejs|bun|deno)$"), {"e", "p"}, {"--eval", "--print"}),
    (re.compile(r"^perl[0-9.]*$"), {"e", "E"}, set()),
    (re.compile(r"^(?:ruby[0-9.]*|lua[0-9.]*|luajit|osascript|Rscript|julia|irb)$"), {"e"},
     set()),
    (re.compile(r"^php[0-9.]*$"), {"r"}, set()),
    (re.compile(r"^(?:pwsh|powershell)(?:\.exe)?$", re.I), {"c", "e", "ec"},
     {"-command", "-encodedcommand"}),
]
_HARMLESS_TARGETS = {"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}
_MAX_DEPTH = 12


def _interpreter_rule(name: str) -> tuple[set[str], set[str]] | None:
    for pattern, letters, longs in _INLINE_FLAGS:
        if pattern.match(name):
            return letters, longs
    return ({"c"}, set()) if shell_commands.is_shell(name) else None


class _Analyzer(ShellScanner):
    def __init__(self, cwd: str | None, extra_dirs: Sequence[str]) -> None:
        self.cwd = os.path.normpath(cwd) if cwd else None
        roots = [self.cwd] if self.cwd else []
        roots += [os.path.normpath(d) for d in extra_dirs if d]
        forms = [f for f in map(path_forms, roots) if f is not None]
        self.lexical_roots = [lexical for lexical, _real in forms]
        self.real_roots = [real for _lexical, real in forms]
        cwd_forms = path_forms(self.cwd)
        self.real_cwd = cwd_forms[1] if cwd_forms else None
        self.findings: list[RiskFinding] = []

    def add(self, start: int, end: int, kind: RiskKind, text: str,
            severity: Severity = Severity.WARNING) -> None:
        self.findings.append(RiskFinding(start, end, kind, text, severity))

    def substitution(self, text: str, start: int, end: int, inner: tuple[int, int],
                     offset: int, depth: int, what: str) -> None:
        self.add(offset + start, offset + end, RiskKind.SUBSTITUTION, what)
        self.run(text[inner[0]:inner[1]], offset + inner[0], depth + 1)

    # -- analysis ---------------------------------------------------------------------
    def run(self, text: str, offset: int, depth: int = 0) -> None:
        if depth > _MAX_DEPTH or not text.strip():
            return
        tokens = self.tokenize(text, offset, depth)
        commands: list[list[Token]] = [[]]
        separators: list[Op | None] = [None]
        for token in tokens:
            if isinstance(token, Op) and (CONTROL.fullmatch(token.op) or token.op == "\n"):
                commands.append([])
                separators.append(token)
            else:
                commands[-1].append(token)
        for index, command in enumerate(commands):
            separator = separators[index]
            name, head, args = self.command(command, offset, depth)
            if separator is None or separator.op in ("(", ")", "\n"):
                continue
            start, end = offset + separator.start, offset + separator.end
            if separator.op in ("|", "|&"):
                if name and _interpreter_rule(name) and self.reads_stdin(name, args):
                    last = args[-1] if args else head
                    self.add(start, offset + last.end if last else end,
                             RiskKind.PIPE_TO_INTERPRETER,
                             f"The output of the previous command is run as code by {name}.",
                             Severity.DANGER)
                else:
                    self.add(start, end, RiskKind.PIPE,
                             "A pipe feeds the output of one command into another.",
                             Severity.INFO)
            elif separator.op in ("&&", "||", ";", "&"):
                what = {"&&": "if the previous one succeeds", "||": "if the previous one fails",
                        ";": "after the previous one", "&": "while the previous one runs in "
                        "the background"}[separator.op]
                self.add(start, end, RiskKind.CHAIN, f"Runs another command {what}.",
                         Severity.INFO)

    @staticmethod
    def reads_stdin(name: str, args: list[Word]) -> bool:
        positional = [a for a in args if not a.value.startswith("-") or a.value == "-"]
        return not positional or any(a.value in ("-", "-s") for a in args)

    def command(self, tokens: list[Token], offset: int,
                depth: int) -> tuple[str | None, Word | None, list[Word]]:
        """Analyse one simple command; return its effective name and arguments."""
        words: list[Word] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if isinstance(token, Op):
                target = tokens[i + 1] if i + 1 < len(tokens) else None
                target_word = target if isinstance(target, Word) else None
                self.redirection(token, target_word, offset)
                i += 2 if target_word else 1
                continue
            words.append(token)
            i += 1
        index = 0
        while index < len(words) and _ASSIGNMENT.match(words[index].value):
            self.path(words[index], offset, words[index].value.split("=", 1)[1])
            index += 1
        name: str | None = None
        while index < len(words):
            word = words[index]
            name = os.path.basename(word.value)
            if name in _SUDO:
                self.add(offset + word.start, offset + word.end, RiskKind.SUDO,
                         f"{name} runs the command with another user's (usually root's) rights.",
                         Severity.DANGER)
            if name in _SUDO or name in _WRAPPERS:
                index += 1
                while index < len(words) and (words[index].value.startswith("-")
                                              or _ASSIGNMENT.match(words[index].value)):
                    takes_arg = words[index].value in _SUDO_ARG_OPTIONS and name in _SUDO
                    self.path(words[index], offset)
                    index += 2 if takes_arg else 1
                if name == "timeout" and index < len(words):
                    index += 1
                name = None
                continue
            break
        if name is None:
            return None, None, []
        head, args = words[index], words[index + 1:]
        for arg in args:
            self.path(arg, offset)
        self.special(name, head, args, offset, depth)
        return name, head, args

    def special(self, name: str, head: Word, args: list[Word], offset: int,
                depth: int) -> None:
        if name == "rm":
            for arg in args:
                value = arg.value
                if value == "--":
                    break
                if value == "--recursive" or (value.startswith("-") and not
                                              value.startswith("--") and set(value) & {"r", "R"}):
                    self.add(offset + head.start, offset + arg.end, RiskKind.RECURSIVE_DELETE,
                             "rm -r deletes whole directory trees, with no way to undo it.",
                             Severity.DANGER)
                    break
            return
        if name == "eval":
            end = args[-1].end if args else head.end
            self.add(offset + head.start, offset + end, RiskKind.INTERPRETER,
                     "eval runs its arguments as shell code.")
            for arg in args:
                self.nested(arg, offset, depth)
            return
        rule = _interpreter_rule(name)
        if rule is None:
            return
        letters, longs = rule
        for position, arg in enumerate(args):
            value = arg.value
            flag = value.lower() in longs or value in longs
            if not flag and value.startswith("-") and not value.startswith("--"):
                flag = bool(set(value[1:]) & letters) or value[1:].lower() in letters
            if flag:
                self.add(offset + head.start, offset + arg.end, RiskKind.INTERPRETER,
                         f"{name} {value} runs the code given on the command line.")
                code = next((a for a in args[position + 1:] if not a.value.startswith("-")),
                            None)
                if code is not None and shell_commands.is_shell(name):
                    self.nested(code, offset, depth)
                return

    def nested(self, word: Word, offset: int, depth: int) -> None:
        """Analyse a word that is itself shell code, when its text maps 1:1 to the raw."""
        raw = word.raw
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[1:-1] == word.value:
            self.run(word.value, offset + word.start + 1, depth + 1)
        elif raw == word.value:
            self.run(word.value, offset + word.start, depth + 1)

    def redirection(self, op: Op, target: Word | None, offset: int) -> None:
        symbol = op.op.lstrip("0123456789")
        end = offset + (target.end if target else op.end)
        start = offset + op.start
        value = target.value if target else ""
        if symbol in (">&", "<&") and (value.isdigit() or value == "-"):
            self.add(start, end, RiskKind.REDIRECTION,
                     "Redirects one output stream into another.", Severity.INFO)
            return
        if symbol.startswith("<<"):
            what = "Feeds the following text to the command as input."
            self.add(start, end, RiskKind.REDIRECTION, what, Severity.INFO)
            return
        if symbol in ("<", "<&"):
            self.add(start, end, RiskKind.REDIRECTION, f"Reads input from {value}.",
                     Severity.INFO)
        elif value in _HARMLESS_TARGETS:
            self.add(start, end, RiskKind.REDIRECTION, f"Sends output to {value}.",
                     Severity.INFO)
        else:
            verb = "Appends output to" if ">>" in symbol else "Writes output to"
            extra = "" if ">>" in symbol else " (replacing what the file held)"
            self.add(start, end, RiskKind.REDIRECTION, f"{verb} {value}{extra}.")
        if target is not None:
            self.path(target, offset)

    def path(self, word: Word, offset: int, value: str | None = None) -> None:
        """Point at `word` when its path (or the part after `=`) leaves the workspace."""
        text = word.value if value is None else value
        if value is None and text.startswith("-") and "=" in text:
            text = text.split("=", 1)[1]
        if not text or _URL.match(text) or text in _HARMLESS_TARGETS:
            return
        home = os.path.expanduser("~")
        for prefix in ("~", "$HOME", "${HOME}"):
            if text == prefix or text.startswith(prefix + "/"):
                text = home + text[len(prefix):]
                break
        else:
            if text != ".." and "/" not in text:
                return  # a plain name: no folder part that could lead elsewhere
        if self.cwd is None:
            if text.startswith("/"):
                self.add(offset + word.start, offset + word.end, RiskKind.OUTSIDE_WORKSPACE,
                         f"{word.value} is an absolute path; the session's folder is unknown.")
            return
        forms = path_forms(text, self.cwd, self.real_cwd)
        if forms is not None and inside_forms(*forms, self.lexical_roots, self.real_roots):
            return
        lexical, real = forms or (text, text)
        where = lexical if real == lexical else f"{lexical} (really {real})"
        self.add(offset + word.start, offset + word.end, RiskKind.OUTSIDE_WORKSPACE,
                 f"{where} is outside the workspace ({self.cwd}).")


def analyze_command(command: str, cwd: str | None = None,
                    extra_dirs: Sequence[str] = ()) -> list[RiskFinding]:
    """Point at the risky parts of a shell command.

    Args:
        command: the command exactly as the agent sent it.
        cwd: the session's working folder; paths are judged against it.
        extra_dirs: further folders the session may use (added directories).

    Returns:
        The findings, ordered by position; spans index into `command`.
    """
    analyzer = _Analyzer(cwd, extra_dirs)
    analyzer.run(command, 0)
    unique = {(f.start, f.end, f.kind): f for f in analyzer.findings}
    return sorted(unique.values(), key=lambda f: (f.start, f.end, f.kind.value))


def worst_severity(findings: Sequence[RiskFinding]) -> Severity | None:
    """The loudest severity among `findings`, or None when there are none."""
    order = [Severity.INFO, Severity.WARNING, Severity.DANGER]
    return max((f.severity for f in findings), key=order.index, default=None)
