"""Luo, Wang and Yi's own privacy analysis of balls-into-bins (CCS 2022), as the segmented paper's
baselines were calibrated (Sec. 6: "MM, shuffle ... balls-into-bins [12]").

Balls-into-bins (small domain, no hashing): every user sends its item as is plus blanket messages,
each uniform over the ``d`` bins. For neighbours that move the victim's item from bin ``j0`` to bin
``j1`` the analysis looks only at the two bins' blanket counts ``X0, X1`` and bounds delta by the
probability of the privacy-loss event, the likelihood ratio of the two counts (approximated by
their ratio) reaching ``e^eps``:

    delta_L(eps) = P[X0 + 1 >= e^eps X1],   X0, X1 i.i.d. Bin(N, p),

the smallest blanket load meeting ``delta_L <= delta`` being the one used. Two published forms:

* ``numeric`` -- the smallest expected blanket load per bin ``mu = N p`` meeting the event bound,
  found by search. Luo et al. ran this in their experiments: their public implementation
  (github.com/hkustDB/SDPFE, ``FE/fe.cpp``, functions ``Checker`` and ``Search``) models a bin's
  blanket count as ``Bin(n, mu / n)`` and prints the resulting ``mu`` with every result
  (``eps = 1, n = 1e5, delta = 1e-10: mu = 97.9614``; ``eps = 0.5, n = 9,854,640, delta = 0.5 / n^2:
  mu = 504.817``, the latter from ``VS/fe.cpp``); the tests compare :func:`luo_mu` with both.
  Their searches cap ``mu`` at 1000 (``FE``) or fall back to the closed form above 5000 (``VS``);
  here the event bound itself is solved, without caps.
* ``closed`` -- the closed form of their privacy theorem, ``mu = 32 ln(2 / delta) / eps^2``
  (the starting point of ``SearchOptMu`` in ``VS/fe.cpp``; far more blankets than ``numeric``).

Applied to the segmented paper's baselines (this project's choices, docs/segmented.md): a user
holds ``s`` items, so each item must meet ``(eps / s, delta / (s e^eps))`` -- the group-privacy
conversion of the segmented paper's Theorem 3 (Lemma 1), which the paper's balls-into-bins MSE
``O(d s^2 log(1/delta) / (n eps)^2 + s/n)`` also reflects; and a bin's blanket count is that of the
protocol the baselines run, ``ceil(m)`` trials per user at rate ``m / ceil(m)``, uniform over
``d`` bins: ``X ~ Bin(n ceil(m), m / (ceil(m) d))`` -- exactly Luo et al.'s ``Bin(n, mu / n)``
with ``mu = n m / d`` when ``m <= 1``.

This is NOT an accountant of this project: the event ``X0 + 1 >= e^eps X1`` drops the factor
``(N - X1 + 1) / (N - X0 + 1)`` of the exact likelihood ratio and treats the two bins' counts as
independent (they are multinomial). It is here to reproduce the paper's calibration, labelled as
such; :func:`sound_user_delta` reports what our sound accountant certifies at its blanket rate
(tests/test_segmented_params.py measures the gap).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accountants.numerics.hockey_stick import bisect_switch, smallest_rate
from shuffledp.accountants.validation import AccountantDomainError, check_delta, check_int, check_positive

__all__ = ["FORMS", "luo_event_delta", "luo_mu", "luo_closed_mu", "luo_blanket_rate", "luo_user_delta",
           "sound_user_delta"]

FORMS = ("numeric", "closed")
N_MAX = 10**9          # blanket trials (users x ceil(m)) the event bound is evaluated for



def _x1_window(N: int, p: float) -> np.ndarray:
    """Values of ``X1 ~ Bin(N, p)`` holding all but ~``TAIL`` of its mass (the rest is added)."""
    mean, sd = N * p, math.sqrt(N * p * (1 - p))
    half = 40.0 * sd + 40.0
    return np.arange(max(0, int(math.floor(mean - half))), min(N, int(math.ceil(mean + half))) + 1)


def luo_event_delta(N: int, p: float, eps: float) -> float:
    """``P[X0 + 1 >= e^eps X1]`` for ``X0, X1`` i.i.d. ``Bin(N, p)``: Luo et al.'s privacy-loss event
    for one bin pair (module doc). Summed over a window of ``X1`` with the mass outside it added."""
    from scipy import stats

    N = check_int(N, "N", 1, N_MAX)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise AccountantDomainError("p", f"{p!r} must lie in [0, 1]")
    eps = check_positive(eps, "eps")
    if p == 0.0:
        return 1.0                     # no blanket: X1 = 0 and the event always holds
    if p == 1.0:
        return 1.0 if math.exp(eps) * N <= N + 1 else 0.0
    x1 = _x1_window(N, p)
    # X0 >= ceil(e^eps x1) - 1 (at least 0); P(X0 >= k) = sf(k - 1)
    k = np.maximum(np.ceil(math.exp(eps) * x1) - 1.0, 0.0)
    inside = stats.binom.pmf(x1, N, p)
    total = float(np.sum(inside * stats.binom.sf(k - 1.0, N, p)))
    # the mass of X1 outside the window, from its two tails (not 1 - sum: that rounding error
    # alone is ~1e-16 x the window, the size of the deltas targeted here)
    lo, hi = int(x1[0]), int(x1[-1])
    outside = (float(stats.binom.cdf(lo - 1, N, p)) if lo > 0 else 0.0) + float(stats.binom.sf(hi, N, p))
    return min(1.0, total + outside)


def luo_closed_mu(eps: float, delta: float) -> float:
    """Closed form of Luo et al.'s theorem: ``32 ln(2 / delta) / eps^2`` blankets per bin."""
    eps = check_positive(eps, "eps")
    delta = check_delta(delta)
    return 32.0 * math.log(2.0 / delta) / eps**2


