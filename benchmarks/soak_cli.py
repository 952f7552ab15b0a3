"""One terminal agent's CLI for the soak, in a process of its own (as Claude Code runs).

`soak_agents` starts one per CLI session id and sends one JSON line on stdin::

    {"session_id": "...", "workspace": "...", "calls": 25, "first": 100, "hook_processes": 1}

It plays the session as the CLI does: for each call, the tool call goes into the
session's transcript file, the hook asks the app (the hook's own protocol code,
`hook_client.ask_app`, from this process; `hook_processes` of the calls as the real hook
command, a child of this process, as the CLI runs it), and the result goes into the
transcript. Then it prints its tally (``{"allow": 20, "deny": 5, "errors": []}``) and
exits, and the app sees the session's CLI end, as it does when a person quits one.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import uuid
from typing import Any

from benchmarks.soak_agents import (
    HOOK,
    _outcome,
    _result_line,
    _transcript_line,
    _transcript_path,
)


def _hook_process(event: dict[str, Any]) -> dict[str, Any] | None:
    """The hook command as the CLI runs it: a fresh interpreter, the event on stdin."""
    done = subprocess.run(HOOK, input=json.dumps(event).encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, timeout=120, check=False)
    text = done.stdout.decode().strip()
    return json.loads(text) if text else None


def play(session_id: str, workspace: str, calls: int, first: int,
         hook_processes: int) -> dict[str, Any]:
    """Play one CLI session's calls; its tally and errors."""
    from qoder_desktop.terminal.hook_client import ask_app

    tally: collections.Counter[str] = collections.Counter()
    errors: list[str] = []
    transcript = _transcript_path(workspace, session_id)
    for number in range(first, first + calls):
        tool_use_id = f"toolu_{uuid.uuid4().hex}"
        command = f"touch t{number}.txt"
        with transcript.open("a", encoding="utf-8") as stream:
            stream.write(_transcript_line(tool_use_id, command))
        event = {"hook_event_name": "PermissionRequest", "session_id": session_id,
                 "cwd": workspace, "permission_mode": "default", "tool_name": "Bash",
                 "tool_input": {"command": command}, "permission_suggestions": [],
                 "transcript_path": str(transcript)}
        try:
            if hook_processes > 0:
                hook_processes -= 1
                answer = _hook_process(event)
            else:
                answer = ask_app("claude", event)
            tally[_outcome(answer)] += 1
            with transcript.open("a", encoding="utf-8") as stream:
                stream.write(_result_line(tool_use_id, answer))
        except Exception as exc:
            errors.append(f"terminal: {type(exc).__name__}: {exc}")
    return {**tally, "errors": errors}


def main() -> None:
    """Read the session's plan from stdin, play it, print the tally."""
    plan = json.loads(sys.stdin.readline())
    print(json.dumps(play(str(plan.get("session_id") or uuid.uuid4()), plan["workspace"],
                          int(plan["calls"]), int(plan["first"]),
                          int(plan.get("hook_processes", 0)))), flush=True)


if __name__ == "__main__":
    main()
