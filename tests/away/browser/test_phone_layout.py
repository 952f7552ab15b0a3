"""The phone page as a thumb meets it, in Chromium in a Pixel 7 viewport: big buttons
apart from each other, "Deny and stop" unlike "Deny", nothing wider than the screen, a
question asked once, and a card too large for the phone that still reads well."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from helpers.away_browser import (
    AwayDesk,
    bash,
    launch_phone_browser,
    pair_phone,
    session_suggestion,
)
from helpers.phone_browser import BrowserThread, PhonePage

from .test_phone_page import question

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

MIN_TARGET_PX = 44
"""The smallest touch target (Apple's 44 pt; Android asks 48 dp, which the page gives)."""
MIN_GAP_PX = 8
"""The least space between two buttons, so a thumb does not land on the neighbour."""


async def paired(chromium: BrowserThread, desk: AwayDesk) -> PhonePage:
    """The browser trusting the desk, and one phone paired with it."""
    await launch_phone_browser(chromium, desk)
    phone = await chromium.new_phone()
    await pair_phone(desk, phone)
    return phone


def button_boxes(card: Any) -> list[dict[str, float]]:
    """The boxes of the card's visible buttons, top to bottom (once the card is shown:
    the request reaches the page a moment after the desk has it)."""
    card.get_by_role("button").first.wait_for(state="visible")
    boxes = [button.bounding_box() for button in card.get_by_role("button").all()
             if button.is_visible()]
    return sorted((box for box in boxes if box), key=lambda box: box["y"])


async def test_buttons_are_large_and_apart_and_deny_and_stop_stands_out(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    phone = await paired(chromium, desk)
    request = await desk.ask(bash("git push --force",
                                  suggestions=(session_suggestion("Bash(git push:*)"),)))
    boxes = await phone.card(request.request_id, button_boxes)
    assert len(boxes) == 4  # allow once, for this session…, deny, deny and stop
    for box in boxes:
        assert box["height"] >= MIN_TARGET_PX
    for upper, lower in pairwise(boxes):
        assert lower["y"] - (upper["y"] + upper["height"]) >= MIN_GAP_PX
    looks = await phone.card(request.request_id, lambda card: card.evaluate("""(card) => {
        const look = (name) => {
            const button = [...card.querySelectorAll('button')]
                .find((b) => b.textContent === name);
            const style = getComputedStyle(button);
            return [style.backgroundColor, style.color, style.borderTopWidth];
        };
        return {deny: look('Deny'), stop: look('Deny and stop')};
    }"""))
    assert looks["deny"] != looks["stop"]


async def test_nothing_is_wider_than_the_phone(chromium: BrowserThread, desk: AwayDesk) -> None:
    phone = await paired(chromium, desk)
    # (a finding names the path outside the workspace: one long word)
    request = await desk.ask(bash("npm run build -- --config /home/someone/" + "a" * 300))
    await phone.card(request.request_id, lambda card: card.wait_for())
    widths = await phone.js("() => [document.documentElement.scrollWidth, innerWidth]")
    wide = await phone.js("""() => [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > innerWidth)
        .map((e) => e.tagName + '.' + e.className + ' ' + e.textContent.slice(0, 60))""")
    assert widths[0] <= widths[1], wide


async def test_a_question_card_asks_its_question_once(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    phone = await paired(chromium, desk)
    request = await desk.ask(question())
    text = await phone.card(request.request_id, lambda card: card.inner_text())
    assert text.count("Which database?") == 1


async def test_a_card_too_large_for_the_phone_says_what_is_left_to_do_here(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    phone = await paired(chromium, desk)
    huge = await desk.ask(bash("echo " + "x" * 70_000))
    text = await phone.card(huge.request_id, lambda card: card.inner_text())
    assert "Too large — answer at the desk" in text
    assert "you can still deny it here" in text
    # Nothing to allow above it, so no divider sits above the deny group.
    border = await phone.card(huge.request_id, lambda card: card.locator(
        ".group.deny").evaluate("(group) => getComputedStyle(group).borderTopWidth"))
    assert border == "0px"
