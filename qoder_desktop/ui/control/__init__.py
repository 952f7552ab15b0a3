"""The controllers behind the views: they turn the views' intents into core calls and
render what the core publishes. `ui/wiring.py` builds them and connects their signals."""
