"""Agents on other machines: remote hosts reached over the person's own OpenSSH."""
