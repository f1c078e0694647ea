"""Public codings: what a randomizer sees of one raw record is a function of that record and public
parameters only.

Every shuffle accountant of the project certifies a guarantee per record of the CODED table. That
guarantee carries over to the raw records only when coding one raw record never moves another
record's code, so no edge, code list or domain here is computed from the data: each ordinal attribute
is cut at fixed edges built from a public range (:class:`Bins`: the data dictionary's range, or a
public cap with clipping), each categorical attribute is looked up in its documented code list. The
parameters live in the config (``datasets.adult.coding``, ``multidim_frameworks.loan.coding``), go into
every processed table's provenance (:meth:`Bins.describe`), and can be used by an audit to code
neighbouring raw datasets (:func:`code_adult`, :func:`code_adult_ordinal`, :func:`code_loan`,
:func:`code_record`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shuffledp.datasets.adult_schema import ATTRIBUTES, CATEGORIES, COLUMNS

SCALES = ("int", "linear", "log", "log1p")


@dataclass(frozen=True)
class Bins:
    """Fixed bins of one ordinal attribute.

    ``scale``: ``int`` (one code per integer ``lo..hi``), or ``bins`` equal-width bins of ``[lo, hi]`` on a
    ``linear``, ``log`` (``lo > 0``) or ``log1p`` scale. Values below ``lo`` / above ``hi`` are clipped into
    the first / last bin (a public top/bottom code). ``missing``: a missing value (NaN) gets its own code
    0 and the values codes ``1..``; otherwise a missing value is an error.
    """

    scale: str
    lo: float
    hi: float
    bins: int | None = None
    missing: bool = False

    def __post_init__(self):
        if self.scale not in SCALES:
            raise ValueError(f"coding: scale must be one of {', '.join(SCALES)}, got {self.scale!r}")
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.hi > self.lo):
            raise ValueError(f"coding: need finite lo < hi, got lo={self.lo}, hi={self.hi}")
        if self.scale == "int":
            if self.lo != int(self.lo) or self.hi != int(self.hi):
                raise ValueError(f"coding: an int range needs integer lo, hi, got {self.lo}, {self.hi}")
        elif self.bins is None or self.bins < 1:
            raise ValueError(f"coding: scale {self.scale} needs bins >= 1, got {self.bins}")
        if self.scale == "log" and self.lo <= 0:
            raise ValueError(f"coding: scale log needs lo > 0, got {self.lo}")
        if self.scale == "log1p" and self.lo <= -1:
            raise ValueError(f"coding: scale log1p needs lo > -1, got {self.lo}")

    @classmethod
    def from_spec(cls, spec: Mapping, *, bins: int | None = None, missing: bool = False) -> Bins:
        """From a config entry ``{scale, lo, hi[, bins]}`` (``bins`` given here wins)."""
        b = bins if bins is not None else spec.get("bins")
        return cls(str(spec["scale"]), float(spec["lo"]), float(spec["hi"]),
                   None if spec["scale"] == "int" else int(b), missing)

    @property
    def values(self) -> int:
        """Codes of non-missing values."""
        return int(self.hi - self.lo) + 1 if self.scale == "int" else int(self.bins)

    @property
    def size(self) -> int:
        """The domain size |C| (missing code included)."""
        return self.values + int(self.missing)

    def edges(self) -> np.ndarray:
        """The interior cut points in raw units, ascending: code = number of edges <= value."""
        if self.scale == "int":
            return np.arange(self.lo + 1, self.hi + 1, dtype=float)
        k = np.arange(1, self.bins) / self.bins
        if self.scale == "linear":
            return self.lo + (self.hi - self.lo) * k
        if self.scale == "log":
            return np.exp(math.log(self.lo) + (math.log(self.hi) - math.log(self.lo)) * k)
        return np.expm1(math.log1p(self.lo) + (math.log1p(self.hi) - math.log1p(self.lo)) * k)

    def codes(self, x) -> np.ndarray:
        """Codes ``0..size-1`` of the values ``x`` (each from its own value and the edges only)."""
        x = np.asarray(x, dtype=float)
        nan = np.isnan(x)
        if nan.any() and not self.missing:
            raise ValueError("coding: a missing value where the coding has no missing code")
        out = np.searchsorted(self.edges(), np.where(nan, self.lo, x), side="right")
        if self.missing:
            out = np.where(nan, 0, out + 1)
        return out.astype(np.int16)

    def describe(self) -> dict:
        """The provenance entry: the parameters and the cut points they give."""
        return {"scale": self.scale, "lo": self.lo, "hi": self.hi, "bins": self.bins, "missing": self.missing,
                "size": self.size, "edges": [float(e) for e in self.edges()]}


# ----------------------------------------------------------------------------------- Adult

#: Adult's ordinal attributes and their public coding (``datasets.adult.coding`` overrides). age,
#: education-num and hours-per-week keep one code per integer of their documented ranges (adult.names:
#: age > 16; the CPS top-codes age at 90 and hours at 99; education-num 1..16 is the education list);
#: fnlwgt is cut on a log scale between fixed round numbers, capital-gain and -loss on log1p up to fixed
#: caps (99,999 is the CPS top code of capital gain): constants set once, never refit to the data.
ADULT_CODING = {
    "age": {"scale": "int", "lo": 17, "hi": 90},
    "education_num": {"scale": "int", "lo": 1, "hi": 16},
    "hours_per_week": {"scale": "int", "lo": 1, "hi": 99},
    "fnlwgt": {"scale": "log", "lo": 10000, "hi": 1600000, "bins": 32},
    "capital_gain": {"scale": "log1p", "lo": 0, "hi": 100000, "bins": 16},
    "capital_loss": {"scale": "log1p", "lo": 0, "hi": 10000, "bins": 16},
}


def _named_bins(name: str, spec: Mapping, **kwargs) -> Bins:
    """``Bins.from_spec`` whose refusal names the attribute's key (``coding.age: need ...``)."""
    try:
        return Bins.from_spec(spec, **kwargs)
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(f"coding.{name}: {msg.removeprefix('coding: ')}") from None


