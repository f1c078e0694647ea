"""Privacy amplification by shuffling via clones (Feldman, McMillan and Talwar).

Two analyses of shuffling ``n`` outputs of ``eps0``-LDP local randomizers are provided.

* ``variant="fmt21"``: "Hiding among the clones" (FOCS 2021). Every other user's report is,
  with probability ``e^{-eps0}``, a clone of the differing user's report (half of it on each of
  the two neighbouring inputs), so the clone count is ``C ~ Bin(n-1, e^{-eps0})``.
* ``variant="fmt23"``: "Stronger privacy amplification by shuffling for Renyi and approximate
  differential privacy" (SODA 2023): the clone probability improves to ``2/(e^{eps0}+1)``, so
  ``C ~ Bin(n-1, 2/(e^{eps0}+1))``.

In both cases the shuffled output is a post-processing of a pair of counts, and the
hockey-stick divergence between the two neighbouring worlds is at most that between

    P = p * (A + 1, C - A) + (1 - p) * (A, C - A + 1)
    Q = (1 - p) * (A + 1, C - A) + p * (A, C - A + 1),    A | C ~ Bin(C, 1/2),

with mixing probability ``p = e^{eps0}/(e^{eps0}+1)``. We compute this divergence exactly (not
by the interval discretisation of the authors' code): conditioned on ``C = c`` the likelihood
ratio ``P/Q`` at first coordinate ``a`` (total ``m = c + 1``) equals
``(p a + (1-p)(m-a)) / ((1-p) a + p (m-a))``, which increases in ``a``; so the positive part
of ``P - e^eps Q`` is a binomial tail beyond one threshold per ``c``, evaluated for all ``c``
at once with the regularised incomplete beta function. ``P`` and ``Q`` are mirror images, so
``D(P||Q) = D(Q||P)``. Clone counts outside the evaluated window contribute at most their
probability mass, which is added to delta (so delta is an upper bound, never an
underestimate).

:func:`delta_from_clone_pmf` exposes the core for an arbitrary clone-count distribution (for
instance the Poisson-binomial counts of personalized local privacy).

The closed form of FMT21 (Theorem 3.1; restated as Theorem 6 of the per-user-histogram paper,
whose text has a typo ``8 e^eps / q`` for ``8 e^eps / n``) is in :func:`eps_clones_closed_form`.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accountants.numerics.hockey_stick import smallest_eps  # noqa: F401 (re-exported: moved to the light module)
from shuffledp.accountants.validation import EPS0_MAX, check_choice, check_delta, check_eps, check_eps0, check_n

__all__ = [
    "clone_probability",
    "mixing_probability",
    "clone_count_window",
    "ClonePair",
    "clone_pair",
    "delta_from_clone_pmf",
    "delta_clones",
    "eps_clones",
    "eps_clones_closed_form",
    "smallest_eps",
]

VARIANTS = ("fmt21", "fmt23")
CLOSED_FORMS = ("code", "theorem")


# --------------------------------------------------------------------------- validation
def _check_eps0(eps0: float) -> float:
    return check_eps0(eps0, upper=EPS0_MAX)


def _check_n(n) -> int:
    return check_n(n)


def _check_delta(delta: float) -> float:
    return check_delta(delta)


def _check_eps(eps: float) -> float:
    return check_eps(eps)


def _check_variant(variant: str) -> str:
    return check_choice(variant, "variant", VARIANTS)


# --------------------------------------------------------------------------- parameters
def clone_probability(eps0: float, variant: str = "fmt21") -> float:
    """Probability that another user's report is a clone (of either neighbouring input)."""
    eps0 = _check_eps0(eps0)
    if _check_variant(variant) == "fmt21":
        return math.exp(-eps0)
    return 2.0 / (math.exp(eps0) + 1.0)


def mixing_probability(eps0: float) -> float:
    """``p = e^{eps0}/(e^{eps0}+1)``: weight of the differing user's own side in ``P``."""
    eps0 = _check_eps0(eps0)
    return 1.0 / (1.0 + math.exp(-eps0))


