"""Variation-ratio reduction (Wang et al., VLDB 2024; Theorem 1 of the segmented-shuffle paper).

A victim's local randomizer with the ``(p, beta)``-variation property, blanket messages of the
other ``n - 1`` users with the ``q``-ratio property: for any divergence with the data-processing
inequality, the shuffled outputs on neighbouring datasets are no further apart than

    P = (A + D1, C - A + D2),   Q = (A + D2, C - A + D1),

with ``C ~ Bin(n-1, 2r)``, ``r = beta p / ((p-1) q)``, ``A | C ~ Bin(C, 1/2)``,
``D1 ~ Bern(beta p/(p-1))`` and ``D2 | D1=0 ~ Bern(beta/(p-1-beta p))`` (``D2 = 0`` if ``D1 = 1``).
In words: the victim emits a "clone of x0" with probability ``u = beta p/(p-1)``, a "clone of
x1" with probability ``alpha = beta/(p-1)``, anything else with ``w = 1 - u - alpha``; every other
user emits each clone type with probability ``r``. ``p = +inf`` is the exact limit
``alpha = 0, u = beta, r = beta/q`` (no large surrogate).

Computation (exact up to floating point, with a rigorous truncation allowance)
------------------------------------------------------------------------------
Write ``t`` for the observed total ``a + b``. For fixed ``t`` the privacy loss
``log P(a, t-a) / Q(a, t-a)`` increases in ``a``; ``P - e^eps Q > 0`` exactly when
``a > L_t = [t (e^eps u - alpha) + r (n-t) w (e^eps - 1)/(1-2r)] / (beta (1 + e^eps))``
(evaluated as ``t - a < t - L_t`` to stay exact for large eps).
Hence ``D_{e^eps}(P||Q) = sum_t term_t`` with every ``term_t >= 0``, and, writing ``a_t`` for the
first integer above ``L_t``, ``B(c) = P(C = c)``, ``pm = P(Bin(t-1, 1/2) = a_t - 1)`` and
``S = P(Bin(t-1, 1/2) >= a_t)``:

    term_t = pm [B(t-1)(u - e^eps alpha) + w (1 - e^eps) B(t)/2]
             + S (1 - e^eps) [B(t-1)(u + alpha) + w B(t)]

(using ``P(Bin(t,1/2) >= a) = S + pm/2``). All ``t`` are evaluated at once with scipy (binomial
pmf and the regularised incomplete beta function). Clone counts outside a window that holds all
but ``tail`` of the mass of ``C`` are skipped; their contribution is at most their mass, which
is computed exactly and added to the upper bound (the lower bound just omits them). A further
relative allowance of ``1e-10`` of the summed magnitudes covers floating-point rounding. ``P``
and ``Q`` are mirror images, so ``D(P||Q) = D(Q||P)``.

The lower bound :func:`vr_delta_lower` is a lower bound on the same divergence: the reduction
is attained by worst-case randomizers with these parameters (e.g. balls-into-bins when the two
bins of the victim's values get only blanket balls, the Poisson randomizer of the segmented paper
-- its Proposition 1), so for those it lower-bounds the protocol's true privacy. For single-message
LDP mechanisms the mechanism-specific witnesses (:func:`witness_delta`) give lower bounds on the
mechanism's own worst case: the exact divergence of one concrete pair of neighbouring datasets.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from shuffledp.accountants.numerics.binomial_blocks import blocks as _blocks
from shuffledp.accountants.numerics.clone_counts import binom_pmf, clone_window, half_binom, window_tail
from shuffledp.accountants.numerics.hockey_stick import bisect_eps, bracket_eps
from shuffledp.accountants.numerics.pair_memo import PairMemo
from shuffledp.accountants.validation import (
    AccountantDomainError,
    check_delta,
    check_eps,
    check_int,
    check_n,
    check_positive,
)

__all__ = [
    "VRParams",
    "MECHANISMS",
    "vr_params",
    "vr_delta",
    "vr_delta_lower",
    "vr_delta_bounds",
    "vr_eps",
    "vr_eps_lower",
    "vr_eps_bounds",
    "vr_pair_pmf",
    "clone_delta_bounds",
    "clone_delta_parts",
    "witness_delta",
    "witness_eps",
    "DEFAULT_TAIL",
    "ROUNDING_RTOL",
]

MECHANISMS = ("general", "krr", "subset-exp", "balls-into-bins")
DEFAULT_TAIL = 1e-40     # clone-count mass left outside the evaluated window (added to the upper bound)
ROUNDING_RTOL = 1e-10    # allowance for floating-point rounding, relative to the summed magnitudes
EPS_CAP = 700.0          # e^eps overflows beyond this; larger eps are evaluated at the cap


# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class VRParams:
    """Variation-ratio parameters: ``p`` in (1, inf], ``beta`` in [0, (p-1)/(p+1)], ``q >= 1``.

    Also requires ``2 r <= 1`` with ``r = beta p / ((p-1) q)`` (a blanket message cannot be a
    clone of both values with total probability above one).
    """

    p: float
    beta: float
    q: float

    def __post_init__(self):
        p, beta, q = float(self.p), float(self.beta), float(self.q)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "q", q)
        if math.isnan(p) or not p > 1:
            raise AccountantDomainError("p", f"{p!r} must be > 1 (inf allowed)")
        if math.isnan(q) or not (q >= 1) or math.isinf(q):
            raise AccountantDomainError("q", f"{q!r} must be a finite number >= 1")
        beta_max = 1.0 if math.isinf(p) else (p - 1) / (p + 1)
        if math.isnan(beta) or beta < 0 or beta > beta_max * (1 + 1e-12):
            raise AccountantDomainError("beta", f"{beta!r} must lie in [0, (p-1)/(p+1)] = [0, {beta_max!r}]")
        if 2 * self.r > 1 + 1e-12:
            raise AccountantDomainError("q", f"{q!r} too small: clone probability 2r = {2 * self.r!r} exceeds 1")

    @property
    def alpha(self) -> float:
        """Victim's probability of a clone of the *other* value (0 when p = inf)."""
        return 0.0 if math.isinf(self.p) else self.beta / (self.p - 1)

    @property
    def u(self) -> float:
        """Victim's probability of a clone of its own value: ``p alpha`` (``beta`` when p = inf)."""
        return self.beta if math.isinf(self.p) else self.beta * self.p / (self.p - 1)

    @property
    def w(self) -> float:
        return max(0.0, 1.0 - self.u - self.alpha)

    @property
    def r(self) -> float:
        """Probability that one blanket message is a clone of a given one of the two values."""
        return self.u / self.q

    def with_sampling(self, gamma: float) -> VRParams:
        """Theorem 2: blanket messages kept with probability ``gamma`` -> ratio ``q / gamma``."""
        if not (0 < gamma <= 1):
            raise AccountantDomainError("gamma", f"{gamma!r} must lie in (0, 1]")
        return VRParams(self.p, self.beta, self.q / gamma)


