"""Phone sockets end to end over real TLS: pairing, answers reaching the broker as the
desk's Decisions with the device, and every refusal (replays, tampering, unpaired keys,
revoked devices, inputs too large to show, slow or surplus sockets) allowing nothing."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from helpers.away_rig import AwayRig, away_rig, pair, phone_socket
from helpers.broker_events import SESSION
from helpers.loop import settle
from helpers.phone import Phone

from qoder_desktop.approval.broker import AlreadyAnswered
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionMode,
)
from qoder_desktop.store.database import Database

QUESTION = {"questions": [{"question": "Which database?", "header": "DB", "options": [
    {"label": "SQLite", "description": "a file"}, {"label": "Postgres"}]}]}


def still_waiting(rig: AwayRig, call: asyncio.Task[Decision]) -> bool:
    """The request is still waiting for a person: nothing answered it."""
    return not call.done() and len(rig.broker.approvals()) >= 1


@pytest.mark.asyncio
async def test_pairing_end_to_end_and_a_paired_phone_allows(rig: AwayRig) -> None:
    phone = Phone()
    device = await pair(rig, phone)  # the same code on both screens, confirmed at the desk
    assert rig.devices.get(device.device_id) is not None
    call = rig.ask("npm test")
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        assert request["summary"] == "npm test" and request["kind"] == "tool"
        result = await client.answer(request, "allow")
        assert result == {"type": "result", "id": request["id"], "ok": True, "reason": ""}
    decision = await asyncio.wait_for(call, 10)
    assert decision.kind is DecisionKind.ALLOW_ONCE
    assert (decision.decided_by, decision.device) == (DecidedBy.USER, device.label)
    assert rig.devices.get(device.device_id).last_used_at is not None
    [entry] = rig.ledger.entries(SESSION, include_tool_events=False)
    assert (entry.outcome, entry.device) == (DecisionKind.ALLOW_ONCE, device.label)


@pytest.mark.asyncio
async def test_a_pairing_the_desk_refuses_trusts_nothing(rig: AwayRig) -> None:
    phone = Phone()
    offer = rig.mode.pairings.offer(rig.origin)
    async with rig.http() as http:
        claim = (await http.post("/api/pair", json={
            "token": offer.token, "public_key": phone.public_key, "name": "Thief"},
            headers={"Origin": rig.origin})).json()
        again = await http.post("/api/pair", json={
            "token": offer.token, "public_key": Phone().public_key, "name": "Pixel"},
            headers={"Origin": rig.origin})
    assert again.status_code == 403  # the token was used by the first claim
    async with phone_socket(rig, phone) as client:
        await client.hello()
        await client.send(phone.auth(client.challenge, device_id=claim["pairing_id"]))
        assert (await client.receive())["state"] == "waiting"
        rig.mode.pairings.refuse(claim["pairing_id"])
        assert await client.receive() == {"type": "pairing", "state": "refused"}
        assert await client.closed_with() == 4403
    assert rig.devices.devices() == []


@pytest.mark.asyncio
@pytest.mark.parametrize("decision, content, kind, message", [
    ("deny", {"message": "not now"}, DecisionKind.DENY, "not now"),
    ("deny", {}, DecisionKind.DENY, "Denied from the phone"),
    ("deny_stop", {"message": "stop it"}, DecisionKind.DENY_INTERRUPT, "stop it"),
])
async def test_denials_reach_the_agent(rig: AwayRig, decision: str, content: dict[str, str],
                                       kind: DecisionKind, message: str) -> None:
    phone = Phone()
    device = await pair(rig, phone)
    call = rig.ask("rm -rf /")
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        assert (await client.answer(request, decision, content))["ok"]
    answered = await asyncio.wait_for(call, 10)
    assert (answered.kind, answered.message, answered.device) == (kind, message, device.label)


@pytest.mark.asyncio
async def test_a_question_is_answered_from_the_phone(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    call = rig.ask_request(ApprovalRequest(session_id=SESSION, backend=Backend.CLAUDE,
                                           tool_name="AskUserQuestion", tool_input=QUESTION))
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        assert request["kind"] == "question"
        assert [o["label"] for o in request["questions"][0]["options"]] == ["SQLite",
                                                                            "Postgres"]
        result = await client.answer(request, "answer",
                                     {"answers": {"Which database?": ["Postgres"]}})
        assert result["ok"], result
    decision = await asyncio.wait_for(call, 10)
    assert decision.kind is DecisionKind.ALLOW_ONCE
    assert decision.final_input["answers"] == {"Which database?": "Postgres"}


@pytest.mark.asyncio
async def test_a_plan_is_approved_in_default_mode_or_sent_back(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    plan = {"plan": "# Plan: add a cache"}
    approve = rig.ask_request(ApprovalRequest(session_id=SESSION, backend=Backend.CLAUDE,
                                              tool_name="ExitPlanMode", tool_input=plan))
    back = rig.ask_request(ApprovalRequest(session_id=SESSION, backend=Backend.CLAUDE,
                                           tool_name="ExitPlanMode", tool_input=plan))
    async with phone_socket(rig, phone) as client:
        requests = {r["id"]: r for r in await client.sign_in()}
        await settle(lambda: len(rig.broker.approvals()) == 2)
        first, second = (rig.broker.approvals()[0].request_id,
                         rig.broker.approvals()[1].request_id)
        if len(requests) < 2:
            requests[second] = (await client.receive_type("added"))["request"]
        assert (await client.answer(requests[first], "approve_plan"))["ok"]
        assert (await client.answer(requests[second], "keep_planning",
                                    {"message": "smaller"}))["ok"]
    approved, sent_back = await asyncio.gather(approve, back)
    assert approved.kind is DecisionKind.ALLOW_ONCE
    assert approved.next_mode is PermissionMode.DEFAULT
    assert (sent_back.kind, sent_back.message) == (DecisionKind.KEEP_PLANNING, "smaller")


@pytest.mark.asyncio
async def test_a_new_request_is_added_to_a_connected_phone(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    async with phone_socket(rig, phone) as client:
        assert await client.sign_in() == []
        call = rig.ask("make build")
        added = await client.receive_type("added")
        assert added["request"]["summary"] == "make build" and added["request"]["nonce"]
        assert (await client.answer(added["request"], "deny"))["ok"]
    assert (await asyncio.wait_for(call, 10)).kind is DecisionKind.DENY


@pytest.mark.asyncio
async def test_a_replayed_signed_answer_is_refused(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    call = rig.ask("npm test")
    async with phone_socket(rig, phone) as first, phone_socket(rig, phone) as second:
        [seen_first] = await first.sign_in()
        [seen_second] = await second.sign_in()
        signed = phone.answer(seen_first["id"], seen_first["nonce"], "deny")
        # The same signed answer on another connection: that connection's nonce differs.
        await second.send(signed)
        assert (await second.receive_type("result"))["reason"] == "stale nonce"
        assert still_waiting(rig, call)
        await first.send(signed)
        assert (await first.receive_type("result"))["ok"]
        await first.send(signed)  # a replay after the answer
        assert (await first.receive_type("result"))["reason"] == "already answered"
        assert seen_second["nonce"] != seen_first["nonce"]
    assert (await asyncio.wait_for(call, 10)).kind is DecisionKind.DENY


@pytest.mark.asyncio
async def test_a_tampered_answer_is_refused_and_shown(rig: AwayRig) -> None:
    phone = Phone()
    device = await pair(rig, phone)
    call = rig.ask("rm -rf /")
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        signed = phone.answer(request["id"], request["nonce"], "deny")
        signed["payload"] = signed["payload"].replace('"deny"', '"allow"')
        await client.send(signed)
        result = await client.receive_type("result")
        assert (result["ok"], result["reason"]) == (False, "bad signature")
    assert still_waiting(rig, call)
    [refused] = rig.mode.refused()
    # (what an unverified payload says is never believed, not even its request id)
    assert (refused.device, refused.request_id, refused.reason) == (
        device.label, None, "bad signature")
    assert rig.mode.status.refused == 1
    rig.broker.answer(request["id"], Decision.deny("done"))


@pytest.mark.asyncio
async def test_an_unpaired_key_is_refused(rig: AwayRig) -> None:
    paired = Phone()
    device = await pair(rig, paired)
    call = rig.ask("npm test")
    stranger = Phone(device_id="never-paired")
    async with phone_socket(rig, stranger) as client:
        await client.hello()
        await client.send(stranger.auth(client.challenge))
        assert await client.receive() == {"type": "refused", "reason": "unknown device"}
        assert await client.closed_with() == 4401
    impostor = Phone(device_id=device.device_id)  # a paired id, another key
    async with phone_socket(rig, impostor) as client:
        await client.hello()
        await client.send(impostor.auth(client.challenge))
        assert await client.receive() == {"type": "refused", "reason": "bad signature"}
        assert await client.closed_with() == 4401
    assert still_waiting(rig, call)
    assert [r.reason for r in rig.mode.refused()] == ["unknown device", "bad signature"]
    rig.broker.answer(rig.broker.approvals()[0].request_id, Decision.deny("done"))


@pytest.mark.asyncio
async def test_a_revoked_device_is_closed_and_refused(rig: AwayRig) -> None:
    phone = Phone()
    device = await pair(rig, phone)
    call = rig.ask("npm test")
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        signed = phone.answer(request["id"], request["nonce"], "allow")
        await settle(lambda: rig.mode.status.phones == 1)
        await rig.devices.revoke(device.device_id)
        assert await client.receive_type("revoked") == {"type": "revoked"}
        assert await client.closed_with() == 4403
    assert rig.mode.status.phones == 0
    async with phone_socket(rig, phone) as client:
        await client.hello()
        await client.send(phone.auth(client.challenge))
        assert await client.receive() == {"type": "refused", "reason": "revoked"}
        assert await client.closed_with() == 4403
    assert still_waiting(rig, call)
    assert "revoked" in [r.reason for r in rig.mode.refused()]
    assert signed  # (its answer never reached the desk)
    rig.broker.answer(request["id"], Decision.deny("done"))


@pytest.mark.asyncio
async def test_the_first_answer_wins_between_desk_and_phone(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    desk_first, phone_first = rig.ask("one"), rig.ask("two")
    async with phone_socket(rig, phone) as client:
        requests = {r["summary"]: r for r in await client.sign_in()}
        rig.broker.answer(requests["one"]["id"], Decision.deny("the desk said no"))
        gone = await client.receive_type("gone")
        assert gone == {"type": "gone", "id": requests["one"]["id"], "why": "answered",
                        "by": "the desk"}
        result = await client.answer(requests["one"], "allow")
        assert (result["ok"], result["reason"]) == (False, "already answered")
        assert (await client.answer(requests["two"], "deny"))["ok"]
        with pytest.raises(AlreadyAnswered):
            rig.broker.answer(requests["two"]["id"], Decision.allow_once({}))
    assert (await desk_first).kind is DecisionKind.DENY
    assert (await phone_first).kind is DecisionKind.DENY


@pytest.mark.asyncio
async def test_a_withdrawn_request_is_gone_from_every_phone(rig: AwayRig) -> None:
    one, two = Phone(name="one"), Phone(name="two")
    await pair(rig, one)
    await pair(rig, two)
    call = rig.ask("sleep 100")
    async with phone_socket(rig, one) as first, phone_socket(rig, two) as second:
        [request] = await first.sign_in()
        await second.sign_in()
        call.cancel()
        for client in (first, second):
            gone = await client.receive_type("gone")
            assert (gone["id"], gone["why"]) == (request["id"], "withdrawn")
        result = await first.answer(request, "allow")
        assert result["reason"] == "already answered"
    with pytest.raises(asyncio.CancelledError):
        await call


@pytest.mark.asyncio
async def test_a_too_large_input_offers_and_takes_no_allow(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    call = rig.ask("echo " + "x" * 70_000)
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        assert request["too_large"] is True and request["input"] is None
        assert request["suggestions"] == []
        result = await client.answer(request, "allow")
        assert (result["ok"], result["reason"]) == (False, "invalid")
        assert still_waiting(rig, call)
        again = (await client.receive_type("updated"))["request"]  # a fresh nonce
        assert (await client.answer(again, "deny"))["ok"]
    assert (await asyncio.wait_for(call, 10)).kind is DecisionKind.DENY


@pytest.mark.asyncio
async def test_a_message_off_the_protocol_changes_nothing(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    call = rig.ask("npm test")
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        await client.connection.send("not json")
        await client.send({"type": "answer", "payload": json.dumps(["x"]), "signature": "a"})
        result = await client.receive_type("result")
        assert result["ok"] is False
    assert still_waiting(rig, call)
    rig.broker.answer(request["id"], Decision.deny("done"))


@pytest.mark.asyncio
async def test_a_socket_that_does_not_sign_in_in_time_is_closed(db: Database,
                                                                tmp_path: Path) -> None:
    async with away_rig(db, tmp_path, auth_deadline_s=0.2) as rig, \
            phone_socket(rig, Phone()) as client:
        await client.hello()
        assert await client.receive() == {"type": "refused", "reason": "too slow"}
        assert await client.closed_with() == 4401


@pytest.mark.asyncio
async def test_phones_beyond_the_cap_are_turned_away(db: Database, tmp_path: Path) -> None:
    async with away_rig(db, tmp_path, max_phones=1) as rig:
        phone = Phone()
        await pair(rig, phone)
        async with phone_socket(rig, phone) as first:
            await first.sign_in()
            async with phone_socket(rig, phone) as second:
                assert await second.closed_with() == 1013
            assert rig.mode.status.phones == 1




@pytest.mark.asyncio
async def test_a_tampered_device_record_is_refused_and_shown(rig: AwayRig, db: Database) -> None:
    phone = Phone()
    device = await pair(rig, phone)
    db.flush()
    with sqlite3.connect(db.path) as conn:  # what the agent, as the same user, could do
        conn.execute("UPDATE devices SET name = 'Trusted' WHERE device_id = ?",
                     (device.device_id,))
    await rig.devices.load()  # (as after a restart)
    async with phone_socket(rig, phone) as client:
        await client.hello()
        await client.send(phone.auth(client.challenge))
        assert await client.receive() == {"type": "refused", "reason": "unknown device"}
        assert await client.closed_with() == 4401
    [refused] = rig.mode.refused()
    assert refused.device == "a device whose stored record was tampered with"
