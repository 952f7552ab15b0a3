"""The quote-aware shell tokenizer: words with their values and exact spans, operators,
and every command substitution reported at its place in the whole command."""

from __future__ import annotations

import pytest

from qoder_desktop.shell.risk_scan import Op, ShellScanner, Word, match_close


class Recorder(ShellScanner):
    """A scanner that keeps the tokens of each run and the substitutions it was told of."""

    def __init__(self) -> None:
        self.runs: list[tuple[int, int, list]] = []
        self.substitutions: list[tuple[str, str, str]] = []

    def substitution(self, text, start, end, inner, offset, depth, what):
        self.substitutions.append((text[start:end], text[slice(*inner)], what))
        self.run(text[slice(*inner)], offset + inner[0], depth + 1)

    def run(self, text, offset, depth=0):
        self.runs.append((offset, depth, self.tokenize(text, offset, depth)))


def scan(command: str) -> Recorder:
    recorder = Recorder()
    recorder.run(command, 0)
    return recorder


def words(command: str) -> list[str]:
    return [t.value for t in scan(command).runs[0][2] if isinstance(t, Word)]


def ops(command: str) -> list[str]:
    return [t.op for t in scan(command).runs[0][2] if isinstance(t, Op)]


@pytest.mark.parametrize(("command", "expected"), [
    ("ls -la src", ["ls", "-la", "src"]),
    ("echo 'a b' \"c d\"", ["echo", "a b", "c d"]),
    ("echo a\\ b", ["echo", "a b"]),
    ('echo "say \\"hi\\" \\$HOME"', ["echo", 'say "hi" $HOME']),
    ("echo it'''s", ["echo", "its"]),
    ("echo 'unterminated quote", ["echo", "unterminated quote"]),
    ("ls # rm -rf / | sh", ["ls"]),
    ("make \\\n  test", ["make", "test"]),
])
def test_words_lose_their_quotes(command, expected):
    assert words(command) == expected


@pytest.mark.parametrize(("command", "expected"), [
    ("a && b || c; d | e", ["&&", "||", ";", "|"]),
    ("a |& b & c", ["|&", "&"]),
    ("a\nb", ["\n"]),
    ("cmd > out 2>&1 < in", [">", "2>&", "<"]),
    ("cmd >> log &> all 2> err", [">>", "&>", "2>"]),
    ("cat <<< word", ["<<<"]),
    ("echo 'a | b' \"c && d\"", []),
])
def test_operators_are_found_outside_quotes_only(command, expected):
    assert ops(command) == expected


def test_spans_point_at_the_raw_text():
    command = "git commit -m 'fix: a b' && make"
    tokens = scan(command).runs[0][2]
    assert [command[t.start:t.end] for t in tokens] == [
        "git", "commit", "-m", "'fix: a b'", "&&", "make"]
    message = tokens[3]
    assert isinstance(message, Word)
    assert message.raw == "'fix: a b'" and message.value == "fix: a b"


@pytest.mark.parametrize(("command", "substitution", "inner"), [
    ("echo $(whoami)", "$(whoami)", "whoami"),
    ("echo `id`", "`id`", "id"),
    ('echo "today $(date)"', "$(date)", "date"),
    ("echo ${X:-$(pwd)}", "$(pwd)", "pwd"),
    ("diff <(ls a) b", "<(ls a)", "ls a"),
    ("tee >(gzip > f)", ">(gzip > f)", "gzip > f"),
    ("echo $(echo ')')", "$(echo ')')", "echo ')'"),
])
def test_every_substitution_is_reported(command, substitution, inner):
    found = scan(command).substitutions
    assert [(whole, code) for whole, code, _ in found] == [(substitution, inner)]
    assert "runs another command" in found[0][2]


def test_single_quotes_and_arithmetic_hide_no_substitution():
    assert scan("echo '$(whoami) `id`'").substitutions == []
    assert scan("x=$((1 + 2))").substitutions == []


def test_arithmetic_is_scanned_one_level_deeper():
    recorder = scan("echo $((1 + 2))")
    assert sorted((offset, depth) for offset, depth, _ in recorder.runs) == [(0, 0), (8, 1)]


def test_nested_substitutions_keep_their_place_in_the_whole_command():
    command = "echo $(cat $(ls x))"
    recorder = scan(command)
    assert [whole for whole, _, _ in recorder.substitutions] == ["$(cat $(ls x))", "$(ls x)"]
    innermost_offset, depth, tokens = max(recorder.runs, key=lambda run: run[1])
    assert depth == 2
    assert [command[innermost_offset + t.start:innermost_offset + t.end]
            for t in tokens] == ["ls", "x"]


@pytest.mark.parametrize(("text", "start", "expected"), [
    ("(a (b) c) d", 0, 9),
    ("(a ')' b) d", 0, 9),
    ("(a \\) b) d", 0, 8),
    ("{x}", 0, 3),
    ("(never closed", 0, 13),
])
def test_match_close_balances_brackets(text, start, expected):
    opening, closing = ("(", ")") if text[start] == "(" else ("{", "}")
    assert match_close(text, start, opening, closing) == expected
