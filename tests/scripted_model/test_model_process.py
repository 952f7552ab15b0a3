"""The demo's scripted model in a process of its own (`qoder-desktop scripted-model`), as
``--demo`` starts it: it says its loopback URL, plays the built-in scenarios there, and
ends when the app closes its input, as it does when the app quits or dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
from helpers.desktop import wait_for

from qoder_desktop.scripted_model.process import ScriptedModelProcess, model_command


def test_the_model_process_serves_the_demo_scenario_on_loopback_and_ends_when_told() -> None:
    model = ScriptedModelProcess()
    model.start()
    try:
        url = model.base_url()
        assert url.startswith("http://127.0.0.1:")
        body = {"model": "claude-opus-5-5", "max_tokens": 100, "stream": False,
                "tools": [{"name": "Bash", "input_schema": {}}],
                "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "go [scenario:demo]"}]}]}
        reply = httpx.post(f"{url}/v1/messages", json=body, trust_env=False, timeout=30)
        assert reply.status_code == 200
        assert reply.json()["role"] == "assistant"
        pid = model.pid
        assert pid is not None
    finally:
        model.stop()
    assert not Path(f"/proc/{pid}").exists() or _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


PARENT = textwrap.dedent("""
    import sys
    from qoder_desktop.scripted_model.process import ScriptedModelProcess
    model = ScriptedModelProcess()
    model.start()
    model.base_url()
    print(model.pid, flush=True)
    sys.stdin.read()  # the test kills this process instead
""")


def test_the_model_process_ends_when_the_app_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)  # no clean quit: only the closed pipe tells the child
    parent.wait()
    wait_for(lambda: not Path(f"/proc/{child}").exists() or _is_zombie(child), 20,
             "the scripted model to end with the app")


def test_the_command_runs_this_installation() -> None:
    assert model_command() == [sys.executable, "-m", "qoder_desktop", "scripted-model"]
