"""Benchmarks for Qoder Desktop: run ``python -m benchmarks`` (see benchmarks/README.md)."""
