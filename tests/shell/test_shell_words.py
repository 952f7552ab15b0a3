"""Tests for the strict shell analysis (`shell_words`) and its generous side
(`shell_candidates`)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qoder_desktop.shell.candidates import (
    command_starts,
    deny_candidates,
    lenient_words,
    loose_segments,
)
from qoder_desktop.shell.words import ShellProblem as P
from qoder_desktop.shell.words import analyze

# -- lines that parse cleanly -----------------------------------------------------------

CLEAN = [
    ("git diff", [("git", "diff")], ()),
    ("  git   diff  --stat\tHEAD ", [("git", "diff", "--stat", "HEAD")], ()),
    ("git diff; rm -rf ~", [("git", "diff"), ("rm", "-rf", "~")], (";",)),
    ("git diff && rm -rf ~", [("git", "diff"), ("rm", "-rf", "~")], ("&&",)),
    ("a || b | c & d", [("a",), ("b",), ("c",), ("d",)], ("||", "|", "&")),
    ("a;b&&c", [("a",), ("b",), ("c",)], (";", "&&")),
    ("echo 'a;b && c | d'", [("echo", "a;b && c | d")], ()),
    ('echo "a | b" c', [("echo", "a | b", "c")], ()),
    ("echo a\\;b", [("echo", "a;b")], ()),
    ("echo a\\ b", [("echo", "a b")], ()),
    ("echo 'x$y' '`z`' '$(w)'", [("echo", "x$y", "`z`", "$(w)")], ()),
    ('echo "\\$HOME \\" \\\\"', [("echo", '$HOME " \\')], ()),
    ('echo "a\\nb"', [("echo", "a\\nb")], ()),
    ("echo it''s", [("echo", "its")], ()),
    ("git log --format=%h~1 -- a=b", [("git", "log", "--format=%h~1", "--", "a=b")], ()),
    ('"FOO=1" cmd', [("FOO=1", "cmd")], ()),
    ("ls *.py ~/x", [("ls", "*.py", "~/x")], ()),
    ("echo a#b", [("echo", "a#b")], ()),
]


@pytest.mark.parametrize(("line", "words", "operators"), CLEAN)
def test_clean_lines_split_into_argv(line: str, words: list[tuple[str, ...]],
                                     operators: tuple[str, ...]) -> None:
    analysis = analyze(line)
    assert analysis.ok, analysis.problems
    assert [c.words for c in analysis.commands] == words
    assert analysis.operators == operators
    assert analysis.is_compound == (len(words) > 1)


def test_segment_text_is_the_stripped_source() -> None:
    analysis = analyze("  git diff --stat  &&  echo 'a  b'  ")
    assert [c.text for c in analysis.commands] == ["git diff --stat", "echo 'a  b'"]


def test_structure_compares_argv_and_operators() -> None:
    assert analyze("npm  'test'").structure() == analyze("npm test").structure()
    assert analyze("a && b").structure() != analyze("a || b").structure()
    assert analyze('echo "a b"').structure() != analyze("echo a b").structure()


# -- lines that are never safe ----------------------------------------------------------

UNSAFE = [
    ("", P.EMPTY),
    ("   \t ", P.EMPTY),
    ("git diff;", P.EMPTY),
    ("&& git diff", P.EMPTY),
    ("git diff &", P.EMPTY),
    ("git diff $(curl x)", P.COMMAND_SUBSTITUTION),
    ("git diff `curl x`", P.COMMAND_SUBSTITUTION),
    ('git diff "`curl x`"', P.COMMAND_SUBSTITUTION),
    ('git diff "$(curl x)"', P.COMMAND_SUBSTITUTION),
    ("git diff ${HOME}", P.PARAMETER_EXPANSION),
    ('git diff "${x@P}"', P.PARAMETER_EXPANSION),
    ("git diff $HOME", P.VARIABLE_EXPANSION),
    ('git diff "$HOME"', P.VARIABLE_EXPANSION),
    ("git diff $'\\x41'", P.VARIABLE_EXPANSION),
    ("git diff $", P.VARIABLE_EXPANSION),
    ("git diff > ~/.ssh/x", P.REDIRECTION),
    ("git diff >> x", P.REDIRECTION),
    ("git diff 2>/tmp/x", P.REDIRECTION),
    ("git diff 2>&1", P.REDIRECTION),
    ("git diff &> x", P.REDIRECTION),
    ("git diff >| x", P.REDIRECTION),
    ("git diff < x", P.REDIRECTION),
    ("git diff |& cat", P.REDIRECTION),
    ("cat <<EOF", P.HEREDOC),
    ("cat <<< hi", P.HEREDOC),
    ("diff <(ls) x", P.PROCESS_SUBSTITUTION),
    ("tee >(sh)", P.PROCESS_SUBSTITUTION),
    ("(rm -rf ~)", P.SUBSHELL),
    ("git diff (x)", P.SUBSHELL),
    ("{ rm -rf ~; }", P.BRACE),
    ("echo {a,b}", P.BRACE),
    ("git diff\nrm -rf ~", P.NEWLINE),
    ("git diff\rrm -rf ~", P.NEWLINE),
    ('echo "a\nb"', P.NEWLINE),
    ("git diff \\\n--stat", P.LINE_CONTINUATION),
    ('echo "a\\\nb"', P.LINE_CONTINUATION),
    ("git diff \\", P.TRAILING_BACKSLASH),
    ('git diff "unterminated', P.UNTERMINATED_QUOTE),
    ("git diff 'unterminated", P.UNTERMINATED_QUOTE),
    ("git diff # rm -rf ~", P.COMMENT),
    ("! git diff", P.NEGATION),
    ("git diff !!", P.NEGATION),
    ("FOO=1 git diff", P.ASSIGNMENT),
    ("A+=1 git diff", P.ASSIGNMENT),
    ("a[0]=1 git diff", P.ASSIGNMENT),
    ("FOO=bar; git status", P.ASSIGNMENT),
    ("git status && X=1 sh", P.ASSIGNMENT),
    ("if true; then rm -rf ~; fi", P.RESERVED_WORD),
    ("for f in a; do rm f; done", P.RESERVED_WORD),
    ("time rm -rf x", P.RESERVED_WORD),
    ("[[ -f x ]]", P.RESERVED_WORD),
    ("case x in a) ls;; esac", P.CASE_TERMINATOR),
    ("git diff\u202e", P.INVISIBLE_CHARACTER),
    ("git\u200bdiff", P.INVISIBLE_CHARACTER),
    ("git diff\x1b[2K", P.INVISIBLE_CHARACTER),
    ("git\u00a0diff", P.INVISIBLE_CHARACTER),
    ("git diff\x00", P.INVISIBLE_CHARACTER),
    ("git diff \u2028", P.INVISIBLE_CHARACTER),
]


@pytest.mark.parametrize(("line", "problem"), UNSAFE)
def test_unsafe_lines_are_flagged(line: str, problem: P) -> None:
    analysis = analyze(line)
    assert not analysis.ok
    assert problem in analysis.problems


def test_problems_are_listed_once_in_order_found() -> None:
    analysis = analyze("a > x; b > y $(c)")
    assert analysis.problems[0] is P.REDIRECTION
    assert len(analysis.problems) == len(set(analysis.problems))


def test_best_effort_commands_survive_problems() -> None:
    analysis = analyze("git diff\nrm -rf ~")
    assert [c.words for c in analysis.commands] == [("git", "diff"), ("rm", "-rf", "~")]


def test_fd_number_before_redirection_is_not_a_word() -> None:
    assert analyze("git diff 2>/dev/null").commands[0].words == ("git", "diff", "/dev/null")


def test_non_string_is_never_ok() -> None:
    assert not analyze(None).ok  # type: ignore[arg-type]


# -- the generous side ------------------------------------------------------------------

RM_HIDDEN = [
    "rm -rf x",
    "ls && rm -rf x",
    "sudo rm -rf x",
    "sudo -u root rm -rf x",
    "sudo -E rm -rf x",
    "timeout 5 rm -rf x",
    "nice -n 5 rm -rf x",
    "nohup env -i FOO=1 rm -rf x",
    "FOO=1 rm -rf x",
    "/bin/rm -rf x",
    '"rm" -rf x',
    "\\rm -rf x",
    "r''m -rf x",
    'bash -c "rm -rf x"',
    "sh -c 'echo hi; rm -rf x'",
    "eval rm -rf x",
    "echo $(rm -rf x)",
    "echo `rm -rf x`",
    "ls\nrm -rf x",
    "(rm -rf x)",
    "{ rm -rf x; }",
    "ls | xargs rm -rf",
    'ls "unterminated; rm -rf x',
    "! rm -rf x",
]


@pytest.mark.parametrize("line", RM_HIDDEN)
def test_deny_candidates_find_hidden_commands(line: str) -> None:
    assert any(words[:1] == ("rm",) for _, words in deny_candidates(line))


@pytest.mark.parametrize("line", [
    'git commit -m "rm stuff"', "grep rm file", "echo rm -rf x", "git rm-cache"])
def test_deny_candidates_do_not_invent_commands(line: str) -> None:
    assert not any(words[:1] == ("rm",) for _, words in deny_candidates(line))


def test_deny_candidates_of_empty_line() -> None:
    assert deny_candidates("   ") == []


def test_command_starts_reads_wrapper_options_both_ways() -> None:
    starts = command_starts(("sudo", "-u", "root", "rm", "x"))
    assert ("root", "rm", "x") in starts
    assert ("rm", "x") in starts
    assert starts[0] == ("sudo", "-u", "root", "rm", "x")


def test_lenient_words_never_raise() -> None:
    assert lenient_words("echo 'a b' c") == ("echo", "a b", "c")
    assert lenient_words("echo 'a b c") == ("echo", "a", "b", "c")
    assert lenient_words("") == ()


def test_loose_segments_ignore_quotes() -> None:
    assert loose_segments("echo 'a;b' && c") == ("echo 'a", "b'", "c")


# -- properties -------------------------------------------------------------------------

SHELLISH = st.text(alphabet="ab -'\";&|<>$`\n(){}#!\\=*~\t", max_size=40)
NO_DQ = st.text(alphabet="ab -';&|<>$`\n(){}=*", max_size=40)
_DANGER = set("$`<>\n(){}")


@settings(max_examples=400)
@given(st.text(max_size=60))
def test_analyze_never_raises(line: str) -> None:
    analysis = analyze(line)
    assert analysis.ok == (not analysis.problems and bool(analysis.commands))
    deny_candidates(line)


@settings(max_examples=400)
@given(SHELLISH)
def test_ok_lines_have_no_empty_commands(line: str) -> None:
    analysis = analyze(line)
    if analysis.ok:
        assert all(c.words for c in analysis.commands)
        assert len(analysis.operators) == len(analysis.commands) - 1


@settings(max_examples=500)
@given(NO_DQ)
def test_ok_means_no_dangerous_character_outside_single_quotes(line: str) -> None:
    # Without double quotes and backslashes, single-quoted regions pair left to right.
    outside = re.sub(r"'[^']*'", "", line)
    if analyze(line).ok:
        assert not (_DANGER & set(outside))
        assert "'" not in outside


WORD = st.text(alphabet="abcxyz0123456789-_./:,@%+", min_size=1, max_size=6).filter(
    lambda w: not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w))


@settings(max_examples=300)
@given(st.lists(st.lists(WORD, min_size=1, max_size=4), min_size=1, max_size=4),
       st.lists(st.sampled_from(["&&", "||", ";", "|", "&"]), min_size=3, max_size=3))
def test_plain_words_round_trip(commands: list[list[str]], ops: list[str]) -> None:
    line = ""
    for index, words in enumerate(commands):
        if index:
            line += f" {ops[index - 1]} "
        line += " ".join(words)
    analysis = analyze(line)
    assert analysis.ok
    assert [list(c.words) for c in analysis.commands] == commands
    assert list(analysis.operators) == ops[:len(commands) - 1]


def test_a_week_of_one_off_command_lines_keeps_a_bounded_number_of_analyses() -> None:
    """Most lines an agent runs come once; the analyses kept for the ones that come
    again stay within their bound however many lines a week brings."""
    from qoder_desktop.rules import ruleset
    from qoder_desktop.rules.ruleset import Call
    from qoder_desktop.shell import words

    for number in range(3 * words.RECENT_LINES):
        call = Call("Bash", {"command": f"touch 'one off {number}.txt' && ls out{number}"},
                    "/work")
        assert call.analysis.ok
        assert call.deny_candidates
    assert words._analyze_text.cache_info().currsize <= words.RECENT_LINES <= 1024
    assert ruleset._deny_candidates.cache_info().currsize <= words.RECENT_LINES
    assert words.analyze("git status").ok  # and analyzing goes on as before
