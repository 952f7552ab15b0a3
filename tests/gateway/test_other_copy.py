"""Another Qoder Desktop of this user (another data folder, another token) on our port.

It is named, with its data folder, instead of being called a squatter; a squatter that
claims to be such a copy (forged, relayed or replayed answers) is still a squatter, and
nothing about a data folder goes over the wire.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest
from helpers.app_side import app_side

from qoder_desktop.gateway.identity import PortHolder, identify, instance_proof
from qoder_desktop.gateway.instances import InstanceRegistry
from qoder_desktop.gateway.server import (
    ApprovalGateway,
    GatewayPortHeldByCopy,
    GatewayPortInUse,
    GatewayPortSquatted,
)
from qoder_desktop.store.database import Database

pytestmark = pytest.mark.asyncio

TOKEN_A = "copy-a-gateway-token-0123456789abcdef"
TOKEN_B = "copy-b-gateway-token-0123456789abcdef"


def gateway(db: Database, port: int, token: str, folder: Path | None = None,
            registry: InstanceRegistry | None = None) -> ApprovalGateway:
    """A gateway on `port` with its own broker and hub on `db`."""
    _ledger, broker, hub = app_side(db)
    return ApprovalGateway(broker, hub, token, port=port, data_folder=folder,
                           registry=registry)


async def test_another_copy_is_named_with_its_data_folder(db: Database, tmp_path: Path) -> None:
    registry = InstanceRegistry(tmp_path / "gateways")
    first = gateway(db, 0, TOKEN_A, tmp_path / "copy-a", registry)
    await first.start()
    try:
        record = registry.folder / f"{first.port}.json"
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
        assert stat.S_IMODE(registry.folder.stat().st_mode) == 0o700
        with pytest.raises(GatewayPortHeldByCopy) as raised:
            await gateway(db, first.port, TOKEN_B, tmp_path / "copy-b", registry).start()
        message = str(raised.value)
        assert f"Another Qoder Desktop, with data folder {tmp_path / 'copy-a'}" in message
        assert f"127.0.0.1:{first.port}" in message and "another gateway port" in message
        assert not isinstance(raised.value, GatewayPortSquatted)  # no token rotation
        assert isinstance(raised.value, GatewayPortInUse)
        # The second copy's start left the first copy's record alone.
        assert registry.lookup(first.port) is not None
    finally:
        await first.stop()
    assert not record.exists()  # a stopped gateway takes its record away


async def test_the_answer_carries_no_data_folder_and_no_token(db: Database,
                                                              tmp_path: Path) -> None:
    registry = InstanceRegistry(tmp_path / "gateways")
    folder = tmp_path / "secret-looking-folder-name"
    first = gateway(db, 0, TOKEN_A, folder, registry)
    await first.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", first.port)
        writer.write(f"GET /qoder-desktop/identity?nonce={'ab' * 16} HTTP/1.1\r\n"
                     f"Host: 127.0.0.1:{first.port}\r\nConnection: close\r\n\r\n".encode())
        raw = await reader.read()
        writer.close()
    finally:
        await first.stop()
    body = json.loads(raw.partition(b"\r\n\r\n")[2])
    assert set(body) == {"server", "proof", "instance"}
    assert b"secret-looking" not in raw and TOKEN_A.encode() not in raw
    assert str(tmp_path).encode() not in raw


async def test_a_copy_without_a_record_is_not_trusted(db: Database, tmp_path: Path) -> None:
    first = gateway(db, 0, TOKEN_A)  # records nothing
    await first.start()
    try:
        registry = InstanceRegistry(tmp_path / "gateways")
        owner = await identify("127.0.0.1", first.port, TOKEN_B, registry)
        assert owner.holder is PortHolder.OTHER
        with pytest.raises(GatewayPortSquatted):
            await gateway(db, first.port, TOKEN_B, tmp_path / "b", registry).start()
    finally:
        await first.stop()


async def test_a_squatter_cannot_pass_for_a_copy(db: Database, tmp_path: Path) -> None:
    """A stale record (its copy crashed) and a squatter that forges, replays or relays."""
    registry = InstanceRegistry(tmp_path / "gateways")
    real = gateway(db, 0, TOKEN_A, tmp_path / "copy-a", registry)
    await real.start()
    received = bytearray()
    replies: list[bytes] = []
    relayed: list[bytes] = []

    async def squat(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.extend(await reader.read(65536))
        if replies:
            writer.write(replies.pop(0))
        else:  # relay the asker's challenge to the real copy on its own port
            upstream_reader, upstream = await asyncio.open_connection("127.0.0.1", real.port)
            upstream.write(bytes(received))
            relayed.append(await upstream_reader.read())
            writer.write(relayed[-1])
            upstream.close()
        await writer.drain()
        writer.close()

    squatter = await asyncio.start_server(squat, "127.0.0.1", 0)
    port = squatter.sockets[0].getsockname()[1]
    try:
        # A record for the squatted port, left behind by a copy that is gone.
        registry.register(port, tmp_path / "crashed-copy", "f" * 64)
        body = json.dumps({"server": "qoder-desktop", "proof": "00",
                           "instance": instance_proof("0" * 64, "ab" * 16)}).encode()
        replies.append(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        owner = await identify("127.0.0.1", port, TOKEN_B, registry)
        assert owner.holder is PortHolder.OTHER and owner.data_folder is None
        received.clear()
        owner = await identify("127.0.0.1", port, TOKEN_B, registry)  # relayed
        assert owner.holder is PortHolder.OTHER and owner.data_folder is None
        assert b'"instance"' in relayed[0]  # the real copy did answer the relayed nonce
        with pytest.raises(GatewayPortSquatted):
            await gateway(db, port, TOKEN_B, tmp_path / "copy-b", registry).start()
    finally:
        squatter.close()
        await squatter.wait_closed()
        await real.stop()


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
async def test_a_record_others_could_write_is_ignored(db: Database, tmp_path: Path) -> None:
    registry = InstanceRegistry(tmp_path / "gateways")
    first = gateway(db, 0, TOKEN_A, tmp_path / "copy-a", registry)
    await first.start()
    try:
        assert (await identify("127.0.0.1", first.port, TOKEN_B, registry)).data_folder
        os.chmod(registry.folder / f"{first.port}.json", 0o622)
        owner = await identify("127.0.0.1", first.port, TOKEN_B, registry)
        assert owner.holder is PortHolder.OTHER
        os.chmod(registry.folder / f"{first.port}.json", 0o600)
        os.chmod(registry.folder, 0o777)
        owner = await identify("127.0.0.1", first.port, TOKEN_B, registry)
        assert owner.holder is PortHolder.OTHER
        os.chmod(registry.folder, 0o700)
        # With our own token it is us, and the record names the folder too.
        owner = await identify("127.0.0.1", first.port, TOKEN_A, registry)
        assert owner.holder is PortHolder.US and owner.data_folder == str(tmp_path / "copy-a")
    finally:
        await first.stop()
