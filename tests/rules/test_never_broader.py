"""Where we decide alone, the matcher is never broader than Claude Code (a broader
match would let a rule decide where the CLI asks).

Each case is one of the reproduced disagreements: our matcher said allow where the real
CLI asked. Now each asks, with a reason a person can read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.rules.matcher import explain

ALLOW, DENY, ASK = RuleBehavior.ALLOW, RuleBehavior.DENY, RuleBehavior.ASK


def rules(*texts: str, deny: tuple[str, ...] = ()) -> list[SessionRule]:
    """Allow rules, then deny rules, from their texts."""
    return [SessionRule(session_id="s", behavior=ALLOW, rule=RuleValue.parse(t))
            for t in texts] + [SessionRule(session_id="s", behavior=DENY,
                                           rule=RuleValue.parse(t)) for t in deny]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A session folder with a file, a link out of it and a folder beside it."""
    cwd = tmp_path / "work"
    (cwd / "src").mkdir(parents=True)
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere", cwd / "out")
    return cwd


def verdict(found: list[SessionRule], tool: str, tool_input: dict[str, Any], cwd: Path,
            add_dirs: tuple[str, ...] = ()) -> tuple[RuleBehavior, str]:
    """(behaviour, reason) of our own decision."""
    result = explain(found, tool, tool_input, str(cwd), add_dirs)
    return result.behavior, result.reason


@pytest.mark.parametrize("name", [
    ".claude/settings.local.json", ".claude/settings.json", ".bashrc", ".git/config",
    ".qoder/settings.json", ".vscode/settings.json", ".idea/x.xml", ".mcp.json",
    ".gitconfig", ".gitmodules", ".zshrc", ".profile", ".config/fish/config.fish",
    ".ssh/authorized_keys", ".gnupg/gpg.conf", "src/.GIT/config",
])
def test_sensitive_files_ask_under_edit_rules(work: Path, name: str) -> None:
    path = str(work / name)
    for found in (rules(f"Edit(/{path})"), rules("Edit(./**)")):
        for tool in ("Edit", "Write"):
            behavior, reason = verdict(found, tool, {"file_path": path}, work)
            assert behavior is ASK
            assert reason.startswith("sensitive file ")
    assert verdict(rules("Edit(./**)"), "Edit", {"file_path": str(work / "src/a.py")},
                   work)[0] is ALLOW


@pytest.mark.parametrize("rule_text", ["Bash(touch:*)", "Bash(touch a *)"])
@pytest.mark.parametrize("name", [".bashrc", ".git/config", ".claude/settings.json"])
def test_sensitive_files_ask_as_bash_arguments(work: Path, rule_text: str, name: str) -> None:
    behavior, reason = verdict(rules(rule_text), "Bash", {"command": f"touch a {name}"}, work)
    assert (behavior, reason.split(" ")[0]) == (ASK, "sensitive")
    assert verdict(rules(rule_text), "Bash", {"command": "touch a b"}, work)[0] is ALLOW


@pytest.mark.parametrize(("rule_text", "command"), [
    ("Bash(touch:*)", "touch {out}/y"), ("Bash(rm:*)", "rm -rf {out}/deep"),
    ("Bash(cp:*)", "cp a {out}/b"), ("Bash(cat:*)", "cat {out}/x"),
    ("Bash(ls:*)", "ls {out}"), ("Bash(mkdir:*)", "mkdir -p {out}/n"),
    ("Bash(cat:*)", "cat ../x"), ("Bash(cat:*)", "cat out/x"),
    ("Bash(cp:*)", "cp --target-directory={out} a"),
    ("Bash(cd:*)", "cd .. && cd elsewhere"),
])
def test_path_arguments_outside_the_session_folder_ask(work: Path, rule_text: str,
                                                       command: str) -> None:
    outside = str(work.parent / "elsewhere")
    text = command.format(out=outside)
    behavior, reason = verdict(rules(rule_text), "Bash", {"command": text}, work)
    assert behavior is ASK
    assert "outside the session folder" in reason
    assert verdict(rules(rule_text), "Bash", {"command": text}, work,
                   (outside, str(work.parent)))[0] is ALLOW


def test_home_folder_argument_asks(work: Path) -> None:
    for command in ("ls ~", "ls ~/x", "ls ~root/x"):
        behavior, reason = verdict(rules("Bash(ls:*)"), "Bash", {"command": command}, work)
        assert behavior is ASK
        assert "outside the session folder" in reason


def test_cd_is_followed(work: Path) -> None:
    found = rules("Bash(cd:*)", "Bash(touch:*)")
    assert verdict(found, "Bash", {"command": "cd src && touch a"}, work)[0] is ALLOW
    assert verdict(found, "Bash", {"command": "cd src && touch ../../x"}, work)[0] is ASK
    assert verdict(found, "Bash", {"command": "cd - && touch a"}, work)[0] is ASK


