"""The privacy-blanket bound of Balle, Bell, Gascon and Nissim (CRYPTO 2019).

A local randomizer is written as ``r_x = (1 - gamma) v_x + gamma * omega`` with an
input-independent blanket ``omega``. With ``W ~ omega`` the privacy amplification random
variable is ``L = (r_x(W) - e^eps r_x'(W)) / omega(W)``; it has mean ``E L = 1 - e^eps = -a``.
Given bounds ``b_minus <= L <= b_plus`` and ``E L^2 <= c`` (the lemma of the multidimensional
seed paper, Section 3.1), shuffling ``n`` reports satisfies

    D_{e^eps}(M(D) || M(D')) <= 1/(gamma n) * E[(L_1 + ... + L_M)_+],   M ~ Bin(n, gamma),

and the expectation is bounded with a concentration inequality for every ``m``:

* Hoeffding: ``E[(sum_{i<=m} L_i)_+] <= (b_plus - b_minus)^2 / (4 a) * exp(-2 m a^2 / (b_plus - b_minus)^2)``
* Bennett:   ``E[(sum_{i<=m} L_i)_+] <= b_plus / log(1 + beta) * exp(-m c / b_plus^2 * phi(beta))``
  with ``beta = a b_plus / c`` and ``phi(u) = (1 + u) log(1 + u) - u``.

Both are exponential in ``m``, so the binomial mixture has a closed form
(``E[x^M] - Pr[M=0] = (1 - gamma + gamma x)^n - (1 - gamma)^n``).

Deviation from the seed's printed lemma (documented in docs/accountants_clones_blanket.md):
the multidimensional paper prints the Bennett term as
``b_plus / (a m log(1 + a b_plus / c)) * exp(-m c / b_plus^2 * phi(a b_plus / c))`` with
``phi(x) = (1 + x) log(1 + x)``. Both the extra ``1/(a m)`` and the missing ``- x`` in ``phi``
make it smaller than what the proof supports (Bennett's inequality integrated over the tail, as
above), i.e. optimistic; this module uses the derivation above, which coincides with the form
evaluated in the BBGN authors' public code.

Mechanisms (``blanket_params``):

* ``generic``: any eps0-LDP randomizer; BBGN's generic constants (blanket probability at least
  ``e^{-eps0}``).
* ``krr``: k-ary randomized response; exact values of ``L`` (three atoms).
* ``laplace``: Laplace mechanism on [0, 1] with scale ``1/eps0``; BBGN's closed forms (checked
  against numerical integration in the tests).
* ``mhm``: the multiple hash mechanism of the multidimensional paper (``d`` attributes hashed to
  ``[g]``). ``source="exact"`` (default) takes the exact extreme values of ``L`` and the exact
  maximum of ``E L^2`` over every configuration of the two hashed sets (sizes ``l, l'`` in
  ``[1, d]`` and their overlap) - a valid bound whatever the hash family; ``source="paper"``
  uses Theorem 1 of the paper, with the cross term of its proof (Eq. (9)): the statement prints
  ``g + g d - 2 d`` where Eq. (9) has ``g + g p d - 2 d``, and the printed form is not a valid
  bound (below the exact second moment, even negative). With Eq. (9) the paper's ``c`` is at or
  above the exact maximum in every case we checked (tests), and its ``b_minus``/``b_plus`` equal
  the exact extremes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from shuffledp.accountants.numerics.hockey_stick import bisect_switch, smallest_eps
from shuffledp.accountants.validation import (
    EPS0_MAX,
    AccountantDomainError,
    check_choice,
    check_delta,
    check_eps,
    check_int,
    check_n,
    check_positive,
)

__all__ = [
    "BlanketParams",
    "MECHANISMS",
    "BOUNDS",
    "blanket_params",
    "delta_blanket",
    "delta_blanket_from_params",
    "eps_blanket",
    "max_eps_local",
    "mhm_p",
    "mhm_gamma",
    "mhm_optimal_g",
    "mhm_domain",
    "mhm_printed_p",
    "mhm_printed_ldp_eps",
    "delta_mhm_printed",
    "max_eps_local_mhm_printed",
]

MECHANISMS = ("generic", "krr", "laplace", "mhm")
BOUNDS = ("hoeffding", "bennett")
SOURCES = ("exact", "paper")


@dataclass(frozen=True)
class BlanketParams:
    """Parameters of the blanket lemma for one (eps0, eps) pair.

    ``a = e^eps - 1`` (so ``E L = -a``), ``b_minus <= L <= b_plus``, ``E L^2 <= c``; ``gamma`` is
    the blanket probability used in ``M ~ Bin(n, gamma)`` (a lower bound on the true one).
    """

    a: float
    b_minus: float
    b_plus: float
    c: float
    gamma: float


# --------------------------------------------------------------------------- validation
def _pos(name: str, value) -> float:
    return check_positive(value, name.replace("_", "-"))


def _int_at_least(name: str, value, low: int) -> int:
    return check_int(value, name, low)


def _check_mechanism(mechanism: str) -> str:
    return check_choice(mechanism, "mechanism", MECHANISMS)


def _check_bound(bound: str) -> str:
    return check_choice(bound, "bound", BOUNDS)


# --------------------------------------------------------------------------- MHM helpers
def mhm_p(eps0: float, d: int, g: int) -> float:
    """Probability of each hashed value in MHM: ``e^eps0 / (d e^eps0 + g - d)``.

    This is the value for which the pmf of Eq. (4) of the multidimensional paper is eps0-LDP
    and its Theorem 1 (``gamma = g / (d e^eps0 + g - d)``, Eq. (8)) holds; the paper's Lemma 4
    prints ``e^eps0 / (e^eps0 + g - d)``, which coincides only for ``d = 1``.
    """
    e = math.exp(eps0)
    return e / (d * e + g - d)


def mhm_gamma(eps0: float, d: int, g: int) -> float:
    """Blanket probability of MHM: ``g / (d e^eps0 + g - d)`` (Section 4.2)."""
    return g / (d * math.exp(eps0) + g - d)


def mhm_optimal_g(eps0: float, d: int) -> float:
    """Eq. (3) of the multidimensional paper (real-valued; round it to use it as a domain)."""
    e = math.exp(eps0)
    return d + d * e / 2.0 + math.sqrt(2 * d * d * e + d * d * e * e / 4.0 - 2 * d * e)


def mhm_domain(eps0: float, d: int, g=None) -> int:
    """The hash range used for MHM: ``g`` if given, else Eq. (3) rounded (at least ``d + 1``)."""
    if g is None:
        g = max(int(round(mhm_optimal_g(eps0, d))), d + 1)
    return _int_at_least("g", g, d + 1)


@functools.lru_cache(maxsize=64)
def _mhm_configurations(d: int, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The hashed-set configurations of :func:`_mhm_exact` (they depend on ``d`` and ``g`` only):
    every ``(l, l', o)`` with ``1 <= l, l' <= d`` and ``max(0, l + l' - g) <= o <= min(l, l')``, in
    the order ``l``, ``l'``, ``o``, as the counts of the four kinds of hash value (both sets, only
    ``x``'s, only ``x'``'s, neither; shape ``(4, N)``) and the indices ``l - 1``, ``l' - 1`` and
    ``(l - 1) d + l' - 1`` of each configuration. Read-only (shared by every call)."""
    ell = np.arange(1, d + 1, dtype=np.float64)
    L1, L2, O = np.meshgrid(ell, ell, np.arange(0, d + 1, dtype=np.float64), indexing="ij")
    ok = (O <= np.minimum(L1, L2)) & (O >= np.maximum(0.0, L1 + L2 - g))
    L1, L2, O = L1[ok], L2[ok], O[ok]
    i1, i2 = L1.astype(np.int64) - 1, L2.astype(np.int64) - 1
    counts = np.stack([O, L1 - O, L2 - O, g - L1 - L2 + O])
    out = (counts, i1, i2, i1 * d + i2)
    for a in out:
        a.flags.writeable = False
    return out


