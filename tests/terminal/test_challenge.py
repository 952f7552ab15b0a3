"""The app's side of the hook's challenge, over a real socket pair: a hook that holds the
token is heard; one that holds another token, speaks an older or newer protocol, says
too much before proving itself or takes too long is refused, and the token never
crosses the socket."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from qoder_desktop.terminal import challenge, protocol
from qoder_desktop.terminal.challenge import Refused, TooSlow, accept_hook
from qoder_desktop.terminal.listener import HookConnection

pytestmark = pytest.mark.asyncio

TOKEN = "the-app-token-0123456789abcdef"
EVENT = {"hook_event_name": "PermissionRequest", "tool_name": "Bash",
         "tool_input": {"command": "make"}}


class Hook:
    """The hook's end of the socket (blocking, run in a thread), speaking the protocol."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.settimeout(10)
        self.received = b""
        self.nonce = protocol.new_nonce()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def hello(self, **fields: Any) -> None:
        self.send(protocol.encode({"hello": protocol.HELLO, "version": protocol.VERSION,
                                   "nonce": self.nonce, **fields}))

    def answer(self) -> dict[str, Any]:
        line = b""
        while not line.endswith(b"\n"):
            try:
                chunk = self.sock.recv(4096)
            except ConnectionResetError:  # closed with what we sent unread
                break
            if not chunk:
                break
            line += chunk
        self.received += line
        return protocol.decode(line) if line else {}

    def request(self, token: str, answer: dict[str, Any]) -> None:
        """Prove `token` and send the sealed request, as the real hook does."""
        server_nonce = answer["nonce"]
        sealer = protocol.Sealer(token, self.nonce, server_nonce, sending=protocol.TO_APP,
                                 receiving=protocol.TO_HOOK)
        proof = protocol.hook_proof(token, server_nonce, self.nonce)
        self.send(sealer.seal(protocol.request_message(proof, "claude", EVENT)))


@pytest_asyncio.fixture
async def pair() -> AsyncIterator[tuple[HookConnection, Hook]]:
    """The app's connection and the hook's end of one socket pair (closed on the loop)."""
    app_end, hook_end = socket.socketpair()
    app_end.setblocking(False)
    connection = HookConnection(app_end)
    try:
        yield connection, Hook(hook_end)
    finally:
        connection.close()
        hook_end.close()
        await asyncio.sleep(0)  # (the stream's transport closes in the next loop turn)


async def test_a_hook_that_holds_the_token_is_heard(
        pair: tuple[HookConnection, Hook]) -> None:
    connection, hook = pair

    def hook_side() -> dict[str, Any]:
        hook.hello()
        answer = hook.answer()
        hook.request(TOKEN, answer)
        return answer

    accepted = asyncio.ensure_future(accept_hook(connection, TOKEN))
    answer = await asyncio.to_thread(hook_side)
    _sealer, _reader, _writer, request = await asyncio.wait_for(accepted, 10)
    assert answer["type"] == protocol.CHALLENGE  # the app proved itself first …
    assert answer["proof"] == protocol.server_proof(TOKEN, hook.nonce, answer["nonce"])
    assert request["agent"] == "claude" and request["event"] == EVENT  # … then heard it
    assert connection.said_hello and connection.is_proven
    assert TOKEN.encode() not in hook.received


async def test_a_hook_with_another_token_is_refused(
        pair: tuple[HookConnection, Hook]) -> None:
    connection, hook = pair

    def hook_side() -> None:
        hook.hello()
        hook.request("another-token-0123456789abcdef", hook.answer())

    accepted = asyncio.ensure_future(accept_hook(connection, TOKEN))
    await asyncio.to_thread(hook_side)
    with pytest.raises(Refused, match="wrong proof"):
        await asyncio.wait_for(accepted, 10)
    assert connection.said_hello and not connection.is_proven


async def test_a_hook_of_another_version_is_told_to_pass_and_refused(
        pair: tuple[HookConnection, Hook]) -> None:
    connection, hook = pair

    def hook_side() -> dict[str, Any]:
        hook.hello(version=protocol.VERSION + 1)
        return hook.answer()

    accepted = asyncio.ensure_future(accept_hook(connection, TOKEN))
    answer = await asyncio.to_thread(hook_side)
    with pytest.raises(Refused, match="another protocol version"):
        await asyncio.wait_for(accepted, 10)
    assert answer == {"type": protocol.PASS, "version": protocol.VERSION,
                      "reason": "another protocol version"}  # the terminal asks instead


@pytest.mark.parametrize(("sent", "reason"), [
    (b"GET / HTTP/1.1\r\n", "not a hello"),
    (protocol.encode({"hello": protocol.HELLO, "version": protocol.VERSION, "nonce": 7}),
     "no nonce"),
    (b"x" * (protocol.HELLO_LIMIT + 10), "hello too long"),
])
async def test_what_is_no_hello_is_refused_before_anything_is_answered(
        pair: tuple[HookConnection, Hook], sent: bytes, reason: str) -> None:
    connection, hook = pair
    accepted = asyncio.ensure_future(accept_hook(connection, TOKEN))
    await asyncio.to_thread(hook.send, sent)
    with pytest.raises(Refused, match=reason):
        await asyncio.wait_for(accepted, 10)
    assert not connection.is_proven
    connection.close()
    assert await asyncio.to_thread(hook.answer) == {}  # nothing was said to it


async def test_a_connection_that_never_proves_itself_is_dropped_as_too_slow(
        pair: tuple[HookConnection, Hook]) -> None:
    connection, hook = pair
    accepted = asyncio.ensure_future(accept_hook(connection, TOKEN, timeout=0.2))
    await asyncio.to_thread(hook.hello)  # and then nothing
    with pytest.raises(TooSlow):
        await asyncio.wait_for(accepted, 10)
    assert connection.said_hello and not connection.is_proven


async def test_a_proven_hook_that_never_sends_its_request_is_refused(
        pair: tuple[HookConnection, Hook], monkeypatch: pytest.MonkeyPatch) -> None:
    connection, hook = pair
    # (accept_hook waits REQUEST_TIMEOUT, read_request's default, for the rest of the line)
    monkeypatch.setattr(challenge.read_request, "__defaults__", (0.2,))

    def hook_side() -> None:
        hook.hello()
        answer = hook.answer()
        server_nonce = answer["nonce"]
        sealer = protocol.Sealer(TOKEN, hook.nonce, server_nonce, sending=protocol.TO_APP,
                                 receiving=protocol.TO_HOOK)
        line = sealer.seal(protocol.request_message(
            protocol.hook_proof(TOKEN, server_nonce, hook.nonce), "claude", EVENT))
        hook.send(line[:protocol.PROOF_HEAD_LENGTH])  # the proof, then nothing more

    accepted = asyncio.ensure_future(accept_hook(connection, TOKEN))
    await asyncio.to_thread(hook_side)
    with pytest.raises(Refused, match="no request in time"):
        await asyncio.wait_for(accepted, 10)
