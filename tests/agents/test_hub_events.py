"""The hub's fan-out of its events (`agents.hub_events.HubSubscribers`)."""

from __future__ import annotations

import logging

import pytest

from qoder_desktop.agents.hub_events import HubEvent, HubEventKind, HubSubscribers


def test_every_subscriber_hears_each_event_even_when_one_fails(
        caplog: pytest.LogCaptureFixture) -> None:
    subscribers = HubSubscribers()
    heard: list[tuple[str, str]] = []

    def failing(_event: HubEvent) -> None:
        raise RuntimeError("a broken view")

    subscribers.subscribe(lambda event: heard.append(("first", event.session_id)))
    subscribers.subscribe(failing)
    subscribers.subscribe(lambda event: heard.append(("last", event.session_id)))
    with caplog.at_level(logging.ERROR):
        subscribers.publish(HubEvent(HubEventKind.NOTICE, "s1", text="hello"))
    assert heard == [("first", "s1"), ("last", "s1")]
    assert "a hub subscriber failed on notice" in caplog.text


def test_an_unsubscribed_subscriber_hears_nothing_more() -> None:
    subscribers = HubSubscribers()
    heard: list[str] = []
    unsubscribe = subscribers.subscribe(lambda event: heard.append(event.session_id))
    subscribers.publish(HubEvent(HubEventKind.SESSION, "s1"))
    unsubscribe()
    subscribers.publish(HubEvent(HubEventKind.SESSION, "s2"))
    assert heard == ["s1"]
