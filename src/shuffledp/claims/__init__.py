"""Claims of the four papers, decided on measured tables: one model (:mod:`.core`) and one module per
paper (:mod:`.segmented`, :mod:`.personalized`, :mod:`.multidim`, :mod:`.peruser`).

A verdict is ``held``, ``not held`` or ``not testable at this scale`` (never ``held`` when the data
could not have shown otherwise); column ``data`` says real / synthetic / stand-in and ``evidence``
is False for verdicts on stand-in data. The experiments modules' ``claims`` functions forward here.
"""

from shuffledp.claims.core import (
    HELD,
    NOT_HELD,
    NOT_TESTABLE,
    REAL,
    STANDIN,
    SYNTHETIC,
    VERDICTS,
    Claim,
    counts,
    decide,
    frame,
    markdown,
)

__all__ = ["HELD", "NOT_HELD", "NOT_TESTABLE", "REAL", "STANDIN", "SYNTHETIC", "VERDICTS", "Claim", "counts",
           "decide", "frame", "markdown"]
