"""CLI command modules, discovered by :mod:`shuffledp.cli` (one module, one group of commands)."""
