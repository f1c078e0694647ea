"""Reference values for composition: exact laws of real shuffled k-RR pairs at small n and the
T-fold composition of any finite pair, bracketed on a grid (independent of dp_accounting).

* :func:`krr_pair_pmfs` -- the exact law of the shuffled histogram's sufficient counts
  ``(h_x, h_x')`` on the neighbouring datasets "victim at x, ``m`` others at x, ``n - 1 - m`` at
  x'" and "victim at x'" (the other values' counts are the rest: both worlds give them the same
  conditional law), by convolving the n users' laws over the three groups. The exact
  divergence of a real pair is a lower bound on the mechanism's; T rounds of that pair (the
  same datasets each round, non-adaptive) lower-bound T rounds of the mechanism.
* :func:`group_laws`, :func:`group_pair_pmfs` -- the same for every randomizer of the accountant
  with a finite output (k-RR, OUE, OLH, subset-exp): each report falls in one of three groups
  (favours x only, x' only, neither or both: likelihood ratio 1 for the victim), with the laws of
  :func:`shuffledp.accountants.randomizers.standard.real_pair_configs`; the exact law of the two
  first groups' counts with the others split between configurations (at x, at x', at a third
  input where one exists). A post-processing of the real shuffled output: its divergence, and
  that of its T-fold product, is a lower bound on the mechanism's.
* :func:`worst_pair_composed_eps` -- the largest, over such splits, of the exact T-fold
  composition of the pair (the lower end of the bracket below): the reference "exact T-fold
  composition of the worst pair" that composed upper bounds are held to.
* :func:`optimistic_pair_eps` -- a lower end at many rounds, where the bracket's grid would not fit
  in memory (T = 10,000): dp_accounting's optimistic PLD of the pair (losses rounded *down*, both
  directions kept apart), self-composed; its eps is at most the exact one.
* :func:`composed_eps_bracket` -- ``(low, high)`` around the exact eps at ``delta`` of the T-fold
  product of a finite pair given as its loss law: losses rounded down (``low``) or up (``high``)
  to a grid, T-fold convolution by FFT with binary powering. Rounding down can only lower
  ``E[(1 - e^{eps - L})_+]``, rounding up only raise it; mass dropped at the ends (below
  ``drop`` per step) is lost for ``low`` and counted infinite for ``high``. So the exact eps lies
  in ``[low, high]`` up to the FFT's rounding (values clipped at 0).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["krr_pair_pmfs", "loss_law", "composed_eps_bracket", "pair_composed_eps_bracket", "group_laws",
           "group_pair_pmfs", "worst_pair_composed_eps", "optimistic_pair_eps"]

N_EXACT_MAX = 400  # krr_pair_pmfs: O(n^3) convolution


def krr_pair_pmfs(k: int, eps0: float, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(P, Q)``, 2-D pmfs over ``(h_x, h_x')`` of shuffled k-RR (victim at x resp. x'; ``m``
    others at x and ``n - 1 - m`` at x')."""
    from scipy import signal

    if not (2 <= k and 2 <= n <= N_EXACT_MAX and 0 <= m <= n - 1):
        raise ValueError(f"need k >= 2, 2 <= n <= {N_EXACT_MAX}, 0 <= m <= n - 1; got {k}, {n}, {m}")
    e = math.exp(eps0)
    hi, lo = e / (e + k - 1), 1.0 / (e + k - 1)
    rest = (k - 2) / (e + k - 1)

    def user(own: str) -> np.ndarray:   # 2x2 pmf over (x-report, x'-report)
        u = np.zeros((2, 2))
        u[1, 0], u[0, 1] = (hi, lo) if own == "x" else (lo, hi)
        u[0, 0] = rest
        return u

    others = np.ones((1, 1))
    for own, count in (("x", m), ("x'", n - 1 - m)):
        for _ in range(count):
            others = signal.convolve(others, user(own))
    P = signal.convolve(others, user("x"))
    Q = signal.convolve(others, user("x'"))
    return np.clip(P, 0.0, None), np.clip(Q, 0.0, None)


