"""Ending a child process a test helper started, so none outlives it."""

from __future__ import annotations

import contextlib
import subprocess
from typing import Any


def stop_process(process: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """End `process`: SIGTERM, SIGKILL after `timeout` s; return once it has ended."""
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