def _pos(x, name):
    return check_positive(x, name)


def _int_at_least(x, name, low):
    return check_int(x, name, low)


def vr_params(mechanism: str, eps0: float | None = None, *, k=None, d=None, s=None,
              variant: str = "sound") -> VRParams:
    """``(p, beta, q)`` of a standard randomizer (table of Wang et al., VLDB 2024).

    ``variant="published"`` returns the table's values. ``variant="sound"`` (default) returns them
    only where the reduction is known to hold, and otherwise the general eps0-LDP parameters
    (always valid: they reproduce the stronger-clone bound of Feldman et al., SODA 2023). Reason:
    when the victim's "neither clone" part differs from the blanket's (k-RR with k >= 4, subset
    exponential), the other output values reveal whether the victim's message was a clone, and
    the published bound can fall below the exact delta -- k-RR, k = 4, eps0 = 1.5, n = 25, others
    holding a third value: exact delta at eps = 0.3 is 0.047397, the published bound 0.047056
    (tests/test_accountants_vr.py). For k = 3 the table value is optimistic too when the others
    hold the victim's values rather than the third one (n = 5, eps0 = 4, delta = 1e-3: published
    3.9578, exact 3.9988; n = 1000, eps0 = 8, delta = 1e-6: published 7.9326, one pair alone
    needs 7.99999). So k-RR uses the general parameters for every k >= 3 (for k = 2
    they coincide), and subset-exp uses the general parameters.

    * ``general`` -- any eps0-LDP randomizer: ``p = q = e^eps0``, ``beta = (e^eps0-1)/(e^eps0+1)``.
    * ``krr`` -- k-ary randomized response (``k >= 2``): ``beta = (e^eps0-1)/(e^eps0+k-1)``.
    * ``subset-exp`` -- the k-subset exponential mechanism of PrivSet on s-item sets of a domain of
      ``d`` items (``k`` = output subset size, ``1 <= k < d``, ``2s <= d``):
      ``beta = (e^eps0-1)(C(d-s,k) - C(d-2s,k)) / (e^eps0 (C(d,k) - C(d-s,k)) + C(d-s,k))``.
      With PrivSet's padding (sets padded to s items with s dummy items) pass the padded domain.
    * ``balls-into-bins`` -- Luo et al. (CCS 2022) with ``d`` bins and ``s`` special bins:
      ``p = inf, beta = 1, q = d/s`` (``eps0`` is not used and must be None).
    """
    if mechanism not in MECHANISMS:
        raise AccountantDomainError("mechanism", f"{mechanism!r} is not one of {', '.join(MECHANISMS)}")
    if variant not in ("sound", "published"):
        raise AccountantDomainError("variant", f"{variant!r} must be 'sound' or 'published'")
    if mechanism == "balls-into-bins":
        return _balls_into_bins_params(eps0, d, s)
    eps0 = _pos(eps0, "eps0")
    if eps0 > EPS_CAP:
        raise AccountantDomainError("eps0", f"{eps0!r} too large (max {EPS_CAP})")
    e = math.exp(eps0)
    if mechanism == "general":
        return VRParams(e, (e - 1) / (e + 1), e)
    if mechanism == "krr":
        k = _int_at_least(k, "k", 2)
        if variant == "sound" and k >= 3:
            return VRParams(e, (e - 1) / (e + 1), e)
        return VRParams(e, (e - 1) / (e + k - 1), e)
    return _subset_exp_params(e, k, d, s, variant)


