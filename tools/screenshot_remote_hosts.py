"""Render Settings → Remote hosts for the README (docs/remote-hosts.png).

Run it on a display (``xvfb-run -a python tools/screenshot_remote_hosts.py OUT.png``): it
opens the settings dialog with the app's stylesheet, on its Remote hosts tab, showing two
hosts as checks report them in the running app: one ready with its tunnel connected, one
whose ssh server refuses connections.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main(out: str) -> int:
    """Save the screenshot to `out`."""
    os.environ.pop("QODER_DESKTOP_HOME", None)
    os.environ["XDG_RUNTIME_DIR"] = "/run/user/1000"  # the desk sockets' usual folder
    from PySide6.QtWidgets import QApplication

    from qoder_desktop.config.settings import Settings
    from qoder_desktop.remote.deploy import HostProbe
    from qoder_desktop.remote.hook_file import hook_version
    from qoder_desktop.remote.hosts import RemoteHost
    from qoder_desktop.remote.overview import (
        HostCheck,
        forward_in_use,
        forward_line,
        remembered_hook,
    )
    from qoder_desktop.ui import icons
    from qoder_desktop.ui.windows.remote_hosts_page import HostRow
    from qoder_desktop.ui.windows.settings_dialog import SettingsDialog

    app = QApplication(sys.argv[:1])
    app.setStyleSheet(icons.stylesheet())
    dialog = SettingsDialog(Settings())
    dialog.resize(640, 720)
    page = dialog.remote_hosts_page
    dialog.ui.tabs.setCurrentWidget(page)
    dialog.show()
    version = hook_version()
    devbox = RemoteHost("devbox", home="/home/ana", python="/usr/bin/python3",
                        hook_version=version, agents=["claude", "qoder"])
    pi = RemoteHost("ana@pi.lan", home="/home/ana", python="/usr/bin/python3",
                    hook_version=version, agents=["claude"], added="2026-11-30T09:12:00+00:00")
    tunnels = {devbox.name: "connected",
               pi.name: "reconnecting — host unreachable (connection refused)"}
    page.show_hosts([HostRow(host.name, host.python, remembered_hook(host), forward_line(host),
                             forward_in_use(tunnels[host.name])) for host in (devbox, pi)])
    found = HostProbe("/home/ana", "/usr/local/bin:/usr/bin:/bin", "/usr/bin/python3",
                      (3, 11, 2), {"claude": "/home/ana/.local/bin/claude",
                                   "qodercli": "/usr/local/bin/qodercli"})
    agents = {name: {"path": f"/home/ana/.{name}/settings.json", "installed": True,
                     "current": True} for name in ("claude", "qoder")}
    page.show_check(HostCheck(devbox, True, "", found,
                              {"folder": "/home/ana/.qoder-desktop", "hook": version,
                               "token": True, "agents": agents}, tunnels[devbox.name]))
    page.show_check(HostCheck(pi, False, "ssh: connect to host pi.lan port 22: Connection "
                              "refused", tunnel=tunnels[pi.name]))
    for _ in range(20):
        app.processEvents()
    dialog.grab().save(out)
    print(Path(out).resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "remote-hosts.png"))
