"""An agent run's MCP session ending: its external session shows as ended, and the
SDK's normal closing of the session's event stream is not logged as an error.

A real MCP client (the `mcp` SDK) against the gateway on loopback, as in `test_gateway`.
"""

from __future__ import annotations

import asyncio
import logging

import anyio
import pytest
from helpers.gateway_rig import WAIT, Fixture, ask, mcp_client

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.domain.models import Decision, SessionState
from qoder_desktop.gateway.http_stack import (
    STANDALONE_WRITER_ERROR,
    TRANSPORT_LOGGER,
    SessionEndNoise,
)


async def _state_of(hub: SessionHub, session_id: str, state: SessionState) -> None:
    async with asyncio.timeout(WAIT):
        while hub.session(session_id).state is not state:
            await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_an_agent_run_that_ends_its_mcp_session_shows_as_ended(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.deny("no"))
        await asyncio.wait_for(call, WAIT)
        assert gw.hub.session(request.session_id).state is SessionState.RUNNING
    await _state_of(gw.hub, request.session_id, SessionState.STOPPED)


@pytest.mark.asyncio
async def test_an_mcp_session_ended_with_its_event_stream_open_logs_no_error(
        gw: Fixture, caplog: pytest.LogCaptureFixture) -> None:
    """Agents end their MCP session (DELETE) while its event stream is open; the SDK
    closing that stream under its writer is a normal end, not an error with a traceback."""
    caplog.set_level(logging.DEBUG, logger="mcp.server.streamable_http")
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.deny("no"))
        await asyncio.wait_for(call, WAIT)
    async with asyncio.timeout(WAIT):  # the event stream's writer has finished
        while "Closing standalone SSE writer" not in caplog.text:
            await asyncio.sleep(0.02)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


def test_other_errors_of_the_sdk_transport_are_still_logged() -> None:
    def record(message: str, error: BaseException) -> logging.LogRecord:
        return logging.LogRecord(TRANSPORT_LOGGER, logging.ERROR, __file__, 1, message, (),
                                 (type(error), error, None))

    noise = SessionEndNoise()
    assert not noise.filter(record(STANDALONE_WRITER_ERROR, anyio.ClosedResourceError()))
    assert noise.filter(record(STANDALONE_WRITER_ERROR, RuntimeError("broken")))
    assert noise.filter(record("Error handling POST request", anyio.ClosedResourceError()))


@pytest.mark.asyncio
async def test_an_agent_run_that_hangs_up_shows_as_ended_once_the_gateway_stops(
        gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url, terminate_on_close=False) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.deny("no"))
        await asyncio.wait_for(call, WAIT)
    assert gw.hub.session(request.session_id).state is SessionState.RUNNING  # it may call again
    await gw.gateway.stop()
    assert gw.hub.session(request.session_id).state is SessionState.STOPPED