def luo_mu(n: int, eps: float, delta: float, *, rtol: float = 1e-6) -> float:
    """Luo et al.'s numeric form as their code states it: the smallest ``mu`` (relative precision
    ``rtol``, an evaluated feasible point) with ``luo_event_delta(n, mu / n, eps) <= delta``."""
    n = check_int(n, "n", 2, N_MAX)
    eps = check_positive(eps, "eps")
    delta = check_delta(delta)

    def ok(mu: float) -> bool:
        return luo_event_delta(n, mu / n, eps) <= delta

    hi = min(float(n), 1.0)
    while not ok(hi):
        if hi >= n:
            return math.inf
        hi = min(float(n), 2 * hi)
    return bisect_switch(ok, hi / 2, hi, rtol, ok_lo=False)[1]


def _item_target(eps: float, delta: float, s: int) -> tuple[float, float]:
    """Per-item ``(eps / s, delta / (s e^eps))`` (Lemma 1 / Theorem 3 of the segmented paper)."""
    return eps / s, delta / (s * math.exp(eps))


def luo_blanket_rate(n: int, d: int, s: int, eps: float, delta: float, *, form: str = "numeric",
                     m_max: float = 1e5, rtol: float = 1e-4) -> float:
    """Blanket messages per user ``m`` of balls-into-bins at user-level ``(eps, delta)`` by Luo et
    al.'s analysis (module doc): ``closed``: ``m = mu d / n`` with the theorem's ``mu``; ``numeric``:
    the smallest ``m`` (an evaluated feasible point, relative precision ``rtol``) whose per-bin
    blanket count ``Bin(n ceil(m), m / (ceil(m) d))`` meets the event bound; ``inf`` above ``m_max``."""
    n = check_int(n, "n", 2, N_MAX)
    d = check_int(d, "d", 2)
    s = check_int(s, "s", 1, d)
    eps = check_positive(eps, "eps")
    delta = check_delta(delta)
    if form not in FORMS:
        raise AccountantDomainError("form", f"{form!r} is not one of {', '.join(FORMS)}")
    eps_i, delta_i = _item_target(eps, delta, s)
    if form == "closed":
        m = luo_closed_mu(eps_i, delta_i) * d / n
        return m if m <= m_max else math.inf

    def ok(m: float) -> bool:
        cm = math.ceil(m)
        if n * cm > N_MAX:
            raise AccountantDomainError("m", f"n ceil(m) = {n * cm} blanket trials exceed {N_MAX}")
        return luo_event_delta(n * cm, m / (cm * d), eps_i) <= delta_i

    return smallest_rate(ok, m_max, rtol)


def luo_user_delta(n: int, d: int, s: int, eps: float, m: float) -> float:
    """User-level delta at ``eps`` by Luo et al.'s event bound for blanket rate ``m > 0``: the
    per-item event probability at ``eps / s`` times ``s e^eps`` (Lemma 1), as the calibration uses."""
    n = check_int(n, "n", 2, N_MAX)
    s = check_int(s, "s", 1)
    eps = check_positive(eps, "eps")
    m = check_positive(m, "m")
    cm = math.ceil(m)
    return min(1.0, s * math.exp(eps) * luo_event_delta(n * cm, m / (cm * d), eps / s))


def sound_user_delta(n: int, d: int, s: int, eps: float, m: float) -> float:
    """User-level delta at ``eps`` that our sound accountant certifies for balls-into-bins with
    blanket rate ``m`` (the Poisson randomizer with ``lambda = 1``, group privacy over ``s`` items:
    :func:`shuffledp.accountants.special.poisson.poisson_user_delta`)."""
    from shuffledp.accountants.special.poisson import poisson_user_delta

    return poisson_user_delta(1.0, n, m, d, s, eps, accountant="sound")
