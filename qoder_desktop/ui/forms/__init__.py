"""Modules generated from the Designer forms in ui/ by tools/compile_ui.py; do not edit."""
