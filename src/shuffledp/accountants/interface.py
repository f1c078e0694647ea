"""The registered accountants' own functions (:mod:`~shuffledp.accountants.registry`).

Every registry entry names two functions of this module (or of the accountant's own module), one
per direction, that compute that bound and nothing else: there is no dispatch by name and no
fallback branch. Each has the interface

    <bound>_eps(mechanism, eps0, n, delta, p, *, rtol, **options) -> float
    <bound>_delta(mechanism, eps0, n, eps, p, **options) -> float

``p`` holds the randomizer's parameters with their defaults filled in
(:func:`~shuffledp.accountants.best.mechanism_params`); the entry checks the common arguments,
the randomizer, its k-RR size and the bound's premise (``premise``: the neighbouring pair a lower
bound evaluates must exist for the randomizer) before calling, and caps an upper bound's eps at
``eps0`` (shuffling eps0-LDP reports is eps0-DP; its delta is 0 from ``eps >= eps0`` on). The calls
are the very ones ``best`` and the cross-paper table made before the registry (same arguments,
same numbers). A bound with only one direction computed gets the other by :func:`invert`: a
bisection on ``log delta`` that keeps the verified side.

Lower bounds: each function's docstring states the neighbouring pair it evaluates and the
condition for that pair to exist; where the randomizer does not allow it the entry's premise
refuses the point (``best`` leaves the bound out, a direct call raises
:class:`~shuffledp.accountants.registry.NotEvaluated`). ``olh`` and ``mhm`` take an optional input
domain ``domain`` (the number of values of the input; MHM: of each attribute, the smallest if
they differ): their upper bounds hold for every domain; their lower bounds that place the other
users at a third input need it known and at least 3, and refuse otherwise (over two values the
pair does not exist and those bounds exceed the exact eps).
"""

from __future__ import annotations

import math

from shuffledp.accountants.registry import NotEvaluated

__all__ = ["AUTO", "invert", "third_input_exists"]

AUTO = "auto"  # the decomposition's and the pair searches' default starting point


# ----------------------------------------------------------------------------- shared helpers
def filled(mechanism: str, eps0: float, params: dict) -> dict:
    """The randomizer's parameters with their defaults filled in (checked): what every entry's
    functions and premise receive as ``p``."""
    from shuffledp.accountants.params import mechanism_params

    return mechanism_params(mechanism, eps0, **params)


def _vr_params(mechanism: str, eps0: float, p: dict):
    from shuffledp.accountants.upper import variation_ratio as vr

    return vr.vr_params("krr", eps0, k=p["k"]) if mechanism == "krr" else vr.vr_params("general", eps0)


def _blanket_kw(mechanism: str, p: dict) -> dict:
    if mechanism == "mhm":  # the blanket lemma with MHM's exact moments (any hash family)
        return {"mechanism": "mhm", "d": p["d"], "g": p["g"]}
    return {"mechanism": "krr", "k": p["k"]} if mechanism == "krr" else {"mechanism": "generic"}


def _pairs(mechanism: str, eps0: float, p: dict):
    from shuffledp.accountants import best
    from shuffledp.accountants.upper import decomposition as dec

    if mechanism == "subset-exp" and p["s"] > best.SUBSET_PAIRS_MAX:
        raise NotEvaluated(f"subset-exp with s > {best.SUBSET_PAIRS_MAX}: one full evaluation per overlap")
    return dec.krr_pairs(p["k"], eps0) if mechanism == "krr" else best.grouped_pairs_for(mechanism, eps0, p)


def _local(eps0: float, n: int):
    import numpy as np

    return np.full(n, eps0)


def _krr_size(mechanism: str, p: dict) -> int:
    """k of the k-RR a k-RR bound evaluates: k-RR's own; subset-exp with s = 1 and subset size 1
    is (d + 1)-RR (premise :func:`is_krr`); the general class: binary RR (an eps0-LDP member)."""
    if mechanism == "krr":
        return p["k"]
    return p["d"] + 1 if mechanism == "subset-exp" else 2


def invert(eps_of_delta, eps: float, kind: str, iters: int = 60) -> float:
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


