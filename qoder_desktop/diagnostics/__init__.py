"""What helps when something does not work: the self-check and memory upkeep."""
