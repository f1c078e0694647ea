"""Decomposed divergence of a pair whose two ratios are independent and live on a lattice.

Setting (the ``m = d`` victim pair of MHM's hash randomizer, :mod:`mhm_randomizer`): under the
blanket one report's ratio to it is ``u = 1 + h j`` under ``x`` and ``v = 1 + h j'`` under ``x'``,
``j, j'`` integers in ``0..K`` drawn *independently* from the same pmf ``pi`` (a report's hashes
under ``x`` and ``x'`` are independent). Given ``N = M + 1`` reports the decomposed divergence is

    D_M = gamma / N * E[(U - e^eps V)_+],   U = N + h S,  V = N + h S',

``S, S'`` independent sums of ``N`` i.i.d. draws of ``pi``. Their law is computed by convolutions
of non-negative arrays (:class:`LatticeSums`): ``pi`` raised to the first wanted count by
repeated squaring, the later counts from cached powers of ``pi`` (:func:`_laws`). As a law grows
it is *coarsened* (:func:`coarsen`, :meth:`_Law.settled`): once its standard deviation exceeds
``2 PER_SD`` steps it moves to the lattice of twice the step, each odd point's mass halved between
its even neighbours. That is a mean-preserving spread; the integrand is convex in ``S`` and in
``S'`` (independent), and convex order survives independent sums, so the value computed from the
coarsened laws is an upper bound on the uncoarsened one. It keeps the mean exactly and adds the
odd points' mass times the old step squared to the variance (at most the new step squared over
4); each law then has at most about ``4 z PER_SD`` points whatever ``N``. Every law lives on an
absolute grid ``step * k`` (``step`` a power of two, so the halves and ``h step`` are exact), and
everything below is in units of its step with the ratio step ``h step``.

The expectation is a sum over ``S'`` of closed forms in suffix sums of ``S``'s law: the ``S``
above the threshold ``c = e^eps S' + N (e^eps - 1) / (h step)`` contribute
``h step (sum p s - c sum p)``. That integrand is convex in ``S'``, so for the upper bound the sum
over ``S'`` runs over chord ends only (buckets of about ``sd / 32``; :func:`_chord`): each ``S'``
lies below the chord of its bucket.

Errors, charged to the upper bound (the caller's ``M`` window and blocks aside):

* truncation: after every convolution the entries at both ends whose cumulative mass is below a
  share of the caller's ``tail`` are dropped, the share proportional to the reports the law sums
  (squaring doubles a law's missing mass: a law of ``k`` reports enters one of ``N`` about ``N / k``
  times), so at most ``tail / 2`` is missing in all; the dropped mass is summed (convolutions and
  coarsenings of laws of total mass 1 conserve mass, so the missing mass is the dropped mass) and
  charged at the integrand's largest value ``N (e^eps0 - e^eps) + h step`` (``S' >= 0`` and a
  coarsened ``S`` at most one step above ``N K``), for ``S`` and for ``S'``;
* floating point, as relative errors (every entry is a sum of products of non-negative numbers):
  ``pi``'s entries within ``rel0`` of the exact spread's (the caller's bound), a convolution adds
  ``(terms + 1) u`` (``u`` the unit roundoff, doubled here; ``terms`` the fewer non-zero entries
  of the two) to the sum of its inputs' bounds, a coarsening ``2 u``; the computed law is then
  within ``rel`` of the exact truncated one entry by entry, and the sum over ``S, S'`` is charged
  the factor ``(1 - rel)^-2``. Each squaring doubles the bound, so ``rel`` grows like ``N``
  (``rel_max``: the caller declines the lattice where it is large). Suffix sums and the threshold
  get ``ROUNDING_RTOL`` and ``W u`` of the summed magnitudes of their terms, and points within
  ``1e-9`` steps (plus the threshold's own rounding) below it are included, their negative
  contribution charged back.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accountants.numerics.grouped import ROUNDING_RTOL

__all__ = ["LatticeSums", "RoundingTooLarge", "coarsen", "lattice_cost", "LATTICE_BUDGET", "UNIT"]

UNIT = 2.0 ** -52  # relative spacing of doubles (twice the unit roundoff: generous)
SLACK = 1e-9  # lattice steps below the threshold that are included (their sign is not trusted)
LATTICE_BUDGET = 1.5e10  # estimated element operations (lattice_cost; measured: about 0.07 s CPU per 1e9)
PER_SD = 64  # a law is coarsened once its standard deviation exceeds 2 PER_SD of its steps
UNIT_LONG = float(np.finfo(np.longdouble).eps)  # the same for long double (x87: 2^-63; double elsewhere)
PER_SD_LONG = 32  # long double convolutions cost about 30 times more: narrower laws
TINY = 1e-290  # long double entries below this are dropped (charged) before the conversion to double


def _unit(p: np.ndarray) -> float:
    return UNIT if p.dtype == np.float64 else UNIT_LONG


def _z(tail: float) -> float:
    return math.sqrt(2.0 * math.log(2.0 / tail))


def _sd(pi: np.ndarray) -> float:
    j = np.arange(pi.size, dtype=np.float64)
    tot = max(float(pi.sum()), 1e-300)
    mean = float(np.dot(pi, j)) / tot
    return math.sqrt(max(float(np.dot(pi, (j - mean) ** 2)) / tot, 0.0))


LONG_COST = 30.0  # a long double product costs about this many double ones (numpy's convolve, x86)


def lattice_cost(pi: np.ndarray, ns, tail: float) -> float:
    """Estimated element operations (in double products) for the wanted counts ``ns``: two
    convolutions per binary digit of the first count and of the largest gap, each at most the
    settled width (``4 z PER_SD`` points, :meth:`_Law.settled`) squared, and per count one
    convolution of that width with the increments' (their spread over the counts' span, in the
    first law's steps); ``LONG_COST`` times that for a long double ``pi``."""
    ns = np.asarray(ns, dtype=np.float64)
    long = np.asarray(pi).dtype == np.longdouble
    per_sd = PER_SD_LONG if long else PER_SD
    z, sd = _z(tail), _sd(pi)
    width = min(2.0 * z * sd * math.sqrt(ns[-1]) + pi.size, 4.0 * z * per_sd + pi.size)
    step = max(1.0, sd * math.sqrt(ns[0]) / (2.0 * per_sd))  # the first law's step is at least this
    inc = min(width, 2.0 * z * sd * math.sqrt(ns[-1] - ns[0] + 1.0) / step + pi.size / step + 1.0)
    span = ns[-1] - ns[0] if ns.size > 1 else 1.0
    squarings = 2.0 * (math.log2(max(ns[0], 2.0)) + math.log2(max(span, 2.0)))
    return (LONG_COST if long else 1.0) * (squarings * width ** 2 + ns.size * width * inc)


