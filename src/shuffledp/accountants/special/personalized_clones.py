"""Personalized shuffle privacy, the part every bound of :mod:`shuffledp.accountants.special.personalized`
shares: the paper's privacy settings, the local mechanisms' calibration, clone probabilities by
hypothesis testing, the exact Poisson-binomial clone count and the clones pair's divergence
(exact, and the paper's Theorem 2). Names are re-exported by ``personalized``."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from shuffledp.accountants.numerics.hockey_stick import eps_for_delta as _hs_eps_for_delta
from shuffledp.accountants.validation import (
    EPS0_MAX,
    PERSONALIZED_N_MAX,
    AccountantDomainError,
    check_int,
)

SETTINGS = {
    # name: (kind, location, scale, clip_lo, clip_hi); Table 1 of the paper
    "uniform1": ("uniform", 0.05, 1.0, 0.05, 1.0),
    "gauss1": ("gauss", 0.8, 0.5, 0.05, 1.0),
    "uniform2": ("uniform", 0.5, 2.0, 0.5, 2.0),
    "gauss2": ("gauss", 1.5, 0.5, 0.5, 2.0),
}



# ----------------------------------------------------------------------------- settings
def draw_local_eps(setting: str, n: int, seed: int) -> np.ndarray:
    """Local epsilons of ``n`` users for a Table-1 setting (uniform, or Gaussian clipped), seeded."""
    from shuffledp.seeding import rng

    if setting not in SETTINGS:
        raise ValueError(f"setting: unknown {setting!r} (one of {', '.join(SETTINGS)})")
    n = _check_int(n, "n", 1)
    kind, a, b, lo, hi = SETTINGS[setting]
    g = rng(int(seed), "personalized", setting, n)
    x = g.uniform(a, b, n) if kind == "uniform" else g.normal(a, b, n)
    return np.clip(x, lo, hi)


# ----------------------------------------------------------------------------- validation
def _check_int(v, name: str, lo: int) -> int:
    return check_int(v, name, lo)


def _check_eps_arr(eps, name: str = "eps_local") -> np.ndarray:
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    flag = name.replace("_", "-")
    if e.ndim != 1 or e.size == 0 or not np.all(np.isfinite(e)) or np.any(e <= 0):
        raise AccountantDomainError(flag, f"{name} must be a non-empty 1-d array of finite positive numbers")
    if e.size > PERSONALIZED_N_MAX:
        raise AccountantDomainError("n", f"{e.size} users: the personalized accountants hold one local eps per "
                                    f"user and take at most {PERSONALIZED_N_MAX:.0e}")
    if float(e.max()) > EPS0_MAX:
        raise AccountantDomainError(flag, f"local eps up to {EPS0_MAX:g} (got {float(e.max())!r})")
    return e


def _check_delta_arr(delta, n: int, name: str = "delta_local") -> np.ndarray:
    d = np.broadcast_to(np.asarray(delta, dtype=float), (n,)).copy()
    if not np.all((d >= 0) & (d < 1)):
        raise AccountantDomainError(name.replace("_", "-"), f"{name} must lie in [0, 1)")
    return d


def gaussian_sigma(eps: float, delta: float, calibration: str = "analytic") -> float:
    """Noise scale (sensitivity 1) of the Gaussian mechanism that is (eps, delta)-DP.

    ``analytic``: the smallest sigma with exact privacy profile <= delta (Balle and Wang 2018),
    valid for every eps. ``classic``: sqrt(2 ln(1.25/delta)) / eps (Dwork-Roth; proven for eps < 1).
    """
    from scipy import special

    if not (eps > 0 and 0 < delta < 1):
        raise ValueError("eps/delta: need eps > 0 and 0 < delta < 1 for the Gaussian mechanism")
    if calibration == "classic":
        return math.sqrt(2 * math.log(1.25 / delta)) / eps
    if calibration == "hps-code":
        return _hps_code_sigma(eps, delta)
    if calibration != "analytic":
        raise ValueError(f"calibration: unknown {calibration!r}")

    def prof(s: float) -> float:
        return float(special.ndtr(0.5 / s - eps * s) - math.exp(eps) * special.ndtr(-0.5 / s - eps * s))

    lo, hi = 1e-6, 1.0
    while prof(hi) > delta:
        hi *= 2
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if prof(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-13:
            break
    return hi


def _hps_code_sigma(eps, delta, clip: float = 0.1):
    """Noise scale used by the HPS authors' evaluation code, in units of the sensitivity.

    Their code passes 2 ln(1.25/delta) C^2 / eps^2 (a variance formula) as the *scale* with
    C = 0.1; divided by C this is 2 ln(1.25/delta) C / eps^2. NOT an (eps, delta)-DP calibration
    (for eps near 2 it is about 3x too little noise); offered only to explain the paper's numbers.
    """
    return 2 * np.log(1.25 / np.asarray(delta, float)) * clip / np.asarray(eps, float) ** 2


def gaussian_sigmas(eps: np.ndarray, delta: np.ndarray, calibration: str = "analytic") -> np.ndarray:
    """Vectorised :func:`gaussian_sigma` (bisection on all users at once)."""
    eps = np.asarray(eps, float)
    delta = np.broadcast_to(np.asarray(delta, float), eps.shape)
    if np.any(delta <= 0) or np.any(delta >= 1):
        raise ValueError("delta_local: the Gaussian mechanism needs 0 < delta < 1")
    if calibration == "classic":
        return np.sqrt(2 * np.log(1.25 / delta)) / eps
    if calibration == "hps-code":
        return _hps_code_sigma(eps, delta)
    if calibration != "analytic":
        raise ValueError(f"calibration: unknown {calibration!r}")
    # exact per (eps, delta) pair, bisected all at once, each distinct pair once (the Gaussian
    # settings clip many users to one eps; every pair's bisection is elementwise, so its result does
    # not depend on which other pairs share the arrays); the profile evaluated only where a step's
    # outcome is in question (gaussian_calibration: the plain bisection's numbers, bit for bit)
    from shuffledp.accountants.special.gaussian_calibration import analytic_sigmas

    shape = eps.shape
    eps, delta, inv = _distinct_pairs(eps.ravel(), delta.ravel())
    return analytic_sigmas(eps, delta)[inv].reshape(shape)


def _distinct_pairs(eps: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(eps_u, delta_u, inv)``: the distinct (eps, delta) pairs of two 1-d arrays and the index of
    each element's pair (``eps_u[inv]`` is ``eps``)."""
    if delta.size and np.all(delta == delta[0]):   # one delta (the usual case): distinct eps only
        eps_u, inv = np.unique(eps, return_inverse=True)
        return eps_u, np.full(eps_u.shape, delta[0]), inv.ravel()
    pairs, inv = np.unique(np.stack([eps, delta], axis=1), axis=0, return_inverse=True)
    return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1]), inv.ravel()


