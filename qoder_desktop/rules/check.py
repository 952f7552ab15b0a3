"""`qoder-desktop rules check`: what the app itself decides about a call under given rules.

    qoder-desktop rules check --cwd DIR [--add-dir DIR]... [--rule RULE]...
                              [--deny-rule RULE]... TOOL INPUT_JSON
    qoder-desktop rules check --batch < cases.jsonl

Prints `allow: <reason>`, `ask: <reason>` or `deny: <reason>` (exit 0; exit 2 on bad
arguments, invalid JSON or an invalid rule). `--batch` reads one JSON object per line
(`{"cwd", "add_dirs", "rules", "deny_rules", "tool", "input"}`) and writes one
`{"verdict", "reason"}` line per input line, in order; a blank or malformed line gives
an `ask` with an ``error`` key and processing continues. The verdict is what the Claude
Code CLI would decide (`cli_model.predict`, measured against the bundled CLI by
tests/differential); a reason starting with "unsure:" marks a guess. It explains, it
never grants: nothing answers a request on its word (the app's own deny rules use
`matcher.evaluate`, and only a person or the CLI allows). Qt-free and SDK-free, so it starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import TextIO

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.rules.cli_model import predict

_SESSION = "rules-check"
_MCP_WILDCARD = re.compile(r"^mcp__[A-Za-z0-9_.\-*]+$")


class CheckError(ValueError):
    """A case that cannot be checked (bad rule, bad input, bad folder)."""


def _rules(texts: Sequence[str], behavior: RuleBehavior) -> list[SessionRule]:
    found = []
    for text in texts:
        if not isinstance(text, str):
            raise CheckError(f"a rule must be a string, not {type(text).__name__}")
        try:
            value = RuleValue.parse(text)
        except ValueError as exc:
            if not _MCP_WILDCARD.match(text.strip()):
                raise CheckError(f"invalid rule {text!r}: {exc}") from None
            value = RuleValue(tool_name=text.strip())  # `mcp__server__*`: a CLI rule
        found.append(SessionRule(session_id=_SESSION, behavior=behavior, rule=value))
    return found


def _folder(value: object, what: str) -> str:
    if not isinstance(value, str) or not os.path.isabs(value):
        raise CheckError(f"{what} must be an absolute path, not {value!r}")
    return value


def check(cwd: object, add_dirs: object, allow_rules: object, deny_rules: object,
          tool: object, tool_input: object) -> tuple[str, str]:
    """(verdict, reason) for one case; raises CheckError for an unusable case."""
    if not isinstance(tool, str) or not tool:
        raise CheckError("the tool must be a non-empty string")
    if not isinstance(tool_input, dict):
        raise CheckError("the input must be a JSON object")
    for name, value in (("add_dirs", add_dirs), ("rules", allow_rules),
                        ("deny_rules", deny_rules)):
        if not isinstance(value, list | tuple):
            raise CheckError(f"{name} must be a list")
    assert isinstance(add_dirs, list | tuple)
    assert isinstance(allow_rules, list | tuple) and isinstance(deny_rules, list | tuple)
    folders = [_folder(d, "an added directory") for d in add_dirs]
    rules = _rules(deny_rules, RuleBehavior.DENY) + _rules(allow_rules, RuleBehavior.ALLOW)
    return predict(rules, tool, tool_input, _folder(cwd, "cwd"), folders)


def _error(message: str) -> dict[str, str]:
    """The answer to a line that is not a usable case: an `ask` carrying the error."""
    return {"verdict": "ask", "reason": f"malformed case: {message}", "error": message}


def _batch_line(line: str) -> dict[str, str]:
    if not line.strip():
        return _error("the line is blank (each line must be one JSON object)")
    try:
        case = json.loads(line)
        if not isinstance(case, dict):
            raise CheckError("each line must be a JSON object")
        verdict, reason = check(case.get("cwd"), case.get("add_dirs", []),
                                case.get("rules", []), case.get("deny_rules", []),
                                case.get("tool"), case.get("input"))
    except (CheckError, ValueError) as exc:
        return _error(str(exc))
    except Exception as exc:
        return _error(f"{type(exc).__name__}: {exc}")
    return {"verdict": verdict, "reason": reason}


def run_batch(lines: TextIO, out: TextIO) -> None:
    """Answer every input line with exactly one output line, in order.

    A blank or malformed line gets an error object (an `ask` with an ``error`` key), so
    output line N always answers input line N.
    """
    for line in lines:
        out.write(json.dumps(_batch_line(line)) + "\n")
        out.flush()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qoder-desktop rules check",
        description="Show what a tool call gets under the given session rules: "
                    "`allow: why`, `ask: why` or `deny: why` (what the agent's CLI would "
                    "decide; a reason starting with 'unsure:' is a guess). Exit 0, or 2 on "
                    "bad arguments. With --batch, each stdin line is one JSON object "
                    '{"cwd", "add_dirs", "rules", "deny_rules", "tool", "input"} and each '
                    'gets exactly one {"verdict", "reason"} line back, in order (a blank or '
                    "malformed line gets an error object).")
    parser.add_argument("--cwd", metavar="DIR", help="the session folder (absolute)")
    parser.add_argument("--add-dir", action="append", default=[], dest="add_dirs",
                        metavar="DIR",
                        help="an added directory of the session (repeatable)")
    parser.add_argument("--rule", action="append", default=[], dest="rules", metavar="RULE",
                        help="an allow rule, e.g. 'Bash(npm test:*)' (repeatable)")
    parser.add_argument("--deny-rule", action="append", default=[], dest="deny_rules",
                        metavar="RULE",
                        help="a deny rule (repeatable)")
    parser.add_argument("--batch", action="store_true",
                        help="read one JSON case per line on stdin, write one verdict "
                             "per line")
    parser.add_argument("tool", nargs="?", metavar="TOOL", help="the tool name, e.g. Bash")
    parser.add_argument("input", nargs="?", metavar="INPUT_JSON",
                        help="the tool input as a JSON object")
    return parser


_RULES_HELP = """\
usage: qoder-desktop rules check [--cwd DIR] [--add-dir DIR]... [--rule RULE]...
                                 [--deny-rule RULE]... TOOL INPUT_JSON
       qoder-desktop rules check --batch < cases.jsonl

