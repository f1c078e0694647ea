"""The registered accountants behind one interface (:mod:`~shuffledp.accountants.registry`).

:func:`eps` and :func:`delta` are the implementations the registry's entries point to: each maps
a bound's name to the call of the module that computes it, with the randomizer's parameters
filled in (:func:`~shuffledp.accountants.best.mechanism_params`). The calls are the very ones
``best`` and the cross-paper table made before the registry (same arguments, same numbers).

Upper bounds answer at most ``eps0`` (shuffling eps0-LDP reports is eps0-DP) and their delta is 0
from ``eps >= eps0`` on. A bound with only one direction implemented gets the other by
:func:`_invert`: a bisection on ``log delta`` that keeps the verified side (an upper bound's delta
is a point where its eps is at most the given one; a lower bound's, where its eps still exceeds it).
"""

from __future__ import annotations

import math

from shuffledp.accountants.registry import REGISTRY, NotEvaluated

__all__ = ["eps", "delta", "AUTO"]

AUTO = "auto"  # decomposition's default starting point (k-RR: its exact-pair lower bound)


def _filled(mechanism: str, eps0: float, params: dict) -> dict:
    from shuffledp.accountants.best import mechanism_params

    return mechanism_params(mechanism, eps0, **params)


def _vr_params(mechanism: str, eps0: float, p: dict):
    from shuffledp.accountants import variation_ratio as vr

    return vr.vr_params("krr", eps0, k=p["k"]) if mechanism == "krr" else vr.vr_params("general", eps0)


def _blanket_kw(mechanism: str, p: dict) -> dict:
    if mechanism == "mhm":  # the blanket lemma with MHM's exact moments (any hash family)
        return {"mechanism": "mhm", "d": p["d"], "g": p["g"]}
    return {"mechanism": "krr", "k": p["k"]} if mechanism == "krr" else {"mechanism": "generic"}


def _pairs(mechanism: str, eps0: float, p: dict):
    from shuffledp.accountants import best
    from shuffledp.accountants import decomposition as dec

    if mechanism == "subset-exp" and p["s"] > best.SUBSET_PAIRS_MAX:
        raise NotEvaluated(f"subset-exp with s > {best.SUBSET_PAIRS_MAX}: one full evaluation per overlap")
    return dec.krr_pairs(p["k"], eps0) if mechanism == "krr" else best.grouped_pairs_for(mechanism, eps0, p)


def _local(eps0: float, n: int):
    import numpy as np

    return np.full(n, eps0)


def _krr_size(mechanism: str, p: dict) -> int:
    return p["k"] if mechanism == "krr" else 2  # binary RR is eps0-LDP: it lower-bounds the class


def _configs(mechanism: str, eps0: float, p: dict):
    from shuffledp.accountants import randomizers as rz

    if mechanism == "subset-exp" and p["d"] < p["s"]:
        return None  # no two disjoint sets: no pair to search
    if mechanism == "mhm":
        from shuffledp.accountants.mhm_randomizer import mhm_real_pair_configs

        return mhm_real_pair_configs(p["d"], p["g"], eps0)
    return rz.real_pair_configs(mechanism, eps0, **p)


def _three(vic4, vic4q, configs4):
    from shuffledp.accountants import randomizers as rz

    return rz.coarse_three(vic4), rz.coarse_three(vic4q), {nm: rz.coarse_three(o) for nm, o in configs4.items()}


def _third_input(mechanism: str, eps0: float, n: int, p: dict):
    """``(build, atoms)`` of :mod:`~shuffledp.accountants.blocked_pairs`' third-input pair for the
    randomizer (the general class: 3-RR, an eps0-LDP member of it): ``build(tail)`` makes the pair,
    ``atoms`` are one report's (probability, likelihood ratios) under the reference."""
    from functools import partial

    from shuffledp.accountants import blocked_pairs as bp
    from shuffledp.accountants import third_flag as tf

    if mechanism in ("krr", "general"):
        k = p.get("k", 3)
        return partial(bp.krr_pair, k, eps0, n), bp.krr_atoms(k, eps0)
    try:
        r3, s3 = tf.third_flag_rates(mechanism, eps0, g=p.get("g"))
        if not (0.0 < r3 < s3 < 1.0):
            raise ValueError(f"need 0 < r < s < 1, got r={r3!r}, s={s3!r}")
    except ValueError as exc:  # a flag rate that rounds to 0 or 1 (huge eps0)
        raise NotEvaluated(str(exc)) from None
    return partial(bp.third_input_pair, n, r3, s3), bp.third_input_atoms(r3, s3)


def _third_flag(mechanism: str, eps0: float, n: int, delta: float, p: dict):
    from shuffledp.accountants import third_flag as tf

    try:
        r3, s3 = tf.third_flag_rates(mechanism, eps0, g=p.get("g"))
    except ValueError as exc:  # a flag rate that rounds to 0 or 1 (huge eps0)
        raise NotEvaluated(str(exc)) from None
    if tf.third_flag_cells(n, r3, s3, delta) > tf.AFFORDABLE_CELLS:
        raise NotEvaluated(f"more than {tf.AFFORDABLE_CELLS:g} cells")
    return r3, s3


