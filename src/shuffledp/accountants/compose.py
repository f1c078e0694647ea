"""Composition of ``account best`` over T rounds, a fresh shuffle each round (issue 25, item 5).

Each round is the shuffled mechanism of :func:`shuffledp.accountants.best.best_eps`. For any
per-round ``delta_1``, ``best_eps`` certifies the round ``(eps_1, delta_1)``-DP (its upper bound,
both directions of every neighbouring pair). A mechanism that is ``(eps_1, delta_1)``-DP is
dominated by the privacy-loss distribution of the ``(eps_1, delta_1)`` randomized-response pair
(loss ``+eps_1``, ``-eps_1``, ``+inf`` with mass ``delta_1``; Kairouz, Oh and Viswanath; the
construction is dp_accounting's ``from_privacy_parameters``, whose losses are rounded up), and
dominating pairs compose: the T-fold composition of that PLD (dp_accounting's FFT
``self_compose``, its truncated tail added to the infinite mass, i.e. pessimistic) bounds the
T-round mechanism's delta at every eps. The answer is the smallest composed eps over a grid of
``delta_1`` (each one a valid bound, so is their minimum), and never above ``T eps0`` (each round
is eps0-DP: shuffling eps0-LDP reports).

What this is not: the round's dominating pair here is built from one point of its privacy
profile. The exact profile (every (eps, delta) the decomposition certifies) would give a tighter
pair; that export is not built yet.
"""

from __future__ import annotations

import time

from shuffledp.accountants.validation import AccountantDomainError, check_delta, check_int

__all__ = ["ROUNDS_MAX", "SPLITS", "composed_from_point", "composed_eps"]

ROUNDS_MAX = 10_000
# per-round delta_1 = delta / T * split: the grid searched (a fine grid changes the answer little)
SPLITS = (0.5, 0.2, 0.05, 0.01, 1e-3, 1e-4)
SUPPORT_MAX = 2_000_000  # discretisation coarsened so that the composed PLD stays this short


def composed_from_point(eps1: float, delta1: float, rounds: int, delta: float) -> float:
    """Upper bound on the eps at ``delta`` of ``rounds`` adaptive rounds, each ``(eps1, delta1)``-DP
    (dp_accounting's pessimistic PLD of the randomized-response pair, self-composed); ``inf``
    when the composed infinite mass alone exceeds ``delta``."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    rounds = check_int(rounds, "rounds", 1, ROUNDS_MAX)
    if eps1 <= 0.0:
        eps1 = 0.0
    disc = max(1e-4, 2.0 * rounds * max(eps1, 1e-12) / SUPPORT_MAX)
    one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps1, delta1),
                                      value_discretization_interval=disc)
    if rounds > 1:
        one = one.self_compose(rounds, tail_mass_truncation=min(1e-15, 1e-3 * delta))
    many = one
    return float(many.get_epsilon_for_delta(delta))


def composed_eps(mechanism: str, eps0: float, n: int, delta: float, rounds: int, *, k=None, d=None,
                 s=None, g=None, rtol: float = 1e-5) -> dict:
    """Smallest eps over :data:`SPLITS` such that ``rounds`` fresh shuffles of ``n`` reports are
    ``(eps, delta)``-DP (see the module doc); with the per-round point that gave it."""
    from shuffledp.accountants import best

    start = time.perf_counter()
    rounds = check_int(rounds, "rounds", 1, ROUNDS_MAX)
    delta = check_delta(delta)
    if delta / rounds < best.BEST_DELTA_MIN:
        raise AccountantDomainError("rounds", f"delta / rounds must be >= {best.BEST_DELTA_MIN:g}")
    kw = {"k": k, "d": d, "s": s, "g": g}
    out = None
    for split in SPLITS if rounds > 1 else (1.0,):
        delta1 = delta / rounds * split
        if delta1 < best.BEST_DELTA_MIN:
            continue
        one = best.best_eps(mechanism, eps0, n, delta1, rtol=rtol, parallel=False, **kw)
        if rounds == 1:
            eps_t = one["eps"]   # one round: its own (eps, delta)
        else:
            eps_t = composed_from_point(one["eps"], delta1, rounds, delta)
        if out is None or eps_t < out["eps"]:
            out = {"eps": eps_t, "round_eps": one["eps"], "round_delta": delta1,
                   "round_upper_by": one["upper_by"]}
    pure = rounds * float(eps0)  # each round is eps0-DP
    if pure <= out["eps"]:
        out.update(eps=pure, round_eps=float(eps0), round_delta=0.0, round_upper_by="pure-ldp")
    out.update(rounds=rounds, seconds=time.perf_counter() - start)
    return out
