"""The log rate limit shared by the app's sockets: a flood logs a burst, then counts."""

from __future__ import annotations

import logging

import pytest

from qoder_desktop.diagnostics.flood import RateLimitedLog


def test_a_flood_logs_a_burst_and_what_was_left_out_is_said_when_it_is_removed(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    limit = RateLimitedLog(burst=3, window=10.0, loggers=("qoder_desktop.test.flood",),
                           clock=lambda: now[0])
    logger = logging.getLogger("qoder_desktop.test.flood")
    caplog.set_level(logging.INFO, "qoder_desktop.test.flood")
    limit.install()
    try:
        for number in range(500):
            logger.warning("refused connection %d", number)
        logger.info("something else")  # another kind passes
        now[0] = 10.0  # a new window: the next line carries the count
        logger.warning("refused connection %d", 500)
        for number in range(501, 600):
            logger.warning("refused connection %d", number)
    finally:
        limit.remove()  # says what the last window left out
    messages = [record.getMessage() for record in caplog.records]
    assert messages[:4] == ["refused connection 0", "refused connection 1",
                            "refused connection 2", "something else"]
    assert messages[4] == ("refused connection 500 [497 more like this in the last 10 s "
                           "were not logged]")
    assert messages[-1] == "97 more like this were not logged: refused connection %d"
    assert len(messages) == 4 + 3 + 1
    logger.warning("refused connection %d", 600)  # removed: no longer limited
    assert caplog.records[-1].getMessage() == "refused connection 600"