# ----------------------------------------------------------------------------- clone probabilities
def _failure(delta: np.ndarray | float) -> np.ndarray | float:
    """Mass removed from a testing region for an approximate randomizer's failure set (delta/2)."""
    return np.asarray(delta, float) / 2.0


def laplace_clone_probs(eps_others, eps1: float) -> tuple[float, np.ndarray]:
    """(w, p) of the Laplace mechanism on [0, 1] by hypothesis testing (closed form).

    User 1 has scale 1/eps1 at locations 0 and 1; user i has scale 1/eps_i at location 0 and
    eps_i <= eps1. Returns w = p_1 = Pr[Lap(0, 1/eps1) > 1/2] and p_i = min(p_i^0, p_i^1).
    """
    e = _check_eps_arr(eps_others, "eps_others")
    if not eps1 > 0:
        raise ValueError("eps1: must be > 0")
    if np.any(e > eps1 * (1 + 1e-12)):
        raise ValueError("eps_others: user 1 must hold the largest local epsilon")
    e = np.minimum(e, eps1)
    w = 0.5 * math.exp(-eps1 / 2)

    def cdf(z, lam):  # Laplace(0, 1/lam) cdf
        z = np.asarray(z, float)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(z < 0, 0.5 * np.exp(lam * np.minimum(z, 0)), 1 - 0.5 * np.exp(-lam * np.maximum(z, 0)))

    equal = e >= eps1 * (1 - 1e-12)
    ratio = np.log(eps1 / e)
    diff = np.where(equal, 1.0, eps1 - e)
    # U_0 = {z < 1/2, |z| < z*}; for equal scales the region is empty: the paper's tie case, taken
    # as "no constraint from this side" (p_i^0 = 1), the continuous limit has p_i^0 >= p_i^1 anyway
    zstar = np.where(equal, 0.0, ratio / diff)
    p0 = np.where(equal, 1.0, cdf(np.minimum(zstar, 0.5), e) - cdf(-zstar, e))
    # U_1 = {z > 1/2, Lap_i(z) < Lap_1^1(z)} = (l, u)
    lo = np.maximum(0.5, (eps1 - ratio) / (eps1 + e))
    up = np.where(equal, np.inf, (ratio + eps1) / diff)
    p1 = np.where(np.isinf(up), 1 - cdf(lo, e), cdf(up, e) - cdf(lo, e))
    return w, np.minimum(p0, p1)