def clone_count_window(n: int, q: float, width: float = 15.0) -> tuple[int, np.ndarray, float]:
    """The part of ``Bin(n-1, q)`` worth evaluating, its pmf, and the mass left outside.

    Returns ``(c_start, pmf, outside_mass)`` where ``pmf[i] = Pr[C = c_start + i]``. The window is
    ``width`` standard deviations (plus a margin) either side of the mean; the exact mass outside
    it is returned so callers can add it to delta (it is typically below 1e-100).
    """
    from scipy import stats

    n_other = int(n) - 1
    mean = n_other * q
    sd = math.sqrt(max(n_other * q * (1.0 - q), 0.0))
    half = width * sd + 5.0 * width
    lo = max(0, int(math.floor(mean - half)))
    hi = min(n_other, int(math.ceil(mean + half)))
    c = np.arange(lo, hi + 1, dtype=np.float64)
    pmf = _binom_pmf(c, n_other, q)
    below = float(stats.binom.cdf(lo - 1, n_other, q)) if lo > 0 else 0.0
    above = float(stats.binom.sf(hi, n_other, q)) if hi < n_other else 0.0
    return lo, pmf, below + above


def _binom_pmf(k: np.ndarray, n: int, q: float) -> np.ndarray:
    """Binomial pmf (Boost's implementation via scipy.stats: accurate far in the tails)."""
    from scipy import stats

    return stats.binom.pmf(k, n, q)


# --------------------------------------------------------------------------- core
DEFAULT_MAX_POINTS = 4096
WINDOW_MAX = 2_000_000   # longer clone-count windows (huge n) are evaluated in blocks


