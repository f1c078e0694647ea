"""MHM: the Multiple Hash Mechanism for multidimensional categorical data under shuffle DP.

Algorithm 1 (user side, with the communication trick): user ``i`` draws one hash index ``t_i``
from the family and hashes attribute ``j`` (0-based) with function ``t_i + j``; the set ``HR`` of
the ``d`` hashed values is reported through Eq. (1) with ``p = e^eps_l / (d e^eps_l + g - d)``.
The user sends ``(t_i, y_i)``. Algorithm 2 (curator): for attribute ``j`` and value ``k``,
``F*_jk`` counts the reports with ``h_{t_i + j}(k) = y_i``; the unbiased frequency estimate is
``(F*_jk / n - q) / (p - q)``, ``q = 1 / g`` (Lemma 4).

Note on ``p``: the seed's Algorithm 2 and Lemma 4 print ``p = e^eps / (e^eps + g - d)``, which is not
a probability distribution together with Eq. (4) (``d p + (g - d) q' != 1``) and contradicts the
blanket decomposition (gamma = g / (d e^eps + g - d)) and Eq. (3) (which is exactly the minimiser of
Eq. (2) for ``p = e^eps / (d e^eps + g - d)``). We use the latter throughout.

Amplification: the largest ``eps_l`` such that the shuffled reports of ``n`` users are
``(eps_s, delta_s)``-DP by the privacy-blanket bound (Lemma 1) with Theorem 1's parameters, from
:mod:`shuffledp.accountants.upper.blanket` (mechanism ``"mhm"``); ``g`` follows Eq. (3) for that
``eps_l`` (rounded to an integer, then ``eps_l`` is recomputed for the integer ``g``).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from shuffledp.environment import compiled_kernels
from shuffledp.mechanisms.collision import WARM_UP_RUNS, collision_p, collision_report
from shuffledp.mechanisms.hashing import PRIME, HashFamily
from shuffledp.mechanisms.hashing import mod_magic as _mod_magic

DEFAULT_BLOCK = 1 << 17


def g_mhm(eps_l: float, d: int) -> float:
    """Eq. (3): the ``g`` minimising Eq. (2)'s approximate variance (real-valued)."""
    e = math.exp(eps_l)
    return d + d * e / 2 + math.sqrt(2 * d * d * e + d * d * e * e / 4 - 2 * d * e)


def g_int(eps_l: float, d: int, variant: str = "ours") -> int:
    """Eq. (3) rounded to the integer with the smaller Eq. (2) variance (at least d + 1)."""
    g = g_mhm(eps_l, d)
    cands = {max(d + 1, math.floor(g)), max(d + 1, math.ceil(g))}
    return min(sorted(cands), key=lambda c: approx_variance(eps_l, d, c, 1, variant))


# "ours": p = e^eps_l / (d e^eps_l + g - d) and the exact blanket accountant (module doc);
# "paper": the seed's printed choices - Lemma 4's p = e^eps_l / (e^eps_l + g - d) in the randomizer and
# the estimator, and Theorem 1 / Lemma 1 as printed for eps_l (not a valid privacy bound: the
# randomizer is then only ``ldp_eps``-LDP, ``ldp_eps > eps_l``; a labelled comparison, never a result)
VARIANTS = ("ours", "paper")


def mhm_pq(eps_l: float, d: int, g: int, variant: str = "ours") -> tuple[float, float]:
    if variant == "paper":
        from shuffledp.accountants.upper.blanket import mhm_printed_p

        p = mhm_printed_p(eps_l, d, g)
        if d * p > 1.0:
            raise ValueError(f"MHM (paper's printed p): d p = {d * p:.4g} > 1 at eps_l={eps_l}, g={g}, d={d}")
        return p, 1.0 / g
    if variant != "ours":
        raise ValueError(f"variant: unknown {variant!r} (one of {VARIANTS})")
    return collision_p(eps_l, d, g), 1.0 / g


def lemma4_variance(eps_l: float, d: int, g: int, n: int, f: np.ndarray | float,
                    variant: str = "ours") -> np.ndarray | float:
    """Lemma 4: variance of the frequency estimate of a value with true frequency ``f``."""
    p, q = mhm_pq(eps_l, d, g, variant)
    return (q * (1 - q) + np.asarray(f) * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)


def approx_variance(eps_l: float, d: int, g: int, n: int, variant: str = "ours") -> float:
    """Eq. (2): ``q(1-q) / (n (p-q)^2)``, the data-independent part of Lemma 4."""
    p, q = mhm_pq(eps_l, d, g, variant)
    return q * (1 - q) / (n * (p - q) ** 2)