# ----------------------------------------------------------------------------- premises
def third_input_exists(mechanism: str, p: dict) -> str | None:
    """None when the randomizer has an input other than the victim's two (a third input for the
    other users to hold), else why not: k-RR needs k >= 3, OUE d >= 3; subset-exp a set disjoint
    from the victim's two disjoint sets (d + s >= 3 s); the general class has 3-RR among its
    members; OLH and MHM need their input ``domain`` given and at least 3 (unknown: refused)."""
    if mechanism == "krr" and p["k"] < 3:
        return f"k-RR with k = {p['k']} has no third value (needs k >= 3)"
    if mechanism == "oue" and p["d"] < 3:
        return f"OUE with d = {p['d']} has no third input (needs d >= 3)"
    if mechanism == "subset-exp" and p["d"] < 2 * p["s"]:
        return f"subset-exp with d = {p['d']} < 2 s = {2 * p['s']} has no set disjoint from two disjoint sets"
    if mechanism in ("olh", "mhm"):
        if p.get("domain") is None:
            return f"{mechanism} with an unknown input domain may have no third input (give domain >= 3)"
        if p["domain"] < 3:
            return f"{mechanism} with domain = {p['domain']} has no third input (needs domain >= 3)"
    return None


def two_disjoint_sets(mechanism: str, p: dict) -> str | None:
    """None unless subset-exp's ``d + s`` items hold no two disjoint ``s``-sets (``d < s``): the
    victim's pair of the group-count bounds then does not exist."""
    if mechanism == "subset-exp" and p["d"] < p["s"]:
        return f"subset-exp with d = {p['d']} < s = {p['s']} has no two disjoint sets"
    return None


def is_krr(mechanism: str, p: dict) -> str | None:
    """None when the randomizer is k-ary randomized response (the general class: its member binary
    RR): subset-exp is ``(d + 1)``-RR exactly when ``s = 1`` and its subset size is 1 (the output
    ``z`` meets the input ``x`` only when ``z = x``)."""
    if mechanism == "subset-exp" and not (p["s"] == 1 and p["k"] == 1):
        return "subset-exp is k-RR only with s = 1 and subset size k = 1"
    return None


def is_krr_with_third_value(mechanism: str, p: dict) -> str | None:
    """:func:`is_krr` and a third value (``k >= 3``; subset-exp with s = k = 1: ``d + 1 >= 3``)."""
    return is_krr(mechanism, p) or third_input_exists(mechanism, p)


def has_three_flags(mechanism: str, p: dict) -> str | None:
    """The three-flag pair (:mod:`~shuffledp.accountants.lower.third_flag`) exists: OUE with d >= 3, OLH
    with ``domain >= 3``, MHM with one attribute (it is then OLH with the same g) and ``domain >= 3``."""
    if mechanism == "mhm" and p["d"] != 1:
        return f"MHM with d = {p['d']} attributes: the three-flag pair is OLH's (d = 1)"
    return third_input_exists(mechanism, p)


def third_input_blocked_premise(mechanism: str, p: dict) -> str | None:
    """The blocked third-input pair exists: k-RR (subset-exp in its k-RR form) with a third value,
    the general class (3-RR), or the three-flag pair (:func:`has_three_flags`)."""
    if mechanism in ("krr", "general", "subset-exp"):
        return is_krr_with_third_value(mechanism, p)
    return has_three_flags(mechanism, p)


# ----------------------------------------------------------------------------- upper bounds
def decomposition_eps(mechanism, eps0, n, delta, p, *, rtol, guess=AUTO, ceiling=None) -> float:
    """The optimal blanket decomposition of the victim's grouped pair (accountants.decomposition)."""
    from shuffledp.accountants.lower import exact_pairs as xp
    from shuffledp.accountants.upper import decomposition as dec

    if guess == AUTO:
        guess = xp.krr_pair_lower_eps(p["k"], eps0, n, delta, rtol=rtol)[0] if mechanism == "krr" else None
    return dec.decomposition_eps(None, n, delta, pairs=_pairs(mechanism, eps0, p), rtol=rtol, guess=guess,
                                 ceiling=ceiling)


def decomposition_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.upper import decomposition as dec

    return dec.decomposition_delta(None, n, eps, pairs=_pairs(mechanism, eps0, p))


def variation_ratio_eps(mechanism, eps0, n, delta, p, *, rtol, coarse=False) -> float:
    """The variation-ratio reduction (k-RR: its exact parameters; otherwise the general ones)."""
    from shuffledp.accountants import best
    from shuffledp.accountants.upper import variation_ratio as vr

    return vr.vr_eps(_vr_params(mechanism, eps0, p), n, delta, rtol=rtol,
                     window_max=best.VR_WINDOW_MAX if coarse else None)


def variation_ratio_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.upper import variation_ratio as vr

    return vr.vr_delta(_vr_params(mechanism, eps0, p), n, eps)


def fmt21_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """Hiding among the clones (FMT21), numerical."""
    from shuffledp.accountants.upper import clones

    return clones.eps_clones(eps0, n, delta, variant="fmt21", rtol=rtol)