def _known(coding: Mapping | None, known: Mapping, dataset: str) -> None:
    """A coding names only attributes the dataset has (a misspelt one would silently keep its default)."""
    unknown = sorted(set(coding or {}) - set(known))
    if unknown:
        raise ValueError(f"coding: {dataset} has no ordinal attribute {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(known)})")


def adult_bins(coding: Mapping | None = None) -> dict[str, Bins]:
    _known(coding, ADULT_CODING, "adult")
    spec = {**ADULT_CODING, **(coding or {})}
    return {a: _named_bins(a, spec[a]) for a in ADULT_CODING}


def code_adult(raw: pd.DataFrame, coding: Mapping | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Adult's raw table (:func:`shuffledp.datasets.adult.read_raw`'s columns) -> int16 codes and domain
    sizes; row ``i`` of the result depends on raw row ``i`` and ``coding`` only."""
    out, domains = {}, {}
    for col, values in CATEGORIES.items():
        cats = values.split()
        codes = raw[col].map({c: i for i, c in enumerate(cats)}).fillna(-1).to_numpy(np.int64)
        if (codes < 0).any():
            bad = sorted(set(raw[col][codes < 0]))[:5]
            raise ValueError(f"adult: unknown {col} values {bad}")
        out[col], domains[col] = codes.astype(np.int16), len(cats)
    for col, b in adult_bins(coding).items():
        out[col], domains[col] = b.codes(raw[col].to_numpy(float)), b.size
    order = [c for c in COLUMNS if c in out]
    return pd.DataFrame({c: out[c] for c in order}), {c: domains[c] for c in order}


def rebin(codes, size: int, c: int) -> np.ndarray:
    """Merge consecutive codes of a ``size``-code attribute into ``c`` (``code * c // size``; kept when
    ``size <= c``): a function of the code and the public sizes."""
    codes = np.asarray(codes, dtype=np.int64)
    if size <= c:
        return codes.astype(np.int16)
    return (codes * c // size).astype(np.int16)


def code_adult_ordinal(raw: pd.DataFrame, c: int, coding: Mapping | None = None) -> pd.DataFrame:
    """The ordinal table HDG and CALM read (:data:`shuffledp.datasets.adult_ordinal.ATTRIBUTES`, codes
    ``0..c-1``) straight from Adult's raw records."""
    table, domains = code_adult(raw, coding)
    return pd.DataFrame({a: rebin(table[a].to_numpy(), domains[a], c) for a in ATTRIBUTES})