def loss_law(P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``(losses, masses, infinite mass)`` of ``log P/Q`` under ``P``."""
    P, Q = np.asarray(P, float).ravel(), np.asarray(Q, float).ravel()
    both = (P > 0) & (Q > 0)
    return np.log(P[both] / Q[both]), P[both], float(P[(P > 0) & (Q <= 0)].sum())


def _power(pmf: np.ndarray, low: int, rounds: int, drop: float) -> tuple[np.ndarray, int]:
    """``pmf`` (grid indices from ``low``) convolved with itself ``rounds`` times (binary
    powering), at most ``drop`` of mass cut at each end after each convolution."""
    from scipy import signal

    def trim(x: np.ndarray, off: int) -> tuple[np.ndarray, int]:
        x = np.clip(x, 0.0, None)
        c = np.cumsum(x)
        i0 = int(np.searchsorted(c, drop, side="right"))
        i1 = max(int(np.searchsorted(c, c[-1] - drop, side="left")), i0)
        return x[i0:i1 + 1], off + i0

    result, r_low = None, 0
    base, b_low = pmf, low
    t = rounds
    while t:
        if t & 1:
            result, r_low = (base.copy(), b_low) if result is None else trim(
                signal.fftconvolve(result, base), r_low + b_low)
        t >>= 1
        if t:
            base, b_low = trim(signal.fftconvolve(base, base), 2 * b_low)
    return result, r_low


def _eps_for_delta(pmf: np.ndarray, low: int, h: float, inf: float, delta: float) -> float:
    """The eps (>= 0) where ``sum_L p_L (1 - e^{eps - L})_+ + inf`` falls to ``delta`` (bisection;
    ``inf`` when the infinite mass alone exceeds it)."""
    if inf > delta:
        return math.inf
    L = (low + np.arange(pmf.size)) * h
    keep = (L > 0) & (pmf > 0)
    L, p = L[keep], pmf[keep]

    def d(eps: float) -> float:
        above = L > eps
        return inf + float(np.dot(p[above], -np.expm1(eps - L[above])))

    if L.size == 0 or d(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, float(L.max())
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if d(mid) <= delta else (mid, hi)
    return hi


def composed_eps_bracket(losses, masses, inf: float, rounds: int, delta: float, h: float,
                         drop: float = 1e-30) -> tuple[float, float]:
    """``(low, high)`` around the exact eps at ``delta`` of ``rounds`` products of the pair whose
    loss law is ``(losses, masses, inf)`` (one direction), on the grid ``h``."""
    losses, masses = np.asarray(losses, float), np.asarray(masses, float)
    out = []
    for rnd in (np.floor, np.ceil):
        idx = rnd(losses / h).astype(np.int64)
        low = int(idx.min())
        pmf = np.bincount(idx - low, weights=masses)
        comp, c_low = _power(pmf, low, rounds, drop)
        inf_t = -math.expm1(rounds * math.log1p(-inf)) if inf < 1 else 1.0
        if rnd is np.ceil:   # the mass cut at the ends: infinite for the upper end
            inf_t += max(0.0, float(masses.sum()) ** rounds - float(comp.sum()))
        out.append(_eps_for_delta(comp, c_low, h, inf_t, delta))
    return out[0], out[1]


def pair_composed_eps_bracket(P, Q, rounds: int, delta: float, h: float) -> tuple[float, float]:
    """Both directions of the pair ``(P, Q)``: the larger eps of each end of the bracket."""
    a = composed_eps_bracket(*loss_law(P, Q), rounds, delta, h)
    b = composed_eps_bracket(*loss_law(Q, P), rounds, delta, h)
    return max(a[0], b[0]), max(a[1], b[1])


def group_laws(mechanism: str, eps0: float, *, k=None, d=None, s=None, g=None):
    """``(victim_p, victim_q, {config: one other user's law})`` over the three groups (module
    docstring); k-RR: report x, report x', any other report."""
    from shuffledp.accountants.randomizers import standard

    if mechanism == "krr":
        e = math.exp(eps0)
        hi, lo = e / (e + k - 1), 1.0 / (e + k - 1)
        vp, vq = (hi, lo, (k - 2) * lo), (lo, hi, (k - 2) * lo)
        configs = {"others_at_x": vp, "others_at_x'": vq}
        if k >= 3:
            configs["others_at_third"] = (lo, lo, 1.0 - 2.0 * lo)
        return vp, vq, configs
    from shuffledp.accountants.params import mechanism_params

    filled = mechanism_params(mechanism, eps0, k=k, d=d, s=s, g=g)   # defaults (subset-exp's k)
    vp, vq, configs = standard.real_pair_configs(mechanism, eps0, **{f: filled.get(f) for f in ("k", "d", "s", "g")
                                                                     if filled.get(f) is not None})
    return (standard.coarse_three(vp), standard.coarse_three(vq),
            {name: standard.coarse_three(law) for name, law in configs.items()})


def group_pair_pmfs(victim_p, victim_q, others) -> tuple[np.ndarray, np.ndarray]:
    """``(P, Q)``: exact 2-D pmfs of the counts of groups 1 and 2 over the victim (law
    ``victim_p`` resp. ``victim_q``) and the others (``others``: ``(law, count)`` pairs)."""
    from scipy import signal

    def kernel(law) -> np.ndarray:
        ker = np.zeros((2, 2))
        ker[1, 0], ker[0, 1], ker[0, 0] = law[0], law[1], law[2]
        return ker

    acc = np.ones((1, 1))
    for law, count in others:
        ker = kernel(law)
        for _ in range(int(count)):
            acc = signal.convolve(acc, ker, method="direct")
    P = signal.convolve(acc, kernel(victim_p), method="direct")
    Q = signal.convolve(acc, kernel(victim_q), method="direct")
    return np.clip(P, 0.0, None), np.clip(Q, 0.0, None)


def _splits(configs: dict, n: int) -> list[tuple[str, ...]]:
    names = list(configs)
    out = [(a,) for a in names]
    out += [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    return out if n >= 3 else [(a,) for a in names]


def worst_pair_composed_eps(mechanism: str, eps0: float, n: int, rounds: int, delta: float, h: float,
                            **params) -> tuple[float, str]:
    """``(eps, split)``: the largest lower end of the bracketed exact T-fold composition over the
    pairs "others all in one configuration" and "others split evenly between two" (both
    directions), and the split that gave it."""
    if not 2 <= n <= N_EXACT_MAX:
        raise ValueError(f"n: {n} outside 2..{N_EXACT_MAX}")
    vp, vq, configs = group_laws(mechanism, eps0, **params)
    best, arg = 0.0, ""
    for split in _splits(configs, n):
        sizes = [(n - 1) // len(split) + (1 if i < (n - 1) % len(split) else 0) for i in range(len(split))]
        P, Q = group_pair_pmfs(vp, vq, [(configs[c], m) for c, m in zip(split, sizes, strict=True)])
        low, _ = pair_composed_eps_bracket(P, Q, rounds, delta, h)
        if low > best:
            best, arg = low, "+".join(split)
    return best, arg


def optimistic_pair_eps(P, Q, rounds: int, delta: float, h: float) -> float:
    """A lower end of the exact eps at ``delta`` of ``rounds`` products of the pair ``(P, Q)`` (both
    directions): dp_accounting's optimistic PLD on the grid ``h`` (module docstring)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    P, Q = np.ravel(np.asarray(P, float)), np.ravel(np.asarray(Q, float))
    log_p = {i: math.log(v) for i, v in enumerate(P) if v > 0}
    log_q = {i: math.log(v) for i, v in enumerate(Q) if v > 0}
    pld = pld_lib.from_two_probability_mass_functions(log_p, log_q, pessimistic_estimate=False,
                                                      value_discretization_interval=h, symmetric=False)
    return float((pld if rounds == 1 else pld.self_compose(rounds)).get_epsilon_for_delta(delta))