def _clone_blocks(c: np.ndarray, w: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(block_w, c_upper, c_lower)`` of :class:`ClonePair` when more than ``max_points`` clone
    counts ``c`` (weights ``w``) carry mass: at most ``max_points`` consecutive blocks."""
    # block j = indices [starts[j], starts[j+1]) ; charged D at c[starts[j]] (upper) or
    # at the last c of the block (lower)
    # half of the block starts evenly spaced in c, half at quantiles of the clone-count
    # law (fine blocks where the mass is)
    half = max_points // 2
    even = np.linspace(0, c.size, half, endpoint=False).astype(int)
    cdf = np.cumsum(w) / w.sum()
    quant = np.searchsorted(cdf, np.linspace(0.0, 1.0, max_points - half, endpoint=False))
    starts = np.unique(np.concatenate([even, np.minimum(quant, c.size - 1)]))
    ends = np.append(starts[1:], c.size) - 1
    return np.add.reduceat(w, starts), c[starts], c[ends]


class ClonePair:
    """The clone reduction for a fixed clone-count distribution and mixing probability.

    ``delta(eps)`` returns an upper bound on ``D_{e^eps}(P || Q)`` (= ``D(Q || P)``), where
    ``P = p (A+1, C-A) + (1-p) (A, C-A+1)``, ``Q`` has ``p`` and ``1-p`` swapped, and
    ``A | C ~ Bin(C, 1/2)``.

    Exactness: per clone count ``c`` the divergence ``D_c`` is computed exactly (a binomial
    point probability and tail). When more than ``max_points`` clone counts carry mass, they are
    grouped into consecutive blocks and each block is charged the divergence at its smallest
    ``c``. This is an upper bound because ``D_c`` is non-increasing in ``c``: ``(P_{c+1},
    Q_{c+1})`` is the image of ``(P_c, Q_c)`` under the same Markov kernel (one more clone, a
    fair coin choosing its side), and the hockey-stick divergence obeys data processing.
    ``delta_lower(eps)`` charges each block its largest ``c`` instead, bracketing the exact value.
    """

    def __init__(self, c_pmf, p: float, *, c_start: int = 0, outside_mass: float = 0.0,
                 tail_mass: float = 0.0, max_points: int | None = DEFAULT_MAX_POINTS,
                 p_bar: float | None = None):
        w = np.asarray(c_pmf, dtype=np.float64).ravel()
        if w.size == 0:
            raise ValueError("c_pmf must not be empty")
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("c_pmf must hold finite non-negative probabilities")
        p = float(p)
        if not (0.5 <= p <= 1.0):
            raise ValueError(f"p must lie in [1/2, 1], got {p!r}")
        # 1 - p, passed separately when p is so close to 1 that 1 - p loses precision
        p_bar = 1.0 - p if p_bar is None else float(p_bar)
        if not (0.0 <= p_bar <= 0.5) or abs(p + p_bar - 1.0) > 1e-12:
            raise ValueError(f"p_bar must equal 1 - p, got p={p!r}, p_bar={p_bar!r}")
        outside_mass = float(outside_mass)
        if not (outside_mass >= 0):
            raise ValueError(f"outside_mass must be >= 0, got {outside_mass!r}")
        tail_mass = float(tail_mass)
        if not (tail_mass >= 0):
            raise ValueError(f"tail_mass must be >= 0, got {tail_mass!r}")
        if int(c_start) < 0:
            raise ValueError(f"c_start must be >= 0, got {c_start!r}")
        if max_points is not None and int(max_points) < 2:
            raise ValueError(f"max_points must be >= 2 or None, got {max_points!r}")
        c = np.arange(w.size, dtype=np.float64) + int(c_start)
        # optional trimming of negligible tails (their mass is charged to delta in full)
        if tail_mass > 0:
            half = 0.5 * tail_mass
            left = np.cumsum(w)
            right = np.cumsum(w[::-1])[::-1]
            keep_tail = (left > half) & (right > half)
            outside_mass += float(w[~keep_tail].sum())
            c, w = c[keep_tail], w[keep_tail]
        keep = w > 0
        self.c, self.w = c[keep], w[keep]
        self.p = p
        self.p_bar = p_bar
        self.outside_mass = outside_mass
        if max_points is not None and self.c.size > int(max_points):
            self.block_w, self.c_upper, self.c_lower = _clone_blocks(self.c, self.w, int(max_points))
        else:
            self.block_w = self.w
            self.c_upper = self.c
            self.c_lower = self.c

    rounding_scale = None   # per-block scale of the block-mass rounding error (blocked pairs)
    _counts_upper = _counts_lower = None   # _Counts of c_upper and c_lower, built at the first delta

    def _counts(self, side: str) -> _Counts:
        attr = "_counts_upper" if side == "upper" else "_counts_lower"
        got = getattr(self, attr)
        c = self.c_upper if side == "upper" else self.c_lower
        if got is None or got.c is not c:
            got = _Counts(c)
            setattr(self, attr, got)
        return got

    @classmethod
    def from_blocks(cls, first, last, mass, scale, p: float, p_bar: float, outside_mass: float) -> ClonePair:
        """A pair whose clone counts come in blocks ``[first_j, last_j]`` of total ``mass_j``
        (huge n; see :func:`shuffledp.accountants.numerics.binomial_blocks.blocks`): charged ``D`` at
        ``first_j`` (upper) or ``last_j`` (lower); ``1e-14 scale_j D`` covers the rounding of
        each block mass (a binomial cdf difference)."""
        self = cls.__new__(cls)
        self.p, self.p_bar, self.outside_mass = float(p), float(p_bar), float(outside_mass)
        self.block_w = np.asarray(mass, dtype=np.float64)
        self.c_upper = np.asarray(first, dtype=np.float64)
        self.c_lower = np.asarray(last, dtype=np.float64)
        self.c, self.w = self.c_upper, self.block_w
        self.rounding_scale = np.asarray(scale, dtype=np.float64)
        return self

    def delta(self, eps: float) -> float:
        """Upper bound on the hockey-stick divergence at ``e^eps`` (includes ``outside_mass``)."""
        d = _divergence_per_count(self.c_upper, self.p, self.p_bar, eps, counts=self._counts("upper"))
        extra = 0.0 if self.rounding_scale is None else 1e-14 * float(np.dot(self.rounding_scale, d))
        return min(float(np.dot(self.block_w, d)) + extra + self.outside_mass, 1.0)

    def delta_lower(self, eps: float) -> float:
        """Lower bound on the divergence restricted to the listed clone counts."""
        d = _divergence_per_count(self.c_lower, self.p, self.p_bar, eps, side="lower",
                                  counts=self._counts("lower"))
        extra = 0.0 if self.rounding_scale is None else 1e-14 * float(np.dot(self.rounding_scale, d))
        return max(0.0, float(np.dot(self.block_w, d)) - extra)


_NEAR_SD = 0.1   # |k - c/2| below this many standard deviations (and c > 1e6): bracket the tail

def _binom_pmf(k: np.ndarray, c: np.ndarray, p: float) -> np.ndarray:
    """``scipy.stats.binom.pmf(k, c, p)``, bit for bit, through scipy's public API only (the
    accountants never reach scipy's private names: tests/test_binom_backend.py).

    Where ``k`` and ``c`` are arrays of one shape, every ``k`` an integer in ``[0, c]``, every ``c`` a
    non-negative integer and ``0 <= p <= 1`` (what the clone counts give), the pmf comes from the
    public ``scipy.stats.Binomial`` with ``validation_policy="skip_all"``: the same Boost ufunc as
    ``binom.pmf``, without ``rv_discrete``'s per-call argument checks (about ten times the pmf itself
    on the short arrays of the eps searches), clipped to [0, 1] as ``rv_discrete.pmf`` clips it.
    Anything else takes ``binom.pmf`` itself."""
    from scipy import stats

    k = np.asarray(k, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    if (k.ndim != 1 or k.shape != c.shape or k.size == 0 or not 0.0 <= p <= 1.0
            or not np.all((k >= 0.0) & (k <= c) & (np.floor(k) == k) & (np.floor(c) == c))):
        return stats.binom.pmf(k, c, p)
    return np.clip(stats.Binomial(n=c, p=p, validation_policy="skip_all").pmf(k), 0.0, 1.0)


class _Counts:
    """The clone counts ``c`` of a pair and what each eps evaluation of :func:`_divergence_per_count`
    reuses: ``Bin(c, 1/2)`` as the public ``scipy.stats.Binomial`` built once without argument checks
    (``dist``; None unless every ``c`` is an integer in ``[0, 2**53)``, so that every threshold ``k``
    is an integer in ``[0, c]``: the case :func:`_binom_pmf` takes it for) and whether any ``c``
    exceeds 1e6 (``huge``: only then can a tail be bracketed).

    ``last``: the thresholds ``k`` of the latest evaluation and its ``(pmf_k, sf_k)`` per side. Both
    depend on ``k`` and ``c`` only, not on eps, and an eps search ends with many steps whose
    thresholds are all the same (about two thirds of its evaluations): those take the arrays kept
    here, the same doubles as computing them again."""

    __slots__ = ("c", "dist", "huge", "last")

    def __init__(self, c: np.ndarray):
        from scipy import stats

        self.c = c
        ok = (isinstance(c, np.ndarray) and c.dtype == np.float64 and c.ndim == 1 and c.size > 0
              and bool(np.all((c >= 0.0) & (c < 2.0**53) & (np.floor(c) == c))))
        self.dist = stats.Binomial(n=c, p=0.5, validation_policy="skip_all") if ok else None
        self.huge = bool(np.any(np.asarray(c) > 1e6))
        self.last: dict = {}   # side -> (k, pmf_k, sf_k) of the latest evaluation on that side

    def recall(self, k: np.ndarray, side: str, need_sf: bool):
        """``(pmf_k, sf_k)`` kept from the latest evaluation at the same thresholds ``k`` (``sf_k``
        None where only the pmf was computed), else None."""
        got = self.last.get(side)
        if got is None or (need_sf and got[2] is None) or not np.array_equal(got[0], k):
            return None
        return got[1], got[2]

    def keep(self, k: np.ndarray, side: str, pmf_k: np.ndarray, sf_k: np.ndarray | None) -> None:
        for a in (k, pmf_k, sf_k):
            if a is not None:
                a.flags.writeable = False   # kept for later evaluations: nothing may change them
        self.last[side] = (k, pmf_k, sf_k)

    def pmf(self, k: np.ndarray) -> np.ndarray:
        """``binom.pmf(k, c, 1/2)`` bit for bit, for the thresholds ``k`` (integers in ``[0, c]``)."""
        if self.dist is None:
            return _binom_pmf(k, self.c, 0.5)
        return np.clip(self.dist.pmf(k), 0.0, 1.0)


def _half_sf_bracket(k: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) on ``P(Bin(c, 1/2) > k)`` for huge ``c`` and ``k`` near ``c/2``, where the
    incomplete beta function converges slowly: from the symmetry ``P(B > m) = 1/2`` (c odd) or
    ``(1 - P(B = c/2))/2`` (c even), ``m = floor(c/2)``, and the ``|k - m|`` point masses in
    between, each between the masses at the two ends (the pmf decreases away from the centre)."""
    m = np.floor(c / 2.0)
    odd = np.mod(c, 2.0) == 1.0
    base = np.where(odd, 0.5, 0.5 * (1.0 - _binom_pmf(m, c, 0.5)))
    pm_centre = _binom_pmf(np.where(k >= m, m + 1.0, m), c, 0.5)
    pm_edge = _binom_pmf(np.where(k >= m, k, k + 1.0), c, 0.5)
    gap = np.abs(k - m)
    big, small = gap * pm_centre, gap * np.minimum(pm_edge, pm_centre)
    lower = np.where(k >= m, base - big, base + small)
    upper = np.where(k >= m, base - small, base + big)
    return np.clip(lower * (1 - 1e-12), 0.0, 1.0), np.clip(upper * (1 + 1e-12), 0.0, 1.0)


