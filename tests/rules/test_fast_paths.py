"""The rule matcher's fast paths give exactly what the plain versions give.

The hot path of a rule match (the shell lexer, the generous deny candidates, the
sensitive-name check, the path walk below the session folder, canonical spelling, the
compiled Bash allow rules) has shortcuts for the common case. Each is checked here
against the straightforward version it replaced, kept below as a reference, on
generated input: a shortcut that changed a single verdict, reason or word fails.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.domain.workspace import inside_forms
from qoder_desktop.rules import bash_allow, bash_paths, sensitive
from qoder_desktop.rules import matcher as rules
from qoder_desktop.shell import candidates, commands, words
from qoder_desktop.shell.words import ShellAnalysis, ShellProblem, SimpleCommand
from tests.rules.strategies import shell_text

# -- the plain versions (as they were before the shortcuts) --------------------------


class _PlainScanner(words._Scanner):
    """The lexer, one character per step."""

    def run(self) -> ShellAnalysis:
        s = self.s
        if words.has_hidden(s):
            self.flag(ShellProblem.INVISIBLE_CHARACTER)
        while self.i < len(s):
            ch = s[self.i]
            two = s[self.i:self.i + 2]
            if ch in words._OK_SPACE:
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
            elif ch in words._FLAGGED_CHARS:
                self.flag(words._dollar_problem(s, self.i) if ch == "$"
                          else words._FLAGGED_CHARS[ch])
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


def _plain_deny_candidates(command: str, depth: int = 0) -> list[tuple[str, tuple[str, ...]]]:
    found: list[tuple[str, tuple[str, ...]]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()

    def add(text: str, found_words: tuple[str, ...]) -> None:
        if (text, found_words) not in seen and len(found) < candidates._MAX_CANDIDATES:
            seen.add((text, found_words))
            found.append((text, found_words))

    whole = command.strip()
    if not whole:
        return found
    add(whole, candidates.lenient_words(whole))
    segments = [(c.text, c.words) for c in words.analyze(whole).commands]
    segments += [(s, candidates.lenient_words(s)) for s in candidates.loose_segments(whole)]
    for segment, segment_words in segments:
        add(segment, segment_words)
        for variant in commands.command_starts(segment_words):
            add(" ".join(variant), variant)
            if depth >= 3:
                continue
            for inner in commands.inner_scripts(variant):
                for item in _plain_deny_candidates(inner, depth + 1):
                    add(*item)
    return found


def _plain_sensitive_part(path: str) -> str | None:
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    folded = [sensitive._fold(p) for p in parts]
    for index, name in enumerate(folded):
        if name in sensitive.SENSITIVE_DIRS:
            return "/".join(parts[index:])
        for nested in sensitive.SENSITIVE_NESTED_DIRS:
            if tuple(folded[index:index + len(nested)]) == nested:
                return "/".join(parts[index:])
    if folded and folded[-1] in sensitive.SENSITIVE_FILES:
        return parts[-1]
    return None


_SAFE_WORD = re.compile(r"^[A-Za-z0-9_@%+=:,./~^-]+$")


def _plain_is_canonical(command: SimpleCommand) -> bool:
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


# -- generated input ------------------------------------------------------------------

_PATH_PIECES = ["a", "src", ".git", ".GIT", ".G\u0131T", ".config", "git", "fish", ".local",
                "share", "applications", ".ssh", ".bashrc", ".BashRC", "lefthook.yml",
                "Bunfig.toml", "x.txt", ".x", "", ".", "..", "~", "\u017f"]
path_text = st.tuples(
    st.sampled_from(["", "/", "./", "~/", "\\"]),
    st.lists(st.sampled_from(_PATH_PIECES), max_size=7),
    st.lists(st.sampled_from(["/", "\\", "//"]), min_size=7, max_size=7),
    st.sampled_from(["", "/", "\\"]),
).map(lambda t: t[0] + "".join(p + s for p, s in zip(t[1], t[2], strict=False))[:-1] + t[3]
      if t[1] else t[0] + t[3])


@settings(max_examples=1500, deadline=None)
@given(shell_text)
def test_lexer_shortcuts_read_every_line_as_the_plain_lexer(text: str) -> None:
    fast = words.analyze(text)
    plain = _PlainScanner(text).run()
    assert (fast.commands, fast.operators, fast.problems) == (
        plain.commands, plain.operators, plain.problems)


@settings(max_examples=1000, deadline=None)
@given(shell_text)
def test_deny_candidates_are_the_plain_ones_in_the_same_order(text: str) -> None:
    assert candidates.deny_candidates(text) == _plain_deny_candidates(text)


@settings(max_examples=1500, deadline=None)
@given(path_text)
def test_sensitive_part_shortcut_agrees_with_the_full_check(path: str) -> None:
    assert sensitive.sensitive_part(path) == _plain_sensitive_part(path)


def test_every_sensitive_folder_starts_with_a_dot() -> None:
    # The shortcut in sensitive_part looks only at the last component of a path with no
    # component starting with a dot: a new sensitive folder without one must change it.
    assert all(name.startswith(".") for name in sensitive.SENSITIVE_DIRS)
    assert all(nested[0].startswith(".") for nested in sensitive.SENSITIVE_NESTED_DIRS)


@settings(max_examples=1000, deadline=None)
@given(shell_text)
def test_canonical_spelling_shortcut_agrees_with_the_word_by_word_check(text: str) -> None:
    for command in words.analyze(text).commands:
        assert bash_allow.is_canonical(command) == _plain_is_canonical(command)


# -- the walk below the session folder ------------------------------------------------


_WALK_PIECES = ["src", "deep", "out", "sub", "in", "up", "loop1", "dangling", "file.txt",
                "filelink", "missing", "..", ".", "x"]


@settings(max_examples=600, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_WALK_PIECES), max_size=6),
       st.sampled_from(["work", "worklink", "work/src", "worklink/in", "nowhere"]))
def test_walk_below_the_session_folder_is_realpath(tree: Path, parts: list[str],
                                                   folder: str) -> None:
    cwd = str(tree / folder)
    check = bash_paths.PathCheck(cwd, ())
    lexical = os.path.normpath(os.path.join(check.cwd, *parts))
    assert check._realpath(lexical) == os.path.realpath(lexical)
    value = "/".join(parts)
    if value:  # an argument as written: the lexical and the real form
        written = os.path.normpath(os.path.join(check.cwd, value))
        assert check.resolve(value) == (written, os.path.realpath(written))


# -- compiled Bash allow rules --------------------------------------------------------

_RULE_TEXTS = ["git diff *", "git status", "git", "ls*", "npm run test:*", "npm test",
               "* --help", "sudo ls", "echo 'a b'", "cd src", "  git status  ", "rm:*",
               "git diff src/x.py && ls", "x*y", ":*", "'quoted' word"]


def _allow(text: str) -> SessionRule:
    return SessionRule(session_id="s", behavior=RuleBehavior.ALLOW,
                       rule=RuleValue(tool_name="Bash", rule_content=text), granted_by="user")


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_RULE_TEXTS), max_size=8),
       st.lists(st.sampled_from(["git", "diff", "status", "ls", "lsof", "npm", "run", "test",
                                 "--help", "sudo", "cd", "src", "x", "y", "rm", "'a b'",
                                 "&&", "src/x.py", "echo"]), min_size=1, max_size=5))
def test_compiled_rules_match_what_each_rule_matches(texts: list[str], argv: list[str]) -> None:
    allows = [_allow(text) for text in texts]
    compiled = bash_allow.bash_rules(allows)
    line = " ".join(argv)
    for command in words.analyze(line).commands:
        expected = [r for r in allows if bash_allow.spec_allows(r.rule.rule_content or "",
                                                                command)]
        assert [r for r, _spec in compiled.matching(command)] == expected
        assert compiled.first_match(command) is (expected[0] if expected else None)
    exact = next((r for r in allows
                  if bash_allow.parse_bash_spec(r.rule.rule_content or "").kind == "exact"
                  and (r.rule.rule_content or "").strip() == line.strip()), None)
    assert compiled.exact_line(line.strip()) is exact


def test_a_revoked_rule_stops_allowing_although_the_rule_list_was_seen_before(
        tmp_path: Path) -> None:
    rule = _allow("git diff *")
    call = {"command": "git diff a.txt"}
    assert rules.evaluate([rule], "Bash", call, str(tmp_path)) is not None
    revoked = rule.model_copy(update={"revoked_at": rule.granted_at})
    assert rules.evaluate([revoked], "Bash", call, str(tmp_path)) is None
    assert rules.evaluate([rule], "Bash", call, str(tmp_path)) is not None


# -- the session folders, planned once per folder list ---------------------------------


def _plain_path_state(cwd: str, add_dirs: tuple[str, ...]) -> tuple[object, ...]:
    """What `PathCheck` held for these folders before the plan: every folder resolved."""
    lexical = [os.path.abspath(f) for f in (cwd, *add_dirs) if f]
    real = [os.path.realpath(f) for f in (cwd, *add_dirs) if f]
    folder = lexical[0] if cwd else os.path.abspath(cwd)
    base = None
    if cwd:
        resolved = real[0] if cwd == folder else os.path.realpath(folder)
        if os.path.isdir(resolved):
            base = (folder, folder if folder.endswith("/") else folder + "/", resolved)
    return lexical, real, folder, base


_FOLDERS = ["work", "worklink", "work/src", "worklink/in", "nowhere", "work/file.txt",
            "work/", "work//src", "work/./src", "work/src/..", ".hid/w", "work/out",
            "work/src/up", "work/loop1", "work/dangling"]


@pytest.fixture(scope="module")
def folders(tree: Path) -> Path:
    """The walk tree, plus a session folder below a folder whose name starts with a dot."""
    (tree / ".hid" / "w" / "src").mkdir(parents=True, exist_ok=True)
    return tree


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_FOLDERS), st.lists(st.sampled_from(_FOLDERS), max_size=2))
def test_planned_session_folders_are_what_resolving_each_gives(
        folders: Path, cwd: str, added: list[str]) -> None:
    check = bash_paths.PathCheck(str(folders / cwd), [str(folders / f) for f in added])
    expected = _plain_path_state(str(folders / cwd), tuple(str(folders / f) for f in added))
    got = (list(check.lexical_roots), list(check.real_roots), check.cwd, check._base)
    assert got == expected


def _plain_argument(check: bash_paths.PathCheck, value: str) -> str | None:
    """`PathCheck.argument` for a value as it was before the shortcut below the folder."""
    forms = check.resolve(value)
    if isinstance(forms, str):
        return forms
    lexical, real = forms
    if value.startswith("~"):
        reason = sensitive.sensitive_reason(value, check.cwd)
    else:
        reason = sensitive.resolved_reason(lexical, real)
    if reason is not None:
        return reason
    if not inside_forms(lexical, real, check.lexical_roots, check.real_roots):
        return f"path argument outside the session folder: {real}"
    return None


_ARGUMENT_PIECES = [*_WALK_PIECES, ".git", "config", ".bashrc", "a\\.git", ".ssh", "~",
                    "/etc", ""]


@settings(max_examples=800, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["work", "worklink", "work/src", ".hid/w", "nowhere"]),
       st.lists(st.sampled_from(_ARGUMENT_PIECES), min_size=1, max_size=4),
       st.booleans())
def test_an_argument_below_the_session_folder_asks_as_before(
        folders: Path, cwd: str, parts: list[str], changed: bool) -> None:
    value = "/".join(parts)
    if not value or "://" in value:
        return
    check = bash_paths.PathCheck(str(folders / cwd), [])
    if changed:  # after `cd src` the shortcut no longer applies
        check.command(SimpleCommand("cd src", ("cd", "src")))
    assert check.argument(value) == _plain_argument(check, value)

