"""The rule matcher's cheaper probes and shortcuts give what the plain versions give.

The link probes (an O_PATH open of a folder on the way, an access for a last name) say
what an lstat says; the rule set found by its rules' identity decides with the very
objects it was given; a plain command's deny candidates worked out from its analysis
are the ones the full generous split finds (see also `test_fast_paths.py`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.rules import bash_paths, ruleset
from qoder_desktop.rules import matcher as rules
from qoder_desktop.shell import candidates, words
from tests.rules.strategies import shell_text


def _allow(text: str) -> SessionRule:
    return SessionRule(session_id="s", behavior=RuleBehavior.ALLOW,
                       rule=RuleValue(tool_name="Bash", rule_content=text), granted_by="user")


# -- the link probes (an open or an access instead of an lstat where it answers) -------


def _plain_is_link(path: str) -> bool:
    """What the walk asked before the probes: lstat, and no link where it fails."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _plain_real_dir(path: str) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode)


_PROBE_PATHS = ["work", "work/src", "work/src/deep", "work/file.txt", "work/out", "work/in",
                "work/src/up", "work/loop1", "work/dangling", "work/filelink", "worklink",
                "work/missing", "work/file.txt/x", "work/dangling/x", "work/out/sub",
                "work/in/deep", "work/loop1/x", "nowhere/x", "work/src/deep/"]


@pytest.mark.parametrize("relative", _PROBE_PATHS)
def test_the_link_probes_say_what_lstat_says(tree: Path, relative: str) -> None:
    path = str(tree / relative) + ("/" if relative.endswith("/") else "")
    for last in (False, True):
        assert bash_paths._is_link(path, last) == _plain_is_link(path), last
    assert bash_paths._real_dir(path) == _plain_real_dir(path)


def test_a_nul_in_a_probed_path_raises_as_lstat_does(tree: Path) -> None:
    for last in (False, True):
        with pytest.raises(ValueError):
            bash_paths._is_link(str(tree / "work\x00x"), last)
    with pytest.raises(ValueError):
        os.lstat(str(tree / "work\x00x"))


def test_a_session_folder_turned_into_a_link_is_seen_on_the_next_call(tmp_path: Path) -> None:
    real = tmp_path / "real" / "project"
    (real / "src").mkdir(parents=True)
    folder = tmp_path / "alias"
    folder.mkdir()
    (folder / "project").mkdir()
    (folder / "project" / "src").mkdir()
    rule = _allow("git diff *")
    call = {"command": "git diff src/a.py"}
    cwd = str(folder / "project")
    assert rules.evaluate([rule], "Bash", call, cwd) is not None
    (folder / "project" / "src").rmdir()
    (folder / "project").rmdir()
    folder.rmdir()
    os.symlink(tmp_path / "real", folder)  # same names, now through a link
    explained = rules.explain([rule], "Bash", call, cwd)
    assert explained.verdict is not None  # still inside: the link's target is the folder
    os.symlink("/etc", real / "src" / "a.py")
    explained = rules.explain([rule], "Bash", call, cwd)
    assert explained.verdict is None
    assert explained.reason == "path argument outside the session folder: /etc"


# -- the rule set, found by the identity of its rules ----------------------------------


def test_a_rule_list_with_an_equal_but_other_rule_decides_with_that_rule(tmp_path: Path) -> None:
    first, second = _allow("git status"), _allow("git diff *")
    copy = second.model_copy()  # equal fields, another object
    assert copy == second and copy is not second
    call = {"command": "git diff a.txt"}
    assert rules.evaluate([first, second], "Bash", call, str(tmp_path)).rule is second
    assert rules.evaluate([first, copy], "Bash", call, str(tmp_path)).rule is copy
    assert rules.evaluate((first, second), "Bash", call, str(tmp_path)).rule is second
    assert rules.evaluate(iter([first]), "Bash", call, str(tmp_path)) is None
    assert rules.evaluate([first], "Bash", call, str(tmp_path)) is None



# -- a call's deny candidates: the plain case from the analysis -----------------------


def _plain_call_candidates(command: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What `Call.deny_candidates` gave before its plain case: every candidate, then the
    lexer's segments that are not among them."""
    found = tuple(candidates.deny_candidates(command))
    extra = [(c.text, c.words) for c in words.analyze(command).commands
             if (c.text, c.words) not in found]
    return found + tuple(extra)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(shell_text, st.tuples(st.sampled_from(["", " ", "\t", "\x0c", "\u3000"]),
                                       shell_text, st.sampled_from(["", " ", "\x0b"])
                                       ).map("".join)))
def test_a_calls_deny_candidates_are_the_plain_ones(text: str) -> None:
    call = ruleset.Call("Bash", {"command": text}, "/tmp")
    assert tuple(call.deny_candidates) == _plain_call_candidates(text)


@pytest.mark.parametrize("text", ["git diff src/a.py", "git  diff a", "sudo rm x",
                                  "/bin/rm x", "X=1 rm", "bash -c x", "eval rm", " ls ",
                                  "ls\u3000", "rm\x0ba", "watch rm"])
def test_a_calls_deny_candidates_for_common_lines(text: str) -> None:
    call = ruleset.Call("Bash", {"command": text}, "/tmp")
    assert tuple(call.deny_candidates) == _plain_call_candidates(text)


# -- a rule set's whole-tool allow rule, kept per tool name ----------------------------


def _whole(tool_name: str, content: str | None = None) -> SessionRule:
    return SessionRule(session_id="s", behavior=RuleBehavior.ALLOW,
                       rule=RuleValue(tool_name=tool_name, rule_content=content),
                       granted_by="user")


def test_whole_tool_allows_are_the_first_matching_rule_past_the_names_kept(
        tmp_path: Path) -> None:
    first, server, star = _whole("mcp__github"), _whole("mcp__github__*"), _whole("WebSearch", "*")
    rule_list = [_allow("git status"), first, server, star]
    kept = ruleset._WHOLE_TOOL_NAMES_KEPT
    names = [f"mcp__github__tool_{n}" for n in range(kept + 20)] + ["mcp__gitlab__x", "WebSearch"]
    for _round in range(2):  # the second round answers from what was kept
        for name in names:
            verdict = rules.evaluate(rule_list, name, {}, str(tmp_path))
            expected = next((r for r in rule_list if ruleset.whole_tool(r.rule, name, False)),
                            None)
            assert (verdict.rule if verdict else None) is expected, name
    assert rules.evaluate(rule_list, "mcp__github__issues", {}, str(tmp_path)).rule is first
    assert rules.evaluate(rule_list, "mcp__gitlab__x", {}, str(tmp_path)) is None
    assert rules.evaluate(rule_list, "WebSearch", {"query": "x"}, str(tmp_path)).rule is star
    assert len(ruleset.rule_set(rule_list)._whole_tool_allow) == kept
