"""Empirical privacy audits of the randomizers and protocols the experiments run.

Every audit calls **the function object the experiments call**, looked up at run time through the
name the experiment code uses (:data:`SITES`: module and attribute, e.g. ``shuffledp.protocols.flame``
``krr``, which :func:`shuffledp.protocols.flame.run_flame` finds in its globals), so a planted bug in
that function (the tests monkeypatch one in) is what the audit runs. It draws the protocol's output
on two neighbouring datasets (the victim's two inputs against a fixed rest), reduces each output
to a statistic chosen for the protocol (its sufficient statistic for the pair where one is known:
the victim's value counts of a shuffled histogram, a local report), and turns the two samples into
an empirical lower bound on epsilon:

* the trials of each dataset are split in halves; on the first half the distinguishing event
  ``S`` (a set of statistic values, those with the highest empirical likelihood ratio, in either
  direction) is chosen to maximise the lower bound the selection half itself would give;
* on the second half, one-sided Clopper-Pearson upper bounds on the false-negative rate
  ``FNR = Pr_D[not S]`` and the false-positive rate ``FPR = Pr_D'[S]`` (each at level ``alpha/2``)
  give, since every ``(eps, delta)``-DP mechanism has ``Pr_D[S] <= e^eps Pr_D'[S] + delta``,

      eps_lb = log((1 - delta - FNR_upper) / FPR_upper)        (with confidence 1 - alpha),

  the symmetric bound being the same with the datasets' roles swapped (the direction is chosen on
  the selection half). A float statistic is binned at quantiles of the selection half.

Beside it: the accountant's upper bound for the same configuration (the project's accountants:
``best_eps``, the segmented ``achieved_eps``, a randomizer's accounted local budget, Algorithm 1's
per-user bound) and the exact epsilon of the audited pair where it is known. The verdict is
``consistent`` when ``eps_lb <= eps_ub``, ``violation`` otherwise; ``tightness = eps_lb / eps_ub``.

Local randomizers (MHM, TCM, FLAME's k-RR, and the MHM / FLAME randomizers inside CALM and HDG)
are audited one report at a time at their accounted local budget ``eps_l`` (delta = 0): the
amplification accountants take ``eps_l``-LDP as their premise, so a randomizer that spends more than
``eps_l`` breaks every shuffle bound built on it. MHM and TCM publish the user's hash index; the
audit fixes it (:class:`FixedIndexFamily`: the guarantee holds for every index) so that the victim
pair can be one whose hashed values collide (the planted bug "collision counted as a hit" leaks only
there). The CALM and HDG audits take records (a seeded synthetic fixture by default; a coded
raw-record table plugs in through ``records``) and encode them with the frameworks' own encoders.

Seeds: every draw comes from ``shuffledp.seeding.rng(seed, "audits", name)``.
"""

from __future__ import annotations

import importlib
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from shuffledp.experiments.audit_names import (  # noqa: F401  (re-exported)
    DEFAULT_SETTINGS,
    LOOP_AUDITS,
    NAMES,
    RAW_AUDITS,
)
from shuffledp.mechanisms.hashing import HashFamily
from shuffledp.seeding import rng as seeded_rng

# ------------------------------------------------------------------ the audited functions

#: name -> (module, attribute): the name through which the experiments' code calls the audited
#: function. The audits resolve it at run time (:func:`target`).
SITES: dict[str, tuple[str, str]] = {
    "krr": ("shuffledp.protocols.flame", "krr"),                 # run_flame's k-RR (FLAME, CALM, HDG)
    "mhm_randomize": ("shuffledp.protocols.mhm", "mhm_randomize"),  # run_mhm (MHM, CALM, HDG, OGM/NOGM)
    "tcm_randomize": ("shuffledp.protocols.tcm", "tcm_randomize"),  # run_tcm
    "subset_exp": ("shuffledp.mechanisms.subset_exp", "randomize"),  # run_subexp's se.randomize
    "run_segmented": ("shuffledp.protocols.segmented", "run_segmented"),  # experiments.segmented
    "run_mm": ("shuffledp.protocols.mm", "run_mm"),              # experiments.segmented (MM, SepMM)
    "algorithm1": ("shuffledp.protocols.peruser", "algorithm1"),  # experiments.peruser
    "adult_encode": ("shuffledp.datasets.adult", "encode"),      # the data stage's Adult coder (raw audits)
    "loan_encode": ("shuffledp.datasets.loan", "encode"),        # the data stage's Loan coder (raw audits)
}


def target(site: str) -> Callable:
    """The function object the experiments call under ``site`` (resolved now, never cached)."""
    mod, attr = SITES[site]
    return getattr(importlib.import_module(mod), attr)


class FixedIndexFamily(HashFamily):
    """The hash family with every user's (public) hash index fixed to ``index``: the local
    guarantee holds for every index, so fixing it audits the randomizer conditionally on it."""

    def __init__(self, g: int, seed: int, size: int, kind: str = "linear", index: int = 0):
        super().__init__(g, seed, size=size, kind=kind)
        self.index = int(index)

    def sample_indices(self, rng, n):
        return np.full(int(n), self.index, dtype=np.int64)


# ------------------------------------------------------------------ statistics


