"""The tightest sound shuffle epsilon we have, with the best lower bound beside it.

:func:`best_eps` evaluates every sound upper bound available for a randomizer and every lower
bound, and returns the minimum of the former and the maximum of the latter, which bound gave
each, and the time each took. Any upper bound is a valid guarantee, so their minimum is too;
any lower bound is a valid impossibility, so their maximum is too. ``eps_lower <= eps`` is an
invariant (checked; a violation raises, it would mean a bug in one of them).

Mechanisms:

* ``krr`` (k-ary randomized response, ``k >= 2``) -- upper: the blanket decomposition
  (:mod:`~shuffledp.accountants.upper.decomposition`), the variation-ratio reduction with its sound
  parameters, the clones bounds (FMT21 numerical and closed form, FMT23; valid for every
  eps0-LDP randomizer), the blanket lemma (Hoeffding, Bennett; exact k-RR moments). Lower: exact
  divergences of real neighbouring pairs -- the worst-pair search over the others' splits
  between the victim's two values (:func:`lower_bounds.krr_worst_pair`) and, for ``k >= 3``, the
  others all at a third value (:func:`exact_pairs.krr_pair_lower_eps`, and in blocks).
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
  decomposition of :mod:`~shuffledp.accountants.randomizers.mhm` (its victim pairs dominated by
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

from shuffledp.accountants.lower import lower_bounds as lbm
from shuffledp.accountants.params import MECHANISMS, check_query, grouped_pairs_for, mechanism_params
from shuffledp.accountants.registry import GROUPED
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.validation import (
    K_MAX,
    AccountantDomainError,
    check_delta,
    check_eps0,
    check_int,
    check_n,
)

__all__ = ["MECHANISMS", "GROUPED", "mechanism_params", "grouped_pairs_for", "delta_upper", "upper_bounds",
           "lower_bounds", "best_eps", "eps_local_for", "krr_eps_local", "round_delta",
           "group_count_lower_eps"]

SUBSET_PAIRS_MAX = 8  # subset-exp: the decomposition maximises over s pairs (one per overlap of the
# victim's two sets, each a full evaluation); above this s it is not evaluated (time budget)
# Largest n at which the bounds whose cost grows with n (about sqrt(n): the exact real-pair lower
# bounds pair-group-counts, pair-third-value, pair-third-input) are evaluated; above it only the
# bounds with a cost independent of n answer (the decomposition -- M and the counts in blocks,
# docs/accountants_internals.md "Large n" --, variation ratio, clones, blanket: all evaluated at the
# real n; the blocked and O(1) count-statistic lower bounds). Chosen so that one query stays under
# 2 s on one core.
HEAVY_N_MAX = {"krr": 3 * 10**6, "general": 3 * 10**6,
               "subset-exp": 10**5, "oue": 10**5, "olh": 5 * 10**4, "mhm": 5 * 10**4}
VR_WINDOW_MAX = 20_000  # above HEAVY_N_MAX: the variation ratio's clone counts in blocks beyond this window
# errors of a bound's numerics at the edge of its range: that bound alone then answers trivially
# (eps0 for an upper bound, 0 for a lower bound), recorded in its ``note``; the others still answer
_DEGENERATE = ("degenerate group split", "carry no mass of the other draws", "need 0 < r < s < 1")



def delta_upper(mechanism: str, eps0: float, n: int, eps: float, **params) -> float:
    """Smallest sound upper bound we have on the shuffled delta at ``eps`` (decomposition and
    variation ratio with the general parameters); used to certify a local eps for a target."""
    from shuffledp.accountants.upper import variation_ratio as vr

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
    eps0, n, delta, k = check_query(mechanism, eps0, n, delta, k)
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
    eps0, n, delta, k = check_query(mechanism, eps0, n, delta, k)
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
    from shuffledp.accountants.numerics.hockey_stick import bisect_eps

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
    eps0, n, delta, k = check_query(mechanism, eps0, n, delta, k)
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


def round_delta(mechanism: str, eps0: float, n: int, tail: float, *, k=None, d=None, s=None,
                g=None, domain=None, block_cap: int | None = None) -> Callable[[float], float]:
    """``eps -> `` an upper bound on one shuffle's delta at ``eps``: the smallest of the blanket
    decomposition (where :func:`best_eps` evaluates it: :func:`evaluated_at`) and the variation
    ratio (k-RR: its sound parameters; otherwise the general ones, which hold for every eps0-LDP
    randomizer), each with its truncated mass
    ``tail`` charged. One evaluation each, no eps search: what the profile and the inverse
    queries' searches need. A bound whose numerics fail at the edge of their range
    (:data:`_DEGENERATE`) is left out; if none answers, the trivial 1."""
    from shuffledp.accountants.upper import variation_ratio as vr

    params = mechanism_params(mechanism, eps0, k=k, d=d, s=s, g=g, domain=domain)
    heavy = n <= HEAVY_N_MAX[mechanism] and params.get("s", 0) <= SUBSET_PAIRS_MAX
    fns: list[Callable[[float], float]] = []
    vparams = vr.vr_params("krr", eps0, k=params["k"]) if mechanism == "krr" else vr.vr_params("general", eps0)
    fns.append(_built_or_none(lambda: vr.vr_solvers(vparams, n, tail, None if heavy else VR_WINDOW_MAX)[0]))
    if mechanism != "general" and params.get("s", 0) <= SUBSET_PAIRS_MAX and evaluated_at(mechanism,
                                                                                           "decomposition", n):
        def decomposition():
            pairs = grouped_pairs_for(mechanism, eps0, params)
            pair = dec.DecomposedPair(None, n, tail=tail, pairs=pairs, block_cap=block_cap)
            top = dec.pairs_eps0(pairs)
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
