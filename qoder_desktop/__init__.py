"""Qoder Desktop: a desktop approval companion for local AI agents."""

__version__ = "0.1.0"
