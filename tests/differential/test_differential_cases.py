"""The differential case file and its committed verdict table are whole and consistent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from differential import generate, sandbox
from differential.cases import VERDICTS_JSON, VERDICTS_MD, load_all_cases, load_cases, split_rule
from differential.measure import render_markdown

READ_ONLY_SYSTEM_FILES = {"/etc/hosts"}


def test_the_cases_cover_every_tool_family_and_rule_kind() -> None:
    cases = load_cases()
    assert len(cases) >= 150
    tools = {c.tool for c in cases}
    assert {"Bash", "Read", "Edit", "Write", "WebFetch"} <= tools
    assert any(t.startswith("mcp__") for t in tools)
    assert any(c.deny_rules for c in cases)
    assert any(c.add_dirs for c in cases)


def test_file_cases_only_name_sandbox_paths() -> None:
    """A case that the CLI allows really runs: it must never touch a real file."""
    for case in load_all_cases():
        path = case.input.get("file_path")
        if path is None:
            continue
        in_sandbox = path.startswith(sandbox.PLACEHOLDERS) or path.startswith("~/")
        read_only = case.tool == "Read" and path in READ_ONLY_SYSTEM_FILES
        assert in_sandbox or read_only, f"{case.id} names a real path: {path}"


def test_placeholders_are_filled_with_the_sandbox_folders(tmp_path: Path) -> None:
    box = sandbox.build(tmp_path / "box")
    filled = box.fill({"cmd": ["touch {cwd}/a {elsewhere}/b"], "path": "{home}/.bashrc"})
    assert filled == {"cmd": [f"touch {box.workspace}/a {box.elsewhere}/b"],
                      "path": f"{box.home}/.bashrc"}
    assert sandbox.unfill_text(box, f"{box.extra}/x and {box.workspace}") == "{extra}/x and {cwd}"
    assert (box.workspace / "out-link").resolve() == box.elsewhere.resolve()


@pytest.mark.parametrize(("rule", "parts"), [
    ("Bash(touch:*)", ("Bash", "touch:*")),
    ("Bash(echo (a))", ("Bash", "echo (a)")),
    ("Edit", ("Edit", None)),
    ("mcp__notes__*", ("mcp__notes__*", None)),
])
def test_rules_split_into_tool_and_content(rule: str, parts: tuple[str, str | None]) -> None:
    assert split_rule(rule) == parts


def test_the_committed_tables_cover_every_case_in_order() -> None:
    cases = load_all_cases()
    data = json.loads(VERDICTS_JSON.read_text(encoding="utf-8"))
    assert [row["id"] for row in data["verdicts"]] == [c.id for c in cases], (
        "cases.jsonl changed: run python -m tests.differential.measure")
    assert VERDICTS_MD.read_text(encoding="utf-8") == render_markdown(cases, data)


def test_the_generator_is_deterministic_and_tags_every_case() -> None:
    """Both splits come out the same every time, each case with a category; the held-out
    split shares few cases with the tuning split (only calls without program or file names)."""
    first, again = list(generate.iter_all()), list(generate.iter_all())
    assert first == again
    tune = [c for c in first if c.split == "tune"]
    holdout = [c for c in first if c.split == "holdout"]
    assert len(tune) >= 150 and len(holdout) >= 150
    assert all(c.category != "curated" for c in first)
    categories = {c.category for c in first}
    assert {c.category for c in tune} < {c.category for c in holdout} == categories
    assert 400 <= len(load_all_cases()) <= 700
    seen = {(c.tool, json.dumps(c.input, sort_keys=True), c.rules, c.deny_rules) for c in tune}
    overlap = [c.id for c in holdout
               if (c.tool, json.dumps(c.input, sort_keys=True), c.rules, c.deny_rules) in seen]
    assert len(overlap) <= len(holdout) // 4, overlap
