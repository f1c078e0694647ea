"""FLAME (Liu et al., AAAI 2021) as the multidimensional seed's Section 3.3 describes it.

Each user samples one attribute ``s_i`` uniformly from the ``d`` attributes and reports
``(s_i, kRR(x_{i s_i}))`` with attribute ``s_i``'s local budget. The shuffler counts the reports of
each attribute and pads each with dummy pairs (uniform values) up to ``N_p`` (default ``n/3``); if an
attribute ever received more than ``N_p`` reports (vanishingly rare for ``d >= 4``), the shuffler keeps
a uniformly random ``N_p`` of them (the analysis assumes exactly ``N_p`` per attribute). It shuffles
the ``d * N_p`` pairs.

Local budget (seed Section 3.3): ``eps_ck = log(d (e^{eps_s/2} - 1) + 1)`` (the per-attribute budget that
sampling with probability ``1/d`` amplifies to ``eps_s/2``), ``delta_ck = d delta_s`` and
``eps_lj = log((N_p - 1) eps_ck^2 / (14 log(2/delta_ck)) - k_j + 1)``: the privacy blanket of
Balle et al. (Thm 3.1) for k-RR on ``N_p`` reports. The seed prints this formula twice: Section 6.1.2
without a factor ``k`` in the denominator (which is what Balle et al.'s theorem gives,
``e^eps_l = k/gamma - k + 1``) and Section 3.3 with ``14 k``; ``variant="balle"`` (default) uses the former,
``variant="seed33"`` the latter (smaller ``eps_l``, a weaker FLAME). Both also apply the theorem's
second condition (``(N_p - 1) eps_ck / 27``), and ``eps_l >= eps_s`` (pure LDP). The theorem assumes
``eps_ck <= 1``, which fails for most of the paper's settings (``d >= 10``); ``valid_range`` reports it.

Whole-record guarantee: the formula protects a change of ONE attribute (amplification by
sampling the attribute), while the multidimensional paper's neighbours differ in a whole record. Every
``eps_l`` used is therefore checked with the project's general bound (:func:`whole_record_delta`; FLAME's
randomizer is ``max_j eps_l,j``-LDP over whole records) and, where that bound exceeds ``delta_s``, capped
at the largest value it certifies (``FLAMESetting.capped``; a run's ``flame_capped`` column).

Estimator (the seed gives none; ours is unbiased): attribute ``j``'s ``N_p`` reports are k-RR outputs of
the real values and of uniform dummies, so ``(c_v - N_p q)/(p - q)`` estimates
``n_jv + (N_p - n_j)/k_j``. The curator does not see ``n_j``; it uses its expectation ``n/d``:
``F_jv = (d/n) [(c_v - N_p q)/(p - q) - (N_p - n/d)/k_j]``, unbiased over sampling and randomisation.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from shuffledp.mechanisms.collision import WARM_UP_RUNS, krr, krr_p


@dataclass(frozen=True)
class FLAMESetting:
    eps_l: tuple[float, ...]
    n_p: int
    eps_ck: float
    delta_ck: float
    valid_range: bool
    whole_record_delta: float = float("nan")  # the general bound's delta at eps_s for the eps_l used
    capped: bool = False  # eps_l lowered below the seed's formula so the whole-record claim is certified


def whole_record_delta(eps_l: float, n: int, eps_s: float) -> float:
    """A sound upper bound on the shuffled delta at ``eps_s`` of ``n`` FLAME reports whose local budget is
    at most ``eps_l``, for neighbours that differ in a WHOLE record: FLAME's randomizer ``x -> (s,
    kRR_{eps_l,s}(x_s))`` is ``max_j eps_l,j``-LDP over whole records, and the shuffler's dummies and
    truncation are post-processing, so the project's general bound (any eps0-LDP randomizer,
    :func:`shuffledp.accountants.best.delta_upper`) applies."""
    from shuffledp.accountants.best import delta_upper

    return 0.0 if eps_l <= eps_s else float(delta_upper("general", float(eps_l), int(n), float(eps_s)))


@functools.lru_cache(maxsize=256)
def _certified_cap(eps_s: float, delta_s: float, n: int, hi: float) -> float:
    """The largest local eps in ``[eps_s, hi]`` (to 1e-4 relative) whose whole-record delta at ``eps_s`` is
    at most ``delta_s`` (``eps_s`` itself always is: delta 0)."""
    lo = eps_s
    for _ in range(60):
        if hi - lo <= 1e-4 * lo:
            break
        mid = 0.5 * (lo + hi)
        if whole_record_delta(mid, n, eps_s) <= delta_s:
            lo = mid
        else:
            hi = mid
    return lo


def flame_eps_local(eps_s: float, delta_s: float, n: int, domains: list[int], *,
                    np_fraction: float = 1 / 3, variant: str = "balle", certify: bool = True) -> FLAMESetting:
    """The seed's local budgets; with ``certify`` (default) each is capped, where needed, at the largest
    eps_l that the general bound certifies for a change of the whole record (:func:`whole_record_delta`
    <= ``delta_s``; ``capped`` says so). The seed's formula alone covers a change of one attribute."""
    return _flame_eps_local(float(eps_s), float(delta_s), int(n), tuple(int(k) for k in domains),
                            float(np_fraction), variant, bool(certify))


