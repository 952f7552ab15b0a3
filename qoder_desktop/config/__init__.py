"""Where the user's things live: folders, settings and secrets (keyring)."""
