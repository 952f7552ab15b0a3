"""What the Devices page shows of the core's devices, and which addresses are this
machine's."""

from __future__ import annotations

from datetime import UTC, datetime

from helpers.phone import Phone

from qoder_desktop.away.devices import Device
from qoder_desktop.ui.control.away_core import device_rows, is_local_address
from qoder_desktop.ui.widgets.away import local_addresses

PAIRED = datetime(2026, 5, 2, 12, 0, tzinfo=UTC)


def _device(name: str, **fields: object) -> Device:
    return Device(device_id=name.lower().replace(" ", "") * 4, name=name,
                  public_key=Phone(name).spki, paired_at=PAIRED,
                  last_used_at=fields.pop("last_used_at", None),  # type: ignore[arg-type]
                  revoked_at=fields.pop("revoked_at", None),  # type: ignore[arg-type]
                  tampered=bool(fields.pop("tampered", False)))


def test_devices_that_can_answer_come_first_and_the_others_say_why_not() -> None:
    rows = device_rows([_device("Old phone", revoked_at=PAIRED),
                        _device("Planted", tampered=True),
                        _device("Pixel 7", last_used_at=PAIRED)])
    assert [(row.label.split(" (")[0], row.revoked) for row in rows] == [
        ("Pixel 7", False), ("Old phone", True), ("Planted", True)]
    pixel, old, planted = rows
    assert pixel.state == "can answer" and pixel.last_used != "never"
    assert old.state.startswith("revoked ") and old.last_used == "never"
    assert planted.state == "not trusted: its record was changed outside the app"


def test_only_this_machines_addresses_are_local() -> None:
    assert is_local_address("127.0.0.1", loopback=True) is True
    assert is_local_address("127.0.0.1", loopback=False) is False  # (not offered)
    assert is_local_address("203.0.113.7", loopback=True) is False
    assert is_local_address("desk.home.arpa", loopback=True) is None  # (a name)
    for entry in local_addresses():
        assert is_local_address(entry.address, loopback=False) is True


def test_the_machines_addresses_leave_loopback_out_unless_asked() -> None:
    assert all(not entry.address.startswith("127.") and entry.address != "::1"
               for entry in local_addresses())
    assert any(entry.address == "127.0.0.1" for entry in local_addresses(loopback=True))
    assert all(entry.label == f"{entry.interface} — {entry.address}"
               for entry in local_addresses(loopback=True))
