"""Backend adapters: one per agent SDK, each only translating between that SDK and our models."""
