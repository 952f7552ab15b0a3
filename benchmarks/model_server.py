"""The scripted model in its own process, so that its work never counts as the app's.

`external_model()` starts ``python -m benchmarks.model_server`` (the shipped scenarios plus
the benchmark ones from benchmarks/scenarios), yields its loopback base URL and stops it.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

BENCH_SCENARIOS = ("touch_200", "idle")


@contextlib.contextmanager
def external_model() -> Iterator[str]:
    """A scripted model server in a child process; yields its base URL."""
    from benchmarks.common import REPO_ROOT, child_env

    process = subprocess.Popen([sys.executable, "-m", "benchmarks.model_server"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               cwd=REPO_ROOT, env=child_env())
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the scripted model did not start: {line!r}")
        yield line
    finally:
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> None:
    """Serve until stdin closes; print the base URL first."""
    from benchmarks.common import scenario_library
    from qoder_desktop.scripted_model.server import ThreadedScriptedModel

    model = ThreadedScriptedModel(scenario_library(*BENCH_SCENARIOS))
    model.start()
    print(model.base_url, flush=True)
    sys.stdin.read()
    model.stop()


if __name__ == "__main__":
    main()
