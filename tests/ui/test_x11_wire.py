"""The X server's bytes, as the input-origin check decodes them (no Qt, no X server).

Every message here was captured from Xvfb 21 through `ui/xcb.py` (libxcb hands an XGE
event over with its full sequence number at byte 32): XInput's major opcode was 131,
device 4 the "Virtual core XTEST pointer", 5 the "Virtual core XTEST keyboard", 7 the
"Xvfb keyboard". `xdotool key Return` and `xdotool click 3` made the XTEST ones; the
keyboard's are XTEST's device path (a DeviceKeyPress "from" device 7).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qoder_desktop.ui import xcb
from qoder_desktop.ui.x11_input import (
    InputKind,
    RawInput,
    RawInputWatch,
    X11InputUnavailable,
    is_xtest_name,
    parse_devices,
    parse_raw_event,
)
from qoder_desktop.ui.x11_record import parse_elements, parse_enable_context_reply

XI = 131
XTEST, XI_FIRST_EVENT = 132, 66
EVENTS = {  # (name: bytes as libxcb's xcb_poll_for_event returned them)
    "xdotool Return press": "23830a00020000000d00030073143c01240000000500020000000000"
                            "000000000a0000000000000000000000",
    "xdotool Return release": "23830a00020000000e00030079143c01240000000500020000000000"
                              "000000000a0000000000000000000000",
    "xdotool button 3 press": "23830900020000000f00020037523d01030000000400020000000000"
                              "00000000090000000000000000000000",
    "xdotool button 3 release": "23830900020000001000020037523d01030000000400020000000000"
                                "00000000090000000000000000000000",
    "keyboard Return press": "23830900020000000d0003009d523d01240000000700020000000000"
                             "00000000090000000000000000000000",
}
MAPPING_NOTIFY = "220009000108f800000000000000000000000000000000000000000000000000"
BAD_WINDOW = "00030a00674523012e0083000000000000000000000000000000000000000000"
START_OF_DATA = "0104010000000000020000000000000030523d01000000000e0000000f000000"
XDOTOOL_RETURN_RECORDED = bytes.fromhex(  # the FakeInput request of `xdotool key Return`
    "010101000a000000020045300000800073143c011500000074696f6e436f6d7073143c01840209000224"
    "04000000000000000000070007006500020008f7f5050000000000000000")


@pytest.mark.parametrize(("name", "raw"), [
    ("xdotool Return press", RawInput(InputKind.KEY_PRESS, 0x013C1473, 36, 5)),
    ("xdotool Return release", RawInput(InputKind.KEY_RELEASE, 0x013C1479, 36, 5)),
    ("xdotool button 3 press", RawInput(InputKind.BUTTON_PRESS, 0x013D5237, 3, 4)),
    ("xdotool button 3 release", RawInput(InputKind.BUTTON_RELEASE, 0x013D5237, 3, 4)),
    ("keyboard Return press", RawInput(InputKind.KEY_PRESS, 0x013D529D, 36, 7)),
])
def test_raw_events_say_their_time_keycode_or_button_and_source_device(name, raw):
    assert parse_raw_event(bytes.fromhex(EVENTS[name]), XI) == raw


def test_other_events_and_errors_are_not_raw_input():
    assert parse_raw_event(bytes.fromhex(MAPPING_NOTIFY), XI) is None
    assert parse_raw_event(bytes.fromhex(BAD_WINDOW), XI) is None
    another_extension = bytes.fromhex(EVENTS["xdotool Return press"])
    assert parse_raw_event(another_extension, XI + 1) is None
    assert parse_raw_event(another_extension[:20], XI) is None


def test_a_raw_event_with_no_source_is_the_device_it_is_reported_on():
    """(Selected for the master devices, raw events are reported on the master
    keyboard, device 3.)"""
    event = bytearray.fromhex(EVENTS["keyboard Return press"])
    event[20:22] = bytes(2)  # sourceid 0
    assert parse_raw_event(bytes(event), XI) == RawInput(InputKind.KEY_PRESS, 0x013D529D,
                                                         36, 3)


def test_the_device_list_of_xvfb():
    reply = bytes.fromhex((Path(__file__).parent / "data" / "xvfb_xi_query_device.hex")
                          .read_text().replace("\n", ""))
    devices = parse_devices(reply)
    assert devices == [(2, 1, "Virtual core pointer"), (3, 2, "Virtual core keyboard"),
                       (4, 3, "Virtual core XTEST pointer"),
                       (5, 4, "Virtual core XTEST keyboard"),
                       (6, 3, "Xvfb mouse"), (7, 4, "Xvfb keyboard")]
    assert [device for device, _, name in devices if is_xtest_name(name)] == [4, 5]


def test_a_recorded_fake_input_matches_the_raw_event_it_made():
    category, xid_base, data = parse_enable_context_reply(XDOTOOL_RETURN_RECORDED)
    assert (category, xid_base) == (1, 0x800000)  # from a client (xdotool's id base)
    fakes, no_ops = parse_elements(data, XTEST, XI_FIRST_EVENT)
    press = parse_raw_event(bytes.fromhex(EVENTS["xdotool Return press"]), XI)
    assert press is not None
    assert fakes == [(InputKind.KEY_PRESS, press.time, press.detail)] and no_ops == 0


def test_the_start_of_a_recording_carries_no_request():
    category, _, data = parse_enable_context_reply(bytes.fromhex(START_OF_DATA))
    assert category == 4 and data == b""


def test_without_libxcb_the_check_is_missing_not_broken(monkeypatch):
    """No libxcb.so.1 on this machine: the display cannot be checked (the dialogs warn
    and approving input still works), which differs from a check that broke later."""
    monkeypatch.setattr(xcb, "LIBRARY", "libxcb-absent.so.1")
    monkeypatch.setattr(xcb, "_loaded", None)
    with pytest.raises(X11InputUnavailable) as caught:
        RawInputWatch.open(":0")
    assert caught.value.missing
    assert "XCB library could not be loaded" in str(caught.value)
