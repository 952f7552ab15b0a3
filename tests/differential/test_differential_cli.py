"""Differential proof: `rules check` says what the Claude Code CLI says.

Every case (the curated ones in ``cases.jsonl`` and the generated ones of
``generate.py``, both splits) is measured live against the CLI bundled in
claude-agent-sdk on every run (rules delivered as session permission updates; see
``cli_probe``): the live verdicts are the truth. Then ``qoder-desktop rules check
--batch`` judges the same cases, and:

- where it says allow, the CLI must allow too (never allow what the CLI asks about or
  denies);
- it agrees with the CLI on at least 95% of all cases, and on at least 90% of the
  held-out split (cases never looked at while the model of the CLI was written);
- the committed table (``cli_verdicts.json``) matches the live run when it was measured
  with this CLI version; with another version the agreement is still judged on the live
  verdicts and a loud note says the table must be regenerated, and in CI (``CI=true``)
  that test fails: a new CLI ships only with its table measured again.

The live run takes about 2 minutes on 2 cores (3 CLI sessions at once), so it runs in
full, never skipped.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from claude_agent_sdk._cli_version import __cli_version__
from differential import sandbox
from differential.cases import VERDICTS_JSON, Case, load_all_cases
from differential.cli_probe import Verdict
from differential.measure import measure_cases
from differential.our_verdicts import OurVerdict, checker_available, our_verdicts
from helpers.safety_skips import in_ci

BUNDLED_CLI = Path(sys.modules["claude_agent_sdk"].__file__ or "").parent / "_bundled" / "claude"
MIN_CASES = 400
MIN_AGREEMENT = 0.95
MIN_HOLDOUT_AGREEMENT = 0.90

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@dataclass(frozen=True)
class LiveRun:
    """The CLI's verdicts for every case, measured once for this module, and ours."""

    cases: list[Case]
    verdicts: list[Verdict]
    ours: list[OurVerdict]
    seconds: float
    box: sandbox.Sandbox


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveRun]:
    """Measure every case against the real CLI (scratch HOME for this process too), then
    ask `rules check --batch` about the same cases."""
    assert BUNDLED_CLI.exists(), f"the bundled Claude Code CLI is missing: {BUNDLED_CLI}"
    assert checker_available(), "`python -m qoder_desktop rules check --batch` is missing"
    cases = load_all_cases()
    scratch = tmp_path_factory.mktemp("differential")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(scratch / "runner-home"))
        verdicts, seconds = asyncio.run(measure_cases(cases, scratch=scratch / "groups"))
    box = sandbox.build(scratch / "ours")
    yield LiveRun(cases, verdicts, our_verdicts(cases, box), seconds, box)


def _line(run: LiveRun, case: Case, cli: Verdict, mine: OurVerdict) -> str:
    return (f"{case.id} [{case.category}]: rules={list(case.rules)} "
            f"deny={list(case.deny_rules)} {case.tool} {json.dumps(case.input)} -> ours "
            f"{mine.verdict} ({sandbox.unfill_text(run.box, mine.reason)}), CLI {cli.verdict}")


def test_every_case_reaches_a_cli_verdict(live: LiveRun) -> None:
    assert len(live.cases) >= MIN_CASES
    no_verdict = [f"{v.case_id}: {v.detail}" for v in live.verdicts if v.verdict == "error"]
    assert not no_verdict, "cases the CLI never judged (fix the case):\n" + "\n".join(no_verdict)


def test_the_committed_table_matches_the_live_cli(
        live: LiveRun, capsys: pytest.CaptureFixture[str]) -> None:
    table = json.loads(VERDICTS_JSON.read_text(encoding="utf-8"))
    if table["cli_version"] != __cli_version__:
        note = (f"cli_verdicts.json was measured with Claude Code {table['cli_version']}, "
                f"this is {__cli_version__}: agreement is judged on the live verdicts; "
                f"REGENERATE THE TABLE with python -m tests.differential.measure")
        if in_ci():
            pytest.fail(note)
        with capsys.disabled():
            print(f"\n{'!' * 78}\n{note}\n{'!' * 78}")
        warnings.warn(note, stacklevel=1)
        return
    committed = {row["id"]: (row["verdict"], row["grant_applied"]) for row in table["verdicts"]}
    drift = [f"{v.case_id}: table {committed.get(v.case_id)}, live {(v.verdict, v.grant_applied)}"
             for v in live.verdicts if committed.get(v.case_id) != (v.verdict, v.grant_applied)]
    assert not drift, ("cli_verdicts.json is stale; run python -m tests.differential.measure:\n"
                       + "\n".join(drift))


def test_we_never_allow_what_the_cli_asks_about_or_denies(live: LiveRun) -> None:
    unsafe = [_line(live, case, cli, mine)
              for case, cli, mine in zip(live.cases, live.verdicts, live.ours, strict=True)
              if mine.verdict == "allow" and cli.verdict in ("ask", "deny")]
    assert not unsafe, ("we would allow what the CLI asks about or denies:\n"
                        + "\n".join(unsafe))


def test_rules_check_agrees_with_the_cli(live: LiveRun,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """At least 95% of all cases and 90% of the held-out split; an answer marked
    "unsure" counts only when its verdict is the CLI's."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    unsure = 0
    wrong = []
    for case, cli, mine in zip(live.cases, live.verdicts, live.ours, strict=True):
        same = mine.verdict == cli.verdict
        unsure += mine.reason.startswith("unsure:")
        for key in ("all", f"split {case.split}", f"{case.split}/{case.category}"):
            tally[key][0] += same
            tally[key][1] += 1
        if not same:
            wrong.append(_line(live, case, cli, mine))
    with capsys.disabled():
        print(f"\ndifferential: {len(live.cases)} cases, Claude Code {__cli_version__}, live "
              f"run {live.seconds:.1f} s, {unsure} answers marked unsure")
        for key in sorted(tally, key=lambda k: (k != "all", not k.startswith("split"), k)):
            agreed, total = tally[key]
            print(f"  {key:34s} {agreed:4d}/{total:4d}  {agreed / total:6.1%}")
        for line in wrong:
            print(f"  disagrees: {line}")
    overall = tally["all"][0] / tally["all"][1]
    holdout = tally["split holdout"][0] / max(1, tally["split holdout"][1])
    assert overall >= MIN_AGREEMENT, f"agreement {overall:.1%} < {MIN_AGREEMENT:.0%}"
    assert holdout >= MIN_HOLDOUT_AGREEMENT, (
        f"held-out agreement {holdout:.1%} < {MIN_HOLDOUT_AGREEMENT:.0%}")