def _balls_into_bins_params(eps0, d, s) -> VRParams:
    """:func:`vr_params` of balls-into-bins: ``p = inf, beta = 1, q = d/s``."""
    if eps0 is not None:
        raise AccountantDomainError("eps0", "not used by balls-into-bins (its privacy comes from the blanket only)")
    d = _int_at_least(d, "d", 2)
    s = _int_at_least(s, "s", 1)
    if 2 * s > d:
        raise AccountantDomainError("s", f"{s} special bins need 2s <= d = {d}")
    return VRParams(math.inf, 1.0, d / s)


def _subset_exp_params(e: float, k, d, s, variant: str) -> VRParams:
    """:func:`vr_params` of the k-subset exponential mechanism (``e = e^eps0``): the table's
    ``beta`` for ``variant="published"``, the general parameters for ``"sound"``."""
    from scipy import special

    d = _int_at_least(d, "d", 2)
    s = _int_at_least(s, "s", 1)
    k = _int_at_least(k, "k", 1)
    if 2 * s > d:
        raise AccountantDomainError("s", f"{s} needs 2s <= d = {d} (two disjoint input sets)")
    if k >= d:
        raise AccountantDomainError("k", f"{k} must be < d = {d}")
    c = special.comb
    beta = (e - 1) * (c(d - s, k) - c(d - 2 * s, k)) / (e * (c(d, k) - c(d - s, k)) + c(d - s, k))
    beta = min(beta, (e - 1) / (e + 1))
    if variant == "sound":
        return VRParams(e, (e - 1) / (e + 1), e)
    return VRParams(e, beta, e)


