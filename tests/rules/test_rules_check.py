"""`qoder-desktop rules check`: one case on the command line, or a batch on stdin."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.entry_point import run_cli, scratch_env

from qoder_desktop.__main__ import main
from qoder_desktop.rules.check import run_batch


def test_one_case_prints_the_verdict_and_reason(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    args = ["rules", "check", "--cwd", str(tmp_path), "--rule", "Bash(touch:*)", "Bash"]
    assert main([*args, '{"command": "touch a"}']) == 0
    assert capsys.readouterr().out == "allow: allowed by the rule Bash(touch:*)\n"
    assert main([*args, '{"command": "touch /elsewhere/y"}']) == 0
    assert capsys.readouterr().out == (
        "ask: path argument outside the session folder: /elsewhere/y\n")
    assert main([*args[:-1], "--add-dir", "/elsewhere", "Bash",
                 '{"command": "touch /elsewhere/y"}']) == 0
    assert capsys.readouterr().out.startswith("allow:")
    assert main([*args, '{"command": "touch .git/config"}']) == 0
    assert capsys.readouterr().out == "ask: sensitive file .git/config\n"
    assert main(["rules", "check", "--cwd", str(tmp_path), "--rule", "Bash",
                 "--deny-rule", "Bash(rm:*)", "Bash", '{"command": "pkexec rm -rf x"}']) == 0
    assert capsys.readouterr().out == "deny: denied by the rule Bash(rm:*)\n"


@pytest.mark.parametrize("extra", [
    ["--rule", "Bash(", "Bash", "{}"],
    ["Bash", "{not json"],
    ["Bash", "[1]"],
    ["Bash"],
    ["--add-dir", "relative", "Bash", "{}"],
])
def test_bad_arguments_exit_2_with_a_message(tmp_path: Path, extra: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "check", "--cwd", str(tmp_path), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "rules check" in captured.err


def test_batch_answers_every_line_in_order_and_never_allows_a_bad_one(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    lines = [
        {"cwd": cwd, "add_dirs": [], "rules": ["Bash(touch:*)"], "deny_rules": [],
         "tool": "Bash", "input": {"command": "touch a"}},
        "not json",
        {"cwd": cwd, "rules": ["Bash(touch:*)"], "tool": "Bash", "input": {"command": "x"},
         "add_dirs": "not a list"},
        {"cwd": cwd, "rules": ["Edit(./**)"], "tool": "Edit",
         "input": {"file_path": f"{cwd}/.claude/settings.local.json"}},
        {"cwd": "relative", "rules": ["Bash(touch:*)"], "tool": "Bash",
         "input": {"command": "touch a"}},
        [1, 2],
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    out = io.StringIO()
    run_batch(io.StringIO(text), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["verdict"] for a in answers] == ["allow", "ask", "ask", "ask", "ask", "ask"]
    assert answers[3]["reason"].endswith("sensitive file .claude/settings.local.json")
    assert all(a["reason"].startswith("malformed case") for a in answers[1:3] + answers[4:])


def test_batch_output_line_n_answers_input_line_n_blank_lines_too(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    good = json.dumps({"cwd": cwd, "rules": ["Bash(ls:*)"], "tool": "Bash",
                       "input": {"command": "ls"}})
    denied = json.dumps({"cwd": cwd, "rules": ["Bash"], "deny_rules": ["Bash(rm:*)"],
                         "tool": "Bash", "input": {"command": "rm x"}})
    lines = [good, "", "   ", "{not json", denied, "", "[1]", good]
    run = run_cli(scratch_env(tmp_path), "rules", "check", "--batch",
                  stdin="\n".join(lines) + "\n")
    assert run.returncode == 0, run.stderr
    answers = [json.loads(line) for line in run.stdout.split("\n")[:-1]]
    assert len(answers) == len(lines)
    assert [a["verdict"] for a in answers] == [
        "allow", "ask", "ask", "ask", "deny", "ask", "ask", "allow"]
    assert [bool(a.get("error")) for a in answers] == [
        False, True, True, True, False, True, True, False]
    assert "blank" in answers[1]["error"] and "blank" in answers[5]["error"]
    assert answers[4]["reason"] == "denied by the rule Bash(rm:*)"


def test_runs_without_qt_or_the_sdks(tmp_path: Path) -> None:
    code = ("import sys; from qoder_desktop.__main__ import main; "
            "rc = main(['rules', 'check', '--batch']); "
            "bad = [m for m in sys.modules if m.startswith(('PySide6', 'qasync', "
            "'claude_agent_sdk', 'qoder_agent_sdk'))]; print(bad, file=sys.stderr); "
            "sys.exit(rc or (3 if bad else 0))")
    case = json.dumps({"cwd": str(tmp_path), "rules": ["Bash(ls:*)"], "tool": "Bash",
                       "input": {"command": "ls"}})
    done = subprocess.run([sys.executable, "-c", code], input=case + "\n", text=True,
                          capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"verdict": "allow",
                                       "reason": "allowed by the rule Bash(ls:*)"}
