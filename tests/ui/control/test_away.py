"""Away mode at the desk, on the app's qasync loop with real widgets and Away mode's real
core (the desk's CA from the in-memory keyring, the `DeviceRegistry` in SQLite, `AwayMode`
serving HTTPS on 127.0.0.1): Settings → Devices says what listens and lists and revokes
devices; the pairing dialog shows the offer's QR and address, a phone claims it over
HTTPS with the address it read, the dialog shows the phone's own code and a click pairs;
the tray item turns Away mode on and off; an address not on this machine, or a port in
use, is refused in words; a key, an answer at the desk or the tray icon turn it off, a
phone's answer does not."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest
import shiboken6
from helpers.app_side import app_side
from helpers.away_desk import free_port_pair
from helpers.away_rig import phone_socket
from helpers.loop import run, settle
from helpers.memory_keyring import MemoryKeyring
from helpers.phone import Phone
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from qoder_desktop.away.devices import Device, DeviceRegistry
from qoder_desktop.away.mode import TIME_LIMIT_REACHED, AwayMode
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import AwaySettings, Settings
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision
from qoder_desktop.store.database import Database
from qoder_desktop.ui.control.away import BACK_AT_DESK, AwayCore, away_core_factory
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.start_up import on_handover
from qoder_desktop.ui.windows.devices_page import DevicesPage
from qoder_desktop.ui.windows.pairing_dialog import PairingDialog
from qoder_desktop.ui.wiring import DesktopApp


class Desk:
    """The app with Away mode's real core over the test's database and keyring."""

    def __init__(self, app: DesktopApp, port: int) -> None:
        self.app, self.port = app, port

    @property
    def core(self) -> AwayCore:
        assert self.app.away.core is not None
        return self.app.away.core

    @property
    def mode(self) -> AwayMode:
        return cast(AwayMode, self.core.mode)

    @property
    def devices(self) -> DeviceRegistry:
        return cast(DeviceRegistry, self.core.devices)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def status_text(self) -> str:
        return self.app.window.ui.statusBar.currentMessage()


def _desk(db: Database, tmp_path: Path, qtbot: QtBot, keyring: MemoryKeyring,
          loop: AppEventLoop, **away: object) -> Desk:
    secrets = SecretStore(keyring, extra_allowed=(MemoryKeyring,))
    _ledger, broker, hub = app_side(db)
    port = free_port_pair()
    settings = Settings(away=AwaySettings(port=port, **away))  # type: ignore[arg-type]
    app = DesktopApp(broker, hub, secrets, settings, tmp_path / "settings.json",
                     away_core=away_core_factory(broker, db, secrets, tmp_path, "test desk"))
    qtbot.addWidget(app.window)
    run(loop, app.away.core_ready())
    return Desk(app, port)


def _close(desk: Desk, loop: AppEventLoop) -> None:
    dialog = desk.app.settings_dialog
    if dialog is not None and shiboken6.isValid(dialog):
        dialog.close()
    desk.app.tray.dispose()
    run(loop, desk.app.away.close())


@pytest.fixture
def desk(db: Database, tmp_path: Path, qtbot: QtBot, loop: AppEventLoop,
         memory_keyring: MemoryKeyring) -> Iterator[Desk]:
    """The desk with loopback offered and chosen, so Away mode can start here."""
    made = _desk(db, tmp_path, qtbot, memory_keyring, loop, host="127.0.0.1",
                 list_loopback=True, back_after_idle_s=0)
    yield made
    _close(made, loop)


def _devices_page(desk: Desk, loop: AppEventLoop) -> DevicesPage:
    page = desk.app.open_devices_page()
    assert page is not None
    run(loop, settle(lambda: page.away_check.isEnabled() and page.listening_label.text()))
    return page


def _trusted(desk: Desk, device_id: str) -> bool:
    return any(d.device_id == device_id and d.trusted for d in desk.devices.devices())


async def _paired(desk: Desk, name: str) -> Device:
    return await desk.devices.add(name, Phone(name).spki)


def test_devices_page_lists_the_paired_devices_and_revokes_one_after_asking(
        desk: Desk, loop: AppEventLoop, qtbot: QtBot) -> None:
    pixel = run(loop, _paired(desk, "Pixel 7"))
    run(loop, _paired(desk, "iPhone"))
    page = _devices_page(desk, loop)
    run(loop, settle(lambda: len(page.device_labels()) == 2))
    assert (pixel.label, "can answer") in page.device_labels()

    page.select_device(pixel.device_id)
    box = page.ask_revoke()
    assert box is not None and box.isVisible()
    assert pixel.label in box.text()
    revoke = next(b for b in box.buttons()
                  if box.buttonRole(b) is QMessageBox.ButtonRole.DestructiveRole)
    qtbot.mouseClick(revoke, Qt.MouseButton.LeftButton)
    run(loop, settle(lambda: not _trusted(desk, pixel.device_id)))
    run(loop, settle(lambda: dict(page.device_labels())[pixel.label].startswith("revoked")))
    assert not page.revoke_button.isEnabled()  # (the revoked row stays selected)
    assert f"Revoked {pixel.label}" in desk.status_text


def test_cancelling_the_revoke_question_keeps_the_device(desk: Desk, loop: AppEventLoop,
                                                         qtbot: QtBot) -> None:
    pixel = run(loop, _paired(desk, "Pixel 7"))
    page = _devices_page(desk, loop)
    run(loop, settle(lambda: page.device_labels() != []))
    page.select_device(pixel.device_id)
    box = page.ask_revoke()
    assert box is not None
    qtbot.mouseClick(box.button(QMessageBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)
    assert _trusted(desk, pixel.device_id)


async def _claim(desk: Desk, url: str, phone: Phone) -> dict[str, Any]:
    """What the phone does with the QR code's address: fetch the desk's certificate from
    the plain-HTTP page (once), then claim the token in the address's fragment over
    HTTPS, trusting only that certificate."""
    status = desk.mode.status
    assert status.ca_url is not None
    async with httpx.AsyncClient(timeout=10) as plain:
        ca_pem = (await plain.get(status.ca_url)).text
    base, token = url.split("/#pair=")
    import ssl

    trust = ssl.create_default_context(cadata=ca_pem)
    async with httpx.AsyncClient(base_url=base, verify=trust, timeout=10) as https:
        response = await https.post("/api/pair", headers={"Origin": base}, json={
            "token": token, "public_key": phone.public_key, "name": phone.name})
    assert response.status_code == 200, response.text
    return cast(dict[str, Any], response.json())


def _offered(desk: Desk, loop: AppEventLoop) -> PairingDialog:
    dialog = desk.app.away.pair()
    run(loop, settle(lambda: "#pair=" in dialog.url_label.text()))
    return dialog


def test_pairing_shows_the_offer_and_the_phones_code_and_a_click_pairs(
        desk: Desk, loop: AppEventLoop, qtbot: QtBot) -> None:
    dialog = _offered(desk, loop)
    assert desk.app.away.is_on  # (pairing turned Away mode on at the chosen address)
    url = dialog.url_label.text()
    assert url.startswith(f"{desk.url}/#pair=")
    pixmap = dialog.qr_label.pixmap()
    assert not pixmap.isNull() and pixmap.width() >= 21 * 6  # (a version 1+ code at scale 6)
    assert dialog.expiry_label.text().startswith("Expires in ")

    phone = Phone("Pixel 7")
    claim = run(loop, _claim(desk, url, phone))
    qtbot.waitUntil(lambda: dialog.code_text() != "")
    assert dialog.code_text() == claim["code"] == phone.code(url.split("#pair=")[1])
    assert "Pixel 7" in dialog.phone_label.text()
    assert dialog.match_label.text() == "Confirm only if your phone shows the same code."
    qtbot.waitUntil(dialog.confirm_button.isEnabled)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    run(loop, settle(lambda: [d.name for d in desk.devices.devices()] == ["Pixel 7"]))
    device = desk.devices.devices()[0]
    assert device.public_key == phone.spki and device.trusted
    qtbot.waitUntil(lambda: dialog.result_label.text().startswith("Paired: Pixel 7"))


def test_refusing_or_closing_the_pairing_dialog_pairs_nothing(
        desk: Desk, loop: AppEventLoop, qtbot: QtBot) -> None:
    dialog = _offered(desk, loop)
    phone = Phone("Stranger")
    run(loop, _claim(desk, dialog.url_label.text(), phone))
    qtbot.waitUntil(lambda: dialog.code_text() != "")
    qtbot.mouseClick(dialog.refuse_button, Qt.MouseButton.LeftButton)
    assert desk.mode.pairings.pending() is None
    dialog.close()

    second = _offered(desk, loop)
    run(loop, _claim(desk, second.url_label.text(), phone))
    qtbot.waitUntil(lambda: second.code_text() != "")
    second.close()  # (closing while the phone waits refuses it)
    assert desk.mode.pairings.pending() is None
    assert desk.devices.devices() == []


def test_turning_away_mode_off_ends_the_pairing_on_screen(desk: Desk, loop: AppEventLoop,
                                                         qtbot: QtBot) -> None:
    dialog = _offered(desk, loop)
    run(loop, desk.app.away.stop("you turned it off"))
    assert dialog.result_label.text() == ("Away mode is off, so this pairing code no "
                                          "longer works.")
    assert dialog.confirm_button.isHidden()


def test_return_never_confirms(desk: Desk, loop: AppEventLoop, qtbot: QtBot) -> None:
    dialog = _offered(desk, loop)
    run(loop, _claim(desk, dialog.url_label.text(), Phone()))
    qtbot.waitUntil(dialog.confirm_button.isEnabled)
    QTest.keyClick(dialog, Qt.Key.Key_Return)
    run(loop, settle(lambda: desk.mode.pairings.pending() is not None))
    assert desk.devices.devices() == []


def _tray_away(desk: Desk) -> Any:
    menu = desk.app.tray.menu()
    return menu.findChild(type(menu.menuAction()), "awayAction")


def test_the_tray_item_turns_away_mode_on_and_off(desk: Desk, loop: AppEventLoop) -> None:
    action = _tray_away(desk)
    assert action is not None and action.isCheckable() and not action.isChecked()
    action.trigger()
    run(loop, settle(lambda: desk.app.away.is_on))
    assert desk.mode.status.url == desk.url
    ends_at = desk.mode.status.ends_at
    assert ends_at is not None
    assert timedelta(hours=3.9) < ends_at - datetime.now(UTC) <= timedelta(hours=4)
    assert desk.url in desk.app.tray.tooltip()
    assert desk.app.away.label.isVisibleTo(desk.app.window)
    assert desk.url in desk.app.away.label.text()
    assert _tray_away(desk).isChecked()
    _tray_away(desk).trigger()
    run(loop, settle(lambda: not desk.app.away.is_on))
    assert desk.url not in desk.app.tray.tooltip()
    assert not desk.app.away.label.isVisibleTo(desk.app.window)
    assert desk.status_text == "Away mode is off: you turned it off"


def test_with_no_address_chosen_the_tray_item_opens_settings_devices(
        db: Database, tmp_path: Path, qtbot: QtBot, loop: AppEventLoop,
        memory_keyring: MemoryKeyring) -> None:
    desk = _desk(db, tmp_path, qtbot, memory_keyring, loop)
    try:
        desk.app.tray.away_toggled.emit(True)
        run(loop, settle(lambda: desk.app.settings_dialog is not None))
        dialog = desk.app.settings_dialog
        assert dialog is not None
        assert dialog.ui.tabs.currentWidget() is dialog.devices_page
        assert "Choose the address" in desk.status_text
        assert not desk.mode.status.on
    finally:
        _close(desk, loop)


def test_away_mode_ends_at_its_time_limit_and_says_so(
        db: Database, tmp_path: Path, qtbot: QtBot, loop: AppEventLoop,
        memory_keyring: MemoryKeyring) -> None:
    desk = _desk(db, tmp_path, qtbot, memory_keyring, loop, host="127.0.0.1",
                 list_loopback=True, time_limit_hours=0.0001)  # (0.36 s)
    try:
        assert run(loop, desk.app.away.start())
        run(loop, settle(lambda: not desk.app.away.is_on))
        assert desk.status_text == TIME_LIMIT_REACHED
        assert not _tray_away(desk).isChecked()
    finally:
        _close(desk, loop)


def test_a_later_launch_with_away_turns_it_on_in_the_running_app(
        db: Database, tmp_path: Path, qtbot: QtBot, loop: AppEventLoop,
        memory_keyring: MemoryKeyring) -> None:
    desk = _desk(db, tmp_path, qtbot, memory_keyring, loop, list_loopback=True)
    try:
        on_handover({"action": "show", "away": "127.0.0.1"}, desk.app)
        run(loop, settle(lambda: desk.app.away.is_on))
        assert desk.mode.status.url == desk.url
        assert desk.app.settings.away.host == "127.0.0.1"  # (remembered for the tray)
    finally:
        _close(desk, loop)


def test_loopback_is_refused_unless_the_developer_setting_offers_it(
        db: Database, tmp_path: Path, qtbot: QtBot, loop: AppEventLoop,
        memory_keyring: MemoryKeyring) -> None:
    desk = _desk(db, tmp_path, qtbot, memory_keyring, loop)
    try:
        assert not run(loop, desk.app.away.start("127.0.0.1"))
        assert desk.status_text == (
            "Away mode did not start: 127.0.0.1 is this machine's loopback address, which "
            "no phone can reach. Choose another in Settings → Devices.")
        assert not desk.mode.status.on
    finally:
        _close(desk, loop)


def test_an_address_not_on_this_machine_is_refused_in_words(desk: Desk,
                                                            loop: AppEventLoop) -> None:
    assert not run(loop, desk.app.away.start("203.0.113.7"))
    assert desk.status_text == ("Away mode did not start: 203.0.113.7 is not an address of "
                                "this machine now. Choose one in Settings → Devices.")
    assert not desk.mode.status.on


def test_a_port_in_use_is_said_on_the_page(desk: Desk, loop: AppEventLoop) -> None:
    page = _devices_page(desk, loop)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", desk.port))
        squatter.listen()
        page.away_check.click()
        run(loop, settle(lambda: page.notice_label.isVisibleTo(page)))
    assert page.notice_label.text().startswith("Away mode did not start: ")
    assert str(desk.port) in page.notice_label.text()
    assert not page.away_check.isChecked() and not desk.mode.status.on


def test_a_revoked_phones_sign_in_is_refused_and_the_desk_says_so(
        desk: Desk, loop: AppEventLoop) -> None:
    phone = Phone("Lost phone")
    device = run(loop, desk.devices.add(phone.name, phone.spki))
    phone.device_id = device.device_id
    run(loop, desk.devices.revoke(device.device_id))
    page = _devices_page(desk, loop)
    assert run(loop, desk.app.away.start())
    status = desk.mode.status
    assert status.ca_url is not None

    async def sign_in() -> int | None:
        async with httpx.AsyncClient(timeout=10) as plain:
            ca_pem = (await plain.get(status.ca_url)).text
        import ssl

        rig = SimpleNamespace(port=desk.port, origin=desk.url,
                              client_ssl=ssl.create_default_context(cadata=ca_pem))
        async with phone_socket(rig, phone) as client:  # type: ignore[arg-type]
            await client.hello()
            await client.send(phone.auth(client.challenge))
            return await client.closed_with()

    assert run(loop, sign_in()) == 4403
    run(loop, settle(lambda: "refused a sign-in" in desk.status_text))
    assert desk.status_text.endswith(f"from {device.label} (revoked)")
    run(loop, settle(lambda: page.refused_label.isVisibleTo(page)))
    assert f"refused a sign-in from {device.label} (revoked)" in page.refused_label.text()


def test_a_core_that_fails_to_load_is_said_and_tried_again_next_time(
        db: Database, tmp_path: Path, qtbot: QtBot, loop: AppEventLoop,
        memory_keyring: MemoryKeyring) -> None:
    attempts: list[int] = []
    real = _desk(db, tmp_path, qtbot, memory_keyring, loop, host="127.0.0.1",
                 list_loopback=True)
    core = real.core

    async def flaky() -> AwayCore:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("the keyring did not answer")
        return core

    app = DesktopApp(real.app.broker, real.app.hub, real.app.secrets, real.app.settings,
                     tmp_path / "other-settings.json", away_core=flaky)
    qtbot.addWidget(app.window)
    try:
        assert not run(loop, app.away.start())
        assert app.window.ui.statusBar.currentMessage() == (
            "Away mode did not start: the keyring did not answer")
        assert run(loop, app.away.start())
        assert attempts == [1, 1] and app.away.is_on
    finally:
        run(loop, app.away.close())
        app.tray.dispose()
        _close(real, loop)


def test_two_quick_starts_make_one_start(desk: Desk, loop: AppEventLoop) -> None:
    async def twice() -> list[bool]:
        return list(await asyncio.gather(desk.app.away.start(), desk.app.away.start()))

    assert run(loop, twice()) == [True, True]
    assert desk.app.away.is_on
    assert "did not start" not in desk.status_text
    assert _tray_away(desk).isChecked()


def test_the_page_says_what_listens_and_shows_the_certificate(desk: Desk,
                                                              loop: AppEventLoop) -> None:
    page = _devices_page(desk, loop)
    page.away_check.click()
    run(loop, settle(lambda: desk.app.away.is_on))
    assert page.away_check.isChecked()
    assert page.listening_label.text() == f"Phones can answer at {desk.url} — only paired devices."
    assert page.ca_url_label.text().endswith(f"http://127.0.0.1:{desk.port + 1}/")
    fingerprint = desk.mode.status.fingerprint
    # In two lines of 16 bytes, the same characters the phone shows.
    assert fingerprint and page.fingerprint_label.text().split("\n") == [
        fingerprint[:47], fingerprint[48:]]
    assert not page.ca_qr_label.pixmap().isNull()
    assert not page.address_combo.isEnabled()  # (the address cannot change while on)


def test_a_key_press_at_the_desk_turns_away_mode_off(desk: Desk, loop: AppEventLoop) -> None:
    desk.app.window.show()
    assert run(loop, desk.app.away.start())
    QTest.keyClick(desk.app.window, Qt.Key.Key_Shift)
    run(loop, settle(lambda: desk.status_text == f"Away mode is off: {BACK_AT_DESK}"))
    assert not desk.app.away.is_on
    assert desk.mode.status.why_off == BACK_AT_DESK


def test_input_while_setting_up_or_with_the_setting_off_keeps_away_mode_on(
        desk: Desk, loop: AppEventLoop) -> None:
    page = _devices_page(desk, loop)
    assert run(loop, desk.app.away.start())
    QTest.keyClick(page.port_spin, Qt.Key.Key_Shift)  # (in Settings: setting it up)
    desk.app.current_settings.value.away.off_when_back = False
    desk.app.window.show()
    QTest.keyClick(desk.app.window, Qt.Key.Key_Shift)
    desk.app.away.person_seen()  # (the setting off: an answer here keeps it on too)
    run(loop, desk.app.away.stop("the test ended"))  # a later event, seen in order
    assert desk.status_text == "Away mode is off: the test ended"


def _bash(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="api", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp")


@pytest.fixture
def patient_desk(db: Database, tmp_path: Path, qtbot: QtBot, loop: AppEventLoop,
                 memory_keyring: MemoryKeyring) -> Iterator[Desk]:
    """Away mode on, and keys count as "back" only after an hour without input: only an
    answer or the tray icon can end it in a test."""
    made = _desk(db, tmp_path, qtbot, memory_keyring, loop, host="127.0.0.1",
                 list_loopback=True, back_after_idle_s=3600)
    assert run(loop, made.app.away.start())
    yield made
    _close(made, loop)


def test_an_answer_from_the_phone_closes_the_desks_dialog_and_the_ledger_names_the_phone(
        patient_desk: Desk, loop: AppEventLoop) -> None:
    desktop = patient_desk.app

    async def scenario() -> Decision:
        task = asyncio.ensure_future(desktop.broker.request(_bash("make build")))
        await settle(lambda: desktop.dialogs.open_dialogs())
        [dialog] = desktop.dialogs.open_dialogs()
        phone = Decision.allow_once({"command": "make build"}).model_copy(
            update={"device": "Pixel 7 (3f9a1c)"})
        assert desktop.bridge.answer(dialog.request.request_id, phone)
        await settle(lambda: desktop.dialogs.open_dialogs() == [])
        return await task

    assert run(loop, scenario()).device == "Pixel 7 (3f9a1c)"
    [entry] = desktop.broker._ledger.entries("s0")  # type: ignore[attr-defined]
    assert entry.who == "you, on Pixel 7 (3f9a1c)"
    assert desktop.away.is_on  # (the phone's answer is not the person back at the desk)


def test_an_answer_given_at_the_desk_turns_away_mode_off(patient_desk: Desk,
                                                         loop: AppEventLoop,
                                                         qtbot: QtBot) -> None:
    desktop = patient_desk.app

    async def scenario() -> None:
        task = asyncio.ensure_future(desktop.broker.request(_bash("make test")))
        await settle(lambda: desktop.dialogs.open_dialogs())
        [dialog] = desktop.dialogs.open_dialogs()
        await settle(dialog.is_armed)
        qtbot.keyClick(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        await task
        await settle(lambda: not desktop.away.is_on)

    run(loop, scenario())
    assert patient_desk.status_text == f"Away mode is off: {BACK_AT_DESK}"


def test_a_click_on_the_tray_icon_turns_away_mode_off(patient_desk: Desk,
                                                      loop: AppEventLoop) -> None:
    patient_desk.app.window.show()
    QTest.keyClick(patient_desk.app.window, Qt.Key.Key_Shift)  # (within the hour: kept on)
    patient_desk.app.tray.activate_window.emit()
    run(loop, settle(lambda: not patient_desk.app.away.is_on))
    assert patient_desk.mode.status.why_off == BACK_AT_DESK
