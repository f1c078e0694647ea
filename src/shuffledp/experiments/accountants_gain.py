"""What the tighter accountant buys: the local eps each accountant allows at the same
``(eps_s, delta_s, n)`` and the MSE a user gains, by formula and measured.

Randomizers (the k-RR-type local randomizers of the experiments):

* ``krr<k>``: k-ary randomized response, frequency oracle ``(count/n - q)/(p - q)``, ``p =
  e^eps_l/(e^eps_l + k - 1)``, ``q = 1/(e^eps_l + k - 1)``; per-value MSE averaged over the ``k``
  values (the frequencies sum to 1): ``[q(1-q) + (p-q)(1-p-q)/k] / (n (p-q)^2)`` (:func:`krr_mse`).
* ``mhm1``: MHM's hashed randomizer with one attribute (``d = 1``): a user hashes its value into
  ``[g]`` with a public random hash and reports through ``g``-RR; ``g`` from Eq. (3) for ``eps_l``.
  Given the victim's hash function the pair of its reports is a ``g``-RR pair and every other
  report has the same blanket (uniform hash index, uniform value), so the decomposition of
  ``g``-RR bounds it. MSE: :func:`shuffledp.protocols.mhm.expected_mse`. With ``d > 1``
  attributes (the multidim experiment) the randomizer is not a k-RR: collisions between one
  user's own hashed attributes change its report probabilities, so its likelihood-ratio groups
  and their blanket masses depend on the hash family's collision law, which we do not bound;
  it is not in this table.

* ``subexp-d<d>-s<s>``: PrivSet's k-subset exponential mechanism (the segmented experiment's
  Subexp-shuffle baseline) on sets of ``s`` of ``d`` items padded with ``s`` dummy items, at the
  segmented experiment's settings (spec key ``subexp``: ``d, s, n, eps_s, delta_s``, from the
  ``segmented`` section: every dataset and ``n``, ``eps_s = uniform_eps``, ``delta_s =
  delta_factor / n``). ``g`` columns hold the subset size ``k`` (PrivSet's best for the eps_l).
  ``today`` = :func:`~shuffledp.experiments.segmented_params.subexp_shuffle_eps0_vr` (variation
  ratio, general parameters), ``best`` =
  :func:`~shuffledp.experiments.segmented_params.subexp_shuffle_eps0` (``best.delta_upper``: the
  decomposition of its grouped pairs or the variation ratio). MSE:
  :func:`shuffledp.mechanisms.subset_exp.expected_mse` with full sets (``s`` real items per user).

Out of scope: MHM with ``d > 1`` attributes (its collision randomizer's likelihood-ratio groups
depend on the hash family's collisions), and the segmented protocol's and the balls-into-bins
baselines' Poisson randomizer (several messages per user, not a single-message randomizer).

Accountants: ``today`` = the largest eps_l certified by what the experiments use now (blanket
Bennett with the randomizer's exact moments; for k-RR also the variation-ratio reduction with the
general eps0-LDP parameters), ``best`` = the largest of those and the blanket decomposition's
(:func:`shuffledp.accountants.best.eps_local_for`; every value is a certified point).

``gain`` rows: formula MSE of each at the grid's ``n``; ``measure`` rows: the protocol run
``reps`` times under seeds from :mod:`shuffledp.seeding` at a small ``n`` with both eps_l, the
measured MSE ratio beside the formula's and its relative difference.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

RANDOMIZERS_HELP = "krr<k> (k-ary randomized response) or mhm1 (MHM's hashed randomizer, one attribute)"


def check_randomizer(name: str) -> None:
    if name == "mhm1":
        return
    if not (name.startswith("krr") and name[3:].isdigit() and int(name[3:]) >= 2):
        raise ValueError(f"randomizer {name!r} is not {RANDOMIZERS_HELP}")


# ----------------------------------------------------------------------------- formulas
def krr_pq(eps_l: float, k: int) -> tuple[float, float]:
    e = math.exp(eps_l)
    return e / (e + k - 1.0), 1.0 / (e + k - 1.0)


def krr_mse(eps_l: float, k: int, n: int) -> float:
    """Expected per-value MSE of the k-RR frequency oracle, averaged over the k values."""
    p, q = krr_pq(eps_l, k)
    return (q * (1 - q) + (p - q) * (1 - p - q) / k) / (n * (p - q) ** 2)


def mhm1_mse(eps_l: float, g: int, n: int, domain: int) -> float:
    from shuffledp.protocols.mhm import expected_mse

    return float(expected_mse(eps_l, 1, int(g), int(n), [int(domain)]))


# ----------------------------------------------------------------------------- local eps
def settings(randomizer: str, eps_s: float, delta_s: float, n: int, *, rtol: float = 1e-4,
             domain: int | None = None) -> dict:
    """``{"today": (eps_l, g, by), "best": (eps_l, g, by)}`` (``g`` = k for k-RR). For ``mhm1``
    ``best`` is the certified setting with the smaller MSE (:func:`mhm1_mse` on ``domain`` values;
    Eq. (2)'s variance when no domain is given)."""
    from shuffledp.accountants import best
    from shuffledp.accountants.upper import blanket
    from shuffledp.accountants.upper import decomposition as dec
    from shuffledp.protocols import mhm

    check_randomizer(randomizer)
    if randomizer == "mhm1":
        s = mhm.mhm_eps_local(eps_s, delta_s, n, 1, bound="bennett")
        today = (s.eps_l, s.g, "blanket-bennett")

        def delta_of(e: float) -> float:
            return dec.decomposition_delta(None, n, eps_s, pairs=dec.krr_pairs(mhm.g_int(e, 1), e))

        e = best.eps_local_for(delta_of, eps_s, delta_s, rtol=rtol, guess=s.eps_l)
        dec_set = (e, mhm.g_int(e, 1), "decomposition")
        # the better of the two certified settings
        cand = [today, dec_set]
        if domain is None:
            best_set = min(cand, key=lambda c: mhm.approx_variance(c[0], 1, c[1], n))
        else:
            best_set = min(cand, key=lambda c: mhm1_mse(c[0], c[1], n, domain))
        return {"today": today, "best": best_set}
    k = int(randomizer[3:])
    bb = blanket.max_eps_local(eps_s, delta_s, n, mechanism="krr", bound="bennett", k=k)
    vg = vr_general_eps_local(float(eps_s), float(delta_s), int(n), float(rtol))
    today = max((bb, k, "blanket-bennett"), (vg, k, "variation-ratio-general"))
    de = best.krr_eps_local(k, eps_s, delta_s, n, rtol=rtol, guess=today[0])  # the looser bounds' value
    return {"today": today, "best": max(today, (de, k, "decomposition"))}


@functools.lru_cache(maxsize=256)
def vr_general_eps_local(eps_s: float, delta_s: float, n: int, rtol: float) -> float:
    """The largest local eps the variation ratio with the general eps0-LDP parameters certifies at
    ``(eps_s, delta_s, n)``: its parameters depend on eps_l alone, not on the randomizer, so every
    k-RR of a table shares one search (cached: the same search, the same number)."""
    from shuffledp.accountants import best
    from shuffledp.accountants.upper import variation_ratio as vr

    return best.eps_local_for(lambda e: vr.vr_delta(vr.vr_params("general", e), n, eps_s), eps_s, delta_s,
                              rtol=rtol)


def mse(randomizer: str, eps_l: float, g: int, n: int, domain: int) -> float:
    return mhm1_mse(eps_l, g, n, domain) if randomizer == "mhm1" else krr_mse(eps_l, g, n)


# ----------------------------------------------------------------------------- subset exponential
def subexp_label(d: int, s: int) -> str:
    return f"subexp-d{int(d)}-s{int(s)}"


def subexp_mse(eps_l: float, k: int, d: int, s: int, n: int) -> float:
    """PrivSet's per-item MSE averaged over the ``d`` real items, every user holding ``s`` of them."""
    from shuffledp.mechanisms import subset_exp as se

    return se.expected_mse(se.subset_exp_rates(int(d), int(s), float(eps_l), int(k)), int(n))


_PRESET: dict[tuple, dict] = {}


def preset_subexp_settings(d: int, s: int, n: int, eps_s: float, delta_s: float, rtol: float, *,
                           eps0_vr: float, eps0: float, k: int, by: str) -> None:
    """Subexp-shuffle's settings as the segmented parameter table holds them (the same two searches,
    :func:`subexp_settings`'s): used instead of searching again when ``rtol`` is the table's
    (:data:`~shuffledp.experiments.segmented_params.SUBEXP_RTOL`); otherwise ignored."""
    from shuffledp.experiments import segmented_params as sp
    from shuffledp.mechanisms import subset_exp as se

    if float(rtol) != sp.SUBEXP_RTOL:
        return
    _PRESET[(int(d), int(s), int(n), float(eps_s), float(delta_s))] = {
        "today": (float(eps0_vr), int(se.best_subset_size(int(d), int(s), float(eps0_vr))),
                  "variation-ratio-general"),
        "best": (float(eps0), int(k), str(by))}


@functools.lru_cache(maxsize=64)
def subexp_settings(d: int, s: int, n: int, eps_s: float, delta_s: float, rtol: float = 1e-4) -> dict:
    """``{"today": (eps_l, k, by), "best": (eps_l, k, by)}`` of Subexp-shuffle at one setting
    (cached: the gain and measure rows share them; read from the segmented parameter table where
    :func:`preset_subexp_settings` gave it)."""
    from shuffledp.experiments import segmented_params as sp

    key = (int(d), int(s), int(n), float(eps_s), float(delta_s))
    if key in _PRESET and float(rtol) == sp.SUBEXP_RTOL:
        return dict(_PRESET[key])

    e_vr, k_vr, _ = sp.subexp_shuffle_eps0_vr(int(n), int(d), int(s), float(eps_s), float(delta_s))
    b = sp.subexp_shuffle_eps0(int(n), int(d), int(s), float(eps_s), float(delta_s), rtol=float(rtol))
    return {"today": (e_vr, k_vr, "variation-ratio-general"), "best": (b.eps0, b.k, b.certified_by)}


def subexp_gain_rows(spec: Mapping) -> list[dict]:
    rows = []
    for c in spec.get("subexp", []):
        d, s, n, eps_s, delta_s = int(c["d"]), int(c["s"]), int(c["n"]), float(c["eps_s"]), float(c["delta_s"])
        st = subexp_settings(d, s, n, eps_s, delta_s, float(spec["rtol"]))
        (et, kt, bt), (eb, kb, bb) = st["today"], st["best"]
        mt, mb = subexp_mse(et, kt, d, s, n), subexp_mse(eb, kb, d, s, n)
        rows.append({"randomizer": subexp_label(d, s), "domain": d, "eps_s": eps_s, "delta_s": delta_s,
                     "n": n, "eps_l_today": et, "g_today": int(kt), "today_by": bt,
                     "eps_l_best": eb, "g_best": int(kb), "best_by": bb,
                     "mse_today": mt, "mse_best": mb, "mse_ratio": mb / mt,
                     "mse_gain_pct": 100.0 * (1.0 - mb / mt)})
    return rows


def subexp_measured_errors(settings: Mapping[str, tuple[float, int]], d: int, s: int, n: int, reps: int,
                           seed: int) -> dict[str, np.ndarray]:
    """The per-repetition MSEs (as :func:`measured_mse`'s) of PrivSet's mechanism for every
    ``tag -> (eps_l, k)`` of ``settings`` on the same data: each repetition draws the users' sets
    once (``s`` distinct items with Zipf(1) weights without replacement,
    :func:`successive_sample`) and runs every setting on them with its own randomness. Common
    random numbers: the ratio of two settings' errors is not blurred by two draws of the data
    (:func:`paired_ratio` gives its standard error), and the sets are drawn once instead of once
    per setting."""
    from shuffledp import seeding
    from shuffledp.mechanisms import subset_exp as se

    rates = {tag: se.subset_exp_rates(int(d), int(s), float(e), int(k)) for tag, (e, k) in settings.items()}
    w = _zipf(d)
    errs: dict[str, list[float]] = {tag: [] for tag in settings}
    for rep in range(int(reps)):
        rng = seeding.rng(seed, "accountants_gain", subexp_label(d, s), "sets", rep)
        sets = successive_sample(w, n, s, rng)
        true = np.bincount(sets.ravel(), minlength=d) / n
        for tag, r in rates.items():
            rng_t = seeding.rng(seed, "accountants_gain", subexp_label(d, s), tag, rep)
            est = se.estimate(se.hits(se.randomize(sets, r, rng_t), d, s), n, r)
            errs[tag].append(np.mean((est - true) ** 2))
    return {tag: np.asarray(e) for tag, e in errs.items()}


def successive_sample(w: np.ndarray, n: int, s: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, s)`` items of ``0..len(w)-1``, each row ``s`` distinct items drawn one after another,
    each with probability proportional to ``w`` among the items not yet drawn (sampling without
    replacement, the law of the Gumbel top-``s`` trick). Each slot draws from ``w`` and redraws
    the rows whose draw repeats an earlier slot: a rejection step, so the accepted draw is exactly
    ``w`` restricted to the remaining items; cost about ``n s`` draws, not ``n len(w)``. A row's
    drawn items are kept as flags (``n len(w)`` booleans): a clash is one read, not a comparison
    with every earlier slot (the same draws and the same items as comparing)."""
    cdf = np.cumsum(np.asarray(w, float))
    cdf /= cdf[-1]
    n, s, d = int(n), int(s), cdf.size
    out = np.empty((n, s), dtype=np.int64)
    taken = np.zeros(n * d, dtype=bool)   # taken[row * d + item]: drawn in an earlier slot of the row
    for j in range(s):
        todo = np.arange(n)
        base = todo * d
        while todo.size:
            cand = np.searchsorted(cdf, rng.random(todo.size), side="right")
            np.minimum(cand, d - 1, out=cand)
            cell = base + cand
            clash = taken[cell]
            ok = ~clash
            out[todo[ok], j] = cand[ok]
            taken[cell[ok]] = True
            todo, base = todo[clash], base[clash]
    return out


def paired_ratio(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """``(rel. s.e. of mean(a), of mean(b), of mean(b) / mean(a))`` for per-repetition values drawn
    on common data (delta method on the log ratio, with the covariance of the pairs)."""
    ma, mb, r = a.mean(), b.mean(), a.size
    va, vb = a.var(ddof=1) / ma ** 2, b.var(ddof=1) / mb ** 2
    cov = float(np.cov(a, b, ddof=1)[0, 1]) / (ma * mb)
    return math.sqrt(va / r), math.sqrt(vb / r), math.sqrt(max(va + vb - 2.0 * cov, 0.0) / r)


def subexp_measure_rows(spec: Mapping) -> list[dict]:
    """Each (d, s) of the spec's ``subexp`` settings at its smallest ``n`` (its own eps_s, delta_s)."""
    m = spec["measure"]
    first: dict[tuple[int, int], Mapping] = {}
    for c in sorted(spec.get("subexp", []), key=lambda c: int(c["n"])):
        first.setdefault((int(c["d"]), int(c["s"])), c)
    rows = []
    for (d, s), c in sorted(first.items()):
        n, eps_s, delta_s = int(c["n"]), float(c["eps_s"]), float(c["delta_s"])
        st = subexp_settings(d, s, n, eps_s, delta_s, float(spec["rtol"]))
        (et, kt, _), (eb, kb, bb) = st["today"], st["best"]
        errs = subexp_measured_errors({"today": (et, kt), "best": (eb, kb)}, d, s, n, int(m["reps"]),
                                      int(spec["seed"]))
        mt, mb = float(errs["today"].mean()), float(errs["best"].mean())
        _, _, ratio_se = paired_ratio(errs["today"], errs["best"])
        ft, fb = subexp_mse(et, kt, d, s, n), subexp_mse(eb, kb, d, s, n)
        rows.append({"randomizer": subexp_label(d, s), "domain": d, "eps_s": eps_s, "delta_s": delta_s,
                     "n": n, "reps": int(m["reps"]), "eps_l_today": et, "eps_l_best": eb, "best_by": bb,
                     "mse_today_formula": ft, "mse_best_formula": fb, "mse_today_measured": mt,
                     "mse_best_measured": mb, "ratio_formula": fb / ft, "ratio_measured": mb / mt,
                     "ratio_rel_diff": (mb / mt) / (fb / ft) - 1.0,
                     "ratio_rel_se": ratio_se, "tolerance": float(m["tolerance"])})
    return rows


def _domain(randomizer: str, spec: Mapping) -> int:
    return int(spec["mhm_domain"]) if randomizer == "mhm1" else int(randomizer[3:])


# ----------------------------------------------------------------------------- the job
def gain_rows(spec: Mapping) -> pd.DataFrame:
    """Formula rows: every (randomizer, eps_s, n) of the spec, ``delta_s = delta_n / n``."""
    rows = []
    for r in spec["randomizers"]:
        c = _domain(r, spec)
        for n in spec["n_grid"]:
            delta_s = float(spec["delta_n"]) / int(n)
            for eps_s in spec["eps_s"]:
                st = settings(r, float(eps_s), delta_s, int(n), rtol=float(spec["rtol"]), domain=c)
                (et, gt, bt), (eb, gb, bb) = st["today"], st["best"]
                mt, mb = mse(r, et, gt, int(n), c), mse(r, eb, gb, int(n), c)
                rows.append({"randomizer": r, "domain": c, "eps_s": float(eps_s), "delta_s": delta_s,
                             "n": int(n), "eps_l_today": et, "g_today": int(gt), "today_by": bt,
                             "eps_l_best": eb, "g_best": int(gb), "best_by": bb,
                             "mse_today": mt, "mse_best": mb, "mse_ratio": mb / mt,
                             "mse_gain_pct": 100.0 * (1.0 - mb / mt)})
    return pd.DataFrame(rows + subexp_gain_rows(spec))


def _zipf(c: int) -> np.ndarray:
    w = 1.0 / np.arange(1, c + 1)
    return w / w.sum()


def measured_mse(randomizer: str, eps_l: float, g: int, n: int, domain: int, reps: int, seed: int,
                 tag: str) -> tuple[float, float]:
    """Mean over ``reps`` seeded runs and over the values of the squared error of the protocol's
    frequency estimates against the data's own frequencies (data: n draws from a Zipf(1) law);
    returns ``(mse, relative standard error of mse)`` (the spread of the per-run MSEs)."""
    from shuffledp import seeding
    from shuffledp.mechanisms.collision import collision_p, collision_report
    from shuffledp.protocols import mhm

    errs = []
    for rep in range(int(reps)):
        rng = seeding.rng(seed, "accountants_gain", randomizer, tag, rep)
        data = rng.choice(domain, size=n, p=_zipf(domain))
        true = np.bincount(data, minlength=domain) / n
        if randomizer == "mhm1":
            res = mhm.run_mhm(data[:, None], [domain], eps_l, 0.5, rng, setting=mhm.MHMSetting(eps_l, int(g), True))
            est = res.estimates[0]
        else:
            p = collision_p(eps_l, 1, domain)  # k-RR: m = 1 hashed value, g = k outputs
            q = (1.0 - p) / (domain - 1)
            y = collision_report(data[:, None], p, domain, rng)
            est = (np.bincount(y, minlength=domain) / n - q) / (p - q)
        errs.append(np.mean((est - true) ** 2))
    errs = np.asarray(errs)
    return float(errs.mean()), float(errs.std(ddof=1) / math.sqrt(errs.size) / errs.mean())


def measure_rows(spec: Mapping) -> pd.DataFrame:
    """The protocol under a fixed seed at ``measure.n``, ``measure.eps_s``, with both eps_l."""
    m = spec["measure"]
    n, eps_s = int(m["n"]), float(m["eps_s"])
    delta_s = float(spec["delta_n"]) / n
    rows = []
    for r in spec["randomizers"]:
        c = _domain(r, spec)
        st = settings(r, eps_s, delta_s, n, rtol=float(spec["rtol"]), domain=c)
        (et, gt, _), (eb, gb, bb) = st["today"], st["best"]
        mt, st_ = measured_mse(r, et, gt, n, c, int(m["reps"]), int(spec["seed"]), "today")
        mb, sb_ = measured_mse(r, eb, gb, n, c, int(m["reps"]), int(spec["seed"]), "best")
        ft, fb = mse(r, et, gt, n, c), mse(r, eb, gb, n, c)
        rows.append({"randomizer": r, "domain": c, "eps_s": eps_s, "delta_s": delta_s, "n": n,
                     "reps": int(m["reps"]), "eps_l_today": et, "eps_l_best": eb, "best_by": bb,
                     "mse_today_formula": ft, "mse_best_formula": fb, "mse_today_measured": mt,
                     "mse_best_measured": mb, "ratio_formula": fb / ft, "ratio_measured": mb / mt,
                     "ratio_rel_diff": (mb / mt) / (fb / ft) - 1.0,
                     # independent runs: relative standard errors add in quadrature (delta method)
                     "ratio_rel_se": math.hypot(st_, sb_), "tolerance": float(m["tolerance"])})
    return pd.DataFrame(rows + subexp_measure_rows(spec))


def markdown(gain: pd.DataFrame, meas: pd.DataFrame, *, scale: str = "default") -> str:
    lines = [f"What the tighter accountant buys (scale: {scale}): the local eps each accountant certifies "
             "at the same (eps_s, delta_s = delta_n/n, n), and the frequency-estimation MSE (formula). "
             "today = blanket Bennett / variation ratio (general); best = also the blanket decomposition.", "",
             "| randomizer | eps_s | n | eps_l today (by) | eps_l best (by) | MSE today | MSE best | MSE gain |",
             "|---|---|---|---|---|---|---|---|"]
    for r in gain.itertuples():
        lines.append(f"| {r.randomizer} | {r.eps_s:g} | {r.n:.0e} | {r.eps_l_today:.4g} ({r.today_by}) "
                     f"| {r.eps_l_best:.4g} ({r.best_by}) | {r.mse_today:.3g} | {r.mse_best:.3g} "
                     f"| {r.mse_gain_pct:.1f}% |")
    lines += ["", "subexp-d<d>-s<s>: PrivSet's subset exponential mechanism (the segmented experiment's "
              "Subexp-shuffle) at that experiment's settings (eps_s = its uniform eps, delta_s = delta_factor / n); "
              "eps_l is its local eps0, today = variation ratio (general parameters), best = best.delta_upper "
              "(decomposition of its grouped pairs or the variation ratio); MSE averaged over the d real items, "
              "every user holding s of them.",
              "Not in this table: MHM with d > 1 attributes (its collision randomizer's likelihood-ratio groups "
              "depend on the hash family's collisions) and the Poisson randomizer of the segmented protocol and "
              "MM-shuffle/SepMM (several messages per user)."]
    lines += ["", "Measured: the protocol run under fixed seeds with both eps_l (MSE over the repetitions and "
              "values, against the data's frequencies); ratio = MSE best / MSE today; for subexp both eps_l run on the "
              "same users' sets in each repetition (the s.e. of the ratio counts the pairing).", "",
              "| randomizer | eps_s | n | reps | ratio (formula) | ratio (measured) | rel. diff | rel. s.e. "
              "| tolerance |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in meas.itertuples():
        lines.append(f"| {r.randomizer} | {r.eps_s:g} | {r.n} | {r.reps} | {r.ratio_formula:.4f} "
                     f"| {r.ratio_measured:.4f} | {100 * r.ratio_rel_diff:+.1f}% | {100 * r.ratio_rel_se:.1f}% "
                     f"| {100 * r.tolerance:.0f}% |")
    return "\n".join(lines) + "\n"


def run_gain(spec: Mapping, out: Mapping[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``gain`` step: the formula table, the measured table, their Markdown and the figure."""
    from shuffledp.io import write_table, write_text
    from shuffledp.plotting.accountants_compare import gain_figure

    gain, meas = gain_rows(spec), measure_rows(spec)
    write_table(gain, out["table"])
    write_table(meas, out["measured"])
    write_text(out["md"], markdown(gain, meas, scale=spec["scale"]))
    gain_figure(gain, out["pdf"], out["png"], scale=spec["scale"])
    return gain, meas