def mse_floor(d: int, domains: list[int], variant: str = "ours") -> float:
    """``n`` times the limit of :func:`expected_mse` as ``eps_l -> inf`` with Eq. (3)'s ``g``.

    One report carries all ``d`` attributes and names one hashed value: ``p <= 1/d`` whatever
    ``eps_l``, and with Eq. (3)'s ``g ~ d e^eps_l`` the probability ``p d`` tends to ``1/2`` (ours)
    or ``d/(d+1)`` (printed ``p``), while ``q = 1/g -> 0``. The MSE then tends to
    ``mean_j(1/|C_j|) (1 - p)/p / n``: ``(2d - 1) mean(1/|C_j|) / n`` (ours), ``d mean(1/|C_j|) / n`` (printed)."""
    inv = float(np.mean([1.0 / c for c in domains]))
    p = 1.0 / (2 * d) if variant == "ours" else 1.0 / (d + 1)
    return inv * (1 - p) / p


def expected_mse(eps_l: float, d: int, g: int, n: int, domains: list[int], variant: str = "ours") -> float:
    """Exact expected per-attribute-averaged MSE (Lemma 4 averaged over each attribute's values).

    Because each attribute's frequencies sum to 1, the average of Lemma 4 over the values of
    attribute j is ``[q(1-q) + (p-q)(1-p-q)/|C_j|] / (n (p-q)^2)``: data-independent.
    """
    p, q = mhm_pq(eps_l, d, g, variant)
    inv = float(np.mean([1.0 / c for c in domains]))
    return (q * (1 - q) + inv * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)


@dataclass(frozen=True)
class MHMSetting:
    eps_l: float
    g: int
    amplified: bool  # False: the blanket bound gave no gain, eps_l = eps_s (pure LDP suffices)
    variant: str = "ours"  # see VARIANTS


@functools.lru_cache(maxsize=512)
def mhm_eps_local(eps_s: float, delta_s: float, n: int, d: int, *, bound: str = "bennett",
                  max_iter: int = 30, variant: str = "ours") -> MHMSetting:
    """Largest ``eps_l`` (with its integer ``g``) meeting ``(eps_s, delta_s)`` after shuffling ``n``.

    Fixed point between Eq. (3) (``g`` from ``eps_l``) and the blanket inverse (``eps_l`` for a fixed
    ``g``): the returned ``eps_l`` is always the blanket inverse for the returned ``g``, so the pair
    is valid whatever the iteration does; the iteration only makes ``g`` (near) optimal.
    Pure function of its arguments, cached (OGM/NOGM repetitions ask for the same settings).
    ``variant="paper"`` takes the paper's printed accountant instead (``bound`` is then ignored: the
    printed Lemma 1 is Bennett-type) and its printed ``p``; see :data:`VARIANTS`.
    """
    from shuffledp.accountants.upper.blanket import max_eps_local, max_eps_local_mhm_printed

    if not (eps_s > 0 and 0 < delta_s < 1 and n >= 2 and d >= 1):
        raise ValueError(f"eps_s/delta_s/n/d: invalid ({eps_s}, {delta_s}, {n}, {d})")

    def inverse(g: int) -> float:
        if variant == "paper":
            return float(max_eps_local_mhm_printed(eps_s, delta_s, int(n), d=int(d), g=int(g)))
        return float(max_eps_local(eps_s, delta_s, int(n), mechanism="mhm", bound=bound, d=int(d), g=int(g)))

    if variant not in VARIANTS:
        raise ValueError(f"variant: unknown {variant!r} (one of {VARIANTS})")
    g = g_int(eps_s, d, variant)
    seen: dict[int, float] = {}
    for _ in range(max_iter):
        if g in seen:
            break
        seen[g] = inverse(g)
        g = g_int(max(seen[g], eps_s), d, variant)
    # the iteration may cycle (a larger g lowers the certified eps_l); keep the visited g with the
    # smallest Eq. (2) variance at its own certified eps_l
    def variance(c: int) -> float:  # inf where the printed p is not a distribution (d p > 1)
        try:
            return approx_variance(max(seen[c], eps_s), d, c, n, variant)
        except ValueError:
            return math.inf

    best_g = min(seen, key=variance)
    if math.isinf(variance(best_g)):
        raise ValueError(f"MHM ({variant}): no visited g gives a valid randomizer at eps_s={eps_s}")
    eps_l = seen[best_g]
    if eps_l <= eps_s:  # shuffling adds nothing: an eps_s-LDP randomizer is eps_s-DP after shuffling
        g0 = g_int(eps_s, d, variant)
        return MHMSetting(eps_l=float(eps_s), g=g0, amplified=False, variant=variant)
    return MHMSetting(eps_l=float(eps_l), g=int(best_g), amplified=True, variant=variant)


