"""Private helpers shared by the package's modules (no public API)."""
