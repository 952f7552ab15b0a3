"""Reaching Settings → Remote hosts in the app's real wiring, as a person does."""

from __future__ import annotations

from qoder_desktop.ui.windows.remote_hosts_page import RemoteHostsPage
from qoder_desktop.ui.wiring import DesktopApp


def open_remote_hosts_page(app: DesktopApp) -> RemoteHostsPage:
    """Open Settings and its Remote hosts tab; the page shown."""
    app.open_settings()
    dialog = app.settings_dialog
    assert dialog is not None
    page = dialog.remote_hosts_page
    dialog.ui.tabs.setCurrentWidget(page)
    return page