def fmt21_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.upper import clones

    return clones.delta_clones(eps0, n, eps, variant="fmt21")


def fmt23_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """Stronger clones (FMT23), numerical."""
    from shuffledp.accountants.upper import clones

    return clones.eps_clones(eps0, n, delta, variant="fmt23", rtol=rtol)


def fmt23_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.upper import clones

    return clones.delta_clones(eps0, n, eps, variant="fmt23")


def fmt21_closed_form_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """FMT21's Theorem 3.1 (closed form; ``rtol`` unused)."""
    from shuffledp.accountants.upper import clones

    return clones.eps_clones(eps0, n, delta, closed_form=True)


def fmt21_closed_form_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.upper import clones

    return invert(lambda dl: clones.eps_clones(eps0, n, dl, closed_form=True), eps, "upper")


def blanket_hoeffding_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """The privacy blanket with Hoeffding's tail."""
    from shuffledp.accountants.upper import blanket

    return blanket.eps_blanket(eps0, n, delta, bound="hoeffding", rtol=rtol, **_blanket_kw(mechanism, p))


def blanket_hoeffding_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.upper import blanket

    return blanket.delta_blanket(eps0, n, eps, bound="hoeffding", **_blanket_kw(mechanism, p))


def blanket_bennett_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """The privacy blanket with Bennett's tail."""
    from shuffledp.accountants.upper import blanket

    return blanket.eps_blanket(eps0, n, delta, bound="bennett", rtol=rtol, **_blanket_kw(mechanism, p))


def blanket_bennett_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.upper import blanket

    return blanket.delta_blanket(eps0, n, eps, bound="bennett", **_blanket_kw(mechanism, p))


def hps_uniform_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """HPS with every user at eps0, Laplace randomizer on [0, 1] (a reference)."""
    from shuffledp.accountants.special import personalized

    return personalized.hps_eps(_local(eps0, n), 0.0, delta, mechanism="laplace")


def hps_uniform_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.special import personalized

    return personalized.hps_delta(_local(eps0, n), 0.0, eps, mechanism="laplace")


def ccc_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """CCC's mu-GDP bound with every user at eps0 (a reference)."""
    from shuffledp.accountants.special import personalized

    return personalized.ccc_eps(_local(eps0, n), 0.0, delta)


def ccc_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.special import personalized

    return personalized.ccc_delta(_local(eps0, n), 0.0, eps)


def lzx_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """LZX's per-user bound with every user at eps0."""
    from shuffledp.accountants.special import personalized

    return personalized.lzx_eps(_local(eps0, n), delta)


def lzx_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.special import personalized

    return personalized.lzx_delta(_local(eps0, n), eps)


# ----------------------------------------------------------------------------- lower bounds
def lower_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """The largest of the lower bounds ``best`` evaluates for the randomizer (each one's pair
    exists: ``best`` leaves out those whose premise fails)."""
    from shuffledp.accountants import best

    return max(fn() for fn in best.lower_bounds(mechanism, eps0, n, delta, rtol=rtol, **p).values())


def lower_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants import registry

    out = 0.0
    for acc in registry.for_randomizer(mechanism, k=p.get("k"), kind="lower", costs=("fixed", "grows"), params=p):
        try:
            out = max(out, float(acc.delta_for_eps(mechanism, eps0, n, eps, **p)))
        except registry.NotEvaluated:
            continue
    return out


def exact_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """Binary randomized response, every pair and every configuration of the others enumerated:
    exact for k-RR with k = 2 (the entry's k range), a member of the general class. Exists for
    every n >= 2."""
    from shuffledp.accountants.lower import lower_bounds as lbm

    return lbm.binary_rr_exact_eps(eps0, n, delta, rtol=min(rtol, 1e-6))


def exact_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.lower import lower_bounds as lbm

    return lbm.binary_rr_exact_delta(eps0, n, eps)


def worst_pair_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """Pair: the victim at value 0 or 1 of k-RR (binary RR for the general class), ``m`` of the
    others at 1 and the rest at 0, seen through the count of reports equal to 1. Exists for every
    k >= 2 and n >= 2 (the others' values are the victim's two)."""
    from shuffledp.accountants.lower import lower_bounds as lbm

    return lbm.krr_worst_pair(_krr_size(mechanism, p), eps0, n, delta, rtol=rtol)[0]


def worst_pair_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.lower import lower_bounds as lbm

    kk = _krr_size(mechanism, p)
    return max(lbm.krr_pair_delta(kk, eps0, n, eps, m) for m in lbm.split_candidates(n - 1))