def mhm_randomize(data: np.ndarray, eps_l: float, g: int, family: HashFamily,
                  rng: np.random.Generator, variant: str = "ours") -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 with the communication trick: ``(hash index, report)`` per user (row of ``data``)."""
    data = np.asarray(data, dtype=np.int64)
    n, d = data.shape
    t = family.sample_indices(rng, n)
    hashed = family.hash_rows(t, data)  # attribute j with function t + j
    p = mhm_pq(eps_l, d, g, variant)[0]
    y = collision_report(hashed, p, g, rng)
    return t, y


def support_counts(t: np.ndarray, y: np.ndarray, domains: list[int], family: HashFamily, *,
                   offsets: list[int] | None = None, same_function: bool = False,
                   block: int = DEFAULT_BLOCK) -> list[np.ndarray]:
    """``F*_j`` for every attribute: counts of reports supporting each value (Algorithm 2, lines 1-8).

    MHM: attribute ``j`` uses function ``t + j`` on its raw codes. TCM (``same_function=True``):
    every attribute uses function ``t`` on the encoded item ``offsets[j] + code``. Users are
    processed in blocks of ``block`` (memory ``O(block)``), values one at a time over the whole block
    (long contiguous numpy loops). For the linear family consecutive values are hashed incrementally:
    ``a (v+1) + b = (a v + b) + a (mod P)``, one addition and one conditional subtraction
    (:func:`_linear_counts`; with numba, every attribute and user in one compiled call,
    :func:`_linear_counts_units`, in ``CHUNK``s of users whatever ``block``).
    """
    t = np.asarray(t, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    counts = [np.zeros(c, dtype=np.int64) for c in domains]
    g = family.g
    fused = _compiled_counts() if family.size < 1 << 63 else None
    if fused is not None and family.kind == "linear" and g < PRIME and t.size:
        return _linear_counts_units(fused[1], domains, family, t, y, offsets, same_function)
    for s in range(0, t.size, block):
        tb, yb = t[s:s + block], y[s:s + block]
        for j, c in enumerate(domains):
            first = int(offsets[j]) if offsets is not None else 0
            if first + c > PRIME:
                raise ValueError("domains: encoded values exceed the hash family's input range")
            if fused is not None and family.kind == "mix":
                # compiled, the functions' keys derived inside the kernel: the same counts (the linear
                # family keeps its parameter kernel, whose loop vectorises better than a derivation inline)
                _mix_counts(fused, counts[j], family, tb, 0 if same_function else j, first, yb)
                continue
            prm = family.params(tb + (0 if same_function else j))
            if family.kind == "linear" and g < PRIME:
                _linear_counts(counts[j], prm, first, yb, g)
            else:
                for v in range(c):
                    counts[j][v] += np.count_nonzero(family.apply(prm, np.int64(first + v)) == yb)
    return counts


def _linear_counts_units(kernel, domains: list[int], family: HashFamily, t: np.ndarray, y: np.ndarray,
                         offsets: list[int] | None, same_function: bool) -> list[np.ndarray]:
    """Every attribute's counts of the linear family in one compiled call (the functions' parameters
    derived inside it; :func:`shuffledp.protocols._support_numba.linear_counts_units`): the integers of the
    per-attribute loop of :func:`support_counts`, without a call per attribute and block."""
    firsts = np.array([int(offsets[j]) if offsets is not None else 0 for j in range(len(domains))], dtype=np.int64)
    sizes = np.array([int(c) for c in domains], dtype=np.int64)
    if np.any(firsts + sizes > PRIME):
        raise ValueError("domains: encoded values exceed the hash family's input range")
    ends = np.cumsum(sizes)
    shifts = np.zeros(len(domains), dtype=np.int64) if same_function else np.arange(len(domains), dtype=np.int64)
    flat = np.zeros(int(ends[-1]) if len(domains) else 0, dtype=np.int64)
    mult, shift = _mod_magic(family.g)
    kernel(flat, ends, firsts, shifts, np.ascontiguousarray(t), np.int64(family.size), family._key,
           np.ascontiguousarray(y), np.int64(family.g), mult, shift)
    return [np.array(part) for part in np.split(flat, ends[:-1])] if len(domains) else []


@functools.lru_cache(maxsize=1)
def _compiled_counts():
    """The numba kernels of the support counts (:mod:`shuffledp.protocols._support_numba`): ``(mix_counts_of,
    linear_counts_units)``, or None without numba or with ``SHUFFLEDP_NUMBA=0`` (then numpy runs:
    the same counts)."""
    return compiled_kernels("shuffledp.protocols._support_numba", "mix_counts_of", "linear_counts_units")


def _mix_counts(kernels, out: np.ndarray, family: HashFamily, tb: np.ndarray, shift_t: int, first: int,
                yb: np.ndarray) -> None:
    """Add to ``out[v]`` the users of the block whose function ``tb + shift_t`` of the ``mix`` family maps
    ``first + v`` to their report (``HashFamily.apply`` one value at a time, compiled in one pass per
    value with the functions' keys derived inside the kernel)."""
    kernels[0](out, np.ascontiguousarray(tb, dtype=np.int64), np.int64(shift_t), np.int64(family.size), family._key,
               np.int64(first), np.ascontiguousarray(yb, dtype=np.int64), np.int64(family.g))


def _linear_counts(out: np.ndarray, prm: tuple[np.ndarray, np.ndarray], first: int, yb: np.ndarray, g: int) -> None:
    """Add to ``out[v]`` the number of users with ``((a v' + b) mod P) mod g == y``, ``v' = first + v``, for
    every ``v < len(out)`` (the linear family). ``z = (a v' + b) mod P`` is updated incrementally (one
    addition, the wrap as an unsigned minimum), and ``z mod g`` is a multiply-shift (no integer division,
    which costs about ten times a multiplication here); every operation writes into a buffer of the block.
    The numpy path: with numba installed :func:`support_counts` counts every attribute in one compiled call
    (:func:`_linear_counts_units`), the same arithmetic."""
    a, b = prm
    m = yb.size
    au = a.astype(np.uint64)
    yu = yb.astype(np.uint64)
    z = ((a * first + b) % PRIME).astype(np.uint64)
    w, r = np.empty(m, np.uint64), np.empty(m, np.uint64)
    hit = np.empty(m, dtype=bool)
    mult, shift = _mod_magic(g)
    gu, pu = np.uint64(g), np.uint64(PRIME)
    for v in range(out.size):
        if v:
            np.add(z, au, out=z)  # < 2**32
            np.subtract(z, pu, out=w)  # wraps to a huge value when z < P
            np.minimum(z, w, out=z)
        np.multiply(z, mult, out=r)
        np.right_shift(r, shift, out=r)
        np.multiply(r, gu, out=r)
        np.subtract(z, r, out=r)  # z mod g
        np.equal(r, yu, out=hit)
        out[v] += np.count_nonzero(hit)


def mhm_estimate(t: np.ndarray, y: np.ndarray, domains: list[int], eps_l: float, g: int,
                 family: HashFamily, *, block: int = DEFAULT_BLOCK, variant: str = "ours") -> list[np.ndarray]:
    """Algorithm 2: unbiased frequency estimates, one array per attribute."""
    n = len(y)
    d = len(domains)
    p, q = mhm_pq(eps_l, d, g, variant)
    counts = support_counts(t, y, domains, family, block=block)
    return [(c / n - q) / (p - q) for c in counts]


def mhm_bits(family_size: int, g: int) -> int:
    """Bits a user sends: the first hash index and the report."""
    return int(math.ceil(math.log2(family_size))) + int(math.ceil(math.log2(g)))


@dataclass
class MHMResult:
    estimates: list[np.ndarray]
    eps_l: float
    g: int
    amplified: bool
    variance: float  # Eq. (2) variance of every frequency estimate
    bits: int
    user_seconds: float = float("nan")  # wall time of all users' randomisation (not reproducible)


def run_mhm(data: np.ndarray, domains: list[int], eps_s: float, delta_s: float,
            rng: np.random.Generator, *, family_size: int = 1 << 32, bound: str = "bennett",
            setting: MHMSetting | None = None, block: int = DEFAULT_BLOCK,
            warm_up: np.random.Generator | None = None, warm_runs: int = WARM_UP_RUNS) -> MHMResult:
    """Users' randomisation, shuffling and the curator's estimation for ``(eps_s, delta_s)``.

    ``warm_up``: a generator of its own for ``warm_runs`` untimed runs of the users' side on the same
    users before the timed one (:data:`WARM_UP_RUNS`); ``rng`` draws exactly what it draws without them."""
    data = np.asarray(data)
    n, d = data.shape
    if setting is None:
        setting = mhm_eps_local(eps_s, delta_s, n, d, bound=bound)
    family = HashFamily(setting.g, seed=int(rng.integers(0, 2**63 - 1)), size=family_size)
    for _ in range(warm_runs if warm_up is not None else 0):
        mhm_randomize(data, setting.eps_l, setting.g, family, warm_up, setting.variant)
    t0 = time.perf_counter()
    t, y = mhm_randomize(data, setting.eps_l, setting.g, family, rng, setting.variant)
    user_seconds = time.perf_counter() - t0
    perm = rng.permutation(n)  # the shuffler
    est = mhm_estimate(t[perm], y[perm], domains, setting.eps_l, setting.g, family, block=block,
                       variant=setting.variant)
    return MHMResult(est, setting.eps_l, setting.g, setting.amplified,
                     approx_variance(setting.eps_l, d, setting.g, n, setting.variant), mhm_bits(family_size, setting.g),
                     user_seconds)
