"""Telling a keyboard's key from an injected one by XInput2 raw events (no Qt).

`classify` is checked on raw events as a real X server reported them (recorded under
Xvfb: "Virtual core XTEST keyboard" is device 5, "Xvfb keyboard" device 7), and
`RawInputWatch` on a private Xvfb with `xdotool` and a key on the server's keyboard.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from helpers.desktop import wait_for, xvfb_display

from qoder_desktop.ui.x11_input import (
    Device,
    InputKind,
    Origin,
    RawInput,
    RawInputWatch,
    RecentByTime,
    X11InputUnavailable,
    classify,
    is_xtest_name,
)
from qoder_desktop.ui.x11_record import MATCH_MS, made_by, parse_elements
from qoder_desktop.ui.xcb import GET_INPUT_FOCUS, Connection, XcbError

KEY, BUTTON_UP = InputKind.KEY_PRESS, InputKind.BUTTON_RELEASE
DEVICES = {2: Device(2, "Virtual core pointer", False),
           3: Device(3, "Virtual core keyboard", False),
           4: Device(4, "Virtual core XTEST pointer", True),
           5: Device(5, "Virtual core XTEST keyboard", True),
           6: Device(6, "Xvfb mouse", False),
           7: Device(7, "Xvfb keyboard", False)}
RECORDED = [RawInput(KEY, 617827, 37, 5), RawInput(KEY, 617833, 36, 5),      # xdotool
            RawInput(InputKind.KEY_RELEASE, 617844, 37, 5),
            RawInput(KEY, 677881, 36, 7), RawInput(InputKind.KEY_RELEASE, 677881, 36, 7),
            RawInput(InputKind.BUTTON_PRESS, 618177, 1, 4),                  # xdotool click
            RawInput(BUTTON_UP, 618177, 1, 4),
            RawInput(BUTTON_UP, 700000, 3, 6)]                               # left-handed


@pytest.mark.parametrize(("kind", "time", "detail", "origin"), [
    (KEY, 617833, 36, Origin.INJECTED),        # xdotool key ctrl+Return: the Return
    (KEY, 617827, 37, Origin.INJECTED),        # … and its Ctrl
    (KEY, 677881, 36, Origin.DEVICE),          # Return on the Xvfb keyboard
    (InputKind.KEY_RELEASE, 677881, 36, Origin.DEVICE),
    (KEY, 677881, 37, Origin.UNKNOWN),         # another key at that time: none recorded
    (KEY, 617834, 36, Origin.UNKNOWN),         # no raw event at that time
    (InputKind.KEY_RELEASE, 617833, 36, Origin.UNKNOWN),  # the press is not the release
    (BUTTON_UP, 618177, None, Origin.INJECTED),
    (BUTTON_UP, 700000, None, Origin.DEVICE),  # the raw event has the physical button
])
def test_classify_recorded_raw_events(kind, time, detail, origin):
    assert classify(RECORDED, DEVICES, kind, time, detail) is origin


def test_an_injected_event_at_the_same_time_as_a_real_one_counts_as_injected():
    events = [RawInput(KEY, 5000, 36, 7), RawInput(KEY, 5000, 36, 5)]
    assert classify(events, DEVICES, KEY, 5000, 36) is Origin.INJECTED
    assert classify(events[:1], DEVICES, KEY, 5000, 36) is Origin.DEVICE


def test_a_device_the_server_did_not_list_is_not_trusted():
    events = [RawInput(KEY, 5000, 36, 12)]
    assert classify(events, DEVICES, KEY, 5000, 36) is Origin.UNKNOWN


XTEST, XI_FIRST_EVENT = 132, 66
"""The opcode and first event number Xvfb gave XTEST and XInput when these were recorded."""
XDOTOOL_A = bytes.fromhex(  # `xdotool key a`: FakeInput KeyPress 38, then its release
    "0eca160084020900022604000000000000000000070007006500020008f7f5050000000000000000"
    "15ca160084020900032604000000000000000000070007006500020008f7f5050000000000000000")
DEVICE_PATH_RETURN = bytes.fromhex(  # FakeInput DeviceKeyPress 36 "from" device 7
    "1cca1600840209004324000000000000000000000000000000000000000000000000000000000007")
NO_OPERATION = bytes.fromhex("0a0519007f000100")


def test_parse_recorded_fake_input_requests():
    fakes, no_ops = parse_elements(XDOTOOL_A + NO_OPERATION + DEVICE_PATH_RETURN,
                                   XTEST, XI_FIRST_EVENT)
    assert fakes == [(KEY, 0x16CA0E, 38), (InputKind.KEY_RELEASE, 0x16CA15, 38),
                     (KEY, 0x16CA1C, 36)]
    assert no_ops == 1


def test_a_delayed_fake_input_is_left_for_when_it_runs():
    delayed = bytearray(XDOTOOL_A[:40])
    delayed[12:16] = (250).to_bytes(4, "little")  # the xEvent's time: a delay in ms
    assert parse_elements(bytes(delayed), XTEST, XI_FIRST_EVENT) == ([], 0)


def test_made_by_matches_kind_time_and_keycode():
    fakes, _ = parse_elements(DEVICE_PATH_RETURN, XTEST, XI_FIRST_EVENT)
    time = 0x16CA1C
    assert made_by(fakes, KEY, time, 36)
    assert made_by(fakes, KEY, time + MATCH_MS, 36)
    assert not made_by(fakes, KEY, time + MATCH_MS + 1, 36)
    assert not made_by(fakes, KEY, time, 37)
    assert not made_by(fakes, InputKind.KEY_RELEASE, time, 36)


def test_recent_by_time_keeps_a_flood_and_drops_only_old_times():
    kept: RecentByTime[int] = RecentByTime(window_ms=10_000)
    kept.add(5000, -1)
    for n in range(20_000):  # a flood within 3 ms of it
        kept.add(5000 + n % 4, n)
    assert -1 in kept.near(5000)
    assert len(kept.near(5001, 1)) == 15_001  # (times 5000–5002: -1 and 3 × 5,000)
    for t in range(6000, 16_000, 10):  # ten seconds later, past the window
        kept.add(t, 0)
    kept.add(16_001, 0)
    assert kept.near(5000) == []
    assert kept.near(16_001) == [0]


def test_recent_by_time_starts_over_when_the_server_time_wraps():
    kept: RecentByTime[str] = RecentByTime()
    kept.add(2**32 - 5, "before")
    kept.add(3, "after")
    assert kept.near(3) == ["after"]
    assert kept.near(2**32 - 5) == []


def test_xtest_device_names():
    assert is_xtest_name("Virtual core XTEST keyboard")
    assert is_xtest_name("second XTEST pointer")
    assert not is_xtest_name("AT Translated Set 2 keyboard")
    assert not is_xtest_name("Xvfb keyboard")


def test_no_display_is_unavailable_but_not_missing():
    with pytest.raises(X11InputUnavailable) as caught:
        RawInputWatch.open(":9999")
    assert not caught.value.missing


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("xdotool") is None,
                    reason="needs Xvfb and xdotool (see .ci/run)")
def test_the_watch_on_a_real_x_server():
    with xvfb_display("800x600x24") as env:
        watch = RawInputWatch.open(env["DISPLAY"])
        try:
            devices = watch.devices()
            xtest = {d.name for d in devices.values() if d.xtest}
            assert xtest == {"Virtual core XTEST keyboard", "Virtual core XTEST pointer"}
            watch.start()
            subprocess.run(["xdotool", "key", "Return"], env=env, check=True, timeout=30)

            def pressed() -> RawInput | None:
                watch.read()
                return next((e for e in watch.recorded() if e.kind is KEY), None)

            press = wait_for(pressed, 10, "the raw key press")
            assert devices[press.source].name == "Virtual core XTEST keyboard"
            assert watch.origin(KEY, press.time, press.detail) is Origin.INJECTED
            assert watch.origin(KEY, press.time, press.detail + 1) is Origin.UNKNOWN
            watch.stop()
            assert watch.recorded() == []
            assert watch.origin(KEY, press.time, press.detail) is Origin.UNKNOWN
        finally:
            watch.close()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (see .ci/run)")
def test_the_connection_reports_refused_requests_and_a_closed_connection():
    """What the check's fail-closed paths rest on: a request the server refuses raises
    (with its error code) and leaves the connection usable; a closed one raises."""
    with xvfb_display("800x600x24") as env:
        conn = Connection.connect(env["DISPLAY"])
        try:
            assert conn.root and conn.setup.min_keycode == 8
            with pytest.raises(XcbError) as refused:  # KillClient of no client's resource
                conn.check(conn.send(113, 0, (0x1234567).to_bytes(4, "little"),
                                     checked=True))
            assert refused.value.code == 2  # BadValue
            assert not conn.has_error()
            assert conn.query_extension(b"XInputExtension").present
        finally:
            conn.disconnect()
        assert conn.has_error()
        with pytest.raises(XcbError):
            conn.call(GET_INPUT_FOCUS)