def _mhm_exact(eps0: float, eps: float, d: int, g: int) -> tuple[float, float, float]:
    """Exact b_minus, b_plus and max E L^2 over all hashed-set configurations (per hash draw).

    A configuration ``(l, l', o)`` (sizes of the two users' hashed sets and of their overlap) has
    ``o`` values of kind "both", ``l - o`` "only x", ``l' - o`` "only x'" and ``g - l - l' + o``
    "neither", with privacy-loss values ``g (p - e^eps p)``, ``g (p - e^eps q_l')``,
    ``g (q_l - e^eps p)`` and ``g (q_l - e^eps q_l')``; ``q_l = (1 - p l) / (g - l)``. The values depend
    on ``(l, l')`` only, so they are computed on the ``d`` or ``d x d`` grid and gathered; each kind
    occurs (count > 0) in some configuration of every ``(l, l')`` since ``g > d``, so ``b_+`` and
    ``b_-`` are the extremes of the grids. The second moment ``sum counts values^2 / g`` is evaluated
    for every configuration, in the same operations and order as the ``(4, N)`` array sum it replaced
    (the same doubles: tests/test_accountants_blanket_mhm.py compares the two)."""
    p = mhm_p(eps0, d, g)
    ee = math.exp(eps)
    ell = np.arange(1, d + 1, dtype=np.float64)
    q = (1.0 - p * ell) / (g - ell)  # probability of a value outside a hashed set of size l
    counts, i1, i2, pair = _mhm_configurations(int(d), int(g))
    v_both = g * (p - ee * p)
    v_x = g * (p - ee * q)                       # only x: indexed by l'
    v_xp = g * (q - ee * p)                      # only x': indexed by l
    v_none = g * (q[:, None] - ee * q[None, :])  # neither: indexed by (l, l')
    second = counts[0] * (v_both * v_both)
    second += counts[1] * (v_x * v_x)[i2]
    second += counts[2] * (v_xp * v_xp)[i1]
    second += counts[3] * (v_none * v_none).ravel()[pair]
    second /= g
    b_plus = max(v_both, float(v_x.max()), float(v_xp.max()), float(v_none.max()))
    b_minus = min(v_both, float(v_x.min()), float(v_xp.min()), float(v_none.min()))
    return float(b_minus), float(b_plus), float(second.max())


