"""The randomizers an ``account best`` query names and their parameters: the domain checks, the
defaults (PrivSet's subset size, OLH's and MHM's hash ranges) and the grouped victim pairs the
decomposition evaluates. Light at import: the registry and the front read it."""

from __future__ import annotations

from shuffledp.accountants.validation import (
    K_MAX,
    AccountantDomainError,
    check_choice,
    check_delta,
    check_eps0,
    check_int,
    check_n,
)

__all__ = ["RANDOMIZERS", "GROUPED", "MECHANISMS", "check_query", "mechanism_params", "grouped_pairs_for"]

RANDOMIZERS = ("krr", "general", "subset-exp", "oue", "olh", "mhm")
GROUPED = ("subset-exp", "oue", "olh", "mhm")  # finite-output randomizers with grouped victim pairs
MECHANISMS = RANDOMIZERS
SUBSET_D_MAX = 20_000     # subset-exp: exact binomial coefficients of d + s items stay fast
SUBSET_SEARCH_MAX = 1_000  # PrivSet's best subset size is searched only up to this d + s
BEST_EPS0_MAX = 50.0  # account best: its upper bounds' numerics are checked up to here (below the
# accountants' common EPS0_MAX of shuffledp.accountants.validation)
BEST_DELTA_MIN = 1e-300  # account best: smaller deltas are refused (subnormal doubles lose their digits)
# mhm: above this eps0 the collision pairs' convex-order check fails near eps0 and their spreads are
# evaluated (measured: d = 8 at eps0 = 40-50 about 2-2.5 s, d = 12 about 6 s; up to 25 every check held)
MHM_BIG_D, MHM_BIG_D_EPS0_MAX = 6, 25.0


def check_query(mechanism: str, eps0, n, delta, k) -> tuple[float, int, float, int | None]:
    """Domain checks of an ``account best`` query (``k``: k-RR's or subset-exp's size); a violation
    raises :class:`AccountantDomainError` naming the flag."""
    check_choice(mechanism, "mechanism", MECHANISMS)
    eps0 = check_eps0(eps0, upper=BEST_EPS0_MAX)
    n = check_n(n)
    delta = check_delta(delta)
    if delta < BEST_DELTA_MIN:
        raise AccountantDomainError("delta", f"{delta!r} must be >= {BEST_DELTA_MIN:g}")
    if mechanism == "krr":
        k = check_int(k, "k", 2, K_MAX)
    elif mechanism == "subset-exp" and k is not None:
        k = check_int(k, "k", 1, K_MAX)
    elif k is not None:
        raise AccountantDomainError("k", "only used by krr and subset-exp")
    return eps0, n, delta, k


def mechanism_params(mechanism: str, eps0: float, *, k=None, d=None, s=None, g=None, domain=None) -> dict:
    """The randomizer's parameters with defaults filled in (``subset-exp``: PrivSet's best subset
    size; ``olh``: ``round(e^eps0 + 1)``); a flag given to a mechanism that does not use it, or
    missing where required, raises :class:`AccountantDomainError`. ``domain`` (olh, mhm; optional):
    the number of values of the randomizer's input (MHM: of each attribute, the smallest if they
    differ); kept in the result only when given. Unknown, the lower bounds that place the other
    users at a third input refuse (:func:`~shuffledp.accountants.interface.third_input_exists`)."""
    from shuffledp.accountants.randomizers import standard as rz

    used = {"krr": {"k"}, "general": set(), "subset-exp": {"d", "s", "k"}, "oue": {"d"}, "olh": {"g", "domain"},
            "mhm": {"d", "g", "domain"}}
    given = {"k": k, "d": d, "s": s, "g": g, "domain": domain}
    for name, value in given.items():
        if value is not None and name not in used[mechanism]:
            raise AccountantDomainError(name, f"not used by {mechanism}")
    if mechanism == "subset-exp":
        if d is None or s is None:
            raise AccountantDomainError("d" if d is None else "s", "required for subset-exp")
        d, s = check_int(d, "d", 2, SUBSET_D_MAX), check_int(s, "s", 1, SUBSET_D_MAX)
        if k is None:
            if d + s > SUBSET_SEARCH_MAX:
                raise AccountantDomainError("k", f"give the subset size for d + s > {SUBSET_SEARCH_MAX} "
                                                 "(PrivSet's best-size search costs d exact binomials of d + s)")
            from shuffledp.mechanisms.subset_exp import best_subset_size
            k = best_subset_size(d, s, eps0)
        k = check_int(k, "k", 1, d - 1)
        return {"d": d, "s": s, "k": k}
    if mechanism == "oue":
        if d is None:
            raise AccountantDomainError("d", "required for oue")
        return {"d": check_int(d, "d", 2, K_MAX)}
    known = {} if domain is None else {"domain": check_int(domain, "domain", 2, K_MAX)}
    if mechanism == "olh":
        return {"g": rz.olh_default_g(eps0) if g is None else check_int(g, "g", 2, K_MAX), **known}
    if mechanism == "mhm":
        return {**_mhm_params(eps0, d, g), **known}
    if mechanism == "krr":
        return {"k": check_int(k, "k", 2, K_MAX)}
    return {}


def _mhm_params(eps0: float, d, g) -> dict:
    """MHM: ``d`` attributes (required, at most ``MHM_D_MAX``), ``g`` the hash range (default: the
    rounded Eq. (3) of the multidimensional seed, :func:`blanket.mhm_domain`; at least ``d + 1``)."""
    from shuffledp.accountants.randomizers.mhm import MHM_D_MAX
    from shuffledp.accountants.upper.blanket import mhm_domain

    if d is None:
        raise AccountantDomainError("d", "required for mhm")
    d = check_int(d, "d", 1, MHM_D_MAX)
    if d > MHM_BIG_D and eps0 > MHM_BIG_D_EPS0_MAX:
        raise AccountantDomainError("eps0", f"at most {MHM_BIG_D_EPS0_MAX:g} for mhm with d > {MHM_BIG_D} "
                                            "(the collision pairs then need the slow spread: over 2 s)")
    g = mhm_domain(eps0, d) if g is None else check_int(g, "g", d + 1, K_MAX)
    return {"d": d, "g": g}


def grouped_pairs_for(mechanism: str, eps0: float, params: dict):
    """The decomposition's grouped victim pairs of a finite-output randomizer."""
    from shuffledp.accountants.randomizers import standard as rz

    if mechanism == "krr":
        from shuffledp.accountants.numerics.grouped import krr_pairs

        return krr_pairs(params["k"], eps0)
    if mechanism == "subset-exp":
        return rz.subset_exp_pairs(params["d"], params["s"], params["k"], eps0)
    if mechanism == "oue":
        return rz.oue_pairs(params["d"], eps0)
    if mechanism == "olh":
        return rz.olh_pairs(params["g"], eps0)
    if mechanism == "mhm":
        from shuffledp.accountants.randomizers.mhm import mhm_pairs

        if params["d"] == 1:   # one attribute: MHM is OLH with the same g (same rows, same blanket)
            return rz.olh_pairs(params["g"], eps0)
        return mhm_pairs(params["d"], params["g"], eps0)
    raise AccountantDomainError("mechanism", f"{mechanism} has no grouped pairs")