def cp_upper(x: np.ndarray, m: int, a: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bounds (level ``1 - a``) on a rate from ``x`` of ``m``: the
    ``1 - a`` quantile of Beta(x + 1, m - x), ``scipy.special.betaincinv`` (the doubles of
    ``scipy.stats.beta.ppf`` there, tests/test_audit_delta.py; without scipy.stats' import, about half a
    CPU second per audit job)."""
    from scipy.special import betaincinv

    x = np.asarray(x, dtype=float)
    out = np.ones_like(x)
    ok = x < m
    out[ok] = betaincinv(x[ok] + 1, m - x[ok], 1 - a)
    return out


def _eps_from_counts(fn_count, fp_count, m_pos: int, m_neg: int, delta: float, alpha: float) -> np.ndarray:
    fnr = cp_upper(fn_count, m_pos, alpha / 2)
    fpr = cp_upper(fp_count, m_neg, alpha / 2)
    num = 1.0 - delta - fnr
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where((num > 0) & (fpr > 0), np.log(np.maximum(num, 1e-300) / np.maximum(fpr, 1e-300)), 0.0)
    return np.maximum(val, 0.0)


def _cells(x0: np.ndarray, x1: np.ndarray, half0: int, half1: int, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer cell ids of both samples; floats are binned at quantiles of the selection halves."""
    x0, x1 = np.asarray(x0), np.asarray(x1)
    if np.issubdtype(x0.dtype, np.floating) or np.issubdtype(x1.dtype, np.floating):
        pool = np.concatenate([x0[:half0], x1[:half1]])
        edges = np.unique(np.quantile(pool, np.linspace(0, 1, bins + 1)[1:-1]))
        return np.searchsorted(edges, x0), np.searchsorted(edges, x1)
    allv, inv = np.unique(np.concatenate([x0, x1]), return_inverse=True)
    return inv[: x0.size], inv[x0.size:]


@dataclass
class Distinguished:
    eps_lb: float
    direction: str       # "D" (S favours the first dataset) or "D'"
    event_cells: int     # statistic values in S
    fnr: float           # estimation half, point estimates
    fpr: float


def _held_out_event(x0: np.ndarray, x1: np.ndarray, bins: int, score) -> tuple:
    """The event both audits' bounds use: on the first half of each sample, the prefix (cells ordered by
    their empirical likelihood ratio, either direction) maximising ``score(in_pos, in_neg, m_pos, m_neg)``;
    returned with its counts on the held-out second halves: ``(direction, event, in_pos, in_neg, m_pos,
    m_neg)``, ``pos`` the dataset the event favours."""
    h0, h1 = x0.size // 2, x1.size // 2
    c0_all, c1_all = _cells(x0, x1, h0, h1, bins)
    ncell = int(max(c0_all.max(initial=0), c1_all.max(initial=0))) + 1
    s0, s1 = np.bincount(c0_all[:h0], minlength=ncell), np.bincount(c1_all[:h1], minlength=ncell)
    e0, e1 = np.bincount(c0_all[h0:], minlength=ncell), np.bincount(c1_all[h1:], minlength=ncell)
    m0s, m1s, m0e, m1e = h0, h1, x0.size - h0, x1.size - h1
    best = (-1.0, "D", np.arange(0))
    for direction, (pos, neg, mp, mn) in (("D", (s0, s1, m0s, m1s)), ("D'", (s1, s0, m1s, m0s))):
        order = np.argsort(-((pos + 0.5) / mp) / ((neg + 0.5) / mn), kind="stable")
        val = score(np.cumsum(pos[order]), np.cumsum(neg[order]), mp, mn)
        i = int(np.argmax(val))
        if val[i] > best[0]:
            best = (float(val[i]), direction, order[: i + 1])
    _, direction, chosen = best
    event = np.zeros(ncell, dtype=bool)
    event[chosen] = True
    pos, neg, mp, mn = (e0, e1, m0e, m1e) if direction == "D" else (e1, e0, m1e, m0e)
    return direction, event, int(pos[event].sum()), int(neg[event].sum()), mp, mn


def distinguish(x0: np.ndarray, x1: np.ndarray, delta: float, alpha: float, *, bins: int = 64) -> Distinguished:
    """Empirical lower bound on eps from a statistic's samples under D (``x0``) and D' (``x1``)."""
    def score(in_pos, in_neg, mp, mn):
        return _eps_from_counts(mp - in_pos, in_neg, mp, mn, delta, alpha)

    direction, event, ip, ineg, mp, mn = _held_out_event(x0, x1, bins, score)
    fn, fp = mp - ip, ineg
    lb = float(_eps_from_counts(np.array([fn]), np.array([fp]), mp, mn, delta, alpha)[0])
    return Distinguished(lb, direction, int(event.sum()), fn / mp, fp / mn)


def cp_lower(x: np.ndarray, m: int, a: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bounds (level ``1 - a``) on a rate from ``x`` of ``m``."""
    return 1.0 - cp_upper(m - np.asarray(x, dtype=float), m, a)


@dataclass
class DeltaDistinguished:
    delta_lb: float
    eps: float           # the epsilon at which delta is bounded (the accountant's)
    direction: str       # "D" (S favours the first dataset) or "D'"
    event_cells: int     # statistic values in S
    p_pos: float         # estimation half, point estimates of Pr[S] under the favoured / other dataset
    p_neg: float


def _delta_from_counts(in_pos, in_neg, m_pos: int, m_neg: int, eps: float, alpha: float) -> np.ndarray:
    lo = cp_lower(in_pos, m_pos, alpha / 2)
    hi = cp_upper(in_neg, m_neg, alpha / 2)
    return np.maximum(lo - math.exp(eps) * hi, 0.0)


def distinguish_delta(x0: np.ndarray, x1: np.ndarray, eps: float, alpha: float, *,
                      bins: int = 64) -> DeltaDistinguished:
    """Empirical lower bound on delta AT ``eps`` from a statistic's samples under D (``x0``) and D' (``x1``).

    Every ``(eps, delta)``-DP mechanism has ``Pr_D[S] - e^eps Pr_D'[S] <= delta`` for every event ``S``.
    The event (a set of statistic values, prefixes of the cells ordered by their empirical likelihood
    ratio, in either direction) is chosen on the first half of the trials to maximise the bound that
    half would give, so it is fixed before the second half is looked at; on the second half a one-sided
    Clopper-Pearson lower bound on ``Pr_D[S]`` and upper bound on ``Pr_D'[S]`` (each at level ``alpha/2``)
    give ``delta_lb = Pr_lower - e^eps Pr_upper`` (clipped at 0) with confidence ``1 - alpha``. For a
    fixed ``S`` the test ``delta_lb > delta`` is the test ``eps_lb > eps`` of :func:`distinguish`; the
    event differs: this one maximises the mass difference at the claimed ``eps`` (a large but partial
    shift), that one the likelihood ratio (a rare but clean event)."""
    def score(in_pos, in_neg, mp, mn):
        return _delta_from_counts(in_pos, in_neg, mp, mn, eps, alpha)

    direction, event, ip, ineg, mp, mn = _held_out_event(x0, x1, bins, score)
    lb = float(_delta_from_counts(np.array([ip]), np.array([ineg]), mp, mn, eps, alpha)[0])
    return DeltaDistinguished(lb, float(eps), direction, int(event.sum()), ip / mp, ineg / mn)


# ------------------------------------------------------------------ one audit


@dataclass(frozen=True)
class Audit:
    name: str
    protocols: tuple[str, ...]  # the experiments' protocol / mechanism names whose claims it backs
    site: str                   # key of SITES
    kind: str                   # "shuffle" (the shuffled output of n users) or "local" (one report)
    statistic: str              # the distinguisher's statistic
    mutant: str                 # the planted bug of its power test (tests/test_audits.py)
    loop: str = "vector"        # "vector": all trials in one call; "loop": one call per trial;
    #                             "raw": end to end from raw records (shuffledp.experiments.audits_raw)
    run: Callable | None = None


def _krr_pairs_exact(k: int, eps0: float, n: int, delta: float) -> float:
    from shuffledp.accountants.lower import exact_pairs as xp
    from shuffledp.accountants.numerics.hockey_stick import bisect_eps

    vic_p, vic_q, configs = xp._krr_configs(k, eps0)
    return float(bisect_eps(lambda e: xp.pair_delta(e, n, vic_p, vic_q, configs["others_at_third"]),
                            delta, eps0, 1e-8)[0])


def _pmf_eps(p0: np.ndarray, p1: np.ndarray) -> float:
    """Pure-DP epsilon of a pair of output laws on a finite set (max log ratio, both ways)."""
    with np.errstate(divide="ignore"):
        r = np.abs(np.log(p0) - np.log(p1))
    return float(np.max(r))


def audit_krr_shuffle(p: Mapping, trials: int, rng) -> dict:
    """Shuffled k-RR (the k-RR of run_flame): victim 0 or 1, the others at 2; statistic the
    victim's two value counts of the shuffled histogram (sufficient for this pair)."""
    from shuffledp.accountants.best import best_eps

    k, eps0, n, delta = int(p["k"]), float(p["eps0"]), int(p["n"]), float(p["delta"])
    krr = target("krr")
    out = []
    for v in (0, 1):
        x = np.full((trials, n), 2, dtype=np.int64)
        x[:, 0] = v
        y = krr(x, eps0, k, rng)
        out.append((y == 0).sum(axis=1) * (n + 1) + (y == 1).sum(axis=1))
    ub = best_eps("krr", eps0, n, delta, k=k)
    return {"samples": out, "delta": delta, "eps_ub": float(ub["eps"]), "upper_by": f"best_eps ({ub['upper_by']})",
            "eps_exact": _krr_pairs_exact(k, eps0, n, delta), "n": n,
            "exact_note": "this pair (others at a third value), exact decomposition"}


def _ldp_row(samples, eps_l: float, exact: float, note: str, extra: dict | None = None) -> dict:
    row = {"samples": samples, "delta": 0.0, "eps_ub": float(eps_l), "upper_by": "accounted local budget eps_l",
           "eps_exact": float(exact), "n": 1, "exact_note": note}
    row.update(extra or {})
    return row


def audit_krr_local(p: Mapping, trials: int, rng, *, eps_l: float | None = None, k: int | None = None,
                    pair=(0, 1), label: str = "") -> dict:
    """FLAME's local randomizer (k-RR at the attribute's accounted eps_l), one report."""
    from shuffledp.mechanisms.collision import krr_p
    from shuffledp.protocols.flame import flame_eps_local

    if eps_l is None:
        n, doms = int(p["n"]), [int(c) for c in p["domains"]]
        st = flame_eps_local(float(p["eps_s"]), 1.0 / n, n, doms)
        eps_l, k = float(st.eps_l[0]), doms[0]
    krr = target("krr")
    samples = [krr(np.full(trials, v, dtype=np.int64), eps_l, k, rng) for v in pair]
    pp, qq = krr_p(eps_l, k)
    law = [np.where(np.arange(k) == v, pp, qq) for v in pair]
    extra = {"eps_l": eps_l, "k": k, **({"view": label} if label else {})}
    return _ldp_row(samples, eps_l, _pmf_eps(*law), "k-RR pair law", {"setting_extra": extra})


def _collision_pair(hashed: np.ndarray, tries: int = 50) -> tuple[int, int, bool] | None:
    """Rows (x, x') of ``hashed`` (candidate records x their hashed values): x with exactly one
    collision if any (else a clean one), x' with none and disjoint from x's values, and whether x
    collides; None when no disjoint pair exists among the first ``tries`` candidates of each kind."""
    m = hashed.shape[1]
    s = np.sort(hashed, axis=1)
    distinct = 1 + (s[:, 1:] != s[:, :-1]).sum(axis=1)
    clean = np.flatnonzero(distinct == m)
    for want in (m - 1, m):
        for i in np.flatnonzero(distinct == want)[:tries]:
            ok = ~np.isin(hashed[clean], hashed[i]).any(axis=1) & (clean != i)
            if ok.any():
                return int(i), int(clean[ok][0]), want < m
    return None


def _fixed_pair(pool: np.ndarray, g: int, seed: int, kind: str, hash_of, indices: int = 200):
    """``(family, hashed, i, j, collides)``: the first public hash index (of ``indices``) under which
    the candidate records ``pool`` hold a victim pair whose first record's hashed values collide
    (else the first index with any disjoint pair). ``hash_of(family, pool)`` gives the hashed values."""
    first = None
    for idx in range(indices):
        fam = FixedIndexFamily(g, seed=seed, size=1 << 32, kind=kind, index=idx)
        hashed = hash_of(fam, pool)
        found = _collision_pair(hashed)
        if found is None:
            continue
        if found[2]:
            return (fam, hashed, *found)
        first = first or (fam, hashed, *found)
    if first is None:
        raise ValueError("no disjoint victim pair among the candidate records")
    return first


def _setup_seed(p: Mapping, rng) -> int:
    """The seed of an audit's public set-up (the hash family and so the victim pair): drawn once per
    audit by :func:`run_audit` (``p["setup_seed"]``), so that every chunk of trials audits the SAME
    pair; a direct call without it draws one from ``rng``."""
    return int(p["setup_seed"]) if "setup_seed" in p else int(rng.integers(2**62))


def _candidates(domains, records: np.ndarray | None, limit: int = 20_000) -> np.ndarray:
    if records is not None:
        return np.unique(np.asarray(records, dtype=np.int64), axis=0)[:limit]
    grids = np.meshgrid(*[np.arange(int(c)) for c in domains], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)[:limit]


def _mhm_audit(codes_pool: np.ndarray, eps_l: float, g: int, seed: int, trials: int, rng, extra: dict) -> dict:
    from shuffledp.mechanisms.collision import collision_pmf
    from shuffledp.protocols.mhm import mhm_pq

    codes_pool = np.unique(np.asarray(codes_pool, dtype=np.int64), axis=0)
    d = codes_pool.shape[1]
    fam, hashed, i, j, coll = _fixed_pair(codes_pool, g, seed, "linear", lambda f, x: f.hash(
        f.index + np.arange(d, dtype=np.int64)[None, :], x))
    p = mhm_pq(eps_l, d, g)[0]
    randomize = target("mhm_randomize")
    samples = [randomize(np.repeat(codes_pool[r][None, :], trials, axis=0), eps_l, g, fam, rng)[1] for r in (i, j)]
    exact = _pmf_eps(collision_pmf(hashed[i], p, g), collision_pmf(hashed[j], p, g))
    note = "pair law (collision_pmf)" + ("" if coll else "; no colliding record among the candidates")
    return _ldp_row(samples, eps_l, exact, note, {"collision_in_pair": coll,
                                                  "setting_extra": dict(extra, eps_l=eps_l, g=g, d=d,
                                                                        hash_index=fam.index)})


def audit_mhm_local(p: Mapping, trials: int, rng) -> dict:
    """MHM's randomizer (mhm_randomize) at the accounted eps_l, one report, hash index fixed."""
    from shuffledp.protocols.mhm import mhm_eps_local

    n, doms = int(p["n"]), [int(c) for c in p["domains"]]
    st = mhm_eps_local(float(p["eps_s"]), 1.0 / n, n, len(doms))
    return _mhm_audit(_candidates(doms, None), st.eps_l, st.g, _setup_seed(p, rng), trials, rng, {})


def audit_tcm_local(p: Mapping, trials: int, rng) -> dict:
    """TCM's randomizer (tcm_randomize) at the accounted eps_l, one report, hash index fixed."""
    from shuffledp.mechanisms.collision import collision_p, collision_pmf
    from shuffledp.protocols.tcm import encoding_offsets, tcm_eps_local

    n, doms = int(p["n"]), [int(c) for c in p["domains"]]
    st = tcm_eps_local(float(p["eps_s"]), 1.0 / n, n, len(doms))
    offsets = encoding_offsets(doms)
    pool = _candidates(doms, None)
    fam, hashed, i, j, coll = _fixed_pair(pool, st.g, _setup_seed(p, rng), "mix",
                                          lambda f, x: f.hash(np.int64(f.index), x + offsets[None, :]))
    randomize = target("tcm_randomize")
    samples = [randomize(np.repeat(pool[r][None, :], trials, axis=0), offsets, st.eps_l, st.g, fam, rng)[1]
               for r in (i, j)]
    pc = collision_p(st.eps_l, len(doms), st.g)
    exact = _pmf_eps(collision_pmf(hashed[i], pc, st.g), collision_pmf(hashed[j], pc, st.g))
    return _ldp_row(samples, st.eps_l, exact, "pair law (collision_pmf)",
                    {"collision_in_pair": coll,
                     "setting_extra": {"eps_l": st.eps_l, "g": st.g, "hash_index": fam.index}})


# -- CALM and HDG: the frameworks' encoders, then their components' randomizers


def _framework_codes(framework: str, p: Mapping, pool: np.ndarray, n: int) -> tuple[np.ndarray, list[int]]:
    """The records ``pool`` as the framework encodes them for its frequency component (HDG's grids
    are chosen for ``n`` users, as run_hdg does)."""
    if framework == "calm":
        from shuffledp.tasks import marginals as M

        doms = [int(c) for c in p["domains"]]
        views = M.select_views(doms, int(p["view_size"]), None)
        return M.encode_views(pool, doms, views)
    from shuffledp.tasks import range_queries as R

    c = int(p["domain"])
    grids = R.Grids(pool.shape[1], c, *R.granularities(n, pool.shape[1], float(p["eps_s"]), c))
    return R.encode_grids(pool, grids), list(grids.domains)


def audit_framework(framework: str, component: str, p: Mapping, trials: int, rng,
                    records: np.ndarray | None = None) -> dict:
    """The randomizer inside CALM / HDG (MHM or FLAME component) on encoded records: the victim's
    two records (from ``records`` when given, else from every record of the domains), encoded by
    the framework's encoder, reported at the component's accounted eps_l for ``n`` users."""
    from shuffledp.tasks.frequency import make_component

    doms = [int(c) for c in p["domains"]] if framework == "calm" else [int(p["domain"])] * int(p["d"])
    n = int(p["n"]) if records is None else int(np.asarray(records).shape[0])
    pool = _candidates(doms, records)
    codes_pool, vdoms = _framework_codes(framework, p, pool, n)
    eps_s, delta = float(p["eps_s"]), 1.0 / n
    comp = make_component(component)
    if component == "mhm":
        st = comp.setting(n, vdoms, eps_s, delta)
        return _mhm_audit(codes_pool, st.eps_l, st.g, _setup_seed(p, rng), trials, rng,
                          {"framework": framework, "units": len(vdoms), "n": n,
                           "records": "plugged" if records is not None else "all records of the domains"})
    budgets = comp.local_budgets(n, vdoms, eps_s, delta)
    # FLAME reports one sampled unit at that unit's eps_l: the unit with the largest budget, two of its cells
    j = int(np.argmax(budgets))
    res = audit_krr_local(p, trials, rng, eps_l=float(budgets[j]), k=int(vdoms[j]), label=f"{framework} unit {j}")
    res["setting_extra"].update(n=n, records="plugged" if records is not None else "none needed")
    return res


# -- multi-message protocols (one call per trial: the experiments' function takes one dataset)


def _padding_sent() -> bool:
    """Whether this code base sends padding items (a padding domain ``{d..d+s-1}``, the multi-message
    protocols taking ``padding=``) or drops them; the audits call the protocols as the experiments
    do in either case, and evaluate the accountants over the domain the protocol then uses."""
    from shuffledp.mechanisms import poisson_set as ps

    return hasattr(ps, "protocol_sets")


def _segmented_counts(sets: np.ndarray, lam: float, m: float, d: int, trials: int, rng, what: str) -> np.ndarray:
    run = target("run_segmented")
    kw = {"padding": True} if _padding_sent() else {}
    levels = np.zeros(sets.shape[0], dtype=np.int64)
    out = np.empty(trials, dtype=np.int64)
    for t in range(trials):
        r = run(sets, levels, [lam], m, d, rng, **kw)
        out[t] = r.n_messages if what == "count" else int(r.counts[0]) - int(r.counts[1])
    return out


def audit_segmented(p: Mapping, trials: int, rng, *, what: str = "item") -> dict:
    """Segmented protocol (run_segmented: Poisson randomizer plus blanket messages), one level at the
    accountant's rate ``lambda``. ``what="item"``: victim {0} or {1}, others {2}, statistic
    ``C_0 - C_1``. ``what="count"``: victim {0, 1} or {0, padding} (neighbours differing in real set
    size), others two real items, statistic the number of data messages. Where the code sends
    padding, the protocol runs with ``padding=True`` and the accountant over ``d + s`` items, as the
    experiments do."""
    from shuffledp.accountants.special.poisson import poisson_lambda
    from shuffledp.accountants.special.segmented_optimizer import achieved_eps
    from shuffledp.mechanisms.poisson_set import PAD

    n, m, d, eps, delta = int(p["n"]), float(p["m"]), int(p["d"]), float(p["eps"]), float(p["delta"])
    s = 1 if what == "item" else 2
    d_acct = d + s if _padding_sent() else d
    lam = poisson_lambda(n, m, d_acct, s, eps, delta)
    if what == "item":
        base = np.full((n, 1), 2, dtype=np.int64)
        pair = [base.copy(), base.copy()]
        pair[0][0, 0], pair[1][0, 0] = 0, 1
    else:
        base = np.tile(np.array([[2, 3]], dtype=np.int64), (n, 1))
        pair = [base.copy(), base.copy()]
        pair[0][0] = [0, 1]
        pair[1][0] = [0, PAD]
    samples = [_segmented_counts(x, lam, m, d, trials, rng, what) for x in pair]
    return {"samples": samples, "delta": delta, "eps_ub": float(achieved_eps(lam, n, m, d_acct, s, eps, delta)),
            "upper_by": "achieved_eps (sound, Theorem 3)", "eps_exact": math.nan, "n": n, "exact_note": "",
            "setting_extra": {"lambda": lam, "s": s, "padding_sent": _padding_sent()}}


def audit_mm(p: Mapping, trials: int, rng) -> dict:
    """Balls-into-bins (run_mm, lambda = 1) at the accountant's blanket rate: victim {0} or {1},
    others {2}; statistic ``C_0 - C_1`` (recovered from the estimates, a bijection of the counts)."""
    from shuffledp.accountants.special.segmented_optimizer import achieved_eps
    from shuffledp.experiments.segmented_params import mm_blanket_rate

    n, d, eps, delta = int(p["n"]), int(p["d"]), float(p["eps"]), float(p["delta"])
    pads = _padding_sent()
    d_acct = d + 1 if pads else d  # s = 1; with padding sent, the bins include the padding domain
    m = mm_blanket_rate(n, d_acct, 1, eps, delta)
    run = target("run_mm")
    kw = {"padding": True} if pads else {}
    samples = []
    for v in (0, 1):
        sets = np.full((n, 1), 2, dtype=np.int64)
        sets[0, 0] = v
        out = np.empty(trials, dtype=np.int64)
        for t in range(trials):
            est = np.asarray(run(sets, m, d, rng, **kw))
            out[t] = int(np.rint(n * (est[0] - est[1])))  # C_0 - C_1: the debiasing constant cancels
        samples.append(out)
    return {"samples": samples, "delta": delta, "eps_ub": float(achieved_eps(1.0, n, m, d_acct, 1, eps, delta)),
            "upper_by": "achieved_eps at lambda = 1 (sound)", "eps_exact": math.nan, "n": n, "exact_note": "",
            "setting_extra": {"m": m, "padding_sent": pads}}


def audit_subexp(p: Mapping, trials: int, rng) -> dict:
    """Subexp-shuffle (run_subexp's se.randomize) at the eps0 its accountant calibrates: victim {0}
    or {1}, others {2}; statistic the hit counts of items 0 and 1."""
    from shuffledp.accountants.best import best_eps
    from shuffledp.experiments.segmented_params import subexp_shuffle_eps0
    from shuffledp.mechanisms import subset_exp as se

    n, d, eps, delta = int(p["n"]), int(p["d"]), float(p["eps"]), float(p["delta"])
    s = 1
    cal = subexp_shuffle_eps0(n, d, s, eps, delta)
    rates = se.subset_exp_rates(d, s, cal.eps0, cal.k)
    randomize = target("subset_exp")
    samples = []
    for v in (0, 1):
        sets = np.full((trials * n, 1), 2, dtype=np.int64)
        sets[::n, 0] = v  # user 0 of every trial is the victim
        out = randomize(se.pad_sets(sets, d), rates, rng).reshape(trials, n, -1)
        samples.append((out == 0).sum(axis=(1, 2)) * (n + 1) + (out == 1).sum(axis=(1, 2)))
    ub = best_eps("subset-exp", cal.eps0, n, delta, d=d, s=s, k=cal.k)
    return {"samples": samples, "delta": delta, "eps_ub": float(ub["eps"]), "upper_by": f"best_eps ({ub['upper_by']})",
            "eps_exact": math.nan, "n": n, "exact_note": "", "setting_extra": {"eps0": cal.eps0, "k": cal.k}}


def audit_alg1(p: Mapping, trials: int, rng) -> dict:
    """Per-user Algorithm 1 (algorithm1, release R). The victim's histogram is uniform or moved by
    L1 distance ``c`` (mass ``c/2`` from category 1 to 0); statistic ``R_0 - R_1`` of its release.
    All trials run in ONE call: the call's users are the trials' victims, clustered by DBSCAN with
    parameters under which every point is noise, hence a singleton group (as the protocol makes
    DBSCAN noise), so each row's release is that of a victim alone in its group, independent of the
    other rows: the rest is empty, and the accountant is evaluated for a group of one."""
    from shuffledp.accountants.special.peruser import clones_amplifier, per_user_eps
    from shuffledp.protocols.peruser import DBSCANParams

    dd, eps, frac, c, delta = (int(p["d"]), float(p["eps"]), float(p["eps1_fraction"]), float(p["c"]),
                               float(p["delta"]))
    eps1 = frac * eps
    single = DBSCANParams(min_samples=10**9, eps=1e-300, fit_size=2)
    alg1 = target("algorithm1")
    samples, hists = [], []
    for shift in (0.0, c / 2):
        h = np.full((trials, dd), 1.0 / dd)
        h[:, 0] += shift
        h[:, 1] -= shift
        r = alg1(h, eps, eps1, c, rng, clustering="dbscan", dbscan=single)
        if r.labels.max() + 1 != trials:
            raise RuntimeError("algorithm1 audit: DBSCAN did not make every user a singleton group")
        samples.append(np.asarray(r.raw[:, 0] - r.raw[:, 1], dtype=float))
        hists.append(h[:1])
    amp = clones_amplifier("numeric")
    ub = max(float(per_user_eps(h, np.zeros(1, dtype=np.int64), eps1, eps - eps1, c, delta, amp)["eps_prime"][0])
             for h in hists)
    return {"samples": samples, "delta": delta, "eps_ub": ub, "upper_by": "per_user_eps (Theorem 2, numeric clones)",
            "eps_exact": math.nan, "n": 1, "exact_note": "", "setting_extra": {"eps1": eps1}}


# ------------------------------------------------------------------ the registry

# the planted bugs (shuffledp.experiments.audit_mutants)
KRR_BUG = "keep probability e^eps/(e^eps+1) (the binary formula) instead of e^eps/(e^eps+k-1)"
COLLISION_BUG = "hash collision counted as a hit (2p on a colliding bucket)"

AUDITS: dict[str, Audit] = {a.name: a for a in (
    Audit("krr_shuffle", ("krr", "flame"), "krr", "shuffle", "victim's two value counts", KRR_BUG,
          run=audit_krr_shuffle),
    Audit("flame_local", ("flame",), "krr", "local", "the report", KRR_BUG, run=audit_krr_local),
    Audit("mhm_local", ("mhm", "mhm_paper", "ogm", "nogm"), "mhm_randomize", "local", "the report",
          COLLISION_BUG, run=audit_mhm_local),
    Audit("tcm_local", ("tcm",), "tcm_randomize", "local", "the report", COLLISION_BUG,
          run=audit_tcm_local),
    Audit("calm_mhm", ("calm:mhm",), "mhm_randomize", "local", "the report", COLLISION_BUG,
          run=lambda p, t, r: audit_framework("calm", "mhm", p, t, r)),
    Audit("calm_flame", ("calm:flame",), "krr", "local", "the report", KRR_BUG,
          run=lambda p, t, r: audit_framework("calm", "flame", p, t, r)),
    Audit("hdg_mhm", ("hdg:mhm",), "mhm_randomize", "local", "the report", COLLISION_BUG,
          run=lambda p, t, r: audit_framework("hdg", "mhm", p, t, r)),
    Audit("hdg_flame", ("hdg:flame",), "krr", "local", "the report", KRR_BUG,
          run=lambda p, t, r: audit_framework("hdg", "flame", p, t, r)),
    Audit("subexp_shuffle", ("subexp_shuffle", "subexp_local"), "subset_exp", "shuffle",
          "hit counts of the victim's two items", "intersection weight e^(2 eps) (wrong probability)",
          run=audit_subexp),
    Audit("segmented_item", ("segmented",), "run_segmented", "shuffle", "C_a - C_b",
          "blanket count one short (ceil(m) - 1 trials per user)", loop="loop",
          run=lambda p, t, r: audit_segmented(p, t, r, what="item")),
    Audit("segmented_count", ("segmented",), "run_segmented", "shuffle", "number of data messages",
          "the victim's real set size added to the message count", loop="loop",
          run=lambda p, t, r: audit_segmented(p, t, r, what="count")),
    Audit("mm_item", ("mm_shuffle", "sepmm", "wsepmm"), "run_mm", "shuffle", "C_a - C_b",
          "blanket count one short (ceil(m) - 1 trials per user)", loop="loop", run=audit_mm),
    Audit("peruser_alg1", ("alg1", "alg1T"), "algorithm1", "shuffle", "R_0 - R_1 of the victim's release",
          "Laplace scale c/(2 eps) instead of 2c/eps", run=audit_alg1),
)}

DATA_EDGES_BUG = {
    "minmax": "data-dependent edges: equal-width bins between the data's own min and max (old Adult code)",
    "quantile": "data-dependent edges: equal-frequency quantile codes of the data (old Loan code)",
}


def _raw_audit(name: str) -> Audit:
    from shuffledp.experiments.audit_mutants import RAW_MUTANT_KIND
    from shuffledp.experiments.audits_raw import FIXTURES

    _, fw, fx = name.split("_", 2)
    return Audit(name, (f"{fw}:mhm",), f"{FIXTURES[fx][0]}_encode", "shuffle",
                 "released unit estimates projected on a discriminant chosen on the selection half",
                 DATA_EDGES_BUG[RAW_MUTANT_KIND[fx]], loop="raw")


AUDITS.update({nm: _raw_audit(nm) for nm in RAW_AUDITS})

#: randomizers of the shuffle literature that no experiment here runs (only their accountants are evaluated):
#: reported as rows without an audit, never silently dropped
NOT_RUN = {
    "oue": "no experiment runs an OUE randomizer (only its accountants, in accountants_compare)",
    "olh": "no experiment runs an OLH randomizer (only its accountants, in accountants_compare)",
}

CHUNK = 200_000  # vectorised audits draw their trials in chunks of this size (memory at paper scale)


def run_audit(name: str, trials: int, alpha: float, seed: int, settings: Mapping | None = None,
              records: np.ndarray | None = None, *, mutant: bool = False,
              raw_paths: Mapping[str, str] | None = None, coding: Mapping | None = None,
              delta_test: bool = False) -> tuple[dict, float]:
    """One audit: its table row and its wall seconds (kept out of the row: not reproducible).
    ``delta_test=True`` (the raw-record audits' mode, ``audits.raw_delta``): besides the lower bound on
    eps at the claimed delta, a lower bound on delta at the claimed eps (:func:`distinguish_delta`), each
    at level ``alpha/2`` (so both hold together with confidence ``1 - alpha``); violation when either
    exceeds its claim.
    ``mutant=True``: the same audit (same seed) with its planted bug in the code
    (:func:`shuffledp.experiments.audit_mutants.planted`). ``raw_paths``: the raw files of a raw-record
    audit (:func:`shuffledp.experiments.audits_raw.read_raw`; default: the data mirror) and the public
    coding's overrides the data stage uses (``datasets.adult.coding``, ``multidim_frameworks.loan.coding``)."""
    if mutant and name not in NOT_RUN:
        from shuffledp.experiments.audit_mutants import planted

        with planted(name):
            return run_audit(name, trials, alpha, seed, settings, records, raw_paths=raw_paths, coding=coding,
                             delta_test=delta_test)
    if name in NOT_RUN:
        return ({"audit": name, "protocols": name, "function": "", "kind": "", "statistic": "", "n": 0,
                 "trials": 0, "delta": math.nan, "alpha": float(alpha), "eps_lb": math.nan, "delta_lb": math.nan,
                 "eps_ub": math.nan,
                 "eps_exact": math.nan, "tightness": math.nan, "verdict": "not run", "upper_by": "",
                 "mutant": "", "setting": "{}", "notes": NOT_RUN[name]}, 0.0)
    import scipy.special  # noqa: F401  (loaded before the clock starts: the seconds are the audit's)

    a = AUDITS[name]
    p = dict(DEFAULT_SETTINGS[name], **(settings or {}))
    rng = seeded_rng(seed, "audits", name)
    # one public set-up (hash family, victim pair) for every chunk of trials: chunks drawing their own
    # had mixed several pairs' samples, which weakened the bound as the trials grew
    p.setdefault("setup_seed", int(seeded_rng(seed, "audits", name, "setup").integers(2**62)))
    t0 = time.perf_counter()
    parts, res = [], None
    raw = None
    if a.loop == "raw":
        from shuffledp.experiments import audits_raw as AR

        fw, fx = name.split("_", 2)[1:]
        raw = AR.read_raw(AR.FIXTURES[fx][0], raw_paths or AR.mirror_paths())
    for start in range(0, int(trials), CHUNK if a.loop == "vector" else int(trials)):
        size = min(CHUNK, int(trials) - start) if a.loop == "vector" else int(trials)
        if raw is not None:
            r = AR.audit_raw(fw, fx, p, size, rng, raw, seed, coding)
        elif records is not None and name.startswith(("calm_", "hdg_")):
            fw, comp = name.split("_")
            r = audit_framework(fw, comp, p, size, rng, records=records)
        else:
            r = a.run(p, size, rng)
        res = res or r
        parts.append(r["samples"])
    res["samples"] = [np.concatenate([s[i] for s in parts]) for i in (0, 1)]
    x0, x1 = res["samples"]
    ub = res["eps_ub"]
    dist, ddist, verdict, notes = _bounds(res, alpha, delta_test)
    seconds = time.perf_counter() - t0
    if res.get("collision_in_pair") is False:
        notes.append("no colliding victim record: the collision mutant cannot be caught by this pair")
    mod, attr = SITES[a.site]
    setting = dict(p, **res.get("setting_extra", {}))
    row = {"audit": name, "protocols": ",".join(a.protocols), "function": f"{mod}.{attr}", "kind": a.kind,
           "statistic": a.statistic, "n": int(res["n"]), "trials": int(len(x0)), "delta": float(res["delta"]),
           "alpha": float(alpha), "eps_lb": dist.eps_lb,
           "delta_lb": ddist.delta_lb if ddist is not None else math.nan, "eps_ub": float(ub),
           "eps_exact": float(res["eps_exact"]),
           "tightness": dist.eps_lb / ub if ub > 0 else math.nan, "verdict": verdict, "upper_by": res["upper_by"],
           "mutant": a.mutant, "setting": json.dumps(setting, sort_keys=True, default=float),
           "notes": "; ".join(x for x in notes if x)}
    return row, seconds


def _bounds(res: dict, alpha: float, delta_test: bool):
    """The eps lower bound (at level ``alpha``, or ``alpha/2`` beside the delta bound), the delta lower
    bound at the accountant's eps (``delta_test``, level ``alpha/2``), the verdict and the notes."""
    x0, x1 = (np.asarray(x) for x in res["samples"])
    ub = res["eps_ub"]
    dist = distinguish(x0, x1, res["delta"], alpha / 2 if delta_test else alpha)
    ddist = distinguish_delta(x0, x1, ub, alpha / 2) if delta_test else None
    over = dist.eps_lb > ub or (ddist is not None and ddist.delta_lb > res["delta"])
    notes = [res.get("exact_note", "")]
    if ddist is not None:
        notes.append(f"delta lower bound at eps = {ub:.4g}: {ddist.delta_lb:.4g} (claimed {res['delta']:.3g}; "
                     f"event P = {ddist.p_pos:.3f} vs {ddist.p_neg:.3f} on the held-out half); each bound at "
                     "level alpha/2")
    return dist, ddist, "violation" if over else "consistent", notes


def names() -> list[str]:
    return [*AUDITS, *NOT_RUN]


# ------------------------------------------------------------------ the report step

COLUMNS = ["audit", "protocols", "function", "kind", "statistic", "n", "trials", "delta", "alpha", "eps_lb",
           "delta_lb", "eps_ub", "eps_exact", "tightness", "verdict", "upper_by", "mutant", "mutant_eps_lb",
           "mutant_delta_lb", "mutant_caught", "setting", "notes"]


def audit_row(name: str, trials: int, alpha: float, seed: int, settings: Mapping | None = None,
              records: np.ndarray | None = None, raw_paths: Mapping[str, str] | None = None,
              coding: Mapping | None = None, delta_test: bool = False) -> tuple[dict, float]:
    """The stage's row: the audit of the code as it is, then under its planted bug (same seed):
    ``mutant_eps_lb``, ``mutant_delta_lb`` and ``mutant_caught`` (the audit flagged the mutant as a violation); an audit
    that does not catch its bug says so in ``notes``. Seconds: both runs."""
    row, sec = run_audit(name, trials, alpha, seed, settings, records, raw_paths=raw_paths, coding=coding,
                         delta_test=delta_test)
    if name in NOT_RUN:
        return dict(row, mutant_eps_lb=math.nan, mutant_delta_lb=math.nan, mutant_caught=False), sec
    mrow, msec = run_audit(name, trials, alpha, seed, settings, records, mutant=True, raw_paths=raw_paths,
                           coding=coding, delta_test=delta_test)
    caught = mrow["verdict"] == "violation"
    row = dict(row, mutant_eps_lb=mrow["eps_lb"], mutant_delta_lb=mrow["delta_lb"], mutant_caught=caught)
    if name in RAW_AUDITS:  # how far the planted coding crosses users on this fixture
        moved = json.loads(mrow["setting"]).get("moved_rows")
        row["notes"] = "; ".join(x for x in (row["notes"], f"coded rows that differ under the planted bug: {moved}")
                                 if x)
    if not caught:
        row["notes"] = "; ".join(x for x in (row["notes"], "this audit does not catch its planted bug at these "
                                             "trials") if x)
    return row, sec + msec


def report(row_files: list[str], timing_files: list[str], spec: Mapping, out: Mapping[str, str]):
    """The ``report`` step: ``audits.{parquet,md}`` (rows in the registry's order), the timings
    table (wall seconds: not reproducible, kept apart) and the figure."""
    import pandas as pd

    from shuffledp.io import markdown_table, write_table, write_text
    from shuffledp.plotting import audits as F

    df = pd.concat([pd.read_parquet(f) for f in row_files], ignore_index=True)
    order = {nm: i for i, nm in enumerate(names())}
    df = df.sort_values("audit", key=lambda s: s.map(order)).reset_index(drop=True)[COLUMNS]
    tim = pd.concat([pd.read_parquet(f) for f in timing_files], ignore_index=True)
    tim = tim.sort_values("audit", key=lambda s: s.map(order)).reset_index(drop=True)
    write_table(df, out["table"])
    write_table(tim, out["timings"])
    shown = df.drop(columns=["setting", "function"])
    caption = (f"Privacy audits (scale {spec['scale']}; confidence 1 - {spec['alpha']:g}): empirical lower "
               "bound eps_lb against the accountant's upper bound eps_ub, and on the raw_* rows delta_lb, a "
               "lower bound on delta at eps_ub, against the claimed delta (each of a row's two bounds at "
               "confidence 1 - alpha/2); the setting of each audit is in "
               "the Parquet table. Violations: " + (", ".join(df.loc[df.verdict == "violation", "audit"]) or "none")
               + ".")
    write_text(out["md"], markdown_table(shown, caption, float_format="{:.4g}"))
    F.figure(df, out["pdf"], out["png"])
    return df