def _mhm_paper(eps0: float, eps: float, d: int, g: int, *, printed: bool = False
               ) -> tuple[float, float, float]:
    """Theorem 1 of the multidimensional paper.

    Part 3 of the theorem as printed subtracts ``2 e^eps g (1 - p d)(g + g d - 2 d) / (g - d)^2``;
    its proof (Eq. (9)) derives ``(g + g p d - 2 d)``. The printed form is not a valid bound (it
    is below the exact second moment and can even be negative), so ``printed=False`` (used by
    ``source="paper"``) takes Eq. (9); ``printed=True`` reproduces the statement for comparison.
    """
    p = mhm_p(eps0, d, g)
    gamma = mhm_gamma(eps0, d, g)
    ee = math.exp(eps)
    b_minus = gamma * (1 - ee) - (1 - gamma) * g * ee / d
    b_plus = gamma * (1 - ee) + (1 - gamma) * g / d
    cross = (g + g * d - 2 * d) if printed else (g + g * p * d - 2 * d)
    c = ((ee * ee + 1) * (p * p * d * g * g - 2 * p * d * g + g) / (g - d)
         - 2 * ee * g * (1 - p * d) * cross / (g - d) ** 2)
    return b_minus, b_plus, c


# --------------------------------------------------------------------------- parameters
def _krr_params(a: float, ee: float, e0: float, k) -> BlanketParams:
    """:func:`blanket_params` of k-ary randomized response (``ee = e^eps``, ``e0 = e^eps0``)."""
    k = _int_at_least("k", k, 2)
    gamma = k / (e0 + k - 1.0)
    l_true = gamma * (e0 - ee)          # W = x   (probability 1/k under the blanket)
    l_other = gamma * (1.0 - ee * e0)   # W = x'  (1/k)
    l_rest = gamma * (1.0 - ee)         # any other value ((k-2)/k)
    c = (l_true**2 + l_other**2 + (k - 2) * l_rest**2) / k
    b_plus = max(l_true, l_rest) if k > 2 else l_true
    b_minus = min(l_other, l_rest) if k > 2 else l_other
    return BlanketParams(a, b_minus, b_plus, c, gamma)


