"""When a Bash allow rule lets us allow a command ourselves (never more than Claude Code).

The strict side of Bash matching. A command is allowed only when all of this holds:

- the shell analyzer (`shell_words.analyze`) understands the whole line (no expansions,
  substitutions, redirections, ...): whatever it does not understand asks;
- every simple command is matched by a specifier rule (exact, word prefix or glob), or
  the whole line is the text of an exact rule;
- every simple command is written in its canonical spelling: single spaces between
  words, no quotes where none are needed (`touch  a`, `touch 'a'` and `"npm" run test`
  are spellings the CLI treats as different commands, so they ask);
- a command that runs other code (`sudo`, `env`, `xargs`, `bash -c`, `eval`, ...; see
  `shell_commands`) is allowed only by an exact rule;
- no argument names a sensitive file (`rules.sensitive`) or a path outside the session
  folder and its added directories (symlinks resolved; `cd DIR` is followed): see
  `rules.bash_paths`.

Every refusal comes with the reason it asks. Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from qoder_desktop.domain.models import SessionRule
from qoder_desktop.domain.tools import BASH_TOOL
from qoder_desktop.rules.bash_paths import PathCheck
from qoder_desktop.shell import commands as shell_commands
from qoder_desktop.shell import words as shell_words
from qoder_desktop.shell.words import SimpleCommand

_SAFE_RUN = r"[A-Za-z0-9_@%+=:,./~^-]+"
"""A word that needs no quoting (the one definition of both patterns below)."""
_SAFE_WORD = re.compile(f"^{_SAFE_RUN}$")
#: Safe words one space apart: for a text that is its words joined by single spaces,
#: one match says what `_SAFE_WORD` says of every word.
_SAFE_LINE = re.compile(f"{_SAFE_RUN}(?: {_SAFE_RUN})*")


@dataclass(frozen=True)
class BashSpec:
    """A parsed Bash specifier.

    Attributes:
        kind: "exact", "prefix" or "glob".
        text: the exact command, the prefix, or the glob pattern.
        optional_tail: for a legacy `...:*` glob, the pattern may also be followed by
            whitespace and anything.
    """

    kind: str
    text: str
    optional_tail: bool = False

    def glob_matches(self, text: str) -> bool:
        """Match a glob spec against `text` (`*` is any run of characters)."""
        if wildcard_match(self.text, text):
            return True
        return self.optional_tail and wildcard_match(self.text + " *",
                                                     text.replace("\t", " "))


def wildcard_match(pattern: str, text: str) -> bool:
    """Match `text` against `pattern` where `*` is any run of characters.

    Linear backtracking over the last star (O(len(pattern) * len(text)) at worst), so a
    pattern like `*a*a*a*b` cannot blow up on a long command the way a regex could.
    """
    p = t = 0
    star, mark = -1, 0
    while t < len(text):
        if p < len(pattern) and pattern[p] == "*":
            star, mark = p, t
            p += 1
        elif p < len(pattern) and pattern[p] == text[t]:
            p += 1
            t += 1
        elif star >= 0:
            p, mark = star + 1, mark + 1
            t = mark
        else:
            return False
    return all(ch == "*" for ch in pattern[p:])


@functools.lru_cache(maxsize=1024)
def parse_bash_spec(content: str) -> BashSpec:
    """Classify a Bash specifier as exact, word-prefix or glob (cached: rules repeat)."""
    if content.endswith(":*"):
        base = content[:-2]
        if "*" not in base:
            return BashSpec("prefix", base.strip())
        return BashSpec("glob", base, optional_tail=True)
    if content.endswith(" *") and content.count("*") == 1:
        return BashSpec("prefix", content[:-2].strip())
    if "*" in content:
        return BashSpec("glob", content)
    return BashSpec("exact", content.strip())


@functools.lru_cache(maxsize=1024)
def rule_words(text: str) -> tuple[str, ...] | None:
    """The argv of a rule's command text, or None unless it is one clean simple command."""
    analysis = shell_words.analyze(text)
    if analysis.ok and len(analysis.commands) == 1:
        return analysis.commands[0].words
    return None


def is_canonical(command: SimpleCommand) -> bool:
    """True when the command is spelled canonically: single spaces, quotes only if needed.

    A word that needs quoting may be written in single or double quotes; any other
    spelling (two spaces, a tab, `'a'` for `a`, backslashes) is not canonical.
    """
    if command.text == " ".join(command.words) and _SAFE_LINE.fullmatch(command.text):
        return True  # what the loop below finds for plain words, one space apart
    rest = command.text
    for index, word in enumerate(command.words):
        if index:
            if not rest.startswith(" "):
                return False
            rest = rest[1:]
        options = [word] if _SAFE_WORD.match(word) else []
        if not options:
            options = [q + word + q for q, bad in (("'", "'"), ('"', '"\\$`!'))
                       if not set(bad) & set(word)]
        match = next((o for o in options if rest.startswith(o)
                      and (len(rest) == len(o) or rest[len(o)] == " ")), None)
        if match is None:
            return False
        rest = rest[len(match):]
    return rest == ""


def spec_allows(content: str, command: SimpleCommand) -> bool:
    """True when a Bash specifier matches one parsed simple command (spelling aside)."""
    return _compiled_spec(content).allows(command)


