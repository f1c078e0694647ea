"""The errors a user can cause, one class per kind.

Every class here derives from :class:`InputError` (a ``ValueError``): the CLI prints it on one
line naming the flag, key or file, and exits 2. An ``OSError`` (a file that cannot be read or
written) is treated the same way. Anything else raised inside ``shuffledp`` is a bug of ours: the
CLI reports it as an internal error and exits 1 (``--traceback`` or ``SHUFFLEDP_DEBUG=1`` shows
the traceback). This module imports nothing of the package, so every layer may use it.
"""

from __future__ import annotations


class InputError(ValueError):
    """Something the user gave is wrong; the message names it."""


class UsageError(InputError):
    """An invalid argument or input file of a command: the message names the flag or file."""


class ConfigError(InputError):
    """A configuration value that is missing, unknown, ill-typed or meaningless; names the key."""


class DomainError(InputError):
    """A well-formed value outside the documented domain of a computation (e.g. an accountant's)."""


class DataError(InputError):
    """A data file that is not what it must be: damaged, truncated, wrong checksum or content."""