def _divergence_per_count(c: np.ndarray, p: float, p_bar: float, eps: float, side: str = "upper",
                          counts: _Counts | None = None) -> np.ndarray:
    """``D_{e^eps}(P_c || Q_c)`` for every clone count ``c`` (vectorised, exact); p_bar = 1 - p.

    For ``c > 1e6`` with the threshold within 0.1 standard deviations of ``c/2`` (tiny eps at
    huge n) the binomial tail is bracketed instead (:func:`_half_sf_bracket`): ``side="upper"``
    returns an upper bound on ``D_c``, ``side="lower"`` a lower bound (relative width ~1e-7).
    ``counts``: ``_Counts(c)`` kept by the caller across eps (the same doubles, fewer checks and,
    at thresholds ``k`` equal to the latest evaluation's, no new pmf or tail)."""
    ee = math.exp(eps)
    lead = p - ee * p_bar  # P(a) - e^eps Q(a) weight of the "own report" side
    if lead <= 0.0 or c.size == 0:
        # the likelihood ratio never exceeds e^eps = at least p / (1 - p)
        return np.zeros_like(c)
    # P_c/Q_c at first coordinate a (total m = c + 1) is (p a + (1-p)(m-a)) / ((1-p) a + p (m-a)),
    # increasing in a; it exceeds e^eps iff a > m * theta, theta = 1 - tau with
    # tau = lead / ((p - p_bar)(1 + e^eps)) in (0, 1/2]. The last a at or below the threshold is
    # k = m - ceil(m tau) (computed from tau so that theta rounding to 1 cannot drop terms).
    tau = lead / ((p - p_bar) * (1.0 + ee))
    k = (c + 1.0) - np.ceil((c + 1.0) * tau)  # 0 <= k <= c
    # sum_{a > k} [P_c(a) - e^eps Q_c(a)] = lead * Pr[B_c = k] + (1 - e^eps) * Pr[B_c > k],
    # B_c ~ Bin(c, 1/2); Pr[B_c > k] = I_{1/2}(k + 1, c - k) (Boost's incomplete beta).
    k = np.clip(k, 0.0, c)
    kept = None if counts is None else counts.recall(k, side, need_sf=eps != 0.0)
    if kept is not None:
        pmf_k, sf_k = kept
    else:
        pmf_k = _binom_pmf(k, c, 0.5) if counts is None else counts.pmf(k)
        # eps 0: the tail term has weight e^0 - 1 = 0 (and is slow at the symmetric point)
        sf_k = None if eps == 0.0 else _tail_sf(k, c, side, counts)
        if counts is not None:
            counts.keep(k, side, pmf_k, sf_k)
    if eps == 0.0:
        return np.maximum(lead * pmf_k, 0.0)
    return np.maximum(lead * pmf_k - math.expm1(eps) * sf_k, 0.0)


