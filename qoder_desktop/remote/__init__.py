"""Agents on other machines: hosts reached with the system ``ssh`` (Qt-free).

`hosts` keeps the list of hosts and their tokens (keyring), `deploy` puts the standalone
hook on a host and its ``PermissionRequest`` entry in the agents' settings there, `ssh`
runs the person's own ``ssh``, `commands` is ``qoder-desktop remote``.
"""