@functools.lru_cache(maxsize=1024)
def _flame_eps_local(eps_s: float, delta_s: float, n: int, domains: tuple[int, ...], np_fraction: float,
                     variant: str, certify: bool) -> FLAMESetting:
    if not (eps_s > 0 and 0 < delta_s < 1 and n >= 2):
        raise ValueError(f"eps_s/delta_s/n: invalid ({eps_s}, {delta_s}, {n})")
    if variant not in ("balle", "seed33"):
        raise ValueError(f"variant: 'balle' or 'seed33', got {variant!r}")
    d = len(domains)
    n_p = int(math.ceil(n * np_fraction))
    eps_ck = math.log(d * (math.exp(eps_s / 2) - 1) + 1)
    delta_ck = d * delta_s
    if delta_ck >= 1:
        raise ValueError(f"delta_s: d * delta_s = {delta_ck} must be below 1")
    out = []
    for k in domains:
        denom = 14 * math.log(2 / delta_ck) * (k if variant == "seed33" else 1)
        val = min((n_p - 1) * eps_ck**2 / denom, (n_p - 1) * eps_ck / 27) - k + 1
        eps_l = math.log(val) if val > 1 else 0.0
        out.append(max(eps_l, eps_s))
    top = max(out)
    wr = whole_record_delta(top, n, eps_s)
    capped = False
    if certify and wr > delta_s:
        cap = _certified_cap(eps_s, delta_s, n, top)
        out = [min(e, cap) for e in out]
        wr, capped = whole_record_delta(max(out), n, eps_s), True
    return FLAMESetting(tuple(out), n_p, eps_ck, delta_ck, eps_ck <= 1, wr, capped)


@dataclass
class FLAMEResult:
    estimates: list[np.ndarray]
    eps_l: tuple[float, ...]
    n_p: int
    truncated: int  # reports the shuffler dropped (an attribute over N_p)
    valid_range: bool
    bits: float  # mean bits a user sends
    user_seconds: float = float("nan")
    capped: bool = False  # eps_l capped so the general bound certifies the whole-record claim
    whole_record_delta: float = float("nan")


def flame_bits(domains: list[int], sampled: np.ndarray) -> float:
    d = len(domains)
    kb = np.array([math.ceil(math.log2(k)) for k in domains], dtype=float)
    return float(math.ceil(math.log2(d)) + kb[sampled].mean()) if d > 1 else float(kb[sampled].mean())


def flame_randomize(data: np.ndarray, eps_l: np.ndarray, domains: np.ndarray,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The users' side: each user's sampled attribute ``s`` and its k-RR report ``y`` (``eps_l`` and
    ``domains`` per attribute)."""
    n, d = data.shape
    s = rng.integers(0, d, size=n)
    x = data[np.arange(n), s]
    return s, krr(x, eps_l[s], domains[s], rng)


def run_flame(data, domains, eps_s, delta_s, rng, *, np_fraction=1 / 3, variant="balle",
              certify: bool = True, warm_up: np.random.Generator | None = None,
              warm_runs: int = WARM_UP_RUNS) -> FLAMEResult:
    """``warm_up``: a generator of its own for ``warm_runs`` untimed runs of the users' side before the timed
    one (as :func:`~shuffledp.protocols.mhm.run_mhm`); ``rng`` draws exactly what it draws without them."""
    data = np.asarray(data, dtype=np.int64)
    n, d = data.shape
    st = flame_eps_local(eps_s, delta_s, n, domains, np_fraction=np_fraction, variant=variant, certify=certify)
    dom = np.asarray(domains, dtype=np.int64)
    eps_arr = np.asarray(st.eps_l)
    for _ in range(warm_runs if warm_up is not None else 0):
        flame_randomize(data, eps_arr, dom, warm_up)
    # users
    t0 = time.perf_counter()
    s, y = flame_randomize(data, eps_arr, dom, rng)
    user_seconds = time.perf_counter() - t0
    # shuffler: per attribute, truncate to N_p and pad with uniform dummies
    truncated = 0
    est = []
    for j, k in enumerate(domains):
        yj = y[s == j]
        if yj.size > st.n_p:
            truncated += yj.size - st.n_p
            yj = rng.choice(yj, size=st.n_p, replace=False)
        c = np.bincount(yj, minlength=k).astype(np.int64)
        c += rng.multinomial(st.n_p - yj.size, np.full(k, 1.0 / k))
        # curator
        p, q = krr_p(st.eps_l[j], k)
        debiased = (c - st.n_p * q) / (p - q)
        est.append((d / n) * (debiased - (st.n_p - n / d) / k))
    return FLAMEResult(est, st.eps_l, st.n_p, truncated, st.valid_range, flame_bits(domains, s), user_seconds,
                       st.capped, st.whole_record_delta)