def _tail_sf(k: np.ndarray, c: np.ndarray, side: str, counts: _Counts | None) -> np.ndarray:
    """``Pr[Bin(c, 1/2) > k]`` of :func:`_divergence_per_count` (bracketed near the centre of a
    huge ``c``: its lower end for ``side="upper"``, its upper end for ``"lower"``)."""
    from scipy import special

    far = k < c    # below the top (and, below, not near the centre of a huge c)
    near = None
    if counts is None or counts.huge:
        near = (c > 1e6) & (np.abs(k - c / 2.0) <= _NEAR_SD * np.sqrt(c / 4.0))
        far &= ~near
    if far.all():   # elementwise: the same doubles as the masked evaluation below
        sf_k = special.betainc(k + 1.0, c - k, 0.5)
    else:
        sf_k = np.zeros_like(c)
        sf_k[far] = special.betainc(k[far] + 1.0, c[far] - k[far], 0.5)
    if near is not None and near.any():
        lo_sf, hi_sf = _half_sf_bracket(k[near], c[near])
        sf_k[near] = lo_sf if side == "upper" else hi_sf   # D = lead pmf - (e^eps - 1) sf
    return sf_k


def delta_from_clone_pmf(c_pmf, eps, p: float, *, c_start: int = 0, outside_mass: float = 0.0,
                         tail_mass: float = 0.0, max_points: int | None = DEFAULT_MAX_POINTS,
                         p_bar: float | None = None):
    """Hockey-stick divergence ``D_{e^eps}(P || Q)`` of the clone reduction (upper bound).

    ``P = p (A+1, C-A) + (1-p) (A, C-A+1)`` and ``Q`` with ``p`` and ``1-p`` swapped, where
    ``A | C ~ Bin(C, 1/2)`` and ``Pr[C = c_start + i] = c_pmf[i]`` (any clone-count law, e.g. a
    Poisson binomial).

    Parameters
    ----------
    c_pmf : probabilities of the clone count (any mass not listed must be passed as
        ``outside_mass``; it is added to delta).
    eps : float or array of eps >= 0 (an array returns an array).
    p : mixing probability in [1/2, 1] (``e^{eps0}/(e^{eps0}+1)`` for eps0-LDP randomizers;
        ``p = 1`` gives ``P = (A+1, C-A)``, ``Q = (A, C-A+1)``).
    tail_mass : drop leading/trailing clone counts of total mass up to this value (charged to
        delta in full) to save time; 0 keeps everything.
    max_points : evaluate at most this many clone counts (blocks charged their smallest count,
        an upper bound by monotonicity; see :class:`ClonePair`); ``None`` = exact.
    p_bar : ``1 - p`` given directly (e.g. ``1/(e^{eps0}+1)``), needed when p is so close to 1
        that ``1 - p`` loses precision (eps0 above about 30).

    By symmetry ``D(P||Q) = D(Q||P)``, so this is the delta of the pair.
    """
    eps_arr = np.asarray(eps, dtype=np.float64)
    if np.any(~np.isfinite(eps_arr)) or np.any(eps_arr < 0):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    pair = ClonePair(c_pmf, p, c_start=c_start, outside_mass=outside_mass, tail_mass=tail_mass,
                     max_points=max_points, p_bar=p_bar)
    out = np.array([pair.delta(float(e)) for e in eps_arr.ravel()])
    if eps_arr.ndim == 0:
        return float(out[0])
    return out.reshape(eps_arr.shape)


