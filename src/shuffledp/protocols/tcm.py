"""TCM: the collision mechanism (Wang et al., IJCAI 2021) on the transformed single attribute.

Each user's ``d`` attribute values are encoded as ``d`` distinct items of one virtual attribute of
``D = sum_j |C_j|`` items (``item = offset_j + code``, the encoding rule the curator broadcasts),
hashed with ONE function ``h_t`` of the family into [g], and reported through Eq. (1) with
``m = d`` values. The curator counts the reports supporting each item and estimates
``(F*/n - 1/g) / (p - 1/g)``, ``p = e^eps_l / (m e^eps_l + g - m)``.

Local budget (seed Section 3.3, from the privacy blanket of Balle et al., Thm 3.1, with the blanket
probability gamma = g / (m e^eps_l + g - m) of CM): ``e^eps_l = B/m - g/m + 1`` with
``B = (n-1) eps_s^2 / (14 log(2/delta_s))``; we also apply the theorem's second condition
``gamma >= 27 g / ((n-1) eps_s)`` (``B <- min(B, (n-1) eps_s / 27)``), which never binds at the
paper's settings but keeps the bound from being optimistic elsewhere. With ``g = 2m - 1 + m e^eps_l``
the two equations give ``e^eps_l = (B - m + 1) / (2m)``; ``g`` is then rounded and ``eps_l``
recomputed for the integer ``g``. Where no amplification results, ``eps_l = eps_s``.
The theorem assumes ``eps_s <= 1``; ``valid_range`` says whether that holds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from shuffledp.mechanisms.collision import collision_p, collision_report
from shuffledp.mechanisms.hashing import HashFamily
from shuffledp.protocols.mhm import DEFAULT_BLOCK, WARM_UP_RUNS, support_counts


@dataclass(frozen=True)
class TCMSetting:
    eps_l: float
    g: int
    amplified: bool
    valid_range: bool


def blanket_budget(eps_s: float, delta_s: float, n: int) -> float:
    """``B = min((n-1) eps^2 / (14 log(2/delta)), (n-1) eps / 27)`` of Balle et al.'s Theorem 3.1."""
    if not (eps_s > 0 and 0 < delta_s < 1 and n >= 2):
        raise ValueError(f"eps_s/delta_s/n: invalid ({eps_s}, {delta_s}, {n})")
    return min((n - 1) * eps_s**2 / (14 * math.log(2 / delta_s)), (n - 1) * eps_s / 27)


def tcm_eps_local(eps_s: float, delta_s: float, n: int, m: int) -> TCMSetting:
    B = blanket_budget(eps_s, delta_s, n)
    e = (B - m + 1) / (2 * m)
    if e > math.exp(eps_s):
        g = max(m + 1, round(2 * m - 1 + m * e))
        e2 = (B - g + m) / m
        if e2 > math.exp(eps_s):
            return TCMSetting(math.log(e2), int(g), True, eps_s <= 1)
    g = max(m + 1, round(2 * m - 1 + m * math.exp(eps_s)))
    return TCMSetting(float(eps_s), int(g), False, eps_s <= 1)


def encoding_offsets(domains: list[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(domains)[:-1]]).astype(np.int64)


def tcm_encode(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The broadcast encoding rule applied by a user: attribute j's code c becomes item offsets[j]+c."""
    return np.asarray(data, dtype=np.int64) + offsets[None, :]


def tcm_randomize(data: np.ndarray, offsets: np.ndarray, eps_l: float, g: int, family: HashFamily,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    items = tcm_encode(data, offsets)
    n, m = items.shape
    t = family.sample_indices(rng, n)
    hashed = family.hash(t[:, None], items)
    y = collision_report(hashed, collision_p(eps_l, m, g), g, rng)
    return t, y


def tcm_estimate(t, y, domains, eps_l, g, family, *, block=DEFAULT_BLOCK) -> list[np.ndarray]:
    n, m = len(y), len(domains)
    p, q = collision_p(eps_l, m, g), 1.0 / g
    counts = support_counts(t, y, domains, family, offsets=list(encoding_offsets(domains)),
                            same_function=True, block=block)
    return [(c / n - q) / (p - q) for c in counts]


def broadcast_bits(domains: list[int]) -> int:
    """The encoding rule's size as Section 6.1.1 counts it: sum_i |C_i| (8 + log2 sum_i |C_i|) bits."""
    total = int(sum(domains))
    return int(total * (8 + math.ceil(math.log2(total))))


def tcm_bits(family_size: int, g: int, domains: list[int]) -> dict:
    sent = int(math.ceil(math.log2(family_size))) + int(math.ceil(math.log2(g)))
    received = broadcast_bits(domains)
    return {"sent": sent, "received": received, "total": sent + received}


def approx_variance(eps_l: float, m: int, g: int, n: int) -> float:
    p, q = collision_p(eps_l, m, g), 1.0 / g
    return q * (1 - q) / (n * (p - q) ** 2)


@dataclass
class TCMResult:
    estimates: list[np.ndarray]
    eps_l: float
    g: int
    amplified: bool
    valid_range: bool
    variance: float
    bits: dict
    user_seconds: float = float("nan")


def run_tcm(data, domains, eps_s, delta_s, rng, *, family_size=1 << 32, block=DEFAULT_BLOCK,
            warm_up: np.random.Generator | None = None, warm_runs: int = WARM_UP_RUNS) -> TCMResult:
    """``warm_up``: untimed runs of the users' side before the timed one, as
    :func:`~shuffledp.protocols.mhm.run_mhm`."""
    data = np.asarray(data)
    n, m = data.shape
    st = tcm_eps_local(eps_s, delta_s, n, m)
    family = HashFamily(st.g, seed=int(rng.integers(0, 2**63 - 1)), size=family_size, kind="mix")
    offsets = encoding_offsets(domains)  # the curator's rule, broadcast to users
    for _ in range(warm_runs if warm_up is not None else 0):
        tcm_randomize(data, offsets, st.eps_l, st.g, family, warm_up)
    t0 = time.perf_counter()
    t, y = tcm_randomize(data, offsets, st.eps_l, st.g, family, rng)
    user_seconds = time.perf_counter() - t0
    perm = rng.permutation(n)
    est = tcm_estimate(t[perm], y[perm], domains, st.eps_l, st.g, family, block=block)
    return TCMResult(est, st.eps_l, st.g, st.amplified, st.valid_range,
                     approx_variance(st.eps_l, m, st.g, n), tcm_bits(family_size, st.g, domains),
                     user_seconds)