# ----------------------------------------------------------------------------------- Loan

#: Loan's public ranges (``multidim_frameworks.loan.coding`` overrides): funded amount $1,000-$40,000
#: and interest rates 5%-31% as Lending Club documents its loans; utilisation in percent up to a cap
#: of 150; money amounts on a log scale between fixed round numbers; counts linear up to a cap.
#: Each attribute gets ``c - 1`` bins and code 0 for a missing value (``c``: HDG's common domain).
LOAN_CODING = {
    "funded_amnt": {"scale": "linear", "lo": 1000, "hi": 40000},
    "int_rate": {"scale": "linear", "lo": 5, "hi": 31},
    "annual_inc": {"scale": "log", "lo": 10000, "hi": 1000000},
    "revol_util": {"scale": "linear", "lo": 0, "hi": 150},
    "all_util": {"scale": "linear", "lo": 0, "hi": 150},
    "total_bal_il": {"scale": "log", "lo": 1000, "hi": 500000},
    "total_il_high_credit_limit": {"scale": "log", "lo": 1000, "hi": 500000},
    "num_il_tl": {"scale": "linear", "lo": 0, "hi": 30},
    "inq_last_12m": {"scale": "linear", "lo": 0, "hi": 15},
    "open_il_24m": {"scale": "linear", "lo": 0, "hi": 15},
}


def loan_bins(c: int, coding: Mapping | None = None) -> dict[str, Bins]:
    """Each attribute's ``c - 1`` bins and missing code; refused unless every attribute has exactly ``c``
    codes (an ``int`` scale would give one code per integer, codes outside HDG's domain)."""
    _known(coding, LOAN_CODING, "loan")
    spec = {**LOAN_CODING, **(coding or {})}
    out = {a: _named_bins(a, spec[a], bins=c - 1, missing=True) for a in LOAN_CODING}
    wrong = [a for a, b in out.items() if b.size != c]
    if wrong:  # named by the first attribute's key (coding.<attribute>), the others listed
        raise ValueError(f"coding.{wrong[0]}: loan attribute(s) {', '.join(wrong)} would have other than {c} "
                         "codes (scale int is not a Loan coding: each attribute is cut into domain - 1 bins)")
    return out


def code_loan(raw: pd.DataFrame, c: int, coding: Mapping | None = None) -> pd.DataFrame:
    """Loan's raw attributes (:func:`shuffledp.datasets.loan.read_any`) -> codes ``0..c-1`` (0: missing);
    row ``i`` depends on raw row ``i``, ``c`` and ``coding`` only. No record is dropped."""
    bins = loan_bins(c, coding)
    return pd.DataFrame({a: bins[a].codes(pd.to_numeric(raw[a]).to_numpy(dtype=float, na_value=np.nan))
                         for a in raw.columns})


# ----------------------------------------------------------------------------------- one record


def code_record(dataset: str, record: Mapping, *, c: int | None = None, coding: Mapping | None = None) -> dict:
    """One raw record (attribute -> raw value) -> its coded row. ``dataset``: ``adult`` (every attribute),
    ``adult_ordinal`` (HDG's 5 attributes, needs ``c``) or ``loan`` (needs ``c``)."""
    frame = pd.DataFrame([dict(record)])
    if dataset == "adult":
        table, _ = code_adult(frame, coding)
    elif dataset == "adult_ordinal":
        table = code_adult_ordinal(frame, int(c), coding)
    elif dataset == "loan":
        table = code_loan(frame.astype(float), int(c), coding)
    else:
        raise ValueError(f"dataset: adult, adult_ordinal or loan, got {dataset!r}")
    return {k: int(v) for k, v in table.iloc[0].items()}
