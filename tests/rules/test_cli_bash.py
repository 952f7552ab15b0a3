"""How the model of the Claude Code CLI reads one Bash call under session rules: which
rule shape covers what, what the line loses before matching, and when the CLI asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoder_desktop.rules.cli_bash import BashRule, classify, clean, predict_bash, rule_covers


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session folder with a source folder, and a HOME of its own."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    work = tmp_path / "ws"
    (work / "src").mkdir(parents=True)
    return work


def decide(command: str, allow: list[str], cwd: Path, whole: bool = False) -> tuple[str, str]:
    return predict_bash(command, allow, whole, str(cwd), [])


@pytest.mark.parametrize(("content", "expected"), [
    ("npm run test:*", BashRule("npm run test", "prefix")),
    ("git  add *", BashRule("git add", "prefix")),
    ("touch a", BashRule("touch a", "exact")),
    ("git * --dry-run", BashRule("git * --dry-run", "glob")),
    ("X *:*", BashRule("X *", "never")),
    (" :*", BashRule(" ", "never")),
])
def test_rule_shapes(content, expected):
    assert classify(content) == expected


@pytest.mark.parametrize(("command", "expected"), [
    ("make test 2>&1", "make test"),
    ("make test >/dev/null", "make test"),
    ("make test # and then some", "make test"),
    ("make \\\ntest;", "make test"),
    ("time make test", "make test"),
    ("make\nls", "make ; ls"),
    ("echo '# kept'", "echo '# kept'"),
])
def test_clean_drops_what_the_cli_ignores(command, expected):
    assert clean(command) == expected


def test_an_exact_rule_compares_text_a_prefix_rule_words():
    exact = classify("touch a")
    assert rule_covers(exact, "touch a", ("touch", "a"))
    assert not rule_covers(exact, "touch 'a'", ("touch", "a"))
    prefix = classify("git add:*")
    assert rule_covers(prefix, "git add x", ("git", "add", "x"))
    assert rule_covers(prefix, "git   add x", ("git", "add", "x"))
    assert not rule_covers(prefix, "git addx", ("git", "addx"))
    assert not rule_covers(classify("X *:*"), "X anything", ("X", "anything"))


def test_read_only_commands_run_without_a_rule(ws: Path):
    assert decide("ls src && cat src/a.txt | wc -l", [], ws) == (
        "allow", "read-only commands the CLI runs without a rule")


def test_a_matching_prefix_rule_allows_and_is_named(ws: Path):
    verdict, reason = decide("nohup npm run test -- --watch", ["npm run test:*"], ws)
    assert verdict == "allow"
    assert reason == "allowed by the rule Bash(npm run test:*)"


def test_without_a_rule_a_command_asks(ws: Path):
    verdict, reason = decide("npm publish", ["npm run test:*"], ws)
    assert verdict == "ask" and "no allow rule matches" in reason


@pytest.mark.parametrize(("command", "allow", "why"), [
    ("echo $(whoami)", [], "shell syntax"),
    ("echo hi > out.txt", [], "shell syntax"),
    ("rm -rf ..", ["rm:*"], "rm of the current or parent folder"),
    ("cp -n a b", ["cp:*"], "option -n"),
    ("cat ../secret", [], "`..` in a path argument"),
    ("touch *.txt", ["touch:*"], "glob characters"),
    ("awk 'BEGIN{system(\"id\")}'", ["awk:*"], "awk runs a command"),
    ("cd src && touch a", ["touch:*"], "`cd` together with a command that writes"),
    ("timeout -s KILL", ["sleep:*"], "wrapper the model does not follow"),
    ("", ["ls:*"], "no command"),
])
def test_the_cli_asks_whatever_the_rules_say(ws: Path, command, allow, why):
    verdict, reason = decide(command, allow, ws)
    assert verdict == "ask"
    assert why in reason


def test_a_command_outside_the_session_folder_asks_even_when_read_only(ws: Path, tmp_path: Path):
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x")
    assert decide(f"cat {outside}", [], ws)[0] == "ask"
    assert decide("cat src/x.txt", [], ws)[0] == "allow"


def test_the_whole_tool_rule_still_asks_about_sensitive_files(ws: Path):
    assert decide("make all", [], ws, whole=True) == ("allow", "allowed by the rule Bash")
    verdict, reason = decide("echo x >> ~/.bashrc", [], ws, whole=True)
    assert verdict == "ask" and "even under the rule Bash" in reason


def test_a_non_text_command_asks(ws: Path):
    assert predict_bash(None, ["ls:*"], False, str(ws), []) == ("ask", "no command")
