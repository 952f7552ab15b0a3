"""The matcher answers every recorded case as it did before it was made faster.

`explain_cases` generates 2,500 calls (Bash lines with operators, wrappers, quotes,
sensitive names, links inside and outside the folder, file tools, WebFetch, MCP) over
rule lists of every behaviour; `data/explain_answers.jsonl` is what the matcher answered
then. A changed behaviour, reason word or deciding rule fails here, with the case.
"""

from __future__ import annotations

from pathlib import Path

from tests.rules import explain_cases

RECORD = Path(__file__).parent / "data" / "explain_answers.jsonl"


def test_every_recorded_case_gets_the_same_verdict_reason_and_rules(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    explain_cases.make_tree(root)
    recorded = RECORD.read_text(encoding="utf-8").splitlines()
    got = list(explain_cases.answers(root))
    assert len(got) == len(recorded) == explain_cases.CASES
    calls = explain_cases.cases(root)
    for index, (now, before) in enumerate(zip(got, recorded, strict=True)):
        rules, tool, data, cwd, added = next(calls)
        assert now == before, (index, [str(r.rule) for r in rules], tool, data, cwd, added)
