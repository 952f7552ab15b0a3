"""The hook as the agent's CLI on the host runs it (the command `remote add` wrote into
its settings, run by the host's shell as the host's user): while no tunnel is there it
prints nothing and exits 0, so the CLI asks in its terminal."""

from __future__ import annotations

import json

from helpers.remote_desk import Desk

EVENT = {"hook_event_name": "PermissionRequest", "session_id": "s-remote", "cwd": "/tmp",
         "tool_name": "Bash", "tool_input": {"command": "rm -r build"}}


def _installed_command(desk: Desk) -> str:
    settings = desk.host.user.home / ".claude" / "settings.json"
    groups = json.loads(settings.read_text())["hooks"]["PermissionRequest"]
    return str(groups[0]["hooks"][0]["command"])


def test_without_a_tunnel_the_remote_hook_prints_nothing(desk: Desk) -> None:
    assert desk.remote("add", desk.host.alias) == 0

    result = desk.host.run(_installed_command(desk), input=json.dumps(EVENT))

    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_with_a_stale_socket_the_remote_hook_prints_nothing(desk: Desk) -> None:
    assert desk.remote("add", desk.host.alias) == 0
    socket = desk.host.user.home / ".qoder-desktop" / "desk.sock"
    made = desk.host.run("python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); "
                         f"s.bind(sys.argv[1]); s.close()' {socket}")
    assert made.returncode == 0, made.stderr

    result = desk.host.run(_installed_command(desk), input=json.dumps(EVENT))

    assert socket.is_socket()
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