Show what a tool call gets under given permission rules: allow, ask or deny, and why.
It explains what the agent's CLI would decide; it never answers a request itself.

commands:
  check    one case from the arguments, or one JSON case per line with --batch
           (`qoder-desktop rules check --help` for its options)

example:
  qoder-desktop rules check --cwd "$PWD" --rule 'Bash(npm test:*)' Bash '{"command": "npm test"}'
"""


def rules_main(argv: Sequence[str]) -> int:
    """Run `rules ...`; returns the exit code."""
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(_RULES_HELP)
        return 0
    if not argv or argv[0] != "check":
        what = f"unknown rules command {argv[0]!r}" if argv else "missing rules command"
        print(f"qoder-desktop rules: {what}.\n\n{_RULES_HELP}", file=sys.stderr, end="")
        return 2
    parser = _parser()
    try:
        args = parser.parse_args(list(argv[1:]))
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if args.batch:
        if args.tool or args.input:
            print("rules check: --batch takes its cases on stdin, not as arguments",
                  file=sys.stderr)
            return 2
        run_batch(sys.stdin, sys.stdout)
        return 0
    if not args.cwd or not args.tool or args.input is None:
        print("rules check: --cwd, TOOL and INPUT_JSON are required", file=sys.stderr)
        return 2
    try:
        tool_input = json.loads(args.input)
    except ValueError as exc:
        print(f"rules check: INPUT_JSON is not valid JSON: {exc}", file=sys.stderr)
        return 2
    try:
        verdict, reason = check(args.cwd, args.add_dirs, args.rules, args.deny_rules,
                                args.tool, tool_input)
    except CheckError as exc:
        print(f"rules check: {exc}", file=sys.stderr)
        return 2
    print(f"{verdict}: {reason}")
    return 0

