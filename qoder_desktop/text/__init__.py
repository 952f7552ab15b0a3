"""Text policies shared by every view: hidden characters made visible."""
