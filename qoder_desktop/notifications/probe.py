"""Is there a notification service on the session bus? (the self-check's D-Bus probe).

Qt-free and loop-free for its callers: `probe_service` runs its own short-lived asyncio
loop in a worker thread, so it can be called from anywhere, a running loop included.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from dataclasses import dataclass

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
PROBE_TIMEOUT = 5.0


@dataclass(frozen=True)
class ProbeResult:
    """What the probe found.

    Attributes:
        available: a notification service answered on the session bus.
        buttons: it advertises the ``actions`` capability.
        detail: the server's name and version, or why there is none.
    """

    available: bool
    buttons: bool
    detail: str


async def _probe() -> ProbeResult:
    from qoder_desktop.notifications.session_bus import BusError, SessionBus

    bus = await SessionBus().connect()
    try:
        try:
            info = await bus.call("GetServerInformation", destination=BUS_NAME,
                                  path=OBJECT_PATH, interface=BUS_NAME)
        except BusError as exc:
            return ProbeResult(False, False,
                               f"no service named {BUS_NAME} ({exc.error_name or 'error'})")
        try:
            caps = await bus.call("GetCapabilities", destination=BUS_NAME, path=OBJECT_PATH,
                                  interface=BUS_NAME)
            capabilities = [str(capability) for capability in caps.body[0]]
        except BusError:
            capabilities = []
        name, vendor, version = (str(part) for part in info.body[:3])
        return ProbeResult(True, "actions" in capabilities, f"{name} {version} ({vendor})")
    finally:
        bus.disconnect()


def _run(timeout: float) -> ProbeResult:
    try:
        return asyncio.run(asyncio.wait_for(_probe(), timeout))
    except TimeoutError:
        return ProbeResult(False, False, f"the session bus did not answer in {timeout:g} s")
    except Exception as exc:
        return ProbeResult(False, False, f"no D-Bus session bus: {exc or type(exc).__name__}")


def _other_platform() -> ProbeResult:
    """macOS and Windows: which desktop-notifier backend the app would use (not called)."""
    try:
        from desktop_notifier.main import get_backend_class

        backend = get_backend_class().__name__
    except Exception as exc:
        return ProbeResult(False, False, f"desktop-notifier did not load ({exc})")
    if backend == "DummyNotificationCenter":
        return ProbeResult(False, False, "desktop-notifier has no backend here (on macOS it "
                                         "needs the signed app bundle)")
    return ProbeResult(True, True, f"{backend} (not called)")


def probe_service(timeout: float = PROBE_TIMEOUT) -> ProbeResult:
    """Ask the session bus for the notification service; never raises."""
    if not sys.platform.startswith("linux"):
        return _other_platform()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(_run, timeout).result()
