"""The environment variables shuffledp reads, each checked before any work: one line naming the
variable when its value is not one it understands (never read differently from what it says, never
ignored because this run happens not to need it).

==============================  =============================================================
``SHUFFLEDP_DEBUG``             ``1``/``true``/``yes``/``on``: tracebacks; ``0``/``false``/
                                ``no``/``off`` or empty: none
``SHUFFLEDP_DOWNLOAD_DEADLINE_S`` a positive number of seconds (checked even when a folder
                                mirror means nothing is downloaded)
``SHUFFLEDP_STAGE_PATH``        folders (``os.pathsep``-separated) that exist
``SHUFFLEDP_DATA_MIRROR``       a folder or a URL prefix, no control characters
``SHUFFLEDP_NUMBA``             ``1``/``true``/``yes``/``on``, unset or empty: compiled kernels (when
                                numba is installed); ``0``/``false``/``no``/``off``: numpy
                                (the same numbers either way)
``MPLBACKEND``                  ignored by shuffledp: its figures are always drawn with Agg
==============================  =============================================================

:func:`check_environment` is called by the CLI (every command) and by the workflow before any job.
Imports nothing heavy: the variables' names and the deadline's reading live here, and the modules
that use them (:mod:`shuffledp.datasets.download`, :mod:`shuffledp.stages`) import them from here,
so that checking the environment loads neither (nor pandas, which the download module's writes use).
"""

from __future__ import annotations

import math
import os

from shuffledp.errors import DataError, UsageError

DEBUG_ENV = "SHUFFLEDP_DEBUG"
MIRROR_ENV = "SHUFFLEDP_DATA_MIRROR"
STAGE_PATH_ENV = "SHUFFLEDP_STAGE_PATH"
DEADLINE_ENV = "SHUFFLEDP_DOWNLOAD_DEADLINE_S"
NUMBA_ENV = "SHUFFLEDP_NUMBA"
DEADLINE_S = 3600.0   # one download's total time, unless DEADLINE_ENV says otherwise
TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")


def debug_enabled() -> bool:
    """``SHUFFLEDP_DEBUG`` read as a switch (``0`` is off); another value is a :class:`UsageError`."""
    raw = os.environ.get(DEBUG_ENV, "")
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise UsageError(f"environment variable {DEBUG_ENV}={raw!r}: must be 1 (tracebacks) or 0 (none)")


def numba_enabled() -> bool:
    """``SHUFFLEDP_NUMBA`` read as a switch, on when unset; another value is a :class:`UsageError`."""
    raw = os.environ.get(NUMBA_ENV)
    value = "1" if raw is None or not raw.strip() else raw.strip().lower()  # unset or empty: the default
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise UsageError(f"environment variable {NUMBA_ENV}={raw!r}: must be 1 (compiled kernels) or 0 (numpy)")


def compiled_kernels(module: str, *names: str) -> tuple | None:
    """The functions ``names`` of the numba kernel module ``module``, or None when
    ``SHUFFLEDP_NUMBA`` is off or numba is not installed (the caller's numpy path then runs)."""
    if not numba_enabled():
        return None
    import importlib

    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    return tuple(getattr(mod, name) for name in names)


def download_deadline() -> float:
    """The total time one download may take, in seconds (``SHUFFLEDP_DOWNLOAD_DEADLINE_S`` or :data:`DEADLINE_S`)."""
    raw = os.environ.get(DEADLINE_ENV, "").strip()
    if not raw:
        return DEADLINE_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise DataError(f"environment variable {DEADLINE_ENV}={raw!r}: must be a positive number of seconds")
    return value


def check_stage_path() -> None:
    raw = os.environ.get(STAGE_PATH_ENV, "")
    for folder in (p for p in raw.split(os.pathsep) if p):
        if not os.path.isdir(folder):
            what = "not a folder" if os.path.exists(folder) else "no such folder"
            raise UsageError(f"environment variable {STAGE_PATH_ENV}: {folder}: {what}")


def check_mirror() -> None:
    raw = os.environ.get(MIRROR_ENV, "")
    if any(ord(c) < 0x20 for c in raw):
        raise UsageError(f"environment variable {MIRROR_ENV}={raw!r}: holds a control character")


def check_environment() -> None:
    """Every variable of the table above that is set holds a value shuffledp understands."""
    debug_enabled()
    numba_enabled()
    download_deadline()  # a DataError naming the variable
    check_stage_path()
    check_mirror()
