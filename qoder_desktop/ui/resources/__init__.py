"""Run-time assets shipped inside the wheel: icons (SVG) and the stylesheet (QSS).

The source artwork lives in the repository's top-level ``resources/``; the copies here
are the ones the app loads (through ``qoder_desktop.ui.icons``).
"""
