"""The errors a user can cause, one class per kind; the CLI prints each on one line and exits 2.

Anything else raised inside ``shuffledp`` is a bug of ours and is reported as an internal error
(exit 1). This module imports nothing of the package, so every layer may use it.
"""

from __future__ import annotations


class UsageError(ValueError):
    """An invalid argument or input file of a command: the message names the flag or file."""


class ConfigError(ValueError):
    """A configuration value that is missing, unknown, ill-typed or meaningless; names the key."""
