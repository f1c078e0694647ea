"""Shuffle privacy under personalized local privacy: the HPS bound and its baselines.

HPS is the bound of Liu, Liu, Xiong, Gu and Chen, "Enhanced privacy bound for shuffle model with
personalized privacy" (CIKM 2024). Every user i runs a local randomizer with its own
(eps_i, delta_i); the worst-case user 1 is the one with the largest eps_i.

* Clone probabilities by hypothesis testing (Sec. 3.1-3.2): ``w = p_1`` is the type-I error of the
  likelihood-ratio test between R(x_1^0) and R(x_1^1); for every other user,
  ``p_i = min(p_i^0, p_i^1)`` with ``p_i^b = Pr[R(x_i) in U_b]`` where U_b is the region in which
  R(x_1^b)'s density exceeds both R(x_i)'s and R(x_1^{1-b})'s (x_i = x_1^0, the paper's worst case).
  Failure sets of approximate randomizers remove delta/2 of mass (see ``_failure``).
* The clone count C = sum_i Bern(2 p_i) over the n - 1 other users is Poisson-binomial; it is
  computed exactly (``poisson_binomial_pmf``), not by a normal approximation.
* delta_s(eps) of the pair P = (1-w) P0 + w Q0, Q = (1-w) Q0 + w P0 (P0 = (A+1, C-A),
  Q0 = (A, C-A+1), A ~ Bin(C, 1/2)); Theorem 1/2 of the paper bound exactly this pair through its
  trade-off function. ``pair_delta`` evaluates the hockey-stick divergence of the pair exactly
  (the Neyman-Pearson optimum, i.e. the tightest value the pair admits); ``theorem2_delta`` is the
  paper's formula (5) for comparison. eps_s(delta_s) by bisection.

Baselines (all at the same inputs): BGN (privacy blanket at max eps_i), FV (clones at max eps_i,
with its approximate-DP form), CCC (Chen, Cao, Ge, AAAI 2024: mu-GDP), LZX (Liu et al., AAAI 2023,
per-user "echo" probabilities with the clones pair).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# re-exported: the shared part lives in personalized_clones, this module is the one to import
from shuffledp.accountants.special.personalized_clones import (  # noqa: F401
    SETTINGS,
    _check_delta_arr,
    _check_eps_arr,
    _check_int,
    _failure,
    _half_cdf,
    _half_logpmf,
    _half_pmf,
    _half_sf,
    _hps_code_sigma,
    _trim,
    decomposition_clone_probs,
    discrete_clone_probs,
    draw_local_eps,
    eps_for_delta,
    gaussian_clone_probs,
    gaussian_sigma,
    gaussian_sigmas,
    laplace_clone_probs,
    pair_delta,
    poisson_binomial_pmf,
    rr_pmfs,
    theorem2_delta,
    theorem2_delta_fn,
)
from shuffledp.accountants.validation import check_delta

BOUNDS = ("hps", "bgn", "fv", "ccc", "lzx", "hpsvalid")
MECHANISMS = ("laplace", "gaussian")


# ----------------------------------------------------------------------------- HPS
def hps_inputs(eps_local, delta_local=0.0, *, mechanism: str = "laplace",
               calibration: str = "analytic", clone_rule: str = "testing"):
    """(eps1, delta1, w, q) of HPS: user 1 = largest eps; q_i = 2 p_i over the n - 1 others."""
    from scipy import special

    e = _check_eps_arr(eps_local)
    d = _check_delta_arr(delta_local, e.size)
    i1 = int(np.argmax(e))
    eps1, delta1 = float(e[i1]), float(d[i1])
    others = np.delete(e, i1)
    dothers = np.delete(d, i1)
    if others.size == 0:
        others = np.zeros(0)
    if mechanism == "laplace":
        if clone_rule == "testing":
            w, p = laplace_clone_probs(others, eps1) if others.size else (0.5 * math.exp(-eps1 / 2), np.zeros(0))
        elif clone_rule == "decomposition":
            w, p = laplace_decomposition_probs(others, eps1)
        else:
            raise ValueError(f"clone_rule: unknown {clone_rule!r}")
        if np.any(d > 0):
            w = max(0.0, w - delta1 / 2)
            p = np.maximum(p - dothers / 2, 0.0)
    elif mechanism == "gaussian":
        if clone_rule != "testing":
            raise ValueError("clone_rule: only 'testing' for the Gaussian mechanism")
        if others.size:
            w, p = gaussian_clone_probs(others, dothers, eps1, delta1, calibration)
        else:
            w = max(0.0, float(special.ndtr(-0.5 / gaussian_sigma(eps1, delta1, calibration))) - delta1 / 2)
            p = np.zeros(0)
    else:
        raise ValueError(f"mechanism: unknown {mechanism!r} (laplace or gaussian)")
    return eps1, delta1, float(w), np.clip(2 * p, 0.0, 1.0)


def laplace_decomposition_probs(eps_others, eps1: float) -> tuple[float, np.ndarray]:
    """Valid mixture weights for the Laplace mechanism on [0, 1] (see :func:`decomposition_clone_probs`).

    w = 1/(1+e^eps1); p_i = inf over z and over inputs x_i in [0, 1] of
    Lap_i(z) / (Lap_1^0(z) + Lap_1^1(z)). With eps_i <= eps1 the log-ratio increases outside
    [0, 1] and is concave on each piece between 0, x_i and 1, so the infimum sits at z in
    {0, x_i, 1}; the smallest value is at x_i in {0, 1}, z at the far end:
    p_i = (eps_i/eps1) e^{-eps_i} / (1 + e^{-eps1}).
    """
    e = _check_eps_arr(eps_others, "eps_others")
    if np.any(e > eps1 * (1 + 1e-12)):
        raise ValueError("eps_others: user 1 must hold the largest local epsilon")
    w = 1.0 / (1.0 + math.exp(eps1))
    p = (e / eps1) * np.exp(-e) / (1.0 + math.exp(-eps1))
    return w, np.minimum(p, 0.5)


def hps_delta(eps_local, delta_local, eps: float, *, mechanism: str = "laplace",
              calibration: str = "analytic", method: str = "theorem2", clone_rule: str = "testing") -> float:
    """delta_s(eps) of HPS for users with local (eps_i, delta_i)."""
    eps1, delta1, w, q = hps_inputs(eps_local, delta_local, mechanism=mechanism,
                                    calibration=calibration, clone_rule=clone_rule)
    off, pmf, miss = poisson_binomial_pmf(q, tol=1e-250)
    return _hps_delta_from(eps, w, delta1, off, pmf, miss, method)


def _hps_delta_from(eps, w, delta1, off, pmf, miss, method):
    if method == "exact":
        # user 1 fails with probability delta1: conservative (1 - delta1) * H + delta1
        return float(min(1.0, (1 - delta1) * pair_delta(eps, w, off, pmf, miss) + delta1))
    if method == "theorem2":
        return theorem2_delta(eps, w, off, pmf, delta1) + miss
    raise ValueError(f"method: unknown {method!r}")


def hps_eps(eps_local, delta_local, delta: float, *, mechanism: str = "laplace",
            calibration: str = "analytic", method: str = "theorem2", clone_rule: str = "testing") -> float:
    """eps_s(delta_s) of HPS by bisection (at most max eps_i)."""
    eps1, delta1, w, q = hps_inputs(eps_local, delta_local, mechanism=mechanism,
                                    calibration=calibration, clone_rule=clone_rule)
    off, pmf, miss = poisson_binomial_pmf(q, tol=delta * 1e-12)
    hi = max(eps1, math.log((1 - w) / w) if w > 0 else eps1) + 1.0
    if method == "theorem2":   # _hps_delta_from's numbers, t_eps's bisection points shared by the search's eps
        t2 = theorem2_delta_fn(w, off, pmf, delta1)
        return eps_for_delta(lambda x: t2(x) + miss, delta, hi, rtol=1e-6)
    return eps_for_delta(lambda x: _hps_delta_from(x, w, delta1, off, pmf, miss, method), delta, hi, rtol=1e-6)


# ----------------------------------------------------------------------------- CCC
def ccc_mu(eps_local, delta_local=0.0, *, clone_factor: float = 1.0) -> float:
    """mu of the CCC bound: sqrt(2 / (sum_i c (1-delta_i)/(1+e^eps_i) - max_i c (1-delta_i)/(1+e^eps_i))).

    ``clone_factor`` c = 1 is the formula as published (Chen, Cao, Ge 2024); c = 2 is what the HPS
    authors' evaluation code sums (2/(1+e^eps_i) over the other users), which reproduces the CCC
    row of the paper's Table 2.
    """
    e = _check_eps_arr(eps_local)
    d = _check_delta_arr(delta_local, e.size)
    t = clone_factor * (1 - d) / (1 + np.exp(e))
    s = math.fsum(t) - float(t.max())
    if s <= 0:
        return math.inf
    return math.sqrt(2.0 / s)


def gdp_delta(mu: float, eps: float) -> float:
    """delta(eps) of mu-GDP (Dong, Roth, Su)."""
    from scipy import special

    if math.isinf(mu):
        return 1.0
    # e^eps Phi(b) as exp(eps + log Phi(b)): no overflow at large eps
    return float(max(0.0, special.ndtr(-eps / mu + mu / 2) - math.exp(eps + special.log_ndtr(-eps / mu - mu / 2))))


def ccc_delta(eps_local, delta_local, eps: float, *, clone_factor: float = 1.0) -> float:
    return gdp_delta(ccc_mu(eps_local, delta_local, clone_factor=clone_factor), eps)


def ccc_eps(eps_local, delta_local, delta: float, *, clone_factor: float = 1.0) -> float:
    mu = ccc_mu(eps_local, delta_local, clone_factor=clone_factor)
    hi = 1.0
    while gdp_delta(mu, hi) > delta and hi < 1e3:
        hi *= 2
    return eps_for_delta(lambda x: gdp_delta(mu, x), delta, hi)


# ----------------------------------------------------------------------------- LZX
def lzx_echo_probs(eps_local) -> tuple[int, np.ndarray]:
    """(index of user 1, echo probability of every other user) of LZX (AAAI 2023).

    q_i = (1/n) sum_j (eps_i/eps_j) (1-e^{-eps_j})/(1-e^{-eps_i}) e^{-max(eps_i, eps_j)}, computed in
    O(n log n) with prefix sums over the sorted epsilons (as the authors' evaluation code defines it).
    """
    e = _check_eps_arr(eps_local)
    n = e.size
    i1 = int(np.argmax(e))
    g = -np.expm1(-e) / e  # (1 - e^{-eps_j}) / eps_j
    order = np.argsort(e, kind="stable")
    es, gs = e[order], g[order]
    cg = np.concatenate([[0.0], np.cumsum(gs)])  # sum of g_j over the first k sorted
    cge = np.concatenate([[0.0], np.cumsum(gs * np.exp(-es))])
    k = np.searchsorted(es, e, side="right")  # number of j with eps_j <= eps_i
    total = np.exp(-e) * cg[k] + (cge[-1] - cge[k])
    q = (e / -np.expm1(-e)) * total / n
    return i1, np.clip(np.delete(q, i1), 0.0, 1.0)


def lzx_delta(eps_local, eps: float) -> float:
    e = _check_eps_arr(eps_local)
    i1, q = lzx_echo_probs(e)
    eps1 = float(e[i1])
    off, pmf, miss = poisson_binomial_pmf(q)
    return pair_delta(eps, 1.0 / (1.0 + math.exp(eps1)), off, pmf, miss)


def lzx_eps(eps_local, delta: float) -> float:
    e = _check_eps_arr(eps_local)
    i1, q = lzx_echo_probs(e)
    eps1 = float(e[i1])
    off, pmf, miss = poisson_binomial_pmf(q)
    w = 1.0 / (1.0 + math.exp(eps1))
    return eps_for_delta(lambda x: pair_delta(x, w, off, pmf, miss), delta, eps1, cap_valid=True)


# ----------------------------------------------------------------------------- FV and BGN
def _fv_extra(eps: float, eps0: float, n: int, delta0: float) -> float:
    """Additive delta of an (eps0, delta0)-LDP randomizer in the clones theorem (FMT 2021, Thm 3.8)."""
    return (math.exp(eps) + 1) * (1 + math.exp(-eps0) / 2) * n * delta0


def fv_delta(eps_local, delta_local, eps: float, *, variant: str = "fmt23") -> float:
    from shuffledp.accountants.upper.clones import delta_clones

    e = _check_eps_arr(eps_local)
    d = _check_delta_arr(delta_local, e.size)
    i1 = int(np.argmax(e))
    eps0, d0 = float(e[i1]), float(d.max())
    n = e.size
    base = delta_clones(eps0, n, eps, variant=variant)
    return float(min(1.0, base + (_fv_extra(eps, eps0, n, d0) if d0 > 0 else 0.0)))


def fv_eps(eps_local, delta_local, delta: float, *, variant: str = "fmt23") -> float:
    e = _check_eps_arr(eps_local)
    eps0 = float(e.max())
    pure = not np.any(np.asarray(delta_local, dtype=float) > 0)   # pure eps0-LDP: eps0 is valid
    return eps_for_delta(lambda x: fv_delta(e, delta_local, x, variant=variant), delta, eps0, cap_valid=pure)


def bgn_eps(eps_local, delta: float, *, mechanism: str = "laplace", bound: str = "hoeffding") -> float:
    from shuffledp.accountants.upper.blanket import eps_blanket

    e = _check_eps_arr(eps_local)
    eps0 = float(e.max())
    return float(min(eps0, eps_blanket(eps0, e.size, delta, mechanism=mechanism, bound=bound)))


def bgn_delta(eps_local, eps: float, *, mechanism: str = "laplace", bound: str = "hoeffding") -> float:
    from shuffledp.accountants.upper.blanket import delta_blanket

    e = _check_eps_arr(eps_local)
    return float(min(1.0, delta_blanket(float(e.max()), e.size, eps, mechanism=mechanism, bound=bound)))


# ----------------------------------------------------------------------------- one entry point
def personalized_eps(bound: str, eps_local: Sequence[float], delta_local, delta: float, *,
                     mechanism: str = "laplace", **kw) -> float:
    """eps_s of ``bound`` at delta_s = ``delta``.

    hps|bgn|fv|ccc|lzx as in the module doc; ``hpsvalid`` is HPS (Theorem 2) with the valid
    mixture-decomposition weights of the Laplace mechanism instead of the testing errors
    (pure only; not from the paper).
    """
    delta = check_delta(delta)
    _check_applicable(bound, delta_local)
    out = _personalized_eps(bound, eps_local, delta_local, delta, mechanism=mechanism, **kw)
    if math.isinf(out) and not np.any(np.asarray(delta_local, dtype=float) > 0):
        # unreachable target with pure LDP: shuffling eps_i-LDP reports is (max eps_i)-DP
        out = float(_check_eps_arr(eps_local).max())
    return out


def _personalized_eps(bound: str, eps_local, delta_local, delta: float, *, mechanism: str, **kw) -> float:
    if bound == "hps":
        return hps_eps(eps_local, delta_local, delta, mechanism=mechanism, **kw)
    if bound == "hpsvalid":
        return hps_eps(eps_local, delta_local, delta, mechanism=mechanism, clone_rule="decomposition", **kw)
    if bound == "ccc":
        return ccc_eps(eps_local, delta_local, delta, **kw)
    if bound == "lzx":
        return lzx_eps(eps_local, delta)
    if bound == "fv":
        return fv_eps(eps_local, delta_local, delta, **kw)
    if bound == "bgn":
        return bgn_eps(eps_local, delta, **kw)
    raise ValueError(f"bound: unknown {bound!r} (one of {', '.join(BOUNDS)})")


def personalized_delta(bound: str, eps_local: Sequence[float], delta_local, eps: float, *,
                       mechanism: str = "laplace", **kw) -> float:
    """delta_s of ``bound`` at eps_s = ``eps``."""
    if not eps >= 0:
        raise ValueError("eps: must be >= 0")
    _check_applicable(bound, delta_local)
    if bound == "hps":
        return hps_delta(eps_local, delta_local, eps, mechanism=mechanism, **kw)
    if bound == "hpsvalid":
        return hps_delta(eps_local, delta_local, eps, mechanism=mechanism, clone_rule="decomposition", **kw)
    if bound == "ccc":
        return ccc_delta(eps_local, delta_local, eps, **kw)
    if bound == "lzx":
        return lzx_delta(eps_local, eps)
    if bound == "fv":
        return fv_delta(eps_local, delta_local, eps, **kw)
    if bound == "bgn":
        return bgn_delta(eps_local, eps, **kw)
    raise ValueError(f"bound: unknown {bound!r} (one of {', '.join(BOUNDS)})")


def _check_applicable(bound: str, delta_local) -> None:
    if bound in ("bgn", "lzx", "hpsvalid") and np.any(np.asarray(delta_local, float) > 0):
        raise ValueError(f"bound: {bound} is a pure-LDP bound; it needs delta_local = 0")
