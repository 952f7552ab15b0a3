"""The differential cases: (rules, call) pairs read from ``cases.jsonl``.

Each line of ``cases.jsonl`` is one case::

    {"id": "bash-prefix-plain", "rules": ["Bash(touch:*)"], "tool": "Bash",
     "input": {"command": "touch a"}, "note": "why this case exists"}

Optional keys: ``category`` (the class of case, default ``curated``), ``deny_rules``
(rules delivered with behavior "deny") and ``add_dirs``
(folders given to the CLI at start). Strings may use the placeholders of
:mod:`.sandbox`. Cases with the same rules, deny rules and add-dirs form a *group*: one
CLI session measures a whole group, one call after another.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES_FILE = HERE / "cases.jsonl"
VERDICTS_JSON = HERE / "cli_verdicts.json"
VERDICTS_MD = HERE / "cli_verdicts.md"

GroupKey = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True)
class Case:
    """One rule set and one tool call to judge under it."""

    id: str
    tool: str
    input: dict[str, Any]
    rules: tuple[str, ...] = ()
    deny_rules: tuple[str, ...] = ()
    add_dirs: tuple[str, ...] = ()
    note: str = ""
    category: str = "curated"
    split: str = "curated"

    @property
    def group_key(self) -> GroupKey:
        """Cases with equal keys can share one CLI session."""
        return (self.rules, self.deny_rules, self.add_dirs)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Case:
        """A case from one parsed ``cases.jsonl`` line; unknown keys are an error."""
        known = {"id", "tool", "input", "rules", "deny_rules", "add_dirs", "note", "category"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"case {data.get('id')!r}: unknown keys {sorted(unknown)}")
        return cls(
            id=data["id"],
            tool=data["tool"],
            input=dict(data["input"]),
            rules=tuple(data.get("rules", ())),
            deny_rules=tuple(data.get("deny_rules", ())),
            add_dirs=tuple(data.get("add_dirs", ())),
            note=data.get("note", ""),
            category=data.get("category", "curated"),
        )


@dataclass
class Group:
    """Cases that share rules, deny rules and add-dirs, in file order."""

    key: GroupKey
    cases: list[Case] = field(default_factory=list)

    @property
    def rules(self) -> tuple[str, ...]:
        return self.key[0]

    @property
    def deny_rules(self) -> tuple[str, ...]:
        return self.key[1]

    @property
    def add_dirs(self) -> tuple[str, ...]:
        return self.key[2]


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    """All cases in file order; duplicate ids are an error."""
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            cases.append(Case.from_json(json.loads(line)))
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{path.name}:{number}: {exc}") from exc
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate case ids: {duplicates}")
    return cases


def load_all_cases(path: Path = CASES_FILE) -> list[Case]:
    """The curated cases of ``cases.jsonl``, then the generated ones (both splits)."""
    from .generate import iter_all

    cases = [*load_cases(path), *iter_all()]
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate case ids: {duplicates}")
    return cases


def group_cases(cases: list[Case]) -> list[Group]:
    """Cases grouped by rule set, groups in order of first appearance."""
    groups: dict[GroupKey, Group] = {}
    for case in cases:
        groups.setdefault(case.group_key, Group(case.group_key)).cases.append(case)
    return list(groups.values())


def split_rule(rule: str) -> tuple[str, str | None]:
    """``"Bash(touch:*)"`` → ``("Bash", "touch:*")``; ``"Read"`` → ``("Read", None)``."""
    if rule.endswith(")") and "(" in rule:
        tool, _, rest = rule.partition("(")
        return tool, rest[:-1]
    return rule, None
