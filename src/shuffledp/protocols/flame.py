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

Estimator (the seed gives none; ours is unbiased): attribute ``j``'s ``N_p`` reports are k-RR outputs of
the real values and of uniform dummies, so ``(c_v - N_p q)/(p - q)`` estimates
``n_jv + (N_p - n_j)/k_j``. The curator does not see ``n_j``; it uses its expectation ``n/d``:
``F_jv = (d/n) [(c_v - N_p q)/(p - q) - (N_p - n/d)/k_j]``, unbiased over sampling and randomisation.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from shuffledp.mechanisms.collision import krr, krr_p


@dataclass(frozen=True)
class FLAMESetting:
    eps_l: tuple[float, ...]
    n_p: int
    eps_ck: float
    delta_ck: float
    valid_range: bool


def flame_eps_local(eps_s: float, delta_s: float, n: int, domains: list[int], *,
                    np_fraction: float = 1 / 3, variant: str = "balle") -> FLAMESetting:
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
    return FLAMESetting(tuple(out), n_p, eps_ck, delta_ck, eps_ck <= 1)


@dataclass
class FLAMEResult:
    estimates: list[np.ndarray]
    eps_l: tuple[float, ...]
    n_p: int
    truncated: int  # reports the shuffler dropped (an attribute over N_p)
    valid_range: bool
    bits: float  # mean bits a user sends
    user_seconds: float = float("nan")


def flame_bits(domains: list[int], sampled: np.ndarray) -> float:
    d = len(domains)
    kb = np.array([math.ceil(math.log2(k)) for k in domains], dtype=float)
    return float(math.ceil(math.log2(d)) + kb[sampled].mean()) if d > 1 else float(kb[sampled].mean())


def run_flame(data, domains, eps_s, delta_s, rng, *, np_fraction=1 / 3, variant="balle") -> FLAMEResult:
    data = np.asarray(data, dtype=np.int64)
    n, d = data.shape
    st = flame_eps_local(eps_s, delta_s, n, domains, np_fraction=np_fraction, variant=variant)
    dom = np.asarray(domains, dtype=np.int64)
    eps_arr = np.asarray(st.eps_l)
    # users
    t0 = time.perf_counter()
    s = rng.integers(0, d, size=n)
    x = data[np.arange(n), s]
    y = krr(x, eps_arr[s], dom[s], rng)
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
    return FLAMEResult(est, st.eps_l, st.n_p, truncated, st.valid_range, flame_bits(domains, s), user_seconds)
