"""The tightest sound shuffle epsilon we have, with the best lower bound beside it.

:func:`best_eps` evaluates every sound upper bound available for a randomizer and every lower
bound, and returns the minimum of the former and the maximum of the latter, which bound gave
each, and the time each took. Any upper bound is a valid guarantee, so their minimum is too;
any lower bound is a valid impossibility, so their maximum is too. ``eps_lower <= eps`` is an
invariant (checked; a violation raises, it would mean a bug in one of them).

Mechanisms:

* ``krr`` (k-ary randomized response, ``k >= 2``) -- upper: the blanket decomposition
  (:mod:`~shuffledp.accountants.decomposition`), the variation-ratio reduction with its sound
  parameters, the clones bounds (FMT21 numerical and closed form, FMT23; valid for every
  eps0-LDP randomizer), the blanket lemma (Hoeffding, Bennett; exact k-RR moments). Lower: exact
  divergences of real neighbouring pairs -- the worst-pair search over the others' splits
  between the victim's two values (:func:`lower_bounds.krr_worst_pair`) and, for ``k >= 3``, the
  others all at a third value (:func:`decomposition.krr_pair_lower_eps`, and in blocks).
* ``general`` (the class of all eps0-LDP randomizers) -- upper: variation ratio (general
  parameters = FMT23), clones (FMT21, FMT23, closed form), blanket (generic constants). Lower:
  binary randomized response is eps0-LDP, so its worst real pair found lower-bounds the class
  (3-RR's third-value pair too).

* ``subset-exp`` (PrivSet's k-subset exponential mechanism on s-item sets of d + s items; ``k``
  the subset size, PrivSet's best one by default), ``oue`` (optimized unary encoding over ``d``
  values), ``olh`` (local hashing into ``g`` values over the family of all functions; ``g =
  round(e^eps0 + 1)`` by default) -- upper: the blanket decomposition of their grouped pairs (four
  likelihood-ratio groups, reduced by the convex-order spread of
  :func:`decomposition.spread_to_three`), and every bound valid for all eps0-LDP randomizers
  (variation ratio with the general parameters, clones, generic blanket). Lower: exact divergences
  of three group counts (outputs favouring the victim's first input only, its second only, the
  rest) of real pairs whose other users all hold the victim's first input, its second, or a third
  one (:func:`randomizers.real_pair_configs`), and the others at a third input seen through three
  flags (OUE, OLH, MHM with one attribute) or every count (in blocks).

Each lower bound evaluates a stated neighbouring pair and runs only where that pair exists (its
registry entry's premise, :mod:`~shuffledp.accountants.interface`: a third input needs k >= 3,
OUE d >= 3, subset-exp d >= 2 s; OLH and MHM are accounted over a domain of at least three
values). Equivalent randomizers get the same bounds: MHM with d = 1 is OLH (same pair, same lower
bounds), subset-exp with s = 1 and subset size 1 is (d + 1)-RR (k-RR's pair bounds).

* ``mhm`` (the multiple hash mechanism: ``d`` attributes hashed into ``g`` values, collisions
  included; ``g`` from Eq. (3) of the multidimensional paper by default) -- upper: the
  decomposition of :mod:`~shuffledp.accountants.mhm_randomizer` (its victim pairs dominated by
  an independent-flag pair, checked per eps), the eps0-LDP bounds and the blanket bounds with MHM's
  exact moments; lower: the same group counts of the real pair whose attributes all differ.

Domain errors raise :class:`~shuffledp.accountants.validation.AccountantDomainError` (a
``ValueError`` naming the flag).
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from collections.abc import Callable

from shuffledp.accountants import decomposition as dec
from shuffledp.accountants import lower_bounds as lbm
from shuffledp.accountants.registry import GROUPED, RANDOMIZERS
from shuffledp.accountants.validation import (
    K_MAX,
    AccountantDomainError,
    check_choice,
    check_delta,
    check_eps0,
    check_int,
    check_n,
)

__all__ = ["MECHANISMS", "GROUPED", "mechanism_params", "grouped_pairs_for", "delta_upper", "upper_bounds",
           "lower_bounds", "best_eps", "eps_local_for", "krr_eps_local", "solve_eps0", "solve_n",
           "group_count_lower_eps"]

MECHANISMS = RANDOMIZERS  # the registry's (shuffledp.accountants.registry)
SUBSET_D_MAX = 20_000     # subset-exp: exact binomial coefficients of d + s items stay fast
SUBSET_SEARCH_MAX = 1_000  # PrivSet's best subset size is searched only up to this d + s
SUBSET_PAIRS_MAX = 8  # subset-exp: the decomposition maximises over s pairs (one per overlap of the
# victim's two sets, each a full evaluation); above this s it is not evaluated (time budget)
BEST_EPS0_MAX = 50.0  # account best: its upper bounds' numerics are checked up to here (below the
# accountants' common EPS0_MAX of shuffledp.accountants.validation)
BEST_DELTA_MIN = 1e-300  # account best: smaller deltas are refused (subnormal doubles lose their digits)
# Largest n at which the bounds whose cost grows with n (about sqrt(n): the exact real-pair lower
# bounds pair-group-counts, pair-third-value, pair-third-input) are evaluated; above it only the
# bounds with a cost independent of n answer (the decomposition -- M and the counts in blocks,
# docs/accountants_internals.md "Large n" --, variation ratio, clones, blanket: all evaluated at the
# real n; the blocked and O(1) count-statistic lower bounds). Chosen so that one query stays under
# 2 s on one core.
HEAVY_N_MAX = {"krr": 3 * 10**6, "general": 3 * 10**6,
               "subset-exp": 10**5, "oue": 10**5, "olh": 5 * 10**4, "mhm": 5 * 10**4}
# errors of a bound's numerics at the edge of its range: that bound alone then answers trivially
# (eps0 for an upper bound, 0 for a lower bound), recorded in its ``note``; the others still answer
# mhm: above this eps0 the collision pairs' convex-order check fails near eps0 and their spreads are
# evaluated (measured: d = 8 at eps0 = 40-50 about 2-2.5 s, d = 12 about 6 s; up to 25 every check held)
MHM_BIG_D, MHM_BIG_D_EPS0_MAX = 6, 25.0
VR_WINDOW_MAX = 20_000  # above HEAVY_N_MAX: the variation ratio's clone counts in blocks beyond this window
_DEGENERATE = ("degenerate group split", "carry no mass of the other draws", "need 0 < r < s < 1")


def _check(mechanism: str, eps0, n, delta, k) -> tuple[float, int, float, int | None]:
    """Domain checks; a violation raises :class:`AccountantDomainError` naming the flag."""
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
    from shuffledp.accountants import randomizers as rz

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
    from shuffledp.accountants.blanket import mhm_domain
    from shuffledp.accountants.mhm_randomizer import MHM_D_MAX

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
    from shuffledp.accountants import randomizers as rz

    if mechanism == "krr":
        return dec.krr_pairs(params["k"], eps0)
    if mechanism == "subset-exp":
        return rz.subset_exp_pairs(params["d"], params["s"], params["k"], eps0)
    if mechanism == "oue":
        return rz.oue_pairs(params["d"], eps0)
    if mechanism == "olh":
        return rz.olh_pairs(params["g"], eps0)
    if mechanism == "mhm":
        from shuffledp.accountants.mhm_randomizer import mhm_pairs

        if params["d"] == 1:   # one attribute: MHM is OLH with the same g (same rows, same blanket)
            return rz.olh_pairs(params["g"], eps0)
        return mhm_pairs(params["d"], params["g"], eps0)
    raise AccountantDomainError("mechanism", f"{mechanism} has no grouped pairs")


def delta_upper(mechanism: str, eps0: float, n: int, eps: float, **params) -> float:
    """Smallest sound upper bound we have on the shuffled delta at ``eps`` (decomposition and
    variation ratio with the general parameters); used to certify a local eps for a target."""
    from shuffledp.accountants import variation_ratio as vr

    p = mechanism_params(mechanism, eps0, **params)
    vals = [vr.vr_delta(vr.vr_params("general", eps0), n, eps)]
    if mechanism != "general":
        vals.append(dec.decomposition_delta(None, n, eps, pairs=grouped_pairs_for(mechanism, eps0, p)))
    return min(vals)


def evaluated_at(mechanism: str, name: str, n: int) -> bool:
    """Whether ``best`` evaluates the registered bound ``name`` at ``n`` users: at every n when its
    cost is ``fixed``, up to ``HEAVY_N_MAX[mechanism]`` when it ``grows``."""
    from shuffledp.accountants import registry

    return registry.get(name).cost == "fixed" or n <= HEAVY_N_MAX[mechanism]


def _registered(mechanism: str, kind: str, filled: dict, n: int):
    """The registry's bounds of ``kind`` that ``best`` evaluates for the randomizer (parameters
    ``filled``) at ``n`` users: those of cost ``fixed`` and those of cost ``grows`` where
    :func:`evaluated_at` says so, each only where its premise holds (its pair exists)."""
    from shuffledp.accountants import registry

    found = registry.for_randomizer(mechanism, k=filled.get("k"), kind=kind, costs=("fixed", "grows"), params=filled)
    return [acc for acc in found if evaluated_at(mechanism, acc.name, n)]


def _bound_fns(kind: str, mechanism: str, eps0: float, n: int, delta: float, params: dict, rtol: float,
               options: dict, filled: dict) -> dict[str, Callable[[], float]]:
    """Name -> zero-argument function of every registered bound of ``kind`` (see :func:`_registered`),
    guarded (:func:`_guarded`); ``options`` passed to the bounds that take them."""
    out: dict[str, Callable[[], float]] = {}
    for acc in _registered(mechanism, kind, filled, n):
        kw = {name: v for name, v in options.items() if name in acc.options}
        out[acc.name] = _guarded(functools.partial(acc.eps_for_delta, mechanism, eps0, n, delta, rtol=rtol,
                                                   **params, **kw), eps0 if kind == "upper" else 0.0)
    return out


def upper_bounds(mechanism: str, eps0: float, n: int, delta: float, *, k: int | None = None,
                 d: int | None = None, s: int | None = None, g: int | None = None,
                 domain: int | None = None, rtol: float = 1e-5, guess: float | None = None,
                 ceiling: float | None = None) -> dict[str, Callable[[], float]]:
    """Name -> zero-argument function returning a sound upper bound on the shuffled eps: every
    registered upper bound for the randomizer (:mod:`~shuffledp.accountants.registry`; above
    ``HEAVY_N_MAX`` only those whose cost does not grow with n, the variation ratio's clone counts
    then in blocks). ``guess``: the decomposition's starting point; ``ceiling``: an eps another
    bound already certified, which the decomposition tries first (:func:`decomposition_eps`)."""
    eps0, n, delta, k = _check(mechanism, eps0, n, delta, k)
    filled = mechanism_params(mechanism, eps0, k=k, d=d, s=s, g=g, domain=domain)  # flags checked first
    params = {name: v for name, v in (("k", k), ("d", d), ("s", s), ("g", g), ("domain", domain)) if v is not None}
    options = {"guess": guess, "coarse": n > HEAVY_N_MAX[mechanism], "ceiling": ceiling}
    return _bound_fns("upper", mechanism, eps0, n, delta, params, rtol, options, filled)


def lower_bounds(mechanism: str, eps0: float, n: int, delta: float, *, k: int | None = None,
                 d: int | None = None, s: int | None = None, g: int | None = None,
                 domain: int | None = None, rtol: float = 1e-5) -> dict[str, Callable[[], float]]:
    """Name -> zero-argument function returning a lower bound on the worst-case shuffled eps:
    every registered lower bound for the randomizer of cost ``fixed`` (and ``grows`` up to
    ``HEAVY_N_MAX``), each only where its pair exists (its premise). k-RR: the worst-pair search over
    the others' splits between the victim's two values, for k >= 3 the others at a third value; the general class:
    the same on binary RR (eps0-LDP, so it lower-bounds the class); subset-exp, OUE, OLH: the count
    of group 1 (any n), three group counts of real pairs, and for OUE/OLH the others at a third input."""
    eps0, n, delta, k = _check(mechanism, eps0, n, delta, k)
    filled = mechanism_params(mechanism, eps0, k=k, d=d, s=s, g=g, domain=domain)  # flags checked first
    params = {name: v for name, v in (("k", k), ("d", d), ("s", s), ("g", g), ("domain", domain)) if v is not None}
    return _bound_fns("lower", mechanism, eps0, n, delta, params, rtol, {}, filled)


class _Trivial(float):
    """A bound's trivial answer (eps0 upper, 0 lower) after its numerics failed at the edge of
    their range; ``note`` says why."""

    note: str = ""


def _guarded(fn: Callable[[], float], fallback: float) -> Callable[[], float]:
    """``fn`` whose known edge-of-range failures (:data:`_DEGENERATE`: a group probability that
    rounds to 0 or 1 at large eps0 or huge subsets) give the trivially sound ``fallback`` instead."""

    from shuffledp.accountants.registry import NotEvaluated

    def run() -> float:
        try:
            return fn()
        except NotEvaluated as exc:  # the bound declines this point (a cost guard)
            out = _Trivial(fallback)
            out.note = f"not evaluated: {exc}"
            return out
        except ValueError as exc:
            if isinstance(exc, AccountantDomainError) or not any(m in str(exc) for m in _DEGENERATE):
                raise
            out = _Trivial(fallback)
            out.note = f"not evaluated: {exc}"
            return out

    return run


def group_count_lower_eps(vic_p, vic_q, configs: dict, n: int, delta: float, eps0: float, *,
                          rtol: float = 1e-5) -> float:
    """Lower bound on the shuffled eps from one count statistic, at a cost independent of ``n``.

    For each configuration of the others (:func:`randomizers.real_pair_configs`: all at the
    victim's first input, its second, a third), the adversary counts the reports in group 1
    (outputs favouring the victim's first input only): a post-processing of the shuffled output,
    ``Bin(n - 1, b) + Bern(a)``, whose exact divergence (:func:`lower_bounds.count_pair_delta`, a
    closed form in binomial tails minus a rounding allowance) is at most the mechanism's. The
    largest eps found (rounded down) over the configurations."""
    from shuffledp.accountants.hockey_stick import bisect_eps

    a1, a0 = float(vic_p[0]), float(vic_q[0])
    c1, c0 = float(sum(vic_p[1:])), float(sum(vic_q[1:]))
    best = 0.0
    for other in configs.values():
        b, b_bar = float(other[0]), float(sum(other[1:]))

        def fn(e: float, b=b, b_bar=b_bar) -> float:
            return lbm.count_pair_delta(a1, a0, b, n - 1, e, c1=c1, c0=c0, b_bar=b_bar)

        best = max(best, bisect_eps(fn, delta, eps0, rtol)[0])
    return best


def _timed(fn: Callable[[], float]) -> tuple[float, float]:
    start = time.perf_counter()
    value = fn()
    return (value if isinstance(value, _Trivial) else float(value)), time.perf_counter() - start


def _entry(value: float, sec: float, kind: str) -> dict:
    out = {"eps": float(value), "seconds": sec, "kind": kind}
    if isinstance(value, _Trivial):
        out["note"] = value.note
    return out


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def _spare_cpu() -> bool:
    """True when a second thread can expect a CPU of its own: more than one CPU and a 1-minute
    load average at least half a CPU below their number. (Measured on 2 cores, n = 1e6: with a
    CPU idle the second thread cut ``best_eps`` by 15%; with the CPUs busy, GIL hand-overs
    between the threads made it 9% slower.)"""
    cpus = _cpus()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - platforms without a load average
        return False
    return cpus > 1 and load < cpus - 0.5


CEILING_BOUNDS = ("blanket-bennett", "blanket-hoeffding", "fmt21-closed-form")  # closed forms: evaluated
# before the decomposition, whose search then starts below the least of them (or stops: it cannot beat it)


class _Background:
    """Evaluates named bounds one after the other on a daemon thread (the heavy parts, Boost's
    ufuncs and numpy's loops, release the GIL); :meth:`results` waits and returns
    ``{name: (value, seconds)}`` or re-raises the first error. A daemon thread does not hold up
    the interpreter's exit (e.g. on Ctrl-C in the main thread)."""

    def __init__(self, fns: dict[str, Callable[[], float]]):
        self._fns = fns
        self._out: dict[str, tuple[float, float]] = {}
        self._error: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shuffledp-best-eps", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for name, fn in self._fns.items():
            if self._stop.is_set():
                return
            try:
                self._out[name] = _timed(fn)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                self._error.append(exc)
                return

    def stop(self) -> None:
        self._stop.set()

    def results(self) -> dict[str, tuple[float, float]]:
        self._thread.join()
        if self._error:
            raise self._error[0]
        return self._out


def _selected_bounds(names: list[str], bounds: list[str] | None) -> list[str]:
    """The upper bounds to evaluate: ``bounds`` (duplicates dropped, order kept) if given, else
    every name of ``names``; a name not registered (or an old spelling, named with its new one) or
    not an upper bound evaluated here raises :class:`AccountantDomainError`."""
    from shuffledp.accountants import registry

    if bounds is not None:
        for b in bounds:
            registry.get(b, "bounds")
        unknown = sorted(set(bounds) - set(names))
        if unknown:
            raise AccountantDomainError("bounds", f"{', '.join(unknown)} not evaluated here; choose from "
                                                  f"{', '.join(names)}")
        names = list(dict.fromkeys(bounds))
    return names


def _evaluate_bounds(mechanism: str, eps0: float, n: int, delta: float, k, rtol: float, extra: dict,
                     names: list[str], parallel: bool) -> tuple[dict[str, dict], str, float, dict]:
    """Run the lower bounds and the upper bounds ``names`` (see :func:`best_eps`). Returns
    ``(table, lower_by, eps_lower, done)``: ``table`` holds the lower bounds' entries, ``done``
    maps each upper bound to its ``(value, seconds)``."""
    # only the decomposition's search starts from the lower bound; the others can start now, the
    # closed forms (instant) first: the decomposition tries their eps first (its ceiling)
    early = upper_bounds(mechanism, eps0, n, delta, k=k, rtol=rtol, **extra)
    quick = [nm for nm in CEILING_BOUNDS if nm in names and "decomposition" in names]
    done = {nm: _timed(early[nm]) for nm in quick}
    rest = {nm: early[nm] for nm in names if nm != "decomposition" and nm not in done}
    background = _Background(rest) if parallel else None
    try:
        table: dict[str, dict] = {}
        lows = lower_bounds(mechanism, eps0, n, delta, k=k, rtol=rtol, **extra)
        for name, fn in lows.items():
            value, sec = _timed(fn)
            table[name] = _entry(value, sec, "lower")
        lower_by = max(lows, key=lambda nm: table[nm]["eps"])
        eps_lower = table[lower_by]["eps"]
        ceiling = min((v for v, _ in done.values() if v < eps0 * (1.0 - 1e-12)), default=None)
        ups = upper_bounds(mechanism, eps0, n, delta, k=k, rtol=rtol, guess=eps_lower or None, ceiling=ceiling,
                           **extra)
        if "decomposition" in names and not _certified_zero(done):
            done["decomposition"] = _below_ceiling(_timed(ups["decomposition"]), ceiling, eps0)
        # once a bound certifies eps = 0 no other can do better: the rest are not evaluated
        if background is not None:
            if _certified_zero(done):
                background.stop()
            done.update(background.results())
        else:
            for nm in names:
                if nm not in done and not _certified_zero(done):
                    done[nm] = _timed(ups[nm])
    finally:
        if background is not None:
            background.stop()
    return table, lower_by, eps_lower, done


def _below_ceiling(result: tuple[float, float], ceiling: float | None, eps0: float) -> tuple[float, float]:
    """The decomposition's ``(value, seconds)``, its answer eps0 marked where it stopped at the
    ceiling (its delta there above the target: it cannot do better than that bound)."""
    value, sec = result
    if ceiling is None or isinstance(value, _Trivial) or value < eps0 * (1.0 - 1e-12):
        return value, sec
    out = _Trivial(eps0)
    out.note = f"stopped: its delta at eps = {ceiling:.6g} (the least closed form) is above delta"
    return out, sec


def _certified_zero(done: dict[str, tuple[float, float]]) -> bool:
    return any(value == 0.0 for value, _ in done.values())


def _skipped(done: dict[str, tuple[float, float]]) -> dict:
    """The entry of an upper bound left out because another already certified eps = 0."""
    by = next(nm for nm, (value, _) in done.items() if value == 0.0)
    return {"eps": None, "seconds": 0.0, "kind": "upper", "note": f"not evaluated: {by} certifies eps = 0"}


def best_eps(mechanism: str, eps0: float, n: int, delta: float, *, k: int | None = None,
             d: int | None = None, s: int | None = None, g: int | None = None,
             domain: int | None = None, rtol: float = 1e-5, bounds: list[str] | None = None,
             parallel: bool | None = None) -> dict:
    """Minimum over the sound upper bounds, maximum over the lower bounds.

    Returns ``{"eps", "eps_lower", "upper_by", "lower_by", "gap", "ratio", "seconds", "bounds":
    {name: {"eps", "seconds", "kind"[, "note"]}}}``; ``ratio = eps / eps_lower`` (the gap between
    what is guaranteed and what is provably not, ``inf`` when no lower bound is positive) and
    ``gap = ratio - 1``. Above ``HEAVY_N_MAX[mechanism]`` users the bounds whose cost grows with
    ``n`` are not evaluated (see :data:`HEAVY_N_MAX`); a ``note`` marks a bound that answered
    trivially at the edge of its numerics' range. ``bounds`` restricts the
    upper bounds evaluated (lower bounds always run). Once an upper bound certifies eps = 0 the
    remaining ones are not evaluated (none can do better): their entries have ``eps`` None and a
    ``note``.

    ``parallel`` (default: when a CPU is idle, :func:`_spare_cpu`): the upper bounds that do not
    start from the lower bound (all but the decomposition) run on a second thread while this one
    computes the lower bounds and then the decomposition. Every value is the same either way
    (each bound is a pure function of its arguments); a bound's ``seconds`` is then its wall
    time beside the other thread.
    """
    eps0, n, delta, k = _check(mechanism, eps0, n, delta, k)
    extra = {"d": d, "s": s, "g": g, "domain": domain}
    # flags checked before any bound runs; subset-exp's default size is searched here, once
    params = mechanism_params(mechanism, eps0, k=k, **extra)
    if mechanism == "subset-exp":
        k = params["k"]
    start = time.perf_counter()
    names = _selected_bounds(list(upper_bounds(mechanism, eps0, n, delta, k=k, rtol=rtol, **extra)), bounds)
    if parallel is None:
        parallel = _spare_cpu()
    table, lower_by, eps_lower, done = _evaluate_bounds(mechanism, eps0, n, delta, k, rtol, extra, names, parallel)
    for name in names:  # the order of ``bounds`` (default: upper_bounds'), as before
        if name not in done:
            table[name] = _skipped(done)
            continue
        value, sec = done[name]
        table[name] = _entry(value if isinstance(value, _Trivial) else _at_most_eps0(value, eps0), sec, "upper")
    upper_by = min((nm for nm in names if nm in done), key=lambda nm: table[nm]["eps"])
    eps = table[upper_by]["eps"]
    if eps_lower > eps * (1 + 1e-9):
        raise RuntimeError(f"lower bound {lower_by} = {eps_lower!r} exceeds upper bound "
                           f"{upper_by} = {eps!r}: one of them is wrong")
    return {
        "eps": eps,
        "eps_lower": eps_lower,
        "upper_by": upper_by,
        "lower_by": lower_by,
        "gap": _ratio(eps, eps_lower) - 1.0,
        "ratio": _ratio(eps, eps_lower),
        "seconds": time.perf_counter() - start,
        "bounds": table,
    }


def _at_most_eps0(value: float, eps0: float) -> float:
    """An upper bound's eps capped at eps0 (shuffling eps0-LDP reports is eps0-DP), and taken as
    eps0 within 1e-12 of it: a bound whose top is eps0 computed from the randomizer's
    probabilities (a log of their ratio) can land a few ulps below the true eps0, where the true
    answer is eps0 itself (seen at n = 43, delta = 3e-198: 0.05099999999999992 for eps0 = 0.051)."""
    value = min(value, eps0)
    return eps0 if value >= eps0 * (1.0 - 1e-12) else value


def _ratio(eps: float, eps_lower: float) -> float:
    """``eps / eps_lower``; 1 when the certified eps is 0 (no mechanism does better: the answer is
    exact), infinite when only the lower bound is 0."""
    if eps_lower > 0:
        return eps / eps_lower
    return 1.0 if eps == 0 else math.inf


def eps_local_for(delta_of: Callable[[float], float], eps_s: float, delta_s: float, *,
                  hi: float = 30.0, rtol: float = 1e-4, guess: float | None = None) -> float:
    """Largest local eps found in ``[eps_s, hi]`` whose shuffled reports meet ``(eps_s, delta_s)``
    by the bound ``delta_of(eps_l)`` (an upper bound on the shuffled delta at ``eps_s``).

    The search keeps a bracket: ``lo`` passes (``eps_s``, always valid: shuffling eps_s-LDP reports
    is eps_s-DP, or a point where ``delta_of(lo) <= delta_s`` was evaluated) and ``hi`` fails, and
    ends when ``hi - lo <= rtol * lo``. Its probes are regula falsi with the Illinois modification on
    ``logit(delta_of)`` against eps_l (the logit keeps the interpolation informative where the bound
    saturates at 1), and bisection in ``log eps_l`` while an end has no finite value (the start, or
    a bound of 0 or 1). ``guess`` (optional, e.g. what a looser bound certifies) is probed first and
    starts the bracket on its side. The returned value is ``eps_s`` or a point where the check
    passed, so it is certified whether or not the bound is monotone in ``eps_l``.
    """
    eps_s = check_eps0(eps_s, "eps")
    delta_s = check_delta(delta_s)
    if hi <= eps_s:
        return eps_s
    target = _logit(delta_s)

    def probe(e: float) -> tuple[float, bool]:
        """(logit(delta_of(e)) - logit(delta_s), passes); +-inf where the logit is not finite."""
        d = float(delta_of(e))
        if d <= delta_s:
            return (-math.inf if d <= 0.0 else _logit(d) - target), True
        return (_logit(d) - target if d < 1.0 else math.inf), False  # NaN fails (d < 1 is False)

    g_hi, ok = probe(hi)
    if ok:
        return float(hi)
    lo, g_lo, last = eps_s, -math.inf, 0
    if guess is not None and eps_s < guess < hi:
        g, ok = probe(float(guess))
        lo, g_lo, hi, g_hi = (float(guess), g, hi, g_hi) if ok else (lo, g_lo, float(guess), g)
    while hi - lo > rtol * lo:
        if math.isfinite(g_lo) and math.isfinite(g_hi):
            x = lo + (hi - lo) * (-g_lo) / (g_hi - g_lo)
        else:
            x = math.sqrt(lo * hi)
        x = min(max(x, lo * (1.0 + 0.25 * rtol)), hi - 0.25 * rtol * lo)  # strictly inside
        g, ok = probe(x)
        if ok:
            lo, g_lo = x, g
            g_hi = g_hi * 0.5 if last == -1 else g_hi  # Illinois: the same end kept twice
            last = -1
        else:
            hi, g_hi = x, g
            g_lo = g_lo * 0.5 if last == 1 else g_lo
            last = 1
    return float(lo)


def _logit(d: float) -> float:
    return math.log(d) - math.log1p(-d)


def krr_eps_local(k: int, eps_s: float, delta_s: float, n: int, *, rtol: float = 1e-4,
                  guess: float | None = None) -> float:
    """Largest k-RR local eps certified ``(eps_s, delta_s)`` after shuffling ``n`` reports by the
    blanket decomposition (:func:`eps_local_for` over :func:`decomposition.decomposition_delta`)."""
    k = check_int(k, "k", 2, K_MAX)
    n = check_n(n)
    return eps_local_for(lambda e: dec.decomposition_delta(None, n, eps_s, pairs=dec.krr_pairs(k, e)),
                         eps_s, delta_s, rtol=rtol, guess=guess)


# --------------------------------------------------------------------------- inverse queries
SOLVE_RTOL = 1e-3  # relative width of the final bracket of an inverse query (eps0 or n)
SOLVE_PROBE_ROUNDS = 4  # interpolation rounds of the fallback search before plain bisection
SOLVE_SURROGATE_EVALS = 16  # most one-delta evaluations of an inverse query's first stage


def _gap_log(res: dict, target: float) -> float:
    """``log(eps / target)`` of a forward answer (eps = 0 counted as 1e-300)."""
    return math.log(max(res["eps"], 1e-300)) - math.log(target)


def _crossing(a: float, b: float, ga: float, gb: float) -> float:
    """Where the line through ``(a, ga)`` and ``(b, gb)`` crosses 0 (log-log interpolation of the
    forward eps), kept inside ``[a, b]`` away from its ends; only a proposal: the inverse queries
    evaluate both sides of it and keep what the forward calls verify."""
    x = 0.5 * (a + b) if gb == ga else a - ga * (b - a) / (gb - ga)
    margin = 1e-3 * (b - a)
    return min(max(x, a + margin), b - margin)


def _forward(mechanism: str, eps0: float, n: int, delta: float, kw: dict, rtol: float) -> dict:
    return best_eps(mechanism, eps0, n, delta, rtol=rtol, parallel=False, **kw)


def _answer(kind: str, value, res: dict, target: float, bad, bad_res: dict | None, tol: float,
            calls: int, start: float) -> dict:
    """An inverse query's answer: the solved value, its forward call, the bracket's other end."""
    out = {kind: value, "target_eps": target, "eps": res["eps"], "eps_lower": res["eps_lower"],
           "ratio": res["ratio"], "upper_by": res["upper_by"], "lower_by": res["lower_by"],
           "fails_at": bad, "eps_at_fail": None if bad_res is None else bad_res["eps"],
           # the true eps at ``fails_at`` provably exceeds the target (its lower bound does)
           "fail_certified": bool(bad_res is not None and bad_res["eps_lower"] > target),
           "tolerance": tol, "forward_calls": calls, "seconds": time.perf_counter() - start}
    return out


def round_delta(mechanism: str, eps0: float, n: int, tail: float, *, k=None, d=None, s=None,
                g=None, domain=None, block_cap: int | None = None) -> Callable[[float], float]:
    """``eps -> `` an upper bound on one shuffle's delta at ``eps``: the smallest of the blanket
    decomposition (where :func:`best_eps` evaluates it: :func:`evaluated_at`) and the variation
    ratio (k-RR: its sound parameters; otherwise the general ones, which hold for every eps0-LDP
    randomizer), each with its truncated mass
    ``tail`` charged. One evaluation each, no eps search: what the profile and the inverse
    queries' searches need. A bound whose numerics fail at the edge of their range
    (:data:`_DEGENERATE`) is left out; if none answers, the trivial 1."""
    from shuffledp.accountants import variation_ratio as vr

    params = mechanism_params(mechanism, eps0, k=k, d=d, s=s, g=g, domain=domain)
    heavy = n <= HEAVY_N_MAX[mechanism] and params.get("s", 0) <= SUBSET_PAIRS_MAX
    fns: list[Callable[[float], float]] = []
    vparams = vr.vr_params("krr", eps0, k=params["k"]) if mechanism == "krr" else vr.vr_params("general", eps0)
    fns.append(_built_or_none(lambda: vr._vr_solvers(vparams, n, tail, None if heavy else VR_WINDOW_MAX)[0]))
    if mechanism != "general" and params.get("s", 0) <= SUBSET_PAIRS_MAX and evaluated_at(mechanism,
                                                                                           "decomposition", n):
        def decomposition():
            pairs = grouped_pairs_for(mechanism, eps0, params)
            pair = dec.DecomposedPair(None, n, tail=tail, pairs=pairs, block_cap=block_cap)
            top = dec._eps_hi(pairs)
            return lambda e: 0.0 if e >= top else pair.delta(e)
        fns.append(_built_or_none(decomposition))
    built = [fn for fn in fns if fn is not None]

    def delta_at(eps: float) -> float:
        vals = [v for v in (_value_or_none(fn, eps) for fn in built) if v is not None]
        return min(vals, default=1.0)

    return delta_at


def _degenerate_error(exc: ValueError) -> bool:
    return not isinstance(exc, AccountantDomainError) and any(m in str(exc) for m in _DEGENERATE)


def _built_or_none(build: Callable[[], Callable[[float], float]]) -> Callable[[float], float] | None:
    try:
        return build()
    except ValueError as exc:
        if _degenerate_error(exc):
            return None
        raise


def _value_or_none(fn: Callable[[float], float], eps: float) -> float | None:
    try:
        return min(float(fn(eps)), 1.0)
    except ValueError as exc:
        if _degenerate_error(exc):
            return None
        raise


def _exponent_gap(value: float, delta: float) -> float:
    """``log(-log D) - log(-log delta)``: ``>= 0`` exactly when ``D <= delta`` (``+inf`` at D = 0,
    ``-inf`` at D >= 1); nearly linear in ``log n`` (D decays like ``exp(-c n)``)."""
    if value <= 0.0:
        return math.inf
    if value >= 1.0:
        return -math.inf
    return math.log(-math.log(value)) - math.log(-math.log(delta))


def _surrogate_root(G: Callable[[float], float], lo: float, hi: float, start: float, slope: float,
                    done: Callable[[float, float], bool], nudge: Callable[[float], float]) -> tuple[float, float]:
    """A bracket ``(bad, good)`` of the crossing of a non-decreasing ``G`` (``>= 0``: good) in
    ``[lo, hi]`` (``lo`` taken as bad, ``hi`` as good, neither evaluated). A Newton step with the
    expected ``slope`` from ``start``, then secant steps, each pushed by ``nudge(u)`` past the
    estimated crossing so that the two sides are reached; bisection when a step leaves the bracket.
    At most :data:`SOLVE_SURROGATE_EVALS` evaluations: the bracket returned is a proposal, which
    the forward calls then verify."""
    pts: list[tuple[float, float]] = []
    u = min(max(start, lo), hi)
    for _ in range(SOLVE_SURROGATE_EVALS):
        if done(lo, hi):
            break
        gu = G(u)
        if gu >= 0:
            hi = u
        else:
            lo = u
        if math.isfinite(gu):
            pts.append((u, gu))
        prop = None
        if len(pts) >= 2 and pts[-1][1] != pts[-2][1]:
            (u0, g0), (u1, g1) = pts[-2], pts[-1]
            prop = u1 - g1 * (u1 - u0) / (g1 - g0)
        elif len(pts) == 1 and math.isfinite(gu):
            prop = u - gu / slope
        if prop is not None:
            prop += nudge(prop) if gu < 0 else -nudge(prop)
        u = prop if prop is not None and lo < prop < hi else 0.5 * (lo + hi)
    return lo, hi


def _vr_asymptotic_eps(eps0: float, n: float, delta: float) -> float:
    """The order of magnitude of the shuffled eps (the variation ratio's asymptotic form with the
    general parameters): only a starting point of the searches."""
    p = math.exp(min(eps0, 700.0))
    beta = (p - 1.0) / (p + 1.0)
    return math.sqrt(beta * (p - 1.0) * math.log(1.0 / delta) / max(n - 1.0, 1.0))


def _one_delta(mechanism: str, eps0: float, n: int, eps: float, delta: float, kw: dict, rtol: float) -> float:
    """One round's upper delta at ``eps`` (:func:`round_delta`, the decomposition where
    :func:`best_eps` evaluates it and the variation ratio): one evaluation, no eps search."""
    return round_delta(mechanism, eps0, n, max(1e-300, 1e-3 * rtol * delta), **kw)(eps)


def _n_candidates(mechanism: str, target: float, eps0: float, delta: float, kw: dict, rtol: float,
                  tol: float) -> tuple[int, int]:
    """``(good, bad)``: the smallest n where one round's delta at ``target / (1 + 4 rtol)`` meets
    ``delta`` (so that the forward eps, rounded up by at most ``rtol``, should meet the target) and
    a point ``0.9 tol`` below it (which should fail), from :func:`_surrogate_root` on ``log n``."""
    from shuffledp.accountants.validation import N_MAX

    eps_s = target / (1.0 + 4.0 * rtol)

    def n_of(u: float) -> int:
        return int(min(N_MAX, max(2, math.ceil(math.exp(u) - 1e-9))))

    seen: dict[int, float] = {}

    def G(u: float) -> float:
        m = n_of(u)
        if m not in seen:
            seen[m] = _exponent_gap(_one_delta(mechanism, eps0, m, eps_s, delta, kw, rtol), delta)
        return seen[m]

    def done(lo: float, hi: float) -> bool:
        return n_of(hi) - n_of(lo) <= max(1, tol / 4 * n_of(lo))

    # start: the asymptotic form; log(-log delta) grows about like log n (slope 1)
    guess = 1.0 + _vr_asymptotic_eps(eps0, 2.0, delta) ** 2 / target ** 2 / 2.0
    lo, hi = _surrogate_root(G, math.log(2.0), math.log(N_MAX), math.log(max(guess, 3.0)), 1.0, done,
                             lambda u: max(tol / 24, 1.0 / math.exp(u)))
    good = n_of(hi)   # the failing point: 0.9 tol below, and at least as far as the surrogate's bad end
    return good, max(2, min(good - 1, n_of(lo), math.floor(good * (1.0 - 0.9 * tol))))


def _eps0_candidates(mechanism: str, target: float, n: int, delta: float, kw: dict, rtol: float,
                     tol: float) -> tuple[float, float]:
    """``(good, bad)``: the largest eps0 in ``[target, BEST_EPS0_MAX]`` where one round's delta at
    ``target / (1 + 4 rtol)`` meets ``delta``, and a point ``0.9 tol`` above it (which should
    fail), from :func:`_surrogate_root` on ``-log eps0``."""
    eps_s = target / (1.0 + 4.0 * rtol)

    def G(u: float) -> float:
        return _exponent_gap(_one_delta(mechanism, math.exp(-u), n, eps_s, delta, kw, rtol), delta)

    def done(lo: float, hi: float) -> bool:
        return hi - lo <= tol / 4

    lo_e, hi_e = target, BEST_EPS0_MAX   # start where the asymptotic form meets the target
    for _ in range(60):
        mid = 0.5 * (lo_e + hi_e)
        lo_e, hi_e = (mid, hi_e) if _vr_asymptotic_eps(mid, n, delta) <= target else (lo_e, mid)
    # log(-log delta) falls about twice as fast as log eps0 grows (measured on k-RR): the first step
    lo, hi = _surrogate_root(G, -math.log(BEST_EPS0_MAX), -math.log(target), -math.log(lo_e), 2.0, done,
                             lambda u: tol / 24)
    good = max(target, math.exp(-hi))
    return good, min(BEST_EPS0_MAX, good * (1.0 + 0.9 * tol))


def _refine_eps0(f, lo: float, lo_res: dict, hi: float, hi_res: dict, target: float, tol: float):
    """The forward-call search of ``solve_eps0`` inside a verified bracket (``lo`` meets the target,
    ``hi`` does not): probes both sides of the log-log interpolated crossing for a few rounds, then
    bisects on ``log eps0`` until the bracket is narrower than ``tol`` (relative)."""
    for _ in range(SOLVE_PROBE_ROUNDS):
        if hi - lo <= tol * lo:
            break
        x = _crossing(math.log(lo), math.log(hi), _gap_log(lo_res, target), _gap_log(hi_res, target))
        for probe in (math.exp(x) * (1.0 - 0.3 * tol), math.exp(x) * (1.0 + 0.3 * tol)):
            if not (lo < probe < hi):
                continue
            res = f(probe)
            if res["eps"] <= target:
                lo, lo_res = probe, res
            else:
                hi, hi_res = probe, res
    while hi - lo > tol * lo:
        mid = math.sqrt(lo * hi)
        res = f(mid)
        if res["eps"] <= target:
            lo, lo_res = mid, res
        else:
            hi, hi_res = mid, res
    return lo, lo_res, hi, hi_res


def solve_eps0(mechanism: str, target_eps: float, n: int, delta: float, *, k=None, d=None, s=None,
               g=None, domain=None, rtol: float = 1e-5, tol: float = SOLVE_RTOL) -> dict:
    """Largest local eps0 (in ``(0, BEST_EPS0_MAX]``) whose shuffled eps at ``n`` users and ``delta``
    is at most ``target_eps`` by :func:`best_eps`'s upper bound.

    Sound in direction: the returned ``eps0`` is a point where the forward call was made and gave
    ``eps <= target_eps`` (returned beside it); ``fails_at``, within ``tol`` (relative) above it, is
    a point where the forward call gave more (None when ``BEST_EPS0_MAX`` itself qualifies and is
    the answer). ``eps0 = target_eps`` always qualifies (shuffling eps-LDP reports is eps-DP).
    First stage: the crossing located with one round's delta at the target (one evaluation per
    step, :func:`_eps0_candidates`), then two forward calls verify the answer and the failing
    point. Only if either disagrees (or the verified bracket is wider than ``tol``), the
    forward-call search (:func:`_refine_eps0`) continues from the verified points. The bound is
    not proven monotone in eps0: the answer is the edge of the bracket kept, each end verified.
    ``fail_certified``: the lower bound at ``fails_at`` also exceeds the target (no accountant
    could certify it there)."""
    start = time.perf_counter()
    target = check_eps0(target_eps, "target-eps", upper=math.inf)
    n, delta = check_n(n), check_delta(delta)
    if not (1e-9 <= tol <= 0.1):
        raise AccountantDomainError("tolerance", f"{tol!r} must lie in [1e-9, 0.1]")
    kw = {"k": k, "d": d, "s": s, "g": g, "domain": domain}
    calls = 0

    def f(e: float) -> dict:
        nonlocal calls
        calls += 1
        return _forward(mechanism, e, n, delta, kw, rtol)

    if target >= BEST_EPS0_MAX:
        res = f(BEST_EPS0_MAX)
        return _answer("eps0", BEST_EPS0_MAX, res, target, None, None, tol, calls, start)
    _check(mechanism, target, n, delta, k)
    mechanism_params(mechanism, target, **kw)   # flags checked before the search
    ok, fail = _verify(f, *_eps0_candidates(mechanism, target, n, delta, kw, rtol, tol), target)
    (lo, lo_res), (hi, hi_res) = ok or (target, None), fail or (BEST_EPS0_MAX, None)
    if lo >= BEST_EPS0_MAX:
        return _answer("eps0", lo, lo_res, target, None, None, tol, calls, start)
    lo_res, hi_res = lo_res or f(lo), hi_res or f(hi)
    if hi_res["eps"] <= target:   # BEST_EPS0_MAX qualifies
        return _answer("eps0", hi, hi_res, target, None, None, tol, calls, start)
    lo, lo_res, hi, hi_res = _refine_eps0(f, lo, lo_res, hi, hi_res, target, tol)
    return _answer("eps0", lo, lo_res, target, hi, hi_res, tol, calls, start)


def _verify(f, good, bad, target: float) -> tuple[tuple | None, tuple | None]:
    """Forward calls at the surrogate's answer ``good`` and failing point ``bad``: ``(ok, fail)``,
    the point verified to meet the target nearest to the boundary and the one verified to miss
    it, each ``(value, forward result)`` or None."""
    res = f(good)
    if res["eps"] > target:
        return None, (good, res)
    bad_res = f(bad)
    return ((good, res), (bad, bad_res)) if bad_res["eps"] > target else ((bad, bad_res), None)


def _refine_n(f, lo: int, lo_res: dict, hi: int, hi_res: dict, target: float, tol: float):
    """The forward-call search of ``solve_n`` inside a verified bracket (``lo`` fails the target,
    ``hi`` meets it): steps from the failing end by eps ~ 1/sqrt(n), probes both sides of the
    log-log interpolated crossing for a few rounds, then bisects on ``log n`` until the bracket is
    within ``tol`` (relative, at least one user)."""
    for _ in range(3):
        guess = int(min(max(lo * (lo_res["eps"] / target) ** 2 * 1.02, lo + 1), hi - 1))
        if hi - lo <= max(1, tol * lo) or not lo < guess < hi:
            break
        res = f(guess)
        if res["eps"] <= target:
            hi, hi_res = guess, res
            break
        lo, lo_res = guess, res
    for _ in range(SOLVE_PROBE_ROUNDS):
        if hi - lo <= max(1, tol * lo):
            break
        x = math.exp(_crossing(math.log(lo), math.log(hi), _gap_log(lo_res, target), _gap_log(hi_res, target)))
        for probe in sorted({math.floor(x * (1.0 - 0.3 * tol)), math.ceil(x * (1.0 + 0.3 * tol))}):
            if not (lo < probe < hi):
                continue
            res = f(probe)
            if res["eps"] <= target:
                hi, hi_res = probe, res
            else:
                lo, lo_res = probe, res
    while hi - lo > max(1, tol * lo):
        mid = max(lo + 1, min(hi - 1, int(math.sqrt(lo * hi))))
        res = f(mid)
        if res["eps"] <= target:
            hi, hi_res = mid, res
        else:
            lo, lo_res = mid, res
    return lo, lo_res, hi, hi_res


def solve_n(mechanism: str, target_eps: float, eps0: float, delta: float, *, k=None, d=None, s=None,
            g=None, domain=None, rtol: float = 1e-5, tol: float = SOLVE_RTOL) -> dict:
    """Smallest number of users ``n`` (in ``[2, N_MAX]``) whose shuffled eps at ``eps0`` and ``delta``
    is at most ``target_eps`` by :func:`best_eps`'s upper bound.

    Sound in direction: the returned ``n`` is a point where the forward call gave ``eps <=
    target_eps``. It also holds at every larger n: the true worst-case eps does not increase with
    n (the shuffled output of n + 1 users is a post-processing of that of n users: add one more
    independent report), so it stays below the certified value. ``fails_at`` (a verified failing
    n) is within ``tol`` (relative, at least one user) below the answer. n = 2 is tried first;
    then the crossing is located with one round's delta at the target (one evaluation per step,
    :func:`_n_candidates`) and two forward calls verify the answer and the failing point; only if
    either disagrees (or the verified bracket is wider than ``tol``), the forward-call search
    (:func:`_refine_n`) continues from the verified points. A target not met at ``N_MAX`` users
    raises :class:`AccountantDomainError` naming ``--target-eps``."""
    from shuffledp.accountants.validation import N_MAX

    start = time.perf_counter()
    target = check_eps0(target_eps, "target-eps", upper=math.inf)
    eps0, delta = check_eps0(eps0, upper=BEST_EPS0_MAX), check_delta(delta)
    if not (1e-9 <= tol <= 0.1):
        raise AccountantDomainError("tolerance", f"{tol!r} must lie in [1e-9, 0.1]")
    kw = {"k": k, "d": d, "s": s, "g": g, "domain": domain}
    calls = 0

    def f(m: int) -> dict:
        nonlocal calls
        calls += 1
        return _forward(mechanism, eps0, m, delta, kw, rtol)

    lo, lo_res = 2, f(2)
    if lo_res["eps"] <= target:
        return _answer("n", 2, lo_res, target, None, None, tol, calls, start)
    good, bad = _n_candidates(mechanism, target, eps0, delta, kw, rtol, tol)
    ok, fail = _verify(f, good, bad, target)
    (lo, lo_res), (hi, hi_res) = fail or (lo, lo_res), ok or (N_MAX, None)
    if hi_res is None:
        hi_res = fail[1] if good >= N_MAX else f(N_MAX)
        if hi_res["eps"] > target:
            raise AccountantDomainError("target-eps", f"{target!r} is not met at n <= {N_MAX:.0e} users "
                                                      f"(eps there: {hi_res['eps']:.6g})")
    lo, lo_res, hi, hi_res = _refine_n(f, lo, lo_res, hi, hi_res, target, tol)
    return _answer("n", hi, hi_res, target, lo, lo_res, tol, calls, start)