def blanket_params(mechanism: str, eps0: float, *, eps: float, k: int | None = None,
                   d: int | None = None, g: int | None = None, source: str = "exact") -> BlanketParams:
    """Blanket-lemma parameters of a local randomizer with local budget eps0 at central eps.

    ``k`` is the domain size of ``krr``; ``d`` (attributes) and ``g`` (hash range; default the
    rounded Eq. (3) optimum) are MHM's. ``source`` matters only for ``mhm`` (see module doc).
    """
    mechanism = _check_mechanism(mechanism)
    eps0 = _pos("eps0", eps0)
    if eps0 > EPS0_MAX:
        raise AccountantDomainError("eps0", f"{eps0!r} must be <= {EPS0_MAX}")
    eps = check_eps(eps)
    check_choice(source, "source", SOURCES)
    ee = math.exp(eps)
    e0 = math.exp(eps0)
    a = ee - 1.0
    if mechanism == "generic":
        # BBGN's bounds valid for every eps0-LDP randomizer (blanket mass >= e^-eps0)
        gamma = math.exp(-eps0)
        b_plus = e0 - math.exp(eps - eps0)
        width = (ee + 1.0) * (e0 - math.exp(-eps0))
        c = e0 * (ee * ee + 1.0) - 2.0 * math.exp(eps - 3.0 * eps0)
        return BlanketParams(a, b_plus - width, b_plus, c, gamma)
    if mechanism == "krr":
        return _krr_params(a, ee, e0, k)
    if mechanism == "laplace":
        # Laplace on [0, 1] with scale 1/eps0: blanket = normalised inf_x of the densities
        gamma = math.exp(-eps0 / 2.0)
        h = math.exp(eps0 / 2.0)
        b_plus = h * (1.0 - math.exp(eps - eps0))
        b_minus = 1.0 / h - ee * h
        c = ((ee * ee + 1.0) / 3.0 * (2.0 * h + math.exp(-eps0))
             - 2.0 * ee * (2.0 / h - math.exp(-eps0)))
        return BlanketParams(a, b_minus, b_plus, c, gamma)
    # mhm
    d = _int_at_least("d", d, 1)
    g = mhm_domain(eps0, d, g)
    gamma = mhm_gamma(eps0, d, g)
    if source == "exact":
        b_minus, b_plus, c = _mhm_exact(eps0, eps, d, g)
    else:
        b_minus, b_plus, c = _mhm_paper(eps0, eps, d, g)
    return BlanketParams(a, b_minus, b_plus, c, gamma)


