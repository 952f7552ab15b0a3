"""Qt views: windows, dialogs, the tray and the bridge between broker events and Qt signals.

Nothing below this package is imported by the Qt-free core. Importing it changes nothing
in other libraries: the GUI process makes its imports lean explicitly, at the entry
point and after the first frame (`ui.lean_imports`).
"""
