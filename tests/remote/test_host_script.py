"""The script `remote add` runs on a host must work on the host's python3 (3.8 or newer),
which may lack what the desk's python has (``enum.StrEnum`` is 3.11)."""

from __future__ import annotations

import ast
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qoder_desktop.config.secrets import SecretValue
from qoder_desktop.remote.deploy import host_script
from qoder_desktop.remote.hook_file import MIN_PYTHON, hook_source
from qoder_desktop.terminal.install import Agent

_WITHOUT_STRENUM = ("import enum, sys; del enum.StrEnum; "
                    "exec(compile(sys.stdin.read(), '<host script>', 'exec'))")


def _run(python: list[str], script: str, home: Path) -> dict[str, Any]:
    done = subprocess.run(python, input=script, capture_output=True, text=True, timeout=60,
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.parametrize("action", ["deploy", "remove", "status"])
def test_the_host_script_and_the_hook_are_python_3_8(action: str) -> None:
    ast.parse(host_script(action, agents=list(Agent), token=SecretValue("t")),
              feature_version=MIN_PYTHON)
    ast.parse(hook_source(), feature_version=MIN_PYTHON)


def _pythons() -> list[Any]:
    found = [pytest.param([sys.executable, "-I", "-c", _WITHOUT_STRENUM], id="no-StrEnum")]
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)  # HOME is the test's own
    candidates = [Path("/usr/bin/python3.8"), Path("/usr/local/bin/python3.8"),
                  *sorted(real_home.glob(".pyenv/versions/3.8*/bin/python3.8"))]
    older = next((str(p) for p in candidates if p.is_file()), None)
    if older:
        found.append(pytest.param([older, "-I", "-"], id="python3.8"))
    return found


@pytest.mark.parametrize("python", _pythons())
def test_deploy_status_and_remove_run_without_strenum(python: list[str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    token = SecretValue("host-token")

    deployed = _run(python, host_script("deploy", agents=list(Agent), token=token), home)
    status = _run(python, host_script("status"), home)
    removed = _run(python, host_script("remove"), home)

    assert {a["change"] for a in deployed["agents"].values()} == {"written"}
    assert status["hook"] and status["token"]
    assert all(entry["installed"] and entry["current"] for entry in status["agents"].values())
    assert removed["files"] == "removed"
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {}
