"""Poisson randomizer with a random number of blanket messages (segmented-shuffle paper, Sec. 5.1).

Algorithm 2 of the paper: a user at level k reports each of its ``s`` items with probability
``lambda`` (the Poisson randomizer); every user also makes ``ceil(m)`` blanket trials, each sending
with probability ``gamma = m / ceil(m)`` one item uniform over the ``d`` items.

* Theorem 2 (random blanket count): Bernoulli(gamma) thinning of the blanket messages is the
  variation-ratio reduction with ratio ``q / gamma``; ``n`` users with ``ceil(m)`` trials each give
  ``n' = n ceil(m)`` in the notation of Theorem 1.
* Lemma 3 (Poisson randomizer): ``p = +inf, beta = lambda, q = d lambda``. So a blanket message is a
  clone of each of the victim's two items with probability ``r = beta / (q / gamma) = gamma / d``
  -- independent of lambda -- and the victim emits a clone of its own item with probability
  ``lambda`` and nothing otherwise.
* Theorem 3 (group privacy over the ``s`` items): if one item is ``(eps', delta')``-protected, the
  user is ``(s eps', s e^{s eps'} delta')``-protected. Conversely a user target ``(eps, delta)``
  needs ``D_{e^{eps/s}}(P || Q) <= delta / (s e^eps)`` -- constraint (7) of the paper.
* Proposition 1 (lower bound): for ``s = 1`` there are neighbouring datasets whose output pair of
  counts is exactly the reduction's pair with ``n' = n ceil(m) + 1`` (``n ceil(m)`` blanket trials
  besides the victim's message). Theorem 3 as printed uses ``n' = n ceil(m)``, one blanket trial
  fewer than exist (conservative for the pair). ``blanket_geometry(theorem=...)`` gives either.
  But the pair is not all the adversary sees -- see below.

``m = 0`` (no blanket messages) is handled as its limit: no clones, ``D = lambda``.

Every accountant here bounds one step, one item replaced by another; group privacy covers a user
whose set changes only if every user holds exactly ``s`` items. Users with fewer items must hold
items of a padding domain that are sent like any item, and ``d`` is then the padded domain ``d + s``
(blankets are drawn over it): padding that is never sent makes the message count depend on the set
size, which no step covers (:mod:`shuffledp.mechanisms.poisson_set`, docs/segmented.md).

Soundness finding (tests/test_accountants_poisson.py, docs/accountants_internals.md)
--------------------------------------------------------------------------
Lemma 3 models the Poisson randomizer's "no message" as the victim's non-clone output, but the
shuffled output also shows *how many* messages there are. When that count is (nearly)
deterministic -- integer ``m`` (every user sends exactly ``m`` blanket messages) and the other users'
data messages fixed in number, e.g. all of them at a level with ``lambda = 1`` -- it tells the
adversary whether the victim sent a message, and the exact divergence of the (Lemma 2-simplified)
output is ``lambda * D_{e^eps}((B0 + 1, B1) || (B0, B1 + 1))`` with ``(B0, B1)`` the blanket counts
of the two items: up to about twice Theorem 3's value (exact enumeration: n = 6, m = 1, d = 4,
lambda = 0.5, eps' = 0.5 gives 0.1515 against Theorem 3's 0.0876). For non-integer m the count is
random but still informative: n = 5, m = 2.5, d = 4, lambda = 0.2, eps' = 1.5 gives 3.5e-4 against
Theorem 3's 2.2e-8. Hence four accountants:

* ``"sound"`` (default): the exact divergence of the simplified output *with* the message count
  (:func:`_exact_parts`): cells (clone total ``t``, number ``Z`` of blanket trials that sent
  nothing), threshold ``c0 > e t/(1+e) + kappa Z``, cells with the same threshold summed by
  binomial cdf differences; truncated mass added. Equal to brute-force enumeration to ~1e-10
  (tests); for integer m it equals ``"indicator"``. An upper bound for Algorithm 2 by Lemma 2.
* ``"indicator"``: reveal the victim's send indicator (only adds information):
  ``delta' = lambda * D(P^{d/gamma, n ceil(m) + 1}_{inf, 1} || Q...)``. Valid, closed form in lambda,
  exact for integer m, loose otherwise.
* ``"paper"``: Theorem 3 as printed (``n' = n ceil(m)``, ``beta = lambda``): optimistic; kept to
  reproduce the paper's parameters, labelled as such.
* ``"pair"``: Proposition 1's pair (``n' = n ceil(m) + 1``): a lower bound on the protocol's delta.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from shuffledp.accountants.numerics.clone_counts import clone_window, half_binom, window_tail
from shuffledp.accountants.numerics.grid_search import grid_switch, warm_bracket
from shuffledp.accountants.numerics.hockey_stick import smallest_rate
from shuffledp.accountants.numerics.pair_memo import PairMemo
from shuffledp.accountants.upper.variation_ratio import EPS_CAP, ROUNDING_RTOL, VRParams, clone_delta_parts
from shuffledp.accountants.validation import POISSON_N_MAX, AccountantDomainError, check_delta, check_int

__all__ = [
    "ACCOUNTANTS",
    "single_item_parts",
    "blanket_geometry",
    "random_blanket_params",
    "poisson_vr_params",
    "group_privacy",
    "single_item_target",
    "poisson_delta_bounds",
    "poisson_delta",
    "poisson_delta_lower",
    "poisson_user_delta",
    "poisson_lambda",
    "solve_poisson_lambda",
    "PoissonLambda",
    "min_blanket_rate",
    "LAMBDA_RTOL",
]

LAMBDA_RTOL = 1e-4
POISSON_TAIL = 1e-15   # default skipped clone-count mass (added to every upper bound)
ACCOUNTANTS = ("sound", "indicator", "paper", "pair")


def _check_m(m) -> float:
    m = float(m)
    if not (math.isfinite(m) and m >= 0):
        raise AccountantDomainError("m", f"{m!r} must be a finite number >= 0")
    return m


def _check_lambda(lam) -> float:
    lam = float(lam)
    if not (0.0 <= lam <= 1.0):
        raise AccountantDomainError("lambda", f"{lam!r} must lie in [0, 1]")
    return lam


def _check_eps(eps, name="eps") -> float:
    eps = float(eps)
    if not (math.isfinite(eps) and eps > 0):
        raise AccountantDomainError(name, f"{eps!r} must be a finite number > 0")
    return eps


def blanket_geometry(n: int, m: float, *, theorem: str = "paper") -> tuple[int, float]:
    """``(n_prime, gamma)`` of Theorem 2/3: ``n' = n ceil(m)`` (paper) or ``n ceil(m) + 1``
    (tight, Proposition 1) and ``gamma = m / ceil(m)``. ``m = 0``: ``(1, 0)`` (no blankets)."""
    n = check_int(n, "n", 1, POISSON_N_MAX)
    m = _check_m(m)
    if theorem not in ("paper", "tight"):
        raise AccountantDomainError("theorem", f"{theorem!r} must be 'paper' or 'tight'")
    if m == 0:
        return 1, 0.0
    cm = math.ceil(m)
    return n * cm + (1 if theorem == "tight" else 0), m / cm


def random_blanket_params(params: VRParams, n: int, m: float, *, theorem: str = "paper") -> tuple[VRParams, int]:
    """Theorem 2: a randomizer with ``params`` and ``ceil(m)`` blanket trials per user at rate
    ``gamma`` -> ``(VRParams(p, beta, q / gamma), n')`` for :func:`vr_delta`."""
    n_prime, gamma = blanket_geometry(n, m, theorem=theorem)
    if gamma == 0:
        raise AccountantDomainError("m", "must be > 0 for the random-blanket reduction")
    return params.with_sampling(gamma), n_prime


def poisson_vr_params(lam: float, d: int) -> tuple[float, float, float]:
    """Lemma 3: ``(p, beta, q) = (inf, lambda, d lambda)`` of the Poisson randomizer (a tuple:
    ``q = d lambda`` may be below 1, outside :class:`VRParams`'s range, and the reduction is still
    valid since only ``r = beta / q = 1/d`` enters)."""
    lam = _check_lambda(lam)
    d = check_int(d, "d", 2)
    return math.inf, lam, d * lam


def group_privacy(eps_single: float, delta_single: float, s: int) -> tuple[float, float]:
    """Lemma 1 / Theorem 3: ``(s eps', s e^{s eps'} delta')``."""
    s = check_int(s, "s", 1)
    eps_single = float(eps_single)
    if not (eps_single >= 0):
        raise AccountantDomainError("eps_single", f"{eps_single!r} must be >= 0")
    return s * eps_single, min(1.0, s * math.exp(s * eps_single) * float(delta_single))


def single_item_target(eps: float, delta: float, s: int) -> tuple[float, float]:
    """Per-item target of constraint (7): ``(eps / s, delta / (s e^eps))``."""
    s = check_int(s, "s", 1)
    eps = _check_eps(eps)
    delta = check_delta(delta)
    return eps / s, delta / (s * math.exp(eps))


def _cdf_fast(k, n, p):
    """Binomial cdf (Boost, through ``stats.binom.cdf``) as a float array; only called with valid
    arguments 0 <= k < n, 0 < p < 1."""
    from scipy import stats

    return np.asarray(stats.binom.cdf(np.asarray(k, dtype=float), np.asarray(n, dtype=float), float(p)))


@lru_cache(maxsize=256)
def _exact_window(T: int, g: float, d: int, tail: float):
    """Windows of the blanket clone count C ~ Bin(T, 2g/d) and of the count of trials that send
    nothing, ``none ~ Bin(T, 1-g)``, with the exactly computed masses left outside."""
    from scipy import stats

    pc = 2.0 * g / d
    t, b_prev, b_here, skipped_c = clone_window(T, pc, tail)
    q_none = 1.0 - g
    mean, sd = T * q_none, math.sqrt(T * q_none * g)
    z = math.sqrt(2 * math.log(1 / tail))
    z_lo = max(0, int(math.floor(mean - z * sd)) - 2)
    z_hi = min(T, int(math.ceil(mean + z * sd)) + 2)
    while z_lo > 0 and stats.binom.cdf(z_lo - 1, T, q_none) > tail:
        z_lo = max(0, z_lo - int(sd) - 1)
    while z_hi < T and stats.binom.sf(z_hi, T, q_none) > tail:
        z_hi = min(T, z_hi + int(sd) + 1)
    skipped_z = (float(stats.binom.cdf(z_lo - 1, T, q_none)) if z_lo > 0 else 0.0) + (
        float(stats.binom.sf(z_hi, T, q_none)) if z_hi < T else 0.0)
    return t, b_prev, b_here, z_lo, z_hi, skipped_c + skipped_z


MAX_PAIRS = 40000  # above this many (t, a) cells per evaluation, Z is grouped (upper/lower bracket)


_MEMOS: OrderedDict[tuple, PairMemo] = OrderedDict()
_MEMOS_KEPT = 8    # memos kept, the most recently used (the levels of one m share a rate rho)


def _memo(key: tuple, fn, n_out: int) -> PairMemo:
    """The memo of ``fn`` named ``key`` (made on first use; the least recently used dropped)."""
    memo = _MEMOS.get(key)
    if memo is None:
        memo = _MEMOS[key] = PairMemo(fn, n_out)
        while len(_MEMOS) > _MEMOS_KEPT:
            _MEMOS.popitem(last=False)
    else:
        _MEMOS.move_to_end(key)
    return memo


def _cdf_memo(rho: float) -> PairMemo:
    """The memo of ``P(Bin(n, rho) <= k)`` by ``(n, k)``."""
    return _memo(("cdf", rho), lambda n, k: (_cdf_fast(k, n, rho),), 1)


def _binom_cdf(k, nn, rho):
    """``P(Bin(nn, rho) <= k)`` elementwise (1 where ``k >= nn``, 0 where ``k < 0``); ``k`` and
    ``nn`` integer arrays. The values between come from scipy's binomial cdf, through a memo."""
    out = np.zeros(k.shape, dtype=float)
    full = k >= nn
    out[full] = 1.0
    mid = (k >= 0) & ~full
    if mid.any():
        out[mid] = _cdf_memo(float(rho))(nn[mid], k[mid])[0]
    return out


def _exact_cells(t, base, kappa, a_lo, counts, z_lo, zmax, max_pairs):
    """The (t, threshold a, Z range [zl, zh]) cells of :func:`_exact_parts`: one per distinct
    threshold of each t, or (``grouped``, more than ``max_pairs`` of them) one per Z group of each t
    at the group's smallest threshold. Returns ``(grouped, idx, offs, a, zl, zh)``, ``idx`` the
    index into ``t`` and ``offs`` the position of the cell within its t."""
    grouped = int(counts.sum()) > max_pairs
    if not grouped:
        idx = np.repeat(np.arange(t.size), counts)
        offs = np.arange(idx.size) - np.repeat(np.cumsum(counts) - counts, counts)
        a = a_lo[idx] + offs
        bt = base[idx]
        if kappa > 0:
            zl = np.maximum(z_lo, np.ceil((a - 1 - bt) / kappa)).astype(np.int64)
            zh = np.minimum(zmax, np.ceil((a - bt) / kappa) - 1).astype(np.int64)
        else:
            zl = np.full(idx.size, z_lo, dtype=np.int64)
            zh = np.full(idx.size, zmax, dtype=np.int64)
    else:
        n_groups = max(2, max_pairs // max(t.size, 1))
        edges = np.unique(np.linspace(z_lo, zmax + 1, n_groups + 1).astype(np.int64))
        g_lo, g_hi = edges[:-1], edges[1:] - 1
        idx = np.repeat(np.arange(t.size), g_lo.size)
        offs = np.tile(np.arange(g_lo.size), t.size)
        zl, zh = g_lo[offs], g_hi[offs]
        a = np.floor(base[idx] + kappa * zl).astype(np.int64) + 1
    return grouped, idx, offs, a, zl, zh


def _cell_weights(T, tt, idx, offs, zl, zh, b_prev, b_here, rho):
    """``(w1, w0)``: the weights of every cell with the victim sending (``B1``) and silent (``B0``)."""
    ok = zh >= zl
    # consecutive cells of one t share Z boundaries: evaluate the cdfs once at every upper end and
    # once at each t's first lower end, then difference.
    first = offs == 0
    zh_eff = np.where(ok, zh, zl - 1)
    n1 = np.maximum(T - (tt - 1), 0).astype(np.int64)
    n0 = np.maximum(T - tt, 0).astype(np.int64)
    # one batch: the upper ends with the victim sending and silent, then each t's first lower ends
    zf = zl[first]
    ks = np.concatenate([zh_eff, zh_eff - 1, zf - 1, zf - 2]).astype(np.int64)
    cdf = _binom_cdf(ks, np.concatenate([n1, n0, n1[first], n0[first]]), rho)
    size, nf = zh_eff.size, zf.size
    up1, up0 = cdf[:size], cdf[size:2 * size]
    low1 = np.empty_like(up1)
    low0 = np.empty_like(up0)
    low1[1:], low0[1:] = up1[:-1], up0[:-1]
    low1[first] = cdf[2 * size:2 * size + nf]
    low0[first] = cdf[2 * size + nf:]
    w1 = np.maximum(np.where(tt - 1 >= 0, b_prev[idx] * (up1 - low1), 0.0), 0.0)
    w0 = np.maximum(b_here[idx] * (up0 - low0), 0.0)
    return w1, w0


def _cells_sum(pm, S, u, w, ee, w1, w0_used):
    """``(sum of the positive parts, magnitude)`` of the cells' ``P - e Q`` for weights w1, w0_used."""
    x = u * w1 + w * (1.0 - ee) * w0_used / 2.0
    y = (1.0 - ee) * (u * w1 + w * w0_used)
    term = pm * x + S * y
    mag = float(np.sum(pm * (u * w1 + w * (ee - 1.0) * w0_used / 2.0) + S * np.abs(y)))
    return float(np.sum(np.maximum(term, 0.0))), mag


@lru_cache(maxsize=4096)
def _exact_parts(lam: float, T: int, g: float, d: int, eps: float, tail: float, max_pairs: int = MAX_PAIRS):
    """Exact delta of the Lemma 2-simplified output *including the message count*: the victim's
    Poisson message (prob. ``lam``) plus ``T`` blanket trials (send with prob. ``g``, uniform item),
    observed as (count of j0, count of j1, count of other items).

    Cells (t = c0 + c1, Z = number of blanket trials that sent nothing) have weights
    ``B1 = P(C = t-1, none = Z)`` (victim sent) and ``B0 = P(C = t, none = Z-1) = B1 Z pc/((1-g) t)``
    (victim silent); ``P - e Q > 0`` exactly when ``c0 > e t/(1+e) + kappa Z`` (e = e^eps). Cells of
    one t with the same threshold are summed with binomial cdf differences of ``none | C``, so the
    cost is (t window) x (distinct thresholds). When that exceeds ``max_pairs`` (m just below an
    integer: 1 - g small), Z is cut into groups and each group is bounded above by its smallest
    ratio B0/B1 and below by its smallest threshold with exact weights; the result is returned as
    midpoint +- half-width, so ``estimate + allowance`` stays an upper bound."""
    if lam <= 0:
        return 0.0, 0.0, 0.0
    eps = min(float(eps), EPS_CAP)
    ee = math.exp(eps)
    u, w = lam, 1.0 - lam
    pc = 2.0 * g / d
    t, b_prev, b_here, z_lo, z_hi, skipped = _exact_window(T, g, d, tail)
    tf = t.astype(float)
    base = ee * tf / (1.0 + ee)
    kappa = w * (ee - 1.0) * pc / (2.0 * u * (1.0 - g) * (1.0 + ee))
    zmax = z_hi + 1
    a_lo = np.floor(base + kappa * z_lo).astype(np.int64) + 1
    a_hi = np.minimum(np.floor(base + kappa * zmax).astype(np.int64) + 1, t)
    counts = np.maximum(a_hi - a_lo + 1, 0)
    rho = (1.0 - g) / (1.0 - pc)
    grouped, idx, offs, a, zl, zh = _exact_cells(t, base, kappa, a_lo, counts, z_lo, zmax, max_pairs)
    tt = t[idx]
    w1, w0 = _cell_weights(T, tt, idx, offs, zl, zh, b_prev, b_here, rho)
    pm, S = _memo(("half", eps), half_binom, 2)(tt, a)
    exact_total, magnitude = _cells_sum(pm, S, u, w, ee, w1, w0)
    slack = ROUNDING_RTOL * magnitude + 64 * np.finfo(float).eps * float(b_prev.sum() + b_here.sum())
    if not grouped:
        return exact_total, slack, skipped
    # upper bound of each group: replace B0 by (smallest ratio in the group) x B1
    ratio_lo = np.where(tt > 0, zl * pc / ((1.0 - g) * np.maximum(tt, 1)), 0.0)
    upper_total, mag_u = _cells_sum(pm, S, u, w, ee, w1, ratio_lo * w1)
    upper_total = max(upper_total, exact_total)
    slack = max(slack, ROUNDING_RTOL * mag_u + 64 * np.finfo(float).eps * float(b_prev.sum() + b_here.sum()))
    half = 0.5 * (upper_total - exact_total)
    return exact_total + half, slack + half, skipped


def _check_accountant(accountant: str) -> str:
    if accountant not in ACCOUNTANTS:
        raise AccountantDomainError("accountant", f"{accountant!r} is not one of {', '.join(ACCOUNTANTS)}")
    return accountant


def single_item_parts(lam: float, n: int, m: float, d: int, eps_single: float, *,
                      accountant: str = "sound", tail: float = POISSON_TAIL) -> tuple[float, float, float]:
    """``(estimate, rounding_allowance, skipped_mass)`` of the single-item delta (see module doc)."""
    lam = _check_lambda(lam)
    d = check_int(d, "d", 2)
    _check_accountant(accountant)
    eps_single = float(eps_single)
    if not (eps_single >= 0):
        raise AccountantDomainError("eps_single", f"{eps_single!r} must be >= 0")
    if accountant == "indicator" or (accountant == "sound" and (m == 0 or m == math.ceil(m))):
        # integer m (or none): the message count reveals the send indicator -> "sound" = "indicator"
        n_prime, gamma = blanket_geometry(n, m, theorem="tight")
        t, sl, sk = clone_delta_parts(1.0, 0.0, 0.0, gamma / d, n_prime - 1, eps_single, tail)
        return lam * t, lam * sl, lam * sk
    if accountant == "sound":
        n_prime, gamma = blanket_geometry(n, m, theorem="tight")
        return _exact_parts(lam, n_prime - 1, gamma, d, eps_single, tail)
    n_prime, gamma = blanket_geometry(n, m, theorem="paper" if accountant == "paper" else "tight")
    return clone_delta_parts(lam, 0.0, 1.0 - lam, gamma / d, n_prime - 1, eps_single, tail)


def poisson_delta_bounds(lam: float, n: int, m: float, d: int, eps_single: float, *,
                         accountant: str = "sound", tail: float = POISSON_TAIL) -> tuple[float, float]:
    """(lower, upper) numerical bracket of the single-item delta at ``eps_single`` for the chosen
    ``accountant`` (``"sound"``, ``"paper"`` = Theorem 3 as printed, ``"pair"`` = Proposition 1)."""
    t, sl, sk = single_item_parts(lam, n, m, d, eps_single, accountant=accountant, tail=tail)
    return max(0.0, t - sl), min(1.0, t + sl + sk)


def poisson_delta(lam, n, m, d, eps_single, *, accountant="sound", tail=POISSON_TAIL) -> float:
    """Upper bound on the single-item delta at ``eps_single`` (``accountant="sound"``: always valid)."""
    return poisson_delta_bounds(lam, n, m, d, eps_single, accountant=accountant, tail=tail)[1]


def poisson_delta_lower(lam, n, m, d, eps_single, *, tail=POISSON_TAIL) -> float:
    """Proposition 1: a lower bound on the single-item delta that the protocol attains
    (the pair of counts of the victim's two items, ``n' = n ceil(m) + 1``)."""
    return poisson_delta_bounds(lam, n, m, d, eps_single, accountant="pair", tail=tail)[0]


def poisson_user_delta(lam, n, m, d, s, eps, *, accountant="sound") -> float:
    """User-level delta at user-level ``eps`` (Theorem 3): ``s e^eps D_{e^{eps/s}}``."""
    s = check_int(s, "s", 1)
    eps = _check_eps(eps)
    return group_privacy(eps / s, poisson_delta(lam, n, m, d, eps / s, accountant=accountant), s)[1]


@dataclass(frozen=True)
class PoissonLambda:
    """Result of :func:`solve_poisson_lambda`."""

    lam: float              # largest lambda found (verified feasible); 0 when infeasible
    feasible: bool          # a lambda > 0 meets the constraint (verified)
    eps_single: float       # eps / s
    delta_single: float     # achieved single-item delta at lam (upper bound), <= delta_target
    delta_target: float     # delta / (s e^eps)
    delta_user: float       # s e^eps delta_single (<= delta)


def poisson_lambda(n: int, m: float, d: int, s: int, eps: float, delta: float, *,
                   accountant: str = "sound", rtol: float = LAMBDA_RTOL) -> float:
    """Largest ``lambda`` meeting user-level ``(eps, delta)`` for ``s`` items (a float; 0.0 when
    none can be certified). See :func:`solve_poisson_lambda` for the achieved values."""
    return solve_poisson_lambda(n, m, d, s, eps, delta, accountant=accountant, rtol=rtol).lam


def _shrink_until_feasible(dval, lam: float, target: float) -> float:
    """``lam`` shrunk by factors ``1 - 1e-9`` (at most 60 times) until ``dval(lam) <= target``."""
    for _ in range(60):
        if dval(lam) <= target:
            break
        lam *= 1 - 1e-9
    return lam


def _feasible_y(dval, target: float, accountant: str, n: int, m: float, d: int, eps_single: float,
                tail: float) -> float:
    """Upper end of :func:`solve_poisson_lambda`'s bisection on ``y = -log(lambda)``: a ``y``
    whose lambda is feasible (``-log(target)``, or the indicator bound's lambda for "sound")."""
    # y = -log(lambda): D(exp(-y)) is non-increasing in y; feasibility at y_hi = -log(target)
    y_hi = min(-math.log(max(target, 1e-300)), 745.0)
    if accountant == "sound":
        # the indicator bound dominates the exact one, so its closed-form lambda is feasible here
        ind = single_item_parts(1.0, n, m, d, eps_single, accountant="indicator", tail=tail)
        lam_ind = target / sum(ind)
        if 0 < lam_ind < 1 and dval(lam_ind) <= target:
            y_hi = -math.log(lam_ind)
    return y_hi


_WARM: dict[tuple, dict[float, int]] = {}   # grid answers k by m, per (n, d, s, eps, delta, accountant, h)
_WARM_KEPT = 4096                          # problems remembered (hints only: answers do not depend on them)


def _warm_hint(known: dict[float, int], m: float) -> tuple[int | None, int | None]:
    """Hint ``(lo, hi)`` for the grid index at ``m`` from the answers at the nearest smaller and
    larger ``m`` (lambda is non-decreasing in m, so ``k`` is non-increasing): ``hi`` = the answer
    below, ``lo`` = the answer above minus one; None where there is no such answer."""
    if m in known:
        return known[m] - 1, known[m]
    below = max((x for x in known if x < m), default=None)
    above = min((x for x in known if x > m), default=None)
    return (known[above] - 1 if above is not None else None), (known[below] if below is not None else None)


def _grid_lambda(passes, wide_y, y_cap: float, h: float, known: dict[float, int], m: float) -> float | None:
    """Canonical lambda of :func:`solve_poisson_lambda`: ``exp(-k h)`` for the grid switch ``k``
    (``k`` passes, ``k - 1`` fails, both evaluated). ``passes(lam) -> (feasible, proxy)``;
    ``lambda = 1`` (k = 0) is known to fail. First from a verified bracket around the answers at
    neighbouring ``m`` (``known``, updated), grown at most to ``ceil(y_cap / h)``; if that end
    fails too, from the wide bracket ``[0, ceil(y_hi / h)]``, ``y_hi = wide_y()`` (None: ``exp(-y_hi)``
    is not feasible -> None). If the grid's end beyond ``y_hi`` fails (dval not monotone there;
    never seen), ``exp(-y_hi)`` itself (an evaluated feasible point, not on the grid)."""
    memo: dict[int, tuple[bool, float]] = {}

    def at(k: int) -> tuple[bool, float]:
        if k not in memo:
            memo[k] = passes(math.exp(-k * h))
        return memo[k]

    bracket = None
    if known:
        k_cap = math.ceil(y_cap / h)
        bracket = warm_bracket(at, *_warm_hint(known, m), 0, k_cap)
        if not at(bracket[2])[0]:
            bracket = None
    if bracket is None:
        y_hi = wide_y()
        if y_hi is None:
            return None
        k_max = math.ceil(y_hi / h)
        if math.exp(-k_max * h) <= 0 or not at(k_max)[0]:
            return math.exp(-y_hi)
        bracket = (0, at(0)[1], k_max, at(k_max)[1])
    k = grid_switch(at, *bracket)[1]
    if len(_WARM) > _WARM_KEPT:
        _WARM.clear()
    known[m] = k
    return math.exp(-k * h)


def solve_poisson_lambda(n: int, m: float, d: int, s: int, eps: float, delta: float, *,
                         accountant: str = "sound", rtol: float = LAMBDA_RTOL) -> PoissonLambda:
    """Largest ``lambda`` in [0, 1] meeting user-level ``(eps, delta)`` for ``s`` items
    (constraint (7)), rounded down: the returned lambda is an evaluated feasible point.

    ``lambda = 1`` when it is feasible. Integer ``m`` (or none) with ``"sound"``, and
    ``"indicator"``: delta is ``lambda`` times a lambda-free divergence, so
    ``lambda* = min(1, target / D_1)`` in closed form (shrunk until verified). Otherwise (``"paper"``,
    ``"pair"``, ``"sound"`` at non-integer m; ``D`` grows with lambda) the answer is defined on a
    fixed grid, so that it does not depend on how it was searched: ``lambda = exp(-k h)`` with grid
    step ``h = rtol`` (default :data:`LAMBDA_RTOL`) in ``y = -log(lambda)``, and ``k`` the switch of
    the evaluated constraint -- ``exp(-k h)`` evaluated and feasible, ``exp(-(k - 1) h)`` evaluated
    and not (``k >= 1``: ``lambda = 1`` fails here). The result is at most a factor ``e^h`` below
    the exact largest lambda. The search starts from a verified bracket around the answers of
    earlier calls at the nearest smaller and larger ``m`` (same other arguments; lambda is
    non-decreasing in m), else from the wide bracket ``[lambda_hi, 1]``; both end on the same
    ``k`` whenever the evaluated divergence is monotone along the grid (checked over the paper
    scale's tables; if it were not, the switch found is still verified on both sides, but could
    depend on the bracket). ``lambda = delta / (s e^eps)`` is always feasible in exact arithmetic;
    ``feasible`` is False only when floating point cannot certify any lambda > 0 (targets below
    ~1e-290)."""
    n = check_int(n, "n", 2, POISSON_N_MAX)
    m = _check_m(m)
    d = check_int(d, "d", 2)
    check_int(s, "s", 1, d)  # a user holds at most d distinct items
    _check_accountant(accountant)
    eps_single, target = single_item_target(eps, delta, s)
    tail = max(1e-300, 1e-6 * target)   # skipped mass (added to the bound) <= 1e-6 of the target

    def parts(lam: float):
        return single_item_parts(lam, n, m, d, eps_single, accountant=accountant, tail=tail)

    def dval(lam: float) -> float:
        t, sl, sk = parts(lam)
        return min(1.0, t + sl + sk)

    def result(lam: float) -> PoissonLambda:
        dv = dval(lam)
        if lam <= 0 or not dv <= target:
            return PoissonLambda(0.0, False, eps_single, 0.0, target, 0.0)
        return PoissonLambda(lam, True, eps_single, dv, target, group_privacy(eps_single, dv, s)[1])

    d1 = dval(1.0)
    if d1 <= target:
        return result(1.0)
    if accountant == "indicator" or (accountant == "sound" and (m == 0 or m == math.ceil(m))):
        lam = target / sum(parts(1.0))      # delta is linear in lambda (unclipped slope)
        return result(_shrink_until_feasible(dval, lam, target))

    def wide_y() -> float | None:
        y_hi = _feasible_y(dval, target, accountant, n, m, d, eps_single, tail)
        return y_hi if dval(math.exp(-y_hi)) <= target else None

    goal = target - parts(1.0)[2]
    log_goal = math.log(goal if goal > 0 else target)

    def passes(lam: float) -> tuple[bool, float]:
        t, sl, sk = parts(lam)
        return min(1.0, t + sl + sk) <= target, math.log(max(t, 1e-300)) - log_goal

    key = (n, d, s, float(eps), float(delta), accountant, float(rtol))
    lam = _grid_lambda(passes, wide_y, min(-math.log(max(target, 1e-300)), 745.0), rtol,
                       _WARM.setdefault(key, {}), m)
    if lam is None:
        return PoissonLambda(0.0, False, eps_single, 0.0, target, 0.0)
    return result(lam)


def min_blanket_rate(n: int, d: int, s: int, eps: float, delta: float, *, lam: float = 1.0,
                     m_max: float = 1e4, rtol: float = 1e-4, accountant: str = "sound") -> float:
    """``m_k`` of Section 5.2: the smallest blanket rate ``m`` at which ``lambda`` (default 1)
    meets user-level ``(eps, delta)``; ``inf`` if none up to ``m_max``. Bisection on m to relative
    precision ``rtol``; the returned m is an evaluated feasible point (the divergence is not
    exactly monotone in m at integer m, where ``ceil(m)`` jumps, so "smallest" is up to that).
    Also the blanket rate of the balls-into-bins baselines (``lambda = 1``)."""
    n = check_int(n, "n", 2, POISSON_N_MAX)
    d = check_int(d, "d", 2)
    check_int(s, "s", 1, d)  # a user holds at most d distinct items
    lam = _check_lambda(lam)
    eps_single, target = single_item_target(eps, delta, s)
    tail = window_tail(target, 1e-6)

    def ok(m: float) -> bool:
        return poisson_delta_bounds(lam, n, m, d, eps_single, accountant=accountant, tail=tail)[1] <= target

    if lam == 0 or ok(0.0):
        return 0.0
    return smallest_rate(ok, m_max, rtol)