@dataclass(frozen=True)
class _CompiledSpec:
    """A Bash specifier with what matching it needs worked out once."""

    spec: BashSpec
    words: tuple[str, ...] | None
    """The rule's argv (exact and prefix specs); None when it is not one clean command."""
    stripped: str
    """The specifier without surrounding whitespace (for the whole-line exact match)."""

    def allows(self, command: SimpleCommand) -> bool:
        """`spec_allows` for this specifier."""
        spec, words = self.spec, self.words
        if spec.kind == "glob":
            return spec.glob_matches(command.text)
        if words is None:
            return False
        if spec.kind == "exact":
            return words == command.words
        return command.words[:len(words)] == words


@functools.lru_cache(maxsize=1024)
def _compiled_spec(content: str) -> _CompiledSpec:
    spec = parse_bash_spec(content)
    words = None if spec.kind == "glob" else rule_words(spec.text)
    return _CompiledSpec(spec, words, content.strip())


class BashRules:
    """The Bash allow rules with a specifier (not `Bash(*)`), compiled and indexed.

    Attributes:
        pairs: (rule, compiled spec) in the order given.
    """

    def __init__(self, pairs: Sequence[tuple[SessionRule, _CompiledSpec]]) -> None:
        self.pairs = tuple(pairs)
        self._exact_lines: dict[str, SessionRule] = {}
        self._by_head: dict[str, list[int]] = {}
        self._globs: list[int] = []
        self._candidates: dict[str, tuple[int, ...]] = {}
        for index, (rule, spec) in enumerate(self.pairs):
            if spec.spec.kind == "exact":
                self._exact_lines.setdefault(spec.stripped, rule)
            if spec.spec.kind == "glob":
                self._globs.append(index)
            elif spec.words is not None:  # an exact or prefix spec needs the same argv[0]
                self._by_head.setdefault(spec.words[0], []).append(index)

    def exact_line(self, line: str) -> SessionRule | None:
        """The first exact rule whose text is this whole (stripped) line, or None."""
        return self._exact_lines.get(line)

    def candidates(self, head: str) -> tuple[int, ...]:
        """The indexes of the pairs that may allow a command starting with `head`, in
        order (the exact and prefix rules with that argv[0], and every glob)."""
        found = self._candidates.get(head)
        if found is None:
            found = tuple(sorted(self._by_head.get(head, []) + self._globs))
            if len(self._candidates) >= 1024:
                self._candidates.clear()
            self._candidates[head] = found
        return found

    def first_match(self, command: SimpleCommand) -> SessionRule | None:
        """The rule of the first pair of `matching(command)`, or None (the rest are not
        tried)."""
        pairs = self.pairs
        for index in self.candidates(command.words[0]):
            if pairs[index][1].allows(command):
                return pairs[index][0]
        return None

    def matching(self, command: SimpleCommand) -> list[tuple[SessionRule, _CompiledSpec]]:
        """The pairs whose spec allows this simple command (`spec_allows`), in order."""
        pairs = self.pairs
        return [pairs[i] for i in self.candidates(command.words[0])
                if pairs[i][1].allows(command)]


def bash_rules(allows: Sequence[SessionRule]) -> BashRules:
    """The rules of `allows` that `bash_allow` can allow on, compiled (see `BashRules`)."""
    return BashRules([(r, _compiled_spec(r.rule.rule_content or "")) for r in allows
                      if r.rule.tool_name == BASH_TOOL and r.rule.rule_content
                      and r.rule.rule_content.strip() != "*"])


def bash_allow(allows: Sequence[SessionRule], command: object, cwd: str,
               add_dirs: Sequence[str] = (), *, compiled: BashRules | None = None,
               analysis: shell_words.ShellAnalysis | None = None,
               ) -> tuple[SessionRule, ...] | str:
    """The rules that allow this Bash command, or the reason it asks.

    Args:
        allows: the session's active allow rules (any tool; non-Bash ones are ignored).
        command: the Bash tool's `command` input.
        cwd: the session folder; relative paths are taken against it.
        add_dirs: the session's added directories (paths there are inside too).
        compiled: `bash_rules(allows)`, when the caller keeps it for the same rules.
        analysis: `shell_words.analyze(command)`, when the caller has it already.
    """
    if not isinstance(command, str) or not command.strip():
        return "no command"
    specific = bash_rules(allows) if compiled is None else compiled
    if not specific.pairs:
        return "no Bash allow rule with a specifier matches"
    if analysis is None:
        analysis = shell_words.analyze(command)
    if not analysis.ok:
        problems = ", ".join(p.value for p in analysis.problems) or "no command"
        return f"not understood by the shell analyzer: {problems}"
    whole = specific.exact_line(command.strip())
    used: list[SessionRule] = [] if whole is None else [whole]
    paths = PathCheck(cwd, add_dirs)
    for simple in analysis.commands:
        if whole is None:
            match = _segment_rule(specific, simple)
            if isinstance(match, str):
                return match
            if match not in used:
                used.append(match)
        reason = paths.command(simple)
        if reason is not None:
            return reason
    return tuple(used)


def _segment_rule(specific: BashRules, simple: SimpleCommand) -> SessionRule | str:
    """The rule that allows one simple command, or why it asks."""
    first = specific.first_match(simple)
    if first is None:
        return f"no allow rule matches the command: {simple.text}"
    if not is_canonical(simple):
        return f"the command is not in the rule's exact spelling: {simple.text}"
    if shell_commands.runs_other_code(simple.words[0]):
        exact = [r for r, spec in specific.matching(simple) if spec.spec.kind == "exact"]
        if not exact:
            name = shell_commands.command_name(simple.words[0])
            return (f"{name} runs another command; only an exact rule allows it: "
                    f"{simple.text}")
        return exact[0]
    return first
