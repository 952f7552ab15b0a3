"""Keyring calls off the event loop: one keyring thread, a visible wait, a timeout.

A keyring can take seconds to answer (a D-Bus call that hangs, an unlock prompt the
person has not answered). `keyring_call` runs the blocking call on the app's one keyring
thread, so the loop keeps serving; says so when the call is slow (`on_slow`); and gives
up after `KEYRING_TIMEOUT_S` with `KeyringTimeout` — the caller fails closed (a session
that cannot read its key does not start; the gateway without its token stays off).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from qoder_desktop.config.secrets import SecretStoreError

KEYRING_TIMEOUT_S = 10.0
"""How long the app waits for the keyring (an unlock prompt included) before it gives up."""

KEYRING_SLOW_S = 0.25
"""After this long a keyring call is shown as "waiting for the keyring"."""

_T = TypeVar("_T")
_keyring_worker: ThreadPoolExecutor | None = None
_keyring_worker_lock = threading.Lock()


class KeyringTimeout(SecretStoreError):
    """The keyring did not answer in time (a hung D-Bus call, an unlock prompt left open)."""


def _worker() -> ThreadPoolExecutor:
    """The one thread every keyring call of the app runs on (created on first use).

    One thread, so a hung keyring holds one thread, not the default pool, and calls keep
    their order.
    """
    global _keyring_worker
    with _keyring_worker_lock:
        if _keyring_worker is None:
            _keyring_worker = ThreadPoolExecutor(max_workers=1,
                                                 thread_name_prefix="qoder-desktop-keyring")
        return _keyring_worker


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
    future = asyncio.wrap_future(_worker().submit(call))
    done, _ = await asyncio.wait({future}, timeout=min(slow_after, limit))
    if not done:
        if on_slow is not None and slow_after < limit:
            on_slow()
        done, _ = await asyncio.wait({future}, timeout=max(0.0, limit - slow_after))
    if not done:
        future.cancel()
        raise KeyringTimeout(
            f"The keyring did not answer within {limit:g} s, so Qoder Desktop could not "
            f"{what}. Unlock the keyring (or answer its prompt) and try again.")
    return future.result()
