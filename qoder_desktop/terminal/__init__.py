"""Approvals for agents people start in a terminal or an editor (PermissionRequest hooks)."""
