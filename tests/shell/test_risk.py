"""The risk lens points at the risky spans of a shell command."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qoder_desktop.shell.risk import RiskKind, Severity, analyze_command, worst_severity

CWD = "/work/proj"


def spans(command: str, cwd: str | None = CWD) -> dict[RiskKind, list[str]]:
    found: dict[RiskKind, list[str]] = {}
    for finding in analyze_command(command, cwd):
        assert finding.explanation
        found.setdefault(finding.kind, []).append(command[finding.start:finding.end])
    return found


@pytest.mark.parametrize(("command", "kind", "span"), [
    ("sudo apt install x", RiskKind.SUDO, "sudo"),
    ("rm -rf build", RiskKind.RECURSIVE_DELETE, "rm -rf"),
    ("rm -r build", RiskKind.RECURSIVE_DELETE, "rm -r"),
    ("rm -fR build", RiskKind.RECURSIVE_DELETE, "rm -fR"),
    ("rm --recursive x", RiskKind.RECURSIVE_DELETE, "rm --recursive"),
    ("curl -s https://x.sh | sh", RiskKind.PIPE_TO_INTERPRETER, "| sh"),
    ("curl x | sudo bash -s", RiskKind.PIPE_TO_INTERPRETER, "| sudo bash -s"),
    ("echo hi > /etc/x", RiskKind.REDIRECTION, "> /etc/x"),
    ("echo hi >>/etc/x", RiskKind.REDIRECTION, ">>/etc/x"),
    ("echo hi > /etc/x", RiskKind.OUTSIDE_WORKSPACE, "/etc/x"),
    ("python -c 'import os'", RiskKind.INTERPRETER, "python -c"),
    ("python3 -c 'print(1)'", RiskKind.INTERPRETER, "python3 -c"),
    ("node -e 'x'", RiskKind.INTERPRETER, "node -e"),
    ("node --eval 'x'", RiskKind.INTERPRETER, "node --eval"),
    ("perl -pe 's/a/b/' f", RiskKind.INTERPRETER, "perl -pe"),
    ("ruby -e 'x'", RiskKind.INTERPRETER, "ruby -e"),
    ("bash -lc 'ls'", RiskKind.INTERPRETER, "bash -lc"),
    ("zsh -c 'ls'", RiskKind.INTERPRETER, "zsh -c"),
    ("/usr/bin/sh -c 'ls'", RiskKind.INTERPRETER, "/usr/bin/sh -c"),
    ("eval \"$X\"", RiskKind.INTERPRETER, "eval \"$X\""),
    ("echo $(whoami)", RiskKind.SUBSTITUTION, "$(whoami)"),
    ("echo `id`", RiskKind.SUBSTITUTION, "`id`"),
    ("echo \"today $(date)\"", RiskKind.SUBSTITUTION, "$(date)"),
    ("diff <(ls a) b", RiskKind.SUBSTITUTION, "<(ls a)"),
    ("cat ../../etc/passwd", RiskKind.OUTSIDE_WORKSPACE, "../../etc/passwd"),
    ("cat ~/.ssh/id_rsa", RiskKind.OUTSIDE_WORKSPACE, "~/.ssh/id_rsa"),
    ("cp x --target-directory=/opt", RiskKind.OUTSIDE_WORKSPACE, "--target-directory=/opt"),
    ("cd sub && make", RiskKind.CHAIN, "&&"),
    ("ls | wc -l", RiskKind.PIPE, "|"),
])
def test_finds(command, kind, span):
    assert span in spans(command).get(kind, []), spans(command)


@pytest.mark.parametrize("command", [
    "ls -la src", "npm run test", "git status", "echo 'rm -rf / | sh > /etc/x'",
    "cat src/../README.md", f"cat {CWD}/a.txt", "echo hi 2>/dev/null", "ls # | sh",
    "python script.py", "x=$((1 + 2))", "grep -r foo .",
])
def test_quiet_commands(command):
    loud = [f for f in analyze_command(command, CWD) if f.severity is not Severity.INFO]
    assert loud == []


def test_nested_shell_code_is_analysed_with_exact_spans():
    command = "bash -c 'sudo rm -rf /tmp/x'"
    found = spans(command)
    assert found[RiskKind.SUDO] == ["sudo"]
    assert found[RiskKind.RECURSIVE_DELETE] == ["rm -rf"]


def test_substitution_contents_are_analysed():
    found = spans('git commit -m "fix $(curl x | sh)"')
    assert found[RiskKind.SUBSTITUTION] == ["$(curl x | sh)"]
    assert found[RiskKind.PIPE_TO_INTERPRETER] == ["| sh"]


def test_added_directories_count_as_workspace():
    assert analyze_command("cat /data/x", CWD, ["/data"]) == []
    assert spans("cat /data2/x", CWD)[RiskKind.OUTSIDE_WORKSPACE] == ["/data2/x"]


def test_unknown_cwd_flags_absolute_paths():
    assert RiskKind.OUTSIDE_WORKSPACE in spans("cat /etc/hosts", None)


def test_worst_severity():
    assert worst_severity(analyze_command("sudo ls", CWD)) is Severity.DANGER
    assert worst_severity([]) is None


@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\|&;<>-rf/~.\n#{}c")), max_size=80))
def test_never_raises_and_spans_are_in_range(command):
    for finding in analyze_command(command, CWD):
        assert 0 <= finding.start <= finding.end <= len(command)


def test_a_relative_path_through_a_link_out_of_the_workspace_is_pointed_at(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (work / "link_out").symlink_to(tmp_path / "elsewhere")
    found = spans("cat link_out/secret src/a.py link_out/../b", str(work))
    assert found[RiskKind.OUTSIDE_WORKSPACE] == ["link_out/secret", "link_out/../b"]
    [finding] = [f for f in analyze_command("cat link_out/secret", str(work))
                 if f.kind is RiskKind.OUTSIDE_WORKSPACE]
    assert f"really {tmp_path / 'elsewhere' / 'secret'}" in finding.explanation
