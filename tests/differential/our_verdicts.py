"""Our verdicts for the differential cases, from ``qoder-desktop rules check --batch``.

The checker runs as a subprocess (``python -m qoder_desktop rules check --batch``), one
JSON case per stdin line, one ``{"verdict": ..., "reason": ...}`` line back per case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .cases import Case
from .sandbox import Sandbox

COMMAND = [sys.executable, "-m", "qoder_desktop", "rules", "check"]
TIMEOUT = 120.0


@dataclass(frozen=True)
class OurVerdict:
    """What our matcher says about one case."""

    verdict: str  # "allow" | "ask" | "deny"
    reason: str


def checker_available() -> bool:
    """Does this tree have ``rules check --batch``? (Its help must mention --batch.)"""
    result = subprocess.run([*COMMAND, "--help"], capture_output=True, text=True,
                            timeout=TIMEOUT, check=False)
    return result.returncode == 0 and "--batch" in result.stdout


def batch_line(case: Case, box: Sandbox) -> dict[str, Any]:
    """One ``--batch`` input line: the case with the sandbox's real paths."""
    return {
        "cwd": str(box.workspace),
        "add_dirs": box.fill(list(case.add_dirs)),
        "rules": box.fill(list(case.rules)),
        "deny_rules": box.fill(list(case.deny_rules)),
        "tool": case.tool,
        "input": box.fill(case.input),
    }


def our_verdicts(cases: Sequence[Case], box: Sandbox) -> list[OurVerdict]:
    """Run the checker once for all cases, with the sandbox's HOME.

    Raises:
        AssertionError: the checker failed or answered with the wrong shape.
    """
    stdin = "".join(json.dumps(batch_line(c, box)) + "\n" for c in cases)
    env = dict(os.environ, HOME=str(box.home), USERPROFILE=str(box.home))
    result = subprocess.run([*COMMAND, "--batch"], input=stdin, capture_output=True,
                            text=True, timeout=TIMEOUT, env=env, cwd=box.workspace,
                            check=False)
    assert result.returncode == 0, f"rules check --batch failed:\n{result.stderr}"
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == len(cases), (
        f"rules check --batch answered {len(lines)} lines for {len(cases)} cases")
    verdicts = []
    for case, line in zip(cases, lines, strict=True):
        data = json.loads(line)
        assert data.get("verdict") in ("allow", "ask", "deny"), f"{case.id}: {line}"
        verdicts.append(OurVerdict(data["verdict"], str(data.get("reason", ""))))
    return verdicts
