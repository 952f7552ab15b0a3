"""`rules.cli_model`: what the Claude Code CLI would decide (the model behind `rules check`).

Each row is a behaviour measured live against the bundled CLI (tests/differential); here
it is pinned on a scratch folder so a change to the model shows at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.rules import cli_files
from qoder_desktop.rules.cli_model import predict


def _rules(allow: list[str], deny: list[str] = ()) -> list[SessionRule]:  # type: ignore[assignment]
    made = []
    for behavior, texts in ((RuleBehavior.DENY, deny), (RuleBehavior.ALLOW, allow)):
        for text in texts:
            value = RuleValue(tool_name=text) if "(" not in text else RuleValue.parse(text)
            made.append(SessionRule(session_id="s", behavior=behavior, rule=value))
    return made


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with a source folder, a link out of it and a link deeper into it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    work = tmp_path / "ws"
    (work / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "out", work / "out-link")
    os.symlink(work / "src" / "pkg", work / "deep-link")
    return work


def _bash(command: str) -> tuple[str, dict[str, Any]]:
    return "Bash", {"command": command}


@pytest.mark.parametrize(("allow", "call", "verdict"), [
    # wrappers the CLI looks through, and ones it does not
    (["Bash(touch:*)"], _bash("nice -n 5 touch a"), "allow"),
    (["Bash(touch:*)"], _bash("timeout -s KILL 5 touch a"), "allow"),
    (["Bash(touch a)"], _bash("command touch a"), "allow"),
    (["Bash(touch:*)"], _bash("time touch a"), "allow"),
    (["Bash(touch:*)"], _bash("echo a | xargs touch"), "allow"),
    (["Bash(touch:*)"], _bash("env touch a"), "ask"),
    (["Bash(touch:*)"], _bash("X=1 touch a"), "ask"),
    # what the CLI ignores in a line
    (["Bash(touch a)"], _bash("touch a >/dev/null 2>&1"), "allow"),
    (["Bash(touch a)"], _bash("# note\ntouch a"), "allow"),
    (["Bash(touch a)"], _bash("touch \\\na"), "allow"),
    (["Bash(touch:*)"], _bash("touch a > out.log"), "ask"),
    # rule text against command text
    (["Bash(touch a)"], _bash("touch 'a'"), "ask"),
    (["Bash(touch  a)"], _bash("touch a "), "ask"),
    (["Bash('touch':*)"], _bash("touch b"), "ask"),
    (["Bash('touch':*)"], _bash("'touch' b"), "allow"),
    (["Bash(touch:*)"], _bash("\"touch\"  'a'"), "allow"),
    (["Bash(touch *:*)"], _bash("touch a"), "ask"),
    (["Bash(git add:*)"], _bash("'git add' f1"), "ask"),  # one quoted word is not two
    (["Bash(git add:*)"], _bash("git  add f1"), "allow"),
    (["Bash(touch :*)"], _bash("touch a"), "ask"),
    # paths, globs and compounds
    (["Bash(touch:*)"], _bash("touch src/../a"), "ask"),
    (["Bash(touch:*)"], _bash("touch out-link/a"), "ask"),
    (["Bash(touch:*)"], _bash("touch *.txt"), "ask"),
    (["Bash(touch:*)", "Bash(cd:*)"], _bash("cd src && touch a"), "ask"),
    (["Bash(awk:*)"], _bash("awk 'BEGIN{system(\"touch a\")}'"), "ask"),
    (["Bash(cp:*)"], _bash("cp -n a b"), "ask"),
    (["Bash(touch:*)"], _bash("touch -c a"), "allow"),
    (["Bash(mkdir:*)"], _bash("mkdir -m 700 d"), "ask"),
    (["Bash(cp:*)"], _bash("nohup cp a b 2>&1"), "allow"),
    (["Bash(rm:*)"], _bash("rm -rf ./"), "ask"),
    (["Bash(touch:*)"], _bash("=touch a"), "ask"),
    (["Bash(touch:*)"], _bash("touch FILE~1.TXT"), "ask"),
    # the CLI checks paths only for the commands in its own table
    (["Bash(mkfifo:*)"], _bash("mkfifo out-link/../p *"), "allow"),
    (["Bash(mkfifo:*)"], _bash("mkfifo ~/.bashrc"), "ask"),
    (["Bash(git add:*)"], _bash("git add src/../f1*"), "allow"),
    (["Bash(chmod 644:*)", "Bash(cd:*)"], _bash("cd src && chmod 644 ../x"), "allow"),
    (["Bash(git diff *)"], _bash("git -C /elsewhere diff"), "ask"),
    ([], _bash("ls | head"), "allow"),
    ([], _bash("ls ~/.ssh"), "ask"),
    (["Bash"], _bash("rm -f zz"), "allow"),
    (["Bash"], _bash("echo x >> .git/config"), "ask"),
])
def test_bash_calls(ws: Path, allow: list[str], call: tuple[str, dict[str, Any]],
                    verdict: str) -> None:
    assert predict(_rules(allow), *call, str(ws))[0] == verdict


@pytest.mark.parametrize(("allow", "tool", "path", "verdict"), [
    ([], "Read", "{ws}/src/main.py", "allow"),
    ([], "Read", "{ws}/out-link/x.txt", "ask"),
    ([], "Read", "{ws}/src/MAIN~1.PY", "ask"),
    (["Edit(./**)"], "Write", "{ws}/out-link/../x.txt", "allow"),
    (["Edit(./**)"], "Write", "{ws}/deep-link/x.txt", "allow"),
    (["Edit(./**)"], "Write", "{ws}/out-link/x.txt", "ask"),
    (["Edit(./**)"], "Write", "{ws}/x.txt.", "ask"),
    (["Edit(./**)"], "Write", "{ws}/.claude/settings.json", "ask"),
    (["Edit(./src/../**)"], "Write", "{ws}/x.txt", "ask"),
    (["Edit(*)"], "Write", "{ws}/x.txt", "ask"),
    (["Edit(**)"], "Write", "{ws}/src/x.txt", "allow"),
    (["Edit"], "Write", "{ws}/x.txt", "ask"),
    (["Write"], "Write", "{ws}/x.txt", "allow"),
])
def test_file_calls(ws: Path, allow: list[str], tool: str, path: str, verdict: str) -> None:
    call = {"file_path": path.format(ws=ws), "content": "x"}
    assert predict(_rules(allow), tool, call, str(ws))[0] == verdict


@pytest.mark.parametrize(("deny", "tool", "path", "verdict"), [
    (["Edit(./src/**)"], "Write", "{ws}/SRC/a.txt", "deny"),
    (["Edit(**/.env)"], "Write", "{ws}/src/pkg/.ENV", "deny"),
    (["Read(*.key)"], "Write", "{ws}/src/id.key", "deny"),
    (["Read(./.secret/**)"], "Edit", "{ws}/.Secret/a.txt", "deny"),
    (["Edit(./src/**)"], "Read", "{ws}/src/a.txt", "allow"),
])
def test_file_denies(ws: Path, deny: list[str], tool: str, path: str, verdict: str) -> None:
    call = {"file_path": path.format(ws=ws), "old_string": "", "new_string": "x"}
    assert predict(_rules(["Edit", "Write", "Read"], deny), tool, call, str(ws))[0] == verdict


@pytest.mark.parametrize(("command", "verdict"), [
    ("\\rm -f zz", "deny"), ("nohup rm -f zz", "deny"), ("echo $(rm -f zz)", "deny"),
    ("bash -c 'rm -f zz'", "ask"), ("Rm -f zz", "allow"), ("touch a", "allow"),
])
def test_bash_denies(ws: Path, command: str, verdict: str) -> None:
    assert predict(_rules(["Bash"], ["Bash(rm:*)"]), *_bash(command), str(ws))[0] == verdict


@pytest.mark.parametrize(("url", "host"), [
    ("http://2130706433/", "127.0.0.1"), ("http://127.1/", "127.0.0.1"),
    ("http://0177.0.0.1/", "127.0.0.1"), ("http://0x7f000001/", "127.0.0.1"),
    ("https://ＥＸＡＭＰＬＥ.com./", "example.com"), ("https://bücher.example/",
                                                    "xn--bcher-kva.example"),
])
def test_webfetch_hosts_are_normalised_before_a_domain_deny(ws: Path, url: str,
                                                            host: str) -> None:
    assert cli_files.cli_host(url) == host
    rules = _rules(["WebFetch"], [f"WebFetch(domain:{host})"])
    assert predict(rules, "WebFetch", {"url": url, "prompt": "p"}, str(ws))[0] == "deny"


@pytest.mark.parametrize(("allow", "tool", "verdict"), [
    (["mcp__notes__*"], "mcp__notes__delete", "allow"),
    (["mcp__notes__read*"], "mcp__notes__delete", "ask"),
    (["mcp__*"], "mcp__notes__read", "ask"),
    (["mcp__notes__read(*)"], "mcp__notes__read", "ask"),  # the CLI refuses the update
])
def test_mcp_rules(ws: Path, allow: list[str], tool: str, verdict: str) -> None:
    assert predict(_rules(allow), tool, {}, str(ws))[0] == verdict


def test_a_refused_update_takes_every_allow_rule_with_it(ws: Path) -> None:
    verdict, reason = predict(_rules(["Bash(*)", "Bash(touch:*)"]), *_bash("touch a"), str(ws))
    assert verdict == "ask" and "refuses an update holding Bash(*)" in reason


def test_glob_is_not_a_tool_of_this_cli(ws: Path) -> None:
    assert predict(_rules(["Read"]), "Glob", {"pattern": "*"}, str(ws))[0] == "deny"