def pair_third_value_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """Pair: the victim at value 0 or 1 of k-RR, the others all at 0, all at 1 or all at a third
    value 2, seen through three group counts. The third value needs k >= 3 (the entry's k range)."""
    from shuffledp.accountants.lower import exact_pairs as xp

    return xp.krr_pair_lower_eps(_krr_size(mechanism, p), eps0, n, delta, rtol=rtol)[0]


def pair_third_value_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.lower import exact_pairs as xp

    return xp.krr_pair_lower_delta(_krr_size(mechanism, p), eps0, n, eps)[0]


def _configs(mechanism: str, eps0: float, p: dict):
    from shuffledp.accountants.randomizers import standard as rz

    if mechanism == "mhm":
        from shuffledp.accountants.randomizers.mhm import mhm_real_pair_configs

        vic_p, vic_q, configs = mhm_real_pair_configs(p["d"], p["g"], eps0)
    else:
        vic_p, vic_q, configs = rz.real_pair_configs(mechanism, eps0, **{k: v for k, v in p.items() if k != "domain"})
    if third_input_exists(mechanism, p):  # OLH / MHM: the others at a third input only over domain >= 3
        configs = {nm: o for nm, o in configs.items() if nm != "others_at_third"}
    return vic_p, vic_q, configs


def _three(vic4, vic4q, configs4):
    from shuffledp.accountants.randomizers import standard as rz

    return rz.coarse_three(vic4), rz.coarse_three(vic4q), {nm: rz.coarse_three(o) for nm, o in configs4.items()}


def group_one_count_eps(mechanism, eps0, n, delta, p, *, rtol) -> float:
    """Pairs (:func:`randomizers.real_pair_configs`): the victim at ``x`` or ``x'`` (disjoint sets
    for subset-exp; MHM: every attribute differs), the others all at ``x``, all at ``x'``, or --
    where a third input exists (:func:`third_input_exists`; OLH / MHM: ``domain >= 3`` given) --
    all at a third one; seen through
    the count of reports favouring ``x`` only. Exists where two distinct inputs do (subset-exp:
    d >= s, the entry's premise)."""
    from shuffledp.accountants import best

    return best.group_count_lower_eps(*_configs(mechanism, eps0, p), n, delta, eps0, rtol=rtol)


def group_one_count_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants import best

    configs = _configs(mechanism, eps0, p)
    return invert(lambda dl: best.group_count_lower_eps(*configs, n, dl, eps0), eps, "lower")


def pair_group_counts_eps(mechanism, eps0, n, delta, p, *, rtol, guess=AUTO) -> float:
    """The pairs of :func:`group_one_count_eps` seen through three group counts (favouring ``x``
    only, ``x'`` only, the rest). Same premise."""
    from shuffledp.accountants.lower import exact_pairs as xp
    from shuffledp.accountants.numerics import secant as sec

    guess = sec.asymptotic_guess(2, eps0, n, delta) if guess == AUTO else guess
    return xp.pair_lower_eps(*_three(*_configs(mechanism, eps0, p)), n, delta, eps0, rtol=rtol, guess=guess)[0]


def pair_group_counts_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.lower import exact_pairs as xp

    vic_p, vic_q, three = _three(*_configs(mechanism, eps0, p))
    return max(xp.pair_delta(eps, n, vic_p, vic_q, o) for o in three.values())


def _flag_rates(mechanism: str, eps0: float, p: dict) -> tuple[float, float]:
    from shuffledp.accountants.lower import third_flag as tf

    try:   # MHM with one attribute is OLH with the same g (premise has_three_flags)
        r3, s3 = tf.third_flag_rates("olh" if mechanism == "mhm" else mechanism, eps0, g=p.get("g"))
        if not (0.0 < r3 < s3 < 1.0):
            raise ValueError(f"need 0 < r < s < 1, got r={r3!r}, s={s3!r}")
    except ValueError as exc:  # a flag rate that rounds to 0 or 1 (huge eps0)
        raise NotEvaluated(str(exc)) from None
    return r3, s3