def gaussian_clone_probs(eps_others, delta_others, eps1: float, delta1: float,
                         calibration: str = "analytic") -> tuple[float, np.ndarray]:
    """(w, p) of the Gaussian mechanism on [0, 1] by hypothesis testing, failure sets removed."""
    from scipy import special

    e = _check_eps_arr(eps_others, "eps_others")
    d = _check_delta_arr(delta_others, e.size, "delta_others")
    if np.any(e > eps1 * (1 + 1e-12)):
        raise ValueError("eps_others: user 1 must hold the largest local epsilon")
    s1 = gaussian_sigma(eps1, delta1, calibration)
    si = gaussian_sigmas(e, d, calibration)
    si = np.maximum(si, s1)  # eps_i <= eps1 and delta_i >= ... ; the worst case keeps s_i >= s_1
    w = max(0.0, float(special.ndtr(-0.5 / s1)) - float(_failure(delta1)))
    equal = si <= s1 * (1 + 1e-12)
    # U_0 = {z < 1/2, N(0,si) < N(0,s1)} = {|z| < z*}
    with np.errstate(divide="ignore", invalid="ignore"):
        zstar = np.sqrt(np.where(equal, 0.0, 2 * np.log(si / s1) * s1**2 * si**2 / (si**2 - s1**2)))
    p0 = np.where(equal, 1.0, special.ndtr(np.minimum(zstar, 0.5) / si) - special.ndtr(-zstar / si))
    # U_1 = {z > 1/2, N(0,si)(z) < N(1,s1)(z)}: a z^2 + b z + c < 0 with
    # a = 1/(2 s1^2) - 1/(2 si^2) >= 0, b = -1/s1^2, c = 1/(2 s1^2) - ln(si/s1)
    a = 0.5 / s1**2 - 0.5 / si**2
    b = -1.0 / s1**2
    c = 0.5 / s1**2 - np.log(si / s1)
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
        r_lo = np.where(equal, -c / b, (-b - disc) / (2 * a))
        r_hi = np.where(equal, np.inf, (-b + disc) / (2 * a))
    lo = np.maximum(0.5, r_lo)
    p1 = np.where(np.isinf(r_hi), special.ndtr(-lo / si), special.ndtr(r_hi / si) - special.ndtr(lo / si))
    p1 = np.maximum(p1, 0.0)
    fail = _failure(d)
    p = np.maximum(np.minimum(p0, p1) - fail, 0.0)
    return w, p


def discrete_clone_probs(r10, r11, ri_list, delta1: float = 0.0, delta_i=0.0) -> tuple[float, np.ndarray]:
    """(w, p) by hypothesis testing for mechanisms given by output pmfs on a common finite space.

    ``r10``, ``r11``: pmfs of R(x_1^0), R(x_1^1) (user 1). ``ri_list``: array (users, outputs) or a
    list of such arrays, one row per other user; when a 3-d array (users, inputs, outputs) is given
    the minimum over the inputs x_i is taken (the worst case). Ties count as "not in the region".
    """
    r10 = np.asarray(r10, float)
    r11 = np.asarray(r11, float)
    ri = np.asarray(ri_list, float)
    if ri.ndim == 1:
        ri = ri[None, :]
    if ri.ndim == 2:
        ri = ri[:, None, :]
    S = r10 < r11
    w = max(0.0, float(r10[S].sum()) - float(_failure(delta1)))
    U0 = (ri < r10) & (r11 < r10)
    U1 = (ri < r11) & (r10 < r11)
    # an empty region is the paper's tie case: no constraint from that side
    p0 = np.where(U0.any(axis=-1), (ri * U0).sum(axis=-1), 1.0)
    p1 = np.where(U1.any(axis=-1), (ri * U1).sum(axis=-1), 1.0)
    p = np.minimum(p0, p1).min(axis=-1)
    delta_i = np.broadcast_to(np.asarray(delta_i, float), p.shape)
    return w, np.maximum(p - _failure(delta_i), 0.0)