# --------------------------------------------------------------------------- bounds
def _log_mixture(n: int, gamma: float, x: float) -> float:
    """``log(E[x^M] - Pr[M = 0])`` for ``M ~ Bin(n, gamma)`` and ``0 < x <= 1`` (``-inf`` when it is 0).

    Computed in log space, ``n log(1 - gamma + gamma x) + log(1 - ((1 - gamma)/(1 - gamma + gamma x))^n)``
    = ``log_base + growth + log(-expm1(-growth))`` with ``log_base = n log1p(-gamma)`` and
    ``growth = n log1p(gamma x / (1 - gamma))``: no factor is exponentiated on its own, so nothing
    underflows where ``n |log(1 - gamma)| > 745`` (the product form did, and rounded the bound below
    the exact value at delta <= 1e-41), and no difference of two close powers cancels (tiny gamma)."""
    if x <= 0.0:
        return -math.inf
    if gamma >= 1.0:
        return n * math.log(x)
    log_base = n * math.log1p(-gamma)
    growth = n * math.log1p(gamma * x / (1.0 - gamma))
    if growth > 0.0:
        return log_base + growth + math.log(-math.expm1(-growth))
    # gamma x / (1 - gamma) rounded to 0: bound the value by x Pr[M >= 1] <= x n gamma (against us)
    return math.log(x) + math.log(n) + math.log(gamma)


def _product_mixture(n: int, gamma: float, x: float) -> float | None:
    """``E[x^M] - Pr[M = 0]`` as ``(1 - gamma)^n expm1(n log1p(gamma x / (1 - gamma)))`` where each
    factor is a normal double (no cancellation of ``(1 - gamma(1 - x))^n - (1 - gamma)^n`` at tiny
    gamma), else ``None``: there :func:`_log_mixture` answers (the product underflowed to 0, which
    put the blanket bound below the exact value at delta <= 1e-41)."""
    if x <= 0.0:
        return 0.0
    if gamma >= 1.0:
        return None
    log_base = n * math.log1p(-gamma)          # log (1 - gamma)^n
    growth = n * math.log1p(gamma * x / (1.0 - gamma))
    if growth > 700.0:
        return math.exp(log_base + growth) * -math.expm1(-growth) if log_base + growth >= -700.0 else None
    return math.exp(log_base) * math.expm1(growth) if log_base >= -700.0 and growth > 0.0 else None


def _mixture(n: int, gamma: float, x: float) -> float:
    """``E[x^M] - Pr[M = 0]`` for ``M ~ Bin(n, gamma)`` and ``0 <= x <= 1``: the product form where
    its factors are normal doubles, else ``exp`` of :func:`_log_mixture`."""
    value = _product_mixture(n, gamma, x)
    return math.exp(_log_mixture(n, gamma, x)) if value is None else value


def _bennett_phi(beta: float) -> float:
    """``phi(beta) = (1 + beta) log(1 + beta) - beta``. Below ``beta = 1e-6``, where the closed form
    cancels (relative error about ``2e-16 / beta``), the alternating series ``beta^2/2 - beta^3/6 +
    ...`` cut after a negative term: a lower bound, and a smaller ``phi`` only enlarges the bound."""
    if beta < 1e-6:
        return max(beta * beta / 2.0 - beta ** 3 / 6.0, 0.0) * (1.0 - 1e-12)
    return (1.0 + beta) * math.log1p(beta) - beta


