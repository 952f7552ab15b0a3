"""Keyring calls off the event loop: the loop keeps serving, a slow keyring is shown, a
silent one times out with a clear message (a keyring may wait on a person's
unlock prompt or never answer)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest
from helpers.memory_keyring import MemoryKeyring, SlowKeyring

from qoder_desktop.config.keyring_calls import KeyringTimeout, keyring_call
from qoder_desktop.config.secrets import SERVICE_NAME, SecretName, SecretStore

KEY = "sk-ant-slow-keyring-key-0123456789"


@pytest.fixture
def slow() -> Iterator[SlowKeyring]:
    """A keyring that answers only when the test releases it (always released at the end)."""
    backend = SlowKeyring()
    backend.passwords[(SERVICE_NAME, SecretName.ANTHROPIC_API_KEY.value)] = KEY
    try:
        yield backend
    finally:
        backend.release.set()


class Ticker:
    """A coroutine that counts loop turns: proof the loop serves while the keyring hangs."""

    def __init__(self) -> None:
        self.ticks = 0
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            self.ticks += 1
            await asyncio.sleep(0.005)

    async def advances(self) -> bool:
        """True when the counter moves on while we wait a little."""
        before = self.ticks
        for _ in range(200):
            await asyncio.sleep(0.01)
            if self.ticks >= before + 3:
                return True
        return False

    def stop(self) -> None:
        """Stop counting."""
        self._task.cancel()


async def _until(condition: object, turns: int = 500) -> None:
    for _ in range(turns):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


@pytest.mark.asyncio
async def test_a_slow_keyring_is_shown_as_waiting_while_the_loop_keeps_serving(
        slow: SlowKeyring) -> None:
    store = SecretStore(slow, extra_allowed=(MemoryKeyring,))
    ticker = Ticker()
    waiting: list[int] = []
    call = asyncio.ensure_future(keyring_call(
        lambda: store.get(SecretName.ANTHROPIC_API_KEY), "read the Anthropic API key",
        timeout=60, on_slow=lambda: waiting.append(ticker.ticks), slow_after=0.05))
    try:
        await _until(lambda: waiting)
        assert not call.done()  # still blocked in the keyring …
        assert await ticker.advances()  # … and the loop runs other work meanwhile
        slow.release.set()
        value = await call
    finally:
        ticker.stop()
    assert value is not None and value.reveal() == KEY
    assert len(waiting) == 1  # "waiting for the keyring" is said once


@pytest.mark.asyncio
async def test_a_keyring_that_does_not_answer_times_out_with_a_clear_message(
        slow: SlowKeyring) -> None:
    store = SecretStore(slow, extra_allowed=(MemoryKeyring,))
    ticker = Ticker()
    try:
        with pytest.raises(KeyringTimeout) as raised:
            await keyring_call(lambda: store.get(SecretName.ANTHROPIC_API_KEY),
                               "read the Anthropic API key", timeout=0.2, slow_after=0.05)
        assert ticker.ticks > 1
    finally:
        ticker.stop()
    message = str(raised.value)
    assert "did not answer" in message and "read the Anthropic API key" in message
    assert KEY not in message and KEY not in repr(raised.value)


@pytest.mark.asyncio
async def test_a_fast_keyring_is_not_announced(memory_keyring: MemoryKeyring) -> None:
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    store.set(SecretName.QODER_TOKEN, "pat_fast_token_0123456789")
    waiting: list[str] = []
    value = await keyring_call(lambda: store.get(SecretName.QODER_TOKEN), "read the token",
                               on_slow=lambda: waiting.append("slow"), slow_after=30)
    assert value is not None and value.reveal() == "pat_fast_token_0123456789"
    assert waiting == []


@pytest.mark.asyncio
async def test_an_error_from_the_keyring_reaches_the_caller(slow: SlowKeyring) -> None:
    def broken() -> None:
        raise RuntimeError("D-Bus said no")

    with pytest.raises(RuntimeError, match="D-Bus said no"):
        await keyring_call(broken, "read the token")


@pytest.mark.asyncio
async def test_a_write_given_up_on_never_lands_later(slow: SlowKeyring) -> None:
    store = SecretStore(slow, extra_allowed=(MemoryKeyring,))
    with pytest.raises(KeyringTimeout):  # the keyring hangs on this read …
        await keyring_call(lambda: store.get(SecretName.ANTHROPIC_API_KEY), "read the key",
                           timeout=0.1, slow_after=0.05)
    with pytest.raises(KeyringTimeout):  # … so this write, queued behind it, gives up
        await keyring_call(lambda: store.set(SecretName.QODER_TOKEN, "pat_new_token_0123456789"),
                           "save the token", timeout=0.1, slow_after=0.05)
    slow.release.set()  # the read comes back at last
    assert await keyring_call(lambda: "served", "check the thread") == "served"
    assert (SERVICE_NAME, SecretName.QODER_TOKEN.value) not in slow.passwords


HUNG_KEYRING_AT_QUIT = """
import asyncio, threading
from qoder_desktop.config.keyring_calls import KeyringTimeout, keyring_call

async def main():
    try:
        await keyring_call(threading.Event().wait, "read the key", timeout=0.1,
                           slow_after=0.05)
    except KeyringTimeout:
        print("timed out", flush=True)

asyncio.run(main())
"""


def test_a_keyring_call_that_never_returns_does_not_keep_the_app_from_quitting() -> None:
    # Without a daemon thread the interpreter joins the stuck keyring thread at exit and
    # the app hangs on quit; the generous limit only tells "quits" from "hangs".
    result = subprocess.run([sys.executable, "-c", HUNG_KEYRING_AT_QUIT], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "timed out"
