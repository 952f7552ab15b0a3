"""The app's log file cannot grow without end: it is rotated at a size, a few kept."""

from __future__ import annotations

import logging

import pytest

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.ui import app as app_module


def test_the_log_file_rotates_at_its_size_and_keeps_a_few(
        app_paths: AppPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    size = 64 * 1024
    monkeypatch.setattr(app_module, "LOG_MAX_BYTES", size)  # the default is 5 MiB
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    redactor = app_module._setup_logging(app_paths)
    try:
        logger = logging.getLogger("qoder_desktop.test.rotation")
        for number in range(3000):  # about 0.4 MiB: more than all files together hold
            logger.info("line %d %s", number, "x" * 100)
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
            handler.close()
        for handler in root.handlers:
            handler.removeFilter(redactor)
        root.removeFilter(redactor)
        root.setLevel(level)
    log_file = app_paths.log_file
    assert log_file.with_name(f"{log_file.name}.1").exists()  # rotated
    kept = [log_file, *(log_file.with_name(f"{log_file.name}.{n}")
                        for n in range(1, app_module.LOG_BACKUPS + 1))]
    assert all(path.exists() and path.stat().st_size <= size for path in kept)
    assert not log_file.with_name(f"{log_file.name}.{app_module.LOG_BACKUPS + 1}").exists()
    assert "line 2999 " in log_file.read_text(encoding="utf-8")