# ----------------------------------------------------------------------------- eps for delta
def _eps_upper(name, mechanism, eps0, n, delta, p, rtol, guess, coarse, ceiling=None) -> float:
    from shuffledp.accountants import best, blanket, clones, personalized
    from shuffledp.accountants import decomposition as dec
    from shuffledp.accountants import variation_ratio as vr

    if name == "decomposition":
        if guess == AUTO:
            guess = dec.krr_pair_lower_eps(p["k"], eps0, n, delta, rtol=rtol)[0] if mechanism == "krr" else None
        return dec.decomposition_eps(None, n, delta, pairs=_pairs(mechanism, eps0, p), rtol=rtol, guess=guess,
                                     ceiling=ceiling)
    if name == "variation-ratio":
        return vr.vr_eps(_vr_params(mechanism, eps0, p), n, delta, rtol=rtol,
                         window_max=best.VR_WINDOW_MAX if coarse else None)
    if name in ("fmt21", "fmt23"):
        return clones.eps_clones(eps0, n, delta, variant=name, rtol=rtol)
    if name == "fmt21-closed-form":
        return clones.eps_clones(eps0, n, delta, closed_form=True)
    if name.startswith("blanket-"):
        return blanket.eps_blanket(eps0, n, delta, bound=name[len("blanket-"):], rtol=rtol,
                                   **_blanket_kw(mechanism, p))
    local = _local(eps0, n)
    if name == "hps-uniform":
        return personalized.hps_eps(local, 0.0, delta, mechanism="laplace")
    if name == "ccc":
        return personalized.ccc_eps(local, 0.0, delta)
    return personalized.lzx_eps(local, delta)


def _eps_lower(name, mechanism, eps0, n, delta, p, rtol, guess) -> float:
    from shuffledp.accountants import best
    from shuffledp.accountants import decomposition as dec
    from shuffledp.accountants import lower_bounds as lbm
    from shuffledp.accountants import variation_ratio as vr

    kk = _krr_size(mechanism, p)
    if name == "lower":
        return max(fn() for fn in best.lower_bounds(mechanism, eps0, n, delta, rtol=rtol, **p).values())
    if name == "exact":
        return lbm.binary_rr_exact_eps(eps0, n, delta, rtol=min(rtol, 1e-6))
    if name == "worst-pair":
        return lbm.krr_worst_pair(kk, eps0, n, delta, rtol=rtol)[0]
    if name == "pair-third-value":
        return dec.krr_pair_lower_eps(kk, eps0, n, delta, rtol=rtol)[0]
    if name == "witness":
        return vr.witness_eps(mechanism, eps0, n, delta, rtol=rtol, **({"k": p["k"]} if mechanism == "krr" else {}))
    if name == "third-input-blocked":
        from shuffledp.accountants import blocked_pairs as bp

        guess = dec._asymptotic_guess(2, eps0, n, delta) if guess == AUTO else guess
        build, atoms = _third_input(mechanism, eps0, n, p)
        return bp.blocked_lower_eps(build, delta, eps0, rtol=rtol, guess=guess, atoms=atoms, n=n)
    if name == "cells-blocked":
        from shuffledp.accountants import cell_pairs as cp

        return cp.subset_exp_lower_eps(p["d"], p["s"], p["k"], eps0, n, delta, rtol=rtol,
                                       guess=None if guess == AUTO else guess)
    configs = _configs(mechanism, eps0, p)
    if configs is None:
        if name == "pair-group-counts":
            return 0.0
        raise NotEvaluated("subset-exp with d < s: no two disjoint sets")
    guess = dec._asymptotic_guess(2, eps0, n, delta) if guess == AUTO else guess
    if name == "group-one-count":
        return best.group_count_lower_eps(*configs, n, delta, eps0, rtol=rtol)
    if name == "pair-group-counts":
        return dec.pair_lower_eps(*_three(*configs), n, delta, eps0, rtol=rtol, guess=guess)[0]
    from shuffledp.accountants import third_flag as tf

    return tf.third_flag_lower_eps(n, *_third_flag(mechanism, eps0, n, delta, p), delta, eps0, guess=guess)


def eps(name: str, mechanism: str, eps0: float, n: int, delta: float, params: dict, *, rtol: float = 1e-5,
        guess=AUTO, coarse: bool = False, ceiling: float | None = None) -> float:
    """The bound ``name`` on the shuffled eps at ``delta`` (see the registry for the interface).
    ``guess``: a starting point of the decomposition's and the pair searches (the default: their
    own); ``coarse``: the variation ratio's clone counts in blocks (a fixed cost at huge n);
    ``ceiling``: another bound's eps the decomposition tries first (it answers eps0 where it cannot
    certify that eps, else searches below it)."""
    acc = REGISTRY[name]
    p = _filled(mechanism, eps0, params)
    if acc.kind == "lower":
        return float(_eps_lower(name, mechanism, eps0, n, delta, p, rtol, guess))
    return min(float(_eps_upper(name, mechanism, eps0, n, delta, p, rtol, guess, coarse, ceiling)), eps0)