def _third_flag(mechanism: str, eps0: float, n: int, delta: float, p: dict) -> tuple[float, float, dict]:
    """``(r, s, options)`` of the three-flag pair: in full up to ``AFFORDABLE_CELLS`` cells per
    evaluation; up to ``CAPPED_CELLS_MAX`` with the window of C cut to ``AFFORDABLE_CELLS`` (the
    least likely C values dropped, each a non-negative term: still a lower bound; at OUE n = 1e3,
    eps0 = 2, delta = 1e-6 it keeps all but 3e-7 of C's mass); beyond, not evaluated."""
    from shuffledp.accountants.lower import third_flag as tf

    r3, s3 = _flag_rates(mechanism, eps0, p)
    cells = tf.third_flag_cells(n, r3, s3, delta)
    if cells > tf.CAPPED_CELLS_MAX:
        raise NotEvaluated(f"more than {tf.CAPPED_CELLS_MAX:g} cells")
    return r3, s3, ({"budget": tf.AFFORDABLE_CELLS} if cells > tf.AFFORDABLE_CELLS else {})


def pair_third_input_eps(mechanism, eps0, n, delta, p, *, rtol, guess=AUTO) -> float:
    """Pair: the victim at ``x`` or ``x'``, every other user at a third input ``x''``, seen through
    three flags per report (OUE: the bits at x, x', x''; OLH: y = h(x), h(x'), h(x'')). The third
    input needs OUE's d >= 3 (OLH: its domain premise): the entry's premise
    (:func:`third_input_exists`)."""
    from shuffledp.accountants.lower import third_flag as tf
    from shuffledp.accountants.numerics import secant as sec

    guess = sec.asymptotic_guess(2, eps0, n, delta) if guess == AUTO else guess
    r3, s3, kw = _third_flag(mechanism, eps0, n, delta, p)
    return tf.third_flag_lower_eps(n, r3, s3, delta, eps0, guess=guess, **kw)


def pair_third_input_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.lower import third_flag as tf

    r3, s3, kw = _third_flag(mechanism, eps0, n, 1e-6, p)
    return tf.third_flag_delta(n, r3, s3, eps, **kw)


def _third_input(mechanism: str, eps0: float, n: int, p: dict):
    """``(build, atoms)`` of :mod:`~shuffledp.accountants.lower.blocked_pairs`' third-input pair for the
    randomizer (the general class: 3-RR, an eps0-LDP member of it): ``build(tail)`` makes the pair,
    ``atoms`` are one report's (probability, likelihood ratios) under the reference."""
    from functools import partial

    from shuffledp.accountants.lower import blocked_pairs as bp

    if mechanism in ("krr", "general", "subset-exp"):
        k = 3 if mechanism == "general" else _krr_size(mechanism, p)
        return partial(bp.krr_pair, k, eps0, n), bp.krr_atoms(k, eps0)
    r3, s3 = _flag_rates(mechanism, eps0, p)
    return partial(bp.third_input_pair, n, r3, s3), bp.third_input_atoms(r3, s3)


def third_input_blocked_eps(mechanism, eps0, n, delta, p, *, rtol, guess=AUTO) -> float:
    """Pair: the victim at ``x`` or ``x'``, every other user at a third input (k-RR: a third value;
    the general class: 3-RR; OUE / OLH: as :func:`pair_third_input_eps`), every count seen,
    evaluated in blocks. Needs a third input: k >= 3 (the entry's k range), OUE d >= 3 (the
    entry's premise, :func:`third_input_exists`)."""
    from shuffledp.accountants.lower import blocked_pairs as bp
    from shuffledp.accountants.numerics import secant as sec

    guess = sec.asymptotic_guess(2, eps0, n, delta) if guess == AUTO else guess
    build, atoms = _third_input(mechanism, eps0, n, p)
    return bp.blocked_lower_eps(build, delta, eps0, rtol=rtol, guess=guess, atoms=atoms, n=n)


def third_input_blocked_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.lower import blocked_pairs as bp

    return bp.blocked_delta(_third_input(mechanism, eps0, n, p)[0](bp.DEFAULT_TAIL), eps)


def cells_blocked_eps(mechanism, eps0, n, delta, p, *, rtol, guess=AUTO) -> float:
    """Pair: subset-exp's victim at disjoint sets ``x``, ``x'``, the others all at a third set
    disjoint from both, the counts of reports meeting x, x', x'' seen (blocks). Needs d >= 2 s (the
    entry's premise, :func:`third_input_exists`)."""
    from shuffledp.accountants.lower import cell_pairs as cp

    return cp.subset_exp_lower_eps(p["d"], p["s"], p["k"], eps0, n, delta, rtol=rtol,
                                   guess=None if guess == AUTO else guess)


def cells_blocked_delta(mechanism, eps0, n, eps, p) -> float:
    from shuffledp.accountants.lower import cell_pairs as cp

    return cp.subset_exp_lower_delta(p["d"], p["s"], p["k"], eps0, n, eps)