def delta_blanket_from_params(params: BlanketParams, n: int, bound: str = "hoeffding") -> float:
    """Upper bound on the hockey-stick divergence from the blanket lemma (capped at 1)."""
    bound = _check_bound(bound)
    n = check_n(n)
    a, bm, bp, c, gamma = params.a, params.b_minus, params.b_plus, params.c, params.gamma
    if bp <= 0.0:
        return 0.0  # L <= 0 almost surely: the positive part vanishes
    if a <= 0.0:
        return 1.0
    if bound == "hoeffding":
        width = bp - bm
        per_m = width * width / (4.0 * a)
        log_rate = -2.0 * a * a / (width * width)
        rate = math.exp(log_rate)
    else:
        beta = a * bp / c
        lp = math.log1p(beta)
        per_m = bp / lp if lp > 0.0 else math.inf
        log_rate = -(c / (bp * bp)) * _bennett_phi(beta)
        rate = math.exp(log_rate)
    if not (math.isfinite(log_rate) and 0.0 < gamma and math.isfinite(bp) and math.isfinite(bm)
            and (bound == "hoeffding" or math.isfinite(c))):
        return 1.0  # the lemma's constants overflow (e.g. Laplace at eps0 ~ 500): nothing certified
    mix = _product_mixture(n, gamma, rate)
    if mix is not None and math.isfinite(per_m):
        delta = per_m * mix / (gamma * n)
        if delta > 1e-290:   # a normal double
            return min(delta, 1.0)
    # log space throughout where a factor leaves the normal doubles
    if bound == "hoeffding":
        log_per_m = 2.0 * math.log(width) - math.log(4.0 * a)
    else:
        # b_plus / log(1 + beta) >= b_plus / beta = c / a (the latter where log1p rounds to 0)
        log_per_m = math.log(bp) - math.log(lp) if lp > 0.0 else math.log(c) - math.log(a) + 1e-12
    if rate > 0.0:
        log_mix = _log_mixture(n, gamma, rate)
    else:  # the rate underflowed: E[x^M] - Pr[M = 0] <= x Pr[M >= 1] <= x min(1, n gamma)
        log_mix = log_rate + math.log(min(1.0, n * gamma))
    log_delta = log_per_m + log_mix - math.log(gamma) - math.log(n)
    delta = math.exp(min(log_delta, 0.0)) * (1.0 + 1e-12) if log_delta > -math.inf else 0.0
    return min(delta, 1.0)


def delta_blanket(eps0: float, n: int, eps: float, *, mechanism: str, bound: str = "hoeffding",
                  **kw) -> float:
    """delta(eps) of the blanket bound for shuffling n reports of an eps0-LDP randomizer.

    For ``eps >= eps0`` the answer is 0 (shuffling eps0-LDP reports is eps0-DP).
    """
    eps0 = _pos("eps0", eps0)
    n = check_n(n)
    eps = check_eps(eps)
    _check_bound(bound)
    if eps >= eps0:
        return 0.0
    return delta_blanket_from_params(blanket_params(mechanism, eps0, eps=eps, **kw), n, bound)


def eps_blanket(eps0: float, n: int, delta: float, *, mechanism: str, bound: str = "hoeffding",
                rtol: float = 1e-7, **kw) -> float:
    """Smallest central eps (rounded up to ``rtol``) certified by the blanket bound at delta.

    Returns ``eps0`` when the bound certifies nothing smaller.
    """
    eps0 = _pos("eps0", eps0)
    n = check_n(n)
    delta = check_delta(delta)
    _check_mechanism(mechanism)
    _check_bound(bound)

    def fn(e: float) -> float:
        return delta_blanket(eps0, n, e, mechanism=mechanism, bound=bound, **kw)

    return smallest_eps(fn, delta, eps0, rtol=rtol)


def max_eps_local(eps_central: float, delta_central: float, n: int, *, mechanism: str,
                  bound: str = "hoeffding", eps_local_max: float = 30.0, rtol: float = 1e-7,
                  **kw) -> float:
    """Largest eps_local whose shuffled reports meet (eps_central, delta_central) by the bound.

    Bisection over ``eps_local`` in ``[eps_central, eps_local_max]``; the returned value is the
    lower end of the final bracket, so it always meets the target (``eps_central`` itself always
    does, as shuffling eps-LDP reports is eps-DP). ``eps_local_max`` caps the search.
    """
    eps_c = _pos("eps_central", eps_central)
    delta_c = check_delta(delta_central)
    n = check_n(n)
    _check_mechanism(mechanism)
    _check_bound(bound)
    top = _pos("eps_local_max", eps_local_max)
    if top <= eps_c:
        return eps_c

    def ok(e0: float) -> bool:
        return delta_blanket(e0, n, eps_c, mechanism=mechanism, bound=bound, **kw) <= delta_c

    if ok(top):
        return top
    return bisect_switch(ok, eps_c, top, rtol)[0]