def decomposition_clone_probs(r10, r11, ri_list) -> tuple[float, np.ndarray]:
    """Largest weights of a valid mixture decomposition (the clones reduction of Feldman et al.).

    w = largest w with R(x_1^0) = (1-w) Q0 + w Q1, R(x_1^1) = w Q0 + (1-w) Q1 for pmfs Q0, Q1
    (w/(1-w) <= min r10/r11 and min r11/r10); p_i = largest p with R(x_i) >= p (R(x_1^0) + R(x_1^1))
    pointwise. Not from the paper: a rigorous reference for the testing-based probabilities.
    """
    r10 = np.asarray(r10, float)
    r11 = np.asarray(r11, float)
    ri = np.asarray(ri_list, float)
    if ri.ndim == 1:
        ri = ri[None, :]
    if ri.ndim == 2:
        ri = ri[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        m = min(np.min(np.where(r11 > 0, r10 / r11, np.inf)), np.min(np.where(r10 > 0, r11 / r10, np.inf)))
        m = min(m, 1.0)
        w = m / (1 + m)
        tot = r10 + r11
        p = np.where(tot > 0, ri / tot, np.inf).min(axis=-1).min(axis=-1)
    return float(w), np.minimum(p, 0.5)


def rr_pmfs(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Output pmfs of binary randomized response with parameter eps on inputs 0 and 1."""
    a = math.exp(eps) / (1 + math.exp(eps))
    return np.array([a, 1 - a]), np.array([1 - a, a])


# ----------------------------------------------------------------------------- Poisson binomial
def poisson_binomial_pmf(q, tol: float = 1e-60, block: int = 128) -> tuple[int, np.ndarray, float]:
    """Exact pmf of sum_i Bern(q_i), as (offset, pmf, missing).

    Divide and conquer with direct (non-FFT) convolutions of non-negative arrays, so every entry
    has a small *relative* error even far in the tails. After every merge the two ends of the
    partial pmf are trimmed while their cumulative mass stays below ``tol``; the result is a
    sub-probability vector that is pointwise <= the true pmf, and ``missing`` = 1 - its sum is the
    exact total trimmed mass (a rigorous bound to add to any delta computed from it).
    pmf[k] = Pr[C = offset + k].
    """
    q = np.asarray(q, float).ravel()
    if np.any((q < 0) | (q > 1)) or not np.all(np.isfinite(q)):
        raise ValueError("q: probabilities must lie in [0, 1]")
    if q.size == 0:
        return 0, np.ones(1), 0.0
    # leaves: vectorised DP over blocks of `block` Bernoullis
    nb = -(-q.size // block)
    Q = np.zeros(nb * block)
    Q[: q.size] = q
    Q = Q.reshape(nb, block)
    R = 1 - Q
    P = np.zeros((nb, block + 1))
    P[:, 0] = 1.0
    x, y = np.empty((nb, block)), np.empty((nb, block))
    for j in range(block):
        # P[:, 1:] = P[:, 1:] (1 - q_j) + P[:, :-1] q_j on the columns 1..j+1 only: the others hold
        # zeros before and after (0 (1 - q) + 0 q = 0), so the same numbers, in buffers
        w = j + 1
        np.multiply(P[:, 1 : w + 1], R[:, j : j + 1], out=x[:, :w])
        np.multiply(P[:, :w], Q[:, j : j + 1], out=y[:, :w])
        np.add(x[:, :w], y[:, :w], out=P[:, 1 : w + 1])
        P[:, 0] *= R[:, j]
    dropped = [0.0]
    parts = [_trim(0, P[b], tol, dropped) for b in range(nb)]
    while len(parts) > 1:
        nxt = []
        for k in range(0, len(parts) - 1, 2):
            (o1, a1), (o2, a2) = parts[k], parts[k + 1]
            nxt.append(_trim(o1 + o2, np.convolve(a1, a2), tol, dropped))
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    off, pmf = parts[0]
    # trimming a factor of a product measure drops at most that mass from the total
    return off, pmf, float(dropped[0])


def _trim(off: int, a: np.ndarray, tol: float, dropped: list) -> tuple[int, np.ndarray]:
    # called about n / 64 times per pmf on short arrays: the arrays' methods and numpy's reduction
    # (what np.cumsum, np.searchsorted, np.argmax and .sum() call, without their wrappers), one argmax
    a = np.maximum(a, 0.0)
    top = int(a.argmax())
    lo = min(int(a.cumsum().searchsorted(tol, "right")), top)
    hi = max(a.size - int(a[::-1].cumsum().searchsorted(tol, "right")), top + 1)
    dropped[0] += float(_add_reduce(a[:lo]) + _add_reduce(a[hi:]))
    return off + lo, a[lo:hi].copy()


_add_reduce = np.add.reduce   # ndarray.sum of a 1-d float array


# ----------------------------------------------------------------------------- the clones pair
def pair_delta(eps: float, w: float, off: int, pmf: np.ndarray, missing: float = 0.0) -> float:
    """Exact hockey-stick divergence H_{e^eps}(P || Q) of the clones pair (= H(Q || P) by symmetry).

    P = (1-w) P0 + w Q0, Q = (1-w) Q0 + w P0 with P0 = (A+1, C-A), Q0 = (A, C-A+1),
    A ~ Bin(C, 1/2), C ~ pmf (pmf[k] = Pr[C = off + k]); C is visible (total count - 1), so
    delta = sum_c Pr[C=c] delta_c. Trimmed mass ``missing`` is added with delta_c <= 1.
    """
    if not 0 <= w <= 0.5:
        raise ValueError("w: must lie in [0, 1/2]")
    E = math.exp(eps)
    A = (1 - w) - E * w  # coefficient of f(a-1)
    B = E * (1 - w) - w  # minus the coefficient of f(a)
    if A <= 0:
        return float(min(1.0, missing))
    c = off + np.arange(pmf.size)
    tau = B / A  # include a iff a / (c + 1 - a) > tau
    k = np.floor(tau * (c + 1) / (1 + tau)).astype(np.int64) + 1
    k = np.clip(k, 0, c + 1)
    # S(j) = Pr[Bin(c, 1/2) >= j]
    cf = c.astype(float)
    s_km1 = _half_sf(k - 1, cf)
    s_k = _half_sf(k, cf)
    dc = np.maximum(A * s_km1 - B * s_k, 0.0)
    return float(min(1.0, np.dot(pmf, dc) + missing))


def _half_logpmf(k: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log Pr[Bin(c, 1/2) = k] (-inf outside 0..c), through log-gamma."""
    from scipy import special

    k = np.asarray(k, float)
    ok = (k >= 0) & (k <= c)
    kk = np.where(ok, k, 0.0)
    lp = special.gammaln(c + 1) - special.gammaln(kk + 1) - special.gammaln(c - kk + 1) - c * math.log(2)
    return np.where(ok, lp, -np.inf)


def _half_pmf(k: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Pr[Bin(c, 1/2) = k] (0 outside 0..c)."""
    return np.exp(_half_logpmf(k, c))


def _half_cdf(k: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Pr[Bin(c, 1/2) <= k] with k possibly negative (0) or >= c (1)."""
    from scipy import special

    k = np.asarray(k, float)
    ci = np.asarray(c).astype(np.int64)
    out = special.bdtr(np.clip(np.floor(k), 0, ci).astype(np.int64), ci, 0.5)
    return np.where(k < 0, 0.0, np.where(k >= c, 1.0, out))


def _half_sf(j: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Pr[Bin(c, 1/2) >= j], accurate in the upper tail."""
    from scipy import special

    j = np.asarray(j, float)
    ci = np.asarray(c).astype(np.int64)
    out = special.bdtrc(np.clip(np.floor(j) - 1, 0, ci).astype(np.int64), ci, 0.5)
    return np.where(j <= 0, 1.0, np.where(j > c, 0.0, out))


def theorem2_delta(eps: float, w: float, off: int, pmf: np.ndarray, delta1: float = 0.0) -> float:
    """The paper's formula (5) with its t_eps (by bisection on log t), for comparison with pair_delta.

    Uses the sum over all c of the clone-count support (the paper writes i = 1..n-1) and
    F_i(x) = 0 for x < 0. Several eps of one clone-count law: :func:`theorem2_delta_fn`.
    """
    return theorem2_delta_fn(w, off, pmf, delta1)(eps)


def _log_half_mixture(c: np.ndarray, wts: np.ndarray) -> Callable[[np.ndarray], float]:
    """``k -> log sum_c w_c Pr[Bin(c, 1/2) = k_c]`` (0 mass outside ``[0, c]``), in log space: both
    of Theorem 2's sums underflow for large c."""
    from scipy import special

    ci = c.astype(np.int64)
    G = special.gammaln(np.arange(ci.max() + 2, dtype=float) + 1)  # G[k] = log k!
    base = np.log(wts) + G[ci] - c * math.log(2)

    def lse(k):
        k = k.astype(np.int64)
        ok = (k >= 0) & (k <= ci)
        if ok.all():   # every k_c inside [0, c] (most calls): the same terms without the masks
            x = base - G[k] - G[ci - k]
        else:
            kk = np.where(ok, k, 0)
            x = np.where(ok, base - G[kk] - G[ci - kk], -np.inf)
        m = x.max()
        return m + math.log(np.exp(x - m).sum()) if np.isfinite(m) else -np.inf

    return lse


def theorem2_delta_fn(w: float, off: int, pmf: np.ndarray, delta1: float = 0.0) -> Callable[[float], float]:
    """``eps -> theorem2_delta(eps, w, off, pmf, delta1)``, the same numbers, for an eps search: the
    left side of t_eps's condition does not depend on eps (only the ``-e^eps`` it is compared with),
    so its value at each bisection point (log t) is kept and the many nearby eps of a search, whose
    bisections share most of their points, compute each point once."""
    c = (off + np.arange(pmf.size)).astype(float)
    keep = pmf > 0
    c, wts = c[keep], pmf[keep]
    lse = _log_half_mixture(c, wts)
    lhs_at: dict[float, float] = {}   # log t -> the condition's left side at t = e^(log t)
    c1 = c + 1

    def lhs(log_t: float) -> float:
        got = lhs_at.get(log_t)
        if got is None:
            t = math.exp(log_t)
            # l(t) = -sum w f(top) / sum w f(bot), in log space (both sums underflow for large c);
            # top at floor(c + 1 - (c + 1)/(t + 1)), bot at floor(c - (c + 1)/(t + 1)), the quotient once
            r = c1 / (t + 1)
            top = lse(np.floor(c1 - r))
            bot = lse(np.floor(c - r))
            l_t = -math.exp(min(top - bot, 700.0)) if np.isfinite(bot) else -np.inf
            got = lhs_at[log_t] = (1 - delta1) * (-2 * w + (1 - 2 * w) * l_t) - delta1
        return got

    def delta_at(eps: float) -> float:
        E = math.exp(eps)
        lo, hi = -40.0, 1.0  # log t
        while not lhs(hi) >= -E and hi < 40:
            hi += 2.0
        for _ in range(48):
            mid = 0.5 * (lo + hi)
            if lhs(mid) >= -E:
                hi = mid
            else:
                lo = mid
        t = math.exp(hi)
        fl = _half_cdf(np.floor(c - (c + 1) / (t + 1)), c)
        fr = _half_cdf(np.floor(c + 1 - (c + 1) / (t + 1)), c)
        val = (-E + (1 - delta1) * 2 * w + delta1) * np.dot(wts, fl) + (1 - delta1) * (1 - 2 * w) * np.dot(wts, fr)
        return float(max(val, 0.0))

    return delta_at


def eps_for_delta(delta_of_eps: Callable[[float], float], delta: float, eps_hi: float,
                  rtol: float = 1e-7, *, cap_valid: bool = False) -> float:
    """:func:`shuffledp.accountants.numerics.hockey_stick.eps_for_delta` (one contract: ``inf`` for an
    unreachable target unless ``cap_valid``), with this module's default precision."""
    return _hs_eps_for_delta(delta_of_eps, delta, eps_hi, rtol, cap_valid=cap_valid)
