"""Away mode at the desk: turning it on and off (Settings → Devices, the tray, ``--away``),
what it says where (status bar, tray, the page), pairing a phone, revoking a device,
and turning it off when the desk sees the person again.

Away mode's core (`qoder_desktop.away`: the certificate authority, the devices, the
server, with cryptography, uvicorn's app and segno) is imported only when Away mode is
used — the first time it is turned on, a phone is paired or the Devices page is shown —
never at start-up otherwise (`away_core.away_core_factory`).

"Back at the desk" (with the setting on): a key press or click in any of the app's
windows other than the ones that set Away mode up (Settings, the pairing dialog),
once the desk has seen no input for `AwaySettings.back_after_idle_s`; an answer given
at the desk (a dialog or a notification's button); a click on the tray icon. Only the
app's own windows are seen, and Qt's spontaneous events only (not those this process
sends itself). A program injecting X11 input could turn Away mode off — the safe
direction: it stops phones answering and can never approve anything.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtWidgets import QWidget

from qoder_desktop.config.settings import AwaySettings
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.control.away_core import (
    AwayCore,
    CoreFactory,
    away_core_factory,
    device_rows,
    is_local_address,
    refused_line,
)
from qoder_desktop.ui.control.person_watch import PersonWatch
from qoder_desktop.ui.control.settings import CurrentSettings
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.tray import Tray
from qoder_desktop.ui.widgets.away import AwayLabel, AwayStatus, short_status
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # (the views of Away mode load when first shown)
    from qoder_desktop.ui.windows.devices_page import DevicesPage
    from qoder_desktop.ui.windows.pairing_dialog import PairingDialog

__all__ = ["BACK_AT_DESK", "AwayControl", "AwayCore", "CoreFactory", "away_core_factory"]

log = logging.getLogger(__name__)

BACK_AT_DESK = "you are back at the desk"
"""Why Away mode went off when the desk saw the person (the status bar says it)."""
NO_ADDRESS = ("Choose the address phones connect to in Settings → Devices, then turn "
              "Away mode on.")
UNAVAILABLE = "Away mode is not available in this window."


class AwayControl:
    """Turns Away mode on and off and shows where it listens (status bar, tray,
    Settings → Devices), pairs phones and revokes devices (see the module docstring).

    Args:
        window: the main window (its status bar).
        tray: the tray (its Away item and tooltip).
        tasks: runs the awaits in the background and reports what fails.
        current: the settings in force (the last address chosen is saved there).
        make_core: builds Away mode's core when first needed (None: not available).
        open_devices: shows Settings → Devices (when no address was chosen yet).
    """

    def __init__(self, window: MainWindow, tray: Tray, tasks: Tasks, current: CurrentSettings,
                 make_core: CoreFactory | None = None,
                 open_devices: Callable[[], DevicesPage | None] | None = None) -> None:
        self._window = window
        self._tray = tray
        self._tasks = tasks
        self._current = current
        self._make_core = make_core
        self.open_devices = open_devices
        self.core: AwayCore | None = None
        self._core_task: asyncio.Task[AwayCore] | None = None
        self.label = AwayLabel(window)
        window.add_status_widget(self.label)
        self.page: DevicesPage | None = None
        self.pairing_dialog: PairingDialog | None = None
        self.on_pairing_dialog: Callable[[PairingDialog], None] | None = None
        """Told each pairing dialog opened (the wiring connects its signals)."""
        self._setup_windows: set[int] = set()
        self._unsubscribe: list[Callable[[], None]] = []
        self._unsubscribe_pairing: Callable[[], None] | None = None
        self._on = False
        self._starting: asyncio.Task[bool] | None = None
        self._refused_seen = 0
        """How many refused answers of this Away session were said already."""
        self.watch = PersonWatch(self.person_seen, self._idle_s, self._is_setting_up)

    # -- state ---------------------------------------------------------------------------

    @property
    def is_on(self) -> bool:
        """Whether Away mode serves the phone page now."""
        return self._on

    def status(self) -> AwayStatus | None:
        """Away mode's state (None before its core was loaded)."""
        return None if self.core is None else self.core.mode.status

    async def core_ready(self) -> AwayCore:
        """Away mode's core, built on first use (once, however many ask at once)."""
        if self.core is not None:
            return self.core
        if self._make_core is None:
            raise RuntimeError(UNAVAILABLE)
        if self._core_task is None:
            self._core_task = asyncio.ensure_future(self._make_core())
        task = self._core_task
        try:
            core = await asyncio.shield(task)
        except Exception:
            if self._core_task is task:  # (the next use tries again: a keyring back…)
                self._core_task = None
            raise
        if self.core is None:
            self.core = core
            self._unsubscribe += [core.mode.subscribe(self._status_changed),
                                  core.devices.subscribe(self._devices_changed)]
        return core

    # -- on and off ----------------------------------------------------------------------

    def turn_on(self, host: str | None = None) -> asyncio.Task[bool]:
        """Turn Away mode on at `host` (None: the address chosen last; with none chosen
        yet, Settings → Devices opens)."""
        return self._tasks.spawn(self.start(host), "turning Away mode on")

    def turn_off(self, why: str = "you turned it off") -> asyncio.Task[None]:
        """Turn Away mode off (`why` is said on the status bar)."""
        return self._tasks.spawn(self.stop(why), "turning Away mode off")

    def set_on(self, on: bool) -> None:
        """The tray's or the page's switch: on with the page's choice (or the last one),
        or off."""
        if not on:
            self.turn_off()
            return
        page = self._live_page()
        if page is not None:
            self._remember(page.edited(self._current.value.away))
        self.turn_on()

    async def start(self, host: str | None = None) -> bool:
        """Turn Away mode on; False (and the person told why) when it did not start. A
        start while one is under way waits for that one."""
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._start(host))
        return await asyncio.shield(self._starting)

    async def _start(self, host: str | None) -> bool:
        if self._on and self.core is not None:
            self._status_changed(self.core.mode.status)  # (the page shows it is on)
            return True
        settings = self._current.value.away
        host = (host or settings.host or "").strip()
        if not host:
            self._refused(NO_ADDRESS)
            if self.open_devices is not None:
                self.open_devices()
            return False
        local = is_local_address(host, loopback=settings.list_loopback)
        if local is False and is_local_address(host, loopback=True):
            self._refused(f"Away mode did not start: {host} is this machine's loopback "
                          "address, which no phone can reach. Choose another in Settings → "
                          "Devices.")
            return False
        if local is False:
            self._refused(f"Away mode did not start: {host} is not an address of this "
                          "machine now. Choose one in Settings → Devices.")
            return False
        try:
            core = await self.core_ready()
        except Exception as exc:  # (the core failed to load: the keyring, the database…)
            log.warning("Away mode's core could not load", exc_info=exc)
            self._refused(f"Away mode did not start: {exc}")
            return False
        try:
            await core.mode.start(host, settings.port,
                                  time_limit_s=settings.time_limit_hours * 3600)
        except core.error as exc:
            self._refused(f"Away mode did not start: {exc}")
            return False
        if host != settings.host:
            self._remember({**self._current.value.away.model_dump(), "host": host})
        self._status_changed(core.mode.status)
        return True

    async def stop(self, why: str) -> None:
        """Turn Away mode off (idempotent)."""
        if self.core is not None:
            await self.core.mode.stop(why)
            self._status_changed(self.core.mode.status, why=why)
        elif page := self._live_page():
            page.show_notice("")  # (it never was on: the switch is free again)

    def person_seen(self, *_args: object) -> None:
        """The desk saw the person (a key, a click, an answer here, the tray icon): turn
        Away mode off when the setting says so."""
        if self._on and self._current.value.away.off_when_back:
            self.watch.stop()  # (once: more input while it stops does nothing more)
            self.turn_off(BACK_AT_DESK)

    def setting_up(self, window: QWidget) -> None:
        """Input in `window` (Settings, the pairing dialog) never counts as back."""
        key = id(window)
        self._setup_windows.add(key)
        window.destroyed.connect(lambda _=None: self._setup_windows.discard(key))

    def _idle_s(self) -> float:
        return float(self._current.value.away.back_after_idle_s)

    def _is_setting_up(self, window: QWidget) -> bool:
        return id(window) in self._setup_windows

    def _remember(self, away: dict[str, Any]) -> None:
        settings = self._current.value.model_copy(update={
            "away": AwaySettings.model_validate(away)})
        try:
            self._current.save(settings)
        except OSError as exc:
            self._window.show_status(f"Could not save the Away mode settings: {exc}")

    def _refused(self, text: str) -> None:
        self._window.show_status(text)
        self._tray.set_away(False, "")
        if page := self._live_page():
            page.show_notice(text)

    def _status_changed(self, status: AwayStatus, why: str | None = None) -> None:
        was_on, self._on = self._on, bool(status.on)
        if not shiboken6.isValid(self.label):  # (the window is gone: the app quits)
            return
        self.label.show_status(status)
        self._show_refused(int(getattr(status, "refused", 0) or 0))
        self._tray.set_away(status.on, short_status(status))
        if page := self._live_page():
            page.show_status(status)
        if status.on and not was_on:
            self._window.show_status(short_status(status))
            self.watch.start()
        elif was_on and not status.on:
            self.watch.stop()
            dialog = self.pairing_dialog
            if dialog is not None and shiboken6.isValid(dialog):
                dialog.show_problem("Away mode is off, so this pairing code no longer "
                                    "works.")
            reason = why or status.why_off or "it was turned off"
            self._window.show_status(reason if reason.startswith("Away mode")
                                     else f"Away mode is off: {reason}")
        elif not status.on:
            self.watch.stop()

    def _show_refused(self, count: int) -> None:
        """Say each answer or sign-in Away mode refused (a revoked phone, a bad
        signature): on the status bar, and the latest on the page."""
        if count < self._refused_seen:  # (a new Away session counts from 0)
            self._refused_seen = 0
        if count == self._refused_seen or self.core is None:
            return
        latest = self.core.mode.refused()
        fresh = latest[-(count - self._refused_seen):]
        self._refused_seen = count
        if fresh:
            self._window.show_status(make_visible(f"Away mode {refused_line(fresh[-1])}"))
        if page := self._live_page():
            page.show_refused([refused_line(entry) for entry in latest[-5:]])

    # -- Settings → Devices --------------------------------------------------------------

    def show(self, page: DevicesPage) -> None:
        """Fill `page` with Away mode's state and the paired devices (the core loads
        now: the person looks at the page)."""
        self.page = page
        self._tasks.spawn(self._fill(page), "listing the paired devices")

    async def _fill(self, page: DevicesPage) -> None:
        try:
            core = await self.core_ready()
        except Exception as exc:
            if live := self._live_page():
                live.show_notice(f"Away mode cannot be used: {exc}")
            return
        if (live := self._live_page()) is not None and live is page:
            page.show_status(core.mode.status)
            page.show_devices(device_rows(core.devices.devices()))

    def revoke(self, device_id: str) -> asyncio.Task[None]:
        """Revoke `device_id` at once (the page asked first)."""
        return self._tasks.spawn(self._revoke(device_id), "revoking the device")

    async def _revoke(self, device_id: str) -> None:
        core = await self.core_ready()
        done = await core.devices.revoke(device_id)
        found = next((d for d in core.devices.devices() if d.device_id == device_id), None)
        name = found.label if found is not None else device_id
        text = (f"Revoked {name}: it can no longer answer." if done
                else f"{name} was already revoked.")
        self._window.show_status(text)
        self._devices_changed()
        if page := self._live_page():
            page.show_notice(text)

    def _devices_changed(self) -> None:
        page = self._live_page()
        if page is not None and self.core is not None:
            page.show_devices(device_rows(self.core.devices.devices()))

    def _live_page(self) -> DevicesPage | None:
        page = self.page
        return page if page is not None and shiboken6.isValid(page) else None

    # -- pairing -------------------------------------------------------------------------

    def pair(self) -> PairingDialog:
        """Open the pairing dialog (or raise the open one); Away mode is turned on first
        when it is off."""
        dialog = self.pairing_dialog
        if dialog is not None and shiboken6.isValid(dialog):
            dialog.raise_()
            return dialog
        from qoder_desktop.ui.windows.pairing_dialog import PairingDialog

        parent = self._live_page()
        dialog = PairingDialog(parent.window() if parent is not None else self._window)
        self.pairing_dialog = dialog
        self.setting_up(dialog)
        dialog.finished.connect(lambda _code: self._pairing_closed(dialog))
        if self.on_pairing_dialog is not None:
            self.on_pairing_dialog(dialog)
        dialog.open()
        self._tasks.spawn(self._offer(dialog), "offering a pairing")
        return dialog

    async def _offer(self, dialog: PairingDialog) -> None:
        if not self._on and not await self.start():
            if shiboken6.isValid(dialog):
                dialog.show_problem("Away mode is off, so a phone cannot reach this desk: "
                                    "choose an address in Settings → Devices and turn it on.")
            return
        core = await self.core_ready()
        base_url = core.mode.status.url
        if not shiboken6.isValid(dialog) or self.pairing_dialog is not dialog:
            return
        offer = core.mode.pairings.offer(base_url)
        dialog.show_offer(offer.url, offer.expires_at)

        def claimed(pending: Any) -> None:
            if not shiboken6.isValid(dialog):
                return
            if pending is not None:
                dialog.show_claim(pending.pairing_id, pending.name, pending.code)
            elif dialog.pairing_id() is not None:  # (expired or withdrawn unanswered)
                dialog.show_problem("That phone's pairing ended before you answered; "
                                    "pair it again.")

        self._unsubscribe_pairing = core.mode.pairings.subscribe(claimed)

    def confirm_pairing(self, pairing_id: str) -> asyncio.Task[None]:
        """The person confirmed the pairing (a real click: the dialog checked)."""
        return self._tasks.spawn(self._confirm(pairing_id), "pairing the phone")

    async def _confirm(self, pairing_id: str) -> None:
        core = await self.core_ready()
        dialog = self.pairing_dialog
        try:
            device = await core.mode.pairings.confirm(pairing_id)
        except Exception as exc:  # (PairingRefused: expired, or the phone went away)
            if dialog is not None and shiboken6.isValid(dialog):
                dialog.show_problem(f"Not paired: {exc}")
            return
        if dialog is not None and shiboken6.isValid(dialog):
            dialog.show_paired(device.label)
        self._window.show_status(f"Paired {device.label}.")
        self._devices_changed()

    def refuse_pairing(self, pairing_id: str) -> None:
        """The person refused the pairing (or closed the dialog while it waited)."""
        if self.core is not None:
            self.core.mode.pairings.refuse(pairing_id)

    def _pairing_closed(self, dialog: PairingDialog) -> None:
        if self.pairing_dialog is dialog:
            self.pairing_dialog = None
            if self._unsubscribe_pairing is not None:
                self._unsubscribe_pairing()
                self._unsubscribe_pairing = None
        dialog.deleteLater()

    # -- life cycle ----------------------------------------------------------------------

    async def close(self) -> None:
        """The app quits: Away mode stops, the watch ends."""
        self.watch.stop()
        dialog = self.pairing_dialog
        if dialog is not None and shiboken6.isValid(dialog):
            dialog.close()
        if self.core is not None:
            await self.core.mode.stop("the app quit")
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
