"""Agent sessions: one adapter per SDK, the session hub and its factory."""