# --------------------------------------------------------------------------- the paper's printed accountant
def mhm_printed_p(eps0: float, d: int, g: int) -> float:
    """Lemma 4 / Algorithm 2 of the multidimensional paper as printed: ``p = e^eps0 / (e^eps0 + g - d)``.

    With this ``p`` the pmf of Eq. (4) is a distribution only when ``d p <= 1`` and its largest
    probability ratio is ``p (g - d) / (1 - d p)``, above ``e^eps0`` (see :func:`mhm_printed_ldp_eps`)."""
    e0 = math.exp(_pos("eps0", eps0))
    return e0 / (e0 + g - d)


def mhm_printed_ldp_eps(eps0: float, d: int, g: int) -> float:
    """The LDP budget the randomizer of Eq. (4) really has with the printed ``p`` (``inf`` if ``d p >= 1``).

    The smallest output probability is that of a value outside a hashed set of size ``d``,
    ``(1 - d p) / (g - d)``, the largest ``p``."""
    p = mhm_printed_p(eps0, d, g)
    if d * p >= 1.0:
        return math.inf
    return math.log(p * (g - d) / (1.0 - d * p))


def delta_mhm_printed(eps0: float, n: int, eps: float, *, d: int, g: int) -> float:
    """The multidimensional paper's own accountant, every formula as printed (NOT a valid bound).

    Theorem 1 with its printed ``c`` (cross term ``g + g d - 2 d``) and Lemma 4's printed ``p``, in
    Lemma 1 as printed: ``1/(gamma n) sum_m Bin(m; n, gamma) beta(m)``,
    ``beta(m) = b_+ / (a m log(1 + a b_+ / c)) exp(-m c / b_+^2 phi(a b_+ / c))``, ``phi(x) = (1+x) log(1+x)``.
    Used only to run MHM "the paper's way" as a labelled variant; both the ``1/(a m)`` factor and the
    missing ``- x`` in ``phi`` make it smaller than the derivation supports (module doc)."""
    from scipy.stats import binom

    n = check_n(n)
    if eps >= eps0:
        return 0.0
    gamma, a, b_plus, c = _printed_constants(eps0, eps, d, g)
    if b_plus <= 0.0:
        return 0.0
    if c <= 0.0 or a <= 0.0:
        return 1.0
    x = a * b_plus / c
    lo, hi = _printed_window(n, gamma)
    m = np.arange(lo, hi + 1, dtype=np.float64)
    beta = b_plus / (a * m * math.log1p(x)) * np.exp(-m * c / b_plus**2 * (1 + x) * math.log1p(x))
    return min(float(np.sum(binom.pmf(m, n, gamma) * beta)) / (gamma * n), 1.0)


def _printed_constants(eps0: float, eps: float, d: int, g: int) -> tuple[float, float, float, float]:
    """``(gamma, a, b_+, c)`` of :func:`delta_mhm_printed` (Theorem 1 with its printed ``c``)."""
    p = mhm_printed_p(eps0, d, g)
    gamma = mhm_gamma(eps0, d, g)
    ee = math.exp(eps)
    a = ee - 1.0
    b_plus = gamma * (1 - ee) + (1 - gamma) * g / d
    c = ((ee * ee + 1) * (p * p * d * g * g - 2 * p * d * g + g) / (g - d)
         - 2 * ee * g * (1 - p * d) * (g + g * d - 2 * d) / (g - d) ** 2)
    return gamma, a, b_plus, c


def _printed_window(n: int, gamma: float) -> tuple[int, int]:
    """The ``m`` summed by :func:`delta_mhm_printed`: Bin(n, gamma) outside mean +- 40 sd + 50 is below 1e-300."""
    sd = math.sqrt(n * gamma * (1 - gamma))
    return max(1, math.floor(n * gamma - 40 * sd - 50)), min(n, math.ceil(n * gamma + 40 * sd + 50))


#: relative margin by which a partial sum must exceed ``delta`` for :func:`_printed_surely_above` to decide
#: (the rounding error of the full sum of :func:`delta_mhm_printed`, thousands of non-negative terms each
#: within a few ulps, is below 1e-11 relative)
PRINTED_MARGIN = 1e-6