# ----------------------------------------------------------------------------- delta for eps
def _invert(eps_of_delta, eps: float, kind: str, iters: int = 60) -> float:
    """delta from an eps(delta) bound, on the verified side: upper -- the smallest delta found whose
    eps is at most ``eps`` (1 if none); lower -- the largest delta found whose eps exceeds ``eps``
    (0 if none). Bisection on ``log delta`` over [1e-300, 1 - 1e-12]."""
    lo, hi = math.log(1e-300), math.log1p(-1e-12)
    ok = (lambda x: eps_of_delta(math.exp(x)) <= eps) if kind != "lower" else (
        lambda x: eps_of_delta(math.exp(x)) > eps)
    if kind != "lower":
        if not ok(hi):
            return 1.0
        if ok(lo):
            return 1e-300
        for _ in range(iters):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return math.exp(hi)
    if not ok(lo):
        return 0.0
    if ok(hi):
        return math.exp(hi)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return math.exp(lo)


def _delta_upper(name, mechanism, eps0, n, x, p) -> float:
    from shuffledp.accountants import blanket, clones, personalized
    from shuffledp.accountants import decomposition as dec
    from shuffledp.accountants import variation_ratio as vr

    if name == "decomposition":
        return dec.decomposition_delta(None, n, x, pairs=_pairs(mechanism, eps0, p))
    if name == "variation-ratio":
        return vr.vr_delta(_vr_params(mechanism, eps0, p), n, x)
    if name in ("fmt21", "fmt23"):
        return clones.delta_clones(eps0, n, x, variant=name)
    if name == "fmt21-closed-form":
        return _invert(lambda dl: clones.eps_clones(eps0, n, dl, closed_form=True), x, "upper")
    if name.startswith("blanket-"):
        return blanket.delta_blanket(eps0, n, x, bound=name[len("blanket-"):], **_blanket_kw(mechanism, p))
    local = _local(eps0, n)
    if name == "hps-uniform":
        return personalized.hps_delta(local, 0.0, x, mechanism="laplace")
    if name == "ccc":
        return personalized.ccc_delta(local, 0.0, x)
    return personalized.lzx_delta(local, x)


def _delta_lower(name, mechanism, eps0, n, x, p) -> float:
    from shuffledp.accountants import best, registry, third_flag
    from shuffledp.accountants import decomposition as dec
    from shuffledp.accountants import lower_bounds as lbm
    from shuffledp.accountants import variation_ratio as vr

    kk = _krr_size(mechanism, p)
    if name == "lower":
        accs = registry.for_randomizer(mechanism, k=p.get("k"), kind="lower", costs=("fixed", "grows"))
        return max(_delta_or_zero(a, mechanism, eps0, n, x, p) for a in accs)
    if name == "exact":
        return lbm.binary_rr_exact_delta(eps0, n, x)
    if name == "worst-pair":
        return max(lbm.krr_pair_delta(kk, eps0, n, x, m) for m in lbm._candidates(n - 1))
    if name == "pair-third-value":
        return dec.krr_pair_lower_delta(kk, eps0, n, x)[0]
    if name == "witness":
        return vr.witness_delta(mechanism, eps0, n, x, **({"k": p["k"]} if mechanism == "krr" else {}))
    if name == "third-input-blocked":
        from shuffledp.accountants import blocked_pairs as bp

        return bp.blocked_delta(_third_input(mechanism, eps0, n, p)[0](bp.DEFAULT_TAIL), x)
    if name == "cells-blocked":
        from shuffledp.accountants import cell_pairs as cp

        return cp.subset_exp_lower_delta(p["d"], p["s"], p["k"], eps0, n, x)
    configs = _configs(mechanism, eps0, p)
    if configs is None:
        if name == "pair-group-counts":
            return 0.0
        raise NotEvaluated("subset-exp with d < s: no two disjoint sets")
    if name == "group-one-count":
        return _invert(lambda dl: best.group_count_lower_eps(*configs, n, dl, eps0), x, "lower")
    if name == "pair-group-counts":
        vic_p, vic_q, three = _three(*configs)
        return max(dec.pair_delta(x, n, vic_p, vic_q, o) for o in three.values())
    r3, s3 = _third_flag(mechanism, eps0, n, 1e-6, p)
    return third_flag.third_flag_delta(n, r3, s3, x)


def _delta_or_zero(acc, mechanism, eps0, n, x, p) -> float:
    try:
        return float(_delta_lower(acc.name, mechanism, eps0, n, x, p))
    except NotEvaluated:
        return 0.0


def delta(name: str, mechanism: str, eps0: float, n: int, eps: float, params: dict, **_) -> float:
    """The bound ``name`` on the shuffled delta at ``eps`` (upper bounds: 0 from ``eps >= eps0`` on)."""
    acc = REGISTRY[name]
    p = _filled(mechanism, eps0, params)
    if acc.kind == "lower":
        return float(_delta_lower(name, mechanism, eps0, n, eps, p))
    return 0.0 if eps >= eps0 else float(_delta_upper(name, mechanism, eps0, n, eps, p))
