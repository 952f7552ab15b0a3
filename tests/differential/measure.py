"""Re-measure the CLI's verdicts and rewrite ``cli_verdicts.json`` and ``cli_verdicts.md``.

Run from the repository root::

    .venv/bin/python -m tests.differential.measure [--concurrency 3]

It drives the Claude Code CLI bundled in claude-agent-sdk (loopback only, scratch HOME
and config) through every case in ``cases.jsonl``; see :mod:`.cli_probe`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from claude_agent_sdk._cli_version import __cli_version__
from claude_agent_sdk._version import __version__ as sdk_version

from .cases import VERDICTS_JSON, VERDICTS_MD, Case, group_cases, load_all_cases
from .cli_probe import Verdict, measure

VERDICTS = ("allow", "ask", "deny", "error")


async def measure_cases(cases: Sequence[Case], *, concurrency: int = 3,
                        scratch: Path | None = None) -> tuple[list[Verdict], float]:
    """The CLI's verdict for each case, in order, and the seconds the run took."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
        measured = await measure(group_cases(list(cases)), scratch or Path(tmp),
                                 concurrency=concurrency)
    # Groups gather cases from anywhere in the list: put the verdicts back in case order.
    by_id = {v.case_id: v for v in measured}
    return [by_id[c.id] for c in cases], time.monotonic() - started


def table_data(cases: Sequence[Case], verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """What ``cli_verdicts.json`` holds: versions, counts and one row per case."""
    counts = Counter(v.verdict for v in verdicts)
    return {
        "cli_version": __cli_version__,
        "sdk_version": sdk_version,
        "counts": {name: counts.get(name, 0) for name in VERDICTS},
        "verdicts": [
            {"id": c.id, "category": c.category, "split": c.split, "verdict": v.verdict,
             "grant_applied": v.grant_applied,
             "detail": v.detail}
            for c, v in zip(cases, verdicts, strict=True)
        ],
    }


def _visible(text: str) -> str:
    """Newlines, tabs and unusual spaces as escapes, so the table shows them."""
    out = []
    for char in text:
        if char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif not char.isprintable() or (char.isspace() and char != " "):
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = _visible(text).replace("|", "\\|")
    if not text:
        return ""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def render_markdown(cases: Sequence[Case], data: dict[str, Any]) -> str:
    """A readable table of every case and the CLI's verdict."""
    counts = ", ".join(f"{k} {v}" for k, v in data["counts"].items())
    lines = [
        "# Claude Code CLI verdicts for the differential cases",
        "",
        f"Measured with Claude Code {data['cli_version']} (claude-agent-sdk "
        f"{data['sdk_version']}): {len(cases)} cases, {counts}.",
        "Rules were delivered as `addRules`/`session` permission updates (deny rules with",
        "behavior `deny`), as \"allow for this session\" sends them; add-dirs as the SDK",
        "option. `{cwd}` is the workspace, `{elsewhere}` a folder outside it, `{extra}` an",
        "add-dir, `{home}` the CLI's HOME. \"grant ignored\" marks groups where the CLI",
        "did not apply the update at all (the control call in the same update still asked).",
        "Regenerate with `python -m tests.differential.measure`; inputs: `cases.jsonl` (curated)",
        "and `generate.py` (generated, splits `tune` and `holdout`).",
        "",
        "| case | category | allow rules | deny rules | add-dirs | tool | input | CLI | detail |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case, row in zip(cases, data["verdicts"], strict=True):
        verdict = row["verdict"] if row["grant_applied"] else f"{row['verdict']} (grant ignored)"
        call_input = case.input.get("command") or case.input.get("file_path") or \
            case.input.get("url") or case.input
        cells = [case.id, case.category, ", ".join(case.rules), ", ".join(case.deny_rules),
                 ", ".join(case.add_dirs), case.tool, call_input]
        lines.append("| " + " | ".join(_cell(c) for c in cells)
                     + f" | **{verdict}** | {_cell(row['detail'][:100])} |")
    return "\n".join(lines) + "\n"


def write_tables(cases: Sequence[Case], verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """Rewrite ``cli_verdicts.json`` and ``cli_verdicts.md``; returns the JSON data."""
    data = table_data(cases, verdicts)
    VERDICTS_JSON.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    VERDICTS_MD.write_text(render_markdown(cases, data), encoding="utf-8")
    return data


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every case and rewrite the tables; exit 1 if a case reached no verdict."""
    parser = argparse.ArgumentParser(prog="python -m tests.differential.measure",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--concurrency", type=int, default=3,
                        help="CLI sessions at once (default 3)")
    args = parser.parse_args(argv)
    cases = load_all_cases()
    verdicts, seconds = asyncio.run(measure_cases(cases, concurrency=args.concurrency))
    data = write_tables(cases, verdicts)
    print(f"{len(cases)} cases in {seconds:.1f} s with Claude Code {data['cli_version']}: "
          + ", ".join(f"{k} {v}" for k, v in data["counts"].items()))
    errors = [v for v in verdicts if v.verdict == "error"]
    for verdict in errors:
        print(f"  no verdict: {verdict.case_id}: {verdict.detail}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
