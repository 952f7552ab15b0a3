"""A quote-aware shell tokenizer with exact spans, for the risk lens (`risk.py`).

It splits a command into words (with their unquoted value and raw span) and operators
(control operators and redirections), and reports every command substitution
(`$(…)`, backticks, `<(…)`/`>(…)`, also inside double quotes and `${…}`) to the
subclass through `substitution(...)`, so the subclass can point at it and analyse its
contents. It is lexical and lenient: unterminated quotes run to the end. Qt-free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Word:
    """A shell word: its span in the text, its value after quote removal, its raw text."""

    start: int
    end: int
    value: str
    raw: str


@dataclass
class Op:
    """A control operator (`|`, `&&`, `;`, newline, …) or a redirection (`>`, `2>&`, …)."""

    start: int
    end: int
    op: str


Token = Word | Op

REDIRECT = re.compile(r"\d*(?:>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)|&>>|&>")
CONTROL = re.compile(r"\|\||\|&|&&|;;|\||&|;|\(|\)")


def match_close(text: str, i: int, opening: str, closing: str) -> int:
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


PASTES = "{} runs another command and pastes its output into this one."


class ShellScanner:
    """Tokenizer half of the risk analyzer; subclasses implement `substitution` and `run`."""

    def substitution(self, text: str, start: int, end: int, inner: tuple[int, int],
                     offset: int, depth: int, what: str) -> None:
        """Called for each substitution `text[start:end]` (its code is `text[slice(*inner)]`)."""
        raise NotImplementedError

    def run(self, text: str, offset: int, depth: int = 0) -> None:
        """Analyse `text`, whose first character is at `offset` in the whole command."""
        raise NotImplementedError

    def scan_dollar(self, text: str, i: int, offset: int, depth: int) -> int:
        """Handle `$(`, `$((` and `${` at `i`; return the index after them (or i+1)."""
        if text.startswith("$((", i):
            end = match_close(text, i + 1, "(", ")")
            self.run(text[i + 3:max(i + 3, end - 2)], offset + i + 3, depth + 1)
            return end
        if text.startswith("$(", i):
            end = match_close(text, i + 1, "(", ")")
            self.substitution(text, i, end, (i + 2, max(i + 2, end - 1)), offset, depth,
                              PASTES.format("$(…)"))
            return end
        if text.startswith("${", i):
            end = match_close(text, i + 1, "{", "}")
            self.scan_quoted(text, i + 2, max(i + 2, end - 1), offset, depth)
            return end
        return i + 1

    def scan_backtick(self, text: str, i: int, offset: int, depth: int) -> int:
        j = i + 1
        while j < len(text) and text[j] != "`":
            j += 2 if text[j] == "\\" else 1
        end = min(j + 1, len(text))
        self.substitution(text, i, end, (i + 1, min(j, len(text))), offset, depth,
                          PASTES.format("A backtick substitution"))
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

    def tokenize(self, text: str, offset: int, depth: int) -> list[Token]:
        tokens: list[Token] = []
        i, n = 0, len(text)
        while i < n:
            char = text[i]
            if char in " \t\r":
                i += 1
            elif char == "\\" and text.startswith("\\\n", i):
                i += 2
            elif char == "\n":
                tokens.append(Op(i, i + 1, "\n"))
                i += 1
            elif char == "#":
                end = text.find("\n", i)
                i = n if end < 0 else end
            elif char in "<>" and text.startswith("(", i + 1):
                end = match_close(text, i + 1, "(", ")")
                self.substitution(text, i, end, (i + 2, max(i + 2, end - 1)), offset, depth,
                                  "A process substitution runs another command and passes "
                                  "its output or input as a file.")
                tokens.append(Word(i, end, text[i:end], text[i:end]))
                i = end
            elif (match := REDIRECT.match(text, i)) or (match := CONTROL.match(text, i)):
                tokens.append(Op(i, match.end(), match.group()))
                i = match.end()
            else:
                i = self.word(text, i, offset, depth, tokens)
        return tokens

    def word(self, text: str, i: int, offset: int, depth: int, tokens: list[Token]) -> int:
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
        tokens.append(Word(start, i, "".join(value), text[start:i]))
        return i