def _printed_surely_above(eps0s, n: int, eps: float, delta: float, d: int, g: int) -> np.ndarray:
    """Where ``delta_mhm_printed(eps0, n, eps) > delta`` is certain, for every ``eps0`` of ``eps0s``:
    its sum restricted to ``m`` within 3 sd (+5) of the mode of the terms (Bin(n, gamma) tilted by the
    ``exp(-m k)`` of ``beta``), a subset of its own window of non-negative terms, exceeds
    ``delta (1 + PRINTED_MARGIN)``. False where that does not decide or the function exits early.
    All the partial sums in one ``binom.pmf`` call: the grid scan of :func:`max_eps_local_mhm_printed`
    then evaluates the full sum only where this is False."""
    from scipy.stats import binom

    rows, m, coef, start = [], [], [], 0
    for i, e0 in enumerate(float(e) for e in eps0s):
        gamma, a, b_plus, c = _printed_constants(e0, eps, d, g) if eps < e0 else (0.0, 0.0, 0.0, 0.0)
        if not (b_plus > 0.0 and c > 0.0 and a > 0.0):
            continue
        x = a * b_plus / c
        k = c / b_plus**2 * (1 + x) * math.log1p(x)
        t = gamma * math.exp(-k) / (1 - gamma + gamma * math.exp(-k))  # the tilted law's success rate
        w = 3 * math.sqrt(n * t * (1 - t)) + 5
        full = _printed_window(n, gamma)
        lo, hi = max(full[0], math.floor(n * t - w)), min(full[1], math.ceil(n * t + w))
        if lo <= hi:
            rows.append((i, gamma, start))
            m.append(np.arange(lo, hi + 1, dtype=np.float64))
            coef.append((hi - lo + 1, gamma, a, b_plus, k, math.log1p(x)))
            start += hi - lo + 1
    out = np.zeros(len(eps0s), dtype=bool)
    if not rows:
        return out
    mm = np.concatenate(m)
    gam, a, b_plus, k, lx = (np.repeat([cf[j] for cf in coef], [cf[0] for cf in coef]) for j in range(1, 6))
    terms = binom.pmf(mm, n, gam) * (b_plus / (a * mm * lx) * np.exp(-mm * k))
    partial = np.add.reduceat(terms, [r[2] for r in rows])
    for (i, gamma, _), s in zip(rows, partial, strict=True):
        out[i] = min(s / (gamma * n), 1.0) > delta * (1 + PRINTED_MARGIN)   # the full value is capped at 1
    return out


def max_eps_local_mhm_printed(eps_central: float, delta_central: float, n: int, *, d: int, g: int,
                              eps_local_max: float = 30.0, rtol: float = 1e-7) -> float:
    """Largest eps_local meeting (eps_central, delta_central) by :func:`delta_mhm_printed`. The paper's
    way, for a labelled comparison only.

    The printed ``c`` is negative at small eps_local (the formula is then undefined and counted as
    delta = 1), so delta is not monotone there: the largest passing point of a 0.1-spaced grid
    from the top is found first, then the bracket above it is bisected."""
    eps_c = _pos("eps_central", eps_central)
    delta_c = check_delta(delta_central)

    def ok(e0: float) -> bool:
        return delta_mhm_printed(e0, n, eps_c, d=d, g=g) <= delta_c

    if ok(eps_local_max):
        return eps_local_max
    grid = np.arange(eps_local_max, eps_c, -0.1)
    # the points a lower bound of delta already fails are skipped (the same first passing point), the
    # bounds of 8 points at a time
    for s in range(1, grid.size, 8):
        above = _printed_surely_above(grid[s:s + 8], check_n(n), eps_c, delta_c, d, g)
        for hi, lo, sure in zip(grid[s - 1:s + 7], grid[s:s + 8], above, strict=False):
            if not sure and ok(float(lo)):
                return bisect_switch(ok, float(lo), float(hi), rtol)[0]
    return eps_c
