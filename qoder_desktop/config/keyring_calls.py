"""Keyring calls off the event loop: one keyring thread, a visible wait, a timeout.

A keyring can take seconds to answer (a D-Bus call that hangs, an unlock prompt the
person has not answered). `keyring_call` runs the blocking call on the app's one keyring
thread, so the loop keeps serving; says so when the call is slow (`on_slow`); and gives
up after `KEYRING_TIMEOUT_S` with `KeyringTimeout` — the caller fails closed (a session
that cannot read its key does not start; the gateway without its token stays off).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from qoder_desktop.config.secrets import SecretStoreError

KEYRING_TIMEOUT_S = 10.0
"""How long the app waits for the keyring (an unlock prompt included) before it gives up."""

KEYRING_SLOW_S = 0.25
"""After this long a keyring call is shown as "waiting for the keyring"."""

_T = TypeVar("_T")


class KeyringTimeout(SecretStoreError):
    """The keyring did not answer in time (a hung D-Bus call, an unlock prompt left open)."""


class _KeyringThread:
    """The one thread every keyring call of the app runs on, in order (started on first use).

    One thread, so a hung keyring holds one thread, not the default pool, and calls keep
    their order (a later write never lands before an earlier one). A daemon thread, so a
    call that never returns cannot keep the app from quitting (the pool's threads are
    joined at exit).
    """

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = (
            queue.SimpleQueue())
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, call: Callable[[], _T]) -> Future[_T]:
        """Queue `call`; its future ends with its result or its exception."""
        future: Future[_T] = Future()
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, daemon=True,
                                                name="qoder-desktop-keyring")
                self._thread.start()
            self._calls.put((call, future))
        return future

    def _serve(self) -> None:
        while True:
            call, future = self._calls.get()
            if not future.set_running_or_notify_cancel():
                continue  # given up on before it started
            try:
                future.set_result(call())
            except BaseException as exc:
                future.set_exception(exc)


_keyring_thread = _KeyringThread()


async def keyring_call(call: Callable[[], _T], what: str, *,
                       timeout: float | None = None,
                       on_slow: Callable[[], None] | None = None,
                       slow_after: float = KEYRING_SLOW_S) -> _T:
    """Run a blocking keyring call off the event loop; the loop keeps serving meanwhile.

    Args:
        call: the blocking call (e.g. ``lambda: store.get(name)``).
        what: what is read or written, for the timeout message ("read the Anthropic API
            key").
        timeout: seconds before giving up (`KEYRING_TIMEOUT_S` when None).
        on_slow: called once (on the loop) when the call takes longer than `slow_after`,
            so the person sees that the app waits for the keyring.
        slow_after: seconds before `on_slow`.

    Raises:
        KeyringTimeout: no answer within `timeout`; the call is abandoned (its result,
            should it come, is dropped).
        Exception: whatever `call` raised.
    """
    limit = KEYRING_TIMEOUT_S if timeout is None else timeout
    queued = _keyring_thread.submit(call)
    future = asyncio.wrap_future(queued)
    done, _ = await asyncio.wait({future}, timeout=min(slow_after, limit))
    if not done:
        if on_slow is not None and slow_after < limit:
            on_slow()
        done, _ = await asyncio.wait({future}, timeout=max(0.0, limit - slow_after))
    if not done:
        queued.cancel()  # now, not on a later loop turn: a call given up on never runs
        future.cancel()
        raise KeyringTimeout(
            f"The keyring did not answer within {limit:g} s, so Qoder Desktop could not "
            f"{what}. Unlock the keyring (or answer its prompt) and try again.")
    return future.result()