@pytest.mark.parametrize(("rule_text", "command"), [
    ("Bash(touch:*)", "touch  a"), ("Bash(touch:*)", "touch 'a'"),
    ("Bash(touch:*)", "touch\ta"), ("Bash(touch:*)", "touch \\a"),
    ("Bash(npm run test)", '"npm" run "test"'), ("Bash(npm run:*)", '"npm" run "test"'),
    ("Bash(npm run test)", "npm run  test"),
])
def test_other_spellings_ask(work: Path, rule_text: str, command: str) -> None:
    behavior, reason = verdict(rules(rule_text), "Bash", {"command": command}, work)
    assert (behavior, reason.split(":")[0]) == (
        ASK, "the command is not in the rule's exact spelling")


def test_quotes_that_are_needed_are_the_canonical_spelling(work: Path) -> None:
    found = rules("Bash(git commit:*)")
    assert verdict(found, "Bash", {"command": 'git commit -m "fix it"'}, work)[0] is ALLOW
    assert verdict(found, "Bash", {"command": "git commit -m 'fix it'"}, work)[0] is ALLOW
    assert verdict(found, "Bash", {"command": "git commit -m 'fix'"}, work)[0] is ASK


@pytest.mark.parametrize("rule_text", ["Write(./**)", "Edit", "Write", "MultiEdit(./**)"])
def test_write_rules_and_whole_tool_edit_never_allow_write(work: Path, rule_text: str) -> None:
    found = rules(rule_text)
    assert verdict(found, "Write", {"file_path": str(work / "src/a.py")}, work)[0] is ASK


@pytest.mark.parametrize("rule_text", ["Bash", "Bash(*)"])
def test_whole_tool_bash_never_allows_on_our_side(work: Path, rule_text: str) -> None:
    behavior, reason = verdict(rules(rule_text), "Bash", {"command": "ls"}, work)
    assert behavior is ASK
    assert "whole-tool rule" in reason


def test_symlink_that_leaves_the_allowed_folder_asks(work: Path) -> None:
    assert verdict(rules("Edit(./**)"), "Edit", {"file_path": str(work / "out/deep/x")},
                   work)[0] is ASK
    assert verdict(rules("Bash(cat:*)"), "Bash", {"command": "cat out/deep/x"},
                   work)[0] is ASK
    # A link from outside into the allowed tree: the path as written must match too.
    real = work.parent / "elsewhere"
    link = work.parent / "to_work"
    os.symlink(work, link)
    found = rules(f"Edit(/{work}/**)")
    assert verdict(found, "Edit", {"file_path": str(work / "src/a")}, work)[0] is ALLOW
    assert verdict(found, "Edit", {"file_path": str(link / "src/a")}, work)[0] is ASK
    assert real.is_dir()


@pytest.mark.parametrize("command", [
    "pkexec rm -rf x", 'tcsh -c "rm -rf x"', "env X=1 rm x", "xargs rm", "sudo rm x",
    "sudo -u root rm x", "doas rm x", "timeout 5 rm x", "nice -n 5 rm x", "nohup rm x",
    "busybox rm x", "busybox sh -c 'rm x'", "su -c 'rm x'", "su root -c 'rm x'",
    "runuser -u u -- rm x", "flock /tmp/l rm x", "flock -c 'rm x' /tmp/l",
    "watch 'rm x'", "setsid rm x", "unshare -r rm x", "chroot / rm x",
    "nsenter -t 1 -m rm x", "stdbuf -o0 rm x", "ionice -c3 rm x", "command rm x",
    "builtin rm x", "exec rm x", "time rm x", "fish -c 'rm x'", "zsh -ec 'rm x'",
    "ksh -c 'rm x'", "mksh -c 'rm x'", "dash -c 'rm x'", "csh -c 'rm x'",
    "eval 'rm x'", "find . -exec rm {} ;", "bash -c 'echo ok && rm x'",
    "/usr/bin/env rm x", "sudo sh -c 'pkexec rm x'",
])
def test_deny_rules_see_through_wrappers_and_shells(work: Path, command: str) -> None:
    found = rules("Bash(echo:*)", deny=("Bash(rm:*)",))
    behavior, reason = verdict(found, "Bash", {"command": command}, work)
    assert (behavior, reason) == (DENY, "denied by the rule Bash(rm:*)")


@pytest.mark.parametrize("command", ["sudo touch a", "env touch a", "bash -c 'touch a'",
                                     "xargs touch", "timeout 5 touch a"])
def test_wrappers_are_not_allowed_by_a_prefix_rule(work: Path, command: str) -> None:
    found = rules("Bash(sudo:*)", "Bash(env:*)", "Bash(bash:*)", "Bash(xargs:*)",
                  "Bash(timeout:*)")
    assert verdict(found, "Bash", {"command": command}, work)[0] is ASK
    assert verdict(rules(f"Bash({command})"), "Bash", {"command": command}, work)[0] is ALLOW


def test_not_understood_asks_with_the_reason(work: Path) -> None:
    behavior, reason = verdict(rules("Bash(git diff *)"), "Bash",
                               {"command": "git diff > x"}, work)
    assert behavior is ASK
    assert reason == "not understood by the shell analyzer: redirection"