# --------------------------------------------------------------------------- public bounds
def clone_pair(eps0: float, n: int, *, variant: str = "fmt21",
               max_points: int | None = DEFAULT_MAX_POINTS) -> ClonePair:
    """The :class:`ClonePair` of shuffling n eps0-LDP reports under the given variant."""
    eps0 = _check_eps0(eps0)
    n = _check_n(n)
    q = clone_probability(eps0, variant)
    if 2.0 * 15.0 * math.sqrt((n - 1) * q * (1.0 - q)) > WINDOW_MAX:
        # huge n: blocks of clone counts with exact masses instead of one pmf value per count
        from shuffledp.accountants.numerics.binomial_blocks import blocks as _blocks

        first, last, mass, scale, outside = _blocks(n - 1, q, 1e-60)
        return ClonePair.from_blocks(first, last, mass, scale, mixing_probability(eps0),
                                     1.0 / (1.0 + math.exp(eps0)), outside)
    c_start, pmf, outside = clone_count_window(n, q)
    return ClonePair(pmf, mixing_probability(eps0), p_bar=1.0 / (1.0 + math.exp(eps0)),
                     c_start=c_start, outside_mass=outside,
                     max_points=max_points)


def delta_clones(eps0: float, n: int, eps: float, *, variant: str = "fmt21",
                 max_points: int | None = DEFAULT_MAX_POINTS) -> float:
    """delta(eps) of the numerical clones bound for shuffling n eps0-LDP reports."""
    eps = _check_eps(eps)
    return clone_pair(eps0, n, variant=variant, max_points=max_points).delta(eps)


