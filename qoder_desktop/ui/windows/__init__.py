"""The app's windows and forms: main window, settings, new session, connect, confirmations."""
