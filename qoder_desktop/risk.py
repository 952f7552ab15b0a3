"""The risk lens: what a person should notice in a shell command before allowing it.

`analyze_command` tokenizes a Bash command (quotes, escapes, `$(…)`, backticks, process
substitution, comments) and reports spans of the original string that deserve a second
look: pipes (especially into an interpreter), redirections, `sudo`, recursive `rm`,
interpreters running inline code (`python -c`, `node -e`, `bash -c`, …), command
substitution, chained commands and paths outside the workspace.

This is a lens for people, not a security boundary: it never decides anything, it only
points. It is lexical (paths are normalised, not resolved through symlinks) and it errs on
the side of pointing at too much. Qt-free.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


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


@dataclass
class _Word:
    start: int
    end: int
    value: str
    raw: str


@dataclass
class _Op:
    start: int
    end: int
    op: str


_Token = _Word | _Op

_REDIRECT = re.compile(r"\d*(?:>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)|&>>|&>")
_CONTROL = re.compile(r"\|\||\|&|&&|;;|\||&|;|\(|\)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SUDO = {"sudo", "doas", "su", "pkexec", "run0"}
_SUDO_ARG_OPTIONS = {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "-c"}
_WRAPPERS = {"env", "nice", "nohup", "time", "timeout", "exec", "command", "builtin", "xargs",
             "stdbuf", "ionice", "{", "!"}
_SHELLS = re.compile(r"^(?:ba|z|da|k|mk|c|tc|fi|a)?sh$")
_INLINE_FLAGS: list[tuple[re.Pattern[str], set[str], set[str]]] = [
    # (interpreter name, short flag letters, long options) that take inline code
    (_SHELLS, {"c"}, set()),
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
_PASTES = "{} runs another command and pastes its output into this one."


def _interpreter_rule(name: str) -> tuple[set[str], set[str]] | None:
    for pattern, letters, longs in _INLINE_FLAGS:
        if pattern.match(name):
            return letters, longs
    return None


def _match_close(text: str, i: int, opening: str, closing: str) -> int:
    """Index just past the `closing` that balances the `opening` at `text[i]`."""
    depth = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "'" and opening == "(":
            end = text.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


class _Analyzer:
    def __init__(self, cwd: str | None, extra_dirs: Sequence[str]) -> None:
        self.cwd = os.path.normpath(cwd) if cwd else None
        roots = [self.cwd] if self.cwd else []
        roots += [os.path.normpath(d) for d in extra_dirs if d]
        self.roots = roots
        self.findings: list[RiskFinding] = []

    def add(self, start: int, end: int, kind: RiskKind, text: str,
            severity: Severity = Severity.WARNING) -> None:
        self.findings.append(RiskFinding(start, end, kind, text, severity))

    # -- tokenizing -------------------------------------------------------------------
    def substitution(self, text: str, start: int, end: int, inner: tuple[int, int],
                     offset: int, depth: int, what: str) -> None:
        self.add(offset + start, offset + end, RiskKind.SUBSTITUTION, what)
        self.run(text[inner[0]:inner[1]], offset + inner[0], depth + 1)

    def scan_dollar(self, text: str, i: int, offset: int, depth: int) -> int:
        """Handle `$(`, `$((` and `${` at `i`; return the index after them (or i+1)."""
        if text.startswith("$((", i):
            end = _match_close(text, i + 1, "(", ")")
            self.run(text[i + 3:max(i + 3, end - 2)], offset + i + 3, depth + 1)
            return end
        if text.startswith("$(", i):
            end = _match_close(text, i + 1, "(", ")")
            self.substitution(text, i, end, (i + 2, max(i + 2, end - 1)), offset, depth,
                              _PASTES.format("$(…)"))
            return end
        if text.startswith("${", i):
            end = _match_close(text, i + 1, "{", "}")
            self.scan_quoted(text, i + 2, max(i + 2, end - 1), offset, depth)
            return end
        return i + 1

    def scan_backtick(self, text: str, i: int, offset: int, depth: int) -> int:
        j = i + 1
        while j < len(text) and text[j] != "`":
            j += 2 if text[j] == "\\" else 1
        end = min(j + 1, len(text))
        self.substitution(text, i, end, (i + 1, min(j, len(text))), offset, depth,
                          _PASTES.format("A backtick substitution"))
        return end

    def scan_quoted(self, text: str, i: int, stop: int, offset: int, depth: int) -> None:
        """Look for substitutions inside double quotes or `${…}` between i and stop."""
        while i < stop:
            char = text[i]
            if char == "\\":
                i += 2
            elif char == "$":
                i = self.scan_dollar(text, i, offset, depth)
            elif char == "`":
                i = self.scan_backtick(text, i, offset, depth)
            else:
                i += 1

    def tokenize(self, text: str, offset: int, depth: int) -> list[_Token]:
        tokens: list[_Token] = []
        i, n = 0, len(text)
        while i < n:
            char = text[i]
            if char in " \t\r":
                i += 1
            elif char == "\\" and text.startswith("\\\n", i):
                i += 2
            elif char == "\n":
                tokens.append(_Op(i, i + 1, "\n"))
                i += 1
            elif char == "#":
                end = text.find("\n", i)
                i = n if end < 0 else end
            elif char in "<>" and text.startswith("(", i + 1):
                end = _match_close(text, i + 1, "(", ")")
                self.substitution(text, i, end, (i + 2, max(i + 2, end - 1)), offset, depth,
                                  "A process substitution runs another command and passes "
                                  "its output or input as a file.")
                tokens.append(_Word(i, end, text[i:end], text[i:end]))
                i = end
            elif (match := _REDIRECT.match(text, i)) or (match := _CONTROL.match(text, i)):
                tokens.append(_Op(i, match.end(), match.group()))
                i = match.end()
            else:
                i = self.word(text, i, offset, depth, tokens)
        return tokens

    def word(self, text: str, i: int, offset: int, depth: int, tokens: list[_Token]) -> int:
        start, n = i, len(text)
        value: list[str] = []
        while i < n:
            char = text[i]
            if char in " \t\r\n;&|<>()":
                break
            if char == "\\":
                if text.startswith("\\\n", i):
                    i += 2
                    continue
                value.append(text[i + 1:i + 2])
                i += 2
            elif char == "'":
                end = text.find("'", i + 1)
                end = n if end < 0 else end
                value.append(text[i + 1:end])
                i = end + 1
            elif char == '"':
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                self.scan_quoted(text, i + 1, min(j, n), offset, depth)
                value.append(re.sub(r'\\([$`"\\\n])', r"\1", text[i + 1:min(j, n)]))
                i = j + 1
            elif char == "$":
                end = self.scan_dollar(text, i, offset, depth)
                value.append(text[i:end])
                i = end
            elif char == "`":
                end = self.scan_backtick(text, i, offset, depth)
                value.append(text[i:end])
                i = end
            else:
                value.append(char)
                i += 1
        i = min(i, n)
        tokens.append(_Word(start, i, "".join(value), text[start:i]))
        return i

    # -- analysis ---------------------------------------------------------------------
    def run(self, text: str, offset: int, depth: int = 0) -> None:
        if depth > _MAX_DEPTH or not text.strip():
            return
        tokens = self.tokenize(text, offset, depth)
        commands: list[list[_Token]] = [[]]
        separators: list[_Op | None] = [None]
        for token in tokens:
            if isinstance(token, _Op) and (_CONTROL.fullmatch(token.op) or token.op == "\n"):
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
    def reads_stdin(name: str, args: list[_Word]) -> bool:
        positional = [a for a in args if not a.value.startswith("-") or a.value == "-"]
        return not positional or any(a.value in ("-", "-s") for a in args)

    def command(self, tokens: list[_Token], offset: int,
                depth: int) -> tuple[str | None, _Word | None, list[_Word]]:
        """Analyse one simple command; return its effective name and arguments."""
        words: list[_Word] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if isinstance(token, _Op):
                target = tokens[i + 1] if i + 1 < len(tokens) else None
                target_word = target if isinstance(target, _Word) else None
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

    def special(self, name: str, head: _Word, args: list[_Word], offset: int,
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
                if code is not None and _SHELLS.match(name):
                    self.nested(code, offset, depth)
                return

    def nested(self, word: _Word, offset: int, depth: int) -> None:
        """Analyse a word that is itself shell code, when its text maps 1:1 to the raw."""
        raw = word.raw
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[1:-1] == word.value:
            self.run(word.value, offset + word.start + 1, depth + 1)
        elif raw == word.value:
            self.run(word.value, offset + word.start, depth + 1)

    def redirection(self, op: _Op, target: _Word | None, offset: int) -> None:
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

    def path(self, word: _Word, offset: int, value: str | None = None) -> None:
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
            relative_escape = text == ".." or text.startswith("../") or "/../" in text \
                or text.endswith("/..")
            if not text.startswith("/") and not relative_escape:
                return
        if self.cwd is None:
            if text.startswith("/"):
                self.add(offset + word.start, offset + word.end, RiskKind.OUTSIDE_WORKSPACE,
                         f"{word.value} is an absolute path; the session's folder is unknown.")
            return
        resolved = os.path.normpath(os.path.join(self.cwd, text))
        if any(resolved == root or resolved.startswith(root.rstrip("/") + "/")
               for root in self.roots):
            return
        self.add(offset + word.start, offset + word.end, RiskKind.OUTSIDE_WORKSPACE,
                 f"{resolved} is outside the workspace ({self.cwd}).")


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