def _edge(p: np.ndarray, drop: float) -> int:
    """The number of leading entries of ``p`` whose cumulative mass is at most ``drop`` (scanning
    a growing prefix: the edges move little from one convolution to the next)."""
    n = min(p.size, 512)
    while True:
        k = int(np.searchsorted(np.cumsum(p[:n]), drop, side="right"))
        if k < n or n == p.size:
            return k
        n = min(p.size, 4 * n)


def coarsen(lo: int, p: np.ndarray) -> tuple[int, np.ndarray]:
    """A law on the points ``lo + i`` (in units of its step) moved to the even points, as
    ``(lo', q)`` on ``2 (lo' + i)``: each odd point's mass split in halves between its two even
    neighbours. A mean-preserving spread (each odd point ``k`` replaced by ``k - 1``, ``k + 1`` with
    probability 1/2 each: convex order, an upper bound for any convex integrand); the variance
    grows by exactly the odd points' mass (in squared old steps), at most a quarter of the new
    step squared. Every entry is a sum of at most three non-negative terms, two of them halved
    (exact in binary): two roundings."""
    lo2 = lo // 2
    top2 = -((-(lo + p.size - 1)) // 2)  # ceil
    a = np.zeros(2 * (top2 - lo2) + 3, dtype=p.dtype)  # points 2 lo2 - 1 .. 2 top2 + 1
    a[lo - 2 * lo2 + 1:lo - 2 * lo2 + 1 + p.size] = p
    even, odd = a[1::2], 0.5 * a[0::2]
    return lo2, even + odd[:-1] + odd[1:]


class _Law:
    """A computed sub-law on ``step * (lo + 0..p.size-1)`` (``step`` a power of two, ``lo`` an
    integer: an absolute grid, so sums of laws of one step stay on it): ``p`` within ``rel``
    (relative, entry by entry) of the exact truncated law, whose missing mass is at most ``miss``;
    ``cap``: the standard deviation, in steps, above which it is coarsened (inf: never); ``count``:
    the reports it sums (a law of ``k`` reports enters a law of ``N`` about ``N / k`` times, so its
    missing mass does too: each is pruned in proportion to ``k``)."""

    __slots__ = ("lo", "p", "rel", "miss", "step", "cap", "count")

    def __init__(self, lo: int, p: np.ndarray, rel: float, miss: float, step: int = 1, cap: float = math.inf,
                 count: int = 1):
        self.lo, self.p, self.rel, self.miss, self.step, self.cap = lo, p, rel, miss, step, cap
        self.count = count

    def pruned(self, drop: float) -> _Law:
        """Drop leading and trailing entries whose cumulative mass is at most ``drop`` per end."""
        p = self.p
        head = min(_edge(p, drop), p.size - 1)
        tail = _edge(p[::-1], drop)
        end = max(p.size - tail, head + 1)
        gone = math.fsum(p[:head].tolist()) + math.fsum(p[end:].tolist())
        gone = gone * (1.0 + 4 * UNIT) / (1.0 - self.rel)  # the exact dropped mass is at most this
        return _Law(self.lo + head, p[head:end], self.rel, self.miss + gone, self.step, self.cap, self.count)

    def at_step(self, step: int) -> _Law:
        """The law coarsened (:func:`coarsen`) until its step is ``step`` (at least its own)."""
        lo, p, s, rel = self.lo, self.p, self.step, self.rel
        while s < step:
            lo, p = coarsen(lo, p)
            s, rel = 2 * s, rel + 2.0 * _unit(p)
        return _Law(lo, p, rel, self.miss, s, self.cap, self.count)

    def settled(self) -> _Law:
        """Coarsened while its standard deviation exceeds ``cap`` steps (``2 PER_SD``): every law
        then has at most about ``2 z PER_SD`` points per side, whatever the count of reports."""
        law = self
        while _sd(law.p) > law.cap:
            law = law.at_step(2 * law.step)
        return law

    def times(self, other: _Law, drop: float) -> _Law:
        """The law of the sum of two independent variables (direct convolution; the finer law
        first coarsened to the other's step), pruned (``drop`` per report summed) and settled."""
        step = max(self.step, other.step)
        a, b = self.at_step(step), other.at_step(step)
        if b.p.size > a.p.size:
            a, b = b, a
        sup = np.flatnonzero(b.p)
        # every entry is a sum of at most min(nonzeros) products
        terms = min(sup.size, int(np.count_nonzero(a.p)))
        if sup.size * 4 < b.p.size:  # a sparse law (one report's): its support only
            p = np.zeros(a.p.size + b.p.size - 1, dtype=a.p.dtype)
            for j in sup.tolist():
                p[j:j + a.p.size] += b.p[j] * a.p
        else:
            p = np.convolve(a.p, b.p)
        rel = a.rel + b.rel + a.rel * b.rel + (terms + 1) * _unit(p)
        if rel > 0.5:  # the charges divide by 1 - rel: never near 1
            raise RoundingTooLarge(f"relative rounding bound {rel:.3g} above 0.5")
        count = a.count + b.count
        law = _Law(a.lo + b.lo, p, rel, a.miss + b.miss, step, self.cap, count)
        return law.pruned(drop * count).settled()


class LatticeSums:
    """The law of ``S_N`` (module docstring) for an increasing set of ``N``, with suffix sums.

    ``pi``: the one-report pmf on ``0..K`` as computed; ``rel0``: a bound on the relative error of
    each of its entries against the exact pmf it stands for. ``ns``: the report counts wanted.
    ``coarse``: coarsen the laws as they grow (:meth:`_Law.settled`; False: exact laws, the cost
    growing with the count). ``rel_limit``: :class:`RoundingTooLarge` is raised as soon as a law's
    rounding bound exceeds it (the bound only grows: the work stops early)."""

    def __init__(self, pi: np.ndarray, rel0: float, ns, tail: float, *, coarse: bool = True,
                 rel_limit: float = 0.5):
        long = np.asarray(pi).dtype == np.longdouble  # convolutions in long double (rel0 to match)
        pi = np.asarray(pi, dtype=np.longdouble if long else np.float64)
        if pi.ndim != 1 or pi.size < 2 or np.any(pi < 0):
            raise ValueError("pi must be a non-negative pmf on 0..K")
        self.ns = np.asarray(ns, dtype=np.int64)
        if self.ns.size == 0 or self.ns[0] < 1 or np.any(np.diff(self.ns) <= 0):
            raise ValueError("ns must be increasing report counts >= 1")
        gaps = np.diff(self.ns)
        ops = 2 * int(self.ns[0]).bit_length() + 2 * sum(int(x).bit_length() for x in set(gaps.tolist()))
        ops += 2 * self.ns.size + 2
        # per end, convolution and report summed: a law of k reports enters the largest about
        # ns[-1] / k times, so at most tail / 2 is missing from any law in all
        drop = float(tail) / (4.0 * ops * float(self.ns[-1]))
        cap = 2.0 * (PER_SD_LONG if long else PER_SD) if coarse else math.inf
        laws = _laws(_Law(0, pi, float(rel0), 0.0, 1, cap), self.ns, drop, min(float(rel_limit), 0.5))
        laws = [_as_double(law) for law in laws]
        self.steps = [law.step for law in laws]
        self.rel_max = max(law.rel for law in laws)  # grows like N (rel0 + a few hundred UNIT)
        self.chunks = _chunks([self._snapshot(law) for law in laws], self.ns, float(tail))

    @staticmethod
    def _snapshot(law: _Law) -> tuple:
        p = law.p
        s = law.lo + np.arange(p.size, dtype=np.float64)
        s0 = float(np.dot(p, s) / max(p.sum(), 1e-300))  # centre: the suffix sums of p (s - s0) stay small
        T0 = np.append(np.cumsum(p[::-1])[::-1], 0.0)
        T1c = np.append(np.cumsum((p * (s - s0))[::-1])[::-1], 0.0)
        A1 = np.append(np.cumsum((p * np.abs(s - s0))[::-1])[::-1], 0.0)  # magnitudes of T1c's terms
        return law.lo, p, T0, T1c, A1, s0, law.miss, law.rel, law.step

    def divergence(self, gamma: float, h: float, hi_ratio: float, ee: float, *, upper: bool) -> np.ndarray:
        """``D_M`` (module docstring) for every wanted ``N = M + 1``; ``hi_ratio``: the largest
        ratio ``1 + h K``. ``upper``: with every charge (an upper bound); else a lower bound of
        the computed value without charges (shows the truncation)."""
        return np.concatenate([_chunk_divergence(ch, gamma, h, hi_ratio, ee, upper) for ch in self.chunks])


def _as_double(law: _Law) -> _Law:
    """A long double law in double: entries below ``TINY`` dropped and charged as missing mass
    (a double would hold them with less than full relative precision), one more rounding."""
    if law.p.dtype == np.float64:
        return law
    small = law.p < TINY
    gone = float(law.p[small].sum()) * (1.0 + 4 * UNIT) / (1.0 - law.rel)
    p = np.where(small, 0.0, law.p).astype(np.float64)
    return _Law(law.lo, p, law.rel + UNIT, law.miss + gone, law.step, law.cap, law.count)


class RoundingTooLarge(ArithmeticError):
    """A law's relative rounding bound exceeded the caller's limit (it grows like the count)."""


def _laws(one: _Law, ns: np.ndarray, drop: float, limit: float) -> list[_Law]:
    """The laws at the counts ``ns``. The first by repeated squaring; each next one from a base
    law and the increments since it (powers of ``one``, cached by gap). While no increment needs
    coarsening to the base's step the base itself steps on (exact up to its own settling);
    after, the increments accumulate in ``acc`` at their own (finer) step and each count's law is
    ``base + acc``: each count's law is then coarsened once more at most, never once per count."""
    powers: dict[int, _Law] = {}
    base = _power(one, int(ns[0]), drop, limit)
    out, acc = [base], None
    for gap in np.diff(ns).tolist():
        if gap not in powers:
            powers[gap] = _power(one, gap, drop, limit)
        inc = powers[gap]
        if acc is None and inc.step >= base.step:
            base = base.times(inc, drop)
            out.append(base)
        else:
            acc = inc if acc is None else acc.times(inc, drop)
            out.append(base.times(acc, drop))
    if max(law.rel for law in out) > limit:
        raise RoundingTooLarge(f"relative rounding bound above {limit:g}")
    return out


CHUNK = 1 << 18  # laws evaluated together (one vectorised pass) up to this many entries
CHORD_PER_SD = 32  # S' evaluated at chord ends at least this many per standard deviation of S


def _chord(p: np.ndarray, s: np.ndarray, s0: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Chord ends for the ``S'`` sum of one law: ``(ends, weights, width)``. The integrand
    ``f(S') = E[(U - e^eps V)_+ | S']`` is convex in ``S'`` (a convex function of an affine one),
    so on ``[a, b]`` it lies below its chord: each ``S'`` is split between the ends of its bucket
    (``width`` a power of two, about ``sd / CHORD_PER_SD``) in proportion to its distance to them,
    and ``E f(S') <= sum_ends weight f(end)``."""
    sd = math.sqrt(max(float(np.dot(p, (s - s0) ** 2) / max(p.sum(), 1e-300)), 0.0))
    width = 2 ** max(int(math.floor(math.log2(max(sd / CHORD_PER_SD, 1.0)))), 0)
    # the bucket starts, then the last point unless it is one: sorted and distinct as built
    ends = np.arange(0, p.size, width)
    if ends[-1] != p.size - 1:
        ends = np.append(ends, p.size - 1)
    i = np.arange(p.size)
    k = i // width   # the last end at or below i: its bucket's start, the last point its own end
    k[-1] = ends.size - 1
    k1 = np.minimum(k + 1, ends.size - 1)
    span = (ends[k1] - ends[k]).astype(np.float64)
    lam = np.where(span > 0, (ends[k1] - i) / np.where(span > 0, span, 1.0), 1.0)  # share to the left end
    wts = np.bincount(k, weights=p * lam, minlength=ends.size) + np.bincount(k1, weights=p * (1.0 - lam),
                                                                             minlength=ends.size)
    return ends, wts, width


def _chunks(snaps: list, ns: np.ndarray, tail: float) -> list[dict]:
    """The snapshots grouped into chunks of consecutive counts, each flattened: the suffix sums
    concatenated (each block's one entry longer), per-block scalars, and the ``S'`` points
    evaluated: the chord ends (:func:`_chord`) of weight at least ``tail / (4 W)`` (the others, at
    most ``tail / 4`` per block, are charged at the integrand's largest value: ``skipped``)."""
    out, start = [], 0
    while start < len(snaps):
        end, size = start, 0
        while end < len(snaps) and (end == start or size + snaps[end][1].size <= CHUNK):
            size += snaps[end][1].size
            end += 1
        part = snaps[start:end]
        sizes = np.array([sn[1].size for sn in part], dtype=np.int64)
        ch = {name: np.array([sn[i] for sn in part], dtype=np.float64)
              for i, name in ((0, "lo"), (5, "s0"), (6, "miss"), (7, "rel"), (8, "step"))}
        ch.update(N=ns[start:end].astype(np.float64), size=sizes.astype(np.float64),
                  poff=np.concatenate([[0], np.cumsum(sizes)[:-1]]),
                  toff=np.concatenate([[0], np.cumsum(sizes + 1)[:-1]]))
        for i, name in ((1, "p"), (2, "T0"), (3, "T1c"), (4, "A1")):
            ch[name] = np.concatenate([sn[i] for sn in part])
        chords = [_chord(sn[1], sn[0] + np.arange(sn[1].size, dtype=np.float64), sn[5]) for sn in part]
        ch["rel"] = ch["rel"] + np.array([c[2] + 4.0 for c in chords]) * UNIT  # the chord weights' rounding
        ends = np.concatenate([c[0] for c in chords])
        wts = np.concatenate([c[1] for c in chords])
        blk = np.repeat(np.arange(len(part)), [c[0].size for c in chords])
        big = wts >= tail / (4.0 * sizes[blk])
        small = np.bincount(blk, weights=np.where(big, 0.0, wts), minlength=len(part))
        ch["skipped"] = small * (1.0 + sizes * UNIT) / (1.0 - ch["rel"])  # exact mass at most this
        ch["klocal"], ch["kblk"], ch["kw"] = ends[big], blk[big], wts[big]
        out.append(ch)
        start = end
    return out


def _power(one: _Law, n: int, drop: float, limit: float = 0.5) -> _Law:
    """``one`` convolved with itself to ``n`` copies (repeated squaring, pruned and settled);
    :class:`RoundingTooLarge` once a law's rounding bound exceeds ``limit``."""
    result, base = None, one.settled()
    while True:
        if base.rel > limit or (result is not None and result.rel > limit):
            raise RoundingTooLarge(f"relative rounding bound above {limit:g} at {n} more copies")
        if n & 1:
            result = base if result is None else result.times(base, drop)
        n >>= 1
        if not n:
            return result
        base = base.times(base, drop)


def _chunk_divergence(ch: dict, gamma: float, h: float, hi_ratio: float, ee: float, upper: bool) -> np.ndarray:
    """``D_M`` for the counts of one chunk (:func:`_chunks`): for every ``S'`` (law ``p``) the ``S``
    above its threshold from the suffix sums, then summed per block. The ``S'`` whose threshold
    lies above every ``S`` of its block contribute nothing and are skipped (one point of margin).
    A block's law is on ``step`` times its points: everything below is in units of its step, with
    the ratio step ``h step`` (exact: ``step`` a power of two)."""
    hs = h * ch["step"]
    shift_b = ch["N"] * ((ee - 1.0) / hs)
    top = np.clip(np.floor((ch["lo"] + ch["size"] - shift_b) / ee) - ch["lo"] + 2.0, 0.0, ch["size"])
    if upper:  # the chord ends (an upper bound on the sum over S')
        keep = ch["klocal"] < top[ch["kblk"]]
        b, local, p = ch["kblk"][keep], ch["klocal"][keep], ch["kw"][keep]
    else:  # every S' (no chord)
        b = np.repeat(np.arange(ch["N"].size), ch["size"].astype(np.int64))
        local = np.arange(b.size) - ch["poff"][b]
        p = ch["p"]
    lo, size, s0 = ch["lo"][b], ch["size"][b], ch["s0"][b]
    c = ee * (lo + local) + shift_b[b]  # S > c: U > e^eps V (c within 4 UNIT |c| of exact)
    slack = SLACK + 8.0 * UNIT * np.abs(c)
    idx = np.clip(np.ceil(c - slack - lo), 0.0, size).astype(np.int64) + ch["toff"][b]
    t0 = ch["T0"][idx]
    hb = hs[b]
    val = hb * (ch["T1c"][idx] - (c - s0) * t0)
    mag = hb * (ch["A1"][idx] + np.abs(c - s0) * t0)
    # included points below the exact threshold (at most 2 slack below) and c's rounding in val
    allow = (ROUNDING_RTOL + size * UNIT) * mag + 3.0 * hb * slack * t0
    rel, Nb = ch["rel"], ch["N"]
    contrib = p * (np.maximum(val, 0.0) + allow) if upper else p * np.maximum(val - allow, 0.0)
    body = np.bincount(b, weights=contrib, minlength=Nb.size)
    if upper:
        body = body / (1.0 - rel) ** 2 * (1.0 + ch["size"] * UNIT)
        # the integrand's largest value: S' >= 0 and S <= N K + step (a coarsened law's top point
        # is the first multiple of its step at or above N K)
        worst = np.maximum((hi_ratio - ee) * Nb + hs, 0.0)
        return gamma / Nb * (body + worst * (2.0 * ch["miss"] + ch["skipped"]))
    return gamma / Nb * np.maximum(body * (1.0 - rel) ** 2 * (1.0 - ch["size"] * UNIT), 0.0)