def eps_clones(eps0: float, n: int, delta: float, *, variant: str = "fmt21",
               closed_form: bool = False, closed_form_version: str = "code",
               rtol: float = 1e-7, max_points: int | None = DEFAULT_MAX_POINTS,
               cap: float | None = None) -> float:
    """Shuffled epsilon for n eps0-LDP reports at the given delta (clones analysis).

    ``closed_form=False`` (default): the numerical bound, the smallest eps (to relative
    precision ``rtol``, rounded up) with :func:`delta_clones` <= delta.
    ``closed_form=True``: FMT21's closed form (only for ``variant="fmt21"``); see
    :func:`eps_clones_closed_form` for ``closed_form_version``.
    ``cap`` (numerical bound only): for a caller who uses the bound only where it lies below
    ``cap``: when ``delta_clones(cap) > delta`` (so the bound exceeds ``cap``) ``inf`` is returned
    without the search; otherwise the same number as without ``cap``.
    """
    eps0 = _check_eps0(eps0)
    n = _check_n(n)
    delta = _check_delta(delta)
    variant = _check_variant(variant)
    if closed_form:
        if variant != "fmt21":
            raise ValueError("variant: a closed form is implemented only for fmt21")
        return eps_clones_closed_form(eps0, n, delta, version=closed_form_version)
    pair = clone_pair(eps0, n, variant=variant, max_points=max_points)

    def fn(e: float) -> float:
        return 0.0 if e >= eps0 else pair.delta(e)  # shuffling eps0-LDP reports is eps0-DP

    if cap is not None and fn(float(cap)) > delta:   # delta is non-increasing in eps: the bound exceeds cap
        return math.inf
    return smallest_eps(fn, delta, eps0, rtol=rtol)


def eps_clones_closed_form(eps0: float, n: int, delta: float, *, version: str = "code") -> float:
    """Closed-form clones bound of FMT21 (Theorem 3.1).

    ``version="theorem"``: the formula as printed in the theorem (and as Theorem 6 of the
    per-user-histogram paper)::

        eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (8 sqrt(e^eps0 log(4/delta)) / sqrt(n)
                                                  + 8 e^eps0 / n))

    valid for ``eps0 <= log(n / (16 log(2/delta)))``.

    ``version="code"`` (default): the expression evaluated by the authors' public code
    (apple/ml-shuffling-amplification), which replaces the factor ``(e^eps0-1)/(e^eps0+1)`` by
    the slightly larger ``(1-e^{-eps0}) / (1 + e^{-eps0-eps1})`` with ``eps1 = log(1 + S)``,
    ``S`` the bracket above, and uses the stricter regime ``eps0 <= log(n / (16 log(4/delta)))``.
    It is always >= the printed theorem (so never the more optimistic of the two) and is the
    number the authors' public example reports (0.537804 for n=1e5, eps0=4, delta=1e-6).

    Outside the stated regime the bound does not apply and ``eps0`` is returned (shuffling
    eps0-LDP reports is eps0-DP). The result is also capped at ``eps0``.
    """
    eps0 = _check_eps0(eps0)
    n = _check_n(n)
    delta = _check_delta(delta)
    if version not in CLOSED_FORMS:
        raise ValueError(f"version must be one of {CLOSED_FORMS}, got {version!r}")
    log_term = math.log(4.0 / delta)
    regime_log = math.log(4.0 / delta) if version == "code" else math.log(2.0 / delta)
    if eps0 > math.log(n / (16.0 * regime_log)):
        return eps0
    s = 8.0 * math.sqrt(math.exp(eps0) * log_term / n) + 8.0 * math.exp(eps0) / n
    if version == "theorem":
        factor = math.tanh(eps0 / 2.0)  # (e^eps0 - 1)/(e^eps0 + 1)
    else:
        eps1 = math.log1p(s)
        factor = -math.expm1(-eps0) / (1.0 + math.exp(-eps0 - eps1))
    return min(math.log1p(factor * s), eps0)
