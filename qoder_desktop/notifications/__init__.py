"""Desktop notifications through the desktop's notification service (Qt-free).

`desktop.DesktopNotifications` adapts `desktop-notifier` (freedesktop
``org.freedesktop.Notifications`` over D-Bus on Linux, via ``dbus-fast``; the macOS and
Windows centres where that library supports them); `probe.probe_service` is the
self-check's look at the session bus.
"""
