"""Desktop notifications through the desktop's notification service (Qt-free).

`desktop.open_service` picks the backend: on Linux `freedesktop.FreedesktopNotifications`
(``org.freedesktop.Notifications`` over D-Bus through jeepney, `session_bus`, answering only from
the server that showed a notification), elsewhere `desktop.DesktopNotifications` through
`desktop-notifier` (the macOS and Windows centres where that library supports them);
`probe.probe_service` is the self-check's look at the session bus.
"""
