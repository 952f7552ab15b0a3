"""Differential proof: our rule matcher is never broader than the Claude Code CLI.

Every case in ``cases.jsonl`` is measured live against the CLI bundled in
claude-agent-sdk (rules delivered as session permission updates; see ``cli_probe``),
then judged by ``qoder-desktop rules check --batch``. Where we would allow a call on
our own, the CLI must allow it too: a case where we say allow and the CLI asks or
denies fails the test. The opposite (we ask, the CLI allows) is harmless and printed.
The live run takes about 20 s on 2 cores (3 CLI sessions at once), so it runs in full.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from claude_agent_sdk._cli_version import __cli_version__
from differential import sandbox
from differential.cases import VERDICTS_JSON, Case, load_cases
from differential.cli_probe import Verdict
from differential.measure import measure_cases
from differential.our_verdicts import checker_available, our_verdicts

BUNDLED_CLI = Path(sys.modules["claude_agent_sdk"].__file__ or "").parent / "_bundled" / "claude"
MIN_CASES = 150

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]


@dataclass(frozen=True)
class LiveRun:
    """The CLI's verdicts for every case, measured once for this module."""

    cases: list[Case]
    verdicts: list[Verdict]
    seconds: float


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveRun]:
    """Measure every case against the real CLI (scratch HOME for this process too)."""
    cases = load_cases()
    scratch = tmp_path_factory.mktemp("differential")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(scratch / "runner-home"))
        verdicts, seconds = asyncio.run(measure_cases(cases, scratch=scratch / "groups"))
    yield LiveRun(cases, verdicts, seconds)


def test_every_case_reaches_a_cli_verdict(live: LiveRun) -> None:
    assert len(live.cases) >= MIN_CASES
    no_verdict = [f"{v.case_id}: {v.detail}" for v in live.verdicts if v.verdict == "error"]
    assert not no_verdict, "cases the CLI never judged (fix the case):\n" + "\n".join(no_verdict)


def test_the_committed_table_matches_the_live_cli(live: LiveRun) -> None:
    table = json.loads(VERDICTS_JSON.read_text(encoding="utf-8"))
    if table["cli_version"] != __cli_version__:
        pytest.skip(f"cli_verdicts.json was measured with Claude Code {table['cli_version']}, "
                    f"this is {__cli_version__}: run python -m tests.differential.measure")
    committed = {row["id"]: (row["verdict"], row["grant_applied"]) for row in table["verdicts"]}
    drift = [f"{v.case_id}: table {committed.get(v.case_id)}, live {(v.verdict, v.grant_applied)}"
             for v in live.verdicts if committed.get(v.case_id) != (v.verdict, v.grant_applied)]
    assert not drift, ("cli_verdicts.json is stale; run python -m tests.differential.measure:\n"
                       + "\n".join(drift))


def test_we_never_allow_what_the_cli_asks_about_or_denies(
        live: LiveRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not checker_available():
        pytest.skip("`python -m qoder_desktop rules check --batch` is not in this tree yet")
    box = sandbox.build(tmp_path / "ours")
    ours = our_verdicts(live.cases, box)
    unsafe, harmless = [], []
    for case, cli, mine in zip(live.cases, live.verdicts, ours, strict=True):
        line = (f"{case.id}: rules={list(case.rules)} deny={list(case.deny_rules)} "
                f"{case.tool} {json.dumps(case.input)} -> ours {mine.verdict} "
                f"({sandbox.unfill_text(box, mine.reason)}), CLI {cli.verdict}")
        if mine.verdict == "allow" and cli.verdict in ("ask", "deny"):
            unsafe.append(line)
        elif mine.verdict != cli.verdict and cli.verdict != "error":
            harmless.append(line)
    with capsys.disabled():
        print(f"\ndifferential: {len(live.cases)} cases, live CLI run {live.seconds:.1f} s; "
              f"{len(unsafe)} unsafe, {len(harmless)} harmless disagreements:")
        for line in harmless:
            print(f"  harmless: {line}")
    assert not unsafe, ("we would allow what the CLI asks about or denies:\n"
                        + "\n".join(unsafe))
