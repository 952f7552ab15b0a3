"""Run-time assets shipped inside the wheel: the icons (PNG) and the stylesheet (QSS).

The icons are rendered from the SVG artwork in the repository's top-level ``resources/``
by ``tools/render_icons.py``; the app loads them through ``qoder_desktop.ui.icons``.
"""
