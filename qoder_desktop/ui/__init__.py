"""Qt views: windows, dialogs, the tray and the bridge between broker events and Qt signals.

Nothing below this package is imported by the Qt-free core.
"""
