"""The soak benchmark at a tiny scale: its harness works, and the app leaves nothing behind.

`benchmarks/bench_soak.py` runs in its own process, as the benchmark runner runs it (the
app on its qasync loop, offscreen; SDK sessions on scripted CLI peers, gateway and
terminal agents from a separate process, one session of the real Claude Code CLI on the
scripted model; every request answered by a click in its dialog). The checks are counts
taken with nothing pending, after the warm-up round against the last round; never a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUESTS, ROUNDS = 50, 5
FOLLOWER = "TranscriptFollower._follow"

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def soak(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One tiny soak (50 requests in 5 rounds, the real CLI once); its checkpoints."""
    folder = tmp_path_factory.mktemp("soak")
    checkpoints = folder / "checkpoints.json"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_soak", "--requests", str(REQUESTS),
         "--rounds", str(ROUNDS), "--cli-every", str(ROUNDS), "--out",
         str(folder / "figures.json"), "--checkpoints", str(checkpoints)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=280, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(checkpoints.read_text(encoding="utf-8"))
    return result


def _start_end(soak: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    points = soak["checkpoints"]
    assert len(points) == ROUNDS + 1
    return points[soak["warm_up"]], points[-1]


def test_every_request_of_the_three_ways_in_is_answered_in_a_dialog(soak: dict[str, Any]) -> None:
    tallies = soak["tallies"]
    assert soak["errors"] == []
    assert soak["cli_requests"] == 1  # the real CLI's Bash call, asked once
    assert soak["answered"] == REQUESTS + soak["cli_requests"]
    for way in ("sdk", "gateway", "terminal"):
        assert sum(tallies[way].values()) > 0, way
        assert set(tallies[way]) <= {"allow", "deny"}, tallies[way]
    assert sum(sum(t.values()) for t in tallies.values()) == REQUESTS


def test_no_qt_objects_descriptors_or_frozen_garbage_are_left_behind(soak: dict[str, Any]) -> None:
    start, end = _start_end(soak)
    assert end["sessions"] > start["sessions"]  # sessions did start and stop meanwhile
    assert end["qobjects"] <= start["qobjects"]
    assert end["widgets"] <= start["widgets"]
    assert end["fds"] <= start["fds"]
    # Settling memory after every session start froze each earlier session's garbage.
    assert end["frozen"] <= start["frozen"]


def test_no_app_tasks_are_left_behind(soak: dict[str, Any]) -> None:
    start, end = _start_end(soak)

    def app_tasks(point: dict[str, Any]) -> int:
        return sum(n for kind, n in point["task_kinds"].items() if kind != FOLLOWER)

    assert app_tasks(end) <= app_tasks(start)


def test_terminal_transcript_followers_end_with_their_session(soak: dict[str, Any]) -> None:
    """Each terminal session's CLI exits after its last call; its follower stops polling
    (the hub still shows what it read)."""
    start, end = _start_end(soak)
    assert end["task_kinds"].get(FOLLOWER, 0) <= start["task_kinds"].get(FOLLOWER, 0)
