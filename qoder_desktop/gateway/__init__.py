"""The approval gateway: an MCP tool for agents started elsewhere."""