# ----------------------------------------------------------------------------- core
_LOCAL = threading.local()


def _half_binom_memo() -> PairMemo:
    """This thread's memo of :func:`half_binom` by ``(t, a)``: an eps search evaluates one clone-count
    window at eps after eps, whose thresholds ``a`` move at few counts ``t`` from one eps to the
    next; the memo computes only the pairs the previous call did not (scipy's binomial pmf and
    ``betainc`` are elementwise: the same bits, ``tests/test_pair_memo.py``). One per thread: a
    search on a background thread (``best``) never reads a memo another thread is writing."""
    memo = getattr(_LOCAL, "half", None)
    if memo is None:
        memo = _LOCAL.half = PairMemo(half_binom, 2)
    return memo


def clone_delta_parts(u: float, alpha: float, w: float, r: float, N: int, eps: float,
                      tail: float = DEFAULT_TAIL) -> tuple[float, float, float]:
    """``(estimate, rounding_allowance, skipped_mass)`` of ``D_{e^eps}(P||Q)``: the windowed sum,
    the floating-point allowance and the clone-count mass outside the window (see
    :func:`clone_delta_bounds`)."""
    beta = u - alpha
    if beta <= 0:
        return 0.0, 0.0, 0.0
    eps = min(float(eps), EPS_CAP)
    ee = math.exp(eps)
    pc = min(1.0, 2.0 * r)
    t, b_prev, b_here, skipped = clone_window(int(N), pc, float(tail))
    tf = t.astype(float)
    one_m_2r = 1.0 - pc
    # a > L_t  <=>  b = t - a < G_t = t - L_t, computed without forming t - (tiny) so that large
    # eps (e^eps / (1 + e^eps) rounding to 1) cannot drop the b = 0 cells: b_max = ceil(G) - 1
    gap = tf * (beta + alpha * (1.0 - ee)) / (beta * (1.0 + ee))
    num = r * (N - tf + 1.0) * w * (ee - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        extra = np.where(num <= 0, 0.0, num / (one_m_2r * beta * (1.0 + ee)) if one_m_2r > 0 else np.inf)
    G = gap - extra
    b_max = np.where(G > tf + 1.0, tf + 1.0, np.ceil(np.maximum(G, -1.0)) - 1.0)
    a = np.maximum(t - b_max.astype(np.int64), 0)
    pm, S = _half_binom_memo()(t, a)
    x_pos = b_prev * (u - ee * alpha)
    x_neg = w * (1.0 - ee) * b_here / 2.0
    y = (1.0 - ee) * (b_prev * (u + alpha) + w * b_here)
    term = pm * (x_pos + x_neg) + S * y
    magnitude = float(np.sum(pm * (np.abs(x_pos) + np.abs(x_neg)) + S * np.abs(y)))
    total = float(np.sum(np.maximum(term, 0.0)))
    return total, ROUNDING_RTOL * magnitude, skipped


WINDOW_MAX = 200_000     # clone counts evaluated one by one up to this window length, else blocks


def _window_length(N: int, pc: float, tail: float) -> float:
    """Rough length of the clone-count window of ``Bin(N, pc)`` (decides the evaluation mode)."""
    if pc <= 0.0 or pc >= 1.0 or N == 0:
        return 1.0
    return 2.0 * math.sqrt(2.0 * math.log(1.0 / tail)) * math.sqrt(N * pc * (1.0 - pc)) + 4.0


def use_blocks(N: int, pc: float, tail: float, window_max: int | None = None) -> bool:
    """True when the window is too long to evaluate clone count by clone count (longer than
    ``window_max``, default :data:`WINDOW_MAX`)."""
    return _window_length(N, pc, tail) > (WINDOW_MAX if window_max is None else window_max)


def blocked_delta_bounds(u: float, alpha: float, w: float, r: float, N: int, eps: float,
                         tail: float = DEFAULT_TAIL) -> tuple[float, float]:
    """(lower, upper) on ``D_{e^eps}(P||Q)`` for huge ``N`` with a fixed cost.

    The adversary is also told the clone count ``C`` and whether the victim's message is a clone
    (joint convexity: an upper bound); given ``C = c`` and a clone, the pair is the clones pair of
    mixing probability ``u/(u+alpha)`` (:func:`shuffledp.accountants.upper.clones._divergence_per_count`),
    whose divergence ``D_c`` does not increase with ``c`` (one more clone is a post-processing).
    Blocks of counts are charged ``D`` at their first count (upper) or last count (lower); the
    mass outside the blocks is charged in full to the upper bound; a rounding allowance covers
    the block masses (binomial cdf differences). When ``w = 0`` (the general parameters,
    balls-into-bins) telling the adversary ``C`` gives nothing away (``t = C + 1``), so the upper
    bound is the reduction's value up to blocking; when ``w > 0`` the lower bound is 0."""
    from shuffledp.accountants.upper.clones import _divergence_per_count

    beta = u - alpha
    if beta <= 0:
        return 0.0, 0.0
    eps = min(float(eps), EPS_CAP)
    pc = min(1.0, 2.0 * r)
    first, last, mass, scale, outside = _blocks(int(N), pc, float(tail))
    s = u + alpha
    p, p_bar = u / s, alpha / s
    d_up = s * _divergence_per_count(first, p, p_bar, eps)
    d_lo = s * _divergence_per_count(last, p, p_bar, eps, side="lower")
    rounding = 1e-14 * float(np.dot(scale, d_up)) + ROUNDING_RTOL * float(np.dot(mass, d_up))
    upper = float(np.dot(mass, d_up)) + rounding + outside
    # with w > 0: P = (1-w) P' + w N, Q = (1-w) Q' + w N, so D(P||Q) >= (1-w) D(P'||Q') - w (e^eps - 1)
    lower = (1.0 - w) * (float(np.dot(mass, d_lo)) - rounding) - w * math.expm1(eps)
    return max(0.0, lower), min(1.0, upper)


def clone_delta_bounds(u: float, alpha: float, w: float, r: float, N: int, eps: float,
                       tail: float = DEFAULT_TAIL) -> tuple[float, float]:
    """(lower, upper) bounds on ``D_{e^eps}(P||Q)`` for victim probabilities (u, alpha, w),
    clone probability ``r`` per blanket message (each of the two clone types) and ``N`` blanket
    messages. ``beta = u - alpha``. The generic core behind :func:`vr_delta` and the Poisson
    accountant."""
    total, slack, skipped = clone_delta_parts(u, alpha, w, r, N, eps, tail)
    return max(0.0, total - slack), min(1.0, total + slack + skipped)


def _check_n(n) -> int:
    return check_n(n, low=1)


def _check_eps(eps) -> float:
    return check_eps(eps)


def _check_delta(delta) -> float:
    return check_delta(delta)


def _check_params(params) -> VRParams:
    if not isinstance(params, VRParams):
        raise AccountantDomainError("params", f"expected VRParams, got {type(params).__name__}")
    return params


def vr_delta_bounds(params: VRParams, n: int, eps: float, *, tail: float = DEFAULT_TAIL) -> tuple[float, float]:
    """(lower, upper) on ``D_{e^eps}(P^{q,n}_{p,beta} || Q^{q,n}_{p,beta})`` (n users, n-1 blankets)."""
    params = _check_params(params)
    n = _check_n(n)
    eps = _check_eps(eps)
    args = (params.u, params.alpha, params.w, params.r, n - 1, eps, tail)
    if use_blocks(n - 1, min(1.0, 2.0 * params.r), tail):
        return blocked_delta_bounds(*args)
    return clone_delta_bounds(*args)


def vr_delta(params: VRParams, n: int, eps: float, *, tail: float = DEFAULT_TAIL) -> float:
    """Upper bound on the shuffled delta at ``eps`` for ``n`` users (Theorem 1)."""
    return vr_delta_bounds(params, n, eps, tail=tail)[1]


def vr_delta_lower(params: VRParams, n: int, eps: float, *, tail: float = DEFAULT_TAIL) -> float:
    """Lower bound on the reduction's divergence (equal to :func:`vr_delta` up to truncation)."""
    return vr_delta_bounds(params, n, eps, tail=tail)[0]


def _eps_max(params: VRParams) -> float:
    return EPS_CAP if math.isinf(params.p) else math.log(params.p)


def eps_guess(params: VRParams, n: int, delta: float) -> float:
    """Order-of-magnitude start from the asymptotic bound (1) of the paper (only a search start)."""
    ratio = 1.0 if math.isinf(params.p) else (params.p - 1) / params.p
    return math.sqrt(params.beta * ratio * params.q * math.log(1 / delta) / max(n - 1, 1))


def _solve_eps(delta_fn, params: VRParams, n: int, delta: float, rtol: float, search_fn=None,
               search_target=None) -> tuple[float, float]:
    fn = lru_cache(maxsize=None)(delta_fn)
    eps_max = _eps_max(params)
    if fn(0.0) <= delta:            # total variation already below delta (huge n)
        return 0.0, 0.0
    lo, hi = bracket_eps(fn, delta, eps_guess(params, n, delta), eps_max)
    if lo == 0.0 and fn(0.0) <= delta:
        return 0.0, 0.0
    return bisect_eps(fn, delta, hi, rtol, eps_lo=lo, search_fn=search_fn, search_target=search_target)


def vr_solvers(params: VRParams, n: int, tail: float, window_max: int | None = None):
    """``(upper, lower, central, outside)``: functions of eps giving the upper and lower bounds on
    the reduction's delta and its central (evaluated) part, and the mass left outside the window
    (in blocks above ``window_max`` clone counts)."""
    args = (params.u, params.alpha, params.w, params.r, n - 1)
    pc = min(1.0, 2.0 * params.r)
    if params.beta > 0 and use_blocks(n - 1, pc, tail, window_max):
        outside = _blocks(n - 1, pc, float(tail))[4]

        @cache
        def bounds(e):
            return blocked_delta_bounds(*args, e, tail)

        def central_b(e):
            return max(0.0, bounds(e)[1] - outside)

        return (lambda e: bounds(e)[1]), (lambda e: bounds(e)[0]), central_b, outside

    @cache
    def parts(e):
        return clone_delta_parts(*args, e, tail)

    def up(e):
        t, sl, sk = parts(e)
        return min(1.0, t + sl + sk)

    def low(e):
        t, sl, _ = parts(e)
        return max(0.0, t - sl)

    def central(e):
        return parts(e)[0]

    skipped = clone_window(n - 1, min(1.0, 2.0 * params.r), float(tail))[3] if params.beta > 0 else 0.0
    return up, low, central, skipped


def vr_eps_bounds(params: VRParams, n: int, delta: float, *, rtol: float = 1e-6) -> tuple[float, float]:
    """(eps_lower, eps_upper): ``eps_upper`` is the smallest eps (rounded up, relative precision
    ``rtol``) whose *upper* delta bound meets ``delta``; ``eps_lower`` the largest eps (rounded
    down) whose *lower* delta bound still exceeds ``delta`` -- the reduction's true eps lies between.
    ``inf`` when no finite eps meets delta (possible only for p = inf)."""
    params = _check_params(params)
    n = _check_n(n)
    delta = _check_delta(delta)
    tail = window_tail(delta, rtol)
    up, low, central, skipped = vr_solvers(params, n, tail)
    eps_up = _solve_eps(up, params, n, delta, rtol, central, delta - skipped)[1]
    lo_b, hi_b = _solve_eps(low, params, n, delta, rtol, central, delta)
    eps_low = lo_b if hi_b > lo_b else hi_b
    return min(eps_low, eps_up), eps_up


def vr_eps(params: VRParams, n: int, delta: float, *, rtol: float = 1e-6,
           window_max: int | None = None) -> float:
    """Amplified eps of the variation-ratio bound at ``delta`` (an upper bound; rel. precision rtol).
    ``window_max``: clone-count windows longer than this are evaluated in blocks (a fixed cost,
    slightly looser; default :data:`WINDOW_MAX`)."""
    params = _check_params(params)
    n = _check_n(n)
    delta = _check_delta(delta)
    tail = window_tail(delta, rtol)
    up, _, central, skipped = vr_solvers(params, n, tail, window_max)
    return _solve_eps(up, params, n, delta, rtol, central, delta - skipped)[1]


def vr_eps_lower(params: VRParams, n: int, delta: float, *, rtol: float = 1e-6) -> float:
    """Lower bound on the reduction's eps at ``delta`` (rounded down)."""
    return vr_eps_bounds(params, n, delta, rtol=rtol)[0]


def vr_pair_pmf(params: VRParams, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The 2-D pmfs of ``P`` and ``Q`` (indexed [a, b], a, b = 0..n) by direct enumeration of the
    random variables of Theorem 1. For small ``n`` only (tests, independent checks)."""
    from scipy import stats

    params = _check_params(params)
    n = _check_n(n)
    if n > 3000:
        raise AccountantDomainError("n", f"{n} too large for direct enumeration (max 3000)")
    N = n - 1
    r = params.r
    c = np.arange(N + 1)
    pc = min(1.0, 2 * r)
    bc = binom_pmf(c, N, pc)
    M = np.zeros((n + 1, n + 1))     # others: (A, C - A)
    for cc in range(N + 1):
        if bc[cc] == 0:
            continue
        A = np.arange(cc + 1)
        M[A, cc - A] += bc[cc] * stats.binom.pmf(A, cc, 0.5)
    u, al, w = params.u, params.alpha, params.w
    P = w * M
    Q = w * M.copy()
    P[1:, :] += u * M[:-1, :]
    P[:, 1:] += al * M[:, :-1]
    Q[1:, :] += al * M[:-1, :]
    Q[:, 1:] += u * M[:, :-1]
    return P, Q


# ----------------------------------------------------------------------------- witnesses
def _witness_probs(mechanism: str, eps0: float, *, k=None, d=None, s=None) -> tuple[float, ...]:
    """(a1, a0, b, 1 - a1, 1 - a0): a 0/1 statistic of one output ("hits value x1") with
    probability a1 for the victim on x1, a0 on x0, and b (= a0) for every other user holding x0;
    the complements are computed without cancellation."""
    from scipy import special

    e = math.exp(eps0)
    if mechanism == "general":  # binary randomized response, others hold 0, count ones
        return e / (e + 1), 1 / (e + 1), 1 / (e + 1), 1 / (e + 1), e / (e + 1)
    if mechanism == "krr":
        k = _int_at_least(k, "k", 2)
        return e / (e + k - 1), 1 / (e + k - 1), 1 / (e + k - 1), (k - 1) / (e + k - 1), (e + k - 2) / (e + k - 1)
    if mechanism == "subset-exp":
        d = _int_at_least(d, "d", 2)
        s = _int_at_least(s, "s", 1)
        k = _int_at_least(k, "k", 1)
        c = special.comb
        omega = e * (c(d, k) - c(d - s, k)) + c(d - s, k)
        a1 = e * (c(d, k) - c(d - s, k)) / omega
        both = c(d, k) - 2 * c(d - s, k) + c(d - 2 * s, k)   # k-subsets meeting x0 and x1
        only1 = c(d - s, k) - c(d - 2 * s, k)                # meeting x1, not x0
        a0 = (e * both + only1) / omega
        return a1, a0, a0, c(d - s, k) / omega, (e * (c(d - s, k) - c(d - 2 * s, k)) + c(d - 2 * s, k)) / omega
    raise AccountantDomainError("mechanism", f"no witness for {mechanism!r}")


def witness_delta(mechanism: str, eps0: float, n: int, eps: float, *, k=None, d=None, s=None,
                  tail: float = DEFAULT_TAIL) -> float:
    """Lower bound on the worst-case shuffled delta of the *mechanism* at ``eps``: the largest
    exact divergence (both directions) of a count statistic over the searched neighbouring pairs
    (:mod:`shuffledp.accountants.lower.lower_bounds`). k-RR: the others hold the victim's first or
    second value (or a split); ``general``: k-RR with k = 2 and 3 (both are eps0-LDP, so they
    lower-bound the class); subset-exp: the others all hold the victim's first or all its second
    set, the statistic "outputs hitting the second set". A statistic only loses information, so
    this never exceeds the mechanism's true delta. ``tail`` is kept for compatibility (unused:
    the one-binomial pairs are evaluated in closed form)."""
    from shuffledp.accountants.lower import lower_bounds as lbm

    if mechanism == "balls-into-bins":
        raise AccountantDomainError("mechanism", "use vr_delta_lower for balls-into-bins (the reduction is attained)")
    eps0 = _pos(eps0, "eps0")
    n = _check_n(n)
    eps = min(_check_eps(eps), EPS_CAP)
    if n < 2:
        return 0.0
    if mechanism in ("general", "krr"):
        ks = (2, 3) if mechanism == "general" else (_int_at_least(k, "k", 2),)
        return max(lbm.krr_pair_delta(kk, eps0, n, eps, m) for kk in ks for m in lbm.split_candidates(n - 1))
    a1, a0, b, c1, c0 = _witness_probs(mechanism, eps0, k=k, d=d, s=s)
    if n - 1 >= lbm.EXACT_N_MAX:
        return 0.0
    return max(lbm.count_pair_delta(a1, a0, bb, n - 1, eps, c1=c1, c0=c0, b_bar=cc)
               for bb, cc in ((b, c0), (a1, c1)))


def witness_eps(mechanism: str, eps0: float, n: int, delta: float, *, k=None, d=None, s=None,
                rtol: float = 1e-6) -> float:
    """Lower bound on the mechanism's shuffled eps at ``delta`` (rounded down): the worst pair
    found (see :func:`witness_delta`; k-RR: :func:`shuffledp.accountants.lower.lower_bounds.krr_eps_lower`)."""
    from shuffledp.accountants.lower import lower_bounds as lbm

    delta = _check_delta(delta)
    eps0 = _pos(eps0, "eps0")
    n = _check_n(n)
    if mechanism == "balls-into-bins":
        raise AccountantDomainError("mechanism", "use vr_eps_lower for balls-into-bins (the reduction is attained)")
    if n < 2:
        return 0.0
    if mechanism in ("general", "krr"):
        ks = (2, 3) if mechanism == "general" else (_int_at_least(k, "k", 2),)
        return max(lbm.krr_eps_lower(kk, eps0, n, delta, rtol=rtol) for kk in ks)
    _witness_probs(mechanism, eps0, k=k, d=d, s=s)   # validates d, s, k

    def fn(e):
        return witness_delta(mechanism, eps0, n, e, k=k, d=d, s=s)

    lo, hi = bisect_eps(fn, delta, eps0, rtol)
    return lo
